#!/bin/sh
# Differential test on the reference policy: every answer of `fclabel lookup` must be byte for
# byte libselinux 3.4's (tests/oracle).
# Policy: $SHARED/refpolicy/file_contexts, else /etc/selinux/default/contexts/files/file_contexts;
# given as ONE file, so .homedirs (and .local) are read and .subs/.subs_dist applied.
# Queries ($OUT/queries, NUL-separated "MODE PATH"): this machine's own tree (find / -xdev, with
# each path's real mode; a stratified sample), every mode (0 and the seven types, plus odd values)
# on a sample, paths made from each spec's regex, and the homedirs/subs area. Then a smaller
# sample again with --base-only (oracle -b).
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/difflib.sh"

fc=$SHARED/refpolicy/file_contexts
[ -f "$fc" ] || fc=/etc/selinux/default/contexts/files/file_contexts
[ -f "$fc" ] || skip "no refpolicy file_contexts (neither \$SHARED/refpolicy nor /etc/selinux/default)"
need_tools
start=$(date +%s)
say "policy: $fc"

# this machine's tree, with modes: "%m %y %p\0" (permissions, type letter, path)
find / -xdev \( -path /proc -o -path /sys -o -path "$TOP/tests/out" -o -path "$OUT" \) -prune \
	-o -printf '%m %y %p\000' >"$OUT/tree" 2>/dev/null
[ -s "$OUT/tree" ] || die "find / gave nothing"
"$PY" "$GEN" refpolicy --seed "$FC_SEED" --fc "$fc" --tree "$OUT/tree" --out "$OUT" \
	--min-queries "${FC_DIFF_REFPOLICY_QUERIES:-300000}" || die "tests/gen_fc.py refpolicy failed"
rm -f "$OUT/tree"

# known answers: the oracle is wired as the tests assume (homedirs only without -b, subs always)
printf '040700 /root/.ssh\0000100755 /usr/bin/ls\0000100755 /bin/ls\000' >"$OUT/known"
"$ORACLE" -0 "$fc" <"$OUT/known" >"$OUT/known.full"
"$ORACLE" -b -0 "$fc" <"$OUT/known" >"$OUT/known.base"
printf '%s\n' "oracle, full:      $(tr '\n' ' ' <"$OUT/known.full")" "oracle, base-only: $(tr '\n' ' ' <"$OUT/known.base")"
sed -n 1p "$OUT/known.full" | grep -q ':ssh_home_t:' || die "sanity: oracle: /root/.ssh is not ssh_home_t"
sed -n 1p "$OUT/known.base" | grep -q ':ssh_home_t:' && die "sanity: oracle -b: /root/.ssh is ssh_home_t"
sed -n 2,3p "$OUT/known.base" | grep -c ':bin_t:' | grep -qx 2 || die "sanity: oracle: /usr/bin/ls, /bin/ls are not bin_t"
ok=0
ours "" "$fc" "$OUT/known" "$OUT/known.ours" || ok=1
compare "refpolicy known answers" "$fc" "$OUT/known" "$OUT/known.ours" "$OUT/known.full" "$ok"

# the full form: FILE + .homedirs + .local + .subs + .subs_dist
oracle "" "$fc" "$OUT/queries" "$OUT/oracle.out" parallel
sanity "$OUT/queries" "$OUT/oracle.out"
ok=0
ours "" "$fc" "$OUT/queries" "$OUT/ours.out" || ok=1
compare refpolicy "$fc" "$OUT/queries" "$OUT/ours.out" "$OUT/oracle.out" "$ok"

# --base-only: without .homedirs and .local
oracle -b "$fc" "$OUT/queries_base" "$OUT/oracle_base.out" parallel
sanity "$OUT/queries_base" "$OUT/oracle_base.out"
ok=0
ours --base-only "$fc" "$OUT/queries_base" "$OUT/ours_base.out" || ok=1
compare "refpolicy --base-only" "$fc" "$OUT/queries_base" "$OUT/ours_base.out" "$OUT/oracle_base.out" "$ok"

finish t_diff_refpolicy $(( $(date +%s) - start ))
