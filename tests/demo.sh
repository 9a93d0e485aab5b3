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
"$top/fclabel" label "$img" -a /system -S "$fc" -v 2>&1 | sed "s|$top/||g; s|$work/||g"
echo
echo "== after, read back with debugfs:"
show
echo
echo "== e2fsck -fn: $(e2fsck -fn "$img" >/dev/null 2>&1 && echo clean || echo PROBLEMS)"
echo "== a second run changes nothing:"
"$top/fclabel" label "$img" -a /system -S "$fc" 2>&1 | sed "s|$work/||g"
echo "== fclabel check:"
"$top/fclabel" check "$img" -a /system -S "$fc" 2>&1 | sed "s|$work/||g"

# ---- an Android userdata image: app data labeled as on a phone -------------------------------
ufc=$top/fixtures/userdata/file_contexts
seapp=$top/fixtures/seapp/plat_seapp_contexts
u=$work/data
mkdir -p "$u/system" "$u/app" "$u/misc/profiles/cur/0"
# packages.list as a phone writes it: name, app id, debuggable, data dir, seinfo, gids, ...
cat >"$u/system/packages.list" <<'PKGS'
com.example.notes 10170 0 /data/user/0/com.example.notes default:targetSdkVersion=34 3003 0 12 1 com.android.vending
com.example.oldgame 10201 0 /data/user/0/com.example.oldgame default:targetSdkVersion=25 3003 0 7 1 com.android.vending
com.google.android.gms 10100 0 /data/user/0/com.google.android.gms default:privapp:targetSdkVersion=34:partition=product 3002,3003 0 1 0 @product
com.android.settings 1000 0 /data/user_de/0/com.android.settings platform:privapp:targetSdkVersion=34:partition=system 1065,3002 0 34 0 @system
PKGS
for p in com.example.notes com.example.oldgame com.google.android.gms com.android.settings; do
	mkdir -p "$u/data/$p/files" "$u/user_de/0/$p/databases"
	echo x >"$u/data/$p/files/state"
done
mkdir -p "$u/user/10/com.example.notes/files" "$u/data/com.example.sideloaded/files"
echo x >"$u/user/10/com.example.notes/files/state"
uimg=$work/userdata.img
mke2fs -q -t ext4 -I 256 -d "$u" "$uimg" 8M >/dev/null 2>&1
ushow() {
	for p in /data/com.example.notes/files/state /user/10/com.example.notes/files/state \
		/data/com.example.oldgame/files/state /data/com.google.android.gms/files/state \
		/data/com.android.settings/files/state /user_de/0/com.example.notes/databases \
		/data/com.example.sideloaded/files /system/packages.list; do
		label=$(debugfs -R "ea_get $p security.selinux" "$uimg" 2>/dev/null | tr -d '\n' |
			sed -n 's/.*= "\(.*\)\\000".*/\1/p')
		printf '  %-46s %s\n' "/data$p" "${label:-(no label)}"
	done
}
echo
echo "== an Android userdata image: four apps in packages.list (untrusted targeting SDK 34 and 25,"
echo "   a privileged app, Settings with the system uid), user 10, an app packages.list does not know"
echo "== fclabel label userdata.img -a /data -S fixtures/userdata/file_contexts \\"
echo "       --seapp fixtures/seapp/plat_seapp_contexts --digests"
"$top/fclabel" label "$uimg" -a /data -S "$ufc" --seapp "$seapp" --digests 2>&1 | sed "s|$work/||g"
echo
echo "== after, read back with debugfs (type and categories from seapp_contexts, per app and user):"
ushow
for p in / /data /user_de; do
	d=$(debugfs -R "ea_get -x $p security.sehash" "$uimg" 2>/dev/null | sed -n 's/.*= //p' | tr -d ' ')
	printf '  security.sehash of %-27s %s\n' "/data${p%/}" "${d:-(none: a label below it is left as it is)}"
done
echo "== e2fsck -fn: $(e2fsck -fn "$uimg" >/dev/null 2>&1 && echo clean || echo PROBLEMS)"
echo "== fclabel check --seapp --digests:"
"$top/fclabel" check "$uimg" -a /data -S "$ufc" --seapp "$seapp" --digests 2>&1 | sed "s|$work/||g"
