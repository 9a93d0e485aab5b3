#!/bin/sh
# The device's walks, completed (issue 31): what --as-device follows beyond init's boot walk and
# installd's lazy check, on a small phone's /data (tests/devdatalib.sh), read back with debugfs.
# Each case is what Android's own code does, read in it (InstalldNativeService.cpp,
# libselinux's android_device.c, vold's FsCrypt.cpp; fclabel-label(1), AS THE DEVICE):
#  (p) installd restorecons /data/misc/profiles/cur/N/PKG (not recursive) at every boot and
#      unlock, for each package it prepares, whatever the digests above say: a wrong label there
#      is set right below matching digests; one of a package packages.list does not know, and
#      the files below, keep theirs (the boot walk, with --ignore-digests, relabels all three);
#  (i) a package directory whose own label is right but which carries user.restorecon_in_progress
#      (a one-byte true: installd's mark of a relabel that did not end) is relabeled whole; a
#      false byte, or a value of another length, is no mark (installd reads exactly one byte);
#      check without --as-device counts the level it clears as one the device does not keep;
#      the same on a live tree;
#  (v) vold's unlock walk of /data/system_ce/N (vendor_ce, misc_ce): a CE user directory whose
#      digest is missing is walked, its wrong label below set right and its digest written, the
#      full label's (t_userdata compares every such digest with libselinux's);
#  (d) release_selinux_data_data_ignore: --data-data-ignore, or the device's
#      /system/etc/build_flags.json (either form: Android 14's make, the release-config tool's)
#      with --android-root, makes /data/data digested and not entered: its package directories
#      get no digest, their labels are the same; =no, or a file saying false, or none, or one
#      that is not JSON (a warning), leave the default.
. "$TOP/tests/imglib.sh"
. "$TOP/tests/relabellib.sh"
. "$TOP/tests/devdatalib.sh"
rl_need
cd "$OUT" || exit 1
F=$FCLABEL
D=$OUT/d
dd_build "$D"
cd "$D" || exit 1
A=$DD_APP
dev() { # IMG NAME [OPTIONS...]: label --as-device, output in NAME.out, report in NAME.json
	_img=$1 _nm=$2
	shift 2
	"$F" label "$_img" -a /data -S "$DD_FC" --seapp "$DD_SEAPP" --as-device --json "$_nm.json" "$@" \
		>"$_nm.out" 2>&1
}
label_of() { awk -F'\t' -v p="$2" '$1 == p { print $2 }' "$1"; }
grep -q "^/misc/profiles/cur/0/$A	" P.dig && ! grep -q "^/misc/profiles/cur/0/$A	-" P.dig ||
	bad "the profile directory has no digest: the case below would not be one"

# ---- (p) profiles ---------------------------------------------------------------------------------------
cp --sparse=always P.img p0.img
dd_setl p0.img "/misc/profiles/cur/0/$A" u:object_r:system_data_file:s0
dd_setl p0.img "/misc/profiles/cur/0/$A/primary.prof" u:object_r:system_data_file:s0
dd_setl p0.img /misc/profiles/cur/0/com.example.gone u:object_r:system_data_file:s0
rl_dump p0.img manifest p0.dump
cp --sparse=always p0.img p.img
dev p.img p
expect_eq "(p) --as-device: exit 0" "$?" 0
rl_dump p.img manifest p.dump
rl_digests p.img dirs p.dig
expect_eq "(p) only the profile directory of a known package changes, below matching digests" \
	"$(dd_differ p0.dump p.dump)" "/misc/profiles/cur/0/$A "
expect_eq "(p) ... to the full label's" "$(label_of p.dump "/misc/profiles/cur/0/$A")" \
	"$(label_of L.dump "/misc/profiles/cur/0/$A")"
expect_eq "(p) no digest changes" "$(dd_differ P.dig p.dig)" ""
"$F" check p0.img -a /data -S "$DD_FC" --seapp "$DD_SEAPP" --as-device >pc.list 2>pc.err
expect_eq "(p) check --as-device lists it, exit 1" "$?:$(cut -f1 pc.list | tr '\n' ' ')" \
	"1:/data/misc/profiles/cur/0/$A "
cp --sparse=always p0.img pi.img
dev pi.img pi --ignore-digests
rl_dump pi.img manifest pi.dump
expect_eq "(p) --ignore-digests: the boot walk relabels all three (and strips the levels it reaches)" \
	"$(dd_differ p0.dump pi.dump)" \
	"$(printf '%s\n' "/misc/profiles/cur/0/$A" "/misc/profiles/cur/0/$A/primary.prof" \
		/misc/profiles/cur/0/com.example.gone /media/0/Android/data/$A /user/10 | sort | tr '\n' ' ')"

# ---- (i) installd's restorecon_in_progress mark ------------------------------------------------------------
mark() { # IMG HEX: the mark on /data/data/APP
	dd_setx "$1" "/data/$A" user.restorecon_in_progress "$2"
}
cp --sparse=always P.img i0.img
mark i0.img 01
rl_dump i0.img manifest i0.dump
cp --sparse=always i0.img i.img
dev i.img i -v
expect_eq "(i) --as-device with the mark: exit 0" "$?" 0
rl_dump i.img manifest i.dump
expect_eq "(i) the package is relabeled whole though its own label is right: the level in it goes" \
	"$(dd_differ i0.dump i.dump)" "/data/$A/files/a "
expect_eq "(i) ... to the full label's; the other levels stay" "$(dd_differ L.dump i.dump)" \
	"$(printf '%s\n' /media/0/Android/data/$A /user/10 | sort | tr '\n' ' ')"
grep -q "relabeling what is below it: /data/data/$A (it carries user.restorecon_in_progress)" i.out &&
	ok "(i) -v says why" || bad "(i) -v: $(grep 'below it' i.out)"
grep -q "package directories [0-9]* right (not entered), 1 wrong (relabeled whole; 1 of them marked user.restorecon_in_progress)" i.out &&
	ok "(i) counted as a wrong one, marked" ||
	bad "(i) summary: $(grep 'as the device' i.out)"
debugfs -R "ea_get -x /data/$A user.restorecon_in_progress" i.img 2>/dev/null | grep -q '01' &&
	ok "(i) the mark stays (fclabel removes no attribute; installd does, at the next unlock)" ||
	bad "(i) the mark is gone"
"$F" check i0.img -a /data -S "$DD_FC" --seapp "$DD_SEAPP" >ic.list 2>ic.err
grep -q "2 of the 3 difference(s) are levels the device keeps" ic.err &&
	ok "(i) check without --as-device: the level the mark clears is not one the device keeps" ||
	bad "(i) check: $(grep device ic.err)"
for v in 00 0101; do
	cp --sparse=always P.img i$v.img
	mark i$v.img $v
	s0=$(sum i$v.img)
	dev i$v.img i$v
	expect_eq "(i) a mark of $v is none: exit 0, the image as it was" "$?:$(sum i$v.img)" "0:$s0"
done
mkdir -p m
cp --sparse=always P.img it.img
if [ "$(id -u)" = 0 ] && mount -o loop it.img m 2>mount.err; then
	setfattr -n user.restorecon_in_progress -v 0x01 "m/data/$A" 2>sf.err
	"$F" label m -a /data -S "$DD_FC" --seapp "$DD_SEAPP" --as-device >it.out 2>&1
	rc=$?
	umount m
	expect_eq "(i) a live tree: exit 0" "$rc" 0
	rl_dump it.img manifest it.dump
	expect_eq "(i) a live tree: the image's labels" "$(dd_differ i.dump it.dump)" ""
else
	say "cannot loop-mount an image here ($(head -n 1 mount.err 2>/dev/null)): live tree not run"
fi

# ---- (v) vold's unlock walk ---------------------------------------------------------------------------------
# /system_ce/0 and /system_ce/0/backup without their digests (vold's walk stopped before writing
# them), a wrong label on backup/x: vold's walk goes there, sets it right and writes both
cp --sparse=always P.img v0.img
dd_rmx v0.img /system_ce/0 security.sehash
dd_rmx v0.img /system_ce/0/backup security.sehash
dd_setl v0.img /system_ce/0/backup/x u:object_r:app_data_file:s0
rl_dump v0.img manifest v0.dump
cp --sparse=always v0.img v.img
dev v.img v
expect_eq "(v) --as-device: exit 0" "$?" 0
rl_dump v.img manifest v.dump
rl_digests v.img dirs v.dig
expect_eq "(v) vold's walk sets the wrong label below the CE directory right, nothing else" \
	"$(dd_differ v0.dump v.dump)|$(label_of v.dump /system_ce/0/backup/x)" \
	"/system_ce/0/backup/x |$(label_of L.dump /system_ce/0/backup/x)"
expect_eq "(v) ... and writes their digests, the full label's" "$(dd_differ P.dig v.dig)" ""
expect_eq "(v) --json: the digests written" \
	"$(rl_jsonev v.json digest-changed | cut -f1 | sort | tr '\n' ' ')" "/data/system_ce/0 /data/system_ce/0/backup "
# only /system_ce/0's digest gone: vold's walk labels it and skips backup, whose digest matches,
# with what is below it (x keeps its wrong label, as on the device)
cp --sparse=always P.img w0.img
dd_rmx w0.img /system_ce/0 security.sehash
dd_setl w0.img /system_ce/0/backup/x u:object_r:app_data_file:s0
rl_dump w0.img manifest w0.dump
cp --sparse=always w0.img w.img
dev w.img w
rl_dump w.img manifest w.dump
rl_digests w.img dirs w.dig
expect_eq "(v) a matching digest below stops vold's walk: nothing relabeled, the one digest written" \
	"$(dd_differ w0.dump w.dump)|$(dd_differ P.dig w.dig)|$(rl_jsonev w.json skipped-by-digest | cut -f1 | grep system_ce)" \
	"||/data/system_ce/0/backup"
for p in /system_ce/0 /system_ce/0/backup /vendor_ce/0 /vendor_ce/0/facedata /misc_ce/0 /misc_ce/0/sdksandbox; do
	grep -q "^$p	[0-9a-f]\{40\}\$" L.dig || bad "(v) the full label wrote no digest on $p"
done
ok "(v) the full label digests what vold's walk visits"

# ---- (d) release_selinux_data_data_ignore ---------------------------------------------------------------------
pkgdig() { # DIG: the package directories of /data/data that have a digest, and /data/data's
	awk -F'\t' '$1 ~ /^\/data(\/[^\/]*)?$/ && $2 != "-" { print $1 }' "$1" | sort | tr '\n' ' '
}
expect_eq "(d) by default the boot walk digests /data/data's package directories" "$(pkgdig L.dig)" \
	"/data /data/$A /data/$DD_OLD "
cp --sparse=always un.img d1.img
"$F" label d1.img -a /data -S "$DD_FC" --seapp "$DD_SEAPP" --digests --data-data-ignore >d1.out 2>&1
expect_eq "(d) --data-data-ignore: exit 0" "$?" 0
rl_dump d1.img manifest d1.dump
rl_digests d1.img dirs d1.dig
expect_eq "(d) ... /data/data digested, its package directories not" "$(pkgdig d1.dig)" "/data "
expect_eq "(d) ... the labels the same" "$(dd_differ L.dump d1.dump)" ""
expect_eq "(d) ... no other digest differs" \
	"$(dd_differ L.dig d1.dig)" "/data/$A /data/$DD_OLD "
# the device's own files
ar() { # DIR: a device tree with the policy, and build_flags.json from stdin (none when empty)
	rm -rf "$1"
	mkdir -p "$1/system/etc/selinux" "$1/vendor/etc/selinux"
	cp "$DD_FC" "$1/system/etc/selinux/plat_file_contexts"
	cp "$DD_SEAPP" "$1/system/etc/selinux/plat_seapp_contexts"
	printf '/vendor(/.*)?\tu:object_r:vendor_file:s0\n' >"$1/vendor/etc/selinux/vendor_file_contexts"
	cat >"$1/system/etc/build_flags.json"
	[ -s "$1/system/etc/build_flags.json" ] || rm "$1/system/etc/build_flags.json"
}
aroot() { # NAME DIR [OPTIONS...]: label un.img as NAME.img with the device's policy
	_n=$1 _r=$2
	shift 2
	cp --sparse=always un.img "$_n.img"
	"$F" label "$_n.img" -a /data --android-root "$_r" --digests "$@" >"$_n.out" 2>&1
	echo $? >"$_n.rc"
	rl_digests "$_n.img" dirs "$_n.dig"
}
ar r14 <<'EOF'
{
"flags": [
  { "name": "RELEASE_A", "value": "", "set": "", "default": "", "declared": "build/release/build_flags.scl" },
  { "name": "RELEASE_SELINUX_DATA_DATA_IGNORE", "value": "true", "set": "build/release/trunk_staging.scl", "default": "", "declared": "build/release/build_flags.scl" }
]
}
EOF
aroot d2 r14
expect_eq "(d) --android-root, Android 14's build_flags.json saying true: exit 0, /data/data's packages undigested" \
	"$(cat d2.rc):$(pkgdig d2.dig)" "0:/data "
grep -q "^fclabel label: the device's boot walk labels, and does not enter, /data/data (RELEASE_SELINUX_DATA_DATA_IGNORE true in r14/system/etc/build_flags.json)" d2.out &&
	ok "(d) ... saying so, and where it read it" || bad "(d) ... $(grep data_data d2.out; grep DATA_DATA d2.out)"
aroot d3 r14 --data-data-ignore=no
expect_eq "(d) --data-data-ignore=no wins over the file" "$(cat d3.rc):$(pkgdig d3.dig)" \
	"0:/data /data/$A /data/$DD_OLD "
ar r15 <<'EOF'
{"flags":[{"flag_declaration":{"name":"RELEASE_SELINUX_DATA_DATA_IGNORE","namespace":"android_UNKNOWN","description":"Ignore /data/data relabelling in libselinux.","value":{"Val":{"BoolValue":true}},"workflow":1,"containers":["product","system","system_ext","vendor"]},"value":{"Val":{"BoolValue":false}},"traces":[{"source":"build/release/flag_declarations/RELEASE_SELINUX_DATA_DATA_IGNORE.textproto","value":{"Val":{"BoolValue":false}}}]}]}
EOF
aroot d4 r15 -v
expect_eq "(d) the release-config tool's build_flags.json saying false (its default true): the default walk" \
	"$(cat d4.rc):$(pkgdig d4.dig)" "0:/data /data/$A /data/$DD_OLD "
grep -q "the device's boot walk enters /data/data (RELEASE_SELINUX_DATA_DATA_IGNORE false or not listed in r15/system/etc/build_flags.json)" d4.out &&
	ok "(d) ... -v says so" || bad "(d) -v: $(grep -i 'data/data' d4.out)"
sed 's/"BoolValue":false}},"traces"/"BoolValue":true}},"traces"/' r15/system/etc/build_flags.json | ar r15t
aroot d5 r15t
expect_eq "(d) ... saying true: /data/data's packages undigested" "$(cat d5.rc):$(pkgdig d5.dig)" "0:/data "
ar r0 </dev/null
aroot d6 r0
expect_eq "(d) no build_flags.json (before Android 14): the default" "$(cat d6.rc):$(pkgdig d6.dig)" \
	"0:/data /data/$A /data/$DD_OLD "
echo '{"flags": [' | ar rbad
aroot d7 rbad
expect_eq "(d) a build_flags.json that is not JSON: the default" "$(cat d7.rc):$(pkgdig d7.dig)" \
	"0:/data /data/$A /data/$DD_OLD "
grep -q "rbad/system/etc/build_flags.json: not the JSON a build writes" d7.out && ok "(d) ... and a warning" ||
	bad "(d) no warning: $(cat d7.out)"
# --as-device: /data/data's digest stale, its packages' gone: the boot walk enters it (and digests
# them) or, with the flag, only digests it
cp --sparse=always P.img d8.img
for p in / /data "/data/$A" "/data/$DD_OLD"; do dd_rmx d8.img "$p" security.sehash; done
cp --sparse=always d8.img d9.img
dev d8.img d8
dev d9.img d9 --data-data-ignore
rl_digests d8.img dirs d8.dig
rl_digests d9.img dirs d9.dig
expect_eq "(d) --as-device: the boot walk enters /data/data and digests its packages" "$(pkgdig d8.dig)" \
	"/data /data/$A /data/$DD_OLD "
expect_eq "(d) --as-device --data-data-ignore: it digests /data/data alone" "$(pkgdig d9.dig)" "/data "
finish
