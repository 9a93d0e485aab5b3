# Directories read by fclabel itself (labeler/ext4/dirread.c: extents in the inode, a window of
# blocks at a time, the tail checksum with the CPU's crc32c) give what the library's
# ext2fs_dir_iterate gives (FCLABEL_LIB_DIRS=1 reads every directory through it): the same
# entries in the same order (dump), the same warnings, and the same image written (label), on
#   plain     4 KiB blocks: a directory of 3000 names (a run of more blocks than a window),
#             entries removed (a record that spans a removed one), nested directories
#   small     the same tree with 1 KiB blocks
#   htree     the 4 KiB image after e2fsck -fyD (indexed directories: left to the library)
#   badsum    a byte of one directory block changed: its checksum fails (the library's words)
#   ext3      no extents (the library's block map)
#   eio       a bad block (tests/readeio.c) just past directory blocks, free: read ahead only, so
#             not the run's error (exit 0, the same listing); the root's directory block bad:
#             the run's error, as through the library
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/imglib.sh"
need_image_tools
cd "$OUT" || exit 1
export SOURCE_DATE_EPOCH=1700000000

rm -rf dtree
mkdir -p dtree/big dtree/a/b/c dtree/e
i=0
while [ $i -lt 3000 ]; do
	: >"dtree/big/file-with-a-longer-name-$i"
	i=$((i + 1))
done
for n in 1 2 3 4 5; do : >"dtree/a/f$n"; : >"dtree/a/b/g$n"; : >"dtree/a/b/c/h$n"; done
ln -s target dtree/e/link
printf '/.*\tsystem_u:object_r:default_t:s0\n/big(/.*)?\tsystem_u:object_r:big_t:s0\n' >fc

mke2fs -q -F -t ext4 -b 4096 -I 256 -d dtree plain.img 64M >/dev/null 2>&1 || bad "mke2fs plain"
for n in 10 11 12 1500 2999; do
	debugfs -w -R "unlink /big/file-with-a-longer-name-$n" plain.img >/dev/null 2>&1
done
mke2fs -q -F -t ext4 -b 1024 -I 256 -d dtree small.img 64M >/dev/null 2>&1 || bad "mke2fs small"
cp plain.img htree.img
e2fsck -fyD htree.img >/dev/null 2>&1
cp plain.img badsum.img
blk=$(debugfs -R "blocks /a" badsum.img 2>/dev/null | awk '{ print $1 }')
printf 'X' | dd of=badsum.img bs=1 seek=$((blk * 4096 + 32)) conv=notrunc 2>/dev/null
mke2fs -q -F -t ext3 -b 1024 -I 256 -d dtree ext3.img 16M >/dev/null 2>&1 || bad "mke2fs ext3"
expect_match "badsum: e2fsck sees the checksum" "$(e2fsck -fn badsum.img 2>&1)" "*checksum*"

for s in plain small htree badsum ext3; do
	"$FCLABEL" dump "$s.img" >"$s.own.out" 2>"$s.own.err"
	echo "exit $?" >>"$s.own.err"
	FCLABEL_LIB_DIRS=1 "$FCLABEL" dump "$s.img" >"$s.lib.out" 2>"$s.lib.err"
	echo "exit $?" >>"$s.lib.err"
	expect_eq "$s: dump lists the same entries in the same order" \
		"$(cmp -s "$s.own.out" "$s.lib.out" && echo same)" same
	expect_eq "$s: dump says the same" "$(cmp -s "$s.own.err" "$s.lib.err" && echo same)" same
	cp "$s.img" "$s.own.img"
	cp "$s.img" "$s.lib.img"
	"$FCLABEL" label "$s.own.img" -S fc >"$s.lown.out" 2>"$s.lown.err"
	echo "exit $?" >>"$s.lown.err"
	FCLABEL_LIB_DIRS=1 "$FCLABEL" label "$s.lib.img" -S fc >"$s.llib.out" 2>"$s.llib.err"
	echo "exit $?" >>"$s.llib.err"
	sed -i -e 's/, [0-9.]* s$//' -e "s/$s\.[a-z]*\.img/IMG/" "$s.lown.err" "$s.llib.err"
	expect_eq "$s: label says the same" "$(cmp -s "$s.lown.err" "$s.llib.err" && echo same)" same
	expect_eq "$s: label writes the same bytes" \
		"$(cmp -s "$s.own.img" "$s.lib.img" && echo same)" same
done
expect_match "plain: the big directory is all there" "$(grep -c 'file-with-a-longer' plain.own.out)" 2995
expect_match "badsum: the library's words" "$(cat badsum.own.err)" "*checksum*"
expect_match "plain: labeled" "$(cat plain.lown.err)" "*changed 30*"

# ---- eio ----
if cc -shared -fPIC -O2 -o readeio.so "$TOP/tests/readeio.c" -ldl 2>/dev/null; then
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
	last=$(debugfs -R "blocks /e" plain.img 2>/dev/null | awk '{ print $NF }')
	free=$(debugfs -R "ffb 1 $last" plain.img 2>/dev/null | awk '{ print $NF }')
	expect_eq "eio: a free block within a window of /e's" "$([ $((free - last)) -lt 16 ] && echo yes)" yes
	READ_EIO_AT=$((free * 4096)) LD_PRELOAD=$OUT/readeio.so "$FCLABEL" dump plain.img >eio.out 2>eio.err
	expect_eq "eio: a bad block read ahead only: exit 0" "$?" 0
	expect_eq "eio: ... the same listing" "$(cmp -s eio.out plain.own.out && echo same)" same
	root=$(debugfs -R "blocks /" plain.img 2>/dev/null | awk '{ print $1 }')
	READ_EIO_AT=$((root * 4096)) LD_PRELOAD=$OUT/readeio.so "$FCLABEL" dump plain.img >eio2.out 2>eio2.err
	expect_eq "eio: the root's directory block bad: exit 2" "$?" 2
	expect_match "eio: ... says which block" "$(cat eio2.err)" "*read of block $root failed*"
else
	echo "no C compiler for the read shim: the eio case skipped"
fi
finish
