# 128-byte inodes: every label in an attribute block, shared between the files of one label.
# Labeled as a copy renamed over the image (the default), the shared blocks are held in memory
# and each written once at the end; in place (--in-place) every reference is written in the
# order a crash needs. The two must give the same image byte for byte, and e2fsck -fn must find
# nothing, on: 3,000 files of one label (three blocks: h_refcount 1024, 1024, 952), a relabel
# that moves part of each block's files to other labels and frees others (blocks of the image
# losing references, some freed, some kept for the files still using them), 2,600 distinct
# labels (more blocks than the copy holds in memory at 4 KiB: written back midway), files with
# other attributes (user.*: written by libext2fs), --digests (libext2fs adding to directories
# whose label blocks are held in memory), and images left by in-place runs killed midway
# (counts one too high) rerun both ways. Per kind: metadata_csum on and off, 1 KiB blocks,
# bigalloc.
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/imglib.sh"
need_image_tools
cd "$OUT" || exit 1

# ---- the tree and the policies -------------------------------------------------------------
rm -rf tree
mkdir -p tree/d/big tree/d/many tree/d/attr tree/d/sub/a/b
"$PY" - tree <<'EOF'
import os, sys
root = sys.argv[1]
for i in range(3000):
    open(f"{root}/d/big/f{i}", "w").close()
for i in range(2600):
    open(f"{root}/d/many/u{i}", "w").close()
n = 0
for i in range(40):
    p = f"{root}/d/attr/a{i}"
    with open(p, "w") as f:
        f.write("x")
    try:
        os.setxattr(p, "user.note", b"note %d" % i)
        n += 1
    except OSError:
        pass
for i in range(30):
    open(f"{root}/d/sub/a/b/g{i}", "w").close()
print(n, file=open("attr.count", "w"))
EOF
# A: one label for all of big, one per file of many; B: the even files of big, and the files of
# many whose number starts with 1, change label (the rest keep theirs)
{
	printf '/.*\tsystem_u:object_r:default_t:s0\n'
	printf '/d(/.*)?\tsystem_u:object_r:d_t:s0\n'
	printf '/d/big/.*\t--\tsystem_u:object_r:big_t:s0\n'
	printf '/d/attr/.*\t--\tsystem_u:object_r:attr_t:s0\n'
	i=0
	while [ $i -lt 2600 ]; do
		printf '/d/many/u%s\t--\tsystem_u:object_r:u%s_t:s0\n' $i $i
		i=$((i + 1))
	done
} >fcA
{
	cat fcA
	printf '/d/big/f[0-9]*[02468]\t--\tsystem_u:object_r:even_t:s0\n'
	printf '/d/many/u1[0-9]*\t--\tsystem_u:object_r:one_t:s0\n'
	printf '/d/attr/a1.*\t--\tsystem_u:object_r:attr1_t:s0\n'
	printf '/d/sub(/.*)?\tsystem_u:object_r:sub_t:s0\n'
} >fcB
nattr=$(cat attr.count)
[ "$nattr" -gt 0 ] && ok "files with user.* attributes: $nattr" ||
	echo "(no user.* attributes here: the tree's file system refuses them)"

shim=
cc -shared -fPIC -O2 -o killshim.so "$TOP/tests/killshim.c" -ldl 2>/dev/null && shim=$OUT/killshim.so

# label NAME IMG ARGS...: fclabel label, with the status checked
label() {
	_what=$1 _img=$2
	shift 2
	run "$_what" "$FCLABEL" label "$_img" "$@"
	expect_rc "$kind: $_what" 0
}

# same WHAT A B: the two images are the same bytes
same() {
	if same_fs "$2" "$3"; then ok "$kind: $1: the renamed copy gives the bytes of --in-place (but for the journal)"
	else bad "$kind: $1: the renamed copy and --in-place differ: $("$PY" "$IMGTOOL" samefs "$2" "$3")"; fi
}

# the distinct EA blocks the files of a directory use (debugfs stat: "File ACL: N")
acl_blocks() { # IMG DIR N PREFIX
	_i=0
	while [ "$_i" -lt "$3" ]; do echo "stat $2/$4$_i"; _i=$((_i + 1)); done >acl.cmds
	debugfs -f acl.cmds "$1" 2>/dev/null | sed -n 's/.*File ACL: \([0-9]*\).*/\1/p' | sort -u
}

for kind in ext4-128 ext4-128-nocsum ext4-128-1k ext4-bigalloc; do
	case $kind in
	ext4-128) opts="-t ext4 -I 128" ;;
	ext4-128-nocsum) opts="-t ext4 -I 128 -O ^metadata_csum" ;;
	ext4-128-1k) opts="-t ext4 -I 128 -b 1024" ;;
	ext4-bigalloc) opts="-t ext4 -I 128 -O bigalloc -C 16384" ;;
	esac
	echo "== $kind ($opts)"
	# shellcheck disable=SC2086
	mkimg base.img "$OUT/tree" 160M -N 8000 $opts || continue

	# label: one label for 3,000 files, 2,600 labels of one file each
	cp --sparse=always base.img ip.img
	cp --sparse=always base.img cp.img
	ino0=$(stat -c %i cp.img)
	label "label --in-place" ip.img -S fcA --in-place
	label "label (renamed copy)" cp.img -S fcA --json cp.json
	[ "$(stat -c %i cp.img)" != "$ino0" ] && ok "$kind: the default run replaced the image (a copy)" ||
		bad "$kind: the default run wrote in place: the deferred writes were not exercised"
	same "label" ip.img cp.img
	fsck_clean cp.img "$kind: label"
	blks=$(acl_blocks cp.img /d/big 3000 f)
	expect_eq "$kind: 3,000 files of one label share 3 blocks" "$(echo "$blks" | grep -c .)" 3
	for b in $blks; do
		debugfs -R "bd $b" cp.img 2>/dev/null | head -n 1
	done >hdr.txt
	# h_refcount is the little-endian word at offset 4 of the header
	refs=$(sed -n 's/^0000  0000 02ea \([0-9a-f]\{2\}\)\([0-9a-f]\{2\}\) \([0-9a-f]\{4\}\).*/\2\1/p' hdr.txt |
		while read -r h; do printf '%d\n' "0x$h"; done | sort -n | tr '\n' ' ')
	expect_eq "$kind: their h_refcounts" "$refs" "952 1024 1024 "
	expect_match "$kind: blocks allocated (JSON)" "$(grep -o '"ea_blocks_allocated": [0-9]*' cp.json)" \
		'"ea_blocks_allocated": 26[0-9][0-9]'

	# relabel: the image's shared blocks lose part of their files, the one-file blocks of
	# many/u1* are freed, new labels come in
	cp --sparse=always ip.img ip0.img
	label "relabel --in-place" ip.img -S fcB --in-place
	label "relabel (renamed copy)" cp.img -S fcB
	same "relabel" ip.img cp.img
	cp --sparse=always ip.img ipB.img
	fsck_clean cp.img "$kind: relabel"
	expect_eq "$kind: relabel: the odd files of big keep their 3 blocks" \
		"$(acl_blocks cp.img /d/big 3000 f | grep -c -x -F "$blks")" 3

	# and back, with --digests (libext2fs adds security.sehash to directories whose label
	# blocks are held in memory, copying a shared block on write)
	label "back, --digests, --in-place" ip.img -S fcA --digests --in-place
	label "back, --digests (renamed copy)" cp.img -S fcA --digests
	same "back with --digests" ip.img cp.img
	fsck_clean cp.img "$kind: back with --digests"

	# in-place runs killed after chosen writes, then labeled to the end both ways (in place,
	# and as a copy): each replays what the kill left in the journal first, and both make the
	# same decisions from there
	if [ -n "$shim" ] && [ "$kind" = ext4-128 ]; then
		for n in 3 40 700 2500; do
			cp --sparse=always ip0.img k.img
			{ (KILL_AFTER_WRITES=$n LD_PRELOAD=$shim \
				ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0" \
				exec "$FCLABEL" label k.img -S fcB --in-place >/dev/null 2>&1); } 2>/dev/null
			cp --sparse=always k.img k2.img
			run "rerun-ip-$n" "$FCLABEL" label k.img -S fcB --in-place
			expect_rc "$kind: killed after write $n, rerun in place" 0
			run "rerun-cp-$n" "$FCLABEL" label k2.img -S fcB
			expect_rc "$kind: killed after write $n, rerun as a copy" 0
			same "killed after write $n, rerun" k.img k2.img
			fsck_clean k2.img "$kind: killed after write $n, rerun as a copy"
		done
		# without a journal the writes go in crash order: a kill leaves at most a leak (a
		# count one too high among them), which the rerun repairs
		nref=0
		cp --sparse=always ip0.img nj.img
		tune2fs -O ^has_journal nj.img >/dev/null 2>&1
		cp --sparse=always nj.img k.img
		{ (KILL_COUNT_FILE=$OUT/nj.count LD_PRELOAD=$shim \
			ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0" \
			exec "$FCLABEL" label k.img -S fcB --in-place >/dev/null 2>&1); } 2>/dev/null
		nw=$(cat "$OUT/nj.count" 2>/dev/null || echo 0)
		n=0
		while [ "$n" -lt "$nw" ]; do
			n=$((n + 1))
			cp --sparse=always nj.img k.img
			{ (KILL_AFTER_WRITES=$n LD_PRELOAD=$shim \
				ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0" \
				exec "$FCLABEL" label k.img -S fcB --in-place >/dev/null 2>&1); } 2>/dev/null
			found=$(e2fsck -fn k.img 2>&1 | grep -c 'reference count [0-9]*, should be')
			[ "$found" -gt 0 ] && nref=$((nref + 1))
			run "rerun-nj-$n" "$FCLABEL" label k.img -S fcB --in-place
			expect_rc "$kind (no journal): killed after write $n, rerun" 0
			[ "$found" -gt 0 ] && expect_match "$kind (no journal): killed after write $n: the rerun says what it repaired" \
				"$(cat "$OUT/rerun-nj-$n.err")" "*repaired*reference count*"
			fsck_clean k.img "$kind (no journal): killed after write $n, rerun"
		done
		[ "$nref" -gt 0 ] && ok "$kind (no journal): $nref of $nw kill(s) left a count too high, repaired" ||
			bad "$kind (no journal): no kill left a count too high: the repair went untried"
	fi
	rm -f ip.img ip0.img ipB.img cp.img k.img k2.img nj.img
done
finish
