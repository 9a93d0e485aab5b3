# Shared helpers of the differential tests tests/t_diff_*.sh (fclabel against libselinux 3.4).
# Source it with `. "$TOP/tests/difflib.sh"`. POSIX sh.
#
# Environment (set by tests/run.sh; defaults here so a test can also run by hand):
#   TOP      repo root            FCLABEL  the fclabel binary      SHARED  shared data dir
#   OUT      scratch dir          FC_SEED  seed of every random choice
# Every comparison is byte for byte between
#   $FCLABEL lookup -S FC[,FC...] [--base-only] --batch -0  <queries
#   tests/oracle [-b] -0 FC[,FC...]                          <queries
# where queries are NUL-separated "MODE PATH" records.

: "${TOP:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${FCLABEL:=$TOP/fclabel}"
: "${SHARED:=$TOP/../shared/data}"
: "${FC_SEED:=20261203}"
if [ -z "${OUT:-}" ]; then
	OUT=$(mktemp -d "${TMPDIR:-/tmp}/fcdiff.XXXXXX") || exit 1
fi
mkdir -p "$OUT" || exit 1
export TOP FCLABEL SHARED FC_SEED OUT
: "${ORACLE:=$TOP/tests/oracle}"
GEN="$TOP/tests/gen_fc.py"
PY=python3
# libselinux's temporary concatenations go here, not to /tmp
TMPDIR=$OUT
export TMPDIR

# Totals of this test.
DIFF_QUERIES=0		# answers compared
DIFF_FAILED=0		# comparisons that differed
DIFF_SHOWN=0		# differences printed so far (at most DIFF_MAX_SHOWN)
DIFF_MAX_SHOWN=${FC_DIFF_SHOW:-20}
DIFF_FIRST=""		# the first comparison that differed
rm -f "$OUT/first-diffs"

say() { printf '%s\n' "$*"; }
skip() { say "$*"; exit 77; }	# the runner prints the last line as the reason
die() { say "FAIL: $*"; exit 1; }

# need_tools: skip unless python3, fclabel and the oracle (built here if needed) are there.
need_tools() {
	command -v "$PY" >/dev/null 2>&1 || skip "python3 is not installed"
	[ -x "$FCLABEL" ] || skip "fclabel is not built ($FCLABEL)"
	if [ ! -x "$ORACLE" ] || [ -n "$(find "$TOP/tests/oracle.c" -newer "$ORACLE" 2>/dev/null)" ]; then
		make -s -C "$TOP" tests/oracle >"$OUT/oracle-build.log" 2>&1 ||
			skip "cannot build tests/oracle (libselinux1-dev missing?): $(tail -n 1 "$OUT/oracle-build.log")"
	fi
}

# nrec FILE: number of NUL-terminated records in FILE.
nrec() { tr -cd '\000' <"$1" | wc -c | tr -d ' '; }

# nlines FILE
nlines() { wc -l <"$1" | tr -d ' '; }

# oracle OPTS FCARG QUERIES OUTFILE [parallel]
#   OPTS is "" or "-b". With "parallel", the queries are split in two halves and two oracle
#   processes run at once (libselinux 3.4 is slow on big policies). Dies if the oracle fails
#   (exit status 1 only says that some answer was <<error>>).
# shellcheck disable=SC2086 # $_o_opts is empty or one word
oracle() {
	_o_opts=$1 _o_fc=$2 _o_q=$3 _o_out=$4
	if [ "${5:-}" = parallel ]; then
		"$PY" "$GEN" split "$_o_q" "$_o_q.half0" "$_o_q.half1" || die "cannot split $_o_q"
		"$ORACLE" $_o_opts -0 "$_o_fc" <"$_o_q.half0" >"$_o_out.half0" 2>"$_o_out.err0" &
		_o_p0=$!
		"$ORACLE" $_o_opts -0 "$_o_fc" <"$_o_q.half1" >"$_o_out.half1" 2>"$_o_out.err1" &
		_o_p1=$!
		wait "$_o_p0"; _o_rc0=$?
		wait "$_o_p1"; _o_rc1=$?
		cat "$_o_out.err0" "$_o_out.err1" >"$_o_out.err"
		if [ "$_o_rc0" -gt 1 ] || [ "$_o_rc1" -gt 1 ]; then
			cat "$_o_out.err"
			die "tests/oracle failed on $_o_fc (exit $_o_rc0, $_o_rc1)"
		fi
		cat "$_o_out.half0" "$_o_out.half1" >"$_o_out"
		rm -f "$_o_q.half0" "$_o_q.half1" "$_o_out.half0" "$_o_out.half1" "$_o_out.err0" "$_o_out.err1"
	else
		"$ORACLE" $_o_opts -0 "$_o_fc" <"$_o_q" >"$_o_out" 2>"$_o_out.err"
		_o_rc0=$?
		if [ "$_o_rc0" -gt 1 ]; then
			cat "$_o_out.err"
			die "tests/oracle failed on $_o_fc (exit $_o_rc0)"
		fi
	fi
	[ -s "$_o_out.err" ] || rm -f "$_o_out.err"
	return 0
}

# ours OPTS FCARG QUERIES OUTFILE: runs fclabel. OPTS is "" or "--base-only".
#   Returns 0 when fclabel ran and its exit status agrees with its answers (1 exactly when some
#   answer is <<error>>); otherwise prints why and returns 1 (the comparison then fails).
# shellcheck disable=SC2086 # $_f_opts is empty or one word
ours() {
	_f_opts=$1 _f_fc=$2 _f_q=$3 _f_out=$4
	"$FCLABEL" lookup -S "$_f_fc" $_f_opts --batch -0 <"$_f_q" >"$_f_out" 2>"$_f_out.err"
	_f_rc=$?
	if grep -q '^<<error>>$' "$_f_out"; then _f_want=1; else _f_want=0; fi
	if [ "$_f_rc" -ne "$_f_want" ]; then
		say "fclabel lookup -S $_f_fc $_f_opts --batch -0 <$_f_q: exit status $_f_rc, expected $_f_want"
		sed -n '1,5s/^/    fclabel: /p' "$_f_out.err"
		return 1
	fi
	[ -s "$_f_out.err" ] || rm -f "$_f_out.err"
	return 0
}

# compare NAME DETAIL QUERIES OURS REF [ours_ok]: byte-for-byte comparison; counts the queries.
#   When they differ: prints one MISMATCH line (and, while fewer than DIFF_MAX_SHOWN have been shown
#   in this test, the differing records), keeps the shown ones for `finish`, returns 1.
#   DETAIL (the policy, say) goes on the MISMATCH line. ours_ok is the status of `ours` (0 by
#   default): a non-zero one counts as a failure too.
compare() {
	_c_name=$1 _c_detail=$2 _c_q=$3 _c_ours=$4 _c_ref=$5 _c_ok=${6:-0}
	_c_n=$(nrec "$_c_q")
	DIFF_QUERIES=$((DIFF_QUERIES + _c_n))
	if [ "$_c_ok" -eq 0 ] && cmp -s "$_c_ours" "$_c_ref"; then
		return 0
	fi
	DIFF_FAILED=$((DIFF_FAILED + 1))
	_c_left=$((DIFF_MAX_SHOWN - DIFF_SHOWN))
	if [ "$_c_left" -gt 0 ]; then
		"$PY" "$GEN" report --max "$_c_left" --label "MISMATCH $_c_name" "$_c_q" "$_c_ours" "$_c_ref" >"$_c_ours.report"
		say "$(tail -n 1 "$_c_ours.report") -- $_c_detail"
		grep '^  #' "$_c_ours.report" | tee -a "$OUT/first-diffs"
		say "  replay: queries $_c_q, fclabel's answers $_c_ours, libselinux's $_c_ref"
		_c_shown=$(grep -c '^  #' "$_c_ours.report")
		DIFF_SHOWN=$((DIFF_SHOWN + _c_shown))
		[ -n "$DIFF_FIRST" ] || DIFF_FIRST="$_c_name: $_c_detail; queries $_c_q"
	else
		# enough shown: just count (diff is much quicker to start than python)
		say "MISMATCH $_c_name: $(diff "$_c_ours" "$_c_ref" | grep -c '^<') of $_c_n answers differ" \
			"(fclabel $(nlines "$_c_ours") lines, libselinux $(nlines "$_c_ref")) -- $_c_detail"
	fi
	return 1
}

# sanity QUERIES REF: the reference must have one line per query and must label something,
#   and the comparison must notice a changed answer (so a pass is not a vacuous one).
sanity() {
	_s_q=$1 _s_ref=$2
	"$PY" "$GEN" sanity "$_s_q" "$_s_ref" || die "sanity check of the oracle's answers ($_s_ref)"
	sed '1s/.*/<<mutated>>/' "$_s_ref" >"$_s_ref.mutated"
	if "$PY" "$GEN" report --max 0 "$_s_q" "$_s_ref.mutated" "$_s_ref" >/dev/null; then
		die "sanity: the comparison did not notice a changed answer"
	fi
	if cmp -s "$_s_ref.mutated" "$_s_ref"; then
		die "sanity: cmp did not notice a changed answer"
	fi
	rm -f "$_s_ref.mutated"
}

# one_policy DIR QUERIES NAME [CHECK]: one generated policy (DIR/fcarg; DIR/baseonly: compared
#   with --base-only / oracle -b) looked up on QUERIES by the oracle and by fclabel, compared under
#   NAME. CHECK, a command, is run with DIR once the oracle has answered (DIR/oracle.out). The
#   first policy that labels anything becomes the sanity reference ($sane, DIR/sanity.ref).
#   Returns 0 when this policy labels anything, 1 when it labels nothing.
one_policy() {
	_o_d=$1 _o_q=$2 _o_fc=$(cat "$1/fcarg") _o_labels=1
	if [ -e "$_o_d/baseonly" ]; then _o_oo=-b _o_fo=--base-only; else _o_oo="" _o_fo=""; fi
	oracle "$_o_oo" "$_o_fc" "$_o_q" "$_o_d/oracle.out"
	[ -z "${4:-}" ] || $4 "$_o_d"
	if grep -qv '^<<' "$_o_d/oracle.out"; then
		_o_labels=0
		[ -n "$sane" ] || { sane=$_o_d; cp "$_o_d/oracle.out" "$_o_d/sanity.ref"; }
	fi
	_o_ok=0
	ours "$_o_fo" "$_o_fc" "$_o_q" "$_o_d/ours.out" || _o_ok=1
	if compare "$3${_o_fo:+ $_o_fo}" "$_o_fc" "$_o_q" "$_o_d/ours.out" "$_o_d/oracle.out" "$_o_ok"
	then
		rm -f "$_o_d/ours.out" "$_o_d/oracle.out"
	fi
	return $_o_labels
}

# finish NAME SECONDS: the closing verdict.
finish() {
	if [ "$DIFF_FAILED" -ne 0 ]; then
		say "" "first differences (mode, path: fclabel's answer, libselinux 3.4's), from $DIFF_FIRST:"
		[ -f "$OUT/first-diffs" ] && cat "$OUT/first-diffs"
		say "FAIL $1: $DIFF_FAILED comparison(s) differ; $DIFF_QUERIES queries compared in ${2}s (seed $FC_SEED)"
		exit 1
	fi
	say "OK $1: $DIFF_QUERIES queries compared, fclabel == libselinux 3.4, in ${2}s (seed $FC_SEED)"
	exit 0
}
