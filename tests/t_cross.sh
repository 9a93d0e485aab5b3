#!/bin/sh
# fclabel for the phone, tested where it runs: make static-arm64 and make static-armhf
# (mk/cross.mk) are built, and each binary runs under qemu-user (qemu-aarch64-static,
# qemu-arm-static, called directly: binfmt_misc is not needed) beside the host's fclabel:
# - the binary: the target's machine, static (no interpreter, no dynamic section), --version
#   naming the target, every library static, PCRE2 with its JIT; its stripped size;
# - lookups: every Android policy of $SHARED (tests/gen_fc.py android: listing paths, paths made
#   from each spec, every mode) and generated adversarial policies: `lookup --batch -0` answers
#   and exit status equal to the host build's;
# - images: the Pixel 5 listing (or a tree shaped like this machine) as ext4 with 256-byte and
#   128-byte inodes and as an Android sparse image, and as a 6 GiB image, raw and sparse (a 32-bit
#   offset would not reach its end), labeled by each: byte for byte the host build's image; and
#   relabeled after a policy change, the same;
# - live trees: a userdata tree labeled with --seapp --digests (the one-entry walk), and a tree
#   with symlinks, a FIFO and hard links with -T 2 (the threaded walk; qemu 7.2 has no getxattrat
#   for its guests, so the fallback through descriptors runs): every security.* attribute equal
#   to the host build's, what it prints too, and `check` finds nothing;
# - what a recovery ramdisk lacks: traced (qemu -strace), no file is opened outside the inputs,
#   the target and /proc, /sys/devices/system/cpu, /dev, /etc/mtab (no NSS, locale, gconv or
#   /tmp), and nothing is written outside the target; without /proc (a mount namespace with an
#   empty /proc): an image is still labeled as with it (a note says the mount table is missing),
#   an image a loop device has is refused, a live tree is labeled with a note naming what it
#   cannot reach, and a file system mounted inside it is still not crossed.
# Skips, saying why, when no cross compiler, qemu-user-static or target library can be had.
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/imglib.sh"
need_image_tools
command -v getfattr >/dev/null 2>&1 || skip "getfattr is not installed (Debian package attr)"
cd "$OUT" || exit 1
start=$(date +%s)

qemu_of() { case $1 in arm64) echo qemu-aarch64-static ;; armhf) echo qemu-arm-static ;; esac; }
triple_of() { case $1 in arm64) echo aarch64-linux-gnu ;; armhf) echo arm-linux-gnueabihf ;; esac; }

# ---- the builds ---------------------------------------------------------------------------------
archs="" why=""
for a in arm64 armhf; do
	t=$(triple_of "$a") q=$(qemu_of "$a")
	if ! command -v "$t-gcc" >/dev/null 2>&1; then
		why="$why; $t-gcc is not installed (make deps as root installs gcc-$t)"
	elif ! command -v "$q" >/dev/null 2>&1; then
		why="$why; $q is not installed (make deps as root installs qemu-user-static)"
	elif ! sh "$TOP/mk/cross.sh" sysroot "$a" "$TOP/build/sysroot-$a" >"$a.sysroot.log" 2>&1; then
		why="$why; no $a libraries: $(tail -n 1 "$a.sysroot.log")"
	elif make -s -C "$TOP" "static-$a" >"$a.make.log" 2>&1; then
		archs="$archs $a"
		ok "make static-$a: $(tail -n 1 "$a.make.log")"
	else
		bad "make static-$a failed: $(grep -v '^[a-z0-9_-]*-gcc \|^[a-z0-9_-]*-strip ' "$a.make.log" | tail -n 5 | tr '\n' '|')"
	fi
done
why=${why#; }
if [ -z "$archs" ]; then
	[ "$fails" -eq 0 ] && skip "no cross build to run: $why"
	finish
fi
[ -z "$why" ] || echo "note: not run: $why"

# The trees (tens of thousands of entries, copied and removed: slow on a busy disk) go to an
# ext4 file system of their own, loop-mounted, when that can be had; else to $OUT.
L=$OUT
mkdir -p "$OUT/trees"
if [ "$(id -u)" = 0 ] && mke2fs -q -F -t ext4 -O ^has_journal -N 100000 "$OUT/trees.img" 1G \
	>/dev/null 2>&1 && mount -o loop "$OUT/trees.img" "$OUT/trees" 2>/dev/null; then
	L=$OUT/trees
	trap 'umount "$OUT/trees" 2>/dev/null' EXIT
fi
# on ARCH CMD...: the ARCH build of fclabel under qemu
on() {
	_a=$1
	shift
	"$(qemu_of "$_a")" "$TOP/fclabel-$_a" "$@"
}
# what a label run prints, without its timing and the tree's or image's own name
norm() { sed -e "s|$2|TARGET|g" -e 's/, [0-9.]* s$//' "$1"; }

# ---- the binaries ---------------------------------------------------------------------------------
for a in $archs; do
	b=$TOP/fclabel-$a
	case $a in arm64) m=AArch64 j="ARM-64" ;; armhf) m=ARM j="ARM-Thumb2" ;; esac
	expect_eq "$a: the machine" "$(readelf -h "$b" | sed -n 's/^ *Machine: *//p')" "$m"
	readelf -l "$b" | grep -q INTERP && bad "$a: has a program interpreter" ||
		ok "$a: no program interpreter"
	readelf -d "$b" 2>&1 | grep -q 'no dynamic section' && ok "$a: no dynamic section" ||
		bad "$a: dynamic: $(readelf -d "$b" | grep NEEDED | tr '\n' ' ')"
	v=$(on "$a" --version)
	expect_eq "$a: --version names the target" "$(echo "$v" | sed -n 's/^target: //p')" "$(triple_of "$a")"
	expect_eq "$a: --version: every library static" "$(echo "$v" | sed -n 's/^linked statically: //p')" \
		"libext2fs libcom_err libblkid libpcre2-8 libnettle libsepol liblz4 liblzma libzstd libz libc"
	expect_eq "$a: --version: nothing dynamic" "$(echo "$v" | sed -n 's/^linked dynamically: //p')" none
	expect_match "$a: PCRE2 with its JIT" "$v" "*PCRE2 1*, JIT for $j*"
	echo "    fclabel-$a: $(wc -c <"$b") bytes stripped, build/$a/fclabel $(wc -c <"$TOP/build/$a/fclabel") unstripped"
done

echo "[$(($(date +%s) - start)) s]"
# ---- lookups ----------------------------------------------------------------------------------------
# lookups NAME DIR...: each DIR has fcarg and queries: every build's answers and exit status are
# the host's
nq=0
lookups() {
	_what=$1
	shift
	_n=0 _bad=0
	for _d in "$@"; do
		_fc=$(cat "$_d/fcarg")
		"$FCLABEL" lookup -S "$_fc" --batch -0 <"$_d/queries" >"$_d/host.out" 2>/dev/null
		_hrc=$?
		_n=$((_n + $(tr -cd '\000' <"$_d/queries" | wc -c)))
		for _a in $archs; do
			on "$_a" lookup -S "$_fc" --batch -0 <"$_d/queries" >"$_d/$_a.out" 2>/dev/null
			_rc=$?
			if [ "$_rc" != "$_hrc" ] || ! cmp -s "$_d/$_a.out" "$_d/host.out"; then
				_bad=$((_bad + 1))
				bad "$_a: lookups on $_fc differ from the host's (exit $_rc, host $_hrc): $(cmp "$_d/$_a.out" "$_d/host.out" 2>&1 | head -n 1)"
			fi
		done
	done
	nq=$((nq + _n))
	[ "$_bad" -eq 0 ] && ok "$_what: $# policies, $_n queries: every answer of$archs equals the host's"
}
"$PY" "$TOP/tests/gen_fc.py" adversarial --seed "$FC_SEED" --policies 12 --queries 3000 --out "$OUT/adv" \
	>"$OUT/adv.log" 2>&1 || bad "gen_fc.py adversarial: $(tail -n 1 "$OUT/adv.log")"
lookups "adversarial policies" "$OUT"/adv/p*
if [ -d "$SHARED/android" ]; then
	"$PY" "$TOP/tests/gen_fc.py" android --seed "$FC_SEED" --shared "$SHARED" --out "$OUT/android" \
		>"$OUT/android.log" 2>&1 || bad "gen_fc.py android: $(tail -n 1 "$OUT/android.log")"
	lookups "Android policies of $SHARED" "$OUT"/android/[0-9]*-*
else
	echo "note: no Android policies (\$SHARED/android is absent: $SHARED): adversarial policies only"
fi

echo "[$(($(date +%s) - start)) s]"
# ---- images ----------------------------------------------------------------------------------------------
# an image tree: the Pixel 5 listing (empty files, modes, symlinks), or this machine's shape
IT=$L/imgtree
pixel=$(ls -d "$SHARED"/images/pixel5_*/ 2>/dev/null | head -n 1)
if [ -n "$pixel" ] && [ -f "$pixel/tree.tsv" ]; then
	"$PY" - "$pixel/tree.tsv" "$IT" <<'EOF'
import os, sys
root = sys.argv[2].encode()
for line in open(sys.argv[1], "rb"):
    if line.startswith(b"#"):
        continue
    r = line.rstrip(b"\n").split(b"\t")
    if len(r) < 4 or b".." in r[3].split(b"/"):
        continue
    p = os.path.join(root, r[3])
    os.makedirs(p if r[0] == b"d" else os.path.dirname(p), exist_ok=True)
    if r[0] == b"l":
        os.symlink(r[4] if len(r) > 4 and r[4] else b"target", p)
    elif r[0] in (b"f", b"x"):
        with open(p, "wb"):
            pass
        os.chmod(p, 0o755 if r[0] == b"x" else 0o644)
EOF
	IFC=$pixel/system_system_etc_selinux_plat_file_contexts,$pixel/vendor_etc_selinux_vendor_file_contexts
	IMP=/
else
	echo "note: no Pixel 5 listing under $SHARED/images: the image is shaped like this machine"
	host_tree "$IT" 4000 >/dev/null
	IFC=$TOP/fixtures/host-policy/file_contexts
	IMP=/
fi
echo "image tree: $(find "$IT" | wc -l) entries; policy $IFC"
mkimg "$OUT/base256.img" "$IT" 64M -t ext4 -I 256 -N 12000
mkimg "$OUT/base128.img" "$IT" 64M -t ext4 -I 128 -N 12000
command -v img2simg >/dev/null && img2simg "$OUT/base256.img" "$OUT/basesparse.img" 2>/dev/null ||
	echo "note: img2simg is not installed: no sparse image"
# 6 GiB images (sparse files), raw and Android sparse: offsets past 4 GiB on a 32-bit target
mkimg "$OUT/basebig.img" "$IT" 6G -t ext4 -I 128 -N 12000 -E lazy_itable_init=1
[ -f "$OUT/basesparse.img" ] && img2simg "$OUT/basebig.img" "$OUT/basebigsparse.img" 2>/dev/null
for kind in 256 128 sparse big bigsparse; do
	[ -f "$OUT/base$kind.img" ] || continue
	cp --sparse=always "$OUT/base$kind.img" "$OUT/host$kind.img"
	"$FCLABEL" label "$OUT/host$kind.img" -a "$IMP" -S "$IFC" --no-sync >"$OUT/host$kind.out" 2>&1
	hrc=$?
	expect_eq "host: label $kind image" "$hrc" 0
	for a in $archs; do
		cp --sparse=always "$OUT/base$kind.img" "$OUT/$a$kind.img"
		on "$a" label "$OUT/$a$kind.img" -a "$IMP" -S "$IFC" --no-sync >"$OUT/$a$kind.out" 2>&1
		expect_eq "$a: label $kind image: exit" "$?" "$hrc"
		expect_eq "$a: label $kind image: what it prints" \
			"$(norm "$OUT/$a$kind.out" "$OUT/$a$kind.img")" "$(norm "$OUT/host$kind.out" "$OUT/host$kind.img")"
		sparse_same "$OUT/$a$kind.img" "$OUT/host$kind.img" &&
			ok "$a: the $kind image, byte for byte the host build's" ||
			bad "$a: the $kind image differs from the host build's"
		on "$a" check "$OUT/$a$kind.img" -a "$IMP" -S "$IFC" >"$OUT/$a$kind.check" 2>&1
		expect_eq "$a: check of the labeled $kind image" "$?" 0
	done
	case $kind in *sparse) ;; *) fsck_clean "$OUT/host$kind.img" "host: $kind image" ;; esac
done
grep -q 'changed [1-9]' "$OUT/host256.out" || bad "the image labeling changed nothing: $(cat "$OUT/host256.out")"
# relabel after a policy change (PCRE2's partial matching, with its JIT, decides what it enters)
first=${IFC%%,*}
rest=""
case $IFC in *,*) rest=",${IFC#*,}" ;; esac
sed 's/:system_file:s0/:system_file_x:s0/; s/:bin_t:s0/:bin_x_t:s0/' "$first" >"$OUT/new_fc"
NFC=$OUT/new_fc$rest
cp "$OUT/host256.img" "$OUT/hostrl.img"
"$FCLABEL" relabel "$OUT/hostrl.img" -a "$IMP" --from "$IFC" --to "$NFC" --no-sync >"$OUT/hostrl.out" 2>&1
expect_eq "host: relabel" "$?" 0
grep -q 'changed [1-9]' "$OUT/hostrl.out" || bad "the relabel changed nothing: $(cat "$OUT/hostrl.out")"
for a in $archs; do
	cp "$OUT/host256.img" "$OUT/${a}rl.img"
	on "$a" relabel "$OUT/${a}rl.img" -a "$IMP" --from "$IFC" --to "$NFC" --no-sync >"$OUT/${a}rl.out" 2>&1
	expect_eq "$a: relabel: what it prints" "$(norm "$OUT/${a}rl.out" "$OUT/${a}rl.img")" \
		"$(norm "$OUT/hostrl.out" "$OUT/hostrl.img")"
	cmp -s "$OUT/${a}rl.img" "$OUT/hostrl.img" && ok "$a: relabel: the host build's image" ||
		bad "$a: relabel: the image differs from the host build's"
done

echo "[$(($(date +%s) - start)) s]"
# ---- live trees -----------------------------------------------------------------------------------------
[ "$(id -u)" = 0 ] || { echo "not root: live trees (security.* attributes) not labeled"; finish; }
probe=$OUT/xprobe
: >"$probe"
setfattr -n security.selinux -v x "$probe" 2>/dev/null ||
	{ echo "$OUT's file system keeps no security.selinux: live trees not labeled"; finish; }
UFC=$TOP/fixtures/userdata/file_contexts
SEAPP=$TOP/fixtures/seapp/plat_seapp_contexts
mkdir -p "$OUT/ud"
"$PY" "$TOP/tests/gen_userdata.py" tree "$L/ud" "$OUT/ud" >/dev/null ||
	{ bad "gen_userdata.py tree"; finish; }
# the threaded walk's tree: a part of it (a thousand entries: copies are slow), with symlinks, a
# FIFO, hard links and a wrong label
TT=$L/tt
mkdir -p "$TT/user" "$TT/user_de"
for d in system misc misc_ce misc_de user/10 user_de/10; do cp -a "$L/ud/$d" "$TT/$d"; done
mkdir -p "$TT/misc/t"
ln -s ../../system/packages.list "$TT/misc/t/link"
ln -s /nowhere "$TT/misc/t/dangling"
mkfifo "$TT/misc/t/fifo"
: >"$TT/misc/t/f"
ln "$TT/misc/t/f" "$TT/misc/t/hard"
setfattr -h -n security.selinux -v "u:object_r:wrong:s0" "$TT/misc/t/link"

# tree SIDE NAME ARGS...: a fresh copy of NAME's tree labeled by SIDE (host or an arch)
tree() {
	_s=$1 _n=$2
	shift 2
	_src=$L/ud
	[ "$_n" = tt ] && _src=$TT
	rm -rf "$L/$_s.$_n"
	cp -a "$_src" "$L/$_s.$_n"
	if [ "$_s" = host ]; then
		"$FCLABEL" label "$L/$_s.$_n" "$@" >"$OUT/$_s.$_n.out" 2>&1
	else
		on "$_s" label "$L/$_s.$_n" "$@" >"$OUT/$_s.$_n.out" 2>&1
	fi
	echo $? >"$OUT/$_s.$_n.rc"
	xattr_dump "$L/$_s.$_n" "$OUT/$_s.$_n.dump"
}
tree host ud -a /data -S "$UFC" --seapp "$SEAPP" --digests
tree host tt -a /data -S "$UFC" -T 2
expect_eq "host: label userdata --seapp --digests" "$(cat "$OUT/host.ud.rc")" 0
expect_eq "host: label -T 2" "$(cat "$OUT/host.tt.rc")" 0
grep -q 'security.sehash=' "$OUT/host.ud.dump" || bad "host: no digest written"
for a in $archs; do
	tree "$a" ud -a /data -S "$UFC" --seapp "$SEAPP" --digests
	tree "$a" tt -a /data -S "$UFC" -T 2
	for n in ud tt; do
		expect_eq "$a: label $n: exit" "$(cat "$OUT/$a.$n.rc")" "$(cat "$OUT/host.$n.rc")"
		expect_eq "$a: label $n: what it prints" "$(norm "$OUT/$a.$n.out" "$L/$a.$n")" \
			"$(norm "$OUT/host.$n.out" "$L/host.$n")"
		cmp -s "$OUT/$a.$n.dump" "$OUT/host.$n.dump" &&
			ok "$a: label $n: every security.* attribute the host build's ($(wc -l <"$OUT/host.$n.dump"))" ||
			{ bad "$a: label $n: attributes differ from the host build's:"; diff "$OUT/$a.$n.dump" "$OUT/host.$n.dump" | head -n 6; }
	done
	on "$a" check "$L/$a.ud" -a /data -S "$UFC" --seapp "$SEAPP" --digests >"$OUT/$a.ud.check" 2>&1
	expect_eq "$a: check --seapp --digests after it" "$?" 0
	on "$a" check "$L/$a.tt" -a /data -S "$UFC" -T 2 >"$OUT/$a.tt.check" 2>&1
	expect_eq "$a: check -T 2 after it" "$?" 0
	rm -rf "$L/$a.ud" "$L/$a.tt"
done
rm -rf "$L/host.ud" "$L/host.tt"

echo "[$(($(date +%s) - start)) s]"
# ---- what a recovery lacks ---------------------------------------------------------------------------------
# trace ARCH NAME CMD-ARGS...: the paths the ARCH build names in its system calls (qemu -strace),
# checked: reads only of the inputs, the target and the few system files, writes only in the target
trace() {
	_a=$1 _n=$2
	shift 2
	"$(qemu_of "$_a")" -strace "$TOP/fclabel-$_a" "$@" >/dev/null 2>"$OUT/$_a.$_n.strace"
	"$PY" - "$OUT/$_a.$_n.strace" "$OUT" "$TOP" "${SHARED:-/nonexistent}" <<'EOF'
import os, re, sys
text = open(sys.argv[1], errors="replace").read()
# each folder as given and as its links resolve (../shared may be a link, as may the checkout)
out, top, shared = ({os.path.realpath(p), os.path.normpath(os.path.abspath(p))}
                    for p in sys.argv[2:5])
def inside(p, ds):
    ps = {p, os.path.realpath(p)}
    if isinstance(ds, str):
        ds = {ds}
    return any(q == d or q.startswith(d + "/") for q in ps for d in ds)
system = ("/proc/", "/sys/devices/system/cpu/", "/dev/")
bad = set()
calls = re.findall(r'\b([a-z_0-9]+)\(([^()\n]*?"[^"\n]*"[^()\n]*)\)', text)
for name, args in calls:
    for path in re.findall(r'"([^"\n]*)"', args):
        if not path.startswith("/"):
            continue  # relative to a descriptor of the tree, or to the test's folder
        p = os.path.normpath(path)
        writes = name in ("unlinkat", "unlink", "renameat", "renameat2", "rename", "linkat",
                          "mkdirat", "mkdir", "symlinkat", "truncate") or \
            (name in ("openat", "open") and re.search(r"O_WRONLY|O_RDWR|O_CREAT", args))
        if writes and not inside(p, out):
            bad.add("%s writes %s" % (name, p))
        elif not (inside(p, out) or inside(p, top) or inside(p, shared) or p == "/etc/mtab"
                  or p.startswith(system) or p in ("/proc", "/dev")):
            bad.add("%s %s" % (name, p))
print("%d calls naming a path" % len(calls))
for b in sorted(bad):
    print("outside: " + b)
sys.exit(1 if bad or not calls else 0)
EOF
}
for a in $archs; do
	cp --sparse=always "$OUT/base128.img" "$OUT/$a.trace.img"
	rm -rf "$L/$a.trace"
	cp -a "$TT" "$L/$a.trace"
	for step in "img label $OUT/$a.trace.img -a $IMP -S $IFC" "tree label $L/$a.trace -a /data -S $UFC -T 2" \
		"ud label $L/$a.trace -a /data -S $UFC --seapp $SEAPP --digests" "lookup lookup -S $IFC /system/bin/sh"; do
		# shellcheck disable=SC2086
		if r=$(trace "$a" $step); then ok "$a: ${step%% *}: nothing read or written outside the inputs, the target and /proc ($r)"
		else bad "$a: ${step%% *}: $(echo "$r" | tr '\n' '|')"; fi
	done
	rm -rf "$L/$a.trace" "$OUT/$a.trace.img"
done

# without /proc: a mount namespace whose /proc is an empty tmpfs
if ! command -v unshare >/dev/null || ! unshare -m true 2>/dev/null; then
	echo "unshare -m does not work here: the runs without /proc not tried"
	finish
fi
a=${archs# }
a=${a%% *}
cp --sparse=always "$OUT/base128.img" "$OUT/noproc.img"
cp --sparse=always "$OUT/base128.img" "$OUT/noproc-loop.img"
rm -rf "$L/noproc"
cp -a "$TT" "$L/noproc"
mkdir -p "$L/noproc/inner"
export q="$(qemu_of "$a")" b="$TOP/fclabel-$a" IMP IFC UFC OUT L
unshare -m sh -c '
	mount --make-rprivate / 2>/dev/null
	mount -t tmpfs none /proc || exit 99
	mount -t tmpfs none "$L/noproc/inner" && : >"$L/noproc/inner/x"
	[ -e /proc/self ] && exit 98
	"$q" "$b" label "$OUT/noproc.img" -a "$IMP" -S "$IFC" --no-sync >"$OUT/noproc.img.out" 2>&1
	echo $? >"$OUT/noproc.img.rc"
	if loop=$(losetup -f --show "$OUT/noproc-loop.img" 2>/dev/null); then
		"$q" "$b" label "$OUT/noproc-loop.img" -a "$IMP" -S "$IFC" --no-sync >"$OUT/noproc.loop.out" 2>&1
		echo $? >"$OUT/noproc.loop.rc"
		losetup -d "$loop"
	fi
	"$q" "$b" label "$L/noproc" -a /data -S "$UFC" -T 2 >"$OUT/noproc.tree.out" 2>&1
	echo $? >"$OUT/noproc.tree.rc"
	umount "$L/noproc/inner"
'
case $? in
99) echo "cannot mount a tmpfs over /proc in a mount namespace: the runs without /proc not tried"; finish ;;
98) bad "/proc still there in the namespace"; finish ;;
esac
expect_eq "no /proc: $a labels an image" "$(cat "$OUT/noproc.img.rc")" 0
expect_match "no /proc: ... and says the mount table is missing" "$(cat "$OUT/noproc.img.out")" \
	"*note: no mount table*the image backs no loop device*"
sparse_same "$OUT/noproc.img" "$OUT/host128.img" && ok "no /proc: ... the same image as with /proc" ||
	bad "no /proc: the image differs from the one labeled with /proc"
if [ -f "$OUT/noproc.loop.rc" ]; then
	expect_eq "no /proc: an image a loop device has is refused" "$(cat "$OUT/noproc.loop.rc")" 2
	expect_match "no /proc: ... naming the loop device" "$(cat "$OUT/noproc.loop.out")" \
		"*noproc-loop.img is the backing file of /dev/*loop*refusing*"
	cmp -s "$OUT/noproc-loop.img" "$OUT/base128.img" && ok "no /proc: ... and left as it was" ||
		bad "no /proc: the refused image changed"
else
	echo "losetup does not work here: the loop device refusal not tried"
fi
expect_eq "no /proc: a live tree: exit 1 (symlinks and the FIFO left, counted)" "$(cat "$OUT/noproc.tree.rc")" 1
out=$(cat "$OUT/noproc.tree.out")
expect_match "no /proc: ... one note says why" "$out" "*note: /proc is not mounted: the labels of symlinks*"
expect_match "no /proc: ... the mount inside is not crossed" "$out" "*1 mount point(s) not crossed (/data/inner*"
expect_match "no /proc: ... the rest labeled" "$out" "*scanned *, changed [1-9]*errors [1-4],*"
xattr_dump "$L/noproc" "$OUT/noproc.dump"
grep -v '^\(\./\)\{0,1\}misc/t/\(link\|dangling\|fifo\)	' "$OUT/host.tt.dump" >"$OUT/host.tt.nolinks"
grep -v '^\(\./\)\{0,1\}misc/t/\(link\|dangling\|fifo\)	' "$OUT/noproc.dump" >"$OUT/noproc.nolinks"
cmp -s "$OUT/noproc.nolinks" "$OUT/host.tt.nolinks" &&
	ok "no /proc: every other label is the one given with /proc" ||
	{ bad "no /proc: labels differ:"; diff "$OUT/noproc.nolinks" "$OUT/host.tt.nolinks" | head -n 6; }
if [ "$L" = "$OUT" ]; then rm -rf "$L/noproc" "$L/ud" "$TT" "$IT"; else umount "$L"; fi
rm -f "$OUT"/*.img
echo "t_cross: $nq queries per build; $(($(date +%s) - start)) s"
finish
