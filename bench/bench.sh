#!/bin/sh
# make bench: lookups per second of fclabel against libselinux 3.4 (the system library) and, when
# ../shared/tools/build-libselinux-new can build it, libselinux 3.8, on the same queries in one run.
# A benchmark, not a test: it prints figures and the ratios, and checks only that the answers agree.
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
out=$top/tests/out/bench
mkdir -p "$out"
bench=$top/bench/fcbench
shared=${SHARED:-$top/../shared/data}
runs=${BENCH_RUNS:-3}
sample=${BENCH_SAMPLE:-20000}

fc=$shared/refpolicy/file_contexts
[ -f "$fc" ] || fc=/etc/selinux/default/contexts/files/file_contexts
[ -f "$fc" ] || { echo "bench: no refpolicy file_contexts (../shared/data/refpolicy or selinux-policy-default)"; exit 1; }

# Queries: this machine's own tree, each path with its real file type.
echo "bench: listing this machine's files..."
find / -xdev \( -path /proc -o -path /sys -o -path "$top/tests/out" \) -prune -o -printf '%y %p\0' 2>/dev/null |
	python3 -c '
import sys
m = {b"f": b"0100644", b"d": b"040755", b"l": b"0120777", b"c": b"020644", b"b": b"060644", b"p": b"010644", b"s": b"0140755"}
recs = [r for r in sys.stdin.buffer.read().split(b"\0") if r]
out = [m.get(r[:1], b"0") + r[1:] for r in recs]
sys.stdout.buffer.write(b"\0".join(out) + b"\0")
' >"$out/machine.q"
python3 -c '
import random, sys
recs = [r for r in open(sys.argv[1], "rb").read().split(b"\0") if r]
random.seed(1)
pick = random.sample(recs, min(int(sys.argv[3]), len(recs)))
open(sys.argv[2], "wb").write(b"\0".join(pick) + b"\0")
' "$out/machine.q" "$out/sample.q" "$sample"

field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p"; }
# best RUNS ENGINE FC QUERIES [LD_LIBRARY_PATH]: the fastest of RUNS runs; prints its line
best() {
	_n=$1 _e=$2 _f=$3 _q=$4 _l=${5:-}
	i=0
	while [ $i -lt "$_n" ]; do
		LD_LIBRARY_PATH=$_l "$bench" "$_e" "$_f" "$_q"
		i=$((i + 1))
	done | sort -t= -k5 -n | awk '{ r = $0; sub(/.*rate=/, "", r); sub(/ .*/, "", r); if (r + 0 > best) { best = r + 0; line = $0 } } END { print line }'
}

newlib=$(bash "$top/../shared/tools/build-libselinux-new" 2>"$out/newlib.log" | tail -n 1)
[ -f "$newlib/libselinux.so.1" ] || newlib=

nq=$(tr -cd '\000' <"$out/machine.q" | wc -c)
ns=$(tr -cd '\000' <"$out/sample.q" | wc -c)
echo "bench: refpolicy $fc; $nq paths of this machine (real modes); libselinux 3.4 on a sample of $ns"
echo
ours_all=$(best "$runs" fclabel "$fc" "$out/machine.q")
ours_s=$(best "$runs" fclabel "$fc" "$out/sample.q")
old_s=$(best 1 selinux "$fc" "$out/sample.q")
echo "fclabel      all    : $ours_all"
echo "fclabel      sample : $ours_s"
echo "selinux 3.4  sample : $old_s"
new_all=
if [ -n "$newlib" ]; then
	new_all=$(best "$runs" selinux "$fc" "$out/machine.q" "$newlib")
	echo "selinux $(sed 's/libselinux_\(.*\)\.orig.*/\1/' "$newlib/VERSION" 2>/dev/null) all : $new_all"
else
	echo "selinux new: not built ($(tail -n 1 "$out/newlib.log"))"
fi

r_ours=$(echo "$ours_all" | field rate)
r_ours_s=$(echo "$ours_s" | field rate)
r_old=$(echo "$old_s" | field rate)
echo
echo "fclabel: $r_ours lookups/s on one core (target 2,000,000), load $(echo "$ours_all" | field load_ms) ms (target <= 10)"
echo "vs libselinux 3.4 on the sample: $(awk -v a="$r_ours_s" -v b="$r_old" 'BEGIN { printf "%.0fx", a / b }')"
status=0
[ "$(echo "$ours_s" | field digest)" = "$(echo "$old_s" | field digest)" ] &&
	echo "answers: identical to libselinux 3.4 on the sample" ||
	{ echo "answers: DIFFER from libselinux 3.4 on the sample"; status=1; }
if [ -n "$new_all" ]; then
	r_new=$(echo "$new_all" | field rate)
	echo "vs libselinux new on all paths: $(awk -v a="$r_ours" -v b="$r_new" 'BEGIN { printf "%.1fx (target 10x)", a / b }')"
	[ "$(echo "$ours_all" | field digest)" = "$(echo "$new_all" | field digest)" ] &&
		echo "answers: identical to libselinux new on all paths" ||
		echo "answers: differ from libselinux new on some paths (3.8 changed some quirks; see the semantics doc)"
fi

# Policy load: refpolicy with its .homedirs and .subs_dist as text, as libselinux 3.4's .bin
# (format 5, sefcontext_compile of this system) and as 3.8's (format 6, bench/build_sefc_new.sh).
ld=$out/load
rm -rf "$ld"; mkdir -p "$ld/text" "$ld/v5" "$ld/v6"
fcd=$(dirname "$fc")
for f in file_contexts file_contexts.homedirs file_contexts.subs_dist; do
	[ -f "$fcd/$f" ] && for d in text v5 v6; do cp "$fcd/$f" "$ld/$d/"; done
done
printf '0100644 /usr/bin/ls\0' >"$ld/one.q"
loadms() { # best load_ms of 10 runs
	for _i in 1 2 3 4 5 6 7 8 9 10; do "$bench" fclabel "$1" "$ld/one.q"; done | field load_ms | sort -n | head -n 1
}
sefc_new=$(bash "$top/bench/build_sefc_new.sh" 2>>"$out/newlib.log" | tail -n 1) || sefc_new=
echo
echo "policy load (refpolicy + .homedirs + .subs_dist, best of 10; target: .bin no slower than text, <= 10 ms):"
t_text=$(loadms "$ld/text/file_contexts")
echo "  text                 : $t_text ms"
for v in v5 v6; do
	tool=/usr/sbin/sefcontext_compile
	[ $v = v6 ] && tool=$sefc_new
	if [ -x "$tool" ]; then
		for f in file_contexts file_contexts.homedirs; do
			[ -f "$ld/$v/$f" ] && "$tool" -o "$ld/$v/$f.bin" "$ld/$v/$f"
		done
		t_bin=$(loadms "$ld/$v/file_contexts")
		echo "  .bin format ${v#v} (the file says $(od -An -tu1 -j4 -N4 "$ld/$v/file_contexts.bin" | tr ' ' '\n' | sort -n | tail -n 1)): $t_bin ms, $(awk -v a="$t_bin" -v b="$t_text" 'BEGIN { printf "%.2fx", a / b }') the text"
	else
		echo "  .bin format ${v#v}: skipped (no sefcontext_compile for it)"
	fi
done
echo "  the installed policy (/etc/selinux/default, its .bin is newer): $(loadms /etc/selinux/default/contexts/files/file_contexts) ms"

# Every policy in ../shared/data, whole lookups (load included), against libselinux 3.8 in the
# same run, with the answers checked against 3.4 and 3.8 (bench/bench_policies.py).
if [ -d "$shared/images" ] && [ -d "$shared/android" ]; then
	echo
	echo "every policy (whole lookups: load + lookups, best of $runs):"
	python3 "$top/bench/bench_policies.py" "$bench" "$shared" "$out" "$out/machine.q" "${newlib:--}" "$runs" || status=1
else
	echo "bench: no ../shared/data images and android policies: the per-policy table is skipped"
fi
exit $status
