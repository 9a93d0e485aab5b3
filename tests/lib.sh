# Helpers for the hand-written tests (sourced). POSIX sh.
: "${TOP:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${FCLABEL:=$TOP/fclabel}"
: "${OUT:=$(mktemp -d)}"
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
finish() { [ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }; exit 0; }
need_oracle() {
	if [ ! -x "$TOP/tests/oracle" ]; then
		make -s -C "$TOP" tests/oracle >/dev/null 2>&1 || skip "cannot build tests/oracle (libselinux)"
	fi
}
