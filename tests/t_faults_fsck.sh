# Injected I/O faults in place, judged by e2fsck (issue 30, case 6): t_faults checks a faulted
# in-place run with `fclabel check` only; here each read, write and flush of the image channel
# is failed in turn (FCLABEL_FAULT=KIND:N, imgfmt/tracked.c) on the configurations of
# t_killwalk, and what the failed run left is judged as a kill is there (tests/walklib.sh):
#   with a journal: after e2fsck's replay and the kernel's, e2fsck -fn reports nothing new;
#   without one: nothing but a leak; either way every attribute is the old one or the new one,
#   and the same command run again exits 0, leaves e2fsck -fn clean and the uninterrupted run's
#   attributes.
# Besides: a run whose fault fired exits 1 or 2, or exits 0 with the uninterrupted run's
# attributes (it recovered); never another status (a crash).
# Configurations: (a) 256-byte inodes, journal, --digests, labels in attribute blocks; (b) the
# same without a journal; (c) 128-byte inodes, quota, journal, --in-place; (d) the same
# without a journal. For each kind, every N up to FAULTS_HEAD, then FAULTS_REST more spread to
# the last (FAULTS_ALL=1: every N); FAULTS_SECONDS is the time budget (past it, each
# configuration tries 12 points and stops, saying so), FAULTS_ONLY=abcd the configurations.
. "$TOP/tests/imglib.sh"
. "$TOP/tests/judgelib.sh"
. "$TOP/tests/walklib.sh"
cd "$OUT" || exit 1
need_image_tools
command -v timeout >/dev/null || skip "timeout (coreutils) is not installed"
trap kernel_cleanup EXIT
HEAD=${FAULTS_HEAD:-30}
REST=${FAULTS_REST:-15}
BOUND=${FAULTS_SECONDS:-300}
ONLY=${FAULTS_ONLY:-abcd}
WALK_ALL=${FAULTS_ALL:-}
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
	cp --sparse=always base.img w.img
	FCLABEL_FAULT=count "$FCLABEL" label w.img $cmd >/dev/null 2>w.err
	expect_eq "$cname: the counting run exits 0" "$?" 0
	iocounts=$(sed -n 's/^fclabel: I\/O counts: //p' w.err)
	expect_match "$cname: I/O counted" "$iocounts" "read=[1-9]* write=[1-9]* flush=*"
	walk_counts
	unfired=0 badexit=0
	for kind in read write flush; do
		total=$(printf '%s\n' $iocounts | sed -n "s/^$kind=//p")
		[ -n "$total" ] && [ "$total" -gt 0 ] || continue
		pts=$(walk_points "$total")
		echo "$cname: $kind: $total; failing each of $(echo $pts | wc -w) of them"
		for n in $pts; do
			in_time || { walk_left_say "points (of $kind and after)" "some"; break 2; }
			cp --sparse=always base.img f.img
			FCLABEL_FAULT=$kind:$n timeout 60 "$FCLABEL" label f.img $cmd >f.out 2>f.err
			frc=$?
			PROBS_EXTRA=
			if ! grep -q "FCLABEL_FAULT: failing $kind #$n\$" f.err; then
				unfired=$((unfired + 1))
				continue
			fi
			case $frc in
			0)
				ea_same ref.ea f.img >/dev/null ||
					PROBS_EXTRA="; exit 0 after the fault, but the attributes are not the uninterrupted run's: $(short f.img.cmp 2)" ;;
			1 | 2) ;;
			*)
				PROBS_EXTRA="; the run exits $frc: $(grep -v -e scanned -e FCLABEL_FAULT f.err | short - 2)"
				badexit=$((badexit + 1)) ;;
			esac
			judge_failed f.img "FCLABEL_FAULT=$kind:$n (exit $frc)"
		done
	done
	walk_summary "failed I/Os (read, write, flush)"
	[ $unfired = 0 ] || echo "$cname: $unfired runs made fewer I/Os of the kind than counted (no fault fired)"
	expect_eq "$cname: every faulted run exits 0, 1 or 2" "$badexit" 0
}

summary=
for c in a b c d; do
	case $ONLY in *$c*) ;; *) continue ;; esac
	case $c in
	a) config a "-I 256 -b 4096 -g 2048" -S fc_new --digests ;;
	b) config b "-I 256 -b 4096 -g 2048 -O ^has_journal" -S fc_new --digests ;;
	c) config c "-I 128 -b 1024 -O quota" -S fc_new --in-place ;;
	d) config d "-I 128 -b 1024 -O quota,^has_journal" -S fc_new --in-place ;;
	esac
done
echo "== fault walk${summary}"
[ $kernel = yes ] || echo "(the kernel's replay skipped: $loop_why)"
echo "$(($(now) - start)) s"
finish
