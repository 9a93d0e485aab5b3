#!/bin/sh
# make bench-data: an Android userdata image of about 200,000 files in 500 packages (most of them
# untrusted apps at twelve target SDKs, the others platform, privileged and media apps; a tenth
# with a second user's data) plus system directories (tests/gen_userdata.py bench). In one run,
# best of BENCH_RUNS (3) each, on fresh copies:
#  - fclabel label -S FC                        (file_contexts alone: the peer)
#  - fclabel label -S FC --seapp SEAPP --digests (target: at most 1.3x the plain label)
#  - peak memory of each                        (target: under 64 MiB)
#  - fclabel relabel --from FC --to FC --from-seapp SEAPP --seapp SEAPP2 --digests, SEAPP2 being
#    SEAPP with the privileged apps' line given levelFrom=all (it reaches one kind of app, about
#    6% of the packages), against a full label with SEAPP2 (target: under 10%), and whether the
#    two give the same image.
#  - fclabel label --as-device on that image labeled with SEAPP (and its digests), the policy
#    unchanged (a phone's next boot changes nothing), against a full label (--seapp --digests) of
#    the same image (target: under 5%), and whether it left the image as it was.
# Android 14's private+vendor file_contexts and seapp_contexts from ../shared when there, else the
# fixtures.
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
out=$top/tests/out/bench-data
mkdir -p "$out"
shared=${SHARED:-$top/../shared/data}
nf=${BENCH_FILES:-200000}
np=${BENCH_PACKAGES:-500}
a14=$shared/android/android-14.0.0_r50
if [ -f "$a14/private_seapp_contexts" ]; then
	fc=$a14/private_file_contexts,$a14/vendor_file_contexts
	seapp=$a14/private_seapp_contexts
else
	fc=$top/fixtures/userdata/file_contexts
	seapp=$top/fixtures/seapp/plat_seapp_contexts
fi
img=$out/base.img
if [ ! -f "$img" ] || [ "$(cat "$out/base.n" 2>/dev/null)" != "$nf $np" ]; then
	echo "bench-data: building a userdata tree of $nf files in $np packages..."
	rm -rf "$out/tree" "$img"
	python3 tests/gen_userdata.py bench "$out/tree" "$nf" "$np" || exit 1
	count=$(find "$out/tree" | wc -l)
	mke2fs -q -t ext4 -I 256 -N $((count + 1000)) -d "$out/tree" "$img" 2G >/dev/null 2>&1 ||
		{ echo "bench-data: mke2fs failed"; exit 1; }
	rm -rf "$out/tree"
	echo "$nf $np" >"$out/base.n"
fi
used=$(dumpe2fs -h "$img" 2>/dev/null | awk -F: '/^Inode count/ {c=$2} /^Free inodes/ {f=$2} END {print c - f}')
echo "bench-data: $img, $used inodes in use, $np packages"
echo "  file_contexts $fc"
echo "  seapp_contexts $seapp"
sed 's/^\(user=_app isPrivApp=true domain=priv_app type=privapp_data_file levelFrom=\)user/\1all/' \
	"$seapp" >"$out/seapp2"
cmp -s "$seapp" "$out/seapp2" && { echo "bench-data: the privileged apps' line is not in $seapp"; exit 1; }

# measure CMD...: "EXIT SECONDS MAXRSS_KB": wall time to the millisecond (time(1)'s own start
# included: about half a millisecond), peak memory as time(1) reports it
measure() {
	python3 -c '
import subprocess, sys, time
with open(sys.argv[1], "w") as o, open(sys.argv[2], "w") as e:
    t = time.perf_counter()
    rc = subprocess.call(sys.argv[3:], stdout=o, stderr=e)
    t = time.perf_counter() - t
print(rc, "%.3f" % t)' "$out/cmd.out" "$out/cmd.err" /usr/bin/time -f %M -o "$out/time" "$@" |
		tr '\n' ' '
	tail -n 1 "$out/time"
}
# best NAME PREPARE-IMAGE CMD...: best of BENCH_RUNS runs on a fresh copy of PREPARE-IMAGE
best() {
	_name=$1 _from=$2
	shift 2
	: >"$out/$_name.t"
	_r=0
	while [ $_r -lt "${BENCH_RUNS:-3}" ]; do
		cp --sparse=always "$_from" "$out/work.img"
		sync
		measure "$@" >>"$out/$_name.t"
		cat "$out/cmd.out" "$out/cmd.err" >"$out/$_name.out" # (the summary is on stderr)
		_r=$((_r + 1))
	done
	sort -k2 -n "$out/$_name.t" | head -n 1
}
w=$out/work.img
set -- $(best plain "$img" ./fclabel label "$w" -a /data -S "$fc")
p_rc=$1 p_s=$2 p_kb=$3
set -- $(best seapp "$img" ./fclabel label "$w" -a /data -S "$fc" --seapp "$seapp" --digests)
s_rc=$1 s_s=$2 s_kb=$3
echo "label -S FC                     : $p_s s, peak $((p_kb / 1024)) MiB (exit $p_rc)"
sed 's/^/    /' "$out/plain.out"
echo "label -S FC --seapp --digests   : $s_s s, peak $((s_kb / 1024)) MiB (exit $s_rc)"
sed 's/^/    /' "$out/seapp.out"
echo "seapp+digests / plain           : $(awk -v a="$s_s" -v b="$p_s" 'BEGIN { printf "%.2fx (target <= 1.3x)", a / b }')"
echo "peak memory                     : $((s_kb > p_kb ? s_kb / 1024 : p_kb / 1024)) MiB (target < 64 MiB)"

# the relabel: from an image labeled with SEAPP (and its digests)
cp --sparse=always "$img" "$out/labeled.img"
./fclabel label "$out/labeled.img" -a /data -S "$fc" --seapp "$seapp" --digests >/dev/null 2>&1
set -- $(best full "$out/labeled.img" ./fclabel label "$w" -a /data -S "$fc" --seapp "$out/seapp2" --digests \
	--full-label)
f_s=$2
cp "$w" "$out/full.img"
set -- $(best relabel "$out/labeled.img" ./fclabel relabel "$w" -a /data --from "$fc" --to "$fc" \
	--from-seapp "$seapp" --seapp "$out/seapp2" --digests --full-label)
r_rc=$1 r_s=$2 r_kb=$3
echo "full label with the edited seapp : $f_s s"
sed 's/^/    /' "$out/full.out"
echo "relabel --from-seapp --seapp     : $r_s s, peak $((r_kb / 1024)) MiB (exit $r_rc)"
sed 's/^/    /' "$out/relabel.out"
cmp -s "$w" "$out/full.img" && same="the same image, byte for byte" ||
	same=$(./fclabel check "$w" -a /data -S "$fc" --seapp "$out/seapp2" --digests >/dev/null 2>&1 &&
		echo "the same labels and digests (check finds nothing)" || echo "DIFFERENT labels")
echo "relabel / full                   : $(awk -v a="$r_s" -v b="$f_s" 'BEGIN { printf "%.3f (target < 0.10)", a / b }'); $same"

# --as-device on the labeled image, the policy unchanged, against a full label of it: neither
# writes, so both run on one copy, best of 20 each (a run of about ten milliseconds is at the
# mercy of whatever else the machine does)
# again NAME CMD...: "EXIT SECONDS MAXRSS_KB", the best of 20 runs of CMD each timed from its
# own start (no time(1) between: its start is a tenth of a run of a few milliseconds), then one
# more under time(1) for the peak memory
again() {
	_name=$1
	shift
	python3 -c '
import subprocess, sys, time
ts = []
for _ in range(20):
    with open(sys.argv[1], "w") as o, open(sys.argv[2], "w") as e:
        t = time.perf_counter()
        rc = subprocess.call(sys.argv[3:], stdout=o, stderr=e)
        ts.append(time.perf_counter() - t)
print(rc, "%.4f" % min(ts), end=" ")
print(" ".join("%.4f" % t for t in ts), file=open(sys.argv[1] + ".t", "w"))' \
		"$out/$_name.out" "$out/cmd.err" "$@"
	cat "$out/cmd.err" >>"$out/$_name.out" # (the summary is on stderr)
	/usr/bin/time -f %M -o "$out/time" "$@" >/dev/null 2>&1
	tail -n 1 "$out/time"
}
cp --sparse=always "$out/labeled.img" "$w"
sync
set -- $(again peer ./fclabel label "$w" -a /data -S "$fc" --seapp "$seapp" --digests --full-label)
q_s=$2
set -- $(again device ./fclabel label "$w" -a /data -S "$fc" --seapp "$seapp" --as-device)
d_rc=$1 d_s=$2 d_kb=$3
cmp -s "$w" "$out/labeled.img" && same="the image left as it was, byte for byte" || same="the image CHANGED"
echo "full label of the labeled image  : $q_s s"
sed 's/^/    /' "$out/peer.out"
echo "label --as-device, same policy   : $d_s s, peak $((d_kb / 1024)) MiB (exit $d_rc)"
sed 's/^/    /' "$out/device.out"
echo "as-device / full                 : $(awk -v a="$d_s" -v b="$q_s" 'BEGIN { printf "%.3f (target < 0.05)", a / b }'); $same"
rm -f "$w" "$out/full.img" "$out/labeled.img"
