# The built binaries define no symbol that a library they link exports: ours are prefixed
# (imgfmt_sparse_manager, not libext2fs's sparse_io_manager), so that neither a reader nor a
# link can take one for the other. "Ours" are what fclabel's own objects define (beside the
# binary: the libraries but libc are linked in from their archives where those exist, so the
# binary holds their symbols too); a library is each shared one ldd lists and each archive of
# the Makefile's list (make -s print-static-libs) that the binary does not take shared.
. "$TOP/tests/lib.sh"
command -v nm >/dev/null 2>&1 || skip "nm is not installed (binutils)"
[ -x "$FCLABEL" ] || skip "fclabel is not built"
build=$(dirname "$FCLABEL")
objs=$(cd "$build" && make -s --no-print-directory print-lib-srcs | tr ' ' '\n' | sed -n 's/\.c$/.o/p')
[ -n "$objs" ] || bad "make print-lib-srcs lists no sources"
(cd "$build" && nm -g --defined-only $objs labeler/cli/main.o) 2>/dev/null |
	awk '$2 ~ /[TDBRVW]/ {print $3}' | sort -u >"$OUT/ours"
n=$(wc -l <"$OUT/ours")
[ "$n" -gt 50 ] && ok "fclabel defines $n symbols of its own" || bad "only $n symbols found in fclabel"
grep -qx imgfmt_sparse_manager "$OUT/ours" && ok "imgfmt_sparse_manager is ours" ||
	bad "imgfmt_sparse_manager not among fclabel's symbols"
shared=$(ldd "$FCLABEL" | awk '$3 ~ /^\// {print $3}')
archives=$(for a in $(cd "$build" && make -s --no-print-directory print-static-libs); do
	n=$(basename "$a" .a)
	echo "$shared" | grep -q "/$n\.so" || echo "$a"
done)
[ -n "$shared$archives" ] || skip "no library found for $FCLABEL"
# exports LIB: the names LIB exports (a shared library's dynamic symbols, an archive's globals)
exports() {
	case $1 in
	*.a) nm -g --defined-only "$1" 2>/dev/null | awk '$2 ~ /[TDBRVW]/ {print $3}' ;;
	*) nm -D --defined-only "$1" 2>/dev/null | awk '{print $3}' | sed 's/@.*//' ;;
	esac | sort -u
}
for lib in $shared $archives; do
	exports "$lib" >"$OUT/lib"
	clash=$(comm -12 "$OUT/ours" "$OUT/lib" | tr '\n' ' ')
	if [ -z "$clash" ]; then
		ok "no symbol of $(basename "$lib") defined by fclabel"
	else
		bad "fclabel defines symbols that $(basename "$lib") exports: $clash"
	fi
done
# the check itself can fail: a symbol we know libext2fs exports is found in its list
lib=$(printf '%s\n' $shared $archives | grep libext2fs | head -n 1)
if [ -n "$lib" ]; then
	exports "$lib" | grep -qx sparse_io_manager &&
		ok "libext2fs exports sparse_io_manager (the name ours must not take)" ||
		ok "this libext2fs does not export sparse_io_manager"
else
	bad "libext2fs neither shared nor an archive of fclabel's"
fi
finish
