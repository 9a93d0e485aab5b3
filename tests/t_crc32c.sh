# ext4's crc32c as fclabel computes it (imgfmt/crc32c.c: the CPU's instruction where it has one,
# a table in software where not): the standard check values, the instruction and the table
# alike on every length and alignment (tests/crcunit.c). (Whether the checksums written with it
# are right, e2fsck -fn says of every image the other tests write.)
. "$TOP/tests/lib.sh"
[ -x "$TOP/tests/crcunit" ] || make -s -C "$TOP" tests/crcunit >/dev/null 2>&1 ||
	skip "cannot build tests/crcunit"
"$TOP/tests/crcunit" >"$OUT/unit.out" 2>"$OUT/unit.err"
rc=$?
cat "$OUT/unit.out"
n=$(grep -c '^ok' "$OUT/unit.out")
[ "$n" -ge 11 ] || bad "only $n checks passed"
grep -q '^FAIL' "$OUT/unit.out" && bad "$(grep -c '^FAIL' "$OUT/unit.out") check(s) failed"
[ "$rc" -eq 0 ] || { cat "$OUT/unit.err"; bad "crcunit exited $rc"; }
finish
