# fclabel label / check on images it must refuse or handle with care:
# - refusals (exit 2, a message naming the image, the image unchanged byte for byte): superblock
#   error flag, not cleanly unmounted, random bytes, a truncated image, an empty file, a
#   directory, a missing file, a read-only file (as an unprivileged user); --force writes the
#   first two (and keeps their flags); check and -n only warn on them; a journal said to need
#   recovery that holds nothing to replay is cleared, as a mount clears it, and labeled;
# - bad command lines and policies (duplicate specs, as setfiles refuses them): exit 2, image
#   unchanged;
# - check on a read-only image file as an unprivileged user (setpriv);
# - damaged trees (a directory loop, an entry to a cleared inode): warnings, the walk ends, every
#   other file labeled;
# - a label too long for any attribute space: that file fails (exit 1, named), the rest is labeled,
#   the image stays consistent;
# - attribute storage fclabel did not make: blocks shared kernel-style by two inodes (label and
#   user.*; label only), values in an EA inode (ea_inode: left as it is);
# - how a raw image is written (a copy renamed over it, or in place) and when: the same bytes
#   every way.
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/imglib.sh"
need_image_tools
start=$(date +%s)
cd "$OUT" || exit 1

small_tree tree
small_policy fc

mkimg base.img tree 8M -t ext4 -I 256 || finish
fsck_clean base.img "the base image"

# refuse WHAT IMG [label options]: exit 2, a message naming the image, no summary, image unchanged
refuse() {
	_what=$1 _img=$2
	shift 2
	cp "$_img" "$OUT/copy.img" 2>/dev/null || : >"$OUT/copy.img"
	run refuse "$FCLABEL" label "$_img" -S "$OUT/fc" "$@"
	expect_rc "$_what: label refused" 2
	expect_match "$_what: the message names the image" "$(cat "$OUT/refuse.err")" "*$_img*"
	expect_eq "$_what: no summary line" "$(grep -c 'scanned' "$OUT/refuse.out")" 0
	if [ -e "$_img" ] && [ ! -d "$_img" ]; then
		if cmp -s "$_img" "$OUT/copy.img"; then ok "$_what: image unchanged"
		else bad "$_what: the refused image changed"; fi
	fi
	# libext2fs errors must read as words, not as com_err's "Unknown code ext2 NN"
	case $(cat "$OUT/refuse.err") in
	*"Unknown code"*) bad "$_what: the reason is an unregistered error code: $(head -n 1 "$OUT/refuse.err")" ;;
	*) ok "$_what: the reason is readable" ;;
	esac
	echo "     ($(head -n 1 "$OUT/refuse.err"))"
}

# ---- superblock states ----------------------------------------------------------------------
# error flag (state = valid + errors), not cleanly unmounted (state 0), journal needing recovery
cp base.img errors.img && debugfs -w -R 'ssv state 3' errors.img >/dev/null 2>&1
cp base.img unclean.img && debugfs -w -R 'ssv state 0' unclean.img >/dev/null 2>&1
cp base.img recovery.img && debugfs -w -R 'feature needs_recovery' recovery.img >/dev/null 2>&1
expect_match "recipe: error flag set" "$(dumpe2fs -h errors.img 2>/dev/null | grep '^Filesystem state')" "*with errors*"
expect_match "recipe: not clean" "$(dumpe2fs -h unclean.img 2>/dev/null | grep '^Filesystem state')" "*not clean*"
expect_match "recipe: needs_recovery" "$(dumpe2fs -h recovery.img 2>/dev/null | grep '^Filesystem features')" "*needs_recovery*"
refuse "superblock error flag" errors.img
expect_match "error flag: the message says why" "$(cat refuse.err)" "*error*"
refuse "not cleanly unmounted" unclean.img
expect_match "not clean: the message says why" "$(cat refuse.err)" "*clean*"
# the flag, with nothing in the log: a mount clears it and goes on, and so does fclabel (after
# saying so); check and -n only warn
s=$(sum recovery.img)
run chk "$FCLABEL" check recovery.img -S fc
expect_rc "recovery: check reads it" 1
expect_match "recovery: check warns" "$(cat chk.err)" "*warning*recovery.img*recover*"
run dry "$FCLABEL" label recovery.img -S fc -n
expect_rc "recovery: label -n reads it" 0
expect_eq "recovery: check and -n wrote nothing" "$(sum recovery.img)" "$s"
cp --sparse=always recovery.img before.img
run rec "$FCLABEL" label recovery.img -S fc
expect_rc "recovery: label clears the flag and labels (a mount would recover nothing)" 0
expect_match "recovery: says so" "$(cat rec.err)" "*recovery.img*journal*nothing*"
expect_eq "recovery: the flag is off" \
	"$(dumpe2fs -h recovery.img 2>/dev/null | grep -c '^Filesystem features:.*needs_recovery')" 0
fsck_clean recovery.img "recovery: labeled"
verify --name "recovery" --before before.img --after recovery.img --fc fc --summary rec.out --sample 20 >verify.log
grep -v '^ok' verify.log

for k in errors unclean; do
	# check and -n read: they warn and work
	s=$(sum $k.img)
	run chk "$FCLABEL" check $k.img -S fc
	expect_rc "$k: check reads it" 1
	expect_match "$k: check warns" "$(cat chk.err)" "*warning*$k.img*"
	run dry "$FCLABEL" label $k.img -S fc -n
	expect_rc "$k: label -n reads it" 0
	expect_eq "$k: check and -n wrote nothing" "$(sum $k.img)" "$s"
	# --force labels it, and leaves the state as it found it
	state0=$(dumpe2fs -h $k.img 2>/dev/null | grep '^Filesystem state\|^Filesystem features')
	cp --sparse=always $k.img before.img
	run force "$FCLABEL" label $k.img -S fc --force
	expect_rc "$k: --force labels it" 0
	expect_match "$k: --force warns" "$(cat force.err)" "*$k.img*"
	verify --name "$k --force" --before before.img --after $k.img --fc fc --summary force.out --sample 20 >verify.log
	grep -v '^ok' verify.log
	expect_eq "$k: --force keeps the superblock state and features" \
		"$(dumpe2fs -h $k.img 2>/dev/null | grep '^Filesystem state\|^Filesystem features')" "$state0"
done

# ---- not an image ---------------------------------------------------------------------------
"$PY" -c 'import random, sys; r = random.Random(int(sys.argv[1])); sys.stdout.buffer.write(bytes(r.getrandbits(8) for _ in range(1 << 20)))' \
	"$FC_SEED" >random.img
refuse "random bytes" random.img
head -c 65536 base.img >truncated.img
refuse "an image cut to 64 KiB" truncated.img
: >empty.img
refuse "an empty file" empty.img
mkdir -p adir.img
# a directory is a tree to label (t_tree.sh); the image-only options are refused for it
refuse "a directory with -o" adir.img -o "$OUT/x.img"
refuse "a directory with -z" adir.img -z "$OUT/x.undo"
refuse "a missing file" "$OUT/no-such.img"
for f in random truncated empty; do
	run chk "$FCLABEL" check $f.img -S fc
	expect_rc "check on $f.img" 2
done
run chk "$FCLABEL" check "$OUT/no-such.img" -S fc
expect_rc "check on a missing file" 2

# ---- --json - : the report on stdout, the summary on stderr ----------------------------------
cp base.img js.img
run js "$FCLABEL" label js.img -S fc --json -
expect_rc "label --json -" 0
"$PY" -m json.tool js.out >/dev/null 2>&1 && ok "--json -: stdout is one JSON document" ||
	bad "--json -: stdout is not JSON: $(head -c 200 js.out)"
expect_match "--json -: the summary goes to stderr" "$(cat js.err)" "*fclabel label: js.img: scanned*"

# ---- bad command lines and policies ---------------------------------------------------------
cp base.img cl.img
s=$(sum cl.img)
run u1 "$FCLABEL" label cl.img
expect_rc "label without -S" 2
run u2 "$FCLABEL" label cl.img base.img -S fc
expect_rc "label with two images" 2
run u3 "$FCLABEL" label cl.img -S fc -a system
expect_rc "label -a with a relative path" 2
run u4 "$FCLABEL" label cl.img -S fc -e data
expect_rc "label -e with a relative path" 2
run u5 "$FCLABEL" label cl.img -S fc --no-such-option
expect_rc "label with an unknown option" 2
run u6 "$FCLABEL" label cl.img -S "$OUT/no-such-fc"
expect_rc "label with a missing file_contexts" 2
run u7 "$FCLABEL" label cl.img -S fc --json "$OUT/no-such-dir/report.json"
expect_rc "label --json into a missing directory" 2
run u8 "$FCLABEL" check cl.img -S fc --strict
expect_rc "check --strict (a label-only option)" 2
# duplicate specs (same regex, overlapping file types) are refused, as setfiles refuses them
printf '/data(/.*)?\tsystem_u:object_r:a_t:s0\n/data(/.*)?\tsystem_u:object_r:b_t:s0\n' >dup_diff
printf '/data(/.*)?\tsystem_u:object_r:a_t:s0\n/data(/.*)?\tsystem_u:object_r:a_t:s0\n' >dup_same
printf '/data/x\t--\tsystem_u:object_r:a_t:s0\n/data/x\tsystem_u:object_r:b_t:s0\n' >dup_typed
# (/data/.*: most files get a label; an image where most get none is not labeled as a success)
printf '/data\tsystem_u:object_r:d_t:s0\n/data/.*\tsystem_u:object_r:e_t:s0\n/data/x\t--\tsystem_u:object_r:a_t:s0\n/data/x\t-d\tsystem_u:object_r:b_t:s0\n' >nodup
for d in dup_diff dup_same dup_typed; do
	run dup "$FCLABEL" label cl.img -S "$d"
	expect_rc "policy $d refused" 2
	expect_match "policy $d: the message names the file" "$(cat dup.err)" "*$d*"
done
expect_eq "refused command lines and policies wrote nothing" "$(sum cl.img)" "$s"
run nodup "$FCLABEL" label cl.img -S nodup -a /data
expect_rc "same regex, disjoint file types: accepted" 0

# ---- read-only image file, unprivileged user ------------------------------------------------
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
	mkdir -p ro && chmod 755 ro && cp base.img ro/ro.img && chmod 444 ro/ro.img && chmod 644 fc
	asuser() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	s=$(sum ro/ro.img)
	run rochk asuser "$FCLABEL" check ro/ro.img -S fc
	expect_rc "check on a read-only image as uid 65534" 1
	expect_eq "check as uid 65534 lists what check as root lists" "$(cat rochk.out)" \
		"$("$FCLABEL" check base.img -S fc 2>/dev/null)"
	run rodry asuser "$FCLABEL" label ro/ro.img -S fc -n
	expect_rc "label -n on a read-only image as uid 65534" 0
	run rolab asuser "$FCLABEL" label ro/ro.img -S fc
	expect_rc "label on a read-only image as uid 65534 refused" 2
	expect_match "read-only: the message names the image" "$(cat rolab.err)" "*ro/ro.img*"
	expect_eq "read-only image unchanged" "$(sum ro/ro.img)" "$s"
else
	echo "note: not root (or no setpriv): the read-only image cases are not run"
	chmod 444 base.img 2>/dev/null
fi
# every entry of the fresh image is unlabeled: the tree, its root and lost+found
ntree=$(find tree | wc -l)
expect_eq "check lists every file of the fresh image" "$("$FCLABEL" check base.img -S fc 2>/dev/null | wc -l | tr -d ' ')" \
	$((ntree + 1))

# ---- damaged trees --------------------------------------------------------------------------
# a hard-linked directory making a loop, and an entry whose inode was cleared
cp base.img damaged.img
debugfs -w -R 'ln /data /data/sub/loop' damaged.img >/dev/null 2>&1
debugfs -w -R 'clri /data/f8' damaged.img >/dev/null 2>&1
run dmg timeout 60 "$FCLABEL" label damaged.img -S fc
[ "$rc" -lt 124 ] && ok "damaged tree: the walk ends (exit $rc)" || bad "damaged tree: exit $rc (timeout or crash)"
expect_match "damaged tree: the loop is reported" "$(cat dmg.err)" "*warning*/data/sub/loop*"
expect_match "damaged tree: the cleared inode is reported" "$(cat dmg.err)" "*warning*/data/f8*"
expect_match "damaged tree: two warnings counted" "$(cat dmg.err)" "*warnings 2,*"
for p in /data/f1 /data/f2 /data/sub/x /etc/passwd; do
	w=$("$FCLABEL" lookup -S fc -m f "$p")
	expect_match "damaged tree: $p labeled" "$(debugfs -R "ea_get $p security.selinux" damaged.img 2>/dev/null)" "*\"$w\\\\000\"*"
done

# ---- a label too long for any attribute space -----------------------------------------------
long=$("$PY" -c 'print("x" * 1100)')
printf '/.*\tsystem_u:object_r:default_t:s0\n/data/f3\t--\tsystem_u:object_r:%s_t:s0\n' "$long" >fc_long
for isz in 128 256; do
	mkimg long$isz.img tree 8M -t ext4 -b 1024 -I $isz || continue
	run long "$FCLABEL" label long$isz.img -S fc_long
	expect_rc "a 1,100-byte label, 1 KiB blocks, $isz-byte inodes: that file fails" 1
	expect_match "too long ($isz): the file is named" "$(cat long.err)" "*/data/f3*"
	expect_match "too long ($isz): the reason is given" "$(tail -c 200 long.err)" "*_t:s0*: ?*"
	expect_match "too long ($isz): the others are labeled" "$(cat long.err)" "*changed $ntree,*errors 1,*"
	fsck_clean long$isz.img "too long ($isz)"
done

# ---- attribute storage fclabel did not make --------------------------------------------------
# two inodes sharing one attribute block (as the kernel shares identical ones), holding a label
# and user.x, and two sharing a label-only block; built on a copy made without metadata_csum
# (no block checksum to forge): inode b is pointed at a's block, whose h_refcount becomes 2.
mkdir -p tree2
for f in a b c d; do echo $f >tree2/$f; done
ok_x=1
"$PY" -c 'import os, sys
for f in "ab":
    os.setxattr(sys.argv[1] + "/" + f, "user.x", b"1")
    os.setxattr(sys.argv[1] + "/" + f, "security.selinux", b"system_u:object_r:old_t:s0\0")
for f in "cd":
    os.setxattr(sys.argv[1] + "/" + f, "security.selinux", b"system_u:object_r:old_t:s0\0")' tree2 ||
	ok_x=0
if [ $ok_x = 1 ] && mkimg shared.img tree2 8M -t ext4 -I 128 -O ^metadata_csum -b 1024; then
	share() { # share FROM TO: point TO at FROM's attribute block, free TO's, refcount 2
		_a=$(debugfs -R "stat /$1" shared.img 2>/dev/null | sed -n 's/^File ACL: \([0-9]*\).*/\1/p')
		_b=$(debugfs -R "stat /$2" shared.img 2>/dev/null | sed -n 's/^File ACL: \([0-9]*\).*/\1/p')
		debugfs -w -R "sif /$2 file_acl $_a" shared.img >/dev/null 2>&1
		debugfs -w -R "freeb $_b" shared.img >/dev/null 2>&1
		"$PY" -c 'import struct, sys
f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2]) * 1024 + 4); f.write(struct.pack("<I", 2))' shared.img "$_a"
	}
	share a b
	share c d
	e2fsck -fy shared.img >/dev/null 2>&1 # the free counts debugfs freeb leaves behind
	fsck_clean shared.img "recipe: shared attribute blocks"
	expect_eq "recipe: a and b share a block" "$(debugfs -R 'stat /a' shared.img 2>/dev/null | grep 'File ACL')" \
		"$(debugfs -R 'stat /b' shared.img 2>/dev/null | grep 'File ACL')"
	printf '/.*\tsystem_u:object_r:default_t:s0\n/[ac]\tsystem_u:object_r:first_t:s0\n' >fc_sh
	cp shared.img before.img
	run sh1 "$FCLABEL" label shared.img -S fc_sh
	expect_rc "shared blocks: label" 0
	fsck_clean shared.img "shared blocks, labeled"
	verify --name "shared blocks" --before before.img --after shared.img --fc fc_sh --summary sh1.out
fi

# values in an EA inode (ea_inode): debugfs ea_set of a big user.big
mkimg eainode.img tree 16M -t ext4 -I 256 -O ea_inode || finish
"$PY" -c 'import sys; sys.stdout.write("v" * 6000)' >bigval
debugfs -w -R 'ea_set -f bigval /data/f1 user.big' eainode.img >/dev/null 2>&1
e2fsck -fy eainode.img >/dev/null 2>&1 # debugfs 1.47.0 leaves i_blocks short
if debugfs -R 'ea_list /data/f1' eainode.img 2>/dev/null | grep -q 'user.big'; then
	fsck_clean eainode.img "recipe: ea_inode"
	cp eainode.img before.img
	# an inode with a value in an EA inode is left as it is (a rewrite of its attributes
	# through libext2fs can change what e2fsck checks of them: issue 24), the others labeled
	run ea "$FCLABEL" label eainode.img -S fc
	expect_rc "ea_inode: label (one file left as it is)" 1
	expect_match "ea_inode: says which and why" "$(cat ea.err)" \
		"*/data/f1: cannot write*attribute values stored in EA inodes*left as it is*"
	fsck_clean eainode.img "ea_inode, labeled"
	"$FCLABEL" check eainode.img -S fc >ea.check 2>&1
	expect_eq "ea_inode: only /data/f1 is left unlabeled" "$(cut -f1 ea.check | grep -v '^fclabel')" "/data/f1"
	# (debugfs stores one block of the file: a value only an EA inode can hold)
	rm -f got0 got
	debugfs -R 'ea_get -f got0 /data/f1 user.big' before.img >/dev/null 2>&1
	debugfs -R 'ea_get -f got /data/f1 user.big' eainode.img >/dev/null 2>&1
	if [ -s got0 ] && cmp -s got got0; then ok "ea_inode: user.big ($(wc -c <got0 | tr -d ' ') bytes) reads back unchanged"
	else bad "ea_inode: user.big changed"; fi
else
	echo "note: debugfs cannot make an ea_inode attribute here; that case is not run"
fi

# How a raw image is written: a labeled copy renamed over it (default with 128-byte inodes,
# --atomic for any), or in place (--in-place, 256-byte inodes by default, hard-linked images,
# no room beside it). Every way gives the same bytes (but for the journal's: in place the labels
# pass through it, a copy is written whole).
ino() { stat -c %i "$1"; }
if mkimg w128.img tree 8M -t ext4 -I 128 && mkimg w256.img tree 8M -t ext4 -I 256; then
	for isz in 128 256; do
		cp w$isz.img ref$isz.img
		run ref$isz "$FCLABEL" label ref$isz.img -S fc --in-place
		expect_rc "$isz: --in-place" 0
		for how in "" --atomic; do
			cp w$isz.img a.img
			i0=$(ino a.img)
			run mode "$FCLABEL" label a.img -S fc $how
			expect_rc "$isz: label ${how:-(default)}" 0
			same_fs a.img ref$isz.img && ok "$isz ${how:-(default)}: the same bytes as in place" ||
				bad "$isz ${how:-(default)}: differs from the image labeled in place"
			if [ "$isz" = 128 ] || [ -n "$how" ]; then want=replaced; else want="in place"; fi
			[ "$(ino a.img)" != "$i0" ] && got=replaced || got="in place"
			expect_eq "$isz ${how:-(default)}: written $want" "$got" "$want"
		done
		fsck_clean a.img "$isz --atomic"
	done
	# -z with a renamed copy: e2undo still gives the original back
	if command -v e2undo >/dev/null; then
		cp w128.img u.img
		rm -f u.undo
		run undo "$FCLABEL" label u.img -S fc -z u.undo
		expect_rc "128 -z: label" 0
		same_fs u.img ref128.img && ok "128 -z: labeled" || bad "128 -z: not labeled as in place"
		e2undo u.undo u.img >/dev/null 2>&1
		expect_eq "128 -z: e2undo succeeds" "$?" 0
		cmp -s u.img w128.img && ok "128 -z: e2undo restores the original" || bad "128 -z: not restored"
	fi
	# a hard-linked 128-byte image: written in place (both names see it), with a warning
	cp w128.img h.img && ln -f h.img h2.img
	run hard "$FCLABEL" label h.img -S fc
	expect_rc "hard-linked 128: label" 0
	cmp -s h2.img ref128.img && ok "hard-linked 128: the other name sees the labels" ||
		bad "hard-linked 128: the other name does not see the labels"
	expect_match "hard-linked 128: a warning says why" "$(cat "$OUT/hard.err")" "*hard links: written in place*"
	rm -f h2.img
	# -o keeps the input's mode, and its owner where it can (root), as the copy renamed over the
	# image keeps them: a new OUT and one that exists, raw and sparse (it wrote 0600)
	modes() { stat -c '%a %u:%g' "$1"; }
	cp w256.img m.img && chmod 0644 m.img
	[ "$(id -u)" = 0 ] && chown 1234:2345 m.img
	want_m=$(modes m.img)
	rm -f mo.img
	run omode "$FCLABEL" label m.img -S fc -o mo.img
	expect_rc "-o: label" 0
	expect_eq "-o (a new file): the input's mode and owner" "$(modes mo.img)" "$want_m"
	: >mo.img && chmod 0600 mo.img
	run omode "$FCLABEL" label m.img -S fc -o mo.img
	expect_eq "-o (over a file): the input's mode and owner" "$(modes mo.img)" "$want_m"
	cp m.img ma.img && chmod 0644 ma.img
	[ "$(id -u)" = 0 ] && chown 1234:2345 ma.img
	run omode "$FCLABEL" label ma.img -S fc --atomic
	expect_eq "--atomic: the image keeps its mode and owner" "$(modes ma.img)" "$want_m"
	img2simg w256.img ms.img && chmod 0644 ms.img
	[ "$(id -u)" = 0 ] && chown 1234:2345 ms.img
	rm -f mso.img
	run omode "$FCLABEL" label ms.img -S fc -o mso.img
	expect_rc "-o, sparse: label" 0
	expect_eq "-o, sparse: the input's mode and owner" "$(modes mso.img)" "$want_m"
	# no room beside it (an immutable directory lets nothing be created): --atomic refuses and
	# changes nothing; the default writes in place with a warning
	mkdir -p imm && cp w128.img imm/i.img
	if chattr +i imm 2>/dev/null; then
		run imm1 "$FCLABEL" label imm/i.img -S fc --atomic
		expect_rc "no room: --atomic refused" 2
		cmp -s imm/i.img w128.img && ok "no room: --atomic changed nothing" || bad "no room: --atomic changed the image"
		run imm2 "$FCLABEL" label imm/i.img -S fc
		expect_rc "no room: the default writes in place" 0
		expect_match "no room: a warning says why" "$(cat "$OUT/imm2.err")" "*no labeled copy can be made*"
		same_fs imm/i.img ref128.img && ok "no room: labeled in place" || bad "no room: not labeled as in place"
		chattr -i imm
	else
		echo "note: chattr +i does not work here; the no-room case is not run"
	fi
	# block devices are written in place; sparse images are always replaced
	run opts1 "$FCLABEL" label w128.img -S fc --atomic --in-place -o x.img
	expect_rc "-o with --in-place: refused" 2
fi

echo "t_image_formats: $(($(date +%s) - start)) s"
finish
