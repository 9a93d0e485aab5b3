#!/bin/sh
# Differential test on many small random policies (tests/gen_fc.py adversarial): every answer of
# `fclabel lookup` must be byte for byte libselinux 3.4's (tests/oracle).
#   FC_SEED           seed (tests/run.sh sets 20261203)
#   FC_DIFF_POLICIES  how many policies (default 300)
#   FC_DIFF_QUERIES   queries per policy (default 2000)
# Each policy is in $OUT/adv/pNNNN/: file_contexts (or part1..3 read as one concatenation),
# sometimes .homedirs/.local/.subs/.subs_dist, `fcarg` (the -S argument), `baseonly` (compared
# with --base-only / oracle -b), `queries` (NUL-separated "MODE PATH"). To replay one policy:
#   tests/oracle [-b] -0 "$(cat DIR/fcarg)" <DIR/queries
#   ./fclabel lookup -S "$(cat DIR/fcarg)" [--base-only] --batch -0 <DIR/queries
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/difflib.sh"

need_tools
start=$(date +%s)
npol=${FC_DIFF_POLICIES:-300}
nq=${FC_DIFF_QUERIES:-2000}
say "generating $npol random policies (seed $FC_SEED, $nq queries each) in $OUT/adv"
"$PY" "$GEN" adversarial --seed "$FC_SEED" --policies "$npol" --queries "$nq" --out "$OUT/adv" ||
	die "tests/gen_fc.py adversarial failed"

# the oracle answered every query, and failed only the relative paths (or the generator wrote a
# regex PCRE2 rejects)
answered() {
	[ "$(nlines "$1/oracle.out")" -eq "$(nrec "$1/queries")" ] ||
		die "tests/oracle gave $(nlines "$1/oracle.out") answers for $(nrec "$1/queries") queries in $1"
	[ "$(grep -c '^<<error>>$' "$1/oracle.out")" -eq "$(cat "$1/nrel")" ] ||
		die "generator bug: libselinux fails lookups of absolute paths in $1 (a regex PCRE2 rejects?)"
}

labeled=0 sane=""
for d in "$OUT"/adv/p*; do
	[ -d "$d" ] || continue
	one_policy "$d" "$d/queries" "${d##*/}" answered && labeled=$((labeled + 1))
done
[ "$labeled" -gt $((npol / 2)) ] ||
	die "sanity: only $labeled of $npol policies label anything: the generator is broken"
# the comparison itself can fail
sanity "$sane/queries" "$sane/sanity.ref"
finish t_diff_adversarial $(( $(date +%s) - start ))
