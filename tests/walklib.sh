# The walks over every point of failure of an in-place label (t_killwalk: a SIGKILL after each
# write; t_faults_fsck: each read, write and flush failed in turn), sourced after imglib.sh and
# judgelib.sh. POSIX sh.
#
#   walk_setup              the tree (48 directories, 336 files, 3 owners, 4 groups, user.*
#                           attributes, ACLs), the older policy fc_old and the newer fc_new
#   walk_base NAME MKE2FS-OPTIONS LABEL-ARGS...
#                           base.img (mke2fs -d, the attributes, d00-d11 labeled with fc_old;
#                           judged clean), its findings base.fsck and attributes base.ea, then the
#                           uninterrupted run of `fclabel label ref.img LABEL-ARGS` and ref.ea;
#                           sets cname, mkopts, cmd, journal (yes when the image has one);
#                           returns 1 when the configuration cannot be walked
#   walk_points TOTAL       the points to walk: 1..TOTAL when it is at most HEAD + REST (or
#                           WALK_ALL is set), else 1..HEAD and REST more spread up to TOTAL
#   judge_failed IMG WHERE  IMG is base.img after a run that failed at WHERE (killed, or an
#                           injected fault): judged as t_killwalk says (after a replay by
#                           e2fsck and by the kernel: nothing new, or without a journal nothing
#                           but a leak; every attribute old or new), then the same command run
#                           again on IMG (exit 0, e2fsck nothing new, attributes the
#                           uninterrupted run's). Counts in nclean, nleak, nbad, nrerun, nfail;
#                           the first 12 failures of a configuration printed; PROBS_EXTRA (set
#                           by the caller) is added to what is wrong after the failed run
#   walk_counts             resets the counts;  walk_summary WHAT  prints them and the kinds of
#                           e2fsck findings (numbers made N) over the configuration's points
# Needs: $kernel (yes/no, from loop_works), $start and $BOUND (seconds) for the time bound.

now() { date +%s; }
# short FILE [N]: the first N (3) lines of FILE (- for the standard input) on one line
short() { head -n "${2:-3}" "$1" | tr '\n' '|' | cut -c1-300; }

walk_setup() {
	mkdir -p tree
	_d=0
	while [ $_d -lt 24 ]; do
		_dd=$(printf 'd%02d' $_d)
		mkdir -p tree/$_dd/s
		_f=0
		while [ $_f -lt 12 ]; do echo "$_dd $_f" >tree/$_dd/f$_f; _f=$((_f + 1)); done
		: >tree/$_dd/s/a
		ln -sf ../f0 tree/$_dd/s/l
		chown -R $((1000 + _d % 3)):$((100 + _d % 4)) tree/$_dd
		_d=$((_d + 1))
	done
	# other attributes (debugfs, so the host's file system need not have them): user.* on f0,
	# f3 and every third directory, an ACL on f1: a label beside them goes to an attribute
	# block on a 256-byte inode
	printf '\002\000\000\000\001\000\006\000\377\377\377\377\002\000\006\000\350\003\000\000\004\000\004\000\377\377\377\377\020\000\006\000\377\377\377\377\040\000\004\000\377\377\377\377' >acl.bin
	: >xattrs.cmd
	_d=0
	while [ $_d -lt 24 ]; do
		_dd=$(printf 'd%02d' $_d)
		echo "ea_set /$_dd/f0 user.note note-of-$_dd-f0-padded-to-forty-bytes." >>xattrs.cmd
		echo "ea_set /$_dd/f3 user.note note-of-$_dd-f3-padded-to-forty-bytes." >>xattrs.cmd
		echo "ea_set -f acl.bin /$_dd/f1 system.posix_acl_access" >>xattrs.cmd
		[ $((_d % 3)) = 0 ] && echo "ea_set /$_dd user.dirnote directory-$_dd-note-forty-bytes-long" >>xattrs.cmd
		_d=$((_d + 1))
	done
	# the older policy labels d00-d11; the newer one gives every directory below d20 a type of
	# its own, f2 a long label (an MLS category list: an attribute block on a 256-byte inode),
	# s/ a type
	_long=s0:c0.c10
	_c=20
	while [ $_c -le 300 ]; do _long=$_long,c$_c; _c=$((_c + 10)); done
	cat >fc_old <<'EOF'
/.*			system_u:object_r:default_t:s0
/d0[0-9](/.*)?		system_u:object_r:old_t:s0
/d1[01](/.*)?		system_u:object_r:old_t:s0:c1,c2,c3
EOF
	{
		printf '/.*\t\tsystem_u:object_r:default_t:s0\n'
		_d=0
		while [ $_d -lt 20 ]; do printf '/d%02d(/.*)?\t\tsystem_u:object_r:d%02d_t:s0\n' $_d $_d; _d=$((_d + 1)); done
		printf '/d[0-9]+/f2\t--\tsystem_u:object_r:long_t:%s\n' "$_long"
		printf '/d[0-9]+/s(/.*)?\t\tsystem_u:object_r:sub_t:s0\n'
	} >fc_new
}

walk_base() {
	cname=$1
	mkopts=$2
	shift 2
	cmd="$*"
	echo "== $cname: mke2fs $mkopts; fclabel label IMG $cmd"
	rm -f base.img
	# (mke2fs -d leaves quota usage to e2fsck; debugfs leaves i_blocks of the blocks it adds)
	if ! mke2fs -q -F -t ext4 $mkopts -N 512 -d tree base.img 16M >mke2fs.log 2>&1; then
		bad "$cname: mke2fs $mkopts: $(tail -n 2 mke2fs.log | tr '\n' '|')"
		return 1
	fi
	debugfs -w -f xattrs.cmd base.img >/dev/null 2>&1
	e2fsck -fy base.img >/dev/null 2>&1
	# (d12-d23 left unlabeled: the walk gives them their first labels, which take attribute
	# blocks charged to their owners' quota on 128-byte inodes, where the others' labels only
	# move from one shared block to another)
	"$FCLABEL" label base.img -S fc_old $(seq -f '-e /d%02g' 12 23) >old.out 2>old.err ||
		{ bad "$cname: labeling the base image with the older policy: $(tail -n 2 old.err)"; return 1; }
	fsck_lines base.img base.fsck
	expect_eq "$cname: the base image is e2fsck-clean" "$(short base.fsck)" ""
	ea_dump base.img base.ea
	paths_of base.img paths
	EA_PATHS=$OUT/paths
	journal=
	has_journal base.img && journal=yes
	case " $mkopts " in
	*" -I 256 "*)
		expect_eq "$cname: some labels go to attribute blocks" \
			"$(debugfs -R 'stat /d00/f0' base.img 2>/dev/null | grep -c 'File ACL: [1-9]')" 1 ;;
	esac
	# the uninterrupted run
	cp --sparse=always base.img ref.img
	"$FCLABEL" label ref.img $cmd >ref.out 2>ref.err
	expect_eq "$cname: the uninterrupted run exits 0" "$?" 0
	fsck_lines ref.img ref.fsck
	expect_eq "$cname: the uninterrupted run leaves e2fsck -fn clean" "$(new_lines base.fsck ref.fsck | short -)" ""
	ea_dump ref.img ref.ea
	expect_eq "$cname: the uninterrupted run changes labels" "$(cmp -s base.ea ref.ea && echo same)" ""
}

walk_points() {
	if [ -n "${WALK_ALL:-}" ] || [ "$1" -le $((HEAD + REST)) ]; then
		seq 1 "$1"
	else
		seq 1 "$HEAD"
		awk -v h="$HEAD" -v t="$1" -v r="$REST" \
			'BEGIN { for (i = 1; i <= r; i++) { p = h + int((t - h) * i / r + 0.5); if (p > last) print p; last = p } }'
	fi
}

walk_counts() { nclean=0 nleak=0 nbad=0 nfail=0 nrerun=0 shown=0 npoints=0; : >"$cname.kinds"; }

# in_time: whether to try another point. The bound is a budget of coverage, not of speed (a
# hang is each run's own timeout, a failure): past it, a configuration still tries its first
# WALK_MIN points (default 12), and then stops, saying how many it left (a loaded machine gets
# fewer points, never a failure for being slow).
in_time() {
	[ $(($(now) - start)) -le "$BOUND" ] && return 0
	[ "$npoints" -lt "${WALK_MIN:-12}" ] && return 0
	walk_left=yes
	return 1
}
# walk_left_say WHAT LEFT: the note when the budget stopped a configuration early
walk_left_say() {
	[ -n "${walk_left:-}" ] || return 0
	echo "$cname: the time budget (${BOUND} s) ran out: $npoints points tried, $2 $1 left untried (the machine is slow or loaded; every point tried is judged)"
	walk_left=
}

judge_failed() {
	_img=$1 _where=$2
	npoints=$((npoints + 1))
	probs=$PROBS_EXTRA
	# r.img: the image as the failure left it, replayed by e2fsck where there is a journal
	cp --sparse=always "$_img" r.img
	_judged="either:r.img"
	_leak=
	if [ -n "$journal" ]; then
		journal_replay r.img ||
			probs="$probs; e2fsck -E journal_only exit $_jr: $(grep -v '^e2fsck 1' "$OUT/jreplay.log" | short - 2)"
		fsck_lines r.img r.fsck
		new_lines base.fsck r.fsck >r.new
		if [ -s r.new ]; then
			probs="$probs; after e2fsck's replay e2fsck -fn finds: $(short r.new)"
			sed 's/^/after e2fsck replays: /' r.new >>"$cname.kinds"
		fi
		if [ "$kernel" = yes ]; then
			cp --sparse=always "$_img" m.img
			kernel_replay m.img || probs="$probs; the kernel's replay (a mount) fails or logs an error: $(short kmount.err 2)"
			fsck_lines m.img m.fsck
			new_lines base.fsck m.fsck >m.new
			if [ -s m.new ]; then
				probs="$probs; after the kernel's replay e2fsck -fn finds: $(short m.new)"
				sed 's/^/after the kernel replays: /' m.new >>"$cname.kinds"
			fi
			_judged="$_judged either:m.img"
		fi
	else
		fsck_lines r.img r.fsck
		new_lines base.fsck r.fsck >r.new
		not_leak r.new >r.bad
		sed 's/^/after the failure: /' r.new >>"$cname.kinds"
		[ -s r.bad ] && probs="$probs; e2fsck -fn finds more than a leak: $(short r.bad)"
		[ -s r.new ] && _leak=yes
	fi
	# the rerun, on the image as the failure left it
	_rp=
	timeout 60 "$FCLABEL" label "$_img" $cmd >rerun.out 2>rerun.err
	_rrc=$?
	[ $_rrc = 0 ] || _rp="exits $_rrc: $(grep -v 'scanned' rerun.err | short - 2)"
	if [ -n "$journal" ] && needs_recovery "$_img"; then
		journal_replay "$_img" || _rp="$_rp; e2fsck -E journal_only exit $_jr"
	fi
	fsck_lines "$_img" rr.fsck
	new_lines base.fsck rr.fsck >rr.new
	if [ -s rr.new ]; then
		_rp="$_rp; then e2fsck -fn finds: $(short rr.new)"
		sed 's/^/after the rerun: /' rr.new >>"$cname.kinds"
	fi
	# the attributes: old or new after the failure (and each replay), the new ones after the rerun
	rm -f m.img.cmp
	ea_judge base.ea ref.ea $_judged "same:$_img"
	[ -s r.img.cmp ] && probs="$probs; attributes$([ -n "$journal" ] && echo " after e2fsck's replay"): $(short r.img.cmp 2)"
	[ -s m.img.cmp ] && probs="$probs; attributes after the kernel's replay: $(short m.img.cmp 2)"
	[ -s "$_img.cmp" ] && _rp="$_rp; then attributes differ from the uninterrupted run's: $(short "$_img.cmp" 2)"
	if [ -n "$probs" ]; then nbad=$((nbad + 1)); elif [ -n "$_leak" ]; then nleak=$((nleak + 1)); else nclean=$((nclean + 1)); fi
	[ -n "$_rp" ] && { nrerun=$((nrerun + 1)); probs="$probs; the rerun ${_rp#; }"; }
	[ -z "$probs" ] && return 0
	nfail=$((nfail + 1))
	fails=$((fails + 1))
	# (the first few in full, the rest counted: the kinds are summed up at the end)
	shown=$((shown + 1))
	if [ $shown -le 12 ]; then
		printf 'FAIL %s: %s: %s\n' "$cname" "$_where" "${probs#; }"
	elif [ $shown = 13 ]; then
		echo "($cname: further failures counted, not shown)"
	fi
	return 1
}

walk_summary() {
	counts="$npoints $1; after it$([ -n "$journal" ] && echo " and a replay"): $nclean clean, $nleak leak only, $nbad worse; $nrerun reruns failed; $nfail points failed"
	echo "$cname: $counts"
	summary="$summary
$cname ($mkopts; $cmd): $counts"
	if [ -s "$cname.kinds" ]; then
		echo "$cname: what e2fsck -fn found, by kind (numbers made N), over the points:"
		grep -v -e '^[^:]*: Fix? no$' -e '^[^:]*: IGNORED' -e 'WARNING: Filesystem still has errors' "$cname.kinds" |
			sed 's/\b[0-9][0-9]*\b/N/g' | sort | uniq -c | sort -rn | head -n 24
	fi
}

# judge_can_fail: the judge finds what is planted on a copy of base.img (e2fsck clean before)
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
	_b=$(debugfs -R "blocks /d01/f5" planted.img 2>/dev/null | awk '{ print $1 }')
	debugfs -w -R "freeb $_b" planted.img >/dev/null 2>&1
	debugfs -w -R "ea_set /d02/f6 security.selinux system_u:object_r:planted_t:s0" planted.img >/dev/null 2>&1
	fsck_lines planted.img planted.fsck
	expect_match "judge: e2fsck finds a block in use that the bitmap calls free" \
		"$(new_lines base.fsck planted.fsck | not_leak - | head -n 1)" "Block bitmap differences:*+$_b*"
	ea_either base.ea base.ea planted.img >/dev/null
	expect_match "judge: a label neither old nor new is found" "$(cat planted.img.cmp)" "*/d02/f6*planted_t*"
}
