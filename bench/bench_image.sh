#!/bin/sh
# make bench-image: label a 200,000-inode image (this machine's tree shape, empty files) and time,
# in the same run, best of BENCH_LABEL_RUNS (5) interleaved: fclabel label, e2fsck -fn on the
# same image (the peer: one metadata pass; target: label <= 0.7x of it), label again with nothing
# to write, check, and the floor (e2fsck -fn -tt's passes 1 and 2: the inode tables and the
# directory blocks read); and, where loop mounts work, setfiles -F on a mounted copy with
# libselinux 3.4 and with the newer libselinux from ../shared/tools/build-libselinux-new. Prints
# figures and ratios.
# BENCH_INODES=2000000: only that first section, on an image of that many inodes built beside the
# default one (tests/out/bench-image-2000000, 20 GiB declared, 1.3 GiB used): this machine's tree
# copied under renamed second components (/usr/lib.3/...) and put in by mke2fs -d; building it
# took 24 minutes on the 2-core machine (8 making the tree, 16 in mke2fs -d), once.
# EROFS beside ext4, the same tree (right after the first figures): mkfs.erofs (erofs-utils)
# --file-contexts with the same refpolicy (libselinux gives the labels: the newer one where
# build-libselinux-new builds it, else 3.4, about 4 minutes an image), uncompressed and
# -zlz4hc,9 -C262144, cached beside the ext4 images; then, on a copy of the ext4 image labeled by
# fclabel: first that the results agree (fclabel check's exit and counts, the same for all three
# but the ext4 image's /lost+found in "scanned"; fclabel dump of each EROFS image identical to
# the ext4 one's but /lost+found; else no figures), then best of BENCH_EROFS_RUNS (5), each
# round running each command on each image in turn: fclabel check -S refpolicy (nothing
# differs), fclabel dump >/dev/null, and one metadata pass by each format's own tool, the floor
# as e2fsck -fn is for label: e2fsck -fn (ext4), fsck.erofs without --extract (every inode,
# attribute and directory) and dump.erofs -S (every inode and directory, for statistics); each
# EROFS figure with its ratio to ext4's. The files are empty, so the lz4hc image compresses
# nothing: its metadata takes the same blocks as the plain one's (cmp: the superblock and about
# a byte an inode differ), and it shows only that an image with the compression features set is
# read as fast. BENCH_EROFS_ONLY=1: stop after those.
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
n=${BENCH_INODES:-200000}
# (another size is built beside the default image, not over it)
out=$top/tests/out/bench-image
[ "$n" = 200000 ] || out=$out-$n
mkdir -p "$out"
shared=${SHARED:-$top/../shared/data}
fc=$shared/refpolicy/file_contexts
[ -f "$fc" ] || fc=/etc/selinux/default/contexts/files/file_contexts
[ -f "$fc" ] || { echo "bench-image: no refpolicy file_contexts"; exit 1; }

img=$out/base.img
img128=$out/base128.img
# mktree: $out/tree from $out/paths.txt (the tree every image here is made of; empty files)
mktree() {
	rm -rf "$out/tree"
	python3 -c '
import os, sys
root = sys.argv[1]
for line in sys.stdin:
    t, p = line.rstrip("\n").split(" ", 1)
    dst = root + p
    try:
        if t == "d":
            os.makedirs(dst, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if t == "l":
                os.symlink("target", dst)
            else:
                open(dst, "w").close()
    except OSError:
        pass
' "$out/tree" <"$out/paths.txt"
}
if [ ! -f "$img" ] || [ ! -f "$img128" ] || [ ! -f "$out/paths.txt" ] ||
   [ "$(cat "$out/base.n" 2>/dev/null)" != "$n" ]; then
	echo "bench-image: building a $n-inode tree from this machine's shape..."
	rm -rf "$out/tree" "$img"
	t0=$(date +%s)
	# past what this machine holds (BENCH_INODES=2000000), copies of its tree: copy k with
	# ".k" after each path's second component (/usr/lib.3/...), the shapes and names the same
	find /usr /etc /var /opt /root /srv /home -xdev \( -path "$top/tests/out" -prune \) -o -printf '%y %p\n' 2>/dev/null |
		python3 -c '
import sys
n = int(sys.argv[1])
lines = [l.rstrip("\n") for l in sys.stdin]
out, k = [], 0
while len(out) < n and lines:
    for l in lines:
        if k:
            t, p = l.split(" ", 1)
            c = p.split("/")
            if len(c) < 3:
                continue
            c[2] += ".%d" % k
            l = t + " " + "/".join(c)
        out.append(l)
        if len(out) == n:
            break
    k += 1
sys.stdout.write("\n".join(out) + "\n")
' "$n" >"$out/paths.txt"
	mktree
	count=$(find "$out/tree" | wc -l)
	t1=$(date +%s)
	# 2 GiB for 200,000 inodes, more for more (sparse: only what is used takes room)
	size=$(( (n + 199999) / 200000 * 2 ))G
	mke2fs -q -t ext4 -I 256 -N $((count + 1000)) -d "$out/tree" "$img" "$size" >/dev/null 2>&1 ||
		{ echo "bench-image: mke2fs failed"; exit 1; }
	t2=$(date +%s)
	# the same tree with 128-byte inodes: every label in an attribute block (only the default
	# size's sections use it)
	if [ "$n" = 200000 ]; then
		mke2fs -q -t ext4 -I 128 -N $((count + 1000)) -d "$out/tree" "$img128" 2G >/dev/null 2>&1 ||
			{ echo "bench-image: mke2fs -I 128 failed"; exit 1; }
	else
		: >"$img128"
	fi
	echo "bench-image: built in $(( $(date +%s) - t0 )) s (the tree $((t1 - t0)) s, mke2fs -d $((t2 - t1)) s)"
	# (the tree is kept for the EROFS images below, unless only the ext4 image is wanted)
	[ -n "${BENCH_BUILD_ONLY:-}" ] || [ "$n" != 200000 ] && rm -rf "$out/tree"
	echo "$n" >"$out/base.n"
fi
[ -n "${BENCH_BUILD_ONLY:-}" ] && exit 0 # bench_tree.sh: only the image
used=$(dumpe2fs -h "$img" 2>/dev/null | awk -F: '/^Inode count/ {c=$2} /^Free inodes/ {f=$2} END {print c - f}')
echo "bench-image: $img, $used inodes in use, refpolicy $fc"

# seconds_and_kb CMD...: runs CMD, prints "SECONDS MAXRSS_KB"
measure() {
	/usr/bin/time -f '%e %M' -o "$out/time" "$@" >"$out/cmd.out" 2>"$out/cmd.err"
	echo "$? $(cat "$out/time" | tail -n 1)"
}
best() { awk 'NR == 1 || $1 < m { m = $1 } END { print m }'; }

# measure_ms OUT CMD...: as measure, CMD's standard output to OUT (/dev/null: as a dump's), the
# seconds to the millisecond (these runs take a tenth of a second: time's %e says hundredths)
measure_ms() {
	_o=$1; shift
	_t0=$(date +%s%N)
	/usr/bin/time -f '%M' -o "$out/time" "$@" >"$_o" 2>"$out/cmd.err"
	_rc=$?
	_t1=$(date +%s%N)
	echo "$_rc $(awk -v a="$_t0" -v b="$_t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }') $(tail -n 1 "$out/time")"
}

# ---- label against e2fsck -fn, and the floor: best of BENCH_LABEL_RUNS (5), interleaved --------
# Each round, on a fresh copy: fclabel label (every label written, in place through the journal,
# the default), e2fsck -fn of the result, fclabel label again (nothing to write), fclabel check;
# and the floor, a pure read of the same metadata: e2fsck -fn -tt's passes 1 and 2 (every inode
# table in use read in order, every directory block sorted by block number), the figures it
# prints itself. Each figure is the best of its runs, its peak the highest. BENCH_BEFORE=BIN:
# another fclabel's label too, each round (a fresh copy). BENCH_LABEL_ONLY=1: this section alone.
runs=${BENCH_LABEL_RUNS:-5}
rm -f "$out"/lb.*.t
r=0; while [ $r -lt "$runs" ]; do
	cp --sparse=always "$img" "$out/work.img"
	sync
	set -- $(measure_ms "$out/cmd.out" "$top/fclabel" label "$out/work.img" -S "$fc")
	[ "$1" = 0 ] || echo "  (label: exit $1: $(tail -n 1 "$out/cmd.err"))"
	echo "$2 $3" >>"$out/lb.label.t"
	grep scanned "$out/cmd.err" | tail -n 1 >"$out/lb.label.line"
	set -- $(measure_ms /dev/null e2fsck -fn "$out/work.img")
	[ "$1" = 0 ] || echo "  (e2fsck -fn after the label: exit $1: NOT CLEAN)"
	echo "$2 $3" >>"$out/lb.fsck.t"
	set -- $(measure_ms "$out/cmd.out" "$top/fclabel" label "$out/work.img" -S "$fc")
	echo "$2 $3" >>"$out/lb.again.t"
	grep scanned "$out/cmd.err" | tail -n 1 >"$out/lb.again.line"
	set -- $(measure_ms "$out/cmd.out" "$top/fclabel" check "$out/work.img" -S "$fc")
	[ "$1" = 0 ] || echo "  (check: exit $1)"
	echo "$2 $3" >>"$out/lb.check.t"
	e2fsck -fn -tt "$out/work.img" >"$out/tt.out" 2>&1
	if [ -n "${BENCH_BEFORE:-}" ]; then
		cp --sparse=always "$img" "$out/work.img"
		sync
		set -- $(measure_ms "$out/cmd.out" "$BENCH_BEFORE" label "$out/work.img" -S "$fc")
		echo "$2 $3" >>"$out/lb.before.t"
	fi
	awk '/^Pass [12]: Memory used/ { sub(/.*time: */, ""); split($0, t, "/"); s += t[1] } END { print s }' \
		"$out/tt.out" >>"$out/lb.floor.t"
	r=$((r + 1))
done
lb() { best <"$out/lb.$1.t"; }
lmib() { echo "$(( $(sort -n -k2 "$out/lb.$1.t" | tail -n 1 | cut -d' ' -f2) / 1024 ))"; }
lx() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
fl_s=$(lb label) fs_s=$(lb fsck)
echo "best of $runs, interleaved, warm cache; each beside e2fsck -fn of the same image in the same run:"
echo "  fclabel label                 : $fl_s s, peak $(lmib label) MiB: $(cat "$out/lb.label.line")"
echo "  e2fsck -fn (the peer)         : $fs_s s, peak $(lmib fsck) MiB"
echo "  floor: e2fsck passes 1-2 (-tt): $(lb floor) s (its own figures: the inode tables and the directory blocks, read and checked)"
echo "  fclabel label again (nothing to write): $(lb again) s, peak $(lmib again) MiB ($(lx "$(lb again)" "$fs_s") e2fsck)"
echo "  fclabel check                 : $(lb check) s, peak $(lmib check) MiB ($(lx "$(lb check)" "$fs_s") e2fsck)"
echo "  fclabel label / e2fsck -fn    : $(lx "$fl_s" "$fs_s") (target <= 0.70x); / the floor: $(lx "$fl_s" "$(lb floor)")"
[ -f "$out/lb.before.t" ] &&
	echo "  before ($BENCH_BEFORE) label  : $(lb before) s, peak $(lmib before) MiB ($(lx "$(lb before)" "$fs_s") e2fsck); this build $(lx "$fl_s" "$(lb before)") of it"
rm -f "$out"/lb.*.t "$out"/lb.*.line "$out/tt.out"
# BENCH_LABEL_ONLY=1: only this section
if [ "$n" != 200000 ] || [ -n "${BENCH_LABEL_ONLY:-}" ]; then
	# (the other sections are the default size's)
	rm -f "$out/work.img"
	exit 0
fi

# ---- EROFS beside ext4: the same tree, check and dump (see the header) ----------------------
erofs_section() {
	command -v mkfs.erofs >/dev/null 2>&1 || {
		echo "EROFS: skipped (mkfs.erofs not installed: Debian package erofs-utils)"; rm -rf "$out/tree"; return; }
	ep=$out/base.erofs ez=$out/base-lz4hc.erofs
	if [ ! "$ep" -nt "$img" ] || [ ! "$ez" -nt "$img" ] || [ ! "$ep" -nt "$fc" ] || [ ! "$ez" -nt "$fc" ]; then
		[ -d "$out/tree" ] || { echo "bench-image: the tree again, for the EROFS images..."; mktree; }
		elib=$(bash "$top/../shared/tools/build-libselinux-new" 2>/dev/null | tail -n 1)
		if [ -f "$elib/libselinux.so.1" ]; then
			ename="libselinux $(sed -n 's/^libselinux_\(.*\)\.orig.*/\1/p' "$elib/VERSION" 2>/dev/null)"
		else
			elib= ename="libselinux 3.4 (the newer one did not build: about 4 minutes an image)"
		fi
		echo "bench-image: mkfs.erofs --file-contexts $fc ($ename), uncompressed and lz4hc..."
		rm -f "$ep" "$ez"
		LD_LIBRARY_PATH=$elib mkfs.erofs --quiet --file-contexts="$fc" "$ep.tmp" "$out/tree" >"$out/mkfs.err" 2>&1 &&
		LD_LIBRARY_PATH=$elib mkfs.erofs --quiet -zlz4hc,9 -C262144 --file-contexts="$fc" "$ez.tmp" "$out/tree" >>"$out/mkfs.err" 2>&1 || {
			echo "EROFS: mkfs.erofs failed: $(tail -n 2 "$out/mkfs.err" | tr '\n' '|')"; rm -rf "$out/tree" "$ep.tmp" "$ez.tmp"; return; }
		mv "$ep.tmp" "$ep" && mv "$ez.tmp" "$ez"
		echo "$ename" >"$out/erofs.lib"
	fi
	rm -rf "$out/tree"
	# the ext4 side: the same image labeled by fclabel with the same policy
	e4=$out/erofs-ext4.img
	cp --sparse=always "$img" "$e4"
	"$top/fclabel" label "$e4" -S "$fc" >/dev/null 2>"$out/cmd.err" ||
		{ echo "EROFS: fclabel label of the ext4 copy failed: $(tail -n 1 "$out/cmd.err")"; return; }
	sync
	echo "EROFS beside ext4, the same tree: ext4 $(($(du -k "$e4" | cut -f1) / 1024)) MiB allocated (labeled by fclabel); EROFS" \
	     "by mkfs.erofs --file-contexts ($(cat "$out/erofs.lib" 2>/dev/null)): uncompressed $(($(stat -c %s "$ep") / 1048576)) MiB, lz4hc $(($(stat -c %s "$ez") / 1048576)) MiB"
	# do they agree? check's exit and counts; the dumps, but /lost+found (only ext4 has one)
	agree=yes sums="" rcs="" scans=""
	for i in "$e4" "$ep" "$ez"; do
		"$top/fclabel" check "$i" -S "$fc" >"$out/agree.out" 2>"$out/agree.err"
		rcs="$rcs $?"
		line=$(grep 'scanned' "$out/agree.err" | tail -n 1)
		scans="$scans $(echo "$line" | sed -n 's/.*scanned \([0-9]*\),.*/\1/p')"
		sums="$sums|$(echo "$line" | sed 's/.*scanned [0-9]*, //; s/unchanged [0-9]*, //; s/, [0-9.]* s$//')"
		"$top/fclabel" dump "$i" >"$out/$(basename "$i").dump" 2>"$out/agree.err" ||
			{ agree=no; echo "  DISAGREE: fclabel dump $i: exit $?: $(tail -n 1 "$out/agree.err")"; }
	done
	set -- $rcs; [ "$1" = "$2" ] && [ "$1" = "$3" ] || { agree=no; echo "  DISAGREE: check's exit: ext4, EROFS, lz4hc:$rcs"; }
	set -- $scans
	e4n=$(wc -l <"$out/erofs-ext4.img.dump")
	grep -v '^/lost+found	' "$out/erofs-ext4.img.dump" >"$out/erofs-ext4.nolf"
	nolf=$(wc -l <"$out/erofs-ext4.nolf")
	[ "$1" = "$e4n" ] && [ "$2" = "$nolf" ] && [ "$3" = "$nolf" ] ||
		{ agree=no; echo "  DISAGREE: scanned ext4, EROFS, lz4hc:$scans; dump lines ext4 $e4n, but /lost+found $nolf"; }
	[ "$(echo "$sums" | tr '|' '\n' | sed 1d | sort -u | wc -l)" = 1 ] ||
		{ agree=no; echo "  DISAGREE: check's counts: $sums"; }
	for i in "$ep" "$ez"; do
		cmp -s "$out/erofs-ext4.nolf" "$out/$(basename "$i").dump" || {
			agree=no; echo "  DISAGREE: fclabel dump of $(basename "$i") differs from the ext4 image's: $(diff "$out/erofs-ext4.nolf" "$out/$(basename "$i").dump" | head -n 4 | tr '\n' '|')"; }
	done
	rm -f "$out"/*.dump "$out/erofs-ext4.nolf" "$out/agree.out" "$out/agree.err"
	if [ $agree != yes ]; then
		echo "  no figures: the results do not agree (a benchmark measuring a failure is worthless)"
		rm -f "$e4"; return
	fi
	echo "  agree: check exits $(echo $rcs | tr ' ' '/') (ext4/EROFS/lz4hc), counts alike ($(echo "$sums" | cut -d'|' -f2)), scanned $(echo $scans | tr ' ' '/') (ext4's /lost+found the difference); the dumps identical but /lost+found ($nolf paths)"
	# best of BENCH_EROFS_RUNS; each round runs each command on each image in turn
	runs=${BENCH_EROFS_RUNS:-5}
	rm -f "$out"/er.*.t
	r=0; while [ $r -lt "$runs" ]; do
		for k in e4 ep ez; do
			eval "i=\$$k"
			set -- $(measure_ms "$out/cmd.out" "$top/fclabel" check "$i" -S "$fc")
			[ "$1" = 0 ] || echo "  (check $i: exit $1)"
			echo "$2 $3" >>"$out/er.check.$k.t"
			set -- $(measure_ms /dev/null "$top/fclabel" dump "$i")
			[ "$1" = 0 ] || echo "  (dump $i: exit $1)"
			echo "$2 $3" >>"$out/er.dump.$k.t"
		done
		set -- $(measure_ms /dev/null e2fsck -fn "$e4")
		[ "$1" = 0 ] || echo "  (e2fsck -fn: exit $1)"
		echo "$2 $3" >>"$out/er.floor.e4.t"
		for k in ep ez; do
			eval "i=\$$k"
			set -- $(measure_ms /dev/null fsck.erofs "$i")
			[ "$1" = 0 ] || echo "  (fsck.erofs $i: exit $1)"
			echo "$2 $3" >>"$out/er.floor.$k.t"
			set -- $(measure_ms /dev/null dump.erofs -S "$i")
			[ "$1" = 0 ] || echo "  (dump.erofs -S $i: exit $1)"
			echo "$2 $3" >>"$out/er.stat.$k.t"
		done
		r=$((r + 1))
	done
	eb() { best <"$out/er.$1.t"; }
	emib() { echo "$(( $(sort -n -k2 "$out/er.$1.t" | tail -n 1 | cut -d' ' -f2) / 1024 ))"; }
	ex() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
	erow() { # LABEL WHAT: ext4 | EROFS (x ext4) | lz4hc (x ext4)
		printf '  %-37s: ext4 %s s | EROFS %s s (%s) | EROFS lz4hc %s s (%s)\n' "$1" \
			"$(eb "$2.e4")" "$(eb "$2.ep")" "$(ex "$(eb "$2.ep")" "$(eb "$2.e4")")" \
			"$(eb "$2.ez")" "$(ex "$(eb "$2.ez")" "$(eb "$2.e4")")"
	}
	echo "  best of $runs, warm cache; in brackets, EROFS / ext4:"
	erow "fclabel check -S refpolicy" check
	erow "fclabel dump >/dev/null" dump
	erow "floor: e2fsck -fn | fsck.erofs" floor
	printf '  %-37s: %10s | EROFS %s s (%s) | EROFS lz4hc %s s (%s)\n' "peer: dump.erofs -S (no attributes)" "" \
		"$(eb stat.ep)" "$(ex "$(eb stat.ep)" "$(eb floor.e4)")" "$(eb stat.ez)" "$(ex "$(eb stat.ez)" "$(eb floor.e4)")"
	echo "  fclabel / its format's floor: check ext4 $(ex "$(eb check.e4)" "$(eb floor.e4)"), EROFS $(ex "$(eb check.ep)" "$(eb floor.ep)"), lz4hc $(ex "$(eb check.ez)" "$(eb floor.ez)"); dump ext4 $(ex "$(eb dump.e4)" "$(eb floor.e4)"), EROFS $(ex "$(eb dump.ep)" "$(eb floor.ep)"), lz4hc $(ex "$(eb dump.ez)" "$(eb floor.ez)")"
	echo "  peak: check ext4 $(emib check.e4) MiB, EROFS $(emib check.ep) MiB, lz4hc $(emib check.ez) MiB; dump ext4 $(emib dump.e4) MiB, EROFS $(emib dump.ep) MiB, lz4hc $(emib dump.ez) MiB"
	rm -f "$e4" "$out"/er.*.t
}
erofs_section
if [ -n "${BENCH_EROFS_ONLY:-}" ]; then
	rm -f "$out/work.img"
	exit 0
fi

# BENCH_BEFORE=BIN: another fclabel (the build before a change) against this one, in this run:
# best of BENCH_RUNS (3) each, alternating, each on a fresh copy: a copy-mode label and an
# in-place one
if [ -n "${BENCH_BEFORE:-}" ]; then
	for mode in copy in-place; do
		bb="" ba=""
		for i in $(seq "${BENCH_RUNS:-3}"); do
			for who in before after; do
				bin=$top/fclabel
				[ "$who" = before ] && bin=$BENCH_BEFORE
				cp --sparse=always "$img" "$out/work.img"
				sync
				extra=""
				[ "$mode" = in-place ] && extra=--in-place
				set -- $(measure "$bin" label "$out/work.img" -S "$fc" $extra)
				[ "$1" = 0 ] || echo "  ($who, $mode: exit $1: $(tail -n 1 "$out/cmd.err"))"
				if [ "$who" = before ]; then bb="$bb $2"; else ba="$ba $2"; fi
			done
		done
		b=$(echo $bb | tr ' ' '\n' | best) a=$(echo $ba | tr ' ' '\n' | best)
		echo "before/after ($mode): $BENCH_BEFORE $b s, this build $a s: $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3fx", a / b }') of before"
	done
fi

# what crash safety costs in place: the default (each batch a transaction of the image's journal)
# against --no-crash-safety (straight to the image), and without a journal (crash order) against
# the same; best of BENCH_RUNS (3), each on a fresh copy, in this run
safety_cost() { # IMG ARGS...
	_i=$1; shift
	: >"$out/sc.t"
	r=0; while [ $r -lt "${BENCH_RUNS:-3}" ]; do
		cp --sparse=always "$_i" "$out/work.img"; sync
		m=$(measure "$top/fclabel" label "$out/work.img" -S "$fc" "$@")
		echo "$m" | awk '{ print $2 }' >>"$out/sc.t"
		r=$((r + 1))
	done
	best <"$out/sc.t"
}
j_s=$(safety_cost "$img")
u_s=$(safety_cost "$img" --no-crash-safety)
cp --sparse=always "$img" "$out/nj.img"
tune2fs -O ^has_journal "$out/nj.img" >/dev/null 2>&1
o_s=$(safety_cost "$out/nj.img")
ou_s=$(safety_cost "$out/nj.img" --no-crash-safety)
rm -f "$out/nj.img"
echo "in place, through the journal      : $j_s s; --no-crash-safety: $u_s s ($(awk -v a="$j_s" -v b="$u_s" 'BEGIN { printf "%.2fx", a / b }'))"
echo "in place, no journal (crash order) : $o_s s; --no-crash-safety: $ou_s s ($(awk -v a="$o_s" -v b="$ou_s" 'BEGIN { printf "%.2fx", a / b }'))"

# sparse_vs_raw DIR WHERE: the raw and sparse forms labeled alternately in DIR, each with and
# without --no-sync, best of BENCH_RUNS (3)
sparse_vs_raw() {
	echo "sparse form against raw, in $2 ($(findmnt -n -o FSTYPE,OPTIONS -T "$1" 2>/dev/null)):"
	for sync in "" --no-sync; do
		: >"$out/raw.t"; : >"$out/sparse.t"
		r=0; while [ $r -lt "${BENCH_RUNS:-3}" ]; do
			cp --sparse=always "$img" "$1/work.img"; cp "$out/base.simg" "$1/work.simg"; sync
			set -- "$1" $(measure "$top/fclabel" label "$1/work.img" -S "$fc" $sync)
			echo "$3 $4" >>"$out/raw.t"
			set -- "$1" $(measure "$top/fclabel" label "$1/work.simg" -S "$fc" $sync)
			echo "$3 $4" >>"$out/sparse.t"
			r=$((r + 1))
		done
		rs=$(best <"$out/raw.t") ss=$(best <"$out/sparse.t")
		echo "  label ${sync:-(synced)}: raw $(cut -d' ' -f1 "$out/raw.t" | tr '\n' ' ')s; sparse form $(cut -d' ' -f1 "$out/sparse.t" | tr '\n' ' ')s, peak $(( $(sort -n -k2 "$out/sparse.t" | tail -n 1 | cut -d' ' -f2) / 1024 )) MiB"
		echo "    sparse / raw, best of each: $ss / $rs = $(awk -v a="$ss" -v b="$rs" 'BEGIN { printf "%.2fx", a / b }') (target <= 1.3x)"
	done
	rm -f "$1/work.img" "$1/work.simg"
	echo "  (the sparse form's $(($(stat -c %s "$out/base.simg") / 1048576)) MiB file is copied beside itself in the background, patched and renamed over the original)"
}

# the same image in Android sparse form, and an image of 4 GiB declared size
if command -v img2simg >/dev/null; then
	[ "$out/base.simg" -nt "$img" ] || img2simg "$img" "$out/base.simg"
	sparse_vs_raw "$out" "the work directory"
	# On a file system mounted with discard (as this one may be: see its options above) freeing
	# the replaced sparse file waits for the device, about 85 ms for 131 MiB here. The same
	# comparison on a scratch ext4 with default options, loop-mounted, where root can:
	scratch=$out/scratch
	mkdir -p "$scratch.mnt"
	rm -f "$scratch.img"
	if [ "$(id -u)" = 0 ] && truncate -s 2G "$scratch.img" && mke2fs -q -t ext4 "$scratch.img" >/dev/null 2>&1 &&
	   mount -o loop "$scratch.img" "$scratch.mnt" 2>/dev/null; then
		sparse_vs_raw "$scratch.mnt" "a scratch ext4"
		umount "$scratch.mnt"
	else
		echo "sparse / raw on a scratch ext4: skipped (needs root and a loop mount)"
	fi
	rm -f "$scratch.img"
	if [ ! -f "$out/big.simg" ]; then
		rm -f "$out/big.raw"
		truncate -s 4G "$out/big.raw"
		mkdir -p "$out/smalltree/etc" "$out/smalltree/usr/bin"
		i=0; while [ $i -lt 2000 ]; do : >"$out/smalltree/usr/bin/f$i"; i=$((i + 1)); done
		mke2fs -q -t ext4 -d "$out/smalltree" "$out/big.raw" >/dev/null 2>&1 && img2simg "$out/big.raw" "$out/big.simg"
		rm -rf "$out/big.raw" "$out/smalltree"
	fi
	cp "$out/big.simg" "$out/work.simg"
	set -- $(measure "$top/fclabel" label "$out/work.simg" -S "$fc")
	echo "fclabel label, 4 GiB declared sparse image ($(stat -c %s "$out/big.simg") bytes on disk): $2 s, peak $(($3 / 1024)) MiB (exit $1)"
	rm -f "$out/work.simg"
else
	echo "sparse: skipped (img2simg not installed: android-sdk-libsparse-utils)"
fi

# 128-byte inodes: written in place, and as a labeled copy renamed over the image (the default),
# each round beside the same tree with 256-byte inodes (labels in the inode, written in place)
: >"$out/inplace.t"; : >"$out/atomic.t"; : >"$out/i256.t"; : >"$out/claims.t"
r=0; while [ $r -lt "${BENCH_RUNS:-3}" ]; do
	cp --sparse=always "$img" "$out/work.img"; sync
	set -- $(measure "$top/fclabel" label "$out/work.img" -S "$fc")
	echo "$2 $3" >>"$out/i256.t"
	cp --sparse=always "$img128" "$out/work.img"; sync
	set -- $(measure "$top/fclabel" label "$out/work.img" -S "$fc" --in-place)
	echo "$2 $3" >>"$out/inplace.t"
	cp --sparse=always "$img128" "$out/work.img"; sync
	set -- $(measure "$top/fclabel" label "$out/work.img" -S "$fc")
	echo "$2 $3" >>"$out/atomic.t"
	# the block claims' share, from the report of the same run again (the report's 200,000
	# events cost time of their own: that run is not the one timed)
	cp --sparse=always "$img128" "$out/work.img"
	"$top/fclabel" label "$out/work.img" -S "$fc" --json "$out/atomic.json" >/dev/null 2>&1
	claims=$(sed -n 's/.*"claims_seconds": \([0-9.]*\).*/\1/p' "$out/atomic.json")
	echo "$claims $2" >>"$out/claims.t"
	r=$((r + 1))
done
ip=$(best <"$out/inplace.t") at=$(best <"$out/atomic.t") i2=$(best <"$out/i256.t")
peak() { echo "$(( $(sort -n -k2 "$1" | tail -n 1 | cut -d' ' -f2) / 1024 )) MiB"; }
echo "128-byte inodes (labels in blocks): --in-place $(cut -d' ' -f1 "$out/inplace.t" | tr '\n' ' ')s; renamed copy (default) $(cut -d' ' -f1 "$out/atomic.t" | tr '\n' ' ')s; 256-byte inodes $(cut -d' ' -f1 "$out/i256.t" | tr '\n' ' ')s"
echo "  peak: --in-place $(peak "$out/inplace.t"), renamed copy $(peak "$out/atomic.t"), 256-byte $(peak "$out/i256.t")"
echo "  renamed copy / 256-byte, best of each: $at / $i2 = $(awk -v a="$at" -v b="$i2" 'BEGIN { printf "%.2fx", a / b }') (target <= 1.3x); --in-place / 256-byte: $(awk -v a="$ip" -v b="$i2" 'BEGIN { printf "%.2fx", a / b }') (through the journal: every label a block of its own or a shared one)"
echo "  copy / in place, best of each: $at / $ip = $(awk -v a="$at" -v b="$ip" 'BEGIN { printf "%.2fx", a / b }') ($(($(du -k "$img128" | cut -f1) / 1024)) MiB allocated, copied beside itself)"
echo "  (the work directory's file system: $(findmnt -n -o FSTYPE,OPTIONS -T "$out" 2>/dev/null))"
# the look at the block claims before the first write (labeler/claims.c), inside those runs
echo "  block claims checked before the first write: $(awk '{ if (NR > 1) printf ", "; printf "%.3f s of %s s (%.1f%%)", $1, $2, 100 * $1 / $2 }' "$out/claims.t")"

# setfiles on a loop-mounted copy
mnt=$out/mnt
mkdir -p "$mnt"
cp --sparse=always "$img" "$out/sf.img"
if [ "$(id -u)" = 0 ] && command -v setfiles >/dev/null && mount -o loop "$out/sf.img" "$mnt" 2>/dev/null; then
	umount "$mnt"
	newlib=$(bash "$top/../shared/tools/build-libselinux-new" 2>/dev/null | tail -n 1)
	for which in new old; do
		lib=
		if [ $which = new ]; then
			[ -f "$newlib/libselinux.so.1" ] || { echo "setfiles (new libselinux): not built"; continue; }
			lib=$newlib
		fi
		[ $which = old ] && [ -z "${BENCH_SETFILES_OLD:-}" ] && {
			echo "setfiles (libselinux 3.4): skipped (about 100 s; BENCH_SETFILES_OLD=1 to run it)"
			continue
		}
		cp --sparse=always "$img" "$out/sf.img"
		mount -o loop "$out/sf.img" "$mnt" || continue
		set -- $(LD_LIBRARY_PATH=$lib measure setfiles -F -r "$mnt" "$fc" "$mnt")
		umount "$mnt"
		echo "setfiles -F ($which libselinux): $2 s, peak $(($3 / 1024)) MiB (exit $1)"
		echo "fclabel vs setfiles ($which): $(awk -v a="$2" -v b="$fl_s" 'BEGIN { printf "%.1fx faster", a / b }')"
		rm -f "$out/sf.img"
	done
else
	echo "setfiles: skipped (needs root, setfiles and a working loop mount)"
fi
rm -f "$out/work.img"
