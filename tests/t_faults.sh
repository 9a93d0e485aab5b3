# Nothing reported that is not on disk (issue 24), tested as SQLite tests itself: FCLABEL_FAULT
# fails the Nth I/O of a kind (the image channel's reads, writes and flushes; the copy writer's
# own reads, writes, syncs and renames), and a walk over N covers every I/O of a label, a
# relabel and a sparse image's label. Each run either completes (exit 0, the result byte for
# byte) or leaves the original byte for byte (exit 2), and its JSON report is valid and says
# which. Then: -o naming a folder, a full file system, a read-only target, a rename over a
# folder, and SIGINT/SIGTERM.
. "$TOP/tests/lib.sh"
cd "$OUT" || exit 1
for t in mke2fs debugfs e2fsck python3; do command -v $t >/dev/null || skip "$t is not installed"; done
# the walk syncs hundreds of times: on a tmpfs when there is one (a sync there costs nothing)
W=$OUT
if [ -d /dev/shm ] && W=$(mktemp -d /dev/shm/fclabel-faults.XXXXXX 2>/dev/null); then
	[ -n "${FC_KEEP:-}" ] || trap 'rm -rf "$W"' EXIT
	cd "$W" || exit 1
else
	W=$OUT
fi

mkdir -p tree/a tree/b tree/c
for i in 1 2 3 4 5 6 7 8; do echo "$i" >tree/a/f$i; echo "$i" >tree/b/g$i; ln -s f$i tree/c/l$i; done
printf '/.*\tsystem_u:object_r:default_t:s0\n/a(/.*)?\tsystem_u:object_r:a_t:s0\n/b(/.*)?\tsystem_u:object_r:b_t:s0\n' >fc
cp fc fc2
printf '/b/g[1-4]\tsystem_u:object_r:b2_t:s0\n/c(/.*)?\tsystem_u:object_r:c_t:s0\n' >>fc2
export SOURCE_DATE_EPOCH=1700000000
mke2fs -q -F -t ext4 -I 256 -d tree raw.img 8M >/dev/null 2>&1 || { bad "mke2fs"; finish; }
mke2fs -q -F -t ext4 -I 128 -d tree raw128.img 8M >/dev/null 2>&1 || { bad "mke2fs -I 128"; finish; }
"$FCLABEL" label raw.img -S fc -o labeled.img >/dev/null 2>&1 || bad "labeled.img"
have_simg=no
command -v img2simg >/dev/null && img2simg raw.img sparse.simg 4096 >/dev/null 2>&1 && have_simg=yes

injected=0 lost=0 jsons=""
# walk SCENARIO ORIG OUTPUT ARGS...: the reference result of fclabel ARGS on a copy of ORIG (at
# OUTPUT: the image itself, or -o's file), then one run per I/O with that I/O failed
walk() {
	sc=$1 orig=$2 output=$3
	shift 3
	cp "$orig" work.img
	rm -f out.img
	FCLABEL_FAULT=count "$FCLABEL" "$@" >/dev/null 2>"$sc.count"
	rc=$?
	expect_eq "$sc: the run without a fault exits 0" "$rc" 0
	cp "$output" "$sc.ref"
	counts=$(sed -n 's/^fclabel: I\/O counts: //p' "$sc.count")
	expect_match "$sc: I/O counted" "$counts" "read=[1-9]*"
	for kv in $counts; do
		kind=${kv%%=*} n=${kv#*=} i=1
		while [ "$i" -le "$n" ]; do
			cp "$orig" work.img
			rm -f out.img
			j=$sc.$kind.$i.json
			FCLABEL_FAULT=$kind:$i "$FCLABEL" "$@" --json "$j" >run.out 2>run.err
			rc=$?
			jsons="$jsons $j:$rc"
			fired=$(grep -c "FCLABEL_FAULT: failing $kind #$i" run.err)
			[ "$fired" = 1 ] && injected=$((injected + 1))
			what=""
			if [ "$fired" != 1 ]; then
				# (the background copy's share of the I/O varies from run to run: this one
				# made fewer than N of this kind)
				[ $rc = 0 ] && cmp -s "$output" "$sc.ref" ||
					what="no fault fired, and exit $rc or the result is not the reference"
			elif [ $rc = 0 ]; then
				# a failure the run recovered from (the background copy, done again)
				cmp -s "$output" "$sc.ref" || what="exit 0 but the result is not the reference"
			elif [ $rc = 2 ]; then
				if [ "$output" = work.img ] && cmp -s work.img "$orig"; then :
				elif [ "$output" = out.img ] && [ ! -e out.img ] && cmp -s work.img "$orig"; then :
				elif cmp -s "$output" "$sc.ref" && grep -q 'the new image is in place, but syncing its folder' run.err; then :
				else what="exit 2 and the original is not as it was"; fi
				grep -q ', changed [1-9]' run.out && what="$what; the summary says changed"
			else
				what="exit $rc"
			fi
			if [ -n "$what" ]; then
				lost=$((lost + 1))
				bad "$sc: FCLABEL_FAULT=$kind:$i: $what ($(grep -v scanned run.err | head -n 2 | tr '\n' '|'))"
			fi
			i=$((i + 1))
		done
	done
}

walk label raw.img work.img label work.img -S fc --atomic
walk relabel labeled.img work.img relabel work.img --from fc --to fc2 --atomic
walk label128 raw128.img work.img label work.img -S fc
walk output raw.img out.img label work.img -S fc2 -o out.img
if [ $have_simg = yes ]; then
	walk sparse sparse.simg work.img label work.img -S fc
else
	echo "img2simg (android-sdk-libsparse-utils) is not installed: the sparse walk skipped"
fi
# every report valid JSON, saying what became of the image and the same exit status
python3 - $jsons >json.check <<'EOF'
import json, sys
bad = 0
for arg in sys.argv[1:]:
    path, rc = arg.rsplit(":", 1)
    try:
        r = json.load(open(path))["summary"]
    except Exception as e:
        print(f"{path}: not valid JSON: {e}"); bad += 1; continue
    want = "written" if rc == "0" else "not-written"
    if r.get("result") != want or r.get("exit_status") != int(rc):
        print(f"{path}: result {r.get('result')} exit_status {r.get('exit_status')}, want {want} {rc}"); bad += 1
print(f"{len(sys.argv) - 1} reports, {bad} bad")
EOF
expect_match "every report is valid JSON and says what became of the image" "$(tail -n 1 json.check)" "* 0 bad"
# shellcheck disable=SC2046
expect_match "every report valid against the schema" "$(reports_valid $(for j in $jsons; do echo "${j%:*}"; done))" "* reports, 0 bad"
[ "$(tail -n 1 json.check)" = "${jsons:+x}" ] || head -n 5 json.check
echo "injected failures: $injected, lost: $lost"
expect_eq "no injected failure lost" "$lost" 0

# ---- in place: a failure never exits 0, and a run without it finishes the job ----
cp raw.img inplace.img
FCLABEL_FAULT=count "$FCLABEL" label inplace.img -S fc --in-place >/dev/null 2>inplace.count
cp inplace.img inplace.ref
wrong=0 tried=0
for kv in $(sed -n 's/^fclabel: I\/O counts: //p' inplace.count); do
	kind=${kv%%=*} n=${kv#*=} i=1
	while [ "$i" -le "$n" ]; do
		cp raw.img inplace.img
		FCLABEL_FAULT=$kind:$i "$FCLABEL" label inplace.img -S fc --in-place >run.out 2>run.err
		rc=$?
		tried=$((tried + 1))
		if grep -q "FCLABEL_FAULT: failing" run.err; then
			[ $rc = 0 ] && { wrong=$((wrong + 1)); bad "in place: $kind:$i exits 0 after a failure"; }
			"$FCLABEL" label inplace.img -S fc --in-place >/dev/null 2>&1
			"$FCLABEL" check inplace.img -S fc >/dev/null 2>&1 ||
				{ wrong=$((wrong + 1)); bad "in place: $kind:$i: a second run does not finish the job"; }
		fi
		i=$((i + 1))
	done
done
expect_eq "in place: $tried failed I/Os, none exits 0, each finished by a second run" "$wrong" 0

# ---- -o naming a folder; a rename over a folder ----
mkdir -p outdir
cp raw.img work.img
"$FCLABEL" label work.img -S fc -o outdir >o.out 2>o.err
expect_eq "-o FOLDER: exit 0" "$?" 0
expect_eq "-o FOLDER: written into it under the image's name" "$(cmp -s outdir/work.img labeled.img && echo same)" same
mkdir -p trap/work.img
"$FCLABEL" label work.img -S fc -o trap >o.out 2>o.err
expect_eq "-o FOLDER whose entry is a folder: refused, exit 2" "$?" 2
expect_match "-o FOLDER whose entry is a folder: says so" "$(cat o.err)" "*-o trap/work.img: it exists and is not a regular file*"
expect_eq "-o FOLDER whose entry is a folder: nothing left behind" "$(ls -A trap)" "work.img"

# ---- a full file system, a read-only one (a tmpfs in a mount namespace of our own) ----
if command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
	cp raw.img full.img
	size=$(du -k full.img | cut -f1)
	cat >fs.sh <<EOF
set -u
cd "$W"
mkdir -p mnt
mount -t tmpfs -o size=$((size + 2048))k none mnt || exit 77
for filler in 0 512 1024 \$(seq 1600 16 2032) 2040; do
	rm -f mnt/*
	cp --sparse=always full.img mnt/img
	[ \$filler = 0 ] || head -c \$((filler * 1024)) /dev/zero >mnt/filler 2>/dev/null
	"$FCLABEL" label mnt/img -S fc --atomic >full.\$filler.out 2>full.\$filler.err
	rc=\$?
	if [ \$rc = 0 ]; then cmp -s mnt/img labeled.img && r=written || r=WRONG
	else cmp -s mnt/img full.img && r=refused-or-failed || r=CHANGED; fi
	echo "\$filler \$rc \$r"
done
rm -f mnt/*
cp --sparse=always full.img mnt/img
mount -o remount,ro mnt
"$FCLABEL" label mnt/img -S fc >ro.out 2>ro.err
echo "ro \$? \$(cmp -s mnt/img full.img && echo same)"
"$FCLABEL" label mnt/img -S fc --in-place >ro2.out 2>ro2.err
echo "ro-inplace \$? \$(cmp -s mnt/img full.img && echo same)"
umount mnt
EOF
	unshare -m sh fs.sh >fs.log 2>&1
	frc=$?
	if [ $frc = 77 ]; then
		echo "cannot mount a tmpfs here: the full and read-only file system cases skipped"
	else
		expect_eq "full file system: never a wrong or changed image" "$(grep -c -e WRONG -e CHANGED fs.log)" 0
		expect_match "full file system: the fullest refused or failed, exit 2" "$(grep '^2040 ' fs.log)" "2040 2 refused-or-failed"
		expect_match "full file system: the emptiest written" "$(grep '^0 ' fs.log)" "0 0 written"
		expect_match "full file system: says why" "$(cat full.2040.err)" "*mnt/img*"
		echo "full file system: $(grep -c ' 2 ' fs.log) refused or failed, of which $(grep -L 'cannot make the labeled copy' full.*.err | xargs grep -l 'mnt' 2>/dev/null | wc -l) failed while writing"
		expect_match "read-only: refused, unchanged" "$(grep '^ro ' fs.log)" "ro 2 same"
		expect_match "read-only: says which file" "$(cat ro.err)" "*mnt/img*"
		expect_match "read-only in place: refused, unchanged" "$(grep '^ro-inplace ' fs.log)" "ro-inplace 2 same"
		cat fs.log
	fi
else
	echo "no mount namespace here (unshare -m): the full and read-only file system cases skipped"
fi

# ---- SIGINT and SIGTERM: the summary and the report completed, then death by the signal ----
if cc -shared -fPIC -O2 -o killshim.so "$TOP/tests/killshim.c" -ldl 2>/dev/null; then
	big=bigtree
	mkdir -p $big
	# (enough inode table blocks that a copy's writes pass its write-back cache during the walk)
	for d in $(seq 1 16); do mkdir -p $big/d$d; for f in $(seq 1 150); do : >$big/d$d/f$f; done; done
	mke2fs -q -F -t ext4 -I 128 -N 4096 -d $big int.img 16M >/dev/null 2>&1
	cp int.img int.orig
	# in place, 128-byte inodes, committed every 4 blocks (FCLABEL_COMMIT_BLOCKS): SIGINT
	# after the 100th write comes in the middle of the walk
	# (under the sanitized runs: ASan lets a preloaded library come before its runtime)
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
	FCLABEL_COMMIT_BLOCKS=4 KILL_AFTER_WRITES=100 KILL_SIGNAL=2 LD_PRELOAD=$W/killshim.so \
		"$FCLABEL" label int.img -S fc --in-place --json int.json >int.out 2>int.err
	expect_eq "SIGINT in place: dies by SIGINT (130)" "$?" 130
	expect_match "SIGINT in place: says what was done and what is left" "$(cat int.out int.err)" \
		"*interrupted after * of about * files; the * label(s) written before it stay (each whole); run again to finish*"
	expect_eq "SIGINT in place: the report is valid, says so" \
		"$(python3 -c 'import json; r = json.load(open("int.json"))["summary"]; print(r["interrupted"], r["result"], r["exit_status"])')" \
		"True partly-written 130"
	expect_eq "SIGINT in place: e2fsck -fn clean" "$(e2fsck -fn int.img >/dev/null 2>&1; echo $?)" 0
	"$FCLABEL" label int.img -S fc --in-place >/dev/null 2>&1
	"$FCLABEL" check int.img -S fc >/dev/null 2>&1
	expect_eq "SIGINT in place: run again, it is finished" "$?" 0
	cp int.orig int.img
	KILL_AFTER_WRITES=20 KILL_SIGNAL=15 LD_PRELOAD=$W/killshim.so \
		"$FCLABEL" label int.img -S fc --json int2.json >int2.out 2>int2.err
	expect_eq "SIGTERM on a copy: dies by SIGTERM (143)" "$?" 143
	expect_eq "SIGTERM on a copy: the image is as it was" "$(cmp -s int.img int.orig && echo same)" same
	expect_match "SIGTERM on a copy: says nothing was written" "$(cat int2.out int2.err)" \
		"*interrupted after * of about * files; nothing was written: the image is as it was*"
	expect_match "SIGINT and SIGTERM: the reports valid against the schema" "$(reports_valid int.json int2.json)" "2 reports, 0 bad"
	expect_eq "SIGTERM on a copy: the report is valid, says so" \
		"$(python3 -c 'import json; r = json.load(open("int2.json"))["summary"]; print(r["interrupted"], r["result"], r["exit_status"])')" \
		"True not-written 143"
else
	echo "no C compiler for the signal shim: the SIGINT/SIGTERM cases skipped"
fi
finish
