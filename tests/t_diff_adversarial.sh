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

labeled=0 sane=""
for d in "$OUT"/adv/p*; do
	[ -d "$d" ] || continue
	fc=$(cat "$d/fcarg")
	if [ -e "$d/baseonly" ]; then oo=-b fo=--base-only; else oo="" fo=""; fi
	oracle "$oo" "$fc" "$d/queries" "$d/oracle.out"
	# the oracle must answer every query
	[ "$(nlines "$d/oracle.out")" -eq "$(nrec "$d/queries")" ] ||
		die "tests/oracle gave $(nlines "$d/oracle.out") answers for $(nrec "$d/queries") queries in $d"
	# libselinux fails only the relative paths, or the generator wrote a regex PCRE2 rejects
	[ "$(grep -c '^<<error>>$' "$d/oracle.out")" -eq "$(cat "$d/nrel")" ] ||
		die "generator bug: libselinux fails lookups of absolute paths in $d (a regex PCRE2 rejects?)"
	if grep -qv '^<<' "$d/oracle.out"; then
		labeled=$((labeled + 1))
		[ -n "$sane" ] || { sane=$d; cp "$d/oracle.out" "$d/sanity.ref"; }
	fi
	ok=0
	ours "$fo" "$fc" "$d/queries" "$d/ours.out" || ok=1
	if compare "${d##*/}${fo:+ $fo}" "$fc" "$d/queries" "$d/ours.out" "$d/oracle.out" "$ok"; then
		rm -f "$d/ours.out" "$d/oracle.out"
	fi
done
[ "$labeled" -gt $((npol / 2)) ] ||
	die "sanity: only $labeled of $npol policies label anything: the generator is broken"
# the comparison itself can fail
sanity "$sane/queries" "$sane/sanity.ref"
finish t_diff_adversarial $(( $(date +%s) - start ))
