# Block devices: labeled through the device (size from the device), refused while mounted,
# checked read-only while mounted. Needs root and loop devices; skips otherwise.
. "$TOP/tests/lib.sh"
cd "$OUT" || exit 1
[ "$(id -u)" = 0 ] || skip "needs root for loop devices"
command -v losetup >/dev/null || skip "losetup is not installed"
FC=$TOP/fixtures/demo/file_contexts
mkdir -p tree/bin mnt && echo x >tree/bin/sh && echo y >tree/bin/toybox
mke2fs -q -t ext4 -d tree img 8M >/dev/null 2>&1
dev=$(losetup -f --show img 2>/dev/null) || skip "no loop device available here"
trap 'umount "$OUT/mnt" 2>/dev/null; losetup -d "$dev" 2>/dev/null' EXIT
"$FCLABEL" label "$dev" -a /system -S "$FC" >out 2>err
expect_eq "label through $dev" "$?" 0
expect_match "all files scanned" "$(cat err)" "*scanned 5,*"
sync
"$FCLABEL" check "$dev" -a /system -S "$FC" >out 2>err
expect_eq "check through the device: nothing differs" "$?" 0
if mount -o ro "$dev" mnt 2>/dev/null; then
	"$FCLABEL" label "$dev" -a /system -S "$FC" >out 2>err
	expect_eq "label refuses a mounted device" "$?" 2
	expect_match "and says why" "$(cat err)" "*is mounted*refusing*"
	"$FCLABEL" check "$dev" -a /system -S "$FC" >out 2>err
	expect_eq "check works on a mounted device" "$?" 0
	umount mnt
else
	echo "(mount failed here: the mounted cases are not run)"
fi
losetup -d "$dev"
trap - EXIT
expect_eq "e2fsck -fn clean" "$(e2fsck -fn img >/dev/null 2>&1; echo $?)" 0
expect_eq "label read back" "$(debugfs -R 'ea_get /bin/sh security.selinux' img 2>/dev/null | tr -d '\n' | sed -n 's/.*= "\(.*\)\\000".*/\1/p')" "u:object_r:shell_exec:s0"
finish
