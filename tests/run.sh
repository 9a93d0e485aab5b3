#!/bin/sh
# Runs every tests/t_*.sh (or those named as arguments). A test exits 0 to pass, 77 to skip (its
# last line of output says why), anything else to fail. Ends with "N passed, N failed, N skipped".
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
export TOP="$top" FCLABEL="$top/fclabel" SHARED="${SHARED:-$top/../shared/data}"
export FC_SEED="${FC_SEED:-20261203}"
pass=0 fail=0 skip=0
tests=${*:-$(ls tests/t_*.sh)}
for t in $tests; do
	name=$(basename "$t" .sh)
	export OUT="$top/tests/out/$name"
	rm -rf "$OUT"; mkdir -p "$OUT"
	start=$(date +%s)
	sh "$t" >"$OUT/log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	case $rc in
	0) pass=$((pass + 1)); echo "PASS $name (${secs}s)" ;;
	77) skip=$((skip + 1)); echo "SKIP $name: $(tail -n 1 "$OUT/log")" ;;
	*) fail=$((fail + 1)); echo "FAIL $name (exit $rc, ${secs}s); last lines of $OUT/log:"
	   tail -n 25 "$OUT/log" | sed 's/^/    /' ;;
	esac
done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
