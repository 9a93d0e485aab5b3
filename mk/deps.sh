#!/bin/sh
# Checks that what fclabel builds and tests with is installed; as root, installs what is missing
# (Debian/Ubuntu), otherwise prints the exact apt-get line and fails.
set -u
pkgs="libselinux1-dev libsepol-dev libext2fs-dev libblkid-dev libpcre2-dev nettle-dev zlib1g-dev liblz4-dev liblzma-dev libzstd-dev e2fsprogs pkg-config"
missing=""
need() { # need PACKAGE CHECK-COMMAND...
	pkg=$1; shift
	"$@" >/dev/null 2>&1 || missing="$missing $pkg"
}
need pkg-config command -v pkg-config
for pc in libselinux:libselinux1-dev libsepol:libsepol-dev ext2fs:libext2fs-dev blkid:libblkid-dev libpcre2-8:libpcre2-dev nettle:nettle-dev zlib:zlib1g-dev liblz4:liblz4-dev liblzma:liblzma-dev libzstd:libzstd-dev; do
	need "${pc#*:}" pkg-config --exists "${pc%%:*}"
done
need e2fsprogs command -v mke2fs
need gcc command -v cc
need make command -v make
# `make demo` (sh mk/deps.sh demo) needs no more: building fclabel and e2fsprogs. What follows is
# for the tests and the cross builds (make check, make static-*), and changes a machine more
# (cross toolchains, qemu, valgrind, dpkg's foreign architectures): not for a demo.
if [ "${1:-}" != demo ]; then
# what the tests use
need android-sdk-libsparse-utils command -v img2simg
need attr command -v setfattr
need acl command -v setfacl
need python3 command -v python3
# the JSON reports the suite writes, validated against man/fclabel-report.schema.json
need python3-jsonschema /usr/bin/python3 -c 'import jsonschema'
# man page tests (groff -ww, man -l); make static and t_install: the static archives (libext2fs,
# libpcre2-8, libsepol, libz come with the -dev packages above; libcom_err.a with comerr-dev)
need groff-base command -v groff
need man-db command -v man
need comerr-dev test -f "$(cc -print-file-name=libcom_err.a 2>/dev/null)"
# `make fuzz` (sh mk/deps.sh fuzz): clang and its libFuzzer/ASan/UBSan runtimes
fuzz_ok() {
	printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' |
		clang -x c -fsanitize=fuzzer,address,undefined -o /dev/null - 2>/dev/null
}
if [ "${1:-}" = fuzz ]; then
	need clang command -v clang
	need libclang-rt-dev fuzz_ok
fi
# EROFS images (t_erofs, t_dump, make bench-image): Debian's mkfs.erofs builds them; fsck.erofs
# and dump.erofs are bench-image's EROFS floor
need erofs-utils command -v mkfs.erofs
need time test -x /usr/bin/time
need valgrind command -v valgrind
need strace command -v strace
# disk images with partition tables (t_partitions)
need fdisk command -v sfdisk
# --policy tests: checkpolicy compiles the fixture policy; refpolicy's binary policy.33
need checkpolicy command -v checkpolicy
# compiled file_contexts (t_fcbin): libselinux 3.4's sefcontext_compile
need selinux-utils test -x /usr/sbin/sefcontext_compile
need selinux-policy-default test -f /etc/selinux/default/policy/policy.33
# make static-arm64/static-armhf and their tests under qemu (tests/t_cross.sh): the cross
# compilers, qemu-user-static, and the targets' libraries in private sysroots (mk/cross.sh; what
# cannot be had here is said, and those tests skip)
sh "$(dirname "$0")/cross.sh" deps "$(dirname "$0")/../build/sysroot-"
fi
missing=$(echo $missing)
[ -z "$missing" ] && exit 0
line="apt-get install -y $missing"
if [ "$(id -u)" != 0 ]; then
	echo "fclabel: missing build or test dependencies; as root, run:" >&2
	echo "    apt-get update && $line" >&2
	exit 1
fi
echo "deps: installing $missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null 2>&1 || true
# shellcheck disable=SC2086
apt-get install -y -qq $missing >/dev/null || { echo "deps: apt-get install failed: $line" >&2; exit 1; }
