#!/bin/sh
# Differential test on real Android policies: every answer of `fclabel lookup` must be byte for
# byte libselinux 3.4's (tests/oracle).
# Policies: every file_contexts under $SHARED/android (each version; 9.0 and 14 also private+vendor
# concatenated; the device trees, one by one and together) and under $SHARED/images (each file,
# the concatenation that labels.tsv names, the combined file).
# Queries (per policy, $OUT/NN-name/queries): every path of the image listings (tree.tsv,
# all_files.txt, installed-files*.txt, labels.tsv; as labels.tsv writes them and as listed) with
# its real mode, every path of plat_file_contexts_test with every mode, paths made from each
# spec's regex, every mode on a sample. Then each images/*/labels.tsv row (made with 3.4) must be
# fclabel's answer, too.
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/difflib.sh"

[ -d "$SHARED/android" ] || skip "no Android policies (\$SHARED/android is absent: $SHARED)"
need_tools
start=$(date +%s)
"$PY" "$GEN" android --seed "$FC_SEED" --shared "$SHARED" --out "$OUT" || die "tests/gen_fc.py android failed"

# one policy: the oracle and fclabel on its queries
one() {
	_d=$1
	_fc=$(cat "$_d/fcarg")
	[ "$(nlines "$_d/oracle.out")" -eq "$(nrec "$_d/queries")" ] ||
		die "tests/oracle gave $(nlines "$_d/oracle.out") answers for $(nrec "$_d/queries") queries in $_d"
	_ok=0
	ours "" "$_fc" "$_d/queries" "$_d/ours.out" || _ok=1
	# keep the answers only when they differ (the queries stay for a replay)
	if compare "${_d##*/}" "$_fc" "$_d/queries" "$_d/ours.out" "$_d/oracle.out" "$_ok"; then
		rm -f "$_d/ours.out"
	fi
}

# the oracle: two policies at a time (2 cores)
set -- "$OUT"/[0-9]*-*
[ -d "$1" ] || die "no Android policy found under $SHARED"
npol=$#
while [ $# -gt 0 ]; do
	oracle "" "$(cat "$1/fcarg")" "$1/queries" "$1/oracle.out" &
	p0=$!
	p1=""
	if [ $# -gt 1 ]; then
		oracle "" "$(cat "$2/fcarg")" "$2/queries" "$2/oracle.out" &
		p1=$!
	fi
	rc0=0 rc1=0
	wait "$p0" || rc0=$?
	[ -z "$p1" ] || wait "$p1" || rc1=$?
	[ "$rc0" -eq 0 ] || die "tests/oracle failed on $1"
	[ "$rc1" -eq 0 ] || die "tests/oracle failed on $2"
	shift
	[ $# -eq 0 ] || shift
done
sane=""
for d in "$OUT"/[0-9]*-*; do
	one "$d"
	if [ -z "$sane" ] && [ "$(grep -vc '^<<' "$d/oracle.out")" -gt 1000 ]; then sane=$d; fi
done
say "$npol policies compared"
[ -n "$sane" ] || die "sanity: no policy labels more than 1000 queries"
sanity "$sane/queries" "$sane/oracle.out"

# the golden labels of images/*/labels.tsv (libselinux 3.4 on the concatenated plat+vendor files)
for g in "$OUT"/golden-*; do
	[ -d "$g" ] || continue
	fc=$(cat "$g/fcarg")
	oracle "" "$fc" "$g/queries" "$g/oracle.out"
	# the oracle itself must agree with the golden file (else the oracle is miswired)
	"$PY" "$GEN" report --names oracle,labels.tsv --label "oracle vs ${g##*/}" "$g/queries" "$g/oracle.out" "$g/expected" ||
		die "tests/oracle disagrees with the golden labels of ${g##*/}"
	ok=0
	ours "" "$fc" "$g/queries" "$g/ours.out" || ok=1
	compare "golden labels ${g##*/}" "$fc" "$g/queries" "$g/ours.out" "$g/expected" "$ok"
done

finish t_diff_android $(( $(date +%s) - start ))
