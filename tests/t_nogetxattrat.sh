#!/bin/sh
# The live-tree walk as on a phone's kernel (Linux 4.14 to 6.6), which has no getxattrat(2)
# (Linux 6.13): tests/nogetxattrat runs fclabel under a seccomp filter that makes that call
# fail with ENOSYS, and the threaded walk must then read every label through descriptors, with
# the same result. On a tree shaped like this machine plus symlinks (relative, dangling), a FIFO,
# hard links, a socket-less device-less mix of wrong, missing and right labels:
# - the filter works (a call gets ENOSYS) and fclabel check under it makes at most one getxattrat
#   call per thread, all refused, and reads through fgetxattr instead (strace, when installed);
# - for -T 1 and -T 2: label under the filter leaves every security.selinux as label without it
#   does, and prints the same; check under it then finds nothing; after labels are spoilt on
#   both copies, check under it lists what check without it lists, and a second label under it
#   changes exactly those.
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/imglib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (security.* attributes)"
[ -x "$FCLABEL" ] || skip "fclabel is not built ($FCLABEL): run make"
command -v getfattr >/dev/null 2>&1 || skip "getfattr is not installed (Debian package attr)"
need_nogetxattrat
cd "$OUT" || exit 1
: >probe
setfattr -n security.selinux -v x probe 2>/dev/null || skip "$OUT's file system keeps no security.selinux"
p=$("$W" --probe 2>&1)
case $p in
*"PR_SET_SECCOMP"* | *"PR_SET_NO_NEW_PRIVS"*) skip "seccomp filters are not allowed here: $p" ;;
esac
expect_eq "the filter makes getxattrat answer ENOSYS" "$p" ENOSYS

FC=$OUT/fc
zz_policy "$FC"
base=$OUT/base
mkdir -p "$base"
host_tree "$base" 3000
mkdir -p "$base/zz/d"
ln -s ../etc "$base/zz/rel"
ln -s /nowhere "$base/zz/dangling"
mkfifo "$base/zz/fifo"
: >"$base/zz/f"
ln "$base/zz/f" "$base/zz/hard"
ln "$base/zz/f" "$base/zz/d/hard2"
setfattr -h -n security.selinux -v "system_u:object_r:wrong_t:s0" "$base/zz/rel"
setfattr -n security.selinux -v "system_u:object_r:wrong_t:s0" "$base/zz/d"
echo "tree: $(find "$base" | wc -l) entries"

# fresh NAME: a copy of the tree
fresh() { rm -rf "$OUT/$1" && cp -a "$base" "$OUT/$1"; }
# what a run prints, without the tree's name, its timing and inode numbers (of another copy)
norm() { sed -e "s|$2|TREE|g" -e 's/, [0-9.]* s$//' -e 's/inode [0-9]*/inode N/g' "$1"; }
# calls OUT NAME: how many NAME calls (getxattrat: 464, as strace may not know its name) the
# trace OUT has, and how many of them failed with ENOSYS
calls() {
	case $2 in
	getxattrat) _re='\(getxattrat\|syscall_0x1d0\|syscall_464\)' ;;
	*) _re=$2 ;;
	esac
	# "PID name(...) = R", or "PID name(... <unfinished ...>" and "PID <... name resumed>) = R"
	echo "$(grep -c "^[0-9]* *$_re(" "$1") $(grep "^[0-9]* *\(<\.\.\. \)\{0,1\}$_re[( ]" "$1" | grep -c '= -1 ENOSYS')"
}

if command -v strace >/dev/null 2>&1; then
	# (LeakSanitizer cannot work under ptrace)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	export ASAN_OPTIONS
	# a check of a labeled tree: every label read (a first label mostly writes without reading)
	fresh st
	"$FCLABEL" label "$OUT/st" -a / -S "$FC" >/dev/null 2>&1
	strace -f -qq -o "$OUT/plain.strace" "$FCLABEL" check "$OUT/st" -a / -S "$FC" -T 2 >/dev/null 2>&1
	"$W" strace -f -qq -o "$OUT/filtered.strace" "$FCLABEL" check "$OUT/st" -a / -S "$FC" -T 2 >/dev/null 2>&1
	set -- $(calls "$OUT/filtered.strace" getxattrat)
	[ "$1" -ge 1 ] && [ "$1" -le 2 ] && [ "$2" = "$1" ] &&
		ok "under the filter: $1 getxattrat call(s) (at most one per thread), each ENOSYS" ||
		bad "under the filter: $1 getxattrat calls, $2 ENOSYS (want 1 or 2, all ENOSYS)"
	# through descriptors: fgetxattr, and getxattr of /proc/self/fd/N for symlinks and FIFOs
	nf=$(calls "$OUT/filtered.strace" fgetxattr | cut -d' ' -f1)
	np=$(calls "$OUT/filtered.strace" getxattr | cut -d' ' -f1)
	nents=$(find "$base" | wc -l)
	[ $((nf + np)) -ge "$nents" ] &&
		ok "under the filter: every label read through a descriptor ($nf fgetxattr, $np through /proc/self/fd; $nents entries)" ||
		bad "under the filter: only $nf fgetxattr and $np getxattr calls for $nents entries"
	set -- $(calls "$OUT/plain.strace" getxattrat)
	if [ "$1" -gt 2 ] && [ "$2" = 0 ]; then
		set -- "$1" $(calls "$OUT/plain.strace" fgetxattr)
		np=$2
		ok "without it, this kernel's getxattrat: $1 calls, $np fgetxattr"
	else
		echo "note: this kernel has no getxattrat ($1 calls, $2 ENOSYS): both runs take the fallback"
	fi
	ASAN_OPTIONS=${ASAN_OPTIONS%detect_leaks=0}
else
	echo "strace is not installed: the calls are not counted"
fi

for T in 1 2; do
	fresh "a$T"
	fresh "b$T"
	"$FCLABEL" label "$OUT/a$T" -a / -S "$FC" -T "$T" >"$OUT/a$T.out" 2>&1
	ra=$?
	"$W" "$FCLABEL" label "$OUT/b$T" -a / -S "$FC" -T "$T" >"$OUT/b$T.out" 2>&1
	rb=$?
	expect_eq "-T $T: label under the filter exits as without it" "$rb" "$ra"
	expect_eq "-T $T: ... and prints the same" "$(norm "$OUT/b$T.out" "$OUT/b$T")" "$(norm "$OUT/a$T.out" "$OUT/a$T")"
	grep -q 'changed [1-9]' "$OUT/a$T.out" || bad "-T $T: nothing changed: $(cat "$OUT/a$T.out")"
	xattr_dump "$OUT/a$T" "$OUT/a$T.dump"
	xattr_dump "$OUT/b$T" "$OUT/b$T.dump"
	cmp -s "$OUT/a$T.dump" "$OUT/b$T.dump" &&
		ok "-T $T: every label the same ($(wc -l <"$OUT/a$T.dump") attributes)" ||
		{ bad "-T $T: labels differ:"; diff "$OUT/b$T.dump" "$OUT/a$T.dump" | head -n 6; }
	"$W" "$FCLABEL" check "$OUT/b$T" -a / -S "$FC" -T "$T" >"$OUT/b$T.check" 2>&1
	expect_eq "-T $T: check under the filter after it" "$?" 0
	# spoil a few labels on both: a file, a symlink, the FIFO, a directory, a hard link
	for d in "a$T" "b$T"; do
		for f in zz/rel zz/fifo zz/d zz/hard etc; do
			setfattr -h -n security.selinux -v "system_u:object_r:spoilt_t:s0" "$OUT/$d/$f"
		done
	done
	"$FCLABEL" check "$OUT/a$T" -a / -S "$FC" -T "$T" -v >"$OUT/a$T.check2" 2>&1
	ra=$?
	"$W" "$FCLABEL" check "$OUT/b$T" -a / -S "$FC" -T "$T" -v >"$OUT/b$T.check2" 2>&1
	expect_eq "-T $T: check under the filter finds the spoilt labels" "$?:$(norm "$OUT/b$T.check2" "$OUT/b$T" | sort)" \
		"$ra:$(norm "$OUT/a$T.check2" "$OUT/a$T" | sort)"
	expect_match "-T $T: ... which are five" "$(cat "$OUT/b$T.check2")" "*differ 5,*"
	"$W" "$FCLABEL" label "$OUT/b$T" -a / -S "$FC" -T "$T" >"$OUT/b$T.again" 2>&1
	expect_match "-T $T: label under the filter again changes those" "$(cat "$OUT/b$T.again")" "*changed 5, *"
	xattr_dump "$OUT/b$T" "$OUT/b$T.dump2"
	cmp -s "$OUT/a$T.dump" "$OUT/b$T.dump2" && ok "-T $T: ... back to the same labels" ||
		bad "-T $T: after the second label the labels differ"
	rm -rf "$OUT/a$T" "$OUT/b$T"
done
rm -rf "$OUT/st" "$base"
finish
