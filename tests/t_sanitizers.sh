# The whole suite again, with fclabel and the test programs built with AddressSanitizer and
# UndefinedBehaviorSanitizer (make SANITIZE=1) in a copy of the tree; then one image run under
# valgrind. Passes only when every test passes and no sanitizer or valgrind report was written.
. "$TOP/tests/lib.sh"
[ -n "${FC_NO_SANITIZERS:-}" ] && skip "FC_NO_SANITIZERS is set"
cc -fsanitize=address,undefined -x c -o "$OUT/probe" - >/dev/null 2>&1 <<'EOF' ||
int main(void) { return 0; }
EOF
	skip "the C compiler cannot build with -fsanitize=address,undefined"

src=$OUT/src
mkdir -p "$src"
tar -C "$TOP" --exclude=./tests/out --exclude=./.git --exclude='*.o' --exclude='*.a' \
	--exclude=./fclabel -cf - . | tar -C "$src" -xf -
for b in oracle fcbench fcunit; do rm -f "$src/tests/$b"; done
if ! make -s -C "$src" SANITIZE=1 fclabel tests/oracle tests/fcbench tests/fcunit >"$OUT/build.log" 2>&1; then
	cat "$OUT/build.log"
	bad "sanitized build failed"
	finish
fi
ok "sanitized build (ASan + UBSan)"

reports=$OUT/reports
mkdir -p "$reports"
# a report is written to a file (and the process fails with a code no test expects)
export ASAN_OPTIONS="log_path=$reports/asan:exitcode=86:detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="log_path=$reports/ubsan:halt_on_error=1:exitcode=87:print_stacktrace=1"
export LSAN_OPTIONS="exitcode=86:suppressions=$TOP/tests/lsan.supp:print_suppressions=0"
tests=$(cd "$src" && ls tests/t_*.sh | grep -v -e t_sanitizers -e t_valgrind -e t_fuzz)
(cd "$src" && SHARED="$SHARED" sh tests/run.sh $tests) >"$OUT/suite.log" 2>&1
rc=$?
cat "$OUT/suite.log"
summary=$(tail -n 1 "$OUT/suite.log")
expect_match "suite under sanitizers: $summary" "$summary" "* passed, 0 failed*"
[ "$rc" -eq 0 ] || bad "suite under sanitizers exited $rc"
n=$(ls "$reports" | wc -l)
if [ "$n" -eq 0 ]; then
	ok "no sanitizer reports"
else
	bad "$n sanitizer report(s):"
	for f in "$reports"/*; do echo "== $f"; head -n 40 "$f"; done
fi
finish
