#!/bin/sh
# make bench-tree: fclabel label on a live tree against the floor (what the kernel allows for the
# syscalls fclabel makes) and against setfiles -F with the newer libselinux
# (../shared/tools/build-libselinux-new), one thread and -T 0, all in the same run.
# The tree: the 200,000-inode image of make bench-image (this machine's shape, empty files; built
# first when missing); every run has its own fresh loop-mounted copy.
# Each round, for each side: "first label" on the fresh copy (every label written), then
# "nothing to change" (the same command again); once with warm caches (the tree walked once
# before: dentries, inodes and attributes in memory) and once with cold ones (sync and
# drop_caches before each run). The sides:
#   fclabel        fclabel label DIR (default threads: one per CPU), and with -T 1
#   no getxattrat  the same under tests/nogetxattrat (a seccomp filter: getxattrat(2) answers
#                  ENOSYS, as on a phone's kernel, Linux < 6.13): labels read through descriptors
#   floor          bench/treefloor: the same syscalls per entry as fclabel, nothing else: "write"
#                  a fixed label (the floor of a first label), "stat" (of nothing to change);
#                  with as many threads as fclabel, and with one
#   setfiles       setfiles -F -r DIR FC DIR, and with -T 0 (a thread per CPU)
#   before         BENCH_BEFORE=BIN: another fclabel (the build before a change), as fclabel
# BENCH_RUNS rounds (3), the order of the sides turning each round; the best of each is
# compared (BENCH_SIDES: only those sides, fclabel's, the floor's and setfiles' always). Then whether fclabel and setfiles left the same labels, byte for byte. Needs root,
# loop mounts and setfiles.
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
floor=$top/bench/treefloor
[ -x "$floor" ] || { echo "bench-tree: $floor is not built (make bench/treefloor)"; exit 1; }
nogx=$top/tests/nogetxattrat
[ -x "$nogx" ] || { echo "bench-tree: $nogx is not built (make tests/nogetxattrat)"; exit 1; }
[ "$("$nogx" --probe 2>&1)" = ENOSYS ] || { echo "bench-tree: $nogx does not work here: $("$nogx" --probe 2>&1)"; exit 1; }
cpus=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
threads=$((cpus > 8 ? 8 : cpus))
fixed=system_u:object_r:usr_t:s0

img=$top/tests/out/bench-image/base.img
if [ ! -f "$img" ] || [ "$(cat "$top/tests/out/bench-image/base.n" 2>/dev/null)" != "$n" ]; then
	BENCH_BUILD_ONLY=1 BENCH_INODES=$n sh "$top/bench/bench_image.sh" || exit 1
fi
newlib=$(bash "$top/../shared/tools/build-libselinux-new" 2>/dev/null | tail -n 1)
if [ -f "$newlib/libselinux.so.1" ]; then
	echo "bench-tree: setfiles with libselinux $(cat "$newlib/VERSION" 2>/dev/null) from $newlib"
else
	echo "bench-tree: the newer libselinux could not be built: setfiles with the system's (3.4)"
	newlib=
fi

sides="fclabel fclabel1 nogx nogx1 floor floor1 setfiles setfilesT0"
[ -n "${BENCH_BEFORE:-}" ] && sides="$sides before"
if [ -n "${BENCH_SIDES:-}" ]; then
	keep=""
	for s in $sides; do
		case " fclabel floor setfiles $BENCH_SIDES " in *" $s "*) keep="$keep $s" ;; esac
	done
	sides=${keep# }
fi
for s in $sides; do mkdir -p "$out/mnt/$s"; umount "$out/mnt/$s" 2>/dev/null; done
cleanup() { for s in $sides; do umount "$out/mnt/$s" 2>/dev/null; rm -f "$out/$s.img"; done; }
trap cleanup EXIT INT TERM
# fresh SIDE: a new copy of the image, mounted at $out/mnt/SIDE
fresh() {
	umount "$out/mnt/$1" 2>/dev/null
	cp --sparse=always "$img" "$out/$1.img" && mount -o loop "$out/$1.img" "$out/mnt/$1" ||
		{ echo "bench-tree: cannot loop-mount a copy of $img"; exit 1; }
}
# caches warm|cold DIR: warm walks the tree once (treefloor stat); cold drops every cache
caches() {
	if [ "$1" = warm ]; then
		"$floor" stat "$2" -j "$threads" >/dev/null
	else
		sync && echo 3 >/proc/sys/vm/drop_caches
	fi
}
# measure CMD...: "EXIT WALL USER SYS MAXRSS_KB"
measure() {
	/usr/bin/time -f '%e %U %S %M' -o "$out/time" "$@" >"$out/cmd.out" 2>"$out/cmd.err"
	echo "$? $(tail -n 1 "$out/time")"
}
# run SIDE first|again DIR
run() {
	case $1 in
	fclabel) measure "$top/fclabel" label "$3" -a / -S "$fc" ;;
	fclabel1) measure "$top/fclabel" label "$3" -a / -S "$fc" -T 1 ;;
	nogx) measure "$nogx" "$top/fclabel" label "$3" -a / -S "$fc" ;;
	nogx1) measure "$nogx" "$top/fclabel" label "$3" -a / -S "$fc" -T 1 ;;
	floor|floor1)
		j=$threads; [ "$1" = floor1 ] && j=1
		if [ "$2" = first ]; then measure "$floor" write "$3" "$fixed" -j $j
		else measure "$floor" stat "$3" -j $j; fi ;;
	setfiles) LD_LIBRARY_PATH=$newlib measure setfiles -F -r "$3" "$fc" "$3" ;;
	setfilesT0) LD_LIBRARY_PATH=$newlib measure setfiles -F -T 0 -r "$3" "$fc" "$3" ;;
	before) measure "$BENCH_BEFORE" label "$3" -a / -S "$fc" ;;
	esac
}
name() {
	case $1 in
	fclabel) echo "fclabel label (-T $threads)" ;;
	fclabel1) echo "fclabel label -T 1" ;;
	nogx) echo "no getxattrat (-T $threads)" ;;
	nogx1) echo "no getxattrat, -T 1" ;;
	floor) echo "floor (-j $threads)" ;;
	floor1) echo "floor -j 1" ;;
	setfiles) echo "setfiles -F" ;;
	setfilesT0) echo "setfiles -F -T 0" ;;
	before) echo "before (-T $threads)" ;;
	esac
}

fresh fclabel
entries=$(find "$out/mnt/fclabel" | wc -l)
echo "bench-tree: $entries entries (loop-mounted ext4 copies of $img), refpolicy $fc; $cpus CPUs"
rm -f "$out"/*.t
# BENCH_CACHES=warm: the warm runs only (drop_caches slows every other process on the machine)
caches=${BENCH_CACHES:-warm cold}
r=1
while [ $r -le "$runs" ]; do
	# the order of the sides turns each round
	order=$(echo $sides | tr ' ' '\n' | awk -v r=$r '{ s[NR] = $0 } END { for (i = 0; i < NR; i++) print s[(i + r - 1) % NR + 1] }')
	for cache in $caches; do
		for s in $order; do
			fresh $s
			d=$out/mnt/$s
			for state in first again; do
				caches $cache "$d"
				set -- $(run $s $state "$d")
				echo "$2 $3 $4 $5 $1" >>"$out/$s.$state.$cache.t"
				msg=""
				# the summary (on stderr since fclabel prints its summaries there)
				case $s in fclabel* | nogx* | before) msg=": $(cat "$out/cmd.out" "$out/cmd.err" | grep 'scanned' | tail -n 1)" ;; esac
				[ "$1" = 0 ] || msg="$msg (exit $1: $(tail -n 1 "$out/cmd.err"))"
				printf '  round %d %s %-5s %-24s %6s s (user %s, sys %s), peak %d MiB%s\n' \
					$r $cache $state "$(name $s)" $2 $3 $4 $(($5 / 1024)) "$msg"
			done
		done
	done
	r=$((r + 1))
done

best() { [ -f "$1" ] && sort -n "$1" | head -n 1 | cut -d' ' -f1 || echo 0; }
# the CPU time (user + sys) of the best run: beside the wall time, what other load cannot inflate
cpu() { [ -f "$1" ] && sort -n "$1" | head -n 1 | awk '{ printf "%.2f", $2 + $3 }' || echo -; }
peak() { sort -n -k4 "$1" | tail -n 1 | awk '{ printf "%d", $4 / 1024 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
echo
echo "best of $runs, wall seconds (CPU seconds of that run) ($entries entries; load average $(cut -d' ' -f1-3 /proc/loadavg)):"
printf '  %-24s' ""
for c in $caches; do printf ' %14s %14s' "first $c" "again $c"; done
echo
for s in $sides; do
	printf '  %-24s' "$(name $s)"
	for c in $(for c in $caches; do echo "first.$c again.$c"; done); do
		set -- $(echo "$c" | tr . ' ')
		eval "b_${s}_$1_$2=$(best "$out/$s.$1.$2.t")"
		eval "printf ' %6s (%5s)' \$b_${s}_$1_$2 $(cpu "$out/$s.$1.$2.t")"
	done
	echo
done
has() { case " $sides " in *" $1 "*) return 0 ;; esac; return 1; }
echo "fclabel peak memory: $(peak "$out/fclabel.first.warm.t") MiB (-T $threads)$(has fclabel1 &&
	echo ", $(peak "$out/fclabel1.first.warm.t") MiB (-T 1)")"
has nogx && echo "(no getxattrat: fclabel under tests/nogetxattrat, as on Linux < 6.13: a phone's kernel)"
# target RATIO: how far a "times faster" ratio is from the 5x of issue 34
target() { awk -v r="$1" 'BEGIN { printf "%s", (r >= 5 ? "met" : sprintf("%.1f%% of it", r / 5 * 100)) }'; }
echo "ratios (first label, nothing to change):"
for c in $caches; do
	for v in fclabel fclabel1 nogx nogx1 floor floor1 setfiles setfilesT0 before; do
		eval "${v}_f=\${b_${v}_first_$c:-0} ${v}_a=\${b_${v}_again_$c:-0}"
	done
	echo "  $c:"
	echo "    fclabel $fclabel_f s, $fclabel_a s; setfiles -F $setfiles_f s, $setfiles_a s; floor $floor_f s, $floor_a s"
	r1=$(ratio $setfiles_f $fclabel_f) r2=$(ratio $setfiles_a $fclabel_a)
	echo "    setfiles -F / fclabel:      ${r1}x, ${r2}x faster (target: 5x: $(target $r1), $(target $r2))"
	echo "    setfiles -F / floor:        $(ratio $setfiles_f $floor_f)x, $(ratio $setfiles_a $floor_a)x (what the calls allow)"
	echo "    fclabel -T $threads / floor -j $threads:  $(ratio $fclabel_f $floor_f)x, $(ratio $fclabel_a $floor_a)x (target: within 1.5x)"
	has before && echo "    before / fclabel:           $(ratio $before_f $fclabel_f)x, $(ratio $before_a $fclabel_a)x faster than $BENCH_BEFORE"
	has fclabel1 && has floor1 && echo "    fclabel -T 1 / floor -j 1:  $(ratio $fclabel1_f $floor1_f)x, $(ratio $fclabel1_a $floor1_a)x"
	has setfilesT0 && echo "    setfiles -F -T 0 / fclabel: $(ratio $setfilesT0_f $fclabel_f)x, $(ratio $setfilesT0_a $fclabel_a)x faster"
	if has nogx; then
		echo "    setfiles -F / no getxattrat:        $(ratio $setfiles_f $nogx_f)x, $(ratio $setfiles_a $nogx_a)x faster (target: 3.5x)"
		has nogx1 && echo "    setfiles -F / no getxattrat, -T 1:  $(ratio $setfiles_f $nogx1_f)x, $(ratio $setfiles_a $nogx1_a)x faster"
		echo "    no getxattrat / fclabel (the cost of the fallback): $(ratio $nogx_f $fclabel_f)x, $(ratio $nogx_a $fclabel_a)x"
	fi
done

# the same labels on both trees, byte for byte (the last round's: fclabel's, setfiles')
python3 - "$out/mnt/fclabel" "$out/mnt/setfiles" <<'EOF'
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
