#!/bin/sh
# Android userdata images: fclabel label --seapp labels app data as a phone does.
#
# A tree shaped like a phone's /data (tests/gen_userdata.py: a few hundred packages of every kind:
# untrusted at twelve target SDKs, platform, privileged, media, named ones, the shared system,
# radio, shell, bluetooth, nfc, network_stack and secure_element uids; users 0 and 10; CE and DE
# directories; SDK sandbox data; the usual system directories) is made into an ext4 image with its
# own system/packages.list, labeled with fixtures/userdata/file_contexts and
# fixtures/seapp/plat_seapp_contexts, and read back with debugfs: every label must be the one the
# generator's table says a phone gives it (file_contexts' user and role, seapp's type and level),
# every digest the one libselinux 3.4 computes (tests/oracle -d) exactly on the directories
# Android's boot-time restorecon of /data digests, and none elsewhere; e2fsck -fn clean; a second
# run writes nothing; check --seapp --digests finds nothing.
# Then: packages packages.list does not know and a uid without a name (left as they are, counted,
# named with -v and --json, digests withheld above them) on a 128-byte-inode image; an encrypted
# directory (left unentered, counted); paths no file_contexts line matches; a relabel after a
# one-line seapp_contexts change (only that kind of app walked) and between Android 9's and 14's
# policies (../shared), each equal to a fresh label, digests included; bad seapp_contexts and
# packages.list files (exit 2, the file and line named, nothing written).
. "$TOP/tests/imglib.sh"
. "$TOP/tests/relabellib.sh"
rl_need
cd "$OUT" || exit 1
export PATH="$PATH:/usr/sbin:/sbin"
GEN=$TOP/tests/gen_userdata.py
FC=$TOP/fixtures/userdata/file_contexts
SEAPP=$TOP/fixtures/seapp/plat_seapp_contexts
need_oracle

# oracle_digests DIGESTS.TSV FC OUT: "PATH<TAB>WANT" for each directory: libselinux's digest
# where the generator says Android writes one ("yes"), "-" elsewhere ("no", "withheld")
oracle_digests() {
	awk -F'\t' '{ p = ($1 == "/") ? "/data" : "/data" $1; print "040755 " p }' "$1" >"$3.q"
	"$ORACLE" -d "$2" <"$3.q" >"$3.o" || { bad "oracle -d failed"; return; }
	paste "$1" "$3.o" | awk -F'\t' '{ print $1 "\t" (($2 == "yes" && $3 != "<<nodigest>>") ? $3 : "-") }' >"$3"
}

# build NAME ISIZE GEN-OPTIONS...: tree, image, expectations in $OUT/NAME
build() {
	_b=$OUT/$1 _is=$2
	shift 2
	mkdir -p "$_b"
	"$PY" "$GEN" tree "$_b/tree" "$_b" "$@" || { bad "gen_userdata.py tree $*"; finish; }
	_n=$(wc -l <"$_b/manifest")
	mke2fs -q -t ext4 -I "$_is" -N $((_n + 512)) -d "$_b/tree" "$_b/unlabeled.img" 64M \
		>"$_b/mkfs.log" 2>&1 || { bad "mke2fs: $(tail -n 2 "$_b/mkfs.log")"; finish; }
	awk -F'\t' '{ print "testi " $2; print "ea_get " $2 " security.selinux" }' "$_b/manifest" >"$_b/manifest.cmds"
	"$FCLABEL" lookup -S "$FC" --batch <"$_b/queries" >"$_b/fc.ans" ||
		{ bad "fclabel lookup --batch"; finish; }
	"$PY" "$GEN" compose "$_b/expect.tsv" "$_b/fc.ans" "$_b/want.dump" || { bad "compose"; finish; }
	"$PY" "$GEN" withheld "$_b/expect.tsv" "$_b/digests.tsv" "$_b/digests.want.tsv"
	awk -F'\t' '$1 == "d" { print $2 }' "$_b/manifest" >"$_b/dirs"
	oracle_digests "$_b/digests.want.tsv" "$FC" "$_b/digests.want"
}

# ---- A: a userdata image, every kind of package, 256-byte inodes --------------------------------
build a 256
A=$OUT/a
np=$(wc -l <"$A/packages.list")
say "A: $(wc -l <"$A/manifest") entries, $np packages, $(grep -c 'yes$' "$A/digests.tsv") directories init or vold digests"
[ "$np" -ge 250 ] || bad "A: only $np packages"
cp --sparse=always "$A/unlabeled.img" "$A/img"
"$FCLABEL" label "$A/img" -a /data -S "$FC" --seapp "$SEAPP" --digests --json "$A/label.json" \
	>"$A/label.out" 2>"$A/label.err"
expect_eq "A: label --seapp --digests exit" "$?" 0
cat "$A/label.out"
rl_dump "$A/img" "$A/manifest" "$A/got.dump"
if rl_cmp "$A/got.dump" "$A/want.dump" 10; then
	ok "A: every label is the one a phone gives ($(wc -l <"$A/want.dump") paths)"
else
	bad "A: labels differ from the expectations"
fi
# the table is not vacuous: app data got seapp's types at both users' levels
for pat in 'app_data_file:s0:c[0-9]*,c256,c512,c768' 'app_data_file:s0:c512,c768' \
	'app_data_file:s0:c[0-9]*,c25[67],c522,c768' 'privapp_data_file:s0:c512,c768' \
	'system_app_data_file:s0$' 'shell_data_file:s0$' 'sdk_sandbox_data_file:s0:c' \
	'sdk_sandbox_system_data_file' 'radio_data_file:s0$' 'bluetooth_data_file'; do
	grep -q "$pat" "$A/got.dump" && ok "A: some file is $pat" || bad "A: no file is $pat"
done
rl_digests "$A/img" "$A/dirs" "$A/digests.got"
if cmp -s "$A/digests.got" "$A/digests.want"; then
	ok "A: digests equal libselinux 3.4's on the $(grep -vc '	-$' "$A/digests.want") directories init digests, none elsewhere"
else
	bad "A: digests differ (< got, > want):"
	diff "$A/digests.got" "$A/digests.want" | head -n 8
fi
grep -q 'digests: written [1-9][0-9]*, unchanged 0, withheld 0' "$A/label.err" &&
	ok "A: digests written, none withheld" || bad "A: digest summary: $(grep digests "$A/label.err")"
grep -q ' 0 package directories not in packages.list, 0 whose seapp lookup fails' "$A/label.err" &&
	ok "A: every package known" || bad "A: summary: $(grep 'app data' "$A/label.err")"
fsck_clean "$A/img" "A"
s1=$(sum "$A/img")
# (the image carries digests now: a device's /data, as far as fclabel can tell; a pipeline that
# labels its own image again says --full-label)
"$FCLABEL" label "$A/img" -a /data -S "$FC" --seapp "$SEAPP" --digests --full-label >"$A/label2.out" 2>&1
expect_eq "A: second run exit" "$?" 0
grep -q 'changed 0,' "$A/label2.out" && grep -q 'digests: written 0,' "$A/label2.out" &&
	ok "A: a second run changes no label and no digest" || bad "A: second run: $(cat "$A/label2.out")"
expect_eq "A: a second run leaves the image byte for byte" "$(sum "$A/img")" "$s1"
"$FCLABEL" check "$A/img" -a /data -S "$FC" --seapp "$SEAPP" --digests >"$A/check.out" 2>"$A/check.err"
expect_eq "A: check --seapp --digests after label exit" "$?" 0
expect_eq "A: check lists nothing" "$(cat "$A/check.out")" ""
"$FCLABEL" check "$A/img" -a /data -S "$FC" >"$A/check-fc.out" 2>&1
[ "$?" -eq 1 ] && grep -q 'app_data_file' "$A/check-fc.out" &&
	ok "A: check without --seapp sees app data labels file_contexts does not give" ||
	bad "A: check without --seapp: $(tail -n 1 "$A/check-fc.out")"
# --packages FILE gives the same labels as the image's own packages.list
cp --sparse=always "$A/unlabeled.img" "$A/img2"
"$FCLABEL" label "$A/img2" -a /data -S "$FC" --seapp "$SEAPP" --packages "$A/packages.list" \
	--digests >/dev/null 2>&1
rl_dump "$A/img2" "$A/manifest" "$A/got2.dump"
cmp -s "$A/got2.dump" "$A/got.dump" && ok "A: --packages FILE labels as the image's own list" ||
	bad "A: --packages FILE gives other labels"
# lookup --seapp agrees with what label wrote, file for file
awk '{ print $0 }' "$A/queries" | "$FCLABEL" lookup -S "$FC" --seapp "$SEAPP" \
	--packages "$A/packages.list" --batch 2>/dev/null >"$A/lookup.ans"
paste "$A/want.dump" "$A/lookup.ans" | awk -F'\t' '$2 != "-" && $2 != $3 { n++; if (n < 4) print "    " $1 ": lookup " $3 ", label " $2 } END { exit n > 0 }' &&
	ok "A: lookup --seapp gives what label wrote" || bad "A: lookup --seapp disagrees with label"
# explain names the packages.list line and the seapp line
p=$(awk -F'\t' '$2 ~ /untrusted34\.app03\/files$/ { print "/data" $2; exit }' "$A/manifest")
"$FCLABEL" explain -S "$FC" --seapp "$SEAPP" --packages "$A/packages.list" "$p" >"$A/explain.out" 2>/dev/null
ln=$(grep -n 'minTargetSdkVersion=34 domain=untrusted_app ' "$SEAPP" | cut -d: -f1)
pl=$(grep -n '^com.example.untrusted34.app03 ' "$A/packages.list" | cut -d: -f1)
grep -q "seapp $SEAPP:$ln	" "$A/explain.out" && grep -q "packages.list line $pl " "$A/explain.out" &&
	ok "explain: the seapp_contexts line ($ln) and packages.list line ($pl)" ||
	bad "explain: $(cat "$A/explain.out")"

# ---- B: unknown packages, a uid without a name, 128-byte inodes ---------------------------------
build b 128 --unknown --failed
B=$OUT/b
cp --sparse=always "$B/unlabeled.img" "$B/img"
"$FCLABEL" label "$B/img" -a /data -S "$FC" --seapp "$SEAPP" --digests -v --json "$B/label.json" \
	>"$B/label.out" 2>"$B/label.err"
expect_eq "B: label exit (left alone is no error)" "$?" 0
rl_dump "$B/img" "$B/manifest" "$B/got.dump"
rl_cmp "$B/got.dump" "$B/want.dump" 10 && ok "B: labels as expected, unknown packages left as they are" ||
	bad "B: labels differ"
grep -q ' 8 package directories not in packages.list, 2 whose seapp lookup fails' "$B/label.err" &&
	ok "B: 8 unknown package directories and 2 failed lookups counted" ||
	bad "B: summary: $(grep 'app data' "$B/label.err")"
expect_eq "B: -v names each package directory left as it is" \
	"$(grep -c '^left as it is: /data/.*com\.example\.\(uninstalled\|gone\|nameless\)' "$B/label.out")" 10
expect_eq "B: --json: unknown-package events" "$(grep -c '"event": "unknown-package"' "$B/label.json")" 8
expect_eq "B: --json: seapp-failed events" "$(grep -c '"event": "seapp-failed"' "$B/label.json")" 2
grep -q '"unknown_packages": 8, "seapp_failed": 2' "$B/label.json" && ok "B: --json totals" ||
	bad "B: --json totals: $(grep unknown_packages "$B/label.json")"
rl_digests "$B/img" "$B/dirs" "$B/digests.got"
nw=$(grep -c 'withheld$' "$B/digests.want.tsv")
if cmp -s "$B/digests.got" "$B/digests.want"; then
	ok "B: digests equal libselinux's, and none on the $nw directories above a package left alone"
else
	bad "B: digests differ (< got, > want):"
	diff "$B/digests.got" "$B/digests.want" | head -n 8
fi
grep -q "withheld $nw " "$B/label.err" && ok "B: $nw digests withheld, and counted" ||
	bad "B: $(grep digests "$B/label.err")"
fsck_clean "$B/img" "B (128-byte inodes)"
s1=$(sum "$B/img")
"$FCLABEL" label "$B/img" -a /data -S "$FC" --seapp "$SEAPP" --digests >"$B/label2.out" 2>&1
expect_eq "B: a second run leaves the image byte for byte" "$(sum "$B/img")" "$s1"

# ---- C: an encrypted directory --------------------------------------------------------------------
C=$OUT/c
mkdir -p "$C/tree/misc_ce/0/x/y" "$C/tree/data" "$C/tree/system"
: >"$C/tree/misc_ce/0/x/y/f"
: >"$C/tree/system/packages.list"
if mke2fs -q -t ext4 -O encrypt -I 256 -d "$C/tree" "$C/img" 8M >"$C/mkfs.log" 2>&1; then
	# the encrypt flag (EXT4_ENCRYPT_FL, 0x800) on /misc_ce/0, beside the extents flag
	fl=$(debugfs -R "stat /misc_ce/0" "$C/img" 2>/dev/null | sed -n 's/.*Flags: \(0x[0-9a-f]*\).*/\1/p')
	debugfs -w -R "set_inode_field /misc_ce/0 flags $(printf '0x%x' $((fl | 0x800)))" "$C/img" >/dev/null 2>&1
	cp "$C/img" "$C/img0"
	"$FCLABEL" label "$C/img" -a /data -S "$FC" --seapp "$SEAPP" --digests --json "$C/label.json" \
		>"$C/label.out" 2>&1
	expect_eq "C: label exit" "$?" 0
	grep -q ', 1 encrypted directory (not entered)' "$C/label.out" &&
		ok "C: the encrypted directory is counted" || bad "C: $(grep 'app data' "$C/label.out")"
	printf 'd\t/misc_ce/0\nd\t/misc_ce/0/x\nf\t/misc_ce/0/x/y/f\nd\t/misc_ce\n' >"$C/manifest"
	awk -F'\t' '{ print "testi " $2; print "ea_get " $2 " security.selinux" }' "$C/manifest" >"$C/manifest.cmds"
	rl_dump "$C/img" "$C/manifest" "$C/got.dump"
	expect_eq "C: the encrypted directory's own label is written, nothing below it" \
		"$(cut -f2 "$C/got.dump" | tr '\n' ' ')" \
		"u:object_r:system_data_file:s0 - - u:object_r:system_userdir_file:s0 "
	grep -q '"event": "encrypted", "path": "/data/misc_ce/0"' "$C/label.json" &&
		ok "C: --json names it" || bad "C: no encrypted event in --json"
	printf '/misc_ce\n/\n' >"$C/dirs"
	rl_digests "$C/img" "$C/dirs" "$C/dig"
	expect_eq "C: no digest above a directory left to the device" "$(cut -f2 "$C/dig" | tr '\n' ' ')" "- - "
	# without --seapp the same
	cp "$C/img0" "$C/img"
	"$FCLABEL" label "$C/img" -a /data -S "$FC" >"$C/label-plain.out" 2>&1
	grep -q '1 encrypted directory labeled but not entered' "$C/label-plain.out" &&
		ok "C: without --seapp too" || bad "C: plain label: $(cat "$C/label-plain.out")"
	# the flag alone (with no encryption context, which debugfs cannot write) is a problem of
	# its own to e2fsck: labeling adds none
	e2fsck -fn "$C/img0" 2>&1 | grep -v '^e2fsck\|^Pass\|^/' >"$C/fsck0"
	e2fsck -fn "$C/img" 2>&1 | grep -v '^e2fsck\|^Pass\|^/' >"$C/fsck1"
	cmp -s "$C/fsck0" "$C/fsck1" && ok "C: e2fsck -fn finds nothing the flag did not cause" ||
		bad "C: e2fsck: $(diff "$C/fsck0" "$C/fsck1" | head -n 4 | tr '\n' '|')"
else
	say "C: mke2fs -O encrypt failed here: $(tail -n 1 "$C/mkfs.log"); encrypted case not run"
fi

# ---- D: no file_contexts match: left as it is, counted, named ------------------------------------
D=$OUT/d
grep -v '^/data(/\.\*)?\|^/data/(\.\*)?' "$FC" >"$D.fc"
cp --sparse=always "$A/unlabeled.img" "$D.img"
"$FCLABEL" label "$D.img" -a /data -S "$D.fc" --seapp "$SEAPP" -v --json "$D.json" >"$D.out" 2>&1
nm=$(grep -c '^left as it is: .*(no file_contexts line matches it)' "$D.out")
[ "$nm" -gt 1000 ] && ok "D: $nm paths with no match named with -v" || bad "D: only $nm named"
grep -q " $nm with no file_contexts match" "$D.out" && ok "D: and counted" || bad "D: $(grep 'app data' "$D.out")"
expect_eq "D: --json no-match events" "$(grep -c '"event": "no-match"' "$D.json")" "$nm"

# ---- E: relabel after a one-line seapp_contexts change ---------------------------------------------
E=$OUT/e
mkdir -p "$E"
sed 's/^\(user=_app minTargetSdkVersion=34 domain=untrusted_app type=app_data_file levelFrom=\)all/\1user/' \
	"$SEAPP" >"$E/plat_seapp_contexts"
cmp -s "$SEAPP" "$E/plat_seapp_contexts" && bad "E: the edit did not apply"
cp --sparse=always "$A/img" "$E/relabel.img"
"$FCLABEL" relabel "$E/relabel.img" -a /data --from "$FC" --to "$FC" --from-seapp "$SEAPP" \
	--seapp "$E/plat_seapp_contexts" --digests --full-label >"$E/relabel.out" 2>&1
expect_eq "E: relabel exit" "$?" 0
cp --sparse=always "$A/unlabeled.img" "$E/full.img"
"$FCLABEL" label "$E/full.img" -a /data -S "$FC" --seapp "$E/plat_seapp_contexts" --digests >/dev/null 2>&1
rl_dump "$E/relabel.img" "$A/manifest" "$E/relabel.dump"
rl_dump "$E/full.img" "$A/manifest" "$E/full.dump"
rl_cmp "$E/relabel.dump" "$E/full.dump" && ok "E: relabel equals a fresh label with the new seapp_contexts" ||
	bad "E: relabel differs from a fresh label"
rl_digests "$E/relabel.img" "$A/dirs" "$E/relabel.dig"
rl_digests "$E/full.img" "$A/dirs" "$E/full.dig"
cmp -s "$E/relabel.dig" "$E/full.dig" && ok "E: ... digests included" || bad "E: digests differ"
ch=$(rl_summary "$E/relabel.out" changed)
# untrusted34 and 35, 18 packages each, a third with user 10: (36 + 12) * 10 paths
expect_eq "E: only the files of apps targeting SDK 34 and up changed" "$ch" 480
en=$(sed -n 's/.*directories entered \([0-9]*\),.*/\1/p' "$E/relabel.out")
nd=$(wc -l <"$A/dirs")
[ "$en" -lt $((nd / 4)) ] && ok "E: entered $en of $nd directories" || bad "E: entered $en of $nd directories"
# without --from-seapp every package is walked (and the result is the same)
cp --sparse=always "$A/img" "$E/relabel2.img"
"$FCLABEL" relabel "$E/relabel2.img" -a /data --from "$FC" --to "$FC" \
	--seapp "$E/plat_seapp_contexts" --digests --full-label >"$E/relabel2.out" 2>&1
en2=$(sed -n 's/.*directories entered \([0-9]*\),.*/\1/p' "$E/relabel2.out")
rl_dump "$E/relabel2.img" "$A/manifest" "$E/relabel2.dump"
[ "$en2" -gt "$en" ] && cmp -s "$E/relabel2.dump" "$E/full.dump" &&
	ok "E: without --from-seapp every package is walked ($en2 directories), same result" ||
	bad "E: without --from-seapp: entered $en2, same result: $(cmp -s "$E/relabel2.dump" "$E/full.dump" && echo yes || echo no)"

# ---- F: Android 9 to 14 (../shared) -----------------------------------------------------------------
A9=$SHARED/android/android-9.0.0_r37 A14=$SHARED/android/android-14.0.0_r50
if [ -f "$A9/private_seapp_contexts" ] && [ -f "$A14/private_seapp_contexts" ]; then
	F=$OUT/f
	mkdir -p "$F"
	fc9=$A9/private_file_contexts,$A9/vendor_file_contexts
	fc14=$A14/private_file_contexts,$A14/vendor_file_contexts
	cp --sparse=always "$A/unlabeled.img" "$F/old.img"
	"$FCLABEL" label "$F/old.img" -a /data -S "$fc9" --seapp "$A9/private_seapp_contexts" \
		--digests >"$F/old.out" 2>&1 || bad "F: label with Android 9: $(tail -n 2 "$F/old.out")"
	cp --sparse=always "$F/old.img" "$F/relabel.img"
	"$FCLABEL" relabel "$F/relabel.img" -a /data --from "$fc9" --to "$fc14" \
		--from-seapp "$A9/private_seapp_contexts" --seapp "$A14/private_seapp_contexts" \
		--digests --full-label >"$F/relabel.out" 2>&1
	expect_eq "F: relabel 9 -> 14 exit" "$?" 0
	cp --sparse=always "$A/unlabeled.img" "$F/full.img"
	"$FCLABEL" label "$F/full.img" -a /data -S "$fc14" --seapp "$A14/private_seapp_contexts" \
		--digests >"$F/full.out" 2>&1
	rl_dump "$F/relabel.img" "$A/manifest" "$F/relabel.dump"
	rl_dump "$F/full.img" "$A/manifest" "$F/full.dump"
	rl_dump "$F/old.img" "$A/manifest" "$F/old.dump"
	rl_cmp "$F/relabel.dump" "$F/full.dump" && ok "F: relabel 9 -> 14 equals a fresh label with 14" ||
		bad "F: relabel 9 -> 14 differs from a fresh label"
	n=$(paste "$F/old.dump" "$F/full.dump" | awk -F'\t' '$2 != $4' | wc -l)
	[ "$n" -gt 100 ] && ok "F: the upgrade changed $n labels" || bad "F: only $n labels differ 9 -> 14"
	rl_digests "$F/relabel.img" "$A/dirs" "$F/relabel.dig"
	rl_digests "$F/full.img" "$A/dirs" "$F/full.dig"
	cmp -s "$F/relabel.dig" "$F/full.dig" && ok "F: ... digests included" || bad "F: digests differ"
	fsck_clean "$F/relabel.img" "F"
else
	say "F: Android 9 and 14 seapp_contexts not in $SHARED: release upgrade not run"
fi

# ---- H: a live tree: the same userdata, mounted, labeled as a directory -----------------------------
H=$OUT/h
mkdir -p "$H/m"
cp --sparse=always "$A/unlabeled.img" "$H/img"
if [ "$(id -u)" = 0 ] && mount -o loop "$H/img" "$H/m" 2>"$H/mount.err"; then
	"$FCLABEL" label "$H/m" -a /data -S "$FC" --seapp "$SEAPP" --digests >"$H/label.out" 2>&1
	rc=$?
	"$FCLABEL" check "$H/m" -a /data -S "$FC" --seapp "$SEAPP" --digests >"$H/check.out" 2>&1
	crc=$?
	umount "$H/m"
	expect_eq "H: label DIR --seapp --digests exit" "$rc" 0
	expect_eq "H: check DIR --seapp --digests after it" "$crc" 0
	rl_dump "$H/img" "$A/manifest" "$H/got.dump"
	# lost+found: mke2fs's, the same in both
	cmp -s "$H/got.dump" "$A/got.dump" && ok "H: the mounted tree gets the image's labels" ||
		{ bad "H: the live tree's labels differ from the image's:"; rl_cmp "$H/got.dump" "$A/got.dump"; }
	rl_digests "$H/img" "$A/dirs" "$H/digests.got"
	cmp -s "$H/digests.got" "$A/digests.want" && ok "H: ... and its digests" ||
		{ bad "H: the live tree's digests differ:"; diff "$H/digests.got" "$A/digests.want" | head -n 6; }
	# tmpfs: restorecon keeps no digest there
	mkdir -p "$H/t"
	if mount -t tmpfs tmpfs "$H/t" 2>/dev/null; then
		cp -a "$A/tree/system" "$A/tree/user_de" "$H/t/"
		"$FCLABEL" label "$H/t" -a /data -S "$FC" --seapp "$SEAPP" --digests >"$H/tmpfs.out" 2>&1
		n=$(getfattr -R -d -m security.sehash "$H/t" 2>/dev/null | grep -c 'security.sehash=')
		grep -q 'on a tmpfs, ramfs or sysfs: no digests' "$H/tmpfs.out" && [ "$n" = 0 ] &&
			ok "H: on a tmpfs, no digests, and a note says why" ||
			bad "H: tmpfs: $n digests, $(cat "$H/tmpfs.out")"
		umount "$H/t"
	fi
else
	say "H: cannot loop-mount an image here ($(head -n 1 "$H/mount.err" 2>/dev/null)): live tree not run"
fi

# ---- G: bad input: exit 2, the file and line named, nothing written -------------------------------
G=$OUT/g
mkdir -p "$G"
cp --sparse=always "$A/unlabeled.img" "$G/img"
s0=$(sum "$G/img")
bad_seapp() { # WHAT LINE TEXT
	printf '# a comment\n%s\n' "$3" >"$G/plat_seapp_contexts"
	"$FCLABEL" label "$G/img" -a /data -S "$FC" --seapp "$G/plat_seapp_contexts" >"$G/o" 2>"$G/e"
	_rc=$?
	if [ "$_rc" -eq 2 ] && grep -q "$G/plat_seapp_contexts:$2: " "$G/e"; then
		ok "seapp_contexts with $1: exit 2, $(cat "$G/e")"
	else
		bad "seapp_contexts with $1: exit $_rc, $(cat "$G/e")"
	fi
}
bad_seapp "an unknown key" 2 'user=_app colour=blue type=t'
bad_seapp "a repeated key" 2 'user=_app user=system type=t'
bad_seapp "a bad boolean" 2 'user=_app isPrivApp=yes type=t'
bad_seapp "name= without seinfo=" 2 'user=_app name=com.x type=t'
printf 'user=_app seinfo=a type=t\nuser=_app seinfo=a type=u\n' >"$G/dup"
"$FCLABEL" label "$G/img" -a /data -S "$FC" --seapp "$G/dup" >"$G/o" 2>"$G/e"
[ "$?" -eq 2 ] && grep -q "$G/dup:2: .*$G/dup:1" "$G/e" && ok "a duplicate: exit 2, both lines named" ||
	bad "a duplicate: $(cat "$G/e")"
printf 'com.a 10001 0 /data/user/0/com.a default none\ncom.b 10002 0 /data/user/0/com.b default\n' >"$G/packages.list"
"$FCLABEL" label "$G/img" -a /data -S "$FC" --seapp "$SEAPP" --packages "$G/packages.list" >"$G/o" 2>"$G/e"
[ "$?" -eq 2 ] && grep -q "$G/packages.list:2: " "$G/e" && ok "packages.list with 5 fields: exit 2, $(cat "$G/e")" ||
	bad "packages.list with 5 fields: $(cat "$G/e")"
"$FCLABEL" label "$G/img" -a /data -S "$FC" --seapp "$SEAPP" --packages "$G/none" >"$G/o" 2>"$G/e"
[ "$?" -eq 2 ] && ok "a missing packages.list: exit 2" || bad "a missing packages.list: $(cat "$G/e")"
# the image's own packages.list, malformed: named inside the image
cp "$A/tree/system/packages.list" "$G/pl"
printf 'com.broken notanumber 0 /data/x default none\n' >>"$G/pl"
cp --sparse=always "$A/unlabeled.img" "$G/img2"
debugfs -w -R "rm /system/packages.list" "$G/img2" >/dev/null 2>&1
debugfs -w -R "write $G/pl /system/packages.list" "$G/img2" >/dev/null 2>&1
s2=$(sum "$G/img2")
"$FCLABEL" label "$G/img2" -a /data -S "$FC" --seapp "$SEAPP" >"$G/o" 2>"$G/e"
[ "$?" -eq 2 ] && grep -q "img2:/system/packages.list:$(wc -l <"$G/pl"): " "$G/e" &&
	ok "the image's packages.list malformed: exit 2, $(cat "$G/e")" || bad "malformed image packages.list: $(cat "$G/e")"
expect_eq "bad input wrote nothing" "$(sum "$G/img")$(sum "$G/img2")" "$s0$s2"
# (the image holds system/packages.list: -a /vendor contradicts it, exit 2 naming both; past
# that, a mount point no spec matches is refused, exit 1; one the specs cover but that does not
# hold /data/system/packages.list asks for --packages, which fits a userdata image, exit 2)
printf '/vendor(/.*)?\tu:object_r:vendor_file:s0\n' >"$G/vfc"
cat "$FC" >>"$G/vfc"
"$FCLABEL" label "$G/img" -a /vendor -S "$G/vfc" --seapp "$SEAPP" >"$G/o" 2>"$G/e"
[ "$?" -eq 2 ] && grep -q 'says it is /data .*-a says /vendor.*--force-mount-point' "$G/e" &&
	ok "-a /vendor on a userdata image: refused, exit 2" || bad "-a /vendor on userdata: $(cat "$G/e")"
"$FCLABEL" label "$G/img" -a /vendor --force-mount-point -S "$G/vfc" --seapp "$SEAPP" >"$G/o" 2>"$G/e"
[ "$?" -eq 2 ] && grep -q 'give --packages' "$G/e" && ok "mounted elsewhere than /data: --packages asked for" ||
	bad "-a /vendor --seapp: $(cat "$G/e")"
"$FCLABEL" label "$G/img" -a /vendor --force-mount-point -S "$FC" --seapp "$SEAPP" >"$G/o" 2>"$G/e"
[ "$?" -eq 1 ] && grep -q 'no spec matches /vendor' "$G/e" && ok "-a /vendor that no spec matches: exit 1, said" ||
	bad "-a /vendor that no spec matches: $(cat "$G/e")"
finish
