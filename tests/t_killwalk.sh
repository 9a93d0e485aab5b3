# Crash consistency in place (issue 30, cases 1 and 6): fclabel label killed (SIGKILL) after
# each of its writes in turn, not at random points. For each configuration a counting run (the
# shim of tests/killshim.c counting every write, fallocate and superblock write included) gives
# the number of writes W; then, for N = 1..W (every N up to a cap, then a stride that still ends
# at W), a copy of the base image is labeled in place and killed right after write N, and judged:
#   with a journal: replayed by e2fsck -E journal_only -y on a copy, and by the kernel (a loop
#     mount and umount) on another copy, e2fsck -fn reports nothing that it did not report on
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
# write), KILLWALK_SECONDS (the time bound), KILLWALK_ONLY=abcd (the configurations).
. "$TOP/tests/imglib.sh"
. "$TOP/tests/judgelib.sh"
cd "$OUT" || exit 1
need_image_tools
command -v timeout >/dev/null || skip "timeout (coreutils) is not installed"
cc -shared -fPIC -O2 -o killshim.so "$TOP/tests/killshim.c" -ldl 2>cc.err ||
	skip "cannot build the kill shim: $(head -n 1 cc.err)"
trap kernel_cleanup EXIT
HEAD=${KILLWALK_HEAD:-80}
REST=${KILLWALK_REST:-40}
BOUND=${KILLWALK_SECONDS:-240}
ONLY=${KILLWALK_ONLY:-abcd}
# (the sanitized build is slower: fewer points there)
case $FCLABEL in */asan/*) HEAD=$((HEAD / 2)) REST=$((REST / 2)) ;; esac
start=$(date +%s)
if loop_works; then
	kernel=yes
else
	kernel=no
	echo "the kernel's journal replay is skipped: $loop_why"
fi

# ---- the tree: 48 directories, 336 files, owned by 3 users and 4 groups ----
mkdir -p tree
d=0
while [ $d -lt 24 ]; do
	dd=$(printf 'd%02d' $d)
	mkdir -p tree/$dd/s
	f=0
	while [ $f -lt 12 ]; do echo "$dd $f" >tree/$dd/f$f; f=$((f + 1)); done
	: >tree/$dd/s/a
	ln -s ../f0 tree/$dd/s/l
	chown -R $((1000 + d % 3)):$((100 + d % 4)) tree/$dd
	d=$((d + 1))
done
# other attributes (debugfs, so the host's file system need not have them): user.* on f0, f3
# and every third directory, an ACL on f1: a label beside them goes to an attribute block on a
# 256-byte inode
printf '\002\000\000\000\001\000\006\000\377\377\377\377\002\000\006\000\350\003\000\000\004\000\004\000\377\377\377\377\020\000\006\000\377\377\377\377\040\000\004\000\377\377\377\377' >acl.bin
: >xattrs.cmd
d=0
while [ $d -lt 24 ]; do
	dd=$(printf 'd%02d' $d)
	echo "ea_set /$dd/f0 user.note note-of-$dd-f0-padded-to-forty-bytes." >>xattrs.cmd
	echo "ea_set /$dd/f3 user.note note-of-$dd-f3-padded-to-forty-bytes." >>xattrs.cmd
	echo "ea_set -f acl.bin /$dd/f1 system.posix_acl_access" >>xattrs.cmd
	[ $((d % 3)) = 0 ] && echo "ea_set /$dd user.dirnote directory-$dd-note-forty-bytes-long" >>xattrs.cmd
	d=$((d + 1))
done
# the older policy labels d00-d11; the newer one gives every directory below d20 a type of its
# own, f2 a long label (an MLS category list: an attribute block on a 256-byte inode), s/ a type
long=s0:c0.c10
c=20
while [ $c -le 300 ]; do long=$long,c$c; c=$((c + 10)); done
cat >fc_old <<'EOF'
/.*			system_u:object_r:default_t:s0
/d0[0-9](/.*)?		system_u:object_r:old_t:s0
/d1[01](/.*)?		system_u:object_r:old_t:s0:c1,c2,c3
EOF
{
	printf '/.*\t\tsystem_u:object_r:default_t:s0\n'
	d=0
	while [ $d -lt 20 ]; do printf '/d%02d(/.*)?\t\tsystem_u:object_r:d%02d_t:s0\n' $d $d; d=$((d + 1)); done
	printf '/d[0-9]+/f2\t--\tsystem_u:object_r:long_t:%s\n' "$long"
	printf '/d[0-9]+/s(/.*)?\t\tsystem_u:object_r:sub_t:s0\n'
} >fc_new

now() { date +%s; }

# judge_can_fail: the judge finds what is planted on a copy of base.img, e2fsck clean before
judge_can_fail() {
	printf 'Block bitmap differences:  +1234\nFix? no\n' >planted.after
	: >planted.before
	expect_eq "judge: a line after is new when nothing was before" \
		"$(new_lines planted.before planted.after | head -n 1)" "Block bitmap differences:  +1234"
	printf 'Fix? no\nBlock bitmap differences:  +1234\n' >planted.before
	expect_eq "judge: a line before is not new" "$(new_lines planted.before planted.after)" ""
	printf 'Block bitmap differences:  -1234 -(1240--1242)\nFix? no\nFree blocks count wrong (5, counted=6).\nExtended attribute block 9 has reference count 3, should be 2.  Fix? no\n[QUOTA WARNING] Usage inconsistent for ID 0:actual (1024, 3) != expected (2048, 3)\nUpdate quota info for quota type 0? no\n' >planted.leak
	expect_eq "judge: a leak is a leak" "$(not_leak planted.leak)" ""
	printf 'Block bitmap differences:  -1234 +1235\nExtended attribute block 9 has reference count 2, should be 3.  Fix? no\n[QUOTA WARNING] Usage inconsistent for ID 0:actual (2048, 3) != expected (1024, 3)\n' >planted.worse
	expect_eq "judge: a block in use but free, a count too low, quota too low are not a leak" \
		"$(not_leak planted.worse | wc -l)" 3
	cp --sparse=always base.img planted.img
	b=$(debugfs -R "blocks /d01/f5" planted.img 2>/dev/null | awk '{ print $1 }')
	debugfs -w -R "freeb $b" planted.img >/dev/null 2>&1
	debugfs -w -R "ea_set /d02/f6 security.selinux system_u:object_r:planted_t:s0" planted.img >/dev/null 2>&1
	fsck_lines planted.img planted.fsck
	expect_match "judge: e2fsck finds a block in use that the bitmap calls free" \
		"$(new_lines base.fsck planted.fsck | not_leak - | head -n 1)" "Block bitmap differences:*+$b*"
	ea_either base.ea base.ea planted.img >/dev/null
	expect_match "judge: a label neither old nor new is found" "$(cat planted.img.cmp)" "*/d02/f6*planted_t*"
}
# short TEXT: a line of e2fsck findings for a message, numbers kept
short() { head -n "${2:-3}" "$1" | tr '\n' '|' | cut -c1-300; }

# config NAME MKE2FS-OPTIONS -- LABEL-ARGS...
config() {
	cname=$1
	mkopts=$2
	shift 2
	cmd="$*"
	echo "== $cname: mke2fs $mkopts; fclabel label IMG $cmd"
	rm -f base.img
	# (mke2fs -d leaves quota usage to e2fsck; debugfs leaves i_blocks of the blocks it adds)
	if ! mke2fs -q -F -t ext4 $mkopts -N 512 -d tree base.img 16M >mke2fs.log 2>&1; then
		bad "$cname: mke2fs $mkopts: $(tail -n 2 mke2fs.log | tr '\n' '|')"
		return
	fi
	debugfs -w -f xattrs.cmd base.img >/dev/null 2>&1
	e2fsck -fy base.img >/dev/null 2>&1
	"$FCLABEL" label base.img -S fc_old >old.out 2>old.err || { bad "$cname: labeling the base image with the older policy: $(tail -n 2 old.err)"; return; }
	fsck_lines base.img base.fsck
	expect_eq "$cname: the base image is e2fsck-clean" "$(short base.fsck)" ""
	ea_dump base.img base.ea
	paths_of base.img paths
	EA_PATHS=$OUT/paths
	if [ -n "$(printf '%s' "$mkopts" | grep 'I 256')" ]; then
		expect_eq "$cname: some labels go to attribute blocks" \
			"$(debugfs -R 'stat /d00/f0' base.img 2>/dev/null | grep -c 'File ACL: [1-9]')" 1
	fi

	[ "$cname" = "$first" ] && judge_can_fail

	# the uninterrupted run
	cp --sparse=always base.img ref.img
	"$FCLABEL" label ref.img $cmd >ref.out 2>ref.err
	expect_eq "$cname: the uninterrupted run exits 0" "$?" 0
	fsck_lines ref.img ref.fsck
	expect_eq "$cname: the uninterrupted run leaves e2fsck -fn clean" "$(new_lines base.fsck ref.fsck | short -)" ""
	ea_dump ref.img ref.ea
	expect_eq "$cname: the uninterrupted run changes labels" "$(cmp -s base.ea ref.ea && echo same)" ""

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

	# the kill points: 1..HEAD, then REST more spread up to the last write
	if [ -n "${KILLWALK_ALL:-}" ] || [ "$total" -le $((HEAD + REST)) ]; then
		pts=$(seq 1 "$total")
	else
		pts="$(seq 1 "$HEAD") $(awk -v h="$HEAD" -v t="$total" -v r="$REST" \
			'BEGIN { for (i = 1; i <= r; i++) { p = h + int((t - h) * i / r + 0.5); if (p > last) print p; last = p } }')"
	fi
	npts=$(echo $pts | wc -w)
	echo "$cname: $total writes; killing after each of $npts of them"
	k=0 nclean=0 nleak=0 nbad=0 nfail=0 nrerun=0 nunkilled=0 shown=0
	: >"$cname.kinds"
	for n in $pts; do
		if [ $(($(now) - start)) -gt "$BOUND" ]; then
			bad "$cname: the time bound (${BOUND} s) ran out after $k of $npts kill points"
			break
		fi
		k=$((k + 1))
		kill_point "$n"
	done
	counts="$k kill points of $total writes; after the kill$([ -n "$journal" ] && echo " and a replay"): $nclean clean, $nleak leak only, $nbad worse; $nrerun reruns failed; $nfail points failed"
	echo "$cname: $counts ($nunkilled runs ended before their kill)"
	summary="$summary
$cname ($mkopts; $cmd): $counts"
	if [ -s "$cname.kinds" ]; then
		echo "$cname: what e2fsck -fn found, by kind (numbers made N), over the kill points:"
		grep -v -e '^[^:]*: Fix? no$' -e '^[^:]*: IGNORED' -e 'WARNING: Filesystem still has errors' "$cname.kinds" |
			sed 's/\b[0-9][0-9]*\b/N/g' | sort | uniq -c | sort -rn | head -n 24
	fi
}

# kill_point N: one kill, judged
kill_point() {
	n=$1
	cp --sparse=always base.img k.img
	KILL_AFTER_WRITES=$n KILL_ALL_WRITES=1 LD_PRELOAD=$OUT/killshim.so \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0" \
		timeout 60 "$FCLABEL" label k.img $cmd >/dev/null 2>k.err
	krc=$?
	wr=$(awk -v n="$n" '$1 == n { print $2, "of", $5, "bytes at", $4; exit }' writes.log)
	where="killed after write $n of $total ($wr)"
	probs=
	case $krc in
	137) ;;
	0) nunkilled=$((nunkilled + 1)) ;;
	*) probs="the killed run exited $krc, not by the kill: $(tail -n 1 k.err)" ;;
	esac
	# r.img: the killed image, replayed by e2fsck where there is a journal
	cp --sparse=always k.img r.img
	judged="either:r.img"
	leak=
	if [ -n "$journal" ]; then
		journal_replay r.img || probs="$probs; e2fsck -E journal_only exit $_jr: $(grep -v '^e2fsck 1' "$OUT/jreplay.log" | short - 2)"
		fsck_lines r.img r.fsck
		new_lines base.fsck r.fsck >r.new
		if [ -s r.new ]; then
			probs="$probs; after e2fsck's replay e2fsck -fn finds: $(short r.new)"
			sed 's/^/after e2fsck replays: /' r.new >>"$cname.kinds"
		fi
		if [ $kernel = yes ]; then
			cp --sparse=always k.img m.img
			if ! kernel_replay m.img; then
				probs="$probs; the kernel does not mount it: $(short kmount.err 2)"
			fi
			fsck_lines m.img m.fsck
			new_lines base.fsck m.fsck >m.new
			if [ -s m.new ]; then
				probs="$probs; after the kernel's replay e2fsck -fn finds: $(short m.new)"
				sed 's/^/after the kernel replays: /' m.new >>"$cname.kinds"
			fi
			judged="$judged either:m.img"
		fi
	else
		fsck_lines r.img r.fsck
		new_lines base.fsck r.fsck >r.new
		not_leak r.new >r.bad
		sed 's/^/killed: /' r.new >>"$cname.kinds"
		[ -s r.bad ] && probs="$probs; e2fsck -fn finds more than a leak: $(short r.bad)"
		leak=$([ -s r.new ] && echo yes)
	fi
	# the rerun, on the killed image as it is
	rp=
	timeout 60 "$FCLABEL" label k.img $cmd >rerun.out 2>rerun.err
	rrc=$?
	[ $rrc = 0 ] || rp="exits $rrc: $(grep -v 'scanned' rerun.err | short - 2)"
	if [ -n "$journal" ] && needs_recovery k.img; then
		journal_replay k.img || rp="$rp; e2fsck -E journal_only exit $_jr"
	fi
	fsck_lines k.img rr.fsck
	new_lines base.fsck rr.fsck >rr.new
	if [ -s rr.new ]; then
		rp="$rp; then e2fsck -fn finds: $(short rr.new)"
		sed 's/^/after the rerun: /' rr.new >>"$cname.kinds"
	fi
	# the attributes: old or new after the kill (and each replay), the new ones after the rerun
	ea_judge base.ea ref.ea $judged same:k.img
	[ -s r.img.cmp ] && probs="$probs; attributes$([ -n "$journal" ] && echo " after e2fsck's replay"): $(short r.img.cmp 2)"
	[ -s m.img.cmp ] && probs="$probs; attributes after the kernel's replay: $(short m.img.cmp 2)"
	rm -f m.img.cmp
	[ -s k.img.cmp ] && rp="$rp; then attributes differ from the uninterrupted run's: $(short k.img.cmp 2)"
	if [ -n "$probs" ]; then nbad=$((nbad + 1)); elif [ -n "$leak" ]; then nleak=$((nleak + 1)); else nclean=$((nclean + 1)); fi
	[ -n "$rp" ] && { nrerun=$((nrerun + 1)); probs="$probs; the rerun ${rp#; }"; }
	[ -z "$probs" ] && return
	nfail=$((nfail + 1))
	fails=$((fails + 1))
	# (the first few in full, the rest counted: the kinds are summed up at the end)
	shown=$((shown + 1))
	if [ $shown -le 12 ]; then
		printf 'FAIL %s: %s: %s\n' "$cname" "$where" "${probs#; }"
	elif [ $shown = 13 ]; then
		echo "($cname: further failures counted, not shown)"
	fi
}

summary=
first=$(printf '%s' "$ONLY" | cut -c1)
for c in a b c d; do
	case $ONLY in *$c*) ;; *) continue ;; esac
	case $c in
	a) journal=yes; config a "-I 256 -b 4096 -g 2048" -S fc_new --digests ;;
	b) journal=; config b "-I 256 -b 4096 -g 2048 -O ^has_journal" -S fc_new --digests ;;
	c) journal=yes; config c "-I 128 -b 1024 -O quota" -S fc_new --in-place ;;
	d) journal=; config d "-I 128 -b 1024 -O quota,^has_journal" -S fc_new --in-place ;;
	esac
done
echo "== kill walk${summary}"
[ $kernel = yes ] || echo "(the kernel's replay skipped: $loop_why)"
echo "$(($(now) - start)) s"
finish
