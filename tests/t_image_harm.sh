# Do no harm (issue 24): each class of image that a label once made worse, built here with mke2fs
# options and debugfs edits, is labeled and judged by e2fsck -fn: afterwards it reports nothing
# it did not report before, and nothing more often (its problem lines, numbers made N, counted).
#   no ext_attr feature       the feature is set with the first attribute, as the kernel does
#   inline-data symlinks      one with no room left in its inode is left alone, warned, counted
#   quota                     a label block is charged to the owner's user, group and project
#   a claimed block free      refused before a block is taken; every file's data unchanged
#   cross-linked metadata     a file's indirect block inside an inode table: refused before any write
#   EA inodes                 an inode with a value in an EA inode is left alone
. "$TOP/tests/lib.sh"
cd "$OUT" || exit 1
for t in mke2fs debugfs e2fsck dumpe2fs; do command -v $t >/dev/null || skip "$t is not installed"; done

# e2fsck -fn's problem lines, numbers made N, with their counts
problems() {
	e2fsck -fn "$1" 2>&1 | grep -v -e '^Pass [1-5]' -e '^e2fsck 1\.' -e ' files (' -e '^$' \
		-e '\*\*\*\*\*' -e '^Running additional passes' | sed -e "s|$1|IMG|g" -e 's/[0-9][0-9]*/N/g' |
		sort | uniq -c
}
# worse BEFORE AFTER: the lines of AFTER that are not in BEFORE, or more often ("COUNTx LINE")
worse() {
	awk 'FILENAME == ARGV[1] { c = $1; $1 = ""; n[$0] = c; next }
		{ c = $1; $1 = ""; if (c > n[$0] + 0) print c "x" $0 }' "$1" "$2"
}
# no_worse WHAT BEFORE AFTER: every line of AFTER is in BEFORE, at most as often
no_worse() {
	expect_eq "$1: e2fsck -fn reports nothing new after the label" "$(worse "$2" "$3")" ""
}
# The judge can fail: a problem planted after a clean before (an empty BEFORE, where a test of
# "the first file" by NR == FNR also holds for every line of AFTER), and after one that was not
# clean, are each found; the same lines as before are not.
: >selftest.before
printf '      1 Inode N has a bad extended attribute block N. Clear? no\n' >selftest.after
expect_eq "the judge flags a problem after a clean e2fsck" "$(worse selftest.before selftest.after)" \
	"1x Inode N has a bad extended attribute block N. Clear? no"
printf '      2 Inode N has a bad extended attribute block N. Clear? no\n' >selftest.after2
expect_eq "the judge flags a problem that occurs more often" "$(worse selftest.after selftest.after2)" \
	"2x Inode N has a bad extended attribute block N. Clear? no"
expect_eq "the judge passes the same problems as before" "$(worse selftest.after selftest.after)" ""
lbl() { debugfs -R "ea_get $2 security.selinux" "$1" 2>/dev/null | sed -n 's/.*= "\(.*\)\\000".*/\1/p'; }
feature() { dumpe2fs -h "$1" 2>/dev/null | sed -n 's/^Filesystem features:\(.*\)/\1/p' | tr ' ' '\n' | grep -cx "$2"; }

mkdir -p tree/a tree/b
for i in 1 2 3 4 5 6; do head -c $((i * 3000)) /dev/urandom >tree/a/f$i; echo "$i" >tree/b/g$i; done
chown -R 1000:1000 tree/a
chown -R 1001:1002 tree/b
printf '/.*\tsystem_u:object_r:default_t:s0\n/a(/.*)?\tsystem_u:object_r:a_t:s0\n/b(/.*)?\tsystem_u:object_r:b_t:s0\n' >fc
# a label too long for the room left in a 256-byte inode beside a digest: blocks are taken
printf '/.*\tsystem_u:object_r:default_t:s0\n/a(/.*)?\tsystem_u:object_r:a_t:s0:c1.c100,c200,c300,c400,c500,c600,c700,c800\n/b(/.*)?\tsystem_u:object_r:b_t:s0:c1,c2,c3,c4,c5,c6,c7,c8,c9,c10,c11,c12,c13,c14\n' >fclong

# label_judged NAME IMAGE ARGS...: fclabel label IMAGE ARGS, judged by e2fsck (rc in $lrc)
label_judged() {
	_n=$1 _i=$2
	shift 2
	problems "$_i" >"$_n.before"
	"$FCLABEL" label "$_i" "$@" >"$_n.out" 2>"$_n.err"
	lrc=$?
	problems "$_i" >"$_n.after"
	no_worse "$_n" "$_n.before" "$_n.after"
}

# ---- no ext_attr feature: old ext2/ext3 images (128-byte inodes: every label in a block) ----
for k in "ext2 128" "ext3 256"; do
	set -- $k
	n=noxattr_$1_$2
	mke2fs -q -F -t "$1" -O ^ext_attr -I "$2" -d tree $n.img 8M >/dev/null 2>&1 || { bad "$n: mke2fs"; continue; }
	expect_eq "$n: the image has no ext_attr feature" "$(feature $n.img ext_attr)" 0
	label_judged $n $n.img -S fc
	expect_eq "$n: label exits 0" "$lrc" 0
	expect_eq "$n: ext_attr is set, as the kernel sets it" "$(feature $n.img ext_attr)" 1
	expect_eq "$n: e2fsck -fn clean" "$(e2fsck -fn $n.img >/dev/null 2>&1; echo $?)" 0
	expect_eq "$n: labels readable" "$(lbl $n.img /a/f2)" "system_u:object_r:a_t:s0"
done

# ---- inline-data symlinks: one whose inode has no room left gets no label block ----
mkdir -p ltree
ln -sf "$(printf '%0110d' 0)" ltree/full
ln -sf "$(printf '%070d' 0)" ltree/roomy
ln -sf short ltree/fast
mke2fs -q -F -t ext4 -O inline_data -I 256 -d ltree links.img 8M >/dev/null 2>&1 || bad "links: mke2fs"
label_judged links links.img -S fc --json links.json
expect_eq "links: label exits 1 (a file left unlabeled)" "$lrc" 1
expect_match "links: the full one is named, with why" "$(cat links.err)" \
	"*/full: cannot write system_u:object_r:default_t:s0: an inline-data symlink with no room left in its inode*left as it is*"
expect_eq "links: it has no attribute block" "$(debugfs -R 'stat /full' links.img 2>/dev/null | sed -n 's/.*File ACL: \([0-9]*\).*/\1/p')" 0
expect_eq "links: the one with room is labeled" "$(lbl links.img /roomy)" "system_u:object_r:default_t:s0"
expect_eq "links: the fast one is labeled" "$(lbl links.img /fast)" "system_u:object_r:default_t:s0"
expect_match "links: counted as an error" "$(cat links.err)" "*errors 1,*"
expect_eq "links: e2fsck -fy changes nothing" "$(e2fsck -fy links.img >/dev/null 2>&1; echo $?)" 0

# ---- quota: label blocks charged to the owner (user, group; project where there is one) ----
for k in "usr 128 quota" "prj 256 quota,project"; do
	set -- $k
	n=quota_$1
	mke2fs -q -F -t ext4 -I "$2" -O "$3" ${1:+-E quotatype=usrquota:grpquota$([ "$1" = prj ] && echo :prjquota)} \
		-d tree $n.img 8M >/dev/null 2>&1 || { bad "$n: mke2fs"; continue; }
	[ "$1" = prj ] && debugfs -w -R "set_inode_field /a/f1 projid 7" $n.img >/dev/null 2>&1
	e2fsck -fy $n.img >/dev/null 2>&1 # (mke2fs -d leaves the usage to e2fsck)
	expect_eq "$n: e2fsck -fn clean before" "$(e2fsck -fn $n.img >/dev/null 2>&1; echo $?)" 0
	label_judged $n $n.img -S fc
	expect_eq "$n: label exits 0" "$lrc" 0
	label_judged $n.long $n.img -S fclong --digests
	expect_eq "$n: relabel with long labels and digests exits 0" "$lrc" 0
	expect_eq "$n: e2fsck -fn clean (usage right)" "$(e2fsck -fn $n.img >/dev/null 2>&1; echo $?)" 0
	expect_match "$n: /a took an attribute block" "$(debugfs -R 'stat /a' $n.img 2>/dev/null)" "*File ACL: [1-9]*"
done

# ---- a claimed block that the bitmap calls free (and counts that agree with the bitmap) ----
for k in 128 256; do
	n=freeb_$k
	mke2fs -q -F -t ext4 -I $k -d tree $n.img 8M >/dev/null 2>&1 || { bad "$n: mke2fs"; continue; }
	b=$(debugfs -R "blocks /a/f2" $n.img 2>/dev/null | awk '{print $1}')
	g0=$(dumpe2fs $n.img 2>/dev/null | sed -n 's/^ *\([0-9]*\) free blocks, .*/\1/p' | head -n 1)
	sb=$(dumpe2fs -h $n.img 2>/dev/null | awk -F: '/^Free blocks/ { print $2 + 0 }')
	debugfs -w -R "freeb $b" $n.img >/dev/null 2>&1
	debugfs -w -R "set_bg 0 free_blocks_count $((g0 + 1))" $n.img >/dev/null 2>&1
	debugfs -w -R "set_bg 0 checksum calc" $n.img >/dev/null 2>&1
	debugfs -w -R "ssv free_blocks_count $((sb + 1))" $n.img >/dev/null 2>&1
	expect_match "$n: e2fsck sees the block as used but free" "$(e2fsck -fn $n.img 2>&1)" "*Block bitmap differences:*+$b*"
	for f in 1 2 3 4 5 6; do debugfs -R "cat /a/f$f" $n.img >$n.f$f.0 2>/dev/null; done
	cp $n.img $n.orig
	label_judged $n $n.img -S fc
	if [ $k = 128 ]; then
		expect_eq "$n: refused (every label needs a block): exit 2" "$lrc" 2
		expect_match "$n: names the inode and the block" "$(cat $n.err)" \
			"*refusing to write to it: inode * claims block $b, which the block bitmap calls free*"
		expect_eq "$n: the image is as it was" "$(cmp -s $n.img $n.orig && echo same)" same
		"$FCLABEL" label $n.img -S fc --in-place >$n.out2 2>$n.err2
		expect_eq "$n: refused in place too" "$?" 2
		expect_eq "$n: the image is as it was after --in-place" "$(cmp -s $n.img $n.orig && echo same)" same
	else
		expect_eq "$n: labels in the inodes take no block: labeled, exit 0" "$lrc" 0
	fi
	same=0
	for f in 1 2 3 4 5 6; do
		debugfs -R "cat /a/f$f" $n.img >$n.f$f.1 2>/dev/null
		cmp -s $n.f$f.0 $n.f$f.1 && same=$((same + 1))
	done
	expect_eq "$n: every file's data is byte for byte as before" "$same" 6
done

# ---- cross-linked metadata: a file's indirect block inside an inode table ----
mkdir -p xtree
head -c 40000 /dev/urandom >xtree/big
echo s >xtree/small
mke2fs -q -F -t ext3 -b 1024 -I 256 -d xtree cross.img 4M >/dev/null 2>&1 || bad "cross: mke2fs"
it=$(dumpe2fs cross.img 2>/dev/null | sed -n 's/.*Inode table at \([0-9]*\)-.*/\1/p' | head -n 1)
debugfs -w -R "sif /big block[IND] $((it + 1))" cross.img >/dev/null 2>&1
expect_match "cross: e2fsck sees the conflict" "$(e2fsck -fn cross.img 2>&1)" "*conflicts with critical metadata*"
cp cross.img cross.orig
label_judged cross cross.img -S fc
expect_eq "cross: refused before any write: exit 2" "$lrc" 2
expect_match "cross: names the block and the inode" "$(cat cross.err)" \
	"*refusing to write to it: block $((it + 1)) is claimed by inode 12 and by another inode or the file system's own metadata*"
expect_eq "cross: the image is as it was" "$(cmp -s cross.img cross.orig && echo same)" same
"$FCLABEL" check cross.img -S fc >/dev/null 2>&1
expect_eq "cross: check still reads it (exit 1: labels missing)" "$?" 1

# ---- EA inodes: an inode whose value lives in an EA inode is left as it is ----
mkdir -p etree
echo a >etree/f
echo b >etree/g
mke2fs -q -F -t ext4 -O ea_inode -I 256 -d etree ea.img 8M >/dev/null 2>&1 || bad "ea: mke2fs"
head -c 6000 /dev/urandom | od -An -tx1 | tr -d ' \n' | head -c 5000 >bigvalue
debugfs -w -R "ea_set -f bigvalue /f user.big" ea.img >/dev/null 2>&1
e2fsck -fy ea.img >/dev/null 2>&1 # (debugfs leaves i_blocks to e2fsck)
expect_match "ea: /f has a value in an EA inode" "$(debugfs -R 'ea_list /f' ea.img 2>/dev/null)" "*user.big (*"
debugfs -R "stat /f" ea.img 2>/dev/null >ea.stat0
label_judged ea ea.img -S fc
expect_eq "ea: label exits 1 (a file left unlabeled)" "$lrc" 1
expect_match "ea: says why" "$(cat ea.err)" "*/f: cannot write*attribute values stored in EA inodes*left as it is*"
debugfs -R "stat /f" ea.img 2>/dev/null >ea.stat1
expect_eq "ea: /f's inode is as it was" "$(diff ea.stat0 ea.stat1 | grep -v -e time -e '^---' -e '^[0-9]' | head -n 3)" ""
expect_eq "ea: the others are labeled" "$(lbl ea.img /g)" "system_u:object_r:default_t:s0"
finish
