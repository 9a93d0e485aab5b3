# Helpers for the hand-written tests (sourced). POSIX sh.
: "${TOP:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${FCLABEL:=$TOP/fclabel}"
: "${OUT:=$(mktemp -d)}"
# the reference (libselinux 3.4): the sanitized runs use the plain build of it, since it is not
# our code that a sanitizer would check there, and libselinux under ASan's allocator is slow
: "${ORACLE:=$TOP/tests/oracle}"
fails=0
ok() { printf 'ok   %s\n' "$*"; }
bad() { printf 'FAIL %s\n' "$*"; fails=$((fails + 1)); }
skip() { printf '%s\n' "$*"; exit 77; }
# expect_eq WHAT GOT WANT
expect_eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got [$2] want [$3]"; fi
}
# expect_match WHAT TEXT GLOB
expect_match() {
	case $2 in $3) ok "$1" ;; *) bad "$1: [$2] does not match [$3]" ;; esac
}
# reports_valid FILE...: fclabel JSON reports checked against man/fclabel-report.schema.json;
# prints the validator's last line ("N reports, M bad"; or why it could not run)
reports_valid() {
	_py=python3
	"$_py" -c 'import jsonschema' 2>/dev/null || _py=/usr/bin/python3
	"$_py" "$TOP/tests/validate_reports.py" "$TOP/man/fclabel-report.schema.json" -f "$@" 2>&1 | tail -n 1
}
# unit_run PROG MIN [ARG...]: a C unit-test program of tests/ (built if missing) that prints one
# "ok"/"FAIL" line a check and exits non-zero on a failure: its lines shown, and fewer than MIN
# "ok" lines (checks that did not run), any FAIL line or its exit status each count as a failure
unit_run() {
	_prog=$1 _min=$2
	shift 2
	[ -x "$TOP/tests/$_prog" ] || make -s -C "$TOP" "tests/$_prog" >/dev/null 2>&1 ||
		skip "cannot build tests/$_prog"
	"$TOP/tests/$_prog" "$@" >"$OUT/unit.out" 2>"$OUT/unit.err"
	_rc=$?
	cat "$OUT/unit.out"
	_n=$(grep -c '^ok' "$OUT/unit.out")
	[ "$_n" -ge "$_min" ] || bad "only $_n checks of $_prog passed (at least $_min expected)"
	grep -q '^FAIL' "$OUT/unit.out" && bad "$(grep -c '^FAIL' "$OUT/unit.out") check(s) of $_prog failed"
	[ "$_rc" -eq 0 ] || { cat "$OUT/unit.err"; bad "$_prog exited $_rc"; }
}
finish() { [ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }; exit 0; }
need_oracle() {
	if [ ! -x "$ORACLE" ]; then
		make -s -C "$TOP" tests/oracle >/dev/null 2>&1 || skip "cannot build tests/oracle (libselinux)"
		ORACLE=$TOP/tests/oracle
	fi
}

# ---- a cache the plain and the sanitized runs of a test share ($FC_CACHE, set by the runner) ----
# What goes in is the result of a pure step that is not fclabel's (an image made by mke2fs and
# debugfs from a tree, a dump of labels read with debugfs, a verdict of the image checker), keyed
# by the digest of everything the step reads: the sanitized run, whose fclabel wrote the same
# bytes, takes the answer instead of working it out again; bytes that differ miss the cache.

# memo_key ARG...: a key for these arguments; one that names a file counts by its content: an
# image (*.img) byte for byte, any other with the test's own folders taken out ($OUT and $TOP:
# the plain and the sanitized run have their own), and fclabel's timings ("0.04 s",
# "seconds": 0.040, "claims_seconds": 0.002).
memo_key() {
	for _m in "$@"; do
		if [ -f "$_m" ] && case $_m in *.img | *.simg) true ;; *) false ;; esac; then
			printf 'b:'
			sha1sum <"$_m" | cut -c1-40
		elif [ -f "$_m" ]; then
			printf 'f:'
			sed "s|$OUT|@OUT@|g; s|$TOP|@TOP@|g; s/[0-9][0-9.]* s\$//; s/\"[a-z_]*seconds\": [0-9.]*//g" "$_m" |
				sha1sum | cut -c1-40
		else
			printf 's:%s\n' "$_m" | sed "s|$OUT|@OUT@|g; s|$TOP|@TOP@|g"
		fi
	done | sha1sum | cut -c1-40
}

# memo_get KEY OUT...: copies the cached files of KEY to OUT..., 0 when all were there
memo_get() {
	[ -n "${FC_CACHE:-}" ] || return 1
	_k=$1
	shift
	_i=0
	for _o in "$@"; do [ -f "$FC_CACHE/$_k.$_i" ] || return 1; _i=$((_i + 1)); done
	_i=0
	for _o in "$@"; do cp --sparse=always "$FC_CACHE/$_k.$_i" "$_o" || return 1; _i=$((_i + 1)); done
	return 0
}

# memo_put KEY FILE...: keeps the files under KEY
memo_put() {
	[ -n "${FC_CACHE:-}" ] || return 0
	mkdir -p "$FC_CACHE"
	_k=$1
	shift
	_i=0
	for _o in "$@"; do
		cp --sparse=always "$_o" "$FC_CACHE/$_k.$_i.$$" && mv "$FC_CACHE/$_k.$_i.$$" "$FC_CACHE/$_k.$_i"
		_i=$((_i + 1))
	done
}
