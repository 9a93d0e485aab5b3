#!/bin/sh
# --android-root: the device's own file_contexts and seapp_contexts, found as the device finds
# them, must give exactly what the same files given explicitly (-S, --seapp) give.
#
# Trees laid out as devices lay them out, from the policies in ../shared/data (copied into the
# test's scratch folder only): Android 8.1's (the Leagoo M11's plat_ and nonplat_ files; and a
# ramdisk's pair in the root file system), Android 9 system-as-root (AOSP 9), Android 10 and later
# (AOSP 14 with system_ext, product and odm; the Pixel 5's built files, its /odm/etc a symlink into
# /vendor/odm/etc, its product reached through /product -> /system/product), a recovery with the
# system image mounted at /system_root and decoy copies in its own root (--partition
# system=/system_root), and before Treble (Android 6's /file_contexts and /seapp_contexts; the same
# compiled to /file_contexts.bin, taken over a stale text copy). Each one answers `lookup --batch
# -v` for every path of two firmware listings (and app data paths) with --android-root and with
# the explicit files: byte for byte the same, deciding file and line included. The same from ext4
# partition images (raw and sparse, mke2fs -d), from a --partition image of another name, and a
# label of a system image with --android-root (its own policy read from the very image it labels)
# equal to one with -S; a userdata image labeled -a /data with the device's seapp_contexts equal to
# --seapp; relabel --android-root equal to relabel --to. -v and --json name every file taken.
# Refused (exit 2, the missing part and every path looked for named, the image unchanged): a
# recovery's own copies without --partition system=..., a Treble system without vendor, a tree with no policy at all, /data without seapp_contexts,
# ROOT/vendor and ROOT/vendor.img both there, -S or --seapp or --to with --android-root, a bad
# line in an image's file (named IMAGE:PATH:LINE:COLUMN), a symlink loop, a directory where a file
# is due.
. "$TOP/tests/imglib.sh"
need_image_tools
command -v img2simg >/dev/null 2>&1 ||
	skip "img2simg is not installed (Debian package android-sdk-libsparse-utils)"
A6=$SHARED/android/android-6.0.1_r74
A44=$SHARED/android/android-4.4.2_r1
A9=$SHARED/android/android-9.0.0_r37
A14=$SHARED/android/android-14.0.0_r50
P5=$SHARED/images/pixel5_redfin_RD1A.200810.020_android11
LG=$SHARED/images/leagoo_m11_O11019_android8.1
for f in "$A6/file_contexts" "$A6/seapp_contexts" "$A44/file_contexts" "$A9/private_file_contexts" \
	"$A9/vendor_file_contexts" "$A9/private_seapp_contexts" "$A14/private_file_contexts" \
	"$A14/vendor_file_contexts" "$A14/private_seapp_contexts" \
	"$P5/system_system_etc_selinux_plat_file_contexts" "$P5/vendor_etc_selinux_vendor_file_contexts" \
	"$LG/system_etc_selinux_plat_file_contexts" "$LG/vendor_etc_selinux_nonplat_file_contexts"; do
	[ -f "$f" ] || skip "no real Android policies in ../shared/data ($f is absent)"
done
cd "$OUT" || exit 1
F=$FCLABEL

# every path of the two firmware listings, and app data paths: "MODE PATH"
for t in "$P5"/*.labels.tsv "$LG"/*.labels.tsv; do
	grep -v '^#' "$t" | awk -F'\t' '{ print ($1 == "d" ? "040755" : $1 == "l" ? "0120777" : "0100644") " " $2 }'
done >queries
printf '%s\n' "040755 /data/data/com.example.app" "0100644 /data/data/com.example.app/files/a" \
	"040755 /data/user_de/0/com.example.app" "0100644 /data/system/packages.list" \
	"0100644 /odm/bin/odm_tool" "0100644 /product/bin/product_tool" \
	"0100644 /system_ext/bin/ext_tool" "0100644 /vendor/bin/hw/android.hardware.x" >>queries
nq=$(wc -l <queries)

# ---- the trees ----

put() { # put SRC DST: a policy file copied into a tree
	mkdir -p "$(dirname "$2")" && cp "$1" "$2"
}
line() { # line DST TEXT: a one-line file
	mkdir -p "$(dirname "$1")" && printf '%s\n' "$2" >"$1"
}
# a few files of a system partition's root (system-as-root: below /system)
sys_files() {
	mkdir -p "$1/bin" "$1/lib64" "$1/app/Foo"
	printf '#!/bin/sh\n' >"$1/bin/sh"
	: >"$1/bin/init" && : >"$1/lib64/libc.so" && : >"$1/app/Foo/Foo.apk"
}

# Android 8.1 (the Leagoo M11): plat_ in /system/etc/selinux, nonplat_ in /vendor/etc/selinux
R81=R81
put "$LG/system_etc_selinux_plat_file_contexts" $R81/system/etc/selinux/plat_file_contexts
put "$LG/vendor_etc_selinux_nonplat_file_contexts" $R81/vendor/etc/selinux/nonplat_file_contexts
put "$LG/system_etc_selinux_plat_seapp_contexts" $R81/system/etc/selinux/plat_seapp_contexts
put "$LG/vendor_etc_selinux_nonplat_seapp_contexts" $R81/vendor/etc/selinux/nonplat_seapp_contexts
sys_files $R81/system
EX81="-S $R81/system/etc/selinux/plat_file_contexts,$R81/vendor/etc/selinux/nonplat_file_contexts"
SE81="--seapp $R81/system/etc/selinux/plat_seapp_contexts,$R81/vendor/etc/selinux/nonplat_seapp_contexts"

# an Android 8 ramdisk: the pair in the root file system, /system and /vendor not mounted (taken
# as they are with --partition NAME=none; refused without it: t_aroot_slips)
RRD=RRD
put "$LG/system_etc_selinux_plat_file_contexts" $RRD/plat_file_contexts
put "$LG/vendor_etc_selinux_nonplat_file_contexts" $RRD/nonplat_file_contexts
mkdir -p $RRD/system $RRD/vendor
EXRD="-S $RRD/plat_file_contexts,$RRD/nonplat_file_contexts"

# Android 9, system-as-root: the system partition's root holds /system, / is the system image
R9=R9
put "$A9/private_file_contexts" $R9/system/system/etc/selinux/plat_file_contexts
put "$A9/private_seapp_contexts" $R9/system/system/etc/selinux/plat_seapp_contexts
put "$A9/vendor_file_contexts" $R9/vendor/etc/selinux/vendor_file_contexts
sys_files $R9/system/system
# no odm partition: /odm a symlink into /vendor, as AOSP builds it then (an empty /odm is a mount
# point: refused unless mounted, t_aroot_slips)
mkdir -p $R9/system/vendor && ln -s /vendor/odm $R9/system/odm
ln -s /system/etc $R9/system/etc
ln -s /system/bin/init $R9/system/init
EX9="-S $R9/system/system/etc/selinux/plat_file_contexts,$R9/vendor/etc/selinux/vendor_file_contexts"

# Android 10 and later (AOSP 14): system (as root), system_ext, product, vendor, odm
R14=R14
put "$A14/private_file_contexts" $R14/system/system/etc/selinux/plat_file_contexts
put "$A14/private_seapp_contexts" $R14/system/system/etc/selinux/plat_seapp_contexts
line $R14/system_ext/etc/selinux/system_ext_file_contexts "/system_ext/bin/ext_tool u:object_r:system_file:s0"
line $R14/product/etc/selinux/product_file_contexts "/product/bin/product_tool u:object_r:system_file:s0"
put "$A14/vendor_file_contexts" $R14/vendor/etc/selinux/vendor_file_contexts
line $R14/odm/etc/selinux/odm_file_contexts "/odm/bin/odm_tool u:object_r:vendor_file:s0"
sys_files $R14/system/system
mkdir -p $R14/system/vendor $R14/system/odm $R14/system/product $R14/system/system_ext
ln -s /system/etc $R14/system/etc
EX14="-S $R14/system/system/etc/selinux/plat_file_contexts,$R14/system_ext/etc/selinux/system_ext_file_contexts,$R14/product/etc/selinux/product_file_contexts,$R14/vendor/etc/selinux/vendor_file_contexts,$R14/odm/etc/selinux/odm_file_contexts"

# the Pixel 5 (Android 11): its built files; no product partition here, its files in
# /system/product (/product a symlink to it); /odm a directory of symlinks into /vendor/odm
RP=RP5
put "$P5/system_system_etc_selinux_plat_file_contexts" $RP/system/system/etc/selinux/plat_file_contexts
put "$P5/system_system_etc_selinux_plat_seapp_contexts" $RP/system/system/etc/selinux/plat_seapp_contexts
put "$P5/system_ext_etc_selinux_system_ext_seapp_contexts" $RP/system_ext/etc/selinux/system_ext_seapp_contexts
: >$RP/system_ext/etc/selinux/system_ext_file_contexts
put "$P5/product_etc_selinux_product_seapp_contexts" $RP/system/system/product/etc/selinux/product_seapp_contexts
: >$RP/system/system/product/etc/selinux/product_file_contexts
put "$P5/vendor_etc_selinux_vendor_file_contexts" $RP/vendor/etc/selinux/vendor_file_contexts
put "$P5/vendor_etc_selinux_vendor_seapp_contexts" $RP/vendor/etc/selinux/vendor_seapp_contexts
line $RP/vendor/odm/etc/selinux/odm_file_contexts "/odm/bin/odm_tool u:object_r:vendor_file:s0"
sys_files $RP/system/system
mkdir -p $RP/system/vendor $RP/system/odm
ln -s /system/product $RP/system/product
ln -s /vendor/odm/etc $RP/system/odm/etc
EXP="-S $RP/system/system/etc/selinux/plat_file_contexts,$RP/system_ext/etc/selinux/system_ext_file_contexts,$RP/system/system/product/etc/selinux/product_file_contexts,$RP/vendor/etc/selinux/vendor_file_contexts,$RP/vendor/odm/etc/selinux/odm_file_contexts"
SEP="--seapp $RP/system/system/etc/selinux/plat_seapp_contexts,$RP/system_ext/etc/selinux/system_ext_seapp_contexts,$RP/system/system/product/etc/selinux/product_seapp_contexts,$RP/vendor/etc/selinux/vendor_seapp_contexts"

# a recovery: its own ramdisk's copies at /, the device's system image mounted at /system_root,
# its other partitions at /system_ext, /product, /vendor, /odm, /system an empty mount point
RT=RTWRP
put "$A9/private_file_contexts" $RT/plat_file_contexts
put "$A9/vendor_file_contexts" $RT/vendor_file_contexts
mkdir -p $RT/system $RT/system_root
cp -R $R14/system/. $RT/system_root/
cp -R $R14/system_ext $R14/product $R14/vendor $R14/odm $RT/
EXT="-S $RT/system_root/system/etc/selinux/plat_file_contexts,$RT/system_ext/etc/selinux/system_ext_file_contexts,$RT/product/etc/selinux/product_file_contexts,$RT/vendor/etc/selinux/vendor_file_contexts,$RT/odm/etc/selinux/odm_file_contexts"

# before Treble: Android 6's one /file_contexts and /seapp_contexts; the same compiled (Android 7)
R6=R6
put "$A6/file_contexts" $R6/file_contexts
put "$A6/seapp_contexts" $R6/seapp_contexts
mkdir -p $R6/system/bin

# ---- lookups: --android-root against the same files given explicitly ----

# same WHAT "AROOT-ARGS" "EXPLICIT-ARGS" [SED]: lookup --batch -v of every query with each, the
# first one's file names mapped by SED (an image's IMAGE:/PATH to the explicit file's path)
same() {
	# shellcheck disable=SC2086
	$F lookup $2 --batch -v <queries >a.out 2>a.err
	r1=$?
	# shellcheck disable=SC2086
	$F lookup $3 --batch -v <queries >b.out 2>b.err
	r2=$?
	[ -n "${4:-}" ] && sed "$4" a.out >a.sed && mv a.sed a.out
	n=$(wc -l <a.out)
	kinds=$(cut -f 1 a.out | sort -u | wc -l)
	if [ "$r1" = 0 ] && [ "$r2" = 0 ] && [ "$n" = "$nq" ] && [ "$kinds" -gt 20 ] && cmp -s a.out b.out; then
		ok "$1: the answers of the explicit files ($n paths, $kinds contexts, deciding lines equal)"
	else
		bad "$1: exit $r1/$r2, $n answers, $kinds contexts; $(head -c 300 a.err | tr '\n' '|') $(diff a.out b.out | head -n 4 | tr '\n' '|')"
	fi
}
# taken WHAT "ARGS" PATTERN...: lookup ARGS -v names each file taken (stderr)
taken() {
	_w=$1 _a=$2
	shift 2
	# shellcheck disable=SC2086
	$F lookup $_a -v /system/bin/sh >/dev/null 2>v.err
	for _p in "$@"; do
		grep -q -- "$_p" v.err && ok "$_w: -v names: $_p" ||
			bad "$_w: -v does not name [$_p]: $(tr '\n' '|' <v.err)"
	done
}

same "Android 8.1 (plat_, nonplat_)" "--android-root $R81" "$EX81"
taken "Android 8.1" "--android-root $R81" \
	"policy: plat file_contexts: /system/etc/selinux/plat_file_contexts, read from $R81/system/etc/selinux/plat_file_contexts" \
	"policy: vendor file_contexts: /vendor/etc/selinux/nonplat_file_contexts, read from $R81/vendor/etc/selinux/nonplat_file_contexts" \
	"Treble (Android 8 or later)"
same "an Android 8 ramdisk (/plat_, /nonplat_)" "--android-root $RRD --partition system=none --partition vendor=none" "$EXRD"
taken "an Android 8 ramdisk" "--android-root $RRD --partition system=none --partition vendor=none" "plat file_contexts: /plat_file_contexts, read from $RRD/plat_file_contexts" \
	"vendor file_contexts: /nonplat_file_contexts" "in the root file system"
same "Android 9 system-as-root" "--android-root $R9" "$EX9"
taken "Android 9" "--android-root $R9" "/ = $R9/system (directory, the system partition: system-as-root)" \
	"read from $R9/system/system/etc/selinux/plat_file_contexts"
same "Android 14 (system_ext, product, odm)" "--android-root $R14" "$EX14"
taken "Android 14" "--android-root $R14" "system_ext file_contexts: /system_ext/etc/selinux/system_ext_file_contexts" \
	"product file_contexts: /product/etc/selinux/product_file_contexts" "odm file_contexts: /odm/etc/selinux/odm_file_contexts, read from $R14/odm/"
same "Pixel 5 (symlinks inside the device: /product, /odm/etc)" "--android-root $RP" "$EXP"
taken "Pixel 5" "--android-root $RP" "product file_contexts: /product/etc/selinux/product_file_contexts, read from $RP/system/system/product/etc/selinux/product_file_contexts" \
	"odm file_contexts: /odm/etc/selinux/odm_file_contexts, read from $RP/vendor/odm/etc/selinux/odm_file_contexts"
same "a recovery, --partition system=/system_root" "--android-root $RT --partition system=$RT/system_root" "$EXT"
taken "a recovery" "--android-root $RT --partition system=$RT/system_root" \
	"plat file_contexts: /system/etc/selinux/plat_file_contexts, read from $RT/system_root/system/etc"
# ... and without it not the recovery's own copies (the device's libselinux in that recovery would
# take them): refused, naming where the system is
run rtown $F lookup --android-root $RT /system/bin/sh
expect_rc "a recovery without --partition: its own /plat_file_contexts refused" 2
expect_match "... naming where the system is" "$(head -n 1 "$OUT/rtown.err")" \
	"*RTWRP is a recovery's root*its /plat_file_contexts is the recovery's own*give --partition system=RTWRP/system_root"
same "before Treble: /file_contexts" "--android-root $R6" "-S $R6/file_contexts --base-only"
taken "before Treble" "--android-root $R6" "legacy file_contexts: /file_contexts, read from $R6/file_contexts" \
	"before Treble (Android 7 or earlier)"
if [ -x /usr/sbin/sefcontext_compile ]; then
	R7=R7
	mkdir -p $R7 && cp "$A44/file_contexts" $R7/file_contexts # stale text: not taken
	if /usr/sbin/sefcontext_compile -o $R7/file_contexts.bin "$A6/file_contexts" 2>sefc.err; then
		touch -d '2001-01-01' $R7/file_contexts.bin # older than the text: taken all the same
		same "Android 7: /file_contexts.bin (compiled), not the stale /file_contexts" \
			"--android-root $R7" "-S $R7/file_contexts.bin --base-only"
		$F lookup -S $R6/file_contexts --base-only --batch <queries >text.out 2>&1
		cut -f 1 a.out | cmp -s - text.out && ok "Android 7: the compiled file's answers are the text's" ||
			bad "Android 7: the compiled file answers otherwise than the text it was made from"
		taken "Android 7" "--android-root $R7" "legacy file_contexts: /file_contexts.bin, read from $R7/file_contexts.bin"
	else
		bad "sefcontext_compile $A6/file_contexts: $(head -n 2 sefc.err | tr '\n' '|')"
	fi
else
	echo "note: no /usr/sbin/sefcontext_compile (Debian selinux-utils): the compiled /file_contexts.bin case is not run"
fi

# app data: --android-root with --packages takes the device's seapp_contexts
printf 'com.example.app 10057 0 /data/user/0/com.example.app platform:privapp:targetSdkVersion=28 3003\n' >packages.list
same "Pixel 5 app data (--packages: its four seapp_contexts)" "--android-root $RP --packages packages.list" \
	"$EXP $SEP --packages packages.list"
grep -q "system/etc/selinux/plat_seapp_contexts" v.err 2>/dev/null || true

# ---- partition images: raw, sparse, named by --partition ----

mkimg_q() { mkimg "$1" "$2" "${3:-8M}" -t ext4 -b 4096 || finish; }
I9=I9
mkdir -p $I9
mkimg_q $I9/system.img $R9/system 16M
mkimg_q v9.raw $R9/vendor
img2simg v9.raw $I9/vendor.img || bad "img2simg"
same "Android 9 from images (system.img raw, vendor.img sparse)" "--android-root $I9" "$EX9" \
	"s|$I9/system.img:/system/|$R9/system/system/|; s|$I9/vendor.img:/|$R9/vendor/|"
taken "Android 9 images" "--android-root $I9" "/ = $I9/system.img (raw image, the system partition: system-as-root)" \
	"/vendor = $I9/vendor.img (Android sparse image)" "read from $I9/system.img:/system/etc/selinux/plat_file_contexts"
I14=I14
mkdir -p $I14
for p in system system_ext product vendor odm; do mkimg_q $I14/$p.img $R14/$p 16M; done
img2simg $I14/system.img sys14.simg && mv sys14.simg $I14/system.img || bad "img2simg"
same "Android 14 from images (five, system.img sparse)" "--android-root $I14" "$EX14" \
	"s|$I14/system.img:/system/|$R14/system/system/|; s|$I14/\([a-z_]*\)\.img:/|$R14/\1/|"
# EROFS partition images (Android 13 on; AOSP builds them -zlz4hc with 256 KiB pclusters): the
# same answers, the policy files read through fclabel's own EROFS reader
if command -v mkfs.erofs >/dev/null 2>&1; then
	E14=E14 EP=EP
	mkdir -p $E14 $EP
	for p in system system_ext product vendor odm; do
		mkfs.erofs -zlz4hc -C262144 $E14/$p.img $R14/$p >/dev/null 2>&1 || bad "mkfs.erofs $p"
	done
	same "Android 14 from EROFS images (lz4hc)" "--android-root $E14" "$EX14" \
		"s|$E14/system.img:/system/|$R14/system/system/|; s|$E14/\([a-z_]*\)\.img:/|$R14/\1/|"
	taken "Android 14 EROFS images" "--android-root $E14" \
		"/ = $E14/system.img (EROFS image, the system partition: system-as-root)" \
		"read from $E14/system.img:/system/etc/selinux/plat_file_contexts"
	# as AOSP ships them: EROFS in Android's sparse format (expanded into memory to be read)
	ES14=ES14
	mkdir -p $ES14
	for p in system system_ext product vendor odm; do
		case $p in
		system | vendor) img2simg $E14/$p.img $ES14/$p.img || bad "img2simg $p" ;;
		*) cp $E14/$p.img $ES14/$p.img ;;
		esac
	done
	same "Android 14 from EROFS images, system.img and vendor.img sparse" "--android-root $ES14" \
		"$EX14" "s|$ES14/system.img:/system/|$R14/system/system/|; s|$ES14/\([a-z_]*\)\.img:/|$R14/\1/|"
	taken "Android 14 sparse EROFS images" "--android-root $ES14" \
		"/ = $ES14/system.img (EROFS image, Android sparse, the system partition: system-as-root)" \
		"read from $ES14/system.img:/system/etc/selinux/plat_file_contexts"
	mkfs.erofs -zlz4 $EP/system.img $RP/system >/dev/null 2>&1 || bad "mkfs.erofs RP system"
	mkfs.erofs $EP/vendor.img $RP/vendor >/dev/null 2>&1 || bad "mkfs.erofs RP vendor"
	same "Pixel 5 from EROFS images (symlinks followed inside them)" "--android-root $EP" "$EXP" \
		"s|$EP/system.img:/|$RP/system/|; s|$EP/vendor.img:/|$RP/vendor/|"
	# a whole disk image holding them by GPT name (an emulator's system-qemu.img, a device's
	# flash): EROFS system, system_ext and product, ext4 vendor and odm, at their offsets
	if command -v sfdisk >/dev/null 2>&1; then
		# disk_of DISK NAME=IMAGE...: a GPT disk holding each IMAGE as a partition NAME
		disk_of() {
			_d=$1 && shift && _at=2048 && rm -f "$_d" tbl
			echo "label: gpt" >tbl
			for _pi in "$@"; do
				_s=$((($(stat -c %s "${_pi#*=}") + 1048575) / 1048576 * 2048))
				echo "start=$_at, size=$_s, name=\"${_pi%%=*}\"" >>tbl
				_at=$((_at + _s))
			done
			truncate -s $(((_at + 2048) * 512)) "$_d" && sfdisk -q "$_d" <tbl >sfdisk.log 2>&1 ||
				bad "sfdisk $_d: $(tail -n 2 sfdisk.log | tr '\n' '|')"
			_at=2048
			for _pi in "$@"; do
				dd if="${_pi#*=}" of="$_d" bs=512 seek=$_at conv=notrunc status=none
				_at=$((_at + ($(stat -c %s "${_pi#*=}") + 1048575) / 1048576 * 2048))
			done
		}
		disk_of D14.img system=$E14/system.img system_ext=$E14/system_ext.img \
			product=$E14/product.img vendor=$I14/vendor.img odm=$I14/odm.img
		same "Android 14 from one GPT disk image (EROFS and ext4 partitions by name)" \
			"--android-root D14.img" "$EX14" \
			"s|D14.img#system:/system/|$R14/system/system/|; s|D14.img#\([a-z_]*\):/|$R14/\1/|"
		taken "Android 14 disk image" "--android-root D14.img" \
			"/ = D14.img partition 1 (\"system\") (EROFS image, the system partition: system-as-root)" \
			"/vendor = D14.img partition 4 (\"vendor\") (raw image)"
		# --partition NAME=DISK: the disk's partition of that name
		same "Android 14 images, --partition vendor=D14.img (its partition named vendor)" \
			"--android-root $E14 --partition vendor=D14.img" "$EX14" \
			"s|$E14/system.img:/system/|$R14/system/system/|; s|D14.img#vendor:/|$R14/vendor/|; s|$E14/\([a-z_]*\)\.img:/|$R14/\1/|"
		# A/B: one slot is taken; both are refused, naming them
		disk_of AB1.img system_a=$E14/system.img vendor_a=$I14/vendor.img
		run ab1 $F lookup --android-root AB1.img --partition system_ext=none --partition product=none --partition odm=none -v /vendor/bin/sh
		expect_rc "a disk with the _a slot only: taken" 0
		expect_match "... naming the slot" "$(cat ab1.err)" "*partition 2 (\"vendor_a\")*"
		disk_of AB2.img system_a=$E14/system.img system_b=$E14/system.img vendor_a=$I14/vendor.img
		run ab2 $F lookup --android-root AB2.img /vendor/bin/sh
		expect_rc "a disk with both slots: refused" 2
		expect_match "... naming both" "$(cat ab2.err)" "*system_a and system_b*--partition system=*"
	fi
fi
mkdir -p other && mv $I14/vendor.img other/vendor_a.img
run novendor $F lookup --android-root $I14 /vendor/bin/sh
expect_rc "Android 14 images without vendor.img: refused" 2
same "Android 14 images, --partition vendor=other/vendor_a.img" \
	"--android-root $I14 --partition vendor=other/vendor_a.img" "$EX14" \
	"s|$I14/system.img:/system/|$R14/system/system/|; s|other/vendor_a.img:/|$R14/vendor/|; s|$I14/\([a-z_]*\)\.img:/|$R14/\1/|"
same "Android 14 from --partition images alone (no ROOT)" \
	"--partition system=$I14/system.img --partition vendor=other/vendor_a.img --partition system_ext=$I14/system_ext.img --partition product=$I14/product.img --partition odm=$I14/odm.img" \
	"$EX14" "s|$I14/system.img:/system/|$R14/system/system/|; s|other/vendor_a.img:/|$R14/vendor/|; s|$I14/\([a-z_]*\)\.img:/|$R14/\1/|"
mv other/vendor_a.img $I14/vendor.img

# ---- label, relabel: the same image bytes as with the explicit files ----

# the system image itself, its policy read from it (shared lock, closed) before it is written
cp $I9/system.img t_a.img && cp $I9/system.img t_b.img && cp $I9/system.img t_self.img
run la $F label t_a.img --android-root $I9 --json la.json
expect_rc "label a system image --android-root" 0
run lb $F label t_b.img $EX9
expect_rc "label the same image -S" 0
cmp -s t_a.img t_b.img && ok "label --android-root: the image -S makes, byte for byte" ||
	bad "label --android-root and -S made different images"
fsck_clean t_a.img "label --android-root"
mkdir -p S9 && cp $I9/vendor.img S9/ && cp t_self.img S9/system.img
run lself $F label S9/system.img --android-root S9
expect_rc "label the system image of ROOT itself" 0
cmp -s S9/system.img t_b.img && ok "label ROOT/system.img with its own policy: the image -S makes" ||
	bad "labeling ROOT/system.img with its own policy made another image"
"$PY" - la.json "$I9" <<'EOF' >json.out 2>&1 && ok "--json: policy_files names each file taken" || bad "--json policy_files: $(tr '\n' '|' <json.out)"
import json, sys
j = json.load(open(sys.argv[1]))
root = sys.argv[2]
got = [(f["kind"], f["part"], f["path"], f["from"]) for f in j["policy_files"]]
want = [("file_contexts", "plat", "/system/etc/selinux/plat_file_contexts",
         root + "/system.img:/system/etc/selinux/plat_file_contexts"),
        ("file_contexts", "vendor", "/vendor/etc/selinux/vendor_file_contexts",
         root + "/vendor.img:/etc/selinux/vendor_file_contexts")]
assert got == want, got
assert j["summary"]["differ"] > 5, j["summary"]["differ"]
EOF

# relabel from Android 9's policy to the device's (Android 14's): what relabel --to makes
cp t_b.img r_a.img && cp t_b.img r_b.img
run ra $F relabel r_a.img --from "${EX9#-S }" --android-root $I14 --json ra.json
expect_rc "relabel --from OLD --android-root" 0
run rb $F relabel r_b.img --from "${EX9#-S }" --to "${EX14#-S }"
expect_rc "relabel --from OLD --to NEW" 0
cmp -s r_a.img r_b.img && ok "relabel --android-root: the image relabel --to makes" ||
	bad "relabel --android-root and --to made different images"
grep -q '"policy_files"' ra.json && ok "relabel --json: policy_files" || bad "relabel --json has no policy_files"

# userdata: -a /data takes the device's seapp_contexts (Android 8.1's plat_ and nonplat_)
mkdir -p data/system data/data/com.example.app/files data/user_de/0/com.example.app data/misc
cp packages.list data/system/packages.list
echo x >data/data/com.example.app/files/a
mkimg_q d.img data 8M
cp d.img d_a.img && cp d.img d_b.img && cp d.img d_c.img
run da $F label d_a.img -a /data --android-root $R81 -v --json da.json
expect_rc "label userdata -a /data --android-root" 0
run db $F label d_b.img -a /data $EX81 $SE81
expect_rc "label userdata -a /data -S --seapp" 0
cmp -s d_a.img d_b.img && ok "userdata: --android-root gives the image --seapp gives" ||
	bad "userdata: --android-root and --seapp made different images"
grep -q "policy: vendor seapp_contexts: /vendor/etc/selinux/nonplat_seapp_contexts, read from $R81/vendor/etc/selinux/nonplat_seapp_contexts" da.err &&
	ok "-v names the seapp_contexts taken" || bad "-v does not name the seapp_contexts: $(grep policy da.err | tr '\n' '|')"
grep -q '"kind": "seapp_contexts", "part": "plat"' da.json && ok "--json names the seapp_contexts" ||
	bad "--json does not name the seapp_contexts"
run dc $F label d_c.img -a /data --android-root $R81 --packages packages.list
expect_rc "--packages with --android-root" 0
cmp -s d_c.img d_b.img && ok "--packages overrides the image's packages.list (the same one here)" ||
	bad "--packages with --android-root made another image"

# ---- refused: exit 2, what is missing and where it was looked for named, nothing written ----

cp d.img keep.img
before=$(sum keep.img)
mkdir -p NOV/vendor && cp $I9/system.img NOV/ && : >NOV/vendor/build.prop
run novendor $F label keep.img --android-root NOV
expect_rc "Treble system without vendor: refused" 2
expect_match "... names the missing vendor file_contexts" "$(cat "$OUT/novendor.err")" \
	"*no vendor file_contexts*/vendor/etc/selinux/vendor_file_contexts, /vendor_file_contexts, /vendor/etc/selinux/nonplat_file_contexts, /nonplat_file_contexts*"
expect_match "... and says where it looked" "$(cat "$OUT/novendor.err")" \
	"*/vendor = NOV/vendor (directory)*"
mkdir -p EMPTY
run nothing $F label keep.img --android-root EMPTY
expect_rc "no policy at all: refused" 2
expect_match "... names the missing plat file_contexts" "$(cat "$OUT/nothing.err")" \
	"*no plat file_contexts: looked for /system/etc/selinux/plat_file_contexts, /plat_file_contexts, /file_contexts.bin, /file_contexts*"
mkdir -p NOSEAPP && cp -R $R9/system $R9/vendor NOSEAPP/ && rm NOSEAPP/system/system/etc/selinux/plat_seapp_contexts
run noseapp $F label keep.img -a /data --android-root NOSEAPP
expect_rc "/data without seapp_contexts: refused" 2
expect_match "... names the missing plat seapp_contexts" "$(cat "$OUT/noseapp.err")" \
	"*no plat seapp_contexts: looked for /system/etc/selinux/plat_seapp_contexts, /plat_seapp_contexts, /seapp_contexts*"
mkdir -p BOTH && cp -R $R9/system $R9/vendor BOTH/ && cp $I9/vendor.img BOTH/
run both $F label keep.img --android-root BOTH
expect_rc "ROOT/vendor and ROOT/vendor.img: refused" 2
expect_match "... naming both" "$(cat "$OUT/both.err")" "*both BOTH/vendor.img and BOTH/vendor*--partition vendor=PATH*"
run withS $F label keep.img --android-root $R9 -S "${EX9#-S }"
expect_rc "-S with --android-root: refused" 2
run withseapp $F check keep.img --android-root $R9 --seapp $R9/system/system/etc/selinux/plat_seapp_contexts
expect_rc "--seapp with --android-root: refused" 2
run withto $F relabel keep.img --from none --to "${EX9#-S }" --android-root $R9
expect_rc "--to with --android-root: refused" 2
run badpart $F lookup --partition vendor=nowhere.img /x
expect_rc "--partition naming nothing: refused" 2
expect_match "... naming it" "$(cat "$OUT/badpart.err")" "*--partition vendor=nowhere.img: No such file*"
# a bad line in a file read out of an image: named IMAGE:PATH:LINE:COLUMN
mkdir -p BADV/vendor/etc/selinux && cp $I9/system.img BADV/
printf '/vendor(/.*)? u:object_r:vendor_file:s0\n/vendor/bin/x -q u:object_r:x:s0\n' >BADV/vendor/etc/selinux/vendor_file_contexts
mkimg_q BADV/vendor.img BADV/vendor && rm -r BADV/vendor
run badline $F label keep.img --android-root BADV/
expect_rc "a bad line in an image's vendor_file_contexts" 2
expect_match "... named IMAGE:PATH:LINE:COLUMN" "$(cat "$OUT/badline.err")" \
	"*BADV/vendor.img:/etc/selinux/vendor_file_contexts:2:15: bad file type '-q'*"
# a symlink loop where the plat file would be: as good as nothing there (libselinux's access());
# a directory where a file is due: named
mkdir -p LOOP/system && cp -R $R9/vendor LOOP/ && ln -s /system/etc LOOP/system/etc
run loop $F label keep.img --android-root LOOP
expect_rc "a symlink loop: no plat file_contexts" 2
expect_match "... refused as missing" "$(cat "$OUT/loop.err")" "*no plat file_contexts*"
# (keep.img holds system/packages.list: it is labeled as /data, whose seapp_contexts are looked
# for too)
mkdir -p DIRF/system/etc/selinux/plat_file_contexts && cp -R $R9/vendor DIRF/ &&
	cp $R9/system/system/etc/selinux/plat_seapp_contexts DIRF/system/etc/selinux/
run dirf $F label keep.img --android-root DIRF
expect_rc "a directory where plat_file_contexts is due" 2
expect_match "... named" "$(cat "$OUT/dirf.err")" "*DIRF/system/etc/selinux/plat_file_contexts (/system/etc/selinux/plat_file_contexts): not a regular file*"
expect_eq "refused runs left the image as it was" "$(sum keep.img)" "$before"
finish
