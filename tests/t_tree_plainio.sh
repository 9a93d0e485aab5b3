#!/bin/sh
# The live-tree walk opens a directory in two calls where the kernel allows it (openat2 refusing
# to cross a mount point, statx with the encrypt flag: labeler/tree/io.c), else in four (fstatat,
# openat, fstat, FS_IOC_GETFLAGS): FCLABEL_PLAIN_IO=1 forces the four, and so does a kernel
# without openat2 and statx (tests/nogetxattrat --old refuses them, with getxattrat). On an ext4
# file system (which tells the encrypt flag through statx) and on a tmpfs (which does not), each
# a tree shaped like this machine plus symlinks, a FIFO, hard links, wrong labels, another
# tmpfs mounted inside (not crossed by default) and a bind mount of a directory of the same file
# system (crossed: openat2 refuses it, the plain calls take it):
# - the calls: the default walk opens every directory with openat2 and reads no encrypt flag by
#   ioctl on ext4; FCLABEL_PLAIN_IO=1 makes no openat2 call (strace, when installed);
# - for -T 1, -T 2 and --cross-mounts (a tree with a bind mount of its own files, walked by one
#   thread: twice.c), and -T 2 without the bind mount: label with the plain calls (FCLABEL_PLAIN_IO=1, and
#   under nogetxattrat --old) leaves every security.selinux as label with the two calls does,
#   byte for byte, and prints the same; after labels are spoilt (a file, a directory, the bind
#   mount's, the inner mount's), check -v lists the same, and label again changes the same.
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/imglib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (mounts, security.* attributes)"
[ -x "$FCLABEL" ] || skip "fclabel is not built ($FCLABEL): run make"
command -v getfattr >/dev/null 2>&1 || skip "getfattr is not installed (Debian package attr)"
command -v mke2fs >/dev/null 2>&1 || skip "mke2fs is not installed (Debian package e2fsprogs)"
[ -r /proc/self/fd ] || skip "/proc is not mounted"
need_nogetxattrat
cd "$OUT" || exit 1
track_mounts
need_tmpfs_labels
old=yes
case $("$W" --probe 2>&1) in
ENOSYS) ;;
*) old=; echo "note: seccomp filters do not work here: no run under nogetxattrat --old" ;;
esac

FC=$OUT/fc
zz_policy "$FC"
# (both names of the hard link agree: which name of a conflicting pair a -T 2 run keeps varied
# from run to run here, a question of its own, not of the calls this test compares)
cat >>"$FC" <<'EOF'
/zz/d/hard2	--	system_u:object_r:zz_hard_t:s0
/zz/inner(/.*)?	system_u:object_r:zz_inner_t:s0
/zz/(src|bind)(/.*)?	system_u:object_r:zz_bind_t:s0
EOF
base=$OUT/base
rm -rf "$base"
mkdir -p "$base"
host_tree "$base" 3000 >/dev/null
mkdir -p "$base/zz/d/e" "$base/zz/inner" "$base/zz/bind" "$base/zz/src/sub"
: >"$base/zz/src/sub/f"
ln -s ../etc "$base/zz/rel"
ln -s /nowhere "$base/zz/dangling"
mkfifo "$base/zz/fifo"
: >"$base/zz/f"
ln "$base/zz/f" "$base/zz/hard"
ln "$base/zz/f" "$base/zz/d/hard2"
setfattr -h -n security.selinux -v "system_u:object_r:wrong_t:s0" "$base/zz/rel"
setfattr -n security.selinux -v "system_u:object_r:wrong_t:s0" "$base/zz/d"
dirs=$(find "$base" -type d | wc -l)
echo "tree: $(find "$base" | wc -l) entries, $dirs directories"

# fs ext4|tmpfs: a file system of that kind mounted at $OUT/FS
fs() {
	mkdir -p "$OUT/$1"
	if [ "$1" = ext4 ]; then
		rm -f "$OUT/ext4.img"
		mke2fs -q -F -t ext4 -I 256 -N 40000 "$OUT/ext4.img" 128M >/dev/null 2>&1 &&
			mount -o loop "$OUT/ext4.img" "$OUT/ext4" || return 1
	else
		mount -t tmpfs tmpfs "$OUT/tmpfs" || return 1
	fi
	echo "$OUT/$1" >>"$mounts"
}
# fresh DIR [nobind]: a copy of the tree at DIR (on the file system it is on), with a tmpfs
# mounted at zz/inner and (unless nobind) zz/src bound at zz/bind
fresh() {
	rm -rf "$1" && cp -a "$base" "$1" || return 1
	mount -t tmpfs tmpfs "$1/zz/inner" && echo "$1/zz/inner" >>"$mounts" || return 1
	mkdir -p "$1/zz/inner/sub" && : >"$1/zz/inner/sub/x"
	[ "$2" = nobind ] && return 0
	mount --bind "$1/zz/src" "$1/zz/bind" && echo "$1/zz/bind" >>"$mounts"
}
unfresh() { umount "$1/zz/bind" "$1/zz/inner" 2>/dev/null; rm -rf "$1"; }
# what a run prints, without the tree's name, its timing and inode numbers
# (a hard-link conflict's two names: which one a run meets first follows the copy's directory
# order, not the calls under test; the conflict itself and the labels are still compared)
norm() {
	sed -e "s|$2|TREE|g" -e 's/, [0-9.]* s$//' -e 's/inode [0-9]*/inode N/g' \
	    -e 's/hard link conflict: .*; keeping the first/hard link conflict/' "$1"
}
# type DUMP PATH: the type of PATH's label in the dump (xattr_dump's), or -
type() {
	grep -a "^$2	security.selinux=" "$1" | sed 's/.*=0x//' |
		"$PY" -c 'import sys; h = sys.stdin.read().strip(); print(bytes.fromhex(h).decode().split(":")[2] if h else "-")'
}
# calls TRACE NAME: how many NAME calls the trace has ("PID name(", or resumed)
calls() { grep -c "^[0-9]* *$2(" "$1"; }

for f in ext4 tmpfs; do
	fs $f || { bad "cannot mount a $f at $OUT/$f"; continue; }
	if command -v strace >/dev/null 2>&1; then
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
		export ASAN_OPTIONS
		fresh "$OUT/$f/s" || bad "$f: cannot make a copy"
		strace -f -qq -o "$OUT/fast.strace" "$FCLABEL" check "$OUT/$f/s" -a / -S "$FC" -T 2 >/dev/null 2>&1
		FCLABEL_PLAIN_IO=1 strace -f -qq -o "$OUT/plain.strace" "$FCLABEL" check "$OUT/$f/s" -a / -S "$FC" -T 2 >/dev/null 2>&1
		n2=$(calls fast.strace openat2)
		ni=$(grep -c 'ioctl([0-9]*, FS_IOC_GETFLAGS' fast.strace)
		# every directory but the root, the inner mount point (refused) and the bind mount
		[ "$n2" -ge $((dirs - 1)) ] && ok "$f: the walk opens the directories with openat2 ($n2 calls, $dirs directories)" ||
			bad "$f: only $n2 openat2 calls for $dirs directories"
		# (the root's, and the bind mount's: openat2 refuses it, the plain calls open it)
		if [ $f = ext4 ]; then
			[ "$ni" -le 2 ] && ok "$f: ... and reads the encrypt flag by ioctl only for the root and the bind mount ($ni calls; statx tells it)" ||
				bad "$f: $ni FS_IOC_GETFLAGS calls (want 2 at most: statx tells the flag)"
		fi
		expect_eq "$f: FCLABEL_PLAIN_IO=1: no openat2 call" "$(calls plain.strace openat2)" 0
		np=$(grep -c 'ioctl([0-9]*, FS_IOC_GETFLAGS' plain.strace)
		[ "$np" -ge $((dirs - 1)) ] && ok "$f: ... the encrypt flag by ioctl ($np calls)" ||
			bad "$f: FCLABEL_PLAIN_IO=1: only $np FS_IOC_GETFLAGS calls for $dirs directories"
		unfresh "$OUT/$f/s"
		ASAN_OPTIONS=${ASAN_OPTIONS%detect_leaks=0}
	else
		echo "strace is not installed: the calls are not counted"
	fi
	# (a tree with a bind mount of its own files is walked by one thread whatever -T says:
	# labeler/tree/twice.c; "nobind" walks the copy without it, with two threads)
	for how in "-T 1" "-T 2" "-T 2 --cross-mounts" "-T 2 nobind"; do
		bound=yes
		case $how in *nobind) bound= ;; esac
		tag=$how
		how=${how% nobind}
		for side in fast plain ${old:+old}; do
			fresh "$OUT/$f/$side" ${bound:-nobind} || bad "$f: cannot make a copy"
		done
		# run SIDE ARGS...: fclabel ARGS with SIDE's calls
		side_run() {
			_s=$1
			shift
			case $_s in
			fast) "$FCLABEL" "$@" ;;
			plain) FCLABEL_PLAIN_IO=1 "$FCLABEL" "$@" ;;
			old) "$W" --old "$FCLABEL" "$@" ;;
			esac
		}
		for side in fast plain ${old:+old}; do
			side_run $side label "$OUT/$f/$side" -a / -S "$FC" $how >"$side.out" 2>&1
			echo $? >"$side.rc"
			xattr_dump "$OUT/$f/$side" "$side.dump"
		done
		grep -q 'changed [1-9]' fast.out || bad "$f $tag: nothing changed: $(cat fast.out)"
		case $how in
		*cross*) want=zz_inner_t ;;
		*) want=- ;;
		esac
		expect_eq "$f $tag: the inner mount is labeled only with --cross-mounts" \
			"$(type fast.dump zz/inner/sub/x)" "$want"
		[ "$bound" ] && expect_eq "$f $tag: the bind mount (of the same file system) is walked" \
			"$(type fast.dump zz/bind/sub/f)" zz_bind_t
		for side in plain ${old:+old}; do
			expect_eq "$f $tag: $side calls: label exits as with the two calls" "$(cat $side.rc)" "$(cat fast.rc)"
			expect_eq "$f $tag: ... and prints the same" "$(norm $side.out "$OUT/$f/$side")" "$(norm fast.out "$OUT/$f/fast")"
			cmp -s fast.dump $side.dump &&
				ok "$f $tag: $side calls: every label the same ($(wc -l <fast.dump) attributes)" ||
				{ bad "$f $tag: $side calls: labels differ:"; diff fast.dump $side.dump | head -n 6; }
		done
		# spoil a few labels on each: a file, a symlink, the FIFO, directories, a hard link,
		# the bind mount's (zz/bind/sub: met twice, at zz/src/sub too, so check counts it
		# twice), the inner mount's when it is walked
		case $how in
		*cross*) inner=zz/inner/sub want=9 ;;
		*) inner= want=8 ;;
		esac
		[ "$bound" ] || want=$((want - 2))
		for side in fast plain ${old:+old}; do
			for e in zz/rel zz/fifo zz/d zz/d/e zz/hard etc $inner ${bound:+zz/bind/sub}; do
				setfattr -h -n security.selinux -v "system_u:object_r:spoilt_t:s0" "$OUT/$f/$side/$e"
			done
			side_run $side check "$OUT/$f/$side" -a / -S "$FC" $how -v >"$side.check" 2>&1
			echo $? >"$side.rc"
			side_run $side label "$OUT/$f/$side" -a / -S "$FC" $how >"$side.again" 2>&1
			xattr_dump "$OUT/$f/$side" "$side.dump2"
		done
		expect_match "$f $tag: check finds the spoilt labels" "$(cat fast.check)" "*differ $want,*"
		# the one-thread walk of a tree with a bind mount of its own files: said with -v, and
		# the count of what label changes is -T 1's (with two threads it was once or twice,
		# as the threads' reads ahead fell)
		case $tag in
		"-T 1") ;;
		*nobind) expect_eq "$f $tag: no note of one thread" "$(grep -c 'walked by one thread' fast.check)" 0 ;;
		*) expect_match "$f $tag: -v says why one thread walks" "$(cat fast.check)" \
			"*/fast and */fast/zz/bind show the same files: walked by one thread*" ;;
		esac
		norm fast.again "$OUT/$f/fast" >"again.$f.$(echo "$tag" | tr -c 'A-Za-z0-9\n' _)"
		for side in plain ${old:+old}; do
			expect_eq "$f $tag: $side calls: check lists the same" \
				"$(cat $side.rc):$(norm $side.check "$OUT/$f/$side" | sort)" \
				"$(cat fast.rc):$(norm fast.check "$OUT/$f/fast" | sort)"
			expect_eq "$f $tag: $side calls: label again prints the same" \
				"$(norm $side.again "$OUT/$f/$side")" "$(norm fast.again "$OUT/$f/fast")"
			cmp -s fast.dump2 $side.dump2 && cmp -s fast.dump fast.dump2 &&
				ok "$f $tag: $side calls: ... back to the same labels" ||
				bad "$f $tag: $side calls: after the second label the labels differ"
		done
		for side in fast plain ${old:+old}; do unfresh "$OUT/$f/$side"; done
	done
	expect_eq "$f: label again with -T 2 counts and prints what -T 1 does" \
		"$(cat "again.$f.__T_2")" "$(cat "again.$f.__T_1")"
	# many directories met twice, so that threads would list both places at once: the counts
	# of -T 8 are -T 1's, run after run
	tw=$OUT/$f/twice
	mkdir -p "$tw/zz/src" "$tw/zz/bind"
	i=0
	while [ $i -lt 2000 ]; do mkdir "$tw/zz/src/d$i"; i=$((i + 1)); done
	if mount --bind "$tw/zz/src" "$tw/zz/bind"; then
		echo "$tw/zz/bind" >>"$mounts"
		"$FCLABEL" label "$tw" -a / -S "$FC" -T 1 >/dev/null 2>&1 # (the root, zz, src)
		for r in 1 2 3; do
			for T in 1 8; do
				setfattr -n security.selinux -v "system_u:object_r:spoilt_t:s0" "$tw/zz/src"/d*
				"$FCLABEL" label "$tw" -a / -S "$FC" -T $T >"twice.$T" 2>&1
				echo "rc $?" >>"twice.$T"
			done
			expect_eq "$f: 2000 directories met twice, run $r: -T 8 counts what -T 1 does" \
				"$(norm twice.8 "$tw")" "$(norm twice.1 "$tw")"
		done
		umount "$tw/zz/bind"
		# a bind mount of files outside the walk (of the same file system) meets nothing
		# twice: the threads stay (the mount's root read from mountinfo, its space unescaped)
		mkdir -p "$OUT/$f/out side/x"
		if mount --bind "$OUT/$f/out side" "$tw/zz/bind"; then
			echo "$tw/zz/bind" >>"$mounts"
			"$FCLABEL" check "$tw" -a / -S "$FC" -T 2 -v >twice.out 2>&1
			expect_eq "$f: a bind mount from outside the walk: no note of one thread" \
				"$(grep -c 'walked by one thread' twice.out)" 0
			umount "$tw/zz/bind"
			mkdir -p "$OUT/$f/out side/y/z"
			mount --bind "$OUT/$f/out side/y" "$OUT/$f/out side/x" && echo "$OUT/$f/out side/x" >>"$mounts"
			"$FCLABEL" check "$OUT/$f/out side" -a / -S "$FC" -T 2 -v >twice.out 2>&1
			expect_match "$f: a bind mount into a path with a space, of the walk's own files: noted" \
				"$(cat twice.out)" "*/out side and */out side/x show the same files*"
			umount "$OUT/$f/out side/x"
		fi
		rm -rf "$OUT/$f/out side"
	else
		bad "$f: cannot bind-mount $tw/zz/src"
	fi
	rm -rf "$tw"
done
rm -rf "$base"
finish
