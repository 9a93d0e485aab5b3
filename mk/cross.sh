#!/bin/sh
# What make static-arm64 and make static-armhf (mk/cross.mk) build with, and what make check
# runs their binaries under. Debian/Ubuntu.
#
#   sh mk/cross.sh tools             as root, installs what is missing of the cross compilers
#                                    (gcc-aarch64-linux-gnu, gcc-arm-linux-gnueabihf, their C
#                                    libraries) and qemu-user-static; otherwise says what to run
#   sh mk/cross.sh sysroot ARCH DIR  the target's static libraries and headers in DIR, a private
#                                    sysroot: the target's -dev packages and their libraries
#                                    fetched with apt-get download (after dpkg --add-architecture
#                                    ARCH and apt-get update, as root) and unpacked with dpkg-deb
#                                    -x. Nothing is installed for ARCH: Debian 12's libext2fs-dev
#                                    cannot be installed for two architectures at once.
#   sh mk/cross.sh deps DIR-PREFIX   both of the above, for every target (DIR-PREFIXarm64, ...);
#                                    what cannot be had is said, and is not an error (the tests
#                                    that need it skip and say why)
#
# Each is quick when already done: the sysroot's .stamp lists the packages and versions it holds,
# and a sysroot is fetched again only when that list changes (the versions are the host's own
# when the archive still has them, so both builds link the same library code).
set -u
ARCHS="arm64 armhf"
# the packages whose static archives the link takes, and their libraries
PKGS="libext2fs-dev libext2fs2 comerr-dev libcom-err2 libblkid-dev libblkid1 libpcre2-dev libpcre2-8-0 nettle-dev
	libnettle8 libsepol-dev libsepol2 liblz4-dev liblz4-1 liblzma-dev liblzma5 libzstd-dev
	libzstd1 zlib1g-dev zlib1g"

triple() {
	case $1 in
	arm64) echo aarch64-linux-gnu ;;
	armhf) echo arm-linux-gnueabihf ;;
	*) echo "cross: unknown target '$1' (arm64, armhf)" >&2; return 1 ;;
	esac
}
# the Debian packages of a target's compiler and C library
toolchain_pkgs() {
	t=$(triple "$1") || return 1
	echo "gcc-$t libc6-dev-$1-cross binutils-$t"
}

root() { [ "$(id -u)" = 0 ]; }

tools() {
	missing=""
	for a in $ARCHS; do
		t=$(triple "$a")
		command -v "$t-gcc" >/dev/null 2>&1 && [ -f "/usr/$t/lib/libc.a" ] ||
			missing="$missing $(toolchain_pkgs "$a")"
	done
	command -v qemu-aarch64-static >/dev/null 2>&1 && command -v qemu-arm-static >/dev/null 2>&1 ||
		missing="$missing qemu-user-static"
	missing=$(echo $missing)
	[ -n "$missing" ] || return 0
	if ! root; then
		echo "cross: not installed: $missing (as root: apt-get install $missing)" >&2
		return 1
	fi
	echo "deps: installing $missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null 2>&1 || true
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1 || {
		echo "cross: apt-get install $missing failed" >&2
		return 1
	}
}

# want ARCH: "PACKAGE:ARCH=VERSION" of each package, the host's version where it has one
want() {
	for p in $PKGS; do
		v=$(dpkg-query -W -f='${Version}' "$p" 2>/dev/null)
		echo "$p:$1${v:+=$v}"
	done
}

sysroot() {
	arch=$1 dir=$2
	triple "$arch" >/dev/null || return 1
	stamp=$dir/.stamp
	w=$(want "$arch")
	[ -f "$stamp" ] && [ "$(sed -n '/^#/!p' "$stamp")" = "$w" ] && return 0
	command -v apt-get >/dev/null 2>&1 && command -v dpkg-deb >/dev/null 2>&1 ||
		{ echo "cross: apt-get and dpkg-deb are needed to fetch the $arch libraries" >&2; return 1; }
	if ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
		root || { echo "cross: as root: dpkg --add-architecture $arch && apt-get update" >&2; return 1; }
		dpkg --add-architecture "$arch" || return 1
		apt-get update -qq >/dev/null 2>&1 || true
	fi
	dl=$dir.dl
	rm -rf "$dl" "$dir.new"
	mkdir -p "$dl" "$dir.new" || return 1
	got=""
	for spec in $w; do
		# the host's version, or when the archive no longer has it, the current one
		if ! (cd "$dl" && apt-get download -qq "$spec" >/dev/null 2>&1) &&
			! (cd "$dl" && apt-get download -qq "${spec%%=*}" >/dev/null 2>&1); then
			# the lists may not know the architecture yet
			if root && [ -z "$got" ]; then
				apt-get update -qq >/dev/null 2>&1 || true
				got=updated
			fi
			(cd "$dl" && apt-get download -qq "${spec%%=*}" >"$dl/log" 2>&1) || {
				echo "cross: apt-get download ${spec%%=*} failed: $(tail -n 1 "$dl/log")" >&2
				rm -rf "$dl" "$dir.new"
				return 1
			}
		fi
	done
	for deb in "$dl"/*.deb; do
		dpkg-deb -x "$deb" "$dir.new" || { rm -rf "$dl" "$dir.new"; return 1; }
	done
	{
		echo "# fetched by mk/cross.sh: $(cd "$dl" && ls | tr '\n' ' ')"
		echo "$w"
	} >"$dir.new/.stamp"
	rm -rf "$dl" "$dir"
	mv "$dir.new" "$dir"
	echo "cross: $arch libraries unpacked into $dir" >&2
}

case ${1:-} in
tools) tools ;;
sysroot) [ $# = 3 ] || { echo "usage: mk/cross.sh sysroot ARCH DIR" >&2; exit 2; }; sysroot "$2" "$3" ;;
deps)
	[ $# = 2 ] || { echo "usage: mk/cross.sh deps DIR-PREFIX" >&2; exit 2; }
	tools || echo "deps: the cross builds and their qemu tests will be skipped" >&2
	for a in $ARCHS; do
		sysroot "$a" "$2$a" || echo "deps: no $a sysroot: make static-$a cannot link" >&2
	done
	exit 0
	;;
*) echo "usage: mk/cross.sh tools | sysroot ARCH DIR | deps DIR-PREFIX" >&2; exit 2 ;;
esac
