#!/bin/sh
# make bench: lookups per second of fclabel against libselinux 3.4 (the system library) and, when
# ../shared/tools/build-libselinux-new can build it, libselinux 3.8, on the same queries in one run,
# beside the floor (bench/fcbench's own loop with a lookup that answers at once); then the policy
# load, text and .bin, beside both libraries' and the floor's (reading the same files' bytes);
# then every policy of ../shared/data (bench/bench_policies.py).
# A benchmark, not a test: it prints figures and the ratios, and checks only that the answers agree.
# BENCH_RUNS (3): rounds of lookups; BENCH_LOAD_RUNS (15): rounds of loads; BENCH_SAMPLE (20000).
# BENCH_BEFORE=FCBENCH: another bench/fcbench (the build before a change, made aside) looks up
# all the machine's paths and loads the same files in the same rounds, printed beside this
# build's figures.
# BENCH_PART=load: the policy load's table alone (no lookups, no per-policy table: seconds, not
# the minute and more of the whole).
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

# Queries: this machine's own tree, each path with its real file type (BENCH_REUSE=1: the
# previous run's list, for comparing two builds on the same paths).
lookups=true
[ "${BENCH_PART:-}" = load ] && lookups=false
if $lookups && { [ -z "${BENCH_REUSE:-}" ] || [ ! -s "$out/machine.q" ]; }; then
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
fi

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; } # " NAME=": rate is not cpu_rate

# Engines take turns: each round runs every case once, so that the load of the machine (other
# jobs share its two cores) falls on all of them alike; a case's figure is its best round.
runs_dir=$out/runs
rm -rf "$runs_dir"; mkdir -p "$runs_dir"
# run1 TAG LIBDIR ENGINE FC QUERIES: one fcbench run, its line appended to TAG's runs
run1() { run1_with "$bench" "$@"; }
# run1_with FCBENCH TAG ...: the same with another fcbench
run1_with() {
	_b=$1 _t=$2 _l=$3
	shift 3
	LD_LIBRARY_PATH=$_l "$_b" "$@" >>"$runs_dir/$_t" 2>>"$runs_dir/$_t.err" || : >>"$runs_dir/$_t.failed"
}
ok() { [ -s "$runs_dir/$1" ] && [ ! -e "$runs_dir/$1.failed" ]; }
# best_rate TAG: the run with the most lookups a second
best_rate() {
	awk '{ r = $0; sub(/.* rate=/, "", r); sub(/ .*/, "", r); if (r + 0 > b) { b = r + 0; l = $0 } } END { print l }' "$runs_dir/$1"
}
# best_whole TAG: the most lookups a second with the load counted in (lookups / (load + lookups))
best_whole() {
	awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
	       w = f["lookups"] / (f["load_ms"] / 1000 + f["lookups"] / f["rate"]); if (w > b) b = w }
	     END { printf "%.0f", b }' "$runs_dir/$1"
}
# best_cpu TAG: the most lookups a second of the loop's own CPU time (waits for a core left out)
best_cpu() { field cpu_rate <"$runs_dir/$1" | sort -n | tail -n 1; }
# best_load TAG: the fastest load, ms
best_load() { field load_ms <"$runs_dir/$1" | sort -n | head -n 1; }
num() { # 1234567 -> 1,234,567
	awk -v a="$1" 'BEGIN { s = sprintf("%.0f", a); r = ""
		while (length(s) > 3) { r = "," substr(s, length(s) - 2) r; s = substr(s, 1, length(s) - 3) }
		print s r }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else printf "-" }'; }
ns() { awk -v r="$1" 'BEGIN { if (r > 0) printf "%.0f ns", 1e9 / r; else printf "-" }'; }

newlib=$(bash "$top/../shared/tools/build-libselinux-new" 2>"$out/newlib.log" | tail -n 1)
[ -f "$newlib/libselinux.so.1" ] || newlib=
newv=$(sed 's/libselinux_\(.*\)\.orig.*/\1/' "$newlib/VERSION" 2>/dev/null)
newv=${newv:-new}
oldv=$(dpkg-query -W -f '${Version}' libselinux1 2>/dev/null | sed 's/-.*//')
oldv=${oldv:-3.4}

if $lookups; then
nq=$(tr -cd '\000' <"$out/machine.q" | wc -c)
ns_=$(tr -cd '\000' <"$out/sample.q" | wc -c)
echo "bench: refpolicy $fc; $nq paths of this machine (real modes); libselinux $oldv on a sample of $ns_"
echo "bench: $runs rounds, the engines taking turns in each; every figure is its engine's best round"
[ -n "$newlib" ] || echo "bench: libselinux new not built ($(tail -n 1 "$out/newlib.log")): its columns stay empty"
i=0
while [ $i -lt "$runs" ]; do
	run1 all.fclabel "" fclabel "$fc" "$out/machine.q"
	[ -n "${BENCH_BEFORE:-}" ] && run1_with "$BENCH_BEFORE" all.before "" fclabel "$fc" "$out/machine.q"
	[ -n "$newlib" ] && run1 all.new "$newlib" selinux "$fc" "$out/machine.q"
	run1 all.floor "" floor "$fc" "$out/machine.q"
	run1 s.fclabel "" fclabel "$fc" "$out/sample.q"
	run1 s.old "" selinux "$fc" "$out/sample.q"
	[ -n "$newlib" ] && run1 s.new "$newlib" selinux "$fc" "$out/sample.q"
	run1 s.floor "" floor "$fc" "$out/sample.q"
	i=$((i + 1))
done
fi

status=0
# row NAME TAG: lookups/s, per lookup, whole lookups/s (load counted), by CPU time, load ms, the
# digest
row() {
	if ok "$2"; then
		_b=$(best_rate "$2")
		printf '  %-28s %12s %9s %12s %12s %8s  %s\n' "$1" "$(num "$(echo "$_b" | field rate)")" \
			"$(ns "$(echo "$_b" | field rate)")" "$(num "$(best_whole "$2")")" \
			"$(num "$(best_cpu "$2")")" "$(best_load "$2")" "$(echo "$_b" | field digest)"
	else
		printf '  %-28s %12s\n' "$1" "(failed: $(tail -n 1 "$runs_dir/$2.err" 2>/dev/null))"
	fi
}
# verdict OURS PEER VERSION [target]: the ratios, lookups only and whole; with "target", against
# the 20x target (which is for all the machine's paths: a sample pays the lazy index's first
# builds over fewer lookups)
verdict() {
	ok "$1" && ok "$2" || return 0
	_o=$(best_rate "$1" | field rate) _p=$(best_rate "$2" | field rate)
	_r=$(ratio "$_o" "$_p")
	_w=$(ratio "$(best_whole "$1")" "$(best_whole "$2")")
	_v=
	[ "${4:-}" = target ] && _v=" (target >= 20x whole: $(awk -v a="${_w%x}" 'BEGIN { print (a >= 20 ? "met" : "not met") }'))"
	echo "  fclabel / libselinux $3: $_r lookups only, $_w whole (load counted)$_v;" \
		"$(ratio "$(best_cpu "$1")" "$(best_cpu "$2")") by CPU time"
}
# same A B WHAT: the answers' digests agree
same() {
	ok "$1" && ok "$2" || return 0
	if [ "$(best_rate "$1" | field digest)" = "$(best_rate "$2" | field digest)" ]; then
		echo "  answers: identical to libselinux $3"
	else
		echo "  answers: DIFFER from libselinux $3"
		[ "$3" = "$oldv" ] && status=1
	fi
}
# floor OURS FLOOR: how much of fclabel's time per lookup is the loop's own
floorline() {
	ok "$1" && ok "$2" || return 0
	echo "  the floor (the loop with a lookup that answers at once) is $(ns "$(best_rate "$2" | field rate)") a lookup:" \
		"fclabel spends $(awk -v o="$(best_rate "$1" | field rate)" -v f="$(best_rate "$2" | field rate)" \
		'BEGIN { printf "%.0f ns", 1e9 / o - 1e9 / f }') a lookup above it"
}
hdr() { printf '  %-28s %12s %9s %12s %12s %8s  %s\n' "" "lookups/s" "a lookup" "whole/s" "by CPU/s" "load ms" "answers' digest"; }

if $lookups; then
echo
echo "lookups, refpolicy, all $nq paths of this machine:"
hdr
row "fclabel" all.fclabel
[ -n "${BENCH_BEFORE:-}" ] && row "fclabel before" all.before
row "libselinux $newv" all.new
row "floor" all.floor
verdict all.fclabel all.new "$newv" target
if [ -n "${BENCH_BEFORE:-}" ]; then
	echo "  before ($BENCH_BEFORE):"
	verdict all.before all.new "$newv"
	if ok all.fclabel && ok all.before; then
		echo "  this build / the build before: $(ratio "$(best_rate all.fclabel | field rate)" \
			"$(best_rate all.before | field rate)") lookups only, $(ratio "$(best_cpu all.fclabel)" \
			"$(best_cpu all.before)") by CPU time; answers $([ "$(best_rate all.fclabel | field digest)" = \
			"$(best_rate all.before | field digest)" ] && echo identical || echo DIFFER)"
	fi
fi
same all.fclabel all.new "$newv"
floorline all.fclabel all.floor
echo
echo "lookups, refpolicy, a sample of $ns_ paths (libselinux $oldv is too slow for all):"
hdr
row "fclabel" s.fclabel
row "libselinux $oldv" s.old
row "libselinux $newv" s.new
row "floor" s.floor
verdict s.fclabel s.new "$newv"
verdict s.fclabel s.old "$oldv"
same s.fclabel s.old "$oldv"
same s.fclabel s.new "$newv"
floorline s.fclabel s.floor
fi

# Policy load: refpolicy with its .homedirs and .subs_dist as text, as libselinux 3.4's .bin
# (format 5, sefcontext_compile of this system) and as 3.8's (format 6, bench/build_sefc_new.sh).
# The floor reads the same files' bytes (32 KiB reads) and parses nothing.
ld=$out/load
rm -rf "$ld"; mkdir -p "$ld/text" "$ld/v5" "$ld/v6"
fcd=$(dirname "$fc")
for f in file_contexts file_contexts.homedirs file_contexts.subs_dist; do
	[ -f "$fcd/$f" ] && for d in text v5 v6; do cp "$fcd/$f" "$ld/$d/"; done
done
printf '0100644 /usr/bin/ls\0' >"$ld/one.q"
sefc_new=$(bash "$top/bench/build_sefc_new.sh" 2>>"$out/newlib.log" | tail -n 1) || sefc_new=
forms=text
for v in v5 v6; do
	tool=/usr/sbin/sefcontext_compile
	[ $v = v6 ] && tool=$sefc_new
	[ -x "$tool" ] || continue
	for f in file_contexts file_contexts.homedirs; do
		[ -f "$ld/$v/$f" ] && "$tool" -o "$ld/$v/$f.bin" "$ld/$v/$f"
	done
	forms="$forms $v"
done
# the files a load of FORM reads, comma-separated (the .bin where there is one)
readlist() {
	_l=
	for f in file_contexts file_contexts.homedirs file_contexts.subs_dist; do
		_p=$ld/$1/$f
		[ -f "$_p.bin" ] && _p=$_p.bin
		[ -f "$_p" ] && _l=${_l:+$_l,}$_p
	done
	echo "$_l"
}
lruns=${BENCH_LOAD_RUNS:-15}
i=0
while [ $i -lt "$lruns" ]; do
	for v in $forms; do
		run1 "load.$v.fclabel" "" fclabel "$ld/$v/file_contexts" "$ld/one.q"
		[ -n "${BENCH_BEFORE:-}" ] &&
			run1_with "$BENCH_BEFORE" "load.$v.before" "" fclabel "$ld/$v/file_contexts" "$ld/one.q"
		run1 "load.$v.floor" "" floor "$(readlist $v)" "$ld/one.q"
		# 3.4 cannot read format 6; 3.8 skips format 5 ("Old compiled fcontext format") and
		# reads the text instead
		[ $v = v6 ] || run1 "load.$v.old" "" selinux "$ld/$v/file_contexts" "$ld/one.q"
		[ -n "$newlib" ] && [ $v != v5 ] &&
			run1 "load.$v.new" "$newlib" selinux "$ld/$v/file_contexts" "$ld/one.q"
	done
	i=$((i + 1))
done
lms() { if ok "$1"; then best_load "$1"; else echo -; fi; }
echo
echo "policy load, refpolicy + .homedirs + .subs_dist (ms, best of $lruns, the engines taking turns):"
printf '  %-16s %8s %8s %8s %8s  %s\n' "" fclabel floor "$oldv" "$newv" "fclabel / its text load (target <= 1.00x)"
t_text=$(lms load.text.fclabel)
t_btext=$(lms load.text.before)
for v in $forms; do
	name=text
	[ $v = text ] || name=".bin format $(od -An -tu1 -j4 -N4 "$ld/$v/file_contexts.bin" | tr ' ' '\n' | sort -n | tail -n 1)"
	t=$(lms "load.$v.fclabel")
	printf '  %-16s %8s %8s %8s %8s  %s\n' "$name" "$t" "$(lms "load.$v.floor")" "$(lms "load.$v.old")" \
		"$(lms "load.$v.new")" "$(awk -v a="$t" -v b="$t_text" 'BEGIN { printf "%.2fx", a / b }')"
	[ -n "${BENCH_BEFORE:-}" ] && tb=$(lms "load.$v.before") &&
		printf '  %-16s %8s %8s %8s %8s  %s\n' "  before" "$tb" "" "" "" \
			"$(awk -v a="$tb" -v b="$t_btext" 'BEGIN { printf "%.2fx", a / b }') of its text load; this build $(awk -v a="$t" -v b="$tb" 'BEGIN { printf "%.2fx", a / b }') of it"
done
[ -n "${BENCH_BEFORE:-}" ] && echo "  (before: $BENCH_BEFORE, the same files in the same rounds)"
echo "  (floor: reading the same files' bytes and nothing else; - : that library does not read that"
echo "  form: 3.4 cannot read format 6, 3.8 skips format 5 and reads the text)"
echo "  the installed policy (/etc/selinux/default, its .bin is newer): $(for i in 1 2 3 4 5; do "$bench" fclabel /etc/selinux/default/contexts/files/file_contexts "$ld/one.q"; done | field load_ms | sort -n | head -n 1) ms"

# Every policy in ../shared/data, whole lookups (load included), against libselinux 3.8 in the
# same run, with the answers checked against 3.4 and 3.8 (bench/bench_policies.py).
if ! $lookups; then
	:
elif [ -d "$shared/images" ] && [ -d "$shared/android" ]; then
	echo
	echo "every policy (whole lookups: load + lookups, best of $runs):"
	python3 "$top/bench/bench_policies.py" "$bench" "$shared" "$out" "$out/machine.q" "${newlib:--}" "$runs" || status=1
else
	echo "bench: no ../shared/data images and android policies: the per-policy table is skipped"
fi
exit $status
