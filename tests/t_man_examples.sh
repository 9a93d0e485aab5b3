#!/bin/sh
# The examples of the man pages (man/*.1) and the README that work on a /data (-a /data), run as
# written, so that they cannot drift (issue 31): extracted from the pages' .EX blocks (continued
# lines joined, groff's escapes undone) and the README's code, each run in a root of its own
# (chroot, in a mount namespace of its own: /data is a loop-mounted image, / holds the device's
# partitions as a recovery mounts them, /system_root too, and the current directory the files
# the examples name: plat_file_contexts, new/..., userdata.img), on a small phone's /data
# (tests/devdatalib.sh: labeled by its walks, with the levels its own processes set) and on the
# same /data as a build made it (never labeled). Read back with debugfs:
#  - every example whose target is a phone's own /data (the path /data) uses --as-device;
#  - on the phone's /data: with --as-device, label exits 0 and changes nothing (the policy is
#    the device's: the levels stay), check exits 0; without it, label and relabel exit 2 and
#    leave it byte for byte, check exits 1 and counts the three levels the device keeps;
#  - on the build's /data: label exits 0 with the full label's labels, check exits 1.
# Without root, unshare(1) or loop devices, the examples on the path /data are not run (said).
. "$TOP/tests/imglib.sh"
. "$TOP/tests/relabellib.sh"
. "$TOP/tests/devdatalib.sh"
rl_need
cd "$OUT" || exit 1
D=$OUT/d
dd_build "$D"

# ---- the examples, as written ------------------------------------------------------------------------
cat >"$OUT/examples.py" <<'EOF'
"""examples.py TOP: "SOURCE<TAB>COMMAND" for each example that works on -a /data, deduplicated
(the first source kept, the others added after a comma)."""
import glob, os, re, sys

top = sys.argv[1]
found = {}


def add(src, cmd):
    cmd = " ".join(cmd.split())
    if not cmd.startswith("fclabel ") or not re.search(r"(^| )-a /data( |$)", cmd):
        return
    found.setdefault(cmd, []).append(src)


def unescape(s):
    return (s.replace("\\-", "-").replace("\\(dq", '"').replace("\\&", "")
            .replace("\\e", "\\"))


for page in sorted(glob.glob(os.path.join(top, "man", "*.1"))):
    name = os.path.basename(page)
    lines = open(page).read().split("\n")
    inside, cur = False, ""
    for line in lines:
        if line.startswith(".EX"):
            inside, cur = True, ""
            continue
        if line.startswith(".EE"):
            inside = False
            continue
        if not inside:
            continue
        if line.endswith("\\e"):  # a continued line: "\" at its end, as written
            cur += line[:-2] + " "
            continue
        add(name, unescape(cur + line))
        cur = ""
readme = open(os.path.join(top, "README.md")).read()
for m in re.finditer(r"`(fclabel [^`]*)`", readme):
    add("README.md", m.group(1))
for line in readme.split("\n"):
    if line.startswith("    fclabel "):
        add("README.md", line)
for cmd, srcs in found.items():
    print("%s\t%s" % (",".join(srcs), cmd))
EOF
"$PY" "$OUT/examples.py" "$TOP" >"$OUT/examples" || { bad "examples.py"; finish; }
n=$(wc -l <"$OUT/examples")
[ "$n" -ge 8 ] && ok "$n examples on -a /data in the man pages and the README" ||
	bad "only $n examples on -a /data found: $(cut -f2 "$OUT/examples" | tr '\n' '|')"
sed 's/^/    /' "$OUT/examples"
while IFS='	' read -r src cmd; do
	set -- $cmd
	[ "$2" = label ] || [ "$2" = check ] || [ "$2" = relabel ] || { bad "$src: $cmd: not label, check or relabel"; continue; }
	case " $cmd " in
	*" /data -a /data "*)
		case " $cmd " in
		*" --as-device "*) ok "$src: on a phone's /data, with --as-device: $cmd" ;;
		*) bad "$src: on a phone's /data without --as-device: $cmd" ;;
		esac ;;
	esac
done <"$OUT/examples"

# ---- the root they run in --------------------------------------------------------------------------------
R=$OUT/root
rm -rf "$R"
mkdir -p "$R/usr" "$R/proc" "$R/dev" "$R/data" "$R/fcbin" "$R/reports" "$R/work/new"
for l in bin sbin lib lib64 lib32 libx32; do [ -e "/$l" ] && ln -s "usr/$l" "$R/$l"; done
cp "$FCLABEL" "$R/fcbin/fclabel"
pol() { # DIR: the device's policy files as its partitions hold them
	mkdir -p "$1/system/etc/selinux" "$1/vendor/etc/selinux"
	cp "$DD_FC" "$1/system/etc/selinux/plat_file_contexts"
	cp "$DD_SEAPP" "$1/system/etc/selinux/plat_seapp_contexts"
	printf '/vendor(/.*)?\tu:object_r:vendor_file:s0\n' >"$1/vendor/etc/selinux/vendor_file_contexts"
	printf '# no vendor app rules\n' >"$1/vendor/etc/selinux/vendor_seapp_contexts"
}
pol "$R"              # --android-root /
pol "$R/system_root"  # --partition system=/system_root (system-as-root: system/etc inside)
rm -rf "$R/system_root/vendor"
pol "$R/work/new"     # --android-root new
for d in "$R/work" "$R/work/new"; do
	cp "$R/system/etc/selinux/plat_file_contexts" "$R/system/etc/selinux/plat_seapp_contexts" "$d/"
	cp "$R/vendor/etc/selinux/vendor_file_contexts" "$R/vendor/etc/selinux/vendor_seapp_contexts" "$d/"
done
# the sanitized run's options, with their paths inside the root (reports are copied out)
SAN_REPORTS=$(printf '%s' "${ASAN_OPTIONS:-}" | sed -n 's/.*log_path=\([^:]*\)\/asan.*/\1/p')
supp=$(printf '%s' "${LSAN_OPTIONS:-}" | sed -n 's/.*suppressions=\([^:]*\).*/\1/p')
[ -n "$supp" ] && cp "$supp" "$R/fcbin/lsan.supp"
inner() { printf '%s' "$1" | sed 's|log_path=[^:]*/\([a-z]*san\)|log_path=/reports/\1|; s|suppressions=[^:]*|suppressions=/fcbin/lsan.supp|'; }
cat >"$OUT/inroot.sh" <<'EOF'
# inroot.sh ROOT DATAIMG CMD: in the mount namespace unshare made, ROOT gets /usr, /dev and /proc,
# and DATAIMG (when not empty) at /data; CMD runs in ROOT, in /work, and its status is ours
R=$1 img=$2 cmd=$3
mount --bind /usr "$R/usr" && mount --bind /dev "$R/dev" && mount -t proc proc "$R/proc" || exit 90
if [ -n "$img" ]; then mount -o loop "$img" "$R/data" || exit 91; fi
exec chroot "$R" /bin/sh -c "cd /work && PATH=/fcbin:/usr/bin:/usr/sbin:/bin && $cmd"
EOF
# inroot DATAIMG CMD: the status, stdout in run.out, stderr in run.err
inroot() {
	ASAN_OPTIONS=$(inner "${ASAN_OPTIONS:-}") UBSAN_OPTIONS=$(inner "${UBSAN_OPTIONS:-}") \
		LSAN_OPTIONS=$(inner "${LSAN_OPTIONS:-}") \
		unshare -m --propagation private sh "$OUT/inroot.sh" "$R" "$1" "$2" >"$OUT/run.out" 2>"$OUT/run.err"
	_rc=$?
	if [ -n "$SAN_REPORTS" ] && [ -n "$(ls "$R/reports")" ]; then
		cp "$R/reports"/* "$SAN_REPORTS/" && rm -f "$R/reports"/*
	fi
	return $_rc
}
chroot_ok=
reason="not root"
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v chroot >/dev/null; then
	cp --sparse=always "$D/un.img" "$OUT/probe.img"
	inroot "$OUT/probe.img" 'test -d /data/system && fclabel --version >/dev/null' && chroot_ok=1 ||
		reason="a root of its own cannot be made here: $(head -n 2 "$OUT/run.err" | tr '\n' ' ')"
fi
[ -n "$chroot_ok" ] || say "$reason: the examples on the path /data are not run"

# ---- each example, on a phone's /data and on a build's --------------------------------------------------------
i=0
while IFS='	' read -r src cmd; do
	i=$((i + 1))
	set -- $cmd
	kind=$2 target=$3
	case " $cmd " in *" --as-device "*) dev=1 ;; *) dev= ;; esac
	for side in phone build; do
		img=$OUT/ex$i.$side.img
		[ $side = phone ] && cp --sparse=always "$D/P.img" "$img" || cp --sparse=always "$D/un.img" "$img"
		s0=$(sum "$img")
		if [ "$target" = /data ]; then
			[ -n "$chroot_ok" ] || continue
			inroot "$img" "$cmd"
			rc=$?
		elif [ -n "$chroot_ok" ]; then
			mv "$img" "$R/work/userdata.img"
			inroot "" "$cmd"
			rc=$?
			mv "$R/work/userdata.img" "$img"
		else
			mv "$img" "$R/work/userdata.img"
			(cd "$R/work" && PATH=$R/fcbin:$PATH && eval "$cmd") >"$OUT/run.out" 2>"$OUT/run.err"
			rc=$?
			mv "$R/work/userdata.img" "$img"
		fi
		cp "$OUT/run.err" "$OUT/ex$i.$side.err"
		what="$src, on a $side's /data: $cmd"
		err1=$(head -n 1 "$OUT/run.err")
		rl_dump "$img" "$D/manifest" "$OUT/ex$i.$side.dump"
		if [ $side = phone ] && [ "$kind" = check ]; then
			if [ -n "$dev" ]; then
				expect_eq "$what: exit 0, nothing to change" "$rc:$(cat "$OUT/run.out")" "0:"
			else
				expect_eq "$what: exit 1, the levels the device keeps counted" \
					"$rc:$(grep -c "3 of the 3 difference(s) are levels the device keeps" "$OUT/run.err")" "1:1"
			fi
		elif [ $side = phone ] && [ -n "$dev" ]; then
			expect_eq "$what: exit 0, the levels the phone keeps stay, nothing changes" \
				"$rc:$(dd_differ "$D/P.dump" "$OUT/ex$i.$side.dump")" "0:"
		elif [ $side = phone ] && [ "$target" = /data ]; then
			# (a mount writes the image: its labels and digests are what stays)
			rl_digests "$img" "$D/dirs" "$OUT/ex$i.$side.dig"
			expect_eq "$what: refused, exit 2, labels and digests as they were" \
				"$rc:$(dd_differ "$D/P.dump" "$OUT/ex$i.$side.dump")$(dd_differ "$D/P.dig" "$OUT/ex$i.$side.dig")" "2:"
		elif [ $side = phone ]; then
			expect_eq "$what: refused, exit 2, the image as it was" "$rc:$(sum "$img")" "2:$s0"
		elif [ "$kind" = check ]; then
			expect_eq "$what: exit 1 (never labeled)" "$rc" 1
		else
			expect_eq "$what: exit 0, the full label's labels" \
				"$rc:$(dd_differ "$D/L.dump" "$OUT/ex$i.$side.dump")" "0:"
		fi
		case $rc in 0 | 1 | 2) ;; *) say "    stderr: $err1" ;; esac
	done
done <"$OUT/examples"
finish
