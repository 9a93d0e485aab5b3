# The built binaries define no symbol that a shared library they link exports: ours are
# prefixed (imgfmt_sparse_manager, not libext2fs's sparse_io_manager), so that neither a reader
# nor a static link can take one for the other. Data symbols that the executable only copies
# from a library (R_X86_64_COPY relocations, e.g. unix_io_manager) are not ours and are left out.
. "$TOP/tests/lib.sh"
command -v nm >/dev/null 2>&1 || skip "nm is not installed (binutils)"
command -v readelf >/dev/null 2>&1 || skip "readelf is not installed (binutils)"
[ -x "$FCLABEL" ] || skip "fclabel is not built"
libs=$(ldd "$FCLABEL" | awk '$3 ~ /^\// {print $3}')
[ -n "$libs" ] || skip "ldd lists no shared libraries for $FCLABEL"
readelf -rW "$FCLABEL" | awk '/_COPY/ {print $5}' | sed 's/@.*//' | sort -u >"$OUT/copied"
nm --defined-only "$FCLABEL" | awk '$2 ~ /[TDBRVW]/ {print $3}' | sort -u >"$OUT/defined"
comm -23 "$OUT/defined" "$OUT/copied" >"$OUT/ours"
n=$(wc -l <"$OUT/ours")
[ "$n" -gt 50 ] && ok "fclabel defines $n symbols of its own" || bad "only $n symbols found in fclabel"
grep -qx imgfmt_sparse_manager "$OUT/ours" && ok "imgfmt_sparse_manager is ours" ||
	bad "imgfmt_sparse_manager not among fclabel's symbols"
for lib in $libs; do
	nm -D --defined-only "$lib" 2>/dev/null | awk '{print $3}' | sed 's/@.*//' | sort -u >"$OUT/lib"
	clash=$(comm -12 "$OUT/ours" "$OUT/lib" | tr '\n' ' ')
	if [ -z "$clash" ]; then
		ok "no symbol of $(basename "$lib") defined by fclabel"
	else
		bad "fclabel defines symbols that $(basename "$lib") exports: $clash"
	fi
done
# the check itself can fail: a symbol we know libext2fs exports is found in its list
lib=$(echo "$libs" | grep libext2fs | head -n 1)
if [ -n "$lib" ]; then
	nm -D --defined-only "$lib" | grep -qw sparse_io_manager &&
		ok "libext2fs exports sparse_io_manager (the name ours must not take)" ||
		ok "this libext2fs does not export sparse_io_manager"
fi
finish
