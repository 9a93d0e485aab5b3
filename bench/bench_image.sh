#!/bin/sh
# make bench-image: label a 200,000-inode image (this machine's tree shape, empty files) and time,
# in the same run: fclabel label; e2fsck -fn on the same image (the floor: one metadata pass);
# and, where loop mounts work, setfiles -F on a mounted copy with libselinux 3.4 and with the
# newer libselinux from ../shared/tools/build-libselinux-new. Prints figures and ratios.
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
out=$top/tests/out/bench-image
mkdir -p "$out"
shared=${SHARED:-$top/../shared/data}
n=${BENCH_INODES:-200000}
fc=$shared/refpolicy/file_contexts
[ -f "$fc" ] || fc=/etc/selinux/default/contexts/files/file_contexts
[ -f "$fc" ] || { echo "bench-image: no refpolicy file_contexts"; exit 1; }

img=$out/base.img
img128=$out/base128.img
if [ ! -f "$img" ] || [ ! -f "$img128" ] || [ "$(cat "$out/base.n" 2>/dev/null)" != "$n" ]; then
	echo "bench-image: building a $n-inode tree from this machine's shape..."
	rm -rf "$out/tree" "$img"
	find /usr /etc /var /opt /root /srv /home -xdev \( -path "$top/tests/out" -prune \) -o -printf '%y %p\n' 2>/dev/null |
		head -n "$n" | tee "$out/paths.txt" | python3 -c '
import os, sys
root = sys.argv[1]
for line in sys.stdin:
    t, p = line.rstrip("\n").split(" ", 1)
    dst = root + p
    try:
        if t == "d":
            os.makedirs(dst, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if t == "l":
                os.symlink("target", dst)
            else:
                open(dst, "w").close()
    except OSError:
        pass
' "$out/tree"
	count=$(find "$out/tree" | wc -l)
	mke2fs -q -t ext4 -I 256 -N $((count + 1000)) -d "$out/tree" "$img" 2G >/dev/null 2>&1 ||
		{ echo "bench-image: mke2fs failed"; exit 1; }
	# the same tree with 128-byte inodes: every label in an attribute block
	mke2fs -q -t ext4 -I 128 -N $((count + 1000)) -d "$out/tree" "$img128" 2G >/dev/null 2>&1 ||
		{ echo "bench-image: mke2fs -I 128 failed"; exit 1; }
	rm -rf "$out/tree"
	echo "$n" >"$out/base.n"
fi
[ -n "${BENCH_BUILD_ONLY:-}" ] && exit 0 # bench_tree.sh: only the image
used=$(dumpe2fs -h "$img" 2>/dev/null | awk -F: '/^Inode count/ {c=$2} /^Free inodes/ {f=$2} END {print c - f}')
echo "bench-image: $img, $used inodes in use, refpolicy $fc"

# seconds_and_kb CMD...: runs CMD, prints "SECONDS MAXRSS_KB"
measure() {
	/usr/bin/time -f '%e %M' -o "$out/time" "$@" >"$out/cmd.out" 2>"$out/cmd.err"
	echo "$? $(cat "$out/time" | tail -n 1)"
}
best() { awk 'NR == 1 || $1 < m { m = $1 } END { print m }'; }

cp --sparse=always "$img" "$out/work.img"
sync
set -- $(measure "$top/fclabel" label "$out/work.img" -S "$fc")
fl_rc=$1 fl_s=$2 fl_kb=$3
echo "fclabel label     : $fl_s s, peak $((fl_kb / 1024)) MiB (exit $fl_rc): $(grep scanned "$out/cmd.err" | tail -n 1)"
set -- $(measure e2fsck -fn "$out/work.img")
fs_s=$2
echo "e2fsck -fn        : $fs_s s (exit $1: $( [ "$1" = 0 ] && echo clean || echo NOT CLEAN))"
set -- $(measure "$top/fclabel" label "$out/work.img" -S "$fc")
echo "fclabel label again (nothing to write): $2 s: $(grep scanned "$out/cmd.err" | tail -n 1)"
echo "fclabel / e2fsck  : $(awk -v a="$fl_s" -v b="$fs_s" 'BEGIN { printf "%.2fx (target <= 2x)", a / b }')"

# BENCH_BEFORE=BIN: another fclabel (the build before a change) against this one, in this run:
# best of BENCH_RUNS (3) each, alternating, each on a fresh copy: a copy-mode label and an
# in-place one
if [ -n "${BENCH_BEFORE:-}" ]; then
	for mode in copy in-place; do
		bb="" ba=""
		for i in $(seq "${BENCH_RUNS:-3}"); do
			for who in before after; do
				bin=$top/fclabel
				[ "$who" = before ] && bin=$BENCH_BEFORE
				cp --sparse=always "$img" "$out/work.img"
				sync
				extra=""
				[ "$mode" = in-place ] && extra=--in-place
				set -- $(measure "$bin" label "$out/work.img" -S "$fc" $extra)
				[ "$1" = 0 ] || echo "  ($who, $mode: exit $1: $(tail -n 1 "$out/cmd.err"))"
				if [ "$who" = before ]; then bb="$bb $2"; else ba="$ba $2"; fi
			done
		done
		b=$(echo $bb | tr ' ' '\n' | best) a=$(echo $ba | tr ' ' '\n' | best)
		echo "before/after ($mode): $BENCH_BEFORE $b s, this build $a s: $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3fx", a / b }') of before"
	done
fi

# what crash safety costs in place: the default (each batch a transaction of the image's journal)
# against --no-crash-safety (straight to the image), and without a journal (crash order) against
# the same; best of BENCH_RUNS (3), each on a fresh copy, in this run
safety_cost() { # IMG ARGS...
	_i=$1; shift
	: >"$out/sc.t"
	r=0; while [ $r -lt "${BENCH_RUNS:-3}" ]; do
		cp --sparse=always "$_i" "$out/work.img"; sync
		m=$(measure "$top/fclabel" label "$out/work.img" -S "$fc" "$@")
		echo "$m" | awk '{ print $2 }' >>"$out/sc.t"
		r=$((r + 1))
	done
	best <"$out/sc.t"
}
j_s=$(safety_cost "$img")
u_s=$(safety_cost "$img" --no-crash-safety)
cp --sparse=always "$img" "$out/nj.img"
tune2fs -O ^has_journal "$out/nj.img" >/dev/null 2>&1
o_s=$(safety_cost "$out/nj.img")
ou_s=$(safety_cost "$out/nj.img" --no-crash-safety)
rm -f "$out/nj.img"
echo "in place, through the journal      : $j_s s; --no-crash-safety: $u_s s ($(awk -v a="$j_s" -v b="$u_s" 'BEGIN { printf "%.2fx", a / b }'))"
echo "in place, no journal (crash order) : $o_s s; --no-crash-safety: $ou_s s ($(awk -v a="$o_s" -v b="$ou_s" 'BEGIN { printf "%.2fx", a / b }'))"

# sparse_vs_raw DIR WHERE: the raw and sparse forms labeled alternately in DIR, each with and
# without --no-sync, best of BENCH_RUNS (3)
sparse_vs_raw() {
	echo "sparse form against raw, in $2 ($(findmnt -n -o FSTYPE,OPTIONS -T "$1" 2>/dev/null)):"
	for sync in "" --no-sync; do
		: >"$out/raw.t"; : >"$out/sparse.t"
		r=0; while [ $r -lt "${BENCH_RUNS:-3}" ]; do
			cp --sparse=always "$img" "$1/work.img"; cp "$out/base.simg" "$1/work.simg"; sync
			set -- "$1" $(measure "$top/fclabel" label "$1/work.img" -S "$fc" $sync)
			echo "$3 $4" >>"$out/raw.t"
			set -- "$1" $(measure "$top/fclabel" label "$1/work.simg" -S "$fc" $sync)
			echo "$3 $4" >>"$out/sparse.t"
			r=$((r + 1))
		done
		rs=$(best <"$out/raw.t") ss=$(best <"$out/sparse.t")
		echo "  label ${sync:-(synced)}: raw $(cut -d' ' -f1 "$out/raw.t" | tr '\n' ' ')s; sparse form $(cut -d' ' -f1 "$out/sparse.t" | tr '\n' ' ')s, peak $(( $(sort -n -k2 "$out/sparse.t" | tail -n 1 | cut -d' ' -f2) / 1024 )) MiB"
		echo "    sparse / raw, best of each: $ss / $rs = $(awk -v a="$ss" -v b="$rs" 'BEGIN { printf "%.2fx", a / b }') (target <= 1.3x)"
	done
	rm -f "$1/work.img" "$1/work.simg"
	echo "  (the sparse form's $(($(stat -c %s "$out/base.simg") / 1048576)) MiB file is copied beside itself in the background, patched and renamed over the original)"
}

# the same image in Android sparse form, and an image of 4 GiB declared size
if command -v img2simg >/dev/null; then
	[ "$out/base.simg" -nt "$img" ] || img2simg "$img" "$out/base.simg"
	sparse_vs_raw "$out" "the work directory"
	# On a file system mounted with discard (as this one may be: see its options above) freeing
	# the replaced sparse file waits for the device, about 85 ms for 131 MiB here. The same
	# comparison on a scratch ext4 with default options, loop-mounted, where root can:
	scratch=$out/scratch
	mkdir -p "$scratch.mnt"
	rm -f "$scratch.img"
	if [ "$(id -u)" = 0 ] && truncate -s 2G "$scratch.img" && mke2fs -q -t ext4 "$scratch.img" >/dev/null 2>&1 &&
	   mount -o loop "$scratch.img" "$scratch.mnt" 2>/dev/null; then
		sparse_vs_raw "$scratch.mnt" "a scratch ext4"
		umount "$scratch.mnt"
	else
		echo "sparse / raw on a scratch ext4: skipped (needs root and a loop mount)"
	fi
	rm -f "$scratch.img"
	if [ ! -f "$out/big.simg" ]; then
		rm -f "$out/big.raw"
		truncate -s 4G "$out/big.raw"
		mkdir -p "$out/smalltree/etc" "$out/smalltree/usr/bin"
		i=0; while [ $i -lt 2000 ]; do : >"$out/smalltree/usr/bin/f$i"; i=$((i + 1)); done
		mke2fs -q -t ext4 -d "$out/smalltree" "$out/big.raw" >/dev/null 2>&1 && img2simg "$out/big.raw" "$out/big.simg"
		rm -rf "$out/big.raw" "$out/smalltree"
	fi
	cp "$out/big.simg" "$out/work.simg"
	set -- $(measure "$top/fclabel" label "$out/work.simg" -S "$fc")
	echo "fclabel label, 4 GiB declared sparse image ($(stat -c %s "$out/big.simg") bytes on disk): $2 s, peak $(($3 / 1024)) MiB (exit $1)"
	rm -f "$out/work.simg"
else
	echo "sparse: skipped (img2simg not installed: android-sdk-libsparse-utils)"
fi

# 128-byte inodes: written in place, and as a labeled copy renamed over the image (the default),
# each round beside the same tree with 256-byte inodes (labels in the inode, written in place)
: >"$out/inplace.t"; : >"$out/atomic.t"; : >"$out/i256.t"; : >"$out/claims.t"
r=0; while [ $r -lt "${BENCH_RUNS:-3}" ]; do
	cp --sparse=always "$img" "$out/work.img"; sync
	set -- $(measure "$top/fclabel" label "$out/work.img" -S "$fc")
	echo "$2 $3" >>"$out/i256.t"
	cp --sparse=always "$img128" "$out/work.img"; sync
	set -- $(measure "$top/fclabel" label "$out/work.img" -S "$fc" --in-place)
	echo "$2 $3" >>"$out/inplace.t"
	cp --sparse=always "$img128" "$out/work.img"; sync
	set -- $(measure "$top/fclabel" label "$out/work.img" -S "$fc")
	echo "$2 $3" >>"$out/atomic.t"
	# the block claims' share, from the report of the same run again (the report's 200,000
	# events cost time of their own: that run is not the one timed)
	cp --sparse=always "$img128" "$out/work.img"
	"$top/fclabel" label "$out/work.img" -S "$fc" --json "$out/atomic.json" >/dev/null 2>&1
	claims=$(sed -n 's/.*"claims_seconds": \([0-9.]*\).*/\1/p' "$out/atomic.json")
	echo "$claims $2" >>"$out/claims.t"
	r=$((r + 1))
done
ip=$(best <"$out/inplace.t") at=$(best <"$out/atomic.t") i2=$(best <"$out/i256.t")
peak() { echo "$(( $(sort -n -k2 "$1" | tail -n 1 | cut -d' ' -f2) / 1024 )) MiB"; }
echo "128-byte inodes (labels in blocks): --in-place $(cut -d' ' -f1 "$out/inplace.t" | tr '\n' ' ')s; renamed copy (default) $(cut -d' ' -f1 "$out/atomic.t" | tr '\n' ' ')s; 256-byte inodes $(cut -d' ' -f1 "$out/i256.t" | tr '\n' ' ')s"
echo "  peak: --in-place $(peak "$out/inplace.t"), renamed copy $(peak "$out/atomic.t"), 256-byte $(peak "$out/i256.t")"
echo "  renamed copy / 256-byte, best of each: $at / $i2 = $(awk -v a="$at" -v b="$i2" 'BEGIN { printf "%.2fx", a / b }') (target <= 1.3x); --in-place / 256-byte: $(awk -v a="$ip" -v b="$i2" 'BEGIN { printf "%.2fx", a / b }') (through the journal: every label a block of its own or a shared one)"
echo "  copy / in place, best of each: $at / $ip = $(awk -v a="$at" -v b="$ip" 'BEGIN { printf "%.2fx", a / b }') ($(($(du -k "$img128" | cut -f1) / 1024)) MiB allocated, copied beside itself)"
echo "  (the work directory's file system: $(findmnt -n -o FSTYPE,OPTIONS -T "$out" 2>/dev/null))"
# the look at the block claims before the first write (labeler/claims.c), inside those runs
echo "  block claims checked before the first write: $(awk '{ if (NR > 1) printf ", "; printf "%.3f s of %s s (%.1f%%)", $1, $2, 100 * $1 / $2 }' "$out/claims.t")"

# setfiles on a loop-mounted copy
mnt=$out/mnt
mkdir -p "$mnt"
cp --sparse=always "$img" "$out/sf.img"
if [ "$(id -u)" = 0 ] && command -v setfiles >/dev/null && mount -o loop "$out/sf.img" "$mnt" 2>/dev/null; then
	umount "$mnt"
	newlib=$(bash "$top/../shared/tools/build-libselinux-new" 2>/dev/null | tail -n 1)
	for which in new old; do
		lib=
		if [ $which = new ]; then
			[ -f "$newlib/libselinux.so.1" ] || { echo "setfiles (new libselinux): not built"; continue; }
			lib=$newlib
		fi
		[ $which = old ] && [ -z "${BENCH_SETFILES_OLD:-}" ] && {
			echo "setfiles (libselinux 3.4): skipped (about 100 s; BENCH_SETFILES_OLD=1 to run it)"
			continue
		}
		cp --sparse=always "$img" "$out/sf.img"
		mount -o loop "$out/sf.img" "$mnt" || continue
		set -- $(LD_LIBRARY_PATH=$lib measure setfiles -F -r "$mnt" "$fc" "$mnt")
		umount "$mnt"
		echo "setfiles -F ($which libselinux): $2 s, peak $(($3 / 1024)) MiB (exit $1)"
		echo "fclabel vs setfiles ($which): $(awk -v a="$2" -v b="$fl_s" 'BEGIN { printf "%.1fx faster", a / b }')"
		rm -f "$out/sf.img"
	done
else
	echo "setfiles: skipped (needs root, setfiles and a working loop mount)"
fi
rm -f "$out/work.img"
