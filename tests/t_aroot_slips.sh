#!/bin/sh
# --android-root takes the device's policy or refuses (issue 31, slips 2 and 3), and diff takes a
# device's policy for either side. Small Android-shaped trees and images of our own (mke2fs -d):
#  (a) a partition not mounted: a recovery whose /system_ext is an empty directory, labeling a
#      userdata image whose SystemUI data get levelFrom=all from system_ext_seapp_contexts:
#      refused (exit 2, /system_ext named, the image unchanged); --partition system_ext=none
#      takes it as absent (plat's levelFrom=user); mounted, the device's levels. The device's
#      fstab decides where it can be read: /vendor/etc/fstab.* (a directory, or inside
#      vendor.img) or the first-stage ramdisk's in ROOT: one that does not mount /system_ext lets
#      it be absent (said), one that mounts it keeps the refusal (naming the fstab); one that
#      mounts neither system nor vendor (before Android 10) does not count. An empty mount point
#      inside a system image (system.img:/system_ext), one reached through a symlink (/odm ->
#      /vendor/odm), and /system of a ramdisk are refused alike.
#  (b) a recovery's own policy: --partition forgotten (the system at /system_root, /system
#      holding the recovery's bin/recovery): refused, naming /system_root and the option, nothing
#      written; /sbin/recovery alone: refused, naming the option; --partition system=ROOT takes
#      the recovery's own files.
#  (c) the files taken named without -v: a line each (label, check, relabel), none from lookup
#      without -v.
#  (d) diff --android-root (the new side), --old-root (the old side), both: the output of the
#      same files given as operands; with --json too; the refusals name the side's options.
. "$TOP/tests/imglib.sh"
need_image_tools
cd "$OUT" || exit 1
F=$FCLABEL

line() { # line FILE TEXT...: a file of these lines
	mkdir -p "$(dirname "$1")" && _f=$1 && shift && printf '%s\n' "$@" >"$_f"
}
# label_of IMG PATH: the security.selinux of PATH in IMG (debugfs)
label_of() {
	debugfs -R "ea_get $2 security.selinux" "$1" 2>/dev/null |
		sed -n 's/^security.selinux ([0-9]*) = "\(.*\)\\000"$/\1/p'
}
first() { head -n 1 "$OUT/$1.err"; }

# ---- the device: Android 14's shape, system-as-root, with system_ext and vendor ----
DEV=dev
line $DEV/system/system/etc/selinux/plat_file_contexts \
	'/(.*)?			u:object_r:rootfs:s0' \
	'/system(/.*)?		u:object_r:system_file:s0' \
	'/system/bin/sh		u:object_r:shell_exec:s0' \
	'/data(/.*)?		u:object_r:system_data_file:s0' \
	'/data/data(/.*)?	u:object_r:app_data_file:s0' \
	'/data/system/packages\.list	u:object_r:packages_list_file:s0'
line $DEV/system/system/etc/selinux/plat_seapp_contexts \
	'user=_app seinfo=platform domain=platform_app type=app_data_file levelFrom=user'
: >$DEV/system/system/build.prop
mkdir -p $DEV/system/system/bin $DEV/system/system_ext $DEV/system/vendor
: >$DEV/system/system/bin/sh
ln -s /system/etc $DEV/system/etc
ln -s /system/product $DEV/system/product # no product partition: AOSP's symlinks
ln -s /vendor/odm $DEV/system/odm
line $DEV/system_ext/etc/selinux/system_ext_file_contexts \
	'/system_ext(/.*)?	u:object_r:system_file:s0' \
	'/system_ext/bin/ext_tool	u:object_r:ext_tool_exec:s0'
line $DEV/system_ext/etc/selinux/system_ext_seapp_contexts \
	'user=_app seinfo=platform name=com.android.systemui domain=systemui_app type=app_data_file levelFrom=all'
line $DEV/vendor/etc/selinux/vendor_file_contexts '/vendor(/.*)?	u:object_r:vendor_file:s0'
: >$DEV/vendor/build.prop
FCS="$DEV/system/system/etc/selinux/plat_file_contexts,$DEV/system_ext/etc/selinux/system_ext_file_contexts,$DEV/vendor/etc/selinux/vendor_file_contexts"

# ---- a recovery: its own policy at its root, the device's system at /system_root, vendor
# mounted, /system_ext an empty directory (not mounted) ----
REC=rec
mkdir -p $REC/system/bin $REC/system_root $REC/system_ext $REC/sbin
: >$REC/system/bin/recovery
cp -R $DEV/system/. $REC/system_root/
cp -R $DEV/vendor $REC/vendor
line $REC/plat_file_contexts '/(.*)?	u:object_r:rootfs:s0' '/data(/.*)?	u:object_r:recovery_data_file:s0'
line $REC/plat_seapp_contexts 'user=_app domain=untrusted_app type=recovery_app_file levelFrom=none'
line $REC/vendor_file_contexts '/vendor(/.*)?	u:object_r:vendor_file:s0'

# ---- userdata: SystemUI's data (appid 10123: levelFrom=all c123,c256,c512,c768) ----
mkdir -p data/system data/data/com.android.systemui/files data/misc
printf 'com.android.systemui 10123 0 /data/user/0/com.android.systemui platform:privapp:targetSdkVersion=34 1065,3002\n' \
	>data/system/packages.list
echo x >data/data/com.android.systemui/files/a
mkimg d.img data 8M -t ext4 -b 4096 || finish
SUI=/data/com.android.systemui/files/a # the image's root is /data
ALL=u:object_r:app_data_file:s0:c123,c256,c512,c768
USER=u:object_r:app_data_file:s0:c512,c768

# ======== (a) a partition not mounted ========

cp d.img a.img
before=$(sum a.img)
run a_empty $F label a.img -a /data --android-root $REC --partition system=$REC/system_root
expect_rc "(a) /system_ext an empty directory: refused" 2
expect_match "(a) ... the first line names /system_ext and where it is" "$(first a_empty)" \
	"fclabel label: /system_ext (rec/system_ext) is an empty directory: the system_ext partition is not mounted there*"
expect_match "(a) ... and says what settles it" "$(cat a_empty.err)" \
	"*--partition NAME=PATH says where a partition is; --partition NAME=none, that the device has no such partition*"
expect_eq "(a) ... the image unchanged" "$(sum a.img)" "$before"

run a_none $F label a.img -a /data --android-root $REC --partition system=$REC/system_root \
	--partition system_ext=none
expect_rc "(a) --partition system_ext=none: taken as absent" 0
expect_eq "(a) ... SystemUI's data get plat's levelFrom=user" "$(label_of a.img $SUI)" "$USER"

cp d.img a2.img
run a_mounted $F label a2.img -a /data --android-root $REC --partition system=$REC/system_root \
	--partition system_ext=$DEV/system_ext
expect_rc "(a) /system_ext mounted (--partition system_ext=PATH)" 0
expect_eq "(a) ... SystemUI's data get system_ext's levelFrom=all" "$(label_of a2.img $SUI)" "$ALL"

# the device's fstab: one without /system_ext lets it be absent, and says so
line $REC/vendor/etc/fstab.dev '# the device fstab' \
	'system     /system     ext4  ro  wait,logical,first_stage_mount' \
	'vendor     /vendor     ext4  ro  wait,logical,first_stage_mount' \
	'/dev/block/by-name/userdata  /data  f2fs  noatime  latemount,wait'
cp d.img a3.img
run a_fstab $F label a3.img -a /data --android-root $REC --partition system=$REC/system_root
expect_rc "(a) the vendor's fstab does not mount /system_ext: taken as absent" 0
expect_match "(a) ... and said, naming the fstab" "$(cat a_fstab.err)" \
	"*/system_ext (rec/system_ext) is an empty directory, and the device's fstab (rec/vendor/etc/fstab.dev) mounts nothing there: no system_ext partition*"
expect_eq "(a) ... SystemUI's data: plat's levels" "$(label_of a3.img $SUI)" "$USER"
# ... one that mounts it keeps the refusal, naming it
line $REC/vendor/etc/fstab.dev 'system /system ext4 ro first_stage_mount' \
	'system_ext /system_ext ext4 ro first_stage_mount' 'vendor /vendor ext4 ro first_stage_mount'
cp d.img r.img
run a_fstab2 $F label r.img -a /data --android-root $REC --partition system=$REC/system_root
expect_rc "(a) the fstab mounts /system_ext: refused" 2
expect_match "(a) ... naming the fstab" "$(first a_fstab2)" \
	"*/system_ext (rec/system_ext) is an empty directory*and the device mounts it (rec/vendor/etc/fstab.dev)*"
expect_match "(a) ... NAME=none is not offered as the way out then" "$(cat a_fstab2.err)" \
	"*nothing was done (--partition NAME=PATH says where a partition is)"
# ... an fstab of Android 9's kind (system and vendor mounted from the device tree) says nothing
line $REC/vendor/etc/fstab.dev '/dev/block/by-name/userdata /data ext4 noatime wait,check'
run a_fstab9 $F label r.img -a /data --android-root $REC --partition system=$REC/system_root
expect_rc "(a) an fstab that mounts neither system nor vendor does not count: refused" 2
rm $REC/vendor/etc/fstab.dev
# ... the first-stage ramdisk's, in ROOT (here / is the system)
line $REC/first_stage_ramdisk/fstab.dev '/dev/block/by-name/system / ext4 ro wait,first_stage_mount' \
	'/dev/block/by-name/userdata /data ext4 noatime wait'
run a_fsr $F label a.img -a /data --android-root $REC --partition system=$REC/system_root
expect_rc "(a) the first-stage ramdisk's fstab (the system at /, Android 9's way): taken as absent" 0
expect_match "(a) ... naming it" "$(cat a_fsr.err)" "*device's fstab (rec/first_stage_ramdisk/fstab.dev) mounts nothing there*"
rm -r $REC/first_stage_ramdisk
expect_eq "(a) the refused runs left the image as it was" "$(sum r.img)" "$before"

# images: an empty mount point inside system.img; the fstab inside vendor.img
mkdir -p IMG
mkimg IMG/system.img $DEV/system 8M -t ext4 -b 4096 || finish
mkimg IMG/vendor.img $DEV/vendor 4M -t ext4 -b 4096 || finish
run a_img $F lookup --android-root IMG /system/bin/sh
expect_rc "(a) images: system.img's /system_ext empty, no system_ext.img: refused" 2
expect_match "(a) ... named IMAGE:/PATH" "$(first a_img)" "fclabel lookup: /system_ext (IMG/system.img:/system_ext) is an empty directory*"
mkdir -p vfstab && cp -R $DEV/vendor/. vfstab/ && line vfstab/etc/fstab.dev 'system /system ext4 ro first_stage_mount' \
	'vendor /vendor ext4 ro first_stage_mount'
mkimg IMG/vendor.img vfstab 4M -t ext4 -b 4096 || finish
run a_imgfstab $F lookup --android-root IMG /system/bin/sh
expect_rc "(a) images: vendor.img's /etc/fstab.dev does not mount /system_ext: taken as absent" 0
expect_match "(a) ... naming it inside the image" "$(cat a_imgfstab.err)" "*fstab (IMG/vendor.img:/etc/fstab.dev) mounts nothing there*"
expect_eq "(a) ... the answer" "$(cat a_imgfstab.out)" "u:object_r:shell_exec:s0"
mkimg IMG/system_ext.img $DEV/system_ext 4M -t ext4 -b 4096 || finish
run a_imgall $F lookup --android-root IMG /system_ext/bin/ext_tool
expect_eq "(a) images: with system_ext.img, its policy" "$rc:$(cat a_imgall.out)" "0:u:object_r:ext_tool_exec:s0"
# through a symlink: /odm -> /vendor/odm, an empty directory of vendor's
mkdir -p ODM && cp -R $DEV/system $DEV/system_ext $DEV/vendor ODM/ && mkdir -p ODM/vendor/odm
run a_odm $F lookup --android-root ODM /system/bin/sh
expect_rc "(a) /odm -> /vendor/odm, an empty directory: refused" 2
expect_match "(a) ... naming /odm and where it led" "$(first a_odm)" "fclabel lookup: /odm (ODM/vendor/odm) is an empty directory*"
run a_odmnone $F lookup --android-root ODM --partition odm=none /system/bin/sh
expect_rc "(a) ... --partition odm=none" 0
# a ramdisk's own pair, /system and /vendor empty: the device's system would come first
mkdir -p RD/system RD/vendor && cp $REC/plat_file_contexts $REC/vendor_file_contexts RD/
run a_rd $F lookup --android-root RD /data/x
expect_rc "(a) a ramdisk with /system empty: refused" 2
expect_match "(a) ... naming /system" "$(first a_rd)" "fclabel lookup: /system (RD/system) is an empty directory*"
run a_rdnone $F lookup --android-root RD --partition system=none --partition vendor=none /data/x
expect_eq "(a) ... system=none vendor=none: the ramdisk's pair" "$rc:$(cat a_rdnone.out)" "0:u:object_r:recovery_data_file:s0"

# ======== (b) a recovery's own policy ========

cp d.img b.img
before=$(sum b.img)
run b_forgot $F label b.img -a /data --android-root $REC --digests
expect_rc "(b) --partition forgotten, the system at /system_root: refused" 2
expect_match "(b) ... the first line names /system_root and the option" "$(first b_forgot)" \
	"fclabel label: rec is a recovery's root (/system/bin/recovery is there), and its /plat_file_contexts is the recovery's own, not the device's policy: the device's system is probably at rec/system_root: give --partition system=rec/system_root"
expect_eq "(b) ... nothing written" "$(sum b.img)" "$before"
run b_check $F check b.img -a /data --android-root $REC/
expect_rc "(b) check alike (ROOT/)" 2
# the system found only at /system_root: a recovery even without its binary
mkdir -p REC2 && cp -R $REC/system_root $REC/vendor $REC/plat_file_contexts $REC/vendor_file_contexts REC2/
mkdir -p REC2/system
run b_sr $F lookup --android-root REC2 /system/bin/sh
expect_rc "(b) the system only at /system_root: refused" 2
expect_match "(b) ... naming it" "$(first b_sr)" "*REC2 is a recovery's root (the system is in REC2/system_root)*give --partition system=REC2/system_root"
# /sbin/recovery and no system anywhere: mount it
mkdir -p REC3/sbin REC3/vendor && : >REC3/sbin/recovery && cp -R $REC/vendor/. REC3/vendor/ &&
	cp $REC/plat_file_contexts $REC/vendor_file_contexts REC3/
run b_sbin $F lookup --android-root REC3 /system/bin/sh
expect_rc "(b) /sbin/recovery, no system mounted: refused" 2
expect_match "(b) ... naming the option" "$(first b_sbin)" \
	"*REC3 is a recovery's root (/sbin/recovery is there)*mount the device's system partition and give --partition system=PATH"
# named: --partition system=ROOT takes them
run b_named $F lookup --android-root REC3 --partition system=REC3 /data/x
expect_eq "(b) --partition system=ROOT: the recovery's own files" "$rc:$(cat b_named.out)" "0:u:object_r:recovery_data_file:s0"
run b_right $F label b.img -a /data --android-root $REC --partition system=$REC/system_root \
	--partition system_ext=$DEV/system_ext
expect_rc "(b) with --partition system=/system_root: the device's policy" 0
expect_eq "(b) ... SystemUI's levels" "$(label_of b.img $SUI)" "$ALL"

# ======== (c) the files taken, named without -v ========

grep ': policy: ' b_right.err >c.lines
expect_eq "(c) label: a line per file taken" "$(wc -l <c.lines)" 5
expect_match "(c) ... each part and where from" "$(cat c.lines)" \
	"fclabel label: policy: plat file_contexts: /system/etc/selinux/plat_file_contexts, read from rec/system_root/system/etc/selinux/plat_file_contexts*system_ext file_contexts: /system_ext/etc/selinux/system_ext_file_contexts, read from dev/system_ext/etc/selinux/system_ext_file_contexts*vendor file_contexts: /vendor/etc/selinux/vendor_file_contexts, read from rec/vendor/etc/selinux/vendor_file_contexts*plat seapp_contexts:*system_ext seapp_contexts: /system_ext/etc/selinux/system_ext_seapp_contexts, read from dev/system_ext/*"
run c_check $F check b.img -a /data --android-root $REC --partition system=$REC/system_root \
	--partition system_ext=$DEV/system_ext
expect_eq "(c) check: exit 0, the lines too" "$rc:$(grep -c ': policy: ' c_check.err)" "0:5"
cp d.img c.img
run c_relabel $F relabel c.img -a /data --from none --android-root $REC --partition system=$REC/system_root \
	--partition system_ext=none
expect_eq "(c) relabel: the file_contexts and seapp_contexts lines (system_ext=none)" \
	"$rc:$(grep -c ': policy: ' c_relabel.err)" "0:3"
run c_lookup $F lookup --android-root $DEV /system/bin/sh
expect_eq "(c) lookup without -v: no lines" "$rc:$(grep -c ': policy: ' c_lookup.err)" "0:0"
run c_lookupv $F lookup --android-root $DEV -v /system/bin/sh
expect_eq "(c) lookup -v: the tree and the files" "$rc:$(grep -c ': policy: ' c_lookupv.err)" "0:4"

# ======== (d) diff with a device's policy ========

OLD=old_fc
line $OLD '/(.*)?	u:object_r:rootfs:s0' '/system(/.*)?	u:object_r:system_file:s0' \
	'/system/bin/sh	u:object_r:old_shell_exec:s0' '/vendor(/.*)?	u:object_r:vendor_file:s0'
run d_ref $F diff $OLD "$FCS"
run d_new $F diff $OLD --android-root $DEV
expect_eq "(d) diff OLD --android-root ROOT: exit 1" "$rc" 1
expect_eq "(d) ... the changes of the same files as an operand" "$(cat d_new.out)" "$(cat d_ref.out)"
expect_match "(d) ... the new side's files named" "$(cat d_new.err)" \
	"fclabel diff: new policy: plat file_contexts: /system/etc/selinux/plat_file_contexts, read from dev/system/system/etc/selinux/plat_file_contexts*system_ext file_contexts*vendor file_contexts*"
run d_ref2 $F diff "$FCS" $OLD
run d_old $F diff --old-root $DEV $OLD
expect_eq "(d) diff --old-root ROOT NEW: the changes of the same files" "$rc:$(cat d_old.out)" "1:$(cat d_ref2.out)"
expect_match "(d) ... named the old side's" "$(first d_old)" "fclabel diff: old policy: plat file_contexts:*"
run d_both $F diff --old-root IMG --android-root $DEV --partition system_ext=none
expect_eq "(d) both sides: images against a tree (system_ext=none): exit 1" "$rc" 1
run d_ref3 $F diff "$DEV/system/system/etc/selinux/plat_file_contexts,$DEV/system_ext/etc/selinux/system_ext_file_contexts,$DEV/vendor/etc/selinux/vendor_file_contexts" \
	"$DEV/system/system/etc/selinux/plat_file_contexts,$DEV/vendor/etc/selinux/vendor_file_contexts"
expect_eq "(d) ... the lines of the files given alike (names aside)" \
	"$(sed 's|IMG/[a-z_]*\.img:/[^ ]*:[0-9]*|F|g; s|dev/[^ ]*:[0-9]*|F|g' d_both.out)" \
	"$(sed 's|dev/[^ ]*:[0-9]*|F|g' d_ref3.out)"
run d_same $F diff --old-root $DEV --android-root $DEV --json
expect_eq "(d) the same device both sides, --json: exit 0, no change" \
	"$rc:$("$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); print(len(j["changes"]), j["added"])' d_same.out)" "0:0 0"
run d_json $F diff $OLD --android-root $DEV --json
"$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["added"] >= 1 and any(c["new"]["file"].startswith("dev/system_ext/") for c in j["changes"] if "new" in c), j' d_json.out \
	2>d_json.py && ok "(d) --json: valid, names the device's files" || bad "(d) --json: $(tail -n 1 d_json.py)"
run d_extra $F diff $OLD $OLD --android-root $DEV
expect_rc "(d) an operand too many: usage" 2
expect_match "(d) ... saying which" "$(first d_extra)" "fclabel diff: give the old file_contexts (the device gives the new one)"
run d_rec $F diff --old-root $REC $OLD
expect_rc "(d) a recovery's own files on the old side: refused" 2
expect_match "(d) ... naming the old side's option" "$(first d_rec)" "*give --old-partition system=rec/system_root"
run d_badpart $F diff --old-partition vendorx=x $OLD $OLD
expect_rc "(d) --old-partition NAME unknown: usage" 2
expect_match "(d) ... named" "$(first d_badpart)" "fclabel diff: --old-partition 'vendorx=x': want NAME=PATH*"
finish
