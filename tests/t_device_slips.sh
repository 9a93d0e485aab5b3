#!/bin/sh
# A device's /data is treated as the device treats it, unless asked (issue 31, slip 1): a small
# phone's /data (tests/devdatalib.sh: labeled in full with --seapp --digests, then given the
# levels a phone's own processes set), read back with debugfs, not with fclabel:
#  (a) label and relabel without --as-device refuse it: exit 2, the first line names where the
#      digests are, --as-device and --full-label, and the image is byte for byte as it was (also
#      with -n, -o, --json, and a live tree: its labels as they were);
#  (b) the digests on one top directory alone are enough; none at all (a /data labeled without
#      --digests, or never) is labeled as before;
#  (c) --full-label labels it in full (the levels go), relabel --full-label too; --as-device keeps
#      them; --as-device with --full-label is a usage error;
#  (d) check without --as-device: the full check, and a summary line counting the differences
#      that are levels the device keeps: not a type changed below a matching digest, not a level
#      on a package directory (installd relabels it) nor on a profile directory (installd
#      restorecons it);
#  (e) -a other than /data, and a tree or image with no digests: no refusal, no count.
. "$TOP/tests/imglib.sh"
. "$TOP/tests/relabellib.sh"
. "$TOP/tests/devdatalib.sh"
rl_need
cd "$OUT" || exit 1
F=$FCLABEL
D=$OUT/d
dd_build "$D"
cd "$D" || exit 1
expect_eq "the phone's levels are set" "$(dd_differ L.dump P.dump)" "$(dd_levels)"
grep -q '	-$' P.dig && ! grep -q '^/	-$' P.dig || bad "P.img: /data has no digest"

# refused WHAT WANT-ON-LINE-1 CMD...: exit 2, the first line of stderr matches, and names both ways
refused() {
	_w=$1 _m=$2
	shift 2
	"$@" >r.out 2>r.err
	_rc=$?
	_l1=$(head -n 1 r.err)
	case $_l1 in
	$_m) [ "$_rc" = 2 ] && ok "$_w: exit 2: $_l1" || bad "$_w: exit $_rc: $_l1" ;;
	*) bad "$_w: exit $_rc, first line: $_l1" ;;
	esac
}

# ---- (a) refused, nothing written ---------------------------------------------------------------------
cp --sparse=always P.img a.img
s0=$(sum a.img)
refused "(a) label -a /data of a phone's /data" \
	"fclabel label: a.img is a device's /data (security.sehash on /data): refusing a full label*give --as-device, or --full-label*nothing written" \
	"$F" label a.img -a /data -S "$DD_FC" --seapp "$DD_SEAPP" --digests
expect_eq "(a) ... the image byte for byte as it was" "$(sum a.img)" "$s0"
refused "(a) relabel" "fclabel relabel: a.img is a device's /data (security.sehash on /data): refusing a relabel*--as-device*--full-label*" \
	"$F" relabel a.img -a /data --from "$DD_FC" --to "$DD_FC" --seapp "$DD_SEAPP" --digests
refused "(a) label -n" "fclabel label: a.img is a device's /data*" "$F" label a.img -a /data -S "$DD_FC" -n
refused "(a) label -S alone (no --seapp)" "fclabel label: a.img is a device's /data*" "$F" label a.img -a /data -S "$DD_FC"
refused "(a) label -o OUT" "fclabel label: a.img is a device's /data*" \
	"$F" label a.img -a /data -S "$DD_FC" --seapp "$DD_SEAPP" -o a.out.img
[ -e a.out.img ] && bad "(a) -o: an output was written" || ok "(a) -o: no output written"
refused "(a) label --json" "fclabel label: a.img is a device's /data*" \
	"$F" label a.img -a /data -S "$DD_FC" --seapp "$DD_SEAPP" --json a.json
expect_eq "(a) after all of them, the image byte for byte as it was" "$(sum a.img)" "$s0"
grep -q -- '--as-device changes only what the device' r.err && ok "(a) a second line says what --as-device does" ||
	bad "(a) no second line: $(cat r.err)"

# ---- (b) where the digests are ---------------------------------------------------------------------------
cp --sparse=always P.img b.img
dd_rmx b.img / security.sehash
refused "(b) /data without a digest, a top directory with one" \
	"fclabel label: b.img is a device's /data (security.sehash on /data/*): refusing a full label*" \
	"$F" label b.img -a /data -S "$DD_FC" --seapp "$DD_SEAPP" --digests
cp --sparse=always un.img b2.img
"$F" label b2.img -a /data -S "$DD_FC" --seapp "$DD_SEAPP" >b2.out 2>&1
expect_eq "(b) a /data labeled without digests: labeled again, exit 0" "$?" 0
"$F" label b2.img -a /data -S "$DD_FC" --seapp "$DD_SEAPP" --digests >b2.out 2>&1
expect_eq "(b) ... and given its digests, exit 0" "$?" 0
refused "(b) ... then labeled again without --full-label" "fclabel label: b2.img is a device's /data*" \
	"$F" label b2.img -a /data -S "$DD_FC" --seapp "$DD_SEAPP" --digests
# a digest of another length than SHA-1's is no digest of Android's
cp --sparse=always un.img b3.img
dd_setx b3.img / security.sehash 0102
"$F" label b3.img -a /data -S "$DD_FC" --seapp "$DD_SEAPP" >b3.out 2>&1
expect_eq "(b) a 2-byte security.sehash is not Android's: labeled, exit 0" "$?" 0

# ---- (c) asked for ------------------------------------------------------------------------------------------
cp --sparse=always P.img c.img
"$F" label c.img -a /data -S "$DD_FC" --seapp "$DD_SEAPP" --digests --full-label >c.out 2>&1
expect_eq "(c) --full-label: exit 0" "$?" 0
rl_dump c.img manifest c.dump
expect_eq "(c) --full-label strips the three levels (the full label's, nothing else)" \
	"$(dd_differ P.dump c.dump)|$(dd_differ L.dump c.dump)" "$(dd_levels)|"
cp --sparse=always P.img c2.img
"$F" relabel c2.img -a /data --from none --to "$DD_FC" --seapp "$DD_SEAPP" --digests --full-label >c2.out 2>&1
expect_eq "(c) relabel --full-label: exit 0" "$?" 0
rl_dump c2.img manifest c2.dump
expect_eq "(c) ... the full label's" "$(dd_differ L.dump c2.dump)" ""
cp --sparse=always P.img c3.img
"$F" label c3.img -a /data -S "$DD_FC" --seapp "$DD_SEAPP" --as-device >c3.out 2>&1
expect_eq "(c) --as-device: exit 0, the image as it was" "$?:$(sum c3.img)" "0:$(sum P.img)"
"$F" label c3.img -a /data -S "$DD_FC" --seapp "$DD_SEAPP" --as-device --full-label >c4.out 2>&1
expect_eq "(c) --as-device with --full-label: exit 2" "$?" 2
grep -q -- '--as-device and --full-label' c4.out && ok "(c) ... saying so" || bad "(c) ... $(head -n 1 c4.out)"

# ---- (d) check counts what the device keeps ----------------------------------------------------------------
"$F" check P.img -a /data -S "$DD_FC" --seapp "$DD_SEAPP" >d.list 2>d.err
expect_eq "(d) check of the phone's /data: exit 1, the three listed" \
	"$?:$(cut -f1 d.list | sed 's|^/data||' | sort | tr '\n' ' ')" "1:$(dd_levels)"
grep -q "^fclabel check: a device's /data (security.sehash on /data): 3 of the 3 difference(s) are levels the device keeps" d.err &&
	ok "(d) the summary: 3 of the 3 are levels the device keeps" || bad "(d) summary: $(grep device d.err)"
# more differences, of other kinds: a type below a matching digest (kept, not a level), a level
# on a package directory (installd relabels the package whole: the file with a level in it
# too) and on a profile directory (installd restorecons it)
cp --sparse=always P.img d2.img
dd_setl d2.img /local/tmp/t u:object_r:system_data_file:s0
dd_setl d2.img "/data/$DD_OLD" u:object_r:app_data_file:s0:c100,c256,c512,c768,c1
dd_setl d2.img "/misc/profiles/cur/0/$DD_APP" u:object_r:user_profile_data_file:s0:c3
"$F" check d2.img -a /data -S "$DD_FC" --seapp "$DD_SEAPP" >d2.list 2>d2.err
expect_eq "(d) six differences, exit 1" "$?:$(wc -l <d2.list | tr -d ' ')" "1:6"
grep -q "3 of the 6 difference(s) are levels the device keeps" d2.err &&
	ok "(d) 3 of the 6 are levels the device keeps" || bad "(d) summary: $(grep device d2.err)"
"$F" check d2.img -a /data -S "$DD_FC" --seapp "$DD_SEAPP" --as-device >d3.list 2>d3.err
expect_eq "(d) check --as-device lists the two the device changes" \
	"$(cut -f1 d3.list | sort | tr '\n' ' ')" "/data/data/$DD_OLD /data/misc/profiles/cur/0/$DD_APP "
grep -q "levels the device keeps" d3.err && bad "(d) --as-device: the count line is there" ||
	ok "(d) --as-device: no count line"
"$F" check P.img -a /data -S "$DD_FC" --seapp "$DD_SEAPP" --json d.json >/dev/null 2>&1
expect_eq "(d) --json: exit 1" "$?" 1

# ---- (e) not a device's /data --------------------------------------------------------------------------------
"$F" check un.img -a /data -S "$DD_FC" --seapp "$DD_SEAPP" >e.list 2>e.err
grep -q "levels the device keeps" e.err && bad "(e) a never-labeled image: a count line" ||
	ok "(e) a never-labeled image: no count line"
cp --sparse=always P.img e.img
# (the image says it is /data: -a /data/misc is taken only when forced, then the device's /data
# is not what is labeled)
"$F" label e.img -a /data/misc --force-mount-point -S "$DD_FC" >e2.out 2>&1
expect_eq "(e) -a /data/misc: no refusal (exit 0)" "$?" 0

# ---- the same on a live tree -------------------------------------------------------------------------------------
mkdir -p m
cp --sparse=always P.img t.img
if [ "$(id -u)" = 0 ] && mount -o loop t.img m 2>mount.err; then
	"$F" label m -a /data -S "$DD_FC" --seapp "$DD_SEAPP" --digests >t.out 2>t.err
	rc=$?
	"$F" check m -a /data -S "$DD_FC" --seapp "$DD_SEAPP" >t.list 2>t.cerr
	crc=$?
	# without --seapp (and its one walker), -T 2: the check's shadow of the device's walks
	# needs the walk in order, and gets it
	"$F" check m -a /data -S "$DD_FC" -T 2 >t2.list 2>t2.cerr
	"$F" check P.img -a /data -S "$DD_FC" >p2.list 2>p2.cerr
	umount m
	expect_eq "(a) a live tree: exit 2, first line" "$rc:$(head -n 1 t.err)" \
		"2:fclabel label: m is a device's /data (security.sehash on /data): refusing a full label, which would strip the levels the device keeps; give --as-device, or --full-label to label it all the same; nothing written"
	rl_dump t.img manifest t.dump
	expect_eq "(a) ... its labels as they were" "$(dd_differ P.dump t.dump)" ""
	expect_eq "(d) a live tree: check counts the same" "$crc:$(grep -c 'are levels the device keeps' t.cerr)" "1:1"
	expect_eq "(d) a live tree, -S alone, -T 2: the image's summary, the same count" \
		"$(sed 's/^fclabel check: m: /fclabel check: IMG: /; s/[0-9.]* s$//' t2.cerr)" \
		"$(sed 's/^fclabel check: P.img: /fclabel check: IMG: /; s/[0-9.]* s$//' p2.cerr)"
else
	say "cannot loop-mount an image here ($(head -n 1 mount.err 2>/dev/null)): live tree not run"
fi
finish
