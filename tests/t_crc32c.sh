# ext4's crc32c as fclabel computes it (imgfmt/crc32c.c: the CPU's instruction where it has one,
# a table in software where not): the standard check values, the instruction and the table
# alike on every length and alignment (tests/crcunit.c); and libext2fs's own checksums (inodes,
# directory blocks, journal) bound to it, not to the library's slower copy. (Whether the
# checksums written are right, e2fsck -fn says of every image the other tests write.)
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
# a dynamic fclabel: the library's calls bind to fclabel's definition
if ldd "$TOP/fclabel" 2>/dev/null | grep -q libext2fs; then
	LD_BIND_NOW=1 LD_DEBUG=bindings "$TOP/fclabel" --version >/dev/null 2>"$OUT/bind.err"
	grep -q "libext2fs.*to .*fclabel.*\`ext2fs_crc32c_le'" "$OUT/bind.err" ||
		bad "libext2fs's ext2fs_crc32c_le calls are not bound to fclabel's: $(grep crc32c "$OUT/bind.err")"
fi
finish
