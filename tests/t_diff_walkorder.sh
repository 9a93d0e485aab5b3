#!/bin/sh
# Differential test of lookups in walk order: a directory's entries one after another, as a walk
# looks them up. fclabel keeps, per directory, what the lookups of its entries share (the key's
# directory part after the substitutions, the prefix trees' walks, the candidates that a name
# can still make match: fcontexts/dirmemo.c); the other differential tests ask in random order,
# where that memo is mostly made afresh. Every answer must be byte for byte libselinux 3.4's
# (tests/oracle):
#  - random policies (tests/gen_fc.py adversarial, with .subs and .subs_dist), their queries
#    sorted by path, with more names in each directory (odd ones: "\n", "x\n", ...; and the
#    policy's literal runs in names, so that a name starts with, ends with or holds the run a
#    spec needs);
#  - refpolicy on this machine's tree in find's order (a walk's), with more names likewise.
#   FC_WALK_POLICIES  how many random policies (default 120)
#   FC_WALK_TREE      how many of the tree's paths (default 120000)
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/difflib.sh"

need_tools
start=$(date +%s)
npol=${FC_WALK_POLICIES:-120}

# the policy's files, for the names made of its regexes (as fclabel reads FC: with .homedirs and
# .local when FC is one file)
policy_files() {
	case $1 in
	*,*) printf '%s' "$1" ;;
	*) printf '%s,%s.homedirs,%s.local' "$1" "$1" "$1" ;;
	esac
}

say "generating $npol random policies (seed $FC_SEED) in $OUT/adv"
"$PY" "$GEN" adversarial --seed "$FC_SEED" --policies "$npol" --queries 1500 --out "$OUT/adv" \
	>/dev/null || die "tests/gen_fc.py adversarial failed"
sane=""
for d in "$OUT"/adv/p*; do
	[ -d "$d" ] || continue
	"$PY" "$GEN" walkorder --seed "$FC_SEED" --queries "$d/queries" --out "$d/walk" \
		--fc "$(policy_files "$(cat "$d/fcarg")")" --extra 6 >/dev/null ||
		die "tests/gen_fc.py walkorder failed in $d"
	one_policy "$d" "$d/walk" "walk ${d##*/}" || :
done
[ -n "$sane" ] || die "sanity: no random policy labels anything: the generator is broken"
sanity "$sane/walk" "$sane/sanity.ref"

fc=$SHARED/refpolicy/file_contexts
[ -f "$fc" ] || fc=/etc/selinux/default/contexts/files/file_contexts
if [ -f "$fc" ]; then
	# this machine's tree in find's order (a directory's entries, each subdirectory's walk
	# between them), the first FC_WALK_TREE paths
	find / -xdev \( -path /proc -o -path /sys -o -path "$TOP/tests/out" -o -path "$OUT" \) -prune \
		-o -printf '%m %y %p\000' 2>/dev/null | head -z -n "${FC_WALK_TREE:-120000}" >"$OUT/tree"
	[ -s "$OUT/tree" ] || die "find / gave nothing"
	"$PY" "$GEN" walkorder --seed "$FC_SEED" --tree --keep-order --queries "$OUT/tree" \
		--out "$OUT/refwalk" --fc "$(policy_files "$fc")" --extra 3 ||
		die "tests/gen_fc.py walkorder failed on the tree"
	rm -f "$OUT/tree"
	oracle "" "$fc" "$OUT/refwalk" "$OUT/refwalk.oracle" parallel
	sanity "$OUT/refwalk" "$OUT/refwalk.oracle"
	ok=0
	ours "" "$fc" "$OUT/refwalk" "$OUT/refwalk.ours" || ok=1
	compare "refpolicy in walk order" "$fc" "$OUT/refwalk" "$OUT/refwalk.ours" "$OUT/refwalk.oracle" "$ok"
else
	say "no refpolicy file_contexts: its walk left out"
fi
finish t_diff_walkorder $(( $(date +%s) - start ))
