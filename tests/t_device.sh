#!/bin/sh
# fclabel label --as-device: only what a device's own walks of its /data would do.
#
# A userdata tree (tests/gen_userdata.py: every kind of package, users 0 and 10, CE and DE, SDK
# sandbox data, system directories) plus /data/media/0/Android/data/com.x, made into an image and
# labeled with --seapp --digests (as a device would leave it), then given levels by hand (debugfs
# ea_set) where a device's own processes set them: the media directory of an app, /data/user/10
# and a file inside a package directory. Read back with debugfs, not with fclabel:
#  (a) the same policy: --as-device changes nothing, byte for byte (label and check), where the
#      full label strips the three levels; --ignore-digests strips the two init's walk reaches;
#  (b) a file_contexts edit of the line of /data/local/tmp (and a level set by hand on its parent
#      /data/local): only /data/local/tmp's subtree and its ancestors are walked (every other
#      directory of theirs is skipped by its digest, named in --json) and changed, each to what a
#      full label with the new policy gives, digests too; every other label (the hand-set levels
#      included) and digest is as it was; --strict gives the same image;
#  (c) a package directory and an SDK's directory whose own labels are wrong are relabeled whole
#      (and the levels set by hand inside them go), nothing else;
#  (d) on a never-labeled image --as-device equals the full label (--seapp --digests) byte for
#      byte, with 256-byte inodes, and with 128-byte ones and unknown packages;
#  (e) usage errors (exit 2, nothing written);
#  (f) the policy taken from a device tree (--android-root): (a) and (b) again, the same images;
#  (g) a mounted tree (root and loop devices): (a) and (b) again, the same labels and digests.
# A run that writes nothing does not sync the image either (FCLABEL_FAULT=count).
. "$TOP/tests/imglib.sh"
. "$TOP/tests/relabellib.sh"
rl_need
cd "$OUT" || exit 1
GEN=$TOP/tests/gen_userdata.py
FC=$TOP/fixtures/userdata/file_contexts
SEAPP=$TOP/fixtures/seapp/plat_seapp_contexts

# setl IMG PATH LABEL: a label set by hand (image paths)
setl() {
	debugfs -w -R "ea_set $2 security.selinux $3" "$1" >/dev/null 2>&1 || bad "debugfs ea_set $2 on $1"
}
# device IMG NAME [OPTIONS...]: label --as-device; output in NAME.out, report in NAME.json
device() {
	_img=$1 _nm=$2
	shift 2
	"$FCLABEL" label "$_img" -a /data -S "$FC" --seapp "$SEAPP" --as-device --json "$_nm.json" \
		"$@" >"$_nm.out" 2>&1
}
# jnum JSON FIELD: a number of the report's summary (fclabel-report(5)); FIELD a dotted path
jnum() {
	"$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))["summary"]
for k in sys.argv[2].split("."):
    d = d[k]
print(d)' "$1" "$2"
}
# jpaths JSON KIND: the paths of the KIND events, image paths, sorted
jpaths() {
	rl_jsonev "$1" "$2" | cut -f1 | sed 's|^/data$|/|; s|^/data/|/|' | sort
}
# differ DUMP1 DUMP2: the paths whose value differs, sorted
differ() { paste "$1" "$2" | awk -F'\t' '$2 != $4 { print $1 }' | sort; }

# build NAME ISIZE GEN-OPTIONS...: NAME/tree, NAME/manifest(.cmds), NAME/un.img, NAME/dirs
build() {
	_b=$OUT/$1 _is=$2
	shift 2
	mkdir -p "$_b"
	"$PY" "$GEN" tree "$_b/tree" "$_b" "$@" >/dev/null || { bad "gen_userdata.py tree $*"; finish; }
	mkdir -p "$_b/tree/media/0/Android/data/com.x/files"
	echo x >"$_b/tree/media/0/Android/data/com.x/files/f"
	printf 'd\t/media/0/Android\nd\t/media/0/Android/data\nd\t/media/0/Android/data/com.x\nd\t/media/0/Android/data/com.x/files\nf\t/media/0/Android/data/com.x/files/f\n' \
		>>"$_b/manifest"
	_n=$(wc -l <"$_b/manifest")
	mke2fs -q -t ext4 -I "$_is" -N $((_n + 512)) -d "$_b/tree" "$_b/un.img" 64M \
		>"$_b/mkfs.log" 2>&1 || { bad "mke2fs: $(tail -n 2 "$_b/mkfs.log")"; finish; }
	awk -F'\t' '{ print "testi " $2; print "ea_get " $2 " security.selinux" }' "$_b/manifest" >"$_b/manifest.cmds"
	awk -F'\t' '$1 == "d" { print $2 }' "$_b/manifest" >"$_b/dirs"
}

build w 256
W=$OUT/w
M=$W/manifest
# the package directories installd checks: CE and DE of each user, each SDK's directory
npkg=$(awk -F'\t' '$1 == "d" && ($2 ~ /^\/data\/[^\/]+$/ || $2 ~ /^\/user(_de)?\/[0-9]+\/[^\/]+$/ ||
	$2 ~ /^\/misc_(ce|de)\/[0-9]+\/sdksandbox\/[^\/]+\/[^\/]+$/)' "$M" | wc -l)
PKGA=$(awk -F'\t' '$2 ~ /^\/data\/com\.example\.untrusted34\.app00$/ { print $2 }' "$M")
PKGB=$(awk -F'\t' '$2 ~ /^\/data\/com\.example\.priv\.app01$/ { print $2 }' "$M")
SDK=$(awk -F'\t' '$2 ~ /^\/misc_de\/0\/sdksandbox\/[^\/]+\/shared$/ { print $2; exit }' "$M")
[ -n "$PKGA" ] && [ -n "$PKGB" ] && [ -n "$SDK" ] || { bad "the generated tree lacks the packages used here"; finish; }
say "tree: $(wc -l <"$M") entries, $npkg package directories; $PKGA, $PKGB, $SDK"

cp --sparse=always "$W/un.img" "$W/L.img"
"$FCLABEL" label "$W/L.img" -a /data -S "$FC" --seapp "$SEAPP" --digests >"$W/L.out" 2>&1
expect_eq "label --seapp --digests exit" "$?" 0
grep -q 'withheld 0 ' "$W/L.out" || bad "the full label withheld digests: $(grep digests "$W/L.out")"
rl_dump "$W/L.img" "$M" "$W/L.dump"
# the levels a device's own processes set, which its walks keep
cp --sparse=always "$W/L.img" "$W/A0.img"
setl "$W/A0.img" /media/0/Android/data/com.x u:object_r:media_rw_data_file:s0:c148,c256,c512,c768
setl "$W/A0.img" /user/10 u:object_r:system_data_file:s0:c522,c768
setl "$W/A0.img" "$PKGA/files/state.bin" u:object_r:app_data_file:s0:c210,c256,c512,c768
rl_dump "$W/A0.img" "$M" "$W/A0.dump"
rl_digests "$W/A0.img" "$W/dirs" "$W/A0.dig"
H=$(printf '%s\n' /media/0/Android/data/com.x "$PKGA/files/state.bin" /user/10 | sort | tr '\n' ' ')
expect_eq "the three levels are set" "$(differ "$W/L.dump" "$W/A0.dump" | tr '\n' ' ')" "$H"

# ---- (a) the same policy: nothing changes -----------------------------------------------------------
cd "$W" || exit 1
cp --sparse=always A0.img a.img
s0=$(sum a.img)
device a.img a
expect_eq "(a) label --as-device exit" "$?" 0
expect_eq "(a) the image is byte for byte as it was" "$(sum a.img)" "$s0"
expect_eq "(a) changed, digests written" "$(jnum a.json written) $(jnum a.json digests.written)" "0 0"
expect_eq "(a) /data skipped by its digest (and nothing else walked by init), vold's CE directories by theirs" \
	"$(jpaths a.json skipped-by-digest | tr '\n' ' ')$(jnum a.json as_device.dirs_skipped_by_digest)" \
	"/ /misc_ce/0 /system_ce/0 /vendor_ce/0 4"
expect_eq "(a) every package directory found right, none entered" \
	"$(jnum a.json as_device.packages_right) $(jnum a.json as_device.packages_wrong)" "$npkg 0"
# nothing written, so nothing to wait for: no write and no sync of the image (tracked.c counts)
FCLABEL_FAULT=count "$FCLABEL" label a.img -a /data -S "$FC" --seapp "$SEAPP" --as-device 2>&1 >/dev/null |
	sed -n 's/^fclabel: I\/O counts: //p' >a.io
expect_match "(a) no write, no sync: $(cat a.io)" "$(cat a.io)" "read=[1-9]* write=0 flush=0 *"
"$FCLABEL" check a.img -a /data -S "$FC" --seapp "$SEAPP" --as-device >a.check 2>a.check.err
expect_eq "(a) check --as-device: exit 0, nothing listed" "$?:$(cat a.check)" "0:"
# the full label is what strips them
cp --sparse=always A0.img full.img
"$FCLABEL" label full.img -a /data -S "$FC" --seapp "$SEAPP" --digests --full-label >full.out 2>&1
rl_dump full.img "$M" full.dump
expect_eq "(a) ... where the full label strips the three levels" \
	"$(differ A0.dump full.dump | tr '\n' ' ')" "$H"
cp --sparse=always A0.img ig.img
device ig.img ig --ignore-digests
rl_dump ig.img "$M" ig.dump
expect_eq "(a) --ignore-digests: init's walk strips the two it reaches, installd's lazy check keeps the package's" \
	"$(differ A0.dump ig.dump | tr '\n' ' ')$(jnum ig.json digests.written)" "/media/0/Android/data/com.x /user/10 0"

# ---- (b) a policy edit reaching one directory ---------------------------------------------------------
sed 's|^\(/data/local/tmp(/\.\*)?[	 ]*u:object_r:\)shell_data_file|\1shell_tmp_file|' "$FC" >fc2
cmp -s "$FC" fc2 && bad "(b) the edit did not apply"
cp --sparse=always A0.img B0.img
setl B0.img /local u:object_r:system_data_file:s0:c5
rl_dump B0.img "$M" B0.dump
cp --sparse=always B0.img b.img
"$FCLABEL" label b.img -a /data -S fc2 --seapp "$SEAPP" --as-device --json b.json >b.out 2>&1
expect_eq "(b) label --as-device with the edited policy exit" "$?" 0
"$PY" -c 'import json, sys; json.load(open(sys.argv[1]))' b.json || bad "(b) --json is not JSON"
rl_dump b.img "$M" b.dump
rl_digests b.img dirs b.dig
cp --sparse=always un.img full2.img
"$FCLABEL" label full2.img -a /data -S fc2 --seapp "$SEAPP" --digests >full2.out 2>&1
rl_dump full2.img "$M" full2.dump
rl_digests full2.img dirs full2.dig
path="/ /local /local/tmp"
sub="/local /local/tmp /local/tmp/shell.sh"
expect_eq "(b) changed: the subtree and the ancestor with a level, nothing else (the image)" \
	"$(differ B0.dump b.dump | tr '\n' ' ')" "$sub "
expect_eq "(b) changed: the same in --json" "$(jpaths b.json changed | tr '\n' ' ')" "$sub "
expect_eq "(b) ... each to the full label's" \
	"$(differ b.dump full2.dump | grep -c '^/local')" 0
expect_eq "(b) digests written on the ancestors and the subtree, nothing else" \
	"$(differ A0.dig b.dig | tr '\n' ' ')" "$path "
expect_eq "(b) ... the full label's" "$(paste b.dig full2.dig | awk -F'\t' '$2 != $4 && ($1 == "/" || $1 ~ /^\/local/)' | wc -l)" 0
# every other directory of theirs skipped by its digest, and only those
awk -F'\t' '$1 == "d" { p = $2; d = p; sub(/\/[^\/]*$/, "", d); if (d == "") d = "/"
	if ((d == "/" || d == "/local") && p != "/" && p != "/local" && p != "/local/tmp") print p
	else if (p ~ /^\/(system|vendor|misc)_ce\/[^\/]+$/) print p }' "$M" |
	sort >b.skip.want
jpaths b.json skipped-by-digest >b.skip.got
if cmp -s b.skip.got b.skip.want; then
	ok "(b) the $(wc -l <b.skip.want) other directories of /data and /data/local, and vold's, skipped by their digests"
else
	bad "(b) skipped by digest (< got, > want):"
	diff b.skip.got b.skip.want | head -n 6
fi
# visited: in (a) the entries of /data were looked at (to reach the package directories), here
# they are walked; besides, exactly what is below /data/local
nb=$(awk -F'\t' 'index($2, "/local/") == 1' "$M" | wc -l)
expect_eq "(b) visited: what (a) visited and the $nb entries below /data/local" \
	"$(jnum b.json scanned)" "$(($(jnum a.json scanned) + nb))"
cp --sparse=always B0.img bio.img
FCLABEL_FAULT=count "$FCLABEL" label bio.img -a /data -S fc2 --seapp "$SEAPP" --as-device 2>&1 >/dev/null |
	sed -n 's/^fclabel: I\/O counts: //p' >b.io
expect_match "(b) what was written is synced: $(cat b.io)" "$(cat b.io)" "read=* write=[1-9]* flush=[1-9]*"
cp --sparse=always B0.img bs.img
"$FCLABEL" label bs.img -a /data -S fc2 --seapp "$SEAPP" --as-device --strict >bs.out 2>&1
cmp -s bs.img b.img && ok "(b) --strict: the same image" || bad "(b) --strict gives another image"
fsck_clean b.img "(b)"

# ---- (c) a package directory whose own label is wrong -------------------------------------------------
cp --sparse=always A0.img C0.img
setl C0.img "$PKGB" u:object_r:system_data_file:s0
setl C0.img "$PKGB/files/state.bin" u:object_r:privapp_data_file:s0:c7
setl C0.img "$SDK" u:object_r:system_data_file:s0
setl C0.img "$SDK/s.dat" u:object_r:sdk_sandbox_data_file:s0:c9
rl_dump C0.img "$M" C0.dump
cp --sparse=always C0.img c.img
device c.img c
expect_eq "(c) label --as-device exit" "$?" 0
rl_dump c.img "$M" c.dump
awk -F'\t' -v a="$PKGB" -v b="$SDK" '$1 == a || index($1, a "/") == 1 || $1 == b || index($1, b "/") == 1 { print $1 }' \
	C0.dump | sort >c.sub
cnt=$(wc -l <c.sub)
expect_eq "(c) only the two trees change" "$(differ C0.dump c.dump | awk 'FILENAME == ARGV[1] { s[$1] = 1; next } !($1 in s)' c.sub - | wc -l)" 0
expect_eq "(c) both relabeled whole, as the full label labels them ($cnt paths)" \
	"$(differ c.dump L.dump | awk 'FILENAME == ARGV[1] { s[$1] = 1; next } ($1 in s)' c.sub - | wc -l)" 0
expect_eq "(c) the levels set by hand elsewhere stay" "$(differ c.dump L.dump | tr '\n' ' ')" "$H"
expect_eq "(c) --json: the two package directories found wrong" \
	"$(jpaths c.json package-wrong | tr '\n' ' ')$(jnum c.json as_device.packages_wrong)" \
	"$(printf '%s\n%s\n' "$PKGB" "/misc_de${SDK#/misc_de}" | sort | tr '\n' ' ')2"

# ---- (d) a never-labeled image: the full label --------------------------------------------------------
cp --sparse=always un.img d.img
device d.img d
expect_eq "(d) label --as-device on a never-labeled image exit" "$?" 0
cmp -s d.img L.img && ok "(d) equals the full label byte for byte" ||
	bad "(d) differs from the full label: $(rl_dump d.img "$M" d.dump; differ d.dump L.dump | head -n 3 | tr '\n' ' ')"
cd "$OUT" || exit 1
build u 128 --unknown --failed
cd "$OUT/u" || exit 1
cp --sparse=always un.img L.img
cp --sparse=always un.img d.img
"$FCLABEL" label L.img -a /data -S "$FC" --seapp "$SEAPP" --digests >L.out 2>&1
device d.img d
grep -q 'withheld [1-9]' d.out && cmp -s d.img L.img &&
	ok "(d) so with 128-byte inodes, unknown packages and digests withheld" ||
	bad "(d) 128-byte inodes, unknown packages: $(cmp d.img L.img 2>&1), $(grep digests d.out)"
cd "$W" || exit 1

# ---- (e) usage errors -----------------------------------------------------------------------------------
cp --sparse=always A0.img e.img
s0=$(sum e.img)
usage() { # WHAT WANT-IN-STDERR CMD...
	_w=$1 _m=$2
	shift 2
	"$@" >e.out 2>e.err
	_rc=$?
	[ "$_rc" -eq 2 ] && grep -q -- "$_m" e.err && ok "$_w: exit 2, $(head -n 1 e.err)" ||
		bad "$_w: exit $_rc, $(head -n 1 e.err)"
}
usage "--as-device -a /system" "give -a /data" "$FCLABEL" label e.img -a /system -S "$FC" --seapp "$SEAPP" --as-device
usage "--as-device without --seapp" "seapp_contexts" "$FCLABEL" label e.img -a /data -S "$FC" --as-device
usage "check --as-device without --seapp" "seapp_contexts" "$FCLABEL" check e.img -a /data -S "$FC" --as-device
usage "--ignore-digests alone" "goes with --as-device" "$FCLABEL" label e.img -a /data -S "$FC" --seapp "$SEAPP" --ignore-digests
usage "relabel --as-device" "for label and check" "$FCLABEL" relabel e.img -a /data --from "$FC" --to "$FC" --seapp "$SEAPP" --as-device
expect_eq "(e) nothing written" "$(sum e.img)" "$s0"

# ---- (f) the policy found as the device finds it (--android-root) ----------------------------------------
mkdir -p ar/system/etc/selinux ar/vendor/etc/selinux
cp "$FC" ar/system/etc/selinux/plat_file_contexts
cp "$SEAPP" ar/system/etc/selinux/plat_seapp_contexts
printf '/vendor(/.*)?\tu:object_r:vendor_file:s0\n' >ar/vendor/etc/selinux/vendor_file_contexts
cp --sparse=always A0.img g.img
"$FCLABEL" label g.img -a /data --android-root ar --as-device >g.out 2>&1
expect_eq "(f) --android-root ROOT --as-device, the same policy: exit 0, the image as it was" \
	"$?:$(sum g.img)" "0:$(sum A0.img)"
cp fc2 ar/system/etc/selinux/plat_file_contexts
cp --sparse=always B0.img g2.img
"$FCLABEL" label g2.img -a /data --android-root ar --as-device >g2.out 2>&1
cmp -s g2.img b.img && ok "(f) --android-root, the edited policy: the image of (b)" ||
	bad "(f) --android-root with the edited policy differs from (b): $(tail -n 3 g2.out | tr '\n' '|')"

# ---- (g) a mounted tree -----------------------------------------------------------------------------------
mkdir -p m
cp --sparse=always A0.img fa.img
if [ "$(id -u)" = 0 ] && mount -o loop fa.img m 2>mount.err; then
	"$FCLABEL" label m -a /data -S "$FC" --seapp "$SEAPP" --as-device --json fa.json >fa.out 2>&1
	rc=$?
	umount m
	expect_eq "(g) label DIR --as-device exit" "$rc" 0
	rl_dump fa.img "$M" fa.dump
	expect_eq "(g) the same policy: nothing changed" "$(jnum fa.json written):$(differ A0.dump fa.dump)" "0:"
	cp --sparse=always B0.img fb.img
	mount -o loop fb.img m
	"$FCLABEL" label m -a /data -S fc2 --seapp "$SEAPP" --as-device --json fb.json >fb.out 2>&1
	rc=$?
	umount m
	expect_eq "(g) label DIR --as-device, the edited policy, exit" "$rc" 0
	rl_dump fb.img "$M" fb.dump
	rl_digests fb.img dirs fb.dig
	cmp -s fb.dump b.dump && cmp -s fb.dig b.dig && ok "(g) the image's labels and digests" ||
		bad "(g) the mounted tree differs from the image: $(differ fb.dump b.dump | head -n 3 | tr '\n' ' ') $(differ fb.dig b.dig | head -n 3 | tr '\n' ' ')"
else
	say "(g) cannot loop-mount an image here ($(head -n 1 mount.err 2>/dev/null)): live tree not run"
fi
finish
