# Crash consistency in place (issue 30, cases 1 and 6): fclabel label killed (SIGKILL) after
# each of its writes in turn, not at random points. For each configuration a counting run (the
# shim of tests/killshim.c counting every write, fallocate and superblock write included) gives
# the number of writes W; then, for N = 1..W (every N up to a cap, then a stride that still ends
# at W), a copy of the base image is labeled in place and killed right after write N, and judged:
#   with a journal: replayed by e2fsck -E journal_only -y on a copy, and by the kernel on
#     another copy (a read-only mount of a read-write loop device, and umount: the kernel
#     replays the journal, and mounts a quota image so where it lacks quota support; an error it
#     logs meanwhile is a failure), e2fsck -fn reports nothing that it did not report on
#     the base image, and every attribute of every inode is the one before the run or the one
#     an uninterrupted run leaves (a label, a digest: old or new; user.*, ACLs: unchanged);
#   without one: e2fsck -fn reports nothing but a leak (judgelib.sh's not_leak: blocks the
#     bitmap holds that no file uses, free counts, a reference count too high, quota usage
#     recorded too high), and every attribute is old or new;
#   either way: the same command run again on the killed image (not replayed) exits 0, and
#     after a journal replay (when the image still needs one) e2fsck -fn reports nothing new and
#     every attribute is the uninterrupted run's.
# Configurations: (a) 256-byte inodes, journal, --digests, files whose labels go to attribute
# blocks (user.* attributes, ACLs, long labels); (b) the same without a journal; (c) 128-byte
# inodes, quota, journal, --in-place; (d) the same without a journal. The base image is labeled
# with an older policy first, so the walk changes labels as well as adding them.
# KILLWALK_HEAD (every write up to it), KILLWALK_REST (points after it), KILLWALK_ALL=1 (every
# write), KILLWALK_SECONDS (the time budget: past it, each configuration tries its first 12
# points and stops, saying so), KILLWALK_ONLY=abcdef (the configurations).
# tests/walklib.sh has the tree, the policies and the judge; tests/judgelib.sh the e2fsck rules.
. "$TOP/tests/imglib.sh"
. "$TOP/tests/judgelib.sh"
. "$TOP/tests/walklib.sh"
cd "$OUT" || exit 1
need_image_tools
command -v timeout >/dev/null || skip "timeout (coreutils) is not installed"
cc -shared -fPIC -O2 -o killshim.so "$TOP/tests/killshim.c" -ldl 2>cc.err ||
	skip "cannot build the kill shim: $(head -n 1 cc.err)"
trap kernel_cleanup EXIT
HEAD=${KILLWALK_HEAD:-200}
REST=${KILLWALK_REST:-40}
BOUND=${KILLWALK_SECONDS:-300}
ONLY=${KILLWALK_ONLY:-abcdef}
WALK_ALL=${KILLWALK_ALL:-}
# (the sanitized build is slower: fewer points there)
case $FCLABEL in */asan/*) HEAD=$((HEAD / 2)) REST=$((REST / 2)) ;; esac
start=$(now)
if loop_works; then
	kernel=yes
else
	kernel=no
	echo "the kernel's journal replay is skipped: $loop_why"
fi
walk_setup

# config NAME MKE2FS-OPTIONS LABEL-ARGS...
config() {
	walk_base "$@" || return
	[ "$cname" = "$first" ] && judge_can_fail
	# the counting run
	cp --sparse=always base.img w.img
	rm -f writes.log writes.count
	KILL_ALL_WRITES=1 KILL_COUNT_FILE=$OUT/writes.count KILL_LOG=$OUT/writes.log LD_PRELOAD=$OUT/killshim.so \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
		"$FCLABEL" label w.img $cmd >/dev/null 2>w.err
	expect_eq "$cname: the counting run exits 0" "$?" 0
	total=$(cat writes.count 2>/dev/null)
	expect_match "$cname: writes counted" "$total" "[1-9]*"
	[ -n "$total" ] && [ "$total" -gt 0 ] || return
	ea_same ref.ea w.img >/dev/null
	expect_eq "$cname: the counting run's labels are the uninterrupted run's" "$(short w.img.cmp)" ""
	pts=$(walk_points "$total")
	echo "$cname: $total writes; killing after each of $(echo $pts | wc -w) of them"
	walk_counts
	unkilled=0
	for n in $pts; do
		in_time || { walk_left_say "kill points" "$(($(echo $pts | wc -w) - npoints))"; break; }
		cp --sparse=always base.img k.img
		KILL_AFTER_WRITES=$n KILL_ALL_WRITES=1 LD_PRELOAD=$OUT/killshim.so \
			ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0" \
			timeout 60 "$FCLABEL" label k.img $cmd >/dev/null 2>k.err
		krc=$?
		PROBS_EXTRA=
		case $krc in
		137) ;;
		0) unkilled=$((unkilled + 1)) ;;
		*) PROBS_EXTRA="; the killed run exited $krc, not by the kill: $(tail -n 1 k.err)" ;;
		esac
		wr=$(awk -v n="$n" '$1 == n { print $2, "of", $5, "bytes at", $4; exit }' writes.log)
		judge_failed k.img "killed after write $n of $total ($wr)"
	done
	walk_summary "kill points of $total writes"
	[ $unkilled = 0 ] || echo "$cname: $unkilled runs ended before their kill (fewer writes than counted)"
}

summary=
first=$(printf '%s' "$ONLY" | cut -c1)
for c in a b c d e f; do
	case $ONLY in *$c*) ;; *) continue ;; esac
	case $c in
	a) config a "-I 256 -b 4096 -g 2048" -S fc_new --digests ;;
	b) config b "-I 256 -b 4096 -g 2048 -O ^has_journal" -S fc_new --digests ;;
	c) config c "-I 128 -b 1024 -O quota" -S fc_new --in-place ;;
	d) config d "-I 128 -b 1024 -O quota,^has_journal" -S fc_new --in-place ;;
	# the same two with a commit every 8 blocks (FCLABEL_COMMIT_BLOCKS): many transactions,
	# many batches in crash order (their first writes, then points spread to the last)
	e) export FCLABEL_COMMIT_BLOCKS=8
	   h=$HEAD; HEAD=$((HEAD * 2 / 5))
	   config e "-I 256 -b 4096 -g 2048" -S fc_new --digests
	   HEAD=$h; unset FCLABEL_COMMIT_BLOCKS ;;
	f) export FCLABEL_COMMIT_BLOCKS=8
	   h=$HEAD; HEAD=$((HEAD * 2 / 5))
	   config f "-I 128 -b 1024 -O quota,^has_journal" -S fc_new --in-place
	   HEAD=$h; unset FCLABEL_COMMIT_BLOCKS ;;
	esac
done
echo "== kill walk${summary}"
[ $kernel = yes ] || echo "(the kernel's replay skipped: $loop_why)"
echo "$(($(now) - start)) s"
finish
