# Orphans (issue 30, case 3): an image copied from a frozen, mounted file system holds files
# that were deleted while open (links count 0) on the orphan list (s_last_orphan, chained
# through i_dtime) or in the orphan_file feature's file. They still hold their blocks and their
# attribute-block references until a mount releases them, so fclabel counts them as in use.
# 128-byte inodes, labeled first, so that /d/f1 to /d/f4 share one label-only attribute block
# (h_refcount 4); /d/f2 is made the orphan:
#   by hand     debugfs: unlinked, links count 0, in s_last_orphan (or, orphan_file, in the
#               orphan file's first block, with orphan_present): no mount needed
#   by a mount  (where a loop mount and fsfreeze work) f2 opened, unlinked, the file system
#               frozen and copied; once with the orphan list, once with orphan_file
# On each: label with the same policy (nothing to change): exit 0, the count still 4, the image
# byte for byte as it was; label with a policy that relabels /d/f1: exit 0, the count 3 (f3, f4
# and the orphan), e2fsck -fn reports nothing it did not report before; and once the orphan is
# released (by e2fsck -fy's orphan pass, or by mounting the copy) e2fsck -fn is clean. Also: a
# list that loops, or runs out of the inode range, is followed once (timeout 60); a file whose
# block map shares the orphan's data block is refused (the orphan's blocks are claimed), the
# image unchanged.
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/imglib.sh"
need_image_tools
cd "$OUT" || exit 1

mkdir -p tree/d
for i in 1 2 3 4; do echo "file $i" >tree/d/f$i; done
printf '/.*\tsystem_u:object_r:default_t:s0\n/d/f.*\tsystem_u:object_r:a_t:s0\n' >fc1
printf '/.*\tsystem_u:object_r:default_t:s0\n/d/f.*\tsystem_u:object_r:a_t:s0\n/d/f1\tsystem_u:object_r:b_t:s0\n' >fc2

acl() { debugfs -R "stat $2" "$1" 2>/dev/null | sed -n 's/.*File ACL: \([0-9]*\).*/\1/p'; }
# refs IMG BLK: the h_refcount of attribute block BLK
refs() {
	"$PY" -c 'import struct, sys
f = open(sys.argv[1], "rb")
f.seek(1024 + 24)
bs = 1024 << struct.unpack("<I", f.read(4))[0]
f.seek(int(sys.argv[2]) * bs + 4)
print(struct.unpack("<I", f.read(4))[0])' "$1" "$2"
}
ino() { debugfs -R "stat $2" "$1" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p'; }
# e2fsck -fn's problem lines, numbers made N, with their counts
problems() {
	e2fsck -fn "$1" 2>&1 | grep -v -e '^Pass [1-5]' -e '^e2fsck 1\.' -e ' files (' -e '^$' \
		-e '\*\*\*\*\*' -e '^Running additional passes' | sed -e "s|$1|IMG|g" -e 's/[0-9][0-9]*/N/g' |
		sort | uniq -c
}
# no_worse WHAT BEFORE AFTER: every line of AFTER is in BEFORE, at most as often
no_worse() {
	_w=$(awk 'FILENAME == ARGV[1] { c = $1; $1 = ""; n[$0] = c; next }
		{ c = $1; $1 = ""; if (c > n[$0] + 0) print c "x" $0 }' "$2" "$3")
	expect_eq "$1: e2fsck -fn reports nothing new" "$_w" ""
}
# released WHAT IMG: the orphan released as a mount would (e2fsck's orphan pass) on a copy,
# which must need nothing else, and be clean after. (e2fsck before 1.47.2 then calls the orphan
# file block it has just cleared "not clean": e2fsprogs commit db87cf4c; that line is left out.)
released() {
	cp "$2" "$2.rel"
	e2fsck -fy "$2.rel" >"$2.rel.log" 2>&1
	_o=$(grep -v -e '^Pass [1-5]' -e '^e2fsck 1\.' -e ' files (' -e '^$' -e '\*\*\*\*\*' \
		-e '^Clearing orphaned inode' -e '^Orphan file (inode [0-9]*) block [0-9]* is not clean\.$' \
		-e '^Clear? yes$' "$2.rel.log" | tr '\n' '|')
	expect_eq "$1: e2fsck releases the orphan and finds nothing else" "$_o" ""
	fsck_clean "$2.rel" "$1: after the release"
}

# judge NAME IMG X: the two runs on an image whose orphan f2 holds a reference to X (count 4)
judge() {
	jn=$1 ji=$2 jx=$3
	expect_eq "$jn: the shared block's count is 4 (three files and the orphan)" "$(refs "$ji" "$jx")" 4
	expect_match "$jn: e2fsck -fn, which releases no orphan, counts 3" "$(e2fsck -fn "$ji" 2>&1)" \
		"*lock $jx has reference count 4, should be 3*"
	cp "$ji" "$jn.orig"
	problems "$ji" >"$jn.before"
	run "$jn.same" "$FCLABEL" label "$ji" -S fc1
	expect_rc "$jn: label, nothing to change" 0
	expect_eq "$jn: the count is not lowered" "$(refs "$ji" "$jx")" 4
	expect_eq "$jn: the image is byte for byte as it was" "$(cmp -s "$ji" "$jn.orig" && echo same)" same
	run "$jn.re" "$FCLABEL" label "$ji" -S fc2
	expect_rc "$jn: relabel /d/f1" 0
	expect_eq "$jn: the count is 3 (f3, f4 and the orphan)" "$(refs "$ji" "$jx")" 3
	expect_eq "$jn: /d/f1 relabeled" "$(debugfs -R 'ea_get /d/f1 security.selinux' "$ji" 2>/dev/null | grep -c b_t)" 1
	problems "$ji" >"$jn.after"
	no_worse "$jn" "$jn.before" "$jn.after"
}

# ---- the base: labeled, f1..f4 on one label-only block ----
mkimg base.img tree 8M -t ext4 -b 1024 -I 128 -O ^metadata_csum || finish
run base "$FCLABEL" label base.img -S fc1
expect_rc "base labeled" 0
X=$(acl base.img /d/f1)
expect_eq "base: f1..f4 share one block" "$(for i in 1 2 3 4; do acl base.img /d/f$i; done | sort -u)" "$X"
F2=$(ino base.img /d/f2)
D2=$(debugfs -R "blocks /d/f2" base.img 2>/dev/null | awk '{ print $1 }')

# ---- by hand: the orphan list ----
cp base.img list.img
debugfs -w -f - list.img >/dev/null 2>&1 <<EOF
unlink /d/f2
sif <$F2> links_count 0
sif <$F2> dtime 0
ssv last_orphan $F2
EOF
cp list.img list.pristine
released "list: the plant" list.img
judge list list.img "$X"
released list list.img

# ---- by hand: a list that loops (f2's next is f2) and one that runs out of the inode range:
# each orphan counted once, and the run bounded ----
for k in loop range; do
	cp list.pristine $k.img
	next=$F2
	[ $k = range ] && next=4000000000
	debugfs -w -R "sif <$F2> dtime $next" $k.img >/dev/null 2>&1
	cp $k.img $k.orig
	timeout -k 5 60 "$FCLABEL" label $k.img -S fc1 >$k.out 2>$k.err
	expect_eq "$k: label, nothing to change (exit 0; 124: still running after 60 s)" "$?" 0
	expect_eq "$k: the count is not lowered" "$(refs $k.img "$X")" 4
	expect_eq "$k: the image is byte for byte as it was" "$(cmp -s $k.img $k.orig && echo same)" same
done

# ---- by hand: the orphan file (orphan_file, orphan_present) ----
mkimg basef.img tree 8M -t ext4 -b 1024 -I 128 -O ^metadata_csum,orphan_file || finish
run basef "$FCLABEL" label basef.img -S fc1
expect_rc "basef labeled" 0
XF=$(acl basef.img /d/f1)
F2F=$(ino basef.img /d/f2)
OF=$(dumpe2fs -h basef.img 2>/dev/null | sed -n 's/^Orphan file inode: *//p')
OB=$(debugfs -R "blocks <$OF>" basef.img 2>/dev/null | awk '{ print $1 }')
cp basef.img file.img
debugfs -w -f - file.img >/dev/null 2>&1 <<EOF
unlink /d/f2
sif <$F2F> links_count 0
feature orphan_present
EOF
"$PY" -c 'import struct, sys; f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2])); f.write(struct.pack("<I", int(sys.argv[3])))' \
	file.img $((OB * 1024)) "$F2F"
expect_eq "file: the image has an orphan file" "$([ -n "$OF" ] && [ -n "$OB" ] && echo yes)" yes
released "file: the plant" file.img
judge file file.img "$XF"
released file file.img

# ---- the orphan's blocks are claimed: a file mapping the orphan's data block is refused ----
cp list.pristine claim.img
debugfs -w -R "sif /d/f3 block[5] $D2" claim.img >/dev/null 2>&1
cp claim.img claim.orig
run claim "$FCLABEL" label claim.img -S fc2
expect_rc "claim: a block shared with the orphan: refused" 2
expect_match "claim: names the block" "$(cat "$OUT/claim.err")" "*refusing to write to it: block $D2 is claimed by inode *"
expect_eq "claim: the image is byte for byte as it was" "$(cmp -s claim.img claim.orig && echo same)" same

# ---- by a mount: f2 opened, unlinked, the file system frozen and copied ----
mnt=$OUT/mnt
holder=
cleanup() {
	[ -n "$holder" ] && kill "$holder" 2>/dev/null
	fsfreeze -u "$mnt" 2>/dev/null
	umount "$mnt" 2>/dev/null
}
trap cleanup EXIT
# mounted NAME BASE: NAME.img, a frozen copy of BASE mounted with f2 open and unlinked
mounted() {
	cp "$2" "$1.live"
	mount -o loop "$1.live" "$mnt" 2>"$1.mount.err" || return 1
	sh -c 'exec 3<"$1/d/f2"; rm "$1/d/f2"; echo held >"$2"; exec sleep 60' sh "$mnt" "$1.held" &
	holder=$!
	_k=0
	while [ ! -s "$1.held" ] && [ $_k -lt 100 ]; do sleep 0.1; _k=$((_k + 1)); done
	sync
	fsfreeze -f "$mnt" && cp "$1.live" "$1.img" && fsfreeze -u "$mnt"
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
	holder=
	umount "$mnt"
}
mkdir -p "$mnt"
if [ "$(id -u)" != 0 ]; then
	echo "not root: the mounted cases skipped (the hand-made orphans above stand for them)"
elif ! command -v fsfreeze >/dev/null 2>&1; then
	echo "fsfreeze is not installed (util-linux): the mounted cases skipped"
elif ! cp base.img probe.img || ! mount -o loop probe.img "$mnt" 2>mount.err; then
	echo "no loop mount here ($(head -n 1 mount.err)): the mounted cases skipped"
else
	umount "$mnt"
	# a journal, so that the frozen copy is clean (the kernel checkpoints it when freezing)
	for k in list file; do
		n=m$k
		feat=^metadata_csum
		[ $k = file ] && feat=^metadata_csum,orphan_file
		mkimg $n.base tree 8M -t ext4 -b 1024 -I 128 -O "$feat" || continue
		"$FCLABEL" label $n.base -S fc1 >/dev/null 2>&1
		x=$(acl $n.base /d/f1)
		if ! mounted $n $n.base; then
			bad "$n: mount: $(head -n 1 $n.mount.err)"
			continue
		fi
		if [ $k = file ]; then
			expect_match "$n: the copy's orphan is in the orphan file" "$(dumpe2fs -h $n.img 2>/dev/null)" "*orphan_present*"
		else
			expect_match "$n: the copy's orphan is on the list" "$(dumpe2fs -h $n.img 2>/dev/null)" "*First orphan inode:*"
		fi
		judge $n $n.img "$x"
		# the kernel releases the orphan
		mount -o loop $n.img "$mnt" && umount "$mnt"
		fsck_clean $n.img "$n: mounted once (the orphan released), then"
	done
fi
finish
