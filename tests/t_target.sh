# The target stays the target (issue 30, case 7): another file moved over the image's path while
# a run works (a build step, another tool's copy renamed into place) is never destroyed, nor taken
# for the image. tests/killshim.c renames it there at a chosen moment: right after the run's first
# write (during the walk: found before the end), or just as the result is put in place
# (KILL_RENAME_ON=exchange: found by the rename itself). Then:
#   - a copy renamed over the image (128-byte inodes by default, --atomic), and a sparse image,
#     at both moments: exit 2, "IMAGE was replaced by another file during the run; nothing
#     written", the other file byte for byte as it was, no temporary file left beside it; the
#     same where the file system has no RENAME_EXCHANGE (renameat2 made to fail: the
#     check-then-rename fallback);
#   - the image moved away (the path names nothing at the end), at both moments: exit 2, nothing
#     created there, the moved image as it was;
#   - in place (the swap before the final flush, and during it): exit 2, naming it; the other
#     file byte for byte as it was;
#   - controls: the shim alone, and the fallback alone, change nothing of a normal run (exit 0,
#     labeled, no temporary file left).
. "$TOP/tests/imglib.sh"
need_image_tools
cd "$OUT" || exit 1
cc -shared -fPIC -O2 -o killshim.so "$TOP/tests/killshim.c" -ldl 2>/dev/null ||
	skip "no C compiler for tests/killshim.c"
# (under the sanitized runs: ASan lets a preloaded library come before its runtime)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
small_tree tree
small_policy fc
mkimg b128.img tree 8M -t ext4 -I 128 || finish
mkimg b256.img tree 8M -t ext4 -I 256 || finish
# the other file: another image (it is never opened, so any file would do)
mkdir -p otree && echo other >otree/other
mkimg other.orig otree 4M -t ext4 -I 256 || finish
have_simg=no
command -v img2simg >/dev/null && img2simg b256.img s.orig >/dev/null 2>&1 && have_simg=yes

# fresh NAME BASE: the folder d.NAME holding img (a copy of BASE) and other.img, nothing else
fresh() {
	rm -rf "d.$1" && mkdir "d.$1" && cp "$2" "d.$1/img" && cp other.orig "d.$1/other.img"
}
# swapped NAME BASE WHEN [fclabel label options]: a run over d.NAME/img (a copy of BASE) during
# which d.NAME/other.img is renamed over it (WHEN: write, after the first write; exchange, as the
# result is put in place); the exit status in $rc, stderr in $OUT/NAME.err
swapped() {
	_n=$1 _b=$2 _when=$3
	shift 3
	fresh "$_n" "$_b"
	KILL_AFTER_WRITES=1 KILL_RENAME_ON=$_when KILL_RENAME_FROM="d.$_n/other.img" \
		KILL_RENAME_TO="d.$_n/img" LD_PRELOAD=$OUT/killshim.so \
		"$FCLABEL" label "d.$_n/img" -S fc "$@" >"$_n.out" 2>"$_n.err"
	rc=$?
}
# judged NAME WHAT: the run refused the swapped file, which is as it was
judged() {
	expect_eq "$2: exit 2" "$rc" 2
	expect_match "$2: says the image was replaced, nothing written" "$(cat "$1.err")" \
		"*d.$1/img was replaced by another file during the run*nothing written*"
	expect_eq "$2: the file now at the path is the other one, byte for byte" \
		"$(cmp -s "d.$1/img" other.orig && echo same)" same
	expect_eq "$2: no temporary file left beside it" "$(ls -A "d.$1")" img
}

for when in write exchange; do
	swapped copy-$when b128.img $when
	judged copy-$when "128-byte inodes (a copy), swapped at the $when"
	swapped atomic-$when b256.img $when --atomic
	judged atomic-$when "--atomic, swapped at the $when"
	if [ $have_simg = yes ]; then
		swapped sparse-$when s.orig $when
		judged sparse-$when "a sparse image, swapped at the $when"
	fi
done
[ $have_simg = yes ] ||
	echo "img2simg (android-sdk-libsparse-utils) is not installed: the sparse cases skipped"
KILL_NO_EXCHANGE=1 swapped noexch b128.img exchange
judged noexch "a copy, no RENAME_EXCHANGE (check, then rename), swapped at the rename"
# in place: 256-byte inodes (the block cache holds the writes: the swap comes as they are
# flushed at the end) and 128-byte inodes (no cache: it comes after the first label written)
for k in "inplace b256.img" "inplace128 b128.img"; do
	set -- $k
	swapped $1 $2 write --in-place
	expect_eq "$1: exit 2" "$rc" 2
	expect_match "$1: says the image was replaced, and where the labels went" "$(cat $1.err)" \
		"*d.$1/img was replaced by another file during the run: what was written went to the file that was opened*"
	expect_eq "$1: the other file is byte for byte as it was" \
		"$(cmp -s d.$1/img other.orig && echo same)" same
done

# the image moved away: nothing is put at the path
for when in write exchange; do
	fresh moved-$when b128.img
	KILL_AFTER_WRITES=1 KILL_RENAME_ON=$when KILL_RENAME_FROM=d.moved-$when/img \
		KILL_RENAME_TO=d.moved-$when/away.img LD_PRELOAD=$OUT/killshim.so \
		"$FCLABEL" label d.moved-$when/img -S fc >moved.out 2>moved.err
	expect_eq "moved away at the $when (a copy): exit 2" "$?" 2
	expect_match "moved away at the $when: says so, nothing written" "$(cat moved.err)" \
		"*d.moved-$when/img was moved or removed during the run*nothing written*"
	expect_eq "moved away at the $when: nothing is created at the path, the moved image is as it was" \
		"$(ls -A d.moved-$when | tr '\n' ' ')$(cmp -s d.moved-$when/away.img b128.img && echo same)" \
		"away.img other.img same"
done

# controls: the shim, and the fallback, leave a normal run as it was
for k in "shim b128.img" "shim-inplace b256.img" "noexch-ok b128.img"; do
	set -- $k
	fresh "$1" "$2"
	rm "d.$1/other.img"
	env $([ "$1" = noexch-ok ] && echo KILL_NO_EXCHANGE=1) LD_PRELOAD=$OUT/killshim.so \
		"$FCLABEL" label "d.$1/img" -S fc >"$1.out" 2>"$1.err"
	expect_eq "control $1: exit 0" "$?" 0
	"$FCLABEL" check "d.$1/img" -S fc >/dev/null 2>&1
	expect_eq "control $1: labeled" "$?" 0
	expect_eq "control $1: no temporary file left" "$(ls -A "d.$1")" img
done
finish
