#!/bin/sh
# fclabel relabel across real Android policy upgrades, on images built from real firmware
# listings: the result must equal a full `fclabel label` with the new policy, file for file.
#
#   4.4.2 -> 5.0.0 -> 6.0.1 (file_contexts): the Leagoo M11 (Android 8.1) system partition at
#       the mount point its listing belongs at, its vendor partition, and a generated /data.
#   9 -> 14 (private_file_contexts,vendor_file_contexts): the Pixel 5 (Android 11) system
#       partition (system-as-root), vendor and product partitions, and the generated /data.
# Images: $SHARED/images/*/tree.tsv (empty files: the sizes do not matter for labels), mount points
# found from where the listing's *.labels.tsv puts the paths. Each step (tests/relabellib.sh
# rl_case): relabel --from OLD --to NEW with --plan/--json/--verify on a copy, label -S NEW on
# another copy, labels read back with debugfs and compared; check -S NEW; e2fsck -fn.
# The second step of a chain starts from the first step's relabeled image.
: "${TOP:=$(cd "$(dirname "$0")/.." && pwd)}"
. "$TOP/tests/lib.sh"
. "$TOP/tests/relabellib.sh"

rl_need
AD=$SHARED/android
IM=$SHARED/images
LEAGOO=$IM/leagoo_m11_O11019_android8.1
PIXEL=$IM/pixel5_redfin_RD1A.200810.020_android11
[ -d "$AD" ] || skip "no Android policies ($AD missing)"
P44=$AD/android-4.4.2_r1/file_contexts
P50=$AD/android-5.0.0_r5/file_contexts
P60=$AD/android-6.0.1_r74/file_contexts
P9=$AD/android-9.0.0_r37/private_file_contexts,$AD/android-9.0.0_r37/vendor_file_contexts
P14=$AD/android-14.0.0_r50/private_file_contexts,$AD/android-14.0.0_r50/vendor_file_contexts
for f in "$P44" "$P50" "$P60" "${P9%,*}" "${P9#*,}" "${P14%,*}" "${P14#*,}" \
	"$LEAGOO/tree.tsv" "$PIXEL/tree.tsv"; do
	[ -f "$f" ] || skip "real Android data missing: $f"
done
t0=$(date +%s)
RL_KEEP=1 # a chain's next step starts from the previous step's relabel.img
say "seed $FC_SEED"

# part TAG LISTING PART: the partition PART/ of a firmware listing as an image; sets MP (the
# mount point, "" for /) and prints what it built.
part() {
	mkdir -p "$OUT/$1"
	_mp=$("$PY" "$GEN" tsvtree --tsv "$2/tree.tsv" --labels "$(ls "$2"/*.labels.tsv | head -n 1)" \
		--part "$3" --root "$OUT/$1/tree" --manifest "$OUT/$1/manifest") ||
		{ say "FAIL: gen_edits.py tsvtree $2 $3"; exit 1; }
	[ "$_mp" = / ] && _mp=
	rl_mkimg "$OUT/$1/tree" "$OUT/$1/manifest" "$OUT/$1/unlabeled.img"
	echo "$_mp" >"$OUT/$1/mp"
	say "$1: $(wc -l <"$OUT/$1/manifest" | tr -d ' ') entries, $(rl_ndirs "$OUT/$1/manifest") directories, mounted at ${_mp:-/}"
}

# base TAG FC: TAG's image labeled with FC (base.img, base.dump).
base() {
	cp --sparse=always "$OUT/$1/unlabeled.img" "$OUT/$1/base.img"
	rl_label "$OUT/$1/base.img" "$2" "$(cat "$OUT/$1/mp")" "$OUT/$1/base.out"
	rl_dump "$OUT/$1/base.img" "$OUT/$1/manifest" "$OUT/$1/base.dump"
	_nl=$(awk -F'\t' '$2 != "-" && $2 != "?"' "$OUT/$1/base.dump" | wc -l | tr -d ' ')
	_nq=$(awk -F'\t' '$2 == "?"' "$OUT/$1/base.dump" | wc -l | tr -d ' ')
	_ne=$(wc -l <"$OUT/$1/manifest" | tr -d ' ')
	[ "$_nq" -eq 0 ] || bad "$1: debugfs cannot find $_nq paths"
	[ "$_nl" -ge $((_ne * 9 / 10)) ] || bad "$1: only $_nl of $_ne entries labeled by $(basename "${2%%,*}")"
}

# step NAME TAG FROM TO [PREV]: one relabel; from TAG's base image, or from case PREV's result.
step() {
	_name=$1 _tag=$2 _from=$3 _to=$4
	if [ -n "${5:-}" ]; then
		_img=$OUT/cases/$5/relabel.img _dump=$OUT/cases/$5/relabel.dump
	else
		_img=$OUT/$_tag/base.img _dump=$OUT/$_tag/base.dump
	fi
	_nd=$(rl_ndirs "$OUT/$_tag/manifest")
	rl_case "$_name" "$_img" "$_dump" "$OUT/$_tag/manifest" "$(cat "$OUT/$_tag/mp")" "$_from" "$_to"
	_full=$(rl_summary "$RL_DIR/full.out" changed)
	say "  $_name: relabel changed $RL_CHANGED (label -S new changed $_full), directories entered $RL_ENTERED, skipped $RL_SKIPPED, of $_nd$( [ "$RL_FAILED" -eq 0 ] || printf ' FAILED')"
	# the full label and the relabel must change the same files
	[ "$RL_CHANGED" = "$_full" ] || bad "$_name: relabel changed $RL_CHANGED files, label -S new $_full"
	# pruning: directories whose paths no changed spec's literal prefix can lead to stay out
	"$FCLABEL" diff --json "$_from" "$_to" >"$RL_DIR/diff.json" 2>&1
	_must=$("$PY" "$GEN" mustskip --manifest "$OUT/$_tag/manifest" --mp "$(cat "$OUT/$_tag/mp")" \
		--diff-json "$RL_DIR/diff.json") || { bad "$_name: gen_edits.py mustskip failed"; return; }
	say "    $_must directories are out of reach of every change's literal prefix"
	[ "$RL_ENTERED" -le $((_nd - _must)) ] ||
		bad "$_name: relabel entered $RL_ENTERED directories, but $_must of the $_nd cannot be reached by any change"
}

# diffline OLD NEW: what `fclabel diff` says, in one line (exit 1: there are changes).
diffline() {
	"$FCLABEL" diff "$1" "$2" >"$OUT/diff.out" 2>&1
	_rc=$?
	[ "$_rc" -eq 1 ] || bad "fclabel diff $(basename "$1") $(basename "$2"): exit $_rc, want 1"
	grep -E '^[0-9]+ change|^note:' "$OUT/diff.out" | tr '\n' ' '
}

# ---- images
part leagoo-system "$LEAGOO" system
part leagoo-vendor "$LEAGOO" vendor
part pixel-system "$PIXEL" system
part pixel-vendor "$PIXEL" vendor
part pixel-product "$PIXEL" product
mkdir -p "$OUT/data"
"$PY" "$GEN" tree --kind data --seed "$FC_SEED" --root "$OUT/data/tree" --manifest "$OUT/data/manifest" ||
	{ say "FAIL: gen_edits.py tree --kind data"; exit 1; }
rl_mkimg "$OUT/data/tree" "$OUT/data/manifest" "$OUT/data/unlabeled.img"
echo /data >"$OUT/data/mp"
say "data: $(wc -l <"$OUT/data/manifest" | tr -d ' ') entries, $(rl_ndirs "$OUT/data/manifest") directories, mounted at /data (generated)"
# where the listings belong: the Leagoo system partition at /system, the Pixel one at / (its
# system/system is /system): a wrong mount point would make every comparison below meaningless
expect_eq "leagoo system mount point" "$(cat "$OUT/leagoo-system/mp")" /system
expect_eq "pixel system mount point (system-as-root)" "$(cat "$OUT/pixel-system/mp")" ""
expect_eq "pixel vendor mount point" "$(cat "$OUT/pixel-vendor/mp")" /vendor

# ---- 4.4.2 -> 5.0.0 -> 6.0.1
say "4.4.2 -> 5.0.0: $(diffline "$P44" "$P50")"
say "5.0.0 -> 6.0.1: $(diffline "$P50" "$P60")"
for t in leagoo-system leagoo-vendor data; do
	base "$t" "$P44"
	step "$t-4.4-5.0" "$t" "$P44" "$P50"
	step "$t-5.0-6.0" "$t" "$P50" "$P60" "$t-4.4-5.0"
done

# ---- 9 -> 14
say "9 -> 14: $(diffline "$P9" "$P14")"
for t in pixel-system pixel-vendor pixel-product data leagoo-system; do
	base "$t" "$P9"
	step "$t-9-14" "$t" "$P9" "$P14"
done

say "time: $(( $(date +%s) - t0 )) s"
finish
