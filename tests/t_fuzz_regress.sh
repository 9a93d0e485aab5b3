# The fuzz harnesses (tests/fuzz/) without libFuzzer: each built with cc and ASan/UBSan (when the
# compiler has them) and a plain main() (tests/fuzz/driver.c), replaying its seed corpus
# fixtures/fuzz/HARNESS/ and every reproducer in fixtures/fuzz/crashes/ (each through every
# harness). Any crash, sanitizer report or leak fails the test. Reproducers of bugs not fixed
# yet wait in fixtures/fuzz/crashes/open/: they are replayed and reported, not failed on.
. "$TOP/tests/lib.sh"
cd "$TOP" || exit 1
CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || skip "no C compiler ($CC)"
pc() { pkg-config "$@" 2>/dev/null; }
pcre_cflags=$(pc --cflags libpcre2-8)
libs="$(pc --libs libpcre2-8 || echo -lpcre2-8) $(pc --libs nettle || echo -lnettle) $(pc --libs ext2fs com_err blkid || echo -lext2fs -lcom_err -lblkid)"
pc --exists libsepol && libs="$libs $(pc --libs libsepol)" # labeler/policy/, when it is linked in
libs="$libs $(pc --libs liblz4 || echo -llz4) $(pc --libs liblzma || echo -llzma)"
libs="$libs $(pc --libs libzstd || echo -lzstd) -lz -lpthread"

# sanitizers, when this compiler has them
printf 'int main(void){return 0;}\n' >"$OUT/probe.c"
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
# shellcheck disable=SC2086
if ! "$CC" $san -o "$OUT/probe" "$OUT/probe.c" >/dev/null 2>&1 || ! "$OUT/probe"; then
	echo "note: $CC has no ASan/UBSan here; replaying without sanitizers"
	san=""
fi
cflags="-O1 -g -D_GNU_SOURCE -Ifcontexts -Iimgfmt -Iandroid -Ilabeler $pcre_cflags $san"

# the library, apart from the normal objects
mkdir -p "$OUT/obj"
objs=""
for src in $(make -s --no-print-directory print-lib-srcs); do
	o=$OUT/obj/$(echo "$src" | tr / _ | sed 's/\.c$/.o/')
	# shellcheck disable=SC2086
	"$CC" $cflags -c -o "$o" "$src" 2>"$OUT/cc.err" || { cat "$OUT/cc.err"; bad "compiling $src"; finish; }
	objs="$objs $o"
done
# shellcheck disable=SC2086
ar rcs "$OUT/libfuzzlib.a" $objs || { bad "ar"; finish; }

printf 'leak:libselinux.so\n' >"$OUT/lsan.supp" # libselinux 3.4's own leaks
export LSAN_OPTIONS="suppressions=$OUT/lsan.supp:print_suppressions=0"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# the harnesses' scratch files (tests/fuzz/fuzzutil.c), kept here when one crashes
mkdir -p "$OUT/tmp"
export FUZZ_TMPDIR="$OUT/tmp"
# fuzz_image: every label judged by e2fsck -fn, before and after
export FUZZ_E2FSCK=1
tmo=""
command -v timeout >/dev/null 2>&1 && tmo="timeout 900"

harnesses=""
for h in fuzz_parse fuzz_lookup_diff fuzz_image fuzz_sparse fuzz_seapp fuzz_erofs; do
	extra=""
	if [ "$h" = fuzz_lookup_diff ]; then
		if ! pc --exists libselinux; then
			echo "note: no libselinux (libselinux1-dev): $h not replayed"
			continue
		fi
		extra=$(pc --libs libselinux)
	fi
	# shellcheck disable=SC2086
	if ! "$CC" $cflags -o "$OUT/$h" "tests/fuzz/$h.c" tests/fuzz/driver.c "$OUT/libfuzzlib.a" \
		$extra $libs 2>"$OUT/$h.cc.err"; then
		cat "$OUT/$h.cc.err"
		bad "building $h"
		continue
	fi
	harnesses="$harnesses $h"
done

# replay NAME HARNESS INPUT...: the harness must exit 0 with no sanitizer report
replay() {
	_name=$1 _h=$2
	shift 2
	$tmo "$OUT/$_h" "$@" >"$OUT/replay.out" 2>"$OUT/replay.err"
	_rc=$?
	if [ $_rc -eq 0 ] && ! grep -q 'ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:' "$OUT/replay.err"; then
		return 0
	fi
	echo "--- $_name through $_h: exit $_rc"
	grep -v '^run ' "$OUT/replay.err" | head -n 40
	return 1
}

for h in $harnesses; do
	n=$(ls "fixtures/fuzz/$h" 2>/dev/null | wc -l)
	if [ "$n" -eq 0 ]; then
		bad "$h: no seeds in fixtures/fuzz/$h"
		continue
	fi
	if replay "seeds" "$h" "fixtures/fuzz/$h"; then ok "$h: $n seeds"; else bad "$h: seeds"; fi
done
for f in fixtures/fuzz/crashes/*; do
	[ -f "$f" ] || continue
	for h in $harnesses; do
		if replay "$f" "$h" "$f"; then ok "$h: $f"; else bad "$h: $f crashes"; fi
	done
done
for f in fixtures/fuzz/crashes/open/*; do
	[ -f "$f" ] || continue
	for h in $harnesses; do
		case ${f##*/} in "$h"-*) ;; *) continue ;; esac
		# at most 20 s each: some of these are hangs
		saved=$tmo
		[ -n "$tmo" ] && tmo="timeout 20"
		replay "$f" "$h" "$f" >/dev/null
		r=$?
		tmo=$saved
		if [ $r -eq 0 ]; then
			echo "note: $f (open) no longer fails $h: move it to fixtures/fuzz/crashes/"
		else
			echo "note: $f (open, not fixed yet) still fails $h (exit $_rc)"
		fi
	done
done
finish
