# Crash safety: fclabel label killed (SIGKILL) at random points, on a 128-byte-inode image (every
# label in a shared EA block: blocks are allocated) and on a 256-byte one (labels in the inode).
# After each kill, and the journal's replay (e2fsck -E journal_only), e2fsck -fn reports nothing
# it did not report before, and a rerun ends with the image an uninterrupted run gives (but for
# the journal's blocks). The 128-byte image is labeled as a copy renamed over it (the default
# there): a kill leaves the original or the result, byte for byte. Written in place (256-byte,
# and 128 with --in-place), the labels go through the journal: a kill leaves what a replay makes
# the state before or after a transaction. (tests/t_killwalk.sh kills after every write.)
. "$TOP/tests/imglib.sh"
cd "$OUT" || exit 1
command -v e2fsck >/dev/null || skip "e2fsck is not installed"
TRIALS=${CRASH_TRIALS:-24}

# 60 directories, each its own type, 100 files each; then more names per directory type
: >fc
mkdir -p tree
d=0
while [ $d -lt 60 ]; do
	mkdir tree/d$d
	printf '/d%s(/.*)?\tsystem_u:object_r:dir%s_t:s0\n' $d $d >>fc
	printf '/d%s/x.*\t--\tsystem_u:object_r:x%s_t:s0\n' $d $d >>fc
	(cd tree/d$d && i=0 && while [ $i -lt 100 ]; do : >f$i; : >x$i; i=$((i + 1)); done)
	d=$((d + 1))
done
printf '/.*\tsystem_u:object_r:default_t:s0\n' | cat - fc >fc.all

# e2fsck -fn's findings after the journal's replay (on a copy), without the lines that only
# describe the file system
fsck_report() {
	cp --sparse=always "$1" replayed.img
	e2fsck -E journal_only -y replayed.img >/dev/null 2>&1
	e2fsck -fn replayed.img 2>&1 | grep -v -e '^e2fsck [0-9]' -e '^Pass [1-5]' -e 'files (.*blocks$'
}

now_ms() { date +%s%3N; }

# What a kill may leave, by kind (one line per finding of e2fsck -fn):
#   clean  nothing new
#   ref+1  an EA block's reference count one too high: a reference was added and the kill came
#          before the inode that takes it was written. The next run corrects it.
#   alloc  the few writes of an allocation (bitmap, descriptor, superblock, then the inode):
#          a block marked in use that no inode points to yet. Harmless, and left to e2fsck.
#   BAD    anything else (an inode pointing at a free block, a bad EA block, ...)
classify() { # REPORT BEFORE
	[ "$1" = "$2" ] && { echo clean; return; }
	extra=$(printf '%s\n' "$1" | grep -v -x -F -e "$2" | grep -v -e '^$' -e 'WARNING: Filesystem still has errors' -e '^Fix? no')
	if printf '%s\n' "$extra" | grep -q -v -E 'Extended attribute block [0-9]+ has reference count [0-9]+, should be [0-9]+\.  Fix\? no'; then
		if printf '%s\n' "$extra" | grep -q -v -E -e '^Block bitmap differences: +-[0-9]+$' -e '^Block bitmap differences: +-[0-9]+ *Fix\? no' -e 'Free blocks count wrong' -e 'block bitmap does not match checksum' -e '^IGNORED' ; then
			echo BAD
		else
			echo alloc
		fi
		return
	fi
	# ref+1 only when every count is exactly one too high
	printf '%s\n' "$extra" | sed -n 's/.*reference count \([0-9]*\), should be \([0-9]*\).*/\1 \2/p' |
		awk '$1 != $2 + 1 { bad = 1 } END { print bad ? "BAD" : "ref+1" }'
}

shim=
if cc -shared -fPIC -O2 -o killshim.so "$TOP/tests/killshim.c" -ldl 2>/dev/null; then
	shim=$OUT/killshim.so
fi

# trial NAME KILLER...: labels a copy of base.img, stopped by KILLER; classifies what is left,
# reruns, compares with the uninterrupted result
trial() {
	name=$1; shift
	cp base.img k.img
	"$@"
	r=$(fsck_report k.img)
	kind=$(classify "$r" "$before")
	if cmp -s k.img base.img; then n_orig=$((n_orig + 1)); elif cmp -s k.img ref.img; then n_done=$((n_done + 1)); fi
	"$FCLABEL" label k.img -S fc.all $how >/dev/null 2>k.err
	rerun=$?
	if same_fs k.img ref.img; then conv=same; else conv=differs; fi
	case $kind in
	clean|ref+1)
		[ $conv = same ] || { bad "$isz: $name ($kind): the rerun (exit $rerun) differs from an uninterrupted run"; cat k.err; } ;;
	alloc) ;;
	*) bad "$isz: $name: e2fsck -fn reports:"; echo "$r" | head -n 20 ;;
	esac
	eval "n_$(echo $kind | tr '+' 'p')=\$((n_$(echo $kind | tr '+' 'p') + 1))"
}
random_kill() { # MS
	# (under LeakSanitizer a kill can land in its leak check at exit, which then reports that
	# it could not read the killed thread: no leak check for a run that is killed anyway)
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		"$FCLABEL" label k.img -S fc.all $how >/dev/null 2>&1 &
	pid=$!
	sleep "$(awk -v m="$1" 'BEGIN { printf "%.3f", m / 1000 }')"
	kill -9 $pid 2>/dev/null && killed=$((killed + 1))
	wait $pid 2>/dev/null
}
shim_kill() { # N
	# (under AddressSanitizer the shim may come before its runtime: allowed)
	(KILL_AFTER_WRITES=$1 LD_PRELOAD=$shim \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0" \
		exec "$FCLABEL" label k.img -S fc.all $how >/dev/null 2>&1) 2>/dev/null
}

# whole: the image after a kill is the original or the complete result, byte for byte
whole() { # WHAT N
	expect_eq "$isz${how:+ $how}: $1: each image after a kill is the original ($n_orig) or the result ($n_done)" \
		$((n_orig + n_done)) "$2"
}

for variant in 128 "128 --in-place" 256; do
	set -- $variant
	isz=$1 how=${2:-}
	rm -f base.img
	mke2fs -q -t ext4 -I $isz -N 14000 -d tree base.img 64M >/dev/null 2>&1 ||
		{ bad "$isz: mke2fs"; continue; }
	before=$(fsck_report base.img)
	cp base.img ref.img
	t0=$(now_ms)
	"$FCLABEL" label ref.img -S fc.all $how >out 2>err
	expect_eq "$isz: uninterrupted run" "$?" 0
	span=$(( $(now_ms) - t0 ))
	expect_eq "$isz: uninterrupted run: e2fsck -fn as before" "$(fsck_report ref.img)" "$before"

	# SIGKILL at random points of the run (startup included), from fixed seeds
	n_clean=0 n_refp1=0 n_alloc=0 n_BAD=0 i=0 killed=0 n_orig=0 n_done=0
	while [ $i -lt "$TRIALS" ]; do
		ms=$(awk -v i=$i -v s="$span" 'BEGIN { srand(1000 + i); printf "%d", rand() * s * 1.1 }')
		trial "random kill $i after ${ms} ms" random_kill "$ms"
		i=$((i + 1))
	done
	# On a loaded machine (tests run side by side) the runs vary: when many kills came after
	# the run was over, more (earlier, from further fixed seeds) until most have hit one.
	extra=0
	while [ "$killed" -lt $(((TRIALS + extra) / 2)) ] && [ "$extra" -lt $((TRIALS * 2)) ]; do
		ms=$(awk -v i=$extra -v s="$span" 'BEGIN { srand(5000 + i); printf "%d", rand() * s * 0.6 }')
		trial "extra random kill $extra after ${ms} ms" random_kill "$ms"
		extra=$((extra + 1))
	done
	nk=$((TRIALS + extra))
	ok "$isz${how:+ $how}: $nk SIGKILLs over ${span} ms runs ($killed while running): $n_clean clean, $n_refp1 ref+1 (corrected by the rerun), $n_alloc inside an allocation's writes"
	expect_eq "$isz${how:+ $how}: random kills: nothing but the expected kinds" "$n_BAD" 0
	ok "$isz${how:+ $how}: $killed of $nk random kills hit a running labeler (t_killwalk kills after every write)"
	expect_eq "$isz${how:+ $how}: every random kill leaves a clean image (after a replay)" "$n_clean" "$nk"
	[ "$isz" = 128 ] && [ -z "$how" ] && whole "random kills" "$nk"

	# and deterministically after the N-th write: the first ones (the first allocations), then
	# spread over the run
	if [ -n "$shim" ] && command -v strace >/dev/null; then
		# (LeakSanitizer cannot run under ptrace: off for this one counting run)
		writes=$( (cp base.img w.img && ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -e trace=pwrite64 -o w.trace "$FCLABEL" label w.img -S fc.all $how >/dev/null 2>&1) && grep -c pwrite64 w.trace)
		n_clean=0 n_refp1=0 n_alloc=0 n_BAD=0 n_orig=0 n_done=0
		pts="1 2 3 4 5 6 7 8 9 10 11 12"
		j=1; while [ $j -le 28 ]; do pts="$pts $((writes * j / 29))"; j=$((j + 1)); done
		for n in $pts; do
			trial "killed after write $n of $writes" shim_kill "$n"
		done
		ok "$isz${how:+ $how}: killed after each of 40 chosen writes (of $writes): $n_clean clean, $n_refp1 ref+1, $n_alloc inside an allocation's writes"
		expect_eq "$isz${how:+ $how}: chosen writes: nothing but the expected kinds" "$n_BAD" 0
		expect_eq "$isz${how:+ $how}: every kill point leaves a clean image (after a replay)" "$n_clean" 40
		[ "$isz" = 128 ] && [ -z "$how" ] && whole "chosen writes" 40
	fi
done
finish
