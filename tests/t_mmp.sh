# MMP, multiple mount protection (issue 30, case 8): an image made with `mke2fs -O mmp` is
# honoured without being touched when nothing is written.
#   - a refused run (superblock error flag), check, a dry run, and a label with nothing to change
#     leave the image byte for byte as it was, at once (no MMP wait); -o refused leaves no output;
#   - an image another node holds (a random MMP sequence: mounted there; e2fsck's mark) is refused
#     for writing, exit 2, naming the node and the device, byte for byte as it was; check warns;
#   - a label in place claims the image under MMP before its first write (another run meanwhile,
#     without the BSD lock, finds it held, naming this node) and leaves the sequence clean
#     (e2fsck -fn clean); the time it takes is printed;
#   - a copy (128-byte inodes), -o and a sparse image never write the original's MMP block: they
#     succeed without the wait, and the result's MMP block is the original's; a copy whose
#     original another node mounts during the run is discarded (exit 2, naming the node).
. "$TOP/tests/imglib.sh"
need_image_tools
cd "$OUT" || exit 1
small_tree tree
small_policy fc
ms() { date +%s%N | cut -c1-13; }
# mmp_seq IMG: the MMP block's sequence, as debugfs reads it (read-only: no MMP wait)
mmp_seq() { debugfs -R dump_mmp "$1" 2>/dev/null | sed -n 's/^sequence: //p'; }
# mmp_set IMG SEQ NODE DEV: the MMP block as another node leaves it (images without metadata_csum:
# no checksum to mend)
mmp_set() {
	"$PY" - "$@" <<'EOF'
import struct, sys, time
img, seq, node, dev = sys.argv[1], int(sys.argv[2], 16), sys.argv[3].encode(), sys.argv[4].encode()
with open(img, "r+b") as f:
    f.seek(1024)
    sb = f.read(1024)
    bs = 1024 << struct.unpack_from("<I", sb, 0x18)[0]
    blk = struct.unpack_from("<Q", sb, 0x168)[0]
    f.seek(blk * bs)
    m = bytearray(f.read(1024))
    assert struct.unpack_from("<I", m, 0)[0] == 0x004D4D50, "no MMP block"
    struct.pack_into("<IQ", m, 4, seq, int(time.time()))
    m[16:80] = node.ljust(64, b"\0")
    m[80:112] = dev.ljust(32, b"\0")
    f.seek(blk * bs)
    f.write(m)
EOF
}
# state_errors IMG: the superblock says the file system has errors (no metadata_csum)
state_errors() {
	"$PY" -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(1024 + 0x3a); f.write(b"\3\0")' "$1"
}
mkimg m256.img tree 8M -t ext4 -I 256 -O mmp || finish
mkimg m128.img tree 8M -t ext4 -I 128 -O mmp || finish
mkimg p256.img tree 8M -t ext4 -I 256 -O mmp,^metadata_csum || finish
fsck_clean m256.img "the MMP image (mke2fs -O mmp)"
expect_eq "its MMP sequence is clean" "$(mmp_seq m256.img)" ff4d4d50

# ---- nothing written: byte for byte, at once ----
cp p256.img err.img && state_errors err.img && cp err.img err.orig
t0=$(ms)
run refused "$FCLABEL" label err.img -S fc
t1=$(ms)
expect_rc "a refused run (superblock error flag)" 2
expect_eq "a refused run leaves the image byte for byte" "$(cmp -s err.img err.orig && echo same)" same
[ $((t1 - t0)) -lt 4000 ] && ok "a refused run takes no MMP wait ($((t1 - t0)) ms)" ||
	bad "a refused run took $((t1 - t0)) ms"
rm -f out.img
run refused_o "$FCLABEL" label err.img -S fc -o out.img
expect_rc "-o, refused" 2
expect_eq "-o, refused: no output left behind" "$(ls out.img 2>/dev/null)" ""
expect_eq "-o, refused: the input byte for byte" "$(cmp -s err.img err.orig && echo same)" same
cp m256.img ro.img
run check "$FCLABEL" check ro.img -S fc
expect_rc "check" 1
run dry "$FCLABEL" label ro.img -S fc -n
expect_rc "a dry run" 0
expect_eq "check and a dry run leave the image byte for byte" "$(cmp -s ro.img m256.img && echo same)" same

# ---- held by another node: refused, naming it ----
for k in "mounted 2a5b3c4d" "fsck e24d4d50"; do
	set -- $k
	cp p256.img held.img && mmp_set held.img "$2" othernode /dev/sdz && cp held.img held.orig
	run held_$1 "$FCLABEL" label held.img -S fc
	expect_rc "held ($1 on another node): label refused" 2
	expect_match "held ($1): names the node and the device" "$(cat "$OUT/held_$1.err")" \
		"*held.img*othernode*/dev/sdz*nothing written*"
	expect_eq "held ($1): byte for byte as it was" "$(cmp -s held.img held.orig && echo same)" same
	rm -f out.img
	run held_o_$1 "$FCLABEL" label held.img -S fc -o out.img
	expect_rc "held ($1): -o refused" 2
	expect_eq "held ($1): -o leaves no output" "$(ls out.img 2>/dev/null)" ""
	run held_check_$1 "$FCLABEL" check held.img -S fc
	expect_rc "held ($1): check reads it" 1
	expect_match "held ($1): check warns that it is in use" "$(cat "$OUT/held_check_$1.err")" \
		"*warning*held.img*othernode*"
done

# ---- a label in place: MMP claimed before the first write, clean after ----
cp m256.img in.img
t0=$(ms)
"$FCLABEL" label in.img -S fc >in.out 2>in.err &
pid=$!
# while it runs, the MMP block is not clean: another run (not waiting for the BSD lock) is refused
seen=""
for i in $(seq 1 150); do
	s=$(mmp_seq in.img)
	[ -n "$s" ] && [ "$s" != ff4d4d50 ] && { seen=$s; break; }
	kill -0 $pid 2>/dev/null || break
	sleep 0.1
done
if [ -n "$seen" ]; then
	ok "while the label runs, the MMP sequence is not clean ($seen)"
	run second "$FCLABEL" label in.img -S fc --lock=no
	expect_rc "a second run meanwhile is refused" 2
	expect_match "it names this node" "$(cat "$OUT/second.err")" "*in.img*$(hostname)*nothing written*"
else
	bad "the MMP sequence stayed clean while the label ran"
fi
wait $pid
lrc=$?
t1=$(ms)
expect_eq "label in place: exit" "$lrc" 0
echo "a label of an MMP image in place: $((t1 - t0)) ms (MMP's wait: twice the update interval and a second)"
expect_eq "after it, the MMP sequence is clean" "$(mmp_seq in.img)" ff4d4d50
fsck_clean in.img "labeled in place"
"$FCLABEL" check in.img -S fc >/dev/null 2>&1
expect_eq "labeled" "$?" 0
cp in.img again.img
t0=$(ms)
run again "$FCLABEL" label again.img -S fc
t1=$(ms)
expect_rc "again, nothing to change" 0
expect_eq "nothing to change: byte for byte, no MMP claimed" "$(cmp -s again.img in.img && echo same)" same
[ $((t1 - t0)) -lt 4000 ] && ok "nothing to change: no MMP wait ($((t1 - t0)) ms)" ||
	bad "nothing to change took $((t1 - t0)) ms"

# ---- a copy, -o, sparse: the original's MMP block never written ----
mmpblk() { # IMG: the MMP block's bytes, as a digest
	"$PY" - "$1" <<'EOF'
import hashlib, struct, sys
f = open(sys.argv[1], "rb"); f.seek(1024); sb = f.read(1024)
bs = 1024 << struct.unpack_from("<I", sb, 0x18)[0]; blk = struct.unpack_from("<Q", sb, 0x168)[0]
f.seek(blk * bs); print(hashlib.sha1(f.read(1024)).hexdigest())
EOF
}
cp m128.img c.img
t0=$(ms)
run copy "$FCLABEL" label c.img -S fc
t1=$(ms)
expect_rc "a copy (128-byte inodes)" 0
echo "a copy of an MMP image: $((t1 - t0)) ms"
expect_eq "a copy: the result's MMP block is the original's" "$(mmpblk c.img)" "$(mmpblk m128.img)"
fsck_clean c.img "a copy"
# a node mounts the original while its copy is made (tests/killshim.c writes the MMP block of a
# mount into the image, in place, at the copy's first write): the copy is discarded
if cc -shared -fPIC -O2 -o killshim.so "$TOP/tests/killshim.c" -ldl 2>/dev/null; then
	mkimg p128.img tree 8M -t ext4 -I 128 -O mmp,^metadata_csum || finish
	cp p128.img taken.img && mmp_set taken.img 3a5b3c4d othernode /dev/sdz
	cp p128.img c2.img
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" KILL_AFTER_WRITES=1 \
		KILL_OVERWRITE_FROM=taken.img KILL_OVERWRITE_TO=c2.img LD_PRELOAD=$OUT/killshim.so \
		"$FCLABEL" label c2.img -S fc >taken.out 2>taken.err
	expect_eq "a copy whose original a node mounted meanwhile: exit 2" "$?" 2
	expect_match "it says so, naming the node" "$(cat taken.err)" "*c2.img*othernode*nothing written*"
	expect_eq "the image is what the node left, not the copy" "$(cmp -s c2.img taken.img && echo same)" same
else
	echo "no C compiler for tests/killshim.c: the mount during a copy is not tried"
fi
rm -f o.img
cp m256.img mo.orig
run out "$FCLABEL" label m256.img -S fc -o o.img
expect_rc "-o" 0
expect_eq "-o: the input byte for byte" "$(cmp -s m256.img mo.orig && echo same)" same
expect_eq "-o: the output's MMP block is the input's" "$(mmpblk o.img)" "$(mmpblk m256.img)"
fsck_clean o.img "-o"
if command -v img2simg >/dev/null && img2simg m256.img s.img >/dev/null 2>&1; then
	run sparse "$FCLABEL" label s.img -S fc
	expect_rc "a sparse image" 0
	simg2img s.img s.raw 2>/dev/null && fsck_clean s.raw "a sparse image"
	expect_eq "sparse: the MMP block is the original's" "$(mmpblk s.raw)" "$(mmpblk m256.img)"
else
	echo "img2simg (android-sdk-libsparse-utils) is not installed: the sparse case skipped"
fi
finish
