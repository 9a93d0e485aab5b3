# The block claims looked at on a thread of their own while the policies load (ext4/prescan.c;
# FCLABEL_PRESCAN_MIN=0: every raw image, not only those with 4 MiB of inodes in use), with the
# same answers as the scan before the first write:
#   cross     a file's indirect block inside an inode table: refused before any write, naming
#             the block and the inode, the image as it was
#   clean     labeled as without the thread, byte for byte, e2fsck -fn clean
#   changed   the image changed (a block cross-linked) after the thread read it, while the run
#             waited for the image's lock: the thread's answer is not taken, the run refuses
#   signal    SIGTERM while the thread reads a tree node: fclabel dies by it, nothing written;
#             so too when the run's thread is waiting at its first write (FCLABEL_PRESCAN_SHARE)
#   share     the run's thread, at its first write, takes its share of the scan
#             (FCLABEL_PRESCAN_SHARE=1: the thread the first unit of the inode tables, group 0's,
#             the run's thread the others): a block claimed by a file in each part, and a file
#             of the run's part claiming group 0's inode table, refused with the words of the
#             scan without the thread; a clean image labeled byte for byte as without it
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/imglib.sh"
need_image_tools
cd "$OUT" || exit 1
export SOURCE_DATE_EPOCH=1700000000

mkdir -p xtree
head -c 40000 /dev/urandom >xtree/big
echo s >xtree/small
printf '/.*\tsystem_u:object_r:default_t:s0\n/big\tsystem_u:object_r:big_t:s0\n' >fc
mke2fs -q -F -t ext3 -b 1024 -I 256 -d xtree base.img 4M >/dev/null 2>&1 || bad "mke2fs"
it=$(dumpe2fs base.img 2>/dev/null | sed -n 's/.*Inode table at \([0-9]*\)-.*/\1/p' | head -n 1)
# cross_link IMAGE: /big's indirect block made the second block of the first inode table
cross_link() { debugfs -w -R "sif /big block[IND] $((it + 1))" "$1" >/dev/null 2>&1; }
refusal="*refusing to write to it: block $((it + 1)) is claimed by inode 12 and by another inode or the file system's own metadata*"

# ---- cross ----
cp base.img cross.img
cross_link cross.img
expect_match "cross: e2fsck sees the conflict" "$(e2fsck -fn cross.img 2>&1)" "*conflicts with critical metadata*"
cp cross.img cross.orig
FCLABEL_PRESCAN_MIN=0 "$FCLABEL" label cross.img -S fc >cross.out 2>cross.err
expect_eq "cross: refused before any write: exit 2" "$?" 2
expect_match "cross: names the block and the inode" "$(cat cross.err)" "$refusal"
expect_eq "cross: the image is as it was" "$(cmp -s cross.img cross.orig && echo same)" same

# ---- clean ----
cp base.img clean.img
cp base.img clean.ref
FCLABEL_PRESCAN_MIN=0 "$FCLABEL" label clean.img -S fc >clean.out 2>clean.err
expect_eq "clean: labeled (exit 0)" "$?" 0
FCLABEL_PRESCAN_MIN=999999999999 "$FCLABEL" label clean.ref -S fc >/dev/null 2>&1
expect_eq "clean: the same bytes as a run without the thread" "$(cmp -s clean.img clean.ref && echo same)" same
expect_eq "clean: e2fsck -fn clean" "$(e2fsck -fn clean.img >/dev/null 2>&1; echo $?)" 0

# ---- changed: between the thread's read and the run's lock ----
if command -v python3 >/dev/null 2>&1; then
	cp base.img changed.img
	rm -f held
	python3 -c 'import fcntl, sys, time
f = open(sys.argv[1]); fcntl.flock(f, fcntl.LOCK_EX); open(sys.argv[2], "w").close(); time.sleep(60)' \
		changed.img held &
	holder=$!
	i=0
	while [ ! -e held ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	FCLABEL_PRESCAN_MIN=0 "$FCLABEL" label changed.img -S fc >changed.out 2>changed.err &
	pid=$!
	i=0
	while ! grep -q "waiting for the lock" changed.err 2>/dev/null && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	expect_match "changed: the run waits for the lock" "$(cat changed.err)" "*waiting for the lock*"
	sleep 0.2 # (the thread's scan of a 4 MiB image is long over)
	cross_link changed.img
	cp changed.img changed.orig
	kill "$holder"
	wait "$holder" 2>/dev/null
	wait "$pid"
	expect_eq "changed: refused (exit 2)" "$?" 2
	expect_match "changed: names the block and the inode" "$(cat changed.err)" "$refusal"
	expect_eq "changed: the image is as it was" "$(cmp -s changed.img changed.orig && echo same)" same
else
	echo "no python3: the changed case skipped"
fi

# ---- share ----
# 8 groups of 16 inodes, one unit of the inode tables each: the files fill groups 0 to 3
mkdir -p shtree
for i in $(seq 1 40); do head -c 3000 /dev/urandom >shtree/f$i; done
mke2fs -q -F -t ext3 -b 1024 -I 256 -g 1024 -N 128 -d shtree share.img 8M >/dev/null 2>&1 ||
	bad "share: mke2fs"
# file_in GROUP: a file whose inode is in that group
file_in() {
	for f in $(ls shtree); do
		n=$(debugfs -R "stat /$f" share.img 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p')
		[ $(((n - 1) / 16)) -eq "$1" ] && { echo "$f"; return; }
	done
}
f0=$(file_in 0) f2=$(file_in 2)
expect_eq "share: a file in group 0 and one in group 2" \
	"$([ -n "$f0" ] && [ -n "$f2" ] && echo yes)" yes
it0=$(dumpe2fs share.img 2>/dev/null | sed -n 's/.*Inode table at \([0-9]*\)-.*/\1/p' | head -n 1)
b0=$(debugfs -R "bmap /$f0 0" share.img 2>/dev/null)
# share_case NAME BLOCK: /f2's first block made BLOCK; refused as without the thread
share_case() {
	cp share.img "$1.img"
	debugfs -w -R "sif /$f2 block[0] $2" "$1.img" >/dev/null 2>&1
	cp "$1.img" "$1.orig"
	FCLABEL_PRESCAN_MIN=999999999999 "$FCLABEL" label "$1.img" -S fc >/dev/null 2>"$1.want"
	cp "$1.orig" "$1.img"
	FCLABEL_PRESCAN_MIN=0 FCLABEL_PRESCAN_SHARE=1 "$FCLABEL" label "$1.img" -S fc >/dev/null \
		2>"$1.err"
	expect_eq "share: $1: refused (exit 2)" "$?" 2
	expect_match "share: $1: refused without the thread too" "$(cat "$1.want")" "*refusing to write*"
	# (but the time the summary gives)
	expect_eq "share: $1: the same words as without the thread" \
		"$(sed 's/, [0-9.]* s$//' "$1.err")" "$(sed 's/, [0-9.]* s$//' "$1.want")"
	expect_eq "share: $1: the image is as it was" "$(cmp -s "$1.img" "$1.orig" && echo same)" same
}
share_case across "$b0"
share_case itable "$((it0 + 1))"
cp share.img shclean.img
cp share.img shclean.ref
FCLABEL_PRESCAN_MIN=0 FCLABEL_PRESCAN_SHARE=1 "$FCLABEL" label shclean.img -S fc >/dev/null 2>&1
expect_eq "share: clean: labeled (exit 0)" "$?" 0
FCLABEL_PRESCAN_MIN=999999999999 "$FCLABEL" label shclean.ref -S fc >/dev/null 2>&1
expect_eq "share: clean: the same bytes as without the thread" \
	"$(cmp -s shclean.img shclean.ref && echo same)" same
expect_eq "share: clean: e2fsck -fn clean" "$(e2fsck -fn shclean.img >/dev/null 2>&1; echo $?)" 0

# ---- signal ----
if cc -shared -fPIC -O2 -o readsig.so "$TOP/tests/readsig.c" -ldl 2>/dev/null; then
	mkdir -p stree
	head -c 100000 /dev/urandom >stree/ind
	mke2fs -q -F -t ext2 -b 4096 -I 256 -d stree sig.img 16M >/dev/null 2>&1 || bad "signal: mke2fs"
	ind=$(debugfs -R "stat /ind" sig.img 2>/dev/null | sed -n 's/.*(IND):\([0-9]*\).*/\1/p')
	expect_eq "signal: /ind has an indirect block" "$([ -n "$ind" ] && echo yes)" yes
	cp sig.img signal.orig
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
	FCLABEL_PRESCAN_MIN=0 READ_SIGNAL_AT=$((ind * 4096)) LD_PRELOAD=$OUT/readsig.so \
		timeout -k 5 60 "$FCLABEL" label sig.img -S fc >signal.out 2>signal.err
	expect_eq "signal: dies by SIGTERM (143)" "$?" 143
	expect_match "signal: says nothing was written" "$(cat signal.err)" "*nothing*"
	expect_eq "signal: the image is byte for byte as it was" "$(cmp -s sig.img signal.orig && echo same)" same
	# the thread reads the tree node as the run's thread waits at its first write (which met
	# the signal only once the thread's scan was over: it wrote a label, 2 runs in 6)
	for i in 1 2 3 4 5 6; do
		cp signal.orig sig.img
		FCLABEL_PRESCAN_MIN=0 FCLABEL_PRESCAN_SHARE=1 READ_SIGNAL_AT=$((ind * 4096)) \
			LD_PRELOAD=$OUT/readsig.so timeout -k 5 60 "$FCLABEL" label sig.img -S fc \
			>signal.out 2>signal.err
		echo "$? $(grep -c "nothing was written" signal.err) $(cmp -s sig.img signal.orig && echo same)"
	done >signal.share
	expect_eq "signal: at the first write, 6 runs: each by SIGTERM, nothing written" \
		"$(sort -u signal.share)" "143 1 same"
	# the file truncated by another program while the thread looks at it where it is mapped:
	# what is mapped past the end faults (SIGBUS); the thread's part ends as a read error, and
	# the run says what it finds (the image too short), never killed by the fault
	bb=$(dumpe2fs sig.img 2>/dev/null | sed -n 's/.*Block bitmap at \([0-9]*\).*/\1/p' | head -n 1)
	it=$(dumpe2fs sig.img 2>/dev/null | sed -n 's/.*Inode table at \([0-9]*\).*/\1/p' | head -n 1)
	for i in 1 2 3; do
		cp signal.orig sig.img
		FCLABEL_PRESCAN_MIN=0 READ_SIGNAL_AT=$((bb * 4096)) READ_TRUNCATE_TO=$((it * 4096)) \
			LD_PRELOAD=$OUT/readsig.so timeout -k 5 60 "$FCLABEL" label sig.img -S fc \
			>trunc.out 2>trunc.err
		# (refused at the open as too short, or a short read in the walk if the run's open
		# came before the thread's read: which, is timing)
		echo "$? $(grep -c -e "truncated" -e "short read" trunc.err)"
	done >trunc.runs
	expect_eq "truncated under the mapping, 3 runs: each refused (exit 2), saying why, no fault" \
		"$(sort -u trunc.runs)" "2 1"
else
	echo "no C compiler for the read shim: the signal case skipped"
fi
finish
