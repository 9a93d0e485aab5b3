#!/bin/sh
# make demo: build a small system image from fixtures/demo/tree, label it offline with the bundled
# fixtures/demo/file_contexts, and show some labels before and after, read back with debugfs.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
fc=$top/fixtures/demo/file_contexts
work=$(mktemp -d "${TMPDIR:-/tmp}/fclabel-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/tree"
sh "$top/tests/mktree.sh" "$top/fixtures/demo/tree" "$work/tree"
img=$work/system.img
mke2fs -q -t ext4 -I 128 -d "$work/tree" "$img" 8M >/dev/null 2>&1
show() {
	for p in / /bin/sh /bin/ls /bin/hw/foo /lib64/libc.so /vendor/bin/hw/android.hardware.power@1.2-service; do
		label=$(debugfs -R "ea_get $p security.selinux" "$img" 2>/dev/null | tr -d '\n' |
			sed -n 's/.*= "\(.*\)\\000".*/\1/p')
		printf '  %-52s %s\n' "/system${p%/}" "${label:-(no label)}"
	done
}
echo "== a fresh image, made by mke2fs -d from fixtures/demo/tree (128-byte inodes):"
show
echo
echo "== fclabel label system.img -a /system -S fixtures/demo/file_contexts -v"
"$top/fclabel" label "$img" -a /system -S "$fc" -v | sed "s|$top/||g; s|$work/||g"
echo
echo "== after, read back with debugfs:"
show
echo
echo "== e2fsck -fn: $(e2fsck -fn "$img" >/dev/null 2>&1 && echo clean || echo PROBLEMS)"
echo "== a second run changes nothing:"
"$top/fclabel" label "$img" -a /system -S "$fc" | sed "s|$work/||g"
echo "== fclabel check:"
"$top/fclabel" check "$img" -a /system -S "$fc" 2>&1 | sed "s|$work/||g"
