#!/bin/bash
# Builds libselinux 3.8's sefcontext_compile (format 6 .bin files) into the folder that
# ../shared/tools/build-libselinux-new fills (default ~/.cache/libselinux-new), from the same
# Debian source package, linked with its static libselinux.a. Prints the tool's path.
# Used by make bench (format 6 load times) and t_fcbin ($SEFCONTEXT_COMPILE_NEW's default).
set -euo pipefail
dest=${1:-$HOME/.cache/libselinux-new}
if [ -x "$dest/sefcontext_compile" ]; then echo "$dest/sefcontext_compile"; exit 0; fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
uri=$( { cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null || true; } \
      | grep -E '^(URIs:|deb )' | grep -v security | head -1 | awk '{print $2}' || true)
[ -n "$uri" ] || { echo "build_sefc_new: no apt source found" >&2; exit 1; }
mkdir -p "$work/lists/partial"
echo "deb-src $uri trixie main" >"$work/sources.list"
apt=(-o Dir::Etc::SourceList="$work/sources.list" -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$work/lists")
apt-get "${apt[@]}" update >/dev/null 2>&1
(cd "$work" && apt-get "${apt[@]}" source --download-only libselinux >/dev/null 2>&1 || true)
tarball=$(ls "$work"/libselinux_*.orig.tar.gz 2>/dev/null | head -1)
[ -n "$tarball" ] || { echo "build_sefc_new: could not download the libselinux source package" >&2; exit 1; }
tar -xzf "$tarball" -C "$work"
src=$(ls -d "$work"/libselinux-*/ | head -1)
make -C "$src/src" -j"$(nproc)" CFLAGS="-O2 -fPIC" \
	PCRE_CFLAGS="-DUSE_PCRE2 -DPCRE2_CODE_UNIT_WIDTH=8" PCRE_LDLIBS=-lpcre2-8 libselinux.a >"$work/build.log" 2>&1 ||
	{ tail -20 "$work/build.log" >&2; exit 1; }
mkdir -p "$dest"
cc -O2 -DUSE_PCRE2 -DPCRE2_CODE_UNIT_WIDTH=8 -I"$src/include" -I"$src/src" -o "$dest/sefcontext_compile" \
	"$src/utils/sefcontext_compile.c" "$src/src/libselinux.a" -lpcre2-8 -lsepol
echo "$dest/sefcontext_compile"
