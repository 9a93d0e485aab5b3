# The android library's unit tests (tests/seappunit.c): seapp_contexts parsing and precedence,
# each selector and levelFrom, uid names and ranges, packages.list, app data paths, the device's
# walks of /data (a table: which walks reach, label and digest each entry), which policy files a
# device loads (seapp_find_policy), every seapp_contexts in ../shared/data. Expectations from
# reading Android's code (see the file).
. "$TOP/tests/lib.sh"
[ -x "$TOP/tests/seappunit" ] || make -s -C "$TOP" tests/seappunit >/dev/null 2>&1 ||
	skip "cannot build tests/seappunit"
cd "$TOP" || exit 1
SEAPP_DATA=$SHARED SEAPP_FIXTURES=$TOP/fixtures/seapp "$TOP/tests/seappunit" "$OUT/scratch" >"$OUT/unit.out" 2>&1
rc=$?
cat "$OUT/unit.out"
n=$(grep -c '^ok' "$OUT/unit.out")
[ "$n" -gt 300 ] || bad "only $n checks passed"
grep -q '^FAIL' "$OUT/unit.out" && bad "$(grep -c '^FAIL' "$OUT/unit.out") check(s) failed"
[ "$rc" -eq 0 ] || bad "seappunit exited $rc"
finish
