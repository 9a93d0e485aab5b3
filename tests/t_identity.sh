# What an image says it is (fclabel-label(1), WHAT AN IMAGE SAYS IT IS): its volume name (mke2fs
# -L, as AOSP's build gives it), the shape of its tree and where it was last mounted decide the
# mount point. The slips of issue 31, each built with mke2fs -d from small Android-shaped trees of
# our own:
#   - an -a the image contradicts (a system-as-root image given -a /system, a userdata image given
#     -a /system, a system image given -a /data, a vendor image given -a /system, a Linux root
#     given -a /usr) is refused before any work: exit 2, the image as it was, both mount points
#     and --force-mount-point named; the same for check and relabel;
#   - with no -a, the mount point the image names is used and the summary says which and why;
#   - an image that says nothing is labeled as before, but a run where no spec matches most of
#     its files exits 1, naming the mount points whose specs label its top-level names;
#   - --force-mount-point overrides (and says so); hints fit the image (no --packages for a
#     system image given -a /data).
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/imglib.sh"
need_image_tools
cd "$OUT" || exit 1
F=$FCLABEL
SEAPP=$TOP/fixtures/seapp/plat_seapp_contexts

# an Android-shaped policy: a system-as-root root, /system, /vendor (as Android writes it, with no
# literal stem), /data
cat >fc <<'EOF'
/	u:object_r:rootfs:s0
/init	u:object_r:init_exec:s0
/lost\+found(/.*)?	u:object_r:rootfs:s0
/system(/.*)?	u:object_r:system_file:s0
/system/bin/init	--	u:object_r:init_exec:s0
/system/bin/sh	--	u:object_r:shell_exec:s0
/(vendor|system/vendor)(/.*)?	u:object_r:vendor_file:s0
/(vendor|system/vendor)/etc(/.*)?	u:object_r:vendor_configs_file:s0
/(vendor|system/vendor)/bin/hw(/.*)?	u:object_r:vendor_hal_file:s0
/data(/.*)?	u:object_r:system_data_file:s0
/data/system/packages\.list	--	u:object_r:packages_list_file:s0
/data/app(/.*)?	u:object_r:apk_data_file:s0
/data/media(/.*)?	u:object_r:media_rw_data_file:s0
/usr(/.*)?	u:object_r:usr_t:s0
/etc(/.*)?	u:object_r:etc_t:s0
EOF

# the trees
mkdir -p sar/system/bin sar/system/etc sar/system/framework sar/dev sar/proc
echo 'ro.build.version.sdk=34' >sar/system/build.prop
printf 'x' >sar/system/bin/init
printf 'x' >sar/system/bin/sh
ln -s /system/bin/init sar/init
ln -s /system/etc sar/etc

mkdir -p sys/bin sys/etc/selinux sys/framework sys/app/Foo
echo 'ro.build.version.sdk=28' >sys/build.prop
printf 'x' >sys/bin/sh
printf 'x' >sys/framework/framework.jar
printf 'x' >sys/app/Foo/Foo.apk
printf '/system(/.*)? u:object_r:system_file:s0\n' >sys/etc/selinux/plat_file_contexts

mkdir -p ven/etc/selinux ven/etc/init ven/bin/hw ven/lib64 ven/firmware
echo 'ro.vendor.build.version.sdk=34' >ven/build.prop
printf '/(vendor|system/vendor)(/.*)? u:object_r:vendor_file:s0\n' >ven/etc/selinux/vendor_file_contexts
printf 'x' >ven/etc/init/hw.rc
printf 'x' >ven/bin/hw/android.hardware.foo-service
for i in 1 2 3 4; do printf 'x' >ven/lib64/lib$i.so; printf 'x' >ven/firmware/fw$i.bin; done

# the same vendor files with nothing that says vendor (no selinux files, no build.prop)
mkdir -p plain
cp -R ven/etc ven/bin ven/lib64 ven/firmware plain/
rm -rf plain/etc/selinux

mkdir -p ud/system ud/misc ud/media/0 ud/app ud/data/com.example.app
echo 'com.example.app 10050 0 /data/user/0/com.example.app default:targetSdkVersion=34 3003 0 1' \
	>ud/system/packages.list
printf 'x' >ud/data/com.example.app/f

mkdir -p lin/etc lin/usr/lib lin/usr/bin
printf 'ID=debian\n' >lin/usr/lib/os-release
ln -s ../usr/lib/os-release lin/etc/os-release
printf 'x' >lin/usr/bin/ls

# a tree that says nothing, whose files the specs do label at /
mkdir -p any/etc any/usr/bin
printf 'x' >any/etc/passwd
printf 'x' >any/usr/bin/ls

mkimg sar.img sar 8M -t ext4 -L / || finish
mkimg sarshape.img sar 8M -t ext4 || finish
mkimg sys.img sys 8M -t ext4 -L system || finish
mkimg ven.img ven 8M -t ext4 -L vendor || finish
mkimg venshape.img ven 8M -t ext4 || finish
mkimg venname.img plain 8M -t ext4 -L vendor || finish
mkimg plain.img plain 8M -t ext4 || finish
mkimg ud.img ud 8M -t ext4 || finish
mkimg lin.img lin 8M -t ext4 || finish
mkimg any.img any 8M -t ext4 || finish
mkimg conflict.img sys 8M -t ext4 -L vendor || finish
mkimg lastdata.img any 8M -t ext4 -M /data || finish
mkimg lasthost.img any 8M -t ext4 -M /mnt/img || finish

# label FILE PATH: the image's security.selinux of PATH ("" when none)
label_of() {
	debugfs -R "ea_get -V $2 security.selinux" "$1" 2>/dev/null | tr -d '\000' | sed 's/ *$//'
}
# first STEM: the first line the run said
first() { head -n 1 "$OUT/$1.err"; }

# ---- an -a the image contradicts: refused before any work, each kind -----------------------
# contra NAME IMAGE WRONG-A SAYS
contra() {
	cname=$1 cwrong=$3 csays=$4
	cp "$2" c.img
	s0=$(sum c.img)
	for cmd in label check relabel; do
		case $cmd in
		relabel) set -- --from none --to fc ;;
		*) set -- -S fc ;;
		esac
		run "c_$cmd" "$F" "$cmd" c.img -a "$cwrong" "$@"
		expect_rc "$cname: $cmd -a $cwrong refused" 2
		expect_match "$cname: $cmd names both and the override" "$(first "c_$cmd")" \
			"fclabel $cmd: c.img says it is $csays (*), but -a says $cwrong: *give -a $csays*--force-mount-point to $cmd it as $cwrong anyway; nothing done"
	done
	expect_eq "$cname: the image is as it was" "$(sum c.img)" "$s0"
}
contra "system-as-root -a /system" sar.img /system /
contra "system-as-root by its shape alone" sarshape.img /system /
contra "userdata -a /system" ud.img /system /data
contra "system -a /data" sys.img /data /system
contra "vendor -a /system" ven.img /system /vendor
contra "vendor -a /" ven.img / /vendor
contra "Linux root -a /usr" lin.img /usr /
expect_match "the reasons: volume name and shape" "$(cat "$OUT/c_label.err")" "*it holds etc/os-release, as a Linux root file system does*"
run why "$F" label sar.img -S fc -a /system
expect_match "system-as-root: why" "$(first why)" \
	"*(its volume name is '/' and it holds system/build.prop and init, as a system-as-root image does)*"

# ---- no -a: the mount point the image names, said in the summary ---------------------------
cp ven.img v.img
run v "$F" label v.img -S fc
expect_rc "vendor image, no -a: labeled" 0
expect_match "... as /vendor, saying why" "$(sed -n 2p "$OUT/v.err")" \
	"fclabel label: v.img: labeled as /vendor (its volume name is 'vendor' and it holds etc/selinux/vendor_file_contexts and build.prop, as a vendor image does)"
expect_eq "... /etc/init/hw.rc is vendor_configs_file" "$(label_of v.img /etc/init/hw.rc)" "u:object_r:vendor_configs_file:s0"
expect_eq "... /bin/hw/... is vendor_hal_file" "$(label_of v.img /bin/hw/android.hardware.foo-service)" "u:object_r:vendor_hal_file:s0"
run vc "$F" check v.img -S fc
expect_rc "... check without -a afterwards" 0
expect_match "... check says so" "$(cat "$OUT/vc.err")" "*fclabel check: v.img: checked as /vendor (*"
run vs "$F" check v.img -S fc -a /system/vendor
expect_rc "... -a /system/vendor is the same place" 0
run vn "$F" label v.img -S fc -a /vendor
expect_eq "... -a /vendor: nothing more said" "$(grep -c 'labeled as' "$OUT/vn.err")" 0

cp venshape.img v2.img
run v2 "$F" label v2.img -S fc -n
expect_match "vendor by its shape alone" "$(cat "$OUT/v2.err")" \
	"*v2.img: dry run as /vendor (it holds etc/selinux/vendor_file_contexts and build.prop, as a vendor image does)*"
cp venname.img v3.img
run v3 "$F" label v3.img -S fc
expect_rc "vendor by its volume name alone" 0
expect_match "... said" "$(cat "$OUT/v3.err")" "*v3.img: labeled as /vendor (its volume name is 'vendor')*"
expect_eq "... labeled as /vendor" "$(label_of v3.img /lib64/lib1.so)" "u:object_r:vendor_file:s0"

cp sar.img s.img
run s "$F" label s.img -S fc
expect_rc "system-as-root, no -a" 0
expect_eq "... /system/bin/init is init_exec" "$(label_of s.img /system/bin/init)" "u:object_r:init_exec:s0"
expect_eq "... labeled at /, as without identification: nothing more said" "$(wc -l <"$OUT/s.err")" 1

cp ud.img u.img
run u "$F" label u.img -S fc
expect_rc "userdata, no -a" 0
expect_match "... as /data" "$(cat "$OUT/u.err")" "*u.img: labeled as /data (it holds system/packages.list, as userdata does)*"
expect_eq "... its packages.list is packages_list_file" "$(label_of u.img /system/packages.list)" "u:object_r:packages_list_file:s0"
cp ud.img u2.img
run u2 "$F" label u2.img -S fc --seapp "$SEAPP"
expect_rc "userdata, no -a, --seapp: /data's packages.list read" 0

cp sys.img y.img
run y "$F" relabel y.img --from none --to fc
expect_rc "system image, relabel without -a" 0
expect_match "... as /system" "$(cat "$OUT/y.err")" "*y.img: relabeled as /system (its volume name is 'system' and it holds build.prop, bin/, etc/ and framework/, as a system image does)*"
expect_eq "... /bin/sh is shell_exec" "$(label_of y.img /bin/sh)" "u:object_r:shell_exec:s0"

cp lastdata.img l.img
run l "$F" label l.img -S fc
expect_match "last mounted at /data: as /data" "$(cat "$OUT/l.err")" "*l.img: labeled as /data (it was last mounted at /data)*"
cp lasthost.img l2.img
run l2 "$F" label l2.img -S fc
expect_rc "last mounted on a host (/mnt/img): says nothing" 0
expect_eq "... nothing more said" "$(wc -l <"$OUT/l2.err")" 1

# ---- a volume name and a shape that disagree ----------------------------------------------
cp conflict.img k.img
s0=$(sum k.img)
run k "$F" label k.img -S fc
expect_rc "volume name 'vendor' on a system tree, no -a: refused" 2
expect_match "... says both" "$(first k)" \
	"fclabel label: k.img says two things of itself: its volume name is 'vendor' (/vendor), but it holds build.prop, bin/, etc/ and framework/, as a system image does (/system); give -a *"
expect_eq "... nothing written" "$(sum k.img)" "$s0"
run k2 "$F" label k.img -S fc -a /system
expect_rc "... -a /system says which" 0
run k3 "$F" check k.img -S fc -a /data
expect_rc "... -a /data is neither" 2
run k4 "$F" check k.img -S fc -a /data --force-mount-point
expect_match "... forced: said" "$(cat "$OUT/k4.err")" \
	"*k.img: checked as /data (-a, --force-mount-point), though its volume name is 'vendor' (/vendor), but it holds *"

# ---- an image that says nothing --------------------------------------------------------------
cp any.img a.img
run a "$F" label a.img -S fc
expect_rc "an image that says nothing, its files labeled at /: as before" 0
expect_eq "... nothing more said" "$(wc -l <"$OUT/a.err")" 1
cp lin.img li.img
run li "$F" label li.img -S fc
expect_rc "a Linux root, no -a: labeled at /, as before" 0
expect_eq "... nothing more said" "$(wc -l <"$OUT/li.err")" 1

# vendor files with nothing that says vendor: no spec matches most of them at /
cp plain.img p.img
run p "$F" label p.img -S fc
expect_rc "vendor files that say nothing, no -a: not a success" 1
expect_match "... the summary first" "$(first p)" "fclabel label: p.img: scanned *, no label *"
expect_match "... then why, naming /vendor" "$(sed -n 2p "$OUT/p.err")" \
	"fclabel label: p.img: * of * files got no label at / (no spec matches them) and nothing in the image says where it is mounted; the specs label most of its top-level names (*bin*etc*firmware*lib64*) at /vendor: give -a with the one it has"
run pc "$F" check p.img -S fc
expect_rc "... check: exit 1 too" 1
run pv "$F" check p.img -S fc -a /vendor
expect_rc "... with -a /vendor (what it said): labeled right, check fails on the labels only" 1
run pl "$F" label p.img -S fc -a /vendor
expect_rc "... label -a /vendor" 0
expect_eq "... nothing more said" "$(wc -l <"$OUT/pl.err")" 1
# <<none>> is an answer
printf '/\tu:object_r:rootfs:s0\n/.*\t<<none>>\n' >fcnone
cp plain.img pn.img
run pn "$F" label pn.img -S fcnone
expect_rc "a policy that answers <<none>> for most files: not a failure" 0

# ---- --force-mount-point ----------------------------------------------------------------------
cp ven.img fo.img
run fo "$F" label fo.img -S fc -a /system --force-mount-point
expect_rc "vendor image -a /system --force-mount-point: labeled" 0
expect_match "... and said" "$(sed -n 2p "$OUT/fo.err")" \
	"fclabel label: fo.img: labeled as /system (-a, --force-mount-point), though it says it is /vendor (*)"
expect_eq "... as /system" "$(label_of fo.img /etc/init/hw.rc)" "u:object_r:system_file:s0"
run fa "$F" label fo.img -S fc --force-mount-point
expect_rc "--force-mount-point without -a" 2
expect_match "... says it goes with -a" "$(first fa)" "*--force-mount-point goes with -a*"
run fd "$F" check "$OUT/ven" -S fc -a /vendor --force-mount-point
expect_rc "--force-mount-point on a directory" 2

# ---- hints that fit the image (issue 31, slip 5) -----------------------------------------------
cp sys.img h.img
s0=$(sum h.img)
run h "$F" label h.img -S fc -a /data --seapp "$SEAPP"
expect_rc "system image -a /data --seapp: refused" 2
expect_match "... the contradiction first" "$(first h)" "fclabel label: h.img says it is /system (*), but -a says /data:*"
expect_eq "... no --packages hint" "$(grep -c -- '--packages' "$OUT/h.err")" 0
run h2 "$F" label h.img -S fc -a /data --seapp "$SEAPP" --force-mount-point
expect_rc "... forced: packages.list cannot be read" 2
expect_match "... not asked for --packages" "$(first h2)" \
	"fclabel label: h.img: cannot read /system/packages.list in it (*); it says it is /system (*), not userdata: --seapp and --packages are for a /data image"
expect_eq "... nothing written" "$(sum h.img)" "$s0"
# a userdata image that lacks packages.list is still asked for --packages
rm ud/system/packages.list
mkimg ud2.img ud 8M -t ext4 || finish
run h3 "$F" label ud2.img -S fc -a /data --seapp "$SEAPP"
expect_rc "userdata without packages.list -a /data --seapp" 2
expect_match "... asked for --packages" "$(first h3)" "*cannot read /system/packages.list in it*: give --packages FILE"

# ---- an Android sparse image is read for what it says too ----------------------------------
if command -v img2simg >/dev/null 2>&1 && img2simg ven.img vs.simg >/dev/null 2>&1; then
	run sp "$F" label vs.simg -S fc -a /system
	expect_rc "sparse vendor image -a /system: refused" 2
	run sp2 "$F" label vs.simg -S fc
	expect_rc "sparse vendor image, no -a" 0
	expect_match "... as /vendor" "$(cat "$OUT/sp2.err")" "*vs.simg: labeled as /vendor (*"
else
	echo "note: img2simg is not installed: no sparse image"
fi

# ---- an EROFS image says what it is the same way (its volume name: mkfs.erofs -L) ------------
if command -v mkfs.erofs >/dev/null 2>&1; then
	rm -f ven.erofs venl.erofs sar.erofs conflict.erofs
	mkfs.erofs --quiet -zlz4hc ven.erofs ven >/dev/null 2>&1 || bad "mkfs.erofs ven"
	# (Debian's mkfs.erofs 1.5 has no -L: the volume name is written into the superblock here,
	# and its checksum made right again)
	setvol() { "$PY" "$TOP/tests/erofssum.py" "$1" "$2"; }
	mkfs.erofs --quiet venl.erofs plain >/dev/null 2>&1 && setvol venl.erofs vendor || bad "mkfs.erofs plain"
	mkfs.erofs --quiet sar.erofs sar >/dev/null 2>&1 || bad "mkfs.erofs sar"
	mkfs.erofs --quiet conflict.erofs sys >/dev/null 2>&1 && setvol conflict.erofs vendor || bad "mkfs.erofs conflict"
	run ev "$F" check ven.erofs -S fc
	expect_rc "EROFS vendor image, no -a: checked" 1
	expect_match "... as /vendor, by its shape" "$(cat "$OUT/ev.err")" \
		"*ven.erofs: checked as /vendor (it holds etc/selinux/vendor_file_contexts and build.prop, as a vendor image does)*"
	expect_match "... its files looked up as /vendor's" "$(cat "$OUT/ev.out")" "*/vendor/bin/hw/android.hardware.foo-service*vendor_hal_file*"
	run evd "$F" dump ven.erofs
	expect_match "EROFS vendor image: dump lists it at /vendor" "$(sed -n 2p "$OUT/evd.out")" "/vendor/*"
	run evl "$F" check venl.erofs -S fc
	expect_match "EROFS image by its volume name (vendor)" "$(cat "$OUT/evl.err")" "*venl.erofs: checked as /vendor (its volume name is 'vendor')*"
	run evs "$F" check ven.erofs -S fc -a /system
	expect_rc "EROFS vendor image -a /system refused" 2
	expect_match "... naming both and the override" "$(first evs)" "fclabel check: ven.erofs says it is /vendor (*), but -a says /system: *--force-mount-point*"
	run evf "$F" check ven.erofs -S fc -a /system --force-mount-point
	expect_rc "... --force-mount-point checks it as /system" 1
	run esar "$F" check sar.erofs -S fc -a /system
	expect_rc "EROFS system-as-root image -a /system refused" 2
	run ek "$F" dump conflict.erofs
	expect_rc "EROFS image whose volume name and shape disagree: dump refused" 2
	expect_match "... saying both" "$(first ek)" "*says two things of itself: its volume name is 'vendor'*as a system image does*"
else
	echo "     (mkfs.erofs not installed (Debian package erofs-utils): EROFS images not tried)"
fi
finish
