#!/bin/sh
# make bench-tree: fclabel label on a live tree against setfiles -F with the newer libselinux
# (../shared/tools/build-libselinux-new), in the same run. The tree: the 200,000-inode image of
# make bench-image (this machine's shape, empty files; built first when missing), each side on
# its own fresh loop-mounted copy, BENCH_RUNS (3) rounds, the order alternating. Then a run with
# nothing to write (label again, check) on each side, and whether both trees end up with the
# same labels, byte for byte. Needs root, loop mounts and setfiles.
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
out=$top/tests/out/bench-tree
mkdir -p "$out"
shared=${SHARED:-$top/../shared/data}
n=${BENCH_INODES:-200000}
runs=${BENCH_RUNS:-3}
fc=$shared/refpolicy/file_contexts
[ -f "$fc" ] || fc=/etc/selinux/default/contexts/files/file_contexts
[ -f "$fc" ] || { echo "bench-tree: no refpolicy file_contexts"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench-tree: needs root (loop mounts)"; exit 1; }
command -v setfiles >/dev/null || { echo "bench-tree: setfiles is not installed (policycoreutils)"; exit 1; }

img=$top/tests/out/bench-image/base.img
if [ ! -f "$img" ] || [ "$(cat "$top/tests/out/bench-image/base.n" 2>/dev/null)" != "$n" ]; then
	BENCH_BUILD_ONLY=1 BENCH_INODES=$n sh "$top/tests/bench_image.sh" || exit 1
fi
newlib=$(bash "$top/../shared/tools/build-libselinux-new" 2>/dev/null | tail -n 1)
if [ -f "$newlib/libselinux.so.1" ]; then
	echo "bench-tree: setfiles with libselinux $(cat "$newlib/VERSION" 2>/dev/null) from $newlib"
else
	echo "bench-tree: the newer libselinux could not be built: setfiles with the system's (3.4)"
	newlib=
fi

a=$out/a b=$out/b
mkdir -p "$a" "$b"
umount "$a" 2>/dev/null; umount "$b" 2>/dev/null
trap 'umount "$a" 2>/dev/null; umount "$b" 2>/dev/null' EXIT INT TERM
# fresh NAME MNT: a new copy of the image, mounted
fresh() {
	umount "$2" 2>/dev/null
	cp --sparse=always "$img" "$out/$1.img" && sync && mount -o loop "$out/$1.img" "$2" ||
		{ echo "bench-tree: cannot loop-mount a copy of $img"; exit 1; }
}
# measure CMD...: "EXIT WALL USER SYS MAXRSS_KB"
measure() {
	/usr/bin/time -f '%e %U %S %M' -o "$out/time" "$@" >"$out/cmd.out" 2>"$out/cmd.err"
	echo "$? $(tail -n 1 "$out/time")"
}
fclabel_run() { measure "$top/fclabel" label "$a" -S "$fc"; }
setfiles_run() { LD_LIBRARY_PATH=$newlib measure setfiles -F -r "$b" "$fc" "$b"; }

fresh probe "$a"
entries=$(find "$a" | wc -l)
umount "$a"
rm -f "$out/probe.img"
echo "bench-tree: $entries entries (loop-mounted ext4 copies of $img), refpolicy $fc"
: >"$out/fl.t"; : >"$out/sf.t"
r=1
while [ $r -le "$runs" ]; do
	if [ $((r % 2)) = 1 ]; then order="fclabel setfiles"; else order="setfiles fclabel"; fi
	for who in $order; do
		if [ $who = fclabel ]; then
			fresh fl "$a"
			set -- $(fclabel_run)
			echo "$2 $3 $4 $5 $1" >>"$out/fl.t"
			echo "  round $r: fclabel label   $2 s (user $3, sys $4), peak $(($5 / 1024)) MiB, exit $1: $(tail -n 1 "$out/cmd.out")"
		else
			fresh sf "$b"
			set -- $(setfiles_run)
			echo "$2 $3 $4 $5 $1" >>"$out/sf.t"
			echo "  round $r: setfiles -F     $2 s (user $3, sys $4), peak $(($5 / 1024)) MiB, exit $1"
		fi
	done
	r=$((r + 1))
done
best() { sort -n "$1" | head -n 1 | cut -d' ' -f1; }
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
fl=$(best "$out/fl.t") sf=$(best "$out/sf.t")
echo "fclabel label (tree): best $fl s, median $(median "$out/fl.t") s"
echo "setfiles -F         : best $sf s, median $(median "$out/sf.t") s"
echo "fclabel vs setfiles : $(awk -v a="$sf" -v b="$fl" 'BEGIN { printf "%.1fx faster (best of %d each)", a / b, '"$runs"' }')"

# nothing to write: the same trees again
set -- $(fclabel_run)
echo "fclabel label again (nothing to write): $2 s: $(tail -n 1 "$out/cmd.out")"
set -- $(measure "$top/fclabel" check "$a" -S "$fc")
echo "fclabel check: $2 s (exit $1): $(tail -n 1 "$out/cmd.err")"
set -- $(setfiles_run)
echo "setfiles -F again (nothing to write): $2 s"

# the same labels on both trees, byte for byte
python3 - "$a" "$b" <<'EOF'
import hashlib, os, sys
def digest(root):
    h, n = hashlib.sha256(), 0
    for dp, dns, fns in os.walk(root):
        dns.sort()
        for name in [None] + sorted(dns + fns):
            p = dp if name is None else os.path.join(dp, name)
            if name is None and dp != root:
                continue
            try:
                v = os.getxattr(p, "security.selinux", follow_symlinks=False)
            except OSError:
                v = b"-"
            h.update(os.fsencode(os.path.relpath(p, root)) + b"\0" + v + b"\n")
            n += 1
    return h.hexdigest(), n
(da, na), (db, nb) = digest(sys.argv[1]), digest(sys.argv[2])
print("labels: fclabel %s... (%d entries), setfiles %s... (%d entries): %s" %
      (da[:16], na, db[:16], nb, "identical" if da == db and na == nb else "DIFFERENT"))
sys.exit(0 if da == db else 1)
EOF
status=$?
umount "$a" "$b"
rm -f "$out/fl.img" "$out/sf.img"
exit $status
