# fclabel under valgrind (memcheck) on image runs: label a 128-byte-inode image (EA blocks),
# check it, label a 256-byte one and its sparse form. Passes only with zero valgrind errors and
# no definite leaks.
. "$TOP/tests/lib.sh"
cd "$OUT" || exit 1
command -v valgrind >/dev/null || skip "valgrind is not installed"
FC=$TOP/fixtures/demo/file_contexts
mkdir tree
sh "$TOP/tests/mktree.sh" "$TOP/fixtures/demo/tree" tree
vg() { # NAME ARGS...
	name=$1; shift
	valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
		--log-file="vg.$name" "$FCLABEL" "$@" >out 2>err
	rc=$?
	# valgrind's own notes about ioctls it does not model (libext2fs asks loop devices about
	# their backing files) are not reports about fclabel
	grep -v -e 'Warning: noted but unhandled ioctl' -e 'could cause spurious value errors' \
		-e 'README_MISSING_SYSCALL_OR_IOCTL' "vg.$name" >"vg.$name.r"
	if [ $rc = 99 ] || [ -s "vg.$name.r" ]; then
		bad "$name: valgrind reports"
		head -n 40 "vg.$name.r"
	else
		expect_eq "$name: exit status" "$rc" "${want:-0}"
	fi
}
for isz in 128 256; do
	mke2fs -q -t ext4 -I $isz -d tree i$isz.img 16M >/dev/null 2>&1 || { bad "mke2fs $isz"; continue; }
done
vg label-128 label i128.img -S "$FC" -a /system
vg check-128 check i128.img -S "$FC" -a /system
vg relabel-128 relabel i128.img --from "$FC" --to "$FC" -a /system
vg label-256 label i256.img -S "$FC" -a /system --json j.json
if command -v img2simg >/dev/null; then
	mke2fs -q -t ext4 -d tree s.raw 16M >/dev/null 2>&1 && img2simg s.raw s.img
	vg label-sparse label s.img -S "$FC" -a /system
fi
want=2 vg bad-image label "$FC" -S "$FC"
finish
