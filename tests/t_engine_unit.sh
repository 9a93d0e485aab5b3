# The labeling engine through a fake target (tests/engineunit.c, as SQLite's test VFS): a tree
# held in memory that records every write. Plain label, dry run and check; hard links; digests;
# relabel's pruning; the device's walks of /data (--as-device); a write, a refusal and an I/O
# error injected. No image is built.
. "$TOP/tests/lib.sh"
[ -x "$TOP/tests/engineunit" ] || make -s -C "$TOP" tests/engineunit >/dev/null 2>&1 ||
	skip "cannot build tests/engineunit"
"$TOP/tests/engineunit" >"$OUT/unit.out" 2>"$OUT/unit.err"
rc=$?
cat "$OUT/unit.out"
n=$(grep -c '^ok' "$OUT/unit.out")
[ "$n" -ge 130 ] || bad "only $n checks passed"
grep -q '^FAIL' "$OUT/unit.out" && bad "$(grep -c '^FAIL' "$OUT/unit.out") check(s) failed"
[ "$rc" -eq 0 ] || { cat "$OUT/unit.err"; bad "engineunit exited $rc"; }
finish
