# Hostile images (issue 30, cases 9 to 11, shared_blocks, a feature pair e2fsck calls invalid),
# each built here by hand (mke2fs, then debugfs and byte edits) and labeled under a time bound
# (timeout 60): what must be refused is refused quickly, with exit 2 and the image byte for byte
# as it was; what is legal is labeled and left clean by e2fsck -fn.
#   dag, dag1    an extent tree whose every index entry points at one next-level block (depth 4;
#                full leaves, or one extent a leaf): each node is entered once, the second claim
#                (of the data block, of the leaf) refuses
#   tind         a triple-indirect block filled with its own number: refused
#   twice        a block claimed twice by the same inode back to back (no bigalloc): refused
#   signal       SIGTERM while the claims scan reads a tree node: the scan stops there, nothing
#                is written, fclabel dies by SIGTERM
#   quota_*      a quota inode that is unused (its block map on the inode table), a directory,
#                not a quota file, or a quota tree pointing past its end: refused before any
#                write, naming the quota type, the inode and why; a good one is used
#   shared       shared_blocks: two files sharing a data block are labeled (128- and 256-byte
#                inodes), e2fsck -fn clean after, their data unchanged
#   shared_meta  shared_blocks does not make an inode table block a file's data: refused
#   meta_bg      resize_inode with meta_bg: refused on open for writing, naming both features
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/imglib.sh"
need_image_tools
command -v timeout >/dev/null 2>&1 || skip "timeout is not installed (Debian package coreutils)"
cd "$OUT" || exit 1

cat >craft.py <<'PYEOF'
import struct, sys
cmd, img = sys.argv[1], sys.argv[2]
a = [int(v, 0) for v in sys.argv[3:]]
f = open(img, "r+b")
f.seek(1024)
sb = f.read(1024)
bs = 1024 << struct.unpack_from("<I", sb, 24)[0]
def put(blk, data):
    f.seek(blk * bs)
    f.write(data)
def hdr(n, mx, depth):
    return struct.pack("<HHHHI", 0xF30A, n, mx, depth, 0)
def words(root):
    print(" ".join("%d" % w for w in struct.unpack("<15I", root.ljust(60, b"\0"))))
if cmd == "dag":     # dag IMG DEPTH NODE... DATA: i_block's words; each level's entries all -> the next
    depth, nodes, data = a[0], a[1:-1], a[-1]
    mx = (bs - 12) // 12
    for i, b in enumerate(nodes):
        d = depth - 1 - i
        if d:
            put(b, hdr(mx, mx, d) + struct.pack("<IIHH", 0, nodes[i + 1], 0, 0) * mx)
        else:
            put(b, hdr(mx, mx, 0) + b"".join(struct.pack("<IHHI", j, 1, 0, data) for j in range(mx)))
    words(hdr(4, 4, depth) + struct.pack("<IIHH", 0, nodes[0], 0, 0) * 4)
elif cmd == "leaf1":  # leaf1 IMG BLK DATA: BLK a leaf with one extent, on DATA
    put(a[0], hdr(1, (bs - 12) // 12, 0) + struct.pack("<IHHI", 0, 1, 0, a[1]))
elif cmd == "extents":  # extents IMG LBLK LEN PBLK ...: i_block's words for a depth-0 root
    e = [a[i:i + 3] for i in range(0, len(a), 3)]
    words(hdr(len(e), 4, 0) + b"".join(struct.pack("<IHHI", l, n, 0, p) for l, n, p in e))
elif cmd == "map":   # map IMG PBLK...: i_block's words mapping logical block i to the i-th PBLK
    e = []
    for l, p in enumerate(a):
        if e and e[-1][0] + e[-1][1] == l and e[-1][2] + e[-1][1] == p:
            e[-1][1] += 1
        else:
            e.append([l, 1, p])
    assert len(e) <= 4, "more than 4 extents"
    words(hdr(len(e), 4, 0) + b"".join(struct.pack("<IHHI", l, n, 0, p) for l, n, p in e))
elif cmd == "fill":  # fill IMG BLK: the block filled with its own number
    put(a[0], struct.pack("<I", a[0]) * (bs // 4))
elif cmd == "poke":  # poke IMG OFF U32: a little-endian u32 at byte OFF
    f.seek(a[0])
    f.write(struct.pack("<I", a[1]))
PYEOF
C() { "$PY" "$OUT/craft.py" "$@"; }
# counts: take IMG BLK... marks blocks in use, give IMG BLK... free, with group 0's and the
# superblock's free counts kept agreeing with the bitmap (the images here are one group)
counts() {
	_i=$1 _op=$2 _d=$3
	shift 3
	_g=$(dumpe2fs "$_i" 2>/dev/null | sed -n 's/^ *\([0-9]*\) free blocks, .*/\1/p' | head -n 1)
	_s=$(dumpe2fs -h "$_i" 2>/dev/null | awk -F: '/^Free blocks/ { print $2 + 0 }')
	{
		for _b in "$@"; do echo "$_op $_b"; done
		echo "set_bg 0 free_blocks_count $((_g + _d * $#))"
		echo "set_bg 0 checksum calc"
		echo "ssv free_blocks_count $((_s + _d * $#))"
	} >counts.cmds
	debugfs -w -f counts.cmds "$_i" >/dev/null 2>&1
}
take() { _t=$1; shift; counts "$_t" setb -1 "$@"; }
give() { _t=$1; shift; counts "$_t" freeb 1 "$@"; }
# iblock IMG INODE WORD...: the inode's i_block, word by word
iblock() {
	_i=$1 _n=$2
	shift 2
	_k=0
	for _w in "$@"; do echo "sif $_n block[$_k] $_w"; _k=$((_k + 1)); done >iblock.cmds
	debugfs -w -f iblock.cmds "$_i" >/dev/null 2>&1
}
firstblk() { debugfs -R "blocks $2" "$1" 2>/dev/null | awk '{print $1; exit}'; }
ino() { debugfs -R "stat $2" "$1" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p'; }
itable() { dumpe2fs "$1" 2>/dev/null | sed -n 's/.*Inode table at \([0-9]*\)-.*/\1/p' | head -n 1; }
now() { date +%s.%N; }
# hostile NAME IMG ARGS...: fclabel label IMG ARGS, bounded; rc, secs; $NAME.orig the image before
hostile() {
	_n=$1 _i=$2
	shift 2
	cp "$_i" "$_n.orig"
	_t0=$(now)
	timeout -k 5 60 "$FCLABEL" label "$_i" "$@" >"$_n.out" 2>"$_n.err"
	rc=$?
	secs=$(awk "BEGIN { printf \"%.2f\", $(now) - $_t0 }")
	echo "$_n: exit $rc in $secs s"
}
# refused NAME IMG PATTERN: exit 2 within 10 s, the message, the image as it was
refused() {
	expect_eq "$1: refused (exit 2; 124: still running after 60 s)" "$rc" 2
	expect_eq "$1: quickly (under 10 s: $secs s)" "$(awk "BEGIN { print ($secs < 10) }")" 1
	expect_match "$1: says why" "$(cat "$1.err")" "$3"
	expect_eq "$1: the image is byte for byte as it was" "$(cmp -s "$2" "$1.orig" && echo same)" same
}

mkdir -p tree/a tree/b
head -c 20000 /dev/urandom >tree/a/big
head -c 100000 /dev/urandom >tree/a/ind
head -c 8192 /dev/urandom >tree/a/k8
for i in 1 2 3 4 5 6; do echo "$i" >tree/b/g$i; done
printf '/.*\tsystem_u:object_r:default_t:s0\n/b(/.*)?\tsystem_u:object_r:b_t:s0\n' >fc

# ---- case 9: an extent tree DAG, depth 4 (before: still running after 641 s, SIGTERM ignored) ----
mke2fs -q -F -t ext4 -b 4096 -I 256 -d tree dag.img 16M >/dev/null 2>&1 || bad "dag: mke2fs"
set -- $(debugfs -R "ffb 4 1000" dag.img 2>/dev/null | sed 's/.*: //')
n3=$1 n2=$2 n1=$3 n0=$4
take dag.img "$n3" "$n2" "$n1" "$n0"
d0=$(firstblk dag.img /a/big)
iblock dag.img /a/big $(C dag dag.img 4 "$n3" "$n2" "$n1" "$n0" "$d0")
expect_match "dag: /a/big's root is the DAG" "$(debugfs -R 'stat /a/big' dag.img 2>/dev/null)" "*(ETB0):$n3*"
hostile dag dag.img -S fc
refused dag dag.img "*refusing to write to it: block * is claimed by inode * and by another inode*"
# the same with one extent per leaf: the leaf met again is the block claimed twice
cp dag.orig dag1.img
C leaf1 dag1.img "$n0" "$d0"
hostile dag1 dag1.img -S fc
refused dag1 dag1.img "*refusing to write to it: block $n0 is claimed by inode * and by another inode*"

# ---- case 9: a triple-indirect block filled with its own number (before: ~35 s, exit 0) ----
mke2fs -q -F -t ext2 -b 4096 -I 256 -d tree tind.img 16M >/dev/null 2>&1 || bad "tind: mke2fs"
t=$(debugfs -R "ffb 1 1000" tind.img 2>/dev/null | awk '{ print $NF }')
C fill tind.img "$t"
take tind.img "$t"
debugfs -w -R "sif /a/big block[TIND] $t" tind.img >/dev/null 2>&1
hostile tind tind.img -S fc
refused tind tind.img "*refusing to write to it: block $t is claimed by inode * and by another inode*"

# ---- case 11: the same block twice in a row in one inode, without bigalloc ----
mke2fs -q -F -t ext2 -b 1024 -I 256 -d tree twice.img 8M >/dev/null 2>&1 || bad "twice: mke2fs"
b0=$(firstblk twice.img /a/big)
debugfs -w -R "sif /a/big block[1] $b0" twice.img >/dev/null 2>&1
expect_match "twice: e2fsck sees the block claimed twice" "$(e2fsck -fn twice.img 2>&1)" "*ultiply-claimed block*"
hostile twice twice.img -S fc
refused twice twice.img "*refusing to write to it: block $b0 is claimed by inode * and by another inode*"
# the extent form: one leaf with two extents on the same block
mke2fs -q -F -t ext4 -b 1024 -I 256 -d tree twice4.img 8M >/dev/null 2>&1 || bad "twice4: mke2fs"
b0=$(firstblk twice4.img /b/g1)
iblock twice4.img /b/g1 $(C extents twice4.img 0 1 "$b0" 1 1 "$b0")
debugfs -w -R "sif /b/g1 size 2048" twice4.img >/dev/null 2>&1
hostile twice4 twice4.img -S fc
refused twice4 twice4.img "*refusing to write to it: block $b0 is claimed by inode * and by another inode*"

# ---- SIGTERM inside the claims scan: it stops there, before the first write ----
if cc -shared -fPIC -O2 -o readsig.so "$TOP/tests/readsig.c" -ldl 2>/dev/null; then
	mke2fs -q -F -t ext2 -b 4096 -I 256 -d tree sig.img 16M >/dev/null 2>&1 || bad "signal: mke2fs"
	ind=$(debugfs -R "stat /a/ind" sig.img 2>/dev/null | sed -n 's/.*(IND):\([0-9]*\).*/\1/p')
	cp sig.img signal.orig
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
	READ_SIGNAL_AT=$((ind * 4096)) LD_PRELOAD=$OUT/readsig.so timeout -k 5 60 \
		"$FCLABEL" label sig.img -S fc >signal.out 2>signal.err
	rc=$?
	expect_eq "signal: /a/ind has an indirect block" "$([ -n "$ind" ] && echo yes)" yes
	expect_eq "signal: dies by SIGTERM (143)" "$rc" 143
	expect_match "signal: says it was interrupted, nothing written" "$(cat signal.err)" \
		"*interrupted after * of about * files; nothing was written*"
	expect_eq "signal: the image is byte for byte as it was" "$(cmp -s sig.img signal.orig && echo same)" same
else
	echo "no C compiler for the read shim: the signal case skipped"
fi

# ---- case 10: quota inodes (1 KiB blocks, 128-byte inodes: every label takes a block and is
# charged to its owner) ----
mke2fs -q -F -t ext4 -b 1024 -I 128 -O quota -E quotatype=usrquota:grpquota -d tree quota.img 8M \
	>/dev/null 2>&1 || bad "quota: mke2fs"
e2fsck -fy quota.img >/dev/null 2>&1 # (mke2fs -d leaves the usage to e2fsck)
fsck_clean quota.img "quota: the base image"
qa=$(firstblk quota.img "<3>")
it=$(itable quota.img)
# an unused inode (100) made a copy of the user quota file whose last block (the leaf holding id
# 0's entry) is the inode table's first block, named as the user quota file
cp quota.img q_unused.img
debugfs -w -R "copy_inode <3> <100>" q_unused.img >/dev/null 2>&1
debugfs -w -R "sif <100> links_count 0" q_unused.img >/dev/null 2>&1
qmap=$(for l in 0 1 2 3 4; do debugfs -R "bmap <3> $l" quota.img 2>/dev/null; done)
iblock q_unused.img "<100>" $(C map q_unused.img $qmap "$it")
debugfs -w -R "ssv usr_quota_inum 100" q_unused.img >/dev/null 2>&1
hostile q_unused q_unused.img -S fc
refused q_unused q_unused.img "*refusing to write to it: the user quota file (inode 100) is not in use*"
# the root directory named as the group quota file
cp quota.img q_dir.img
debugfs -w -R "ssv grp_quota_inum 2" q_dir.img >/dev/null 2>&1
hostile q_dir q_dir.img -S fc
refused q_dir q_dir.img "*refusing to write to it: the group quota file (inode 2) is not a regular file*"
# a regular file that is not a quota file (of a quota file's size; and of another size)
for f in k8 big; do
	cp quota.img q_magic_$f.img
	debugfs -w -R "ssv usr_quota_inum $(ino quota.img /a/$f)" q_magic_$f.img >/dev/null 2>&1
	hostile q_magic_$f q_magic_$f.img -S fc
	refused q_magic_$f q_magic_$f.img "*refusing to write to it: the user quota file (inode $(ino quota.img /a/$f)) is not a v2 quota file (*"
done
# the user quota file's tree root (its block 1) points past the file's end
cp quota.img q_tree.img
C poke q_tree.img $(($(debugfs -R "bmap <3> 1" quota.img 2>/dev/null) * 1024)) 9999
hostile q_tree q_tree.img -S fc
refused q_tree q_tree.img "*refusing to write to it: the user quota file (inode 3)*block 9999*"
# a good one is used: labeled, usage right
cp quota.img q_ok.img
hostile q_ok q_ok.img -S fc
expect_eq "q_ok: labeled (exit 0)" "$rc" 0
fsck_clean q_ok.img "q_ok: usage right"

# ---- shared_blocks: what e2fsdroid -s makes; data blocks shared between files are legal ----
for k in 128 256; do
	n=shared_$k
	mke2fs -q -F -t ext4 -b 1024 -I $k -d tree $n.img 8M >/dev/null 2>&1 || bad "$n: mke2fs"
	g1=$(firstblk $n.img /b/g1) g2=$(firstblk $n.img /b/g2)
	# /b/g2 holds what /b/g1 holds, in the same block (as a deduplicating builder makes it)
	debugfs -w -R "sif /b/g2 block[5] $g1" $n.img >/dev/null 2>&1
	debugfs -w -R "sif /b/g2 size 2" $n.img >/dev/null 2>&1
	give $n.img "$g2"
	debugfs -w -R "feature shared_blocks" $n.img >/dev/null 2>&1
	fsck_clean $n.img "$n: e2fsck accepts the shared block"
	debugfs -R "cat /b/g1" $n.img >$n.g1 2>/dev/null
	debugfs -R "cat /b/g2" $n.img >$n.g2 2>/dev/null
	hostile $n $n.img -S fc
	expect_eq "$n: labeled (exit 0)" "$rc" 0
	fsck_clean $n.img "$n: after the label"
	expect_eq "$n: /b/g1's data unchanged" "$(debugfs -R 'cat /b/g1' $n.img 2>/dev/null | cmp -s - $n.g1 && echo same)" same
	expect_eq "$n: /b/g2's data unchanged" "$(debugfs -R 'cat /b/g2' $n.img 2>/dev/null | cmp -s - $n.g2 && echo same)" same
	expect_eq "$n: /b/g2 labeled" "$(debugfs -R 'ea_get /b/g2 security.selinux' $n.img 2>/dev/null | grep -c b_t)" 1
done
# ... but not an inode table block as a file's data
cp shared_256.orig shared_meta.img
debugfs -w -R "sif /b/g3 block[5] $(($(itable shared_meta.img) + 1))" shared_meta.img >/dev/null 2>&1
hostile shared_meta shared_meta.img -S fc
refused shared_meta shared_meta.img "*refusing to write to it: block $(($(itable shared_meta.img) + 1)) is claimed by inode * and by another inode or the file system's own metadata*"

# ---- resize_inode with meta_bg, which e2fsck calls invalid: refused on open for writing ----
mke2fs -q -F -t ext4 -b 1024 -I 256 -d tree metabg.img 8M >/dev/null 2>&1 || bad "meta_bg: mke2fs"
debugfs -w -R "feature meta_bg" metabg.img >/dev/null 2>&1
expect_match "meta_bg: e2fsck calls the pair invalid" "$(e2fsck -fn metabg.img 2>&1)" "*esize_inode and meta_bg features are enabled*"
hostile meta_bg metabg.img -S fc
refused meta_bg metabg.img "*resize_inode and meta_bg*"
"$FCLABEL" check metabg.img -S fc >meta_bg.check.out 2>&1
expect_eq "meta_bg: check still reads it (exit 1: labels missing)" "$?" 1
finish
