# A report on every exit (issue 31): `--json FILE` is written whatever ends the run once the
# option is read, to a temporary file renamed over FILE, and an older report at FILE never
# outlives a new run. Each failing case starts with an old report at FILE (a good run's:
# "written", exit 0) and asserts the exit status; a report at FILE valid against the schema;
# that it is this run's (summary.failure.stage, result and exit_status; the old one is gone);
# what failure.message says; no temporary file left beside it. The cases:
#   - bad arguments after --json: an unknown option (target null), a bad --lock value, two
#     images, an image-only option given a directory (target known: a tree);
#   - a file_contexts that does not exist; an incomplete --android-root (no plat);
#   - refused images: the superblock says errors; locked by another process (--lock=nonblock);
#   - a typo in -a (exit 1, "no spec matches");
#   - I/O errors (FCLABEL_FAULT=read:N): at the open, and in the walk;
#   - SIGINT while waiting for the image's lock (FILE absent meanwhile, its temporary file
#     beside it), while waiting for a partition image's lock in --android-root's load, and in
#     the walk (tests/killshim.c); SIGKILL: no old report is left at FILE;
#   - check and relabel stopping early say not-written too;
# then: --json - and --json /dev/stdout are streams (/dev/stdout stays what it is), a symlink
# is followed (the link stays); relabel --verify's findings are verify-differs and verify-error
# events; explain without -m does not say "(mode 00)"; fclabel-label(1)'s /mnt/sysimage
# examples run as written.
. "$TOP/tests/lib.sh"
command -v mke2fs >/dev/null 2>&1 && command -v debugfs >/dev/null 2>&1 ||
	skip "e2fsprogs (mke2fs, debugfs) is not installed"
[ -x "$FCLABEL" ] || skip "fclabel is not built ($FCLABEL): run make"
cd "$OUT" || exit 1
FC=$TOP/fixtures/demo/file_contexts
mkdir tree
sh "$TOP/tests/mktree.sh" "$TOP/fixtures/demo/tree" tree
mke2fs -q -F -t ext4 -d tree base.img 8M >/dev/null 2>&1 || { echo "mke2fs -d failed"; exit 1; }
grep -v '^/\.\*' "$FC" >fcn # no catch-all: a typo in -a matches nothing
sed 's/shell_exec/sh2_exec/' "$FC" >fc2

# the old report: a good run's
cp base.img ok.img
"$FCLABEL" label ok.img -a /system -S "$FC" --json old.json >/dev/null 2>&1
expect_eq "the old report says written, exit 0" \
	"$(python3 -c 'import json; s = json.load(open("old.json"))["summary"]; print(s["result"], s["exit_status"])')" \
	"written 0"

# field FILE KEY...: the report's values, one a line (stage and message: summary.failure's, "-"
# when there is none; target, target_kind, command: top-level; the rest: summary's)
field() {
	python3 - "$@" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["summary"]
f = s.get("failure") or {}
for k in sys.argv[2:]:
    if k in ("stage", "message"):
        print(f.get(k, "-"))
    elif k in ("target", "target_kind", "command", "mode"):
        print(r[k])
    elif k == "kinds":
        print(" ".join(e["event"] for e in r["events"]))
    else:
        print(s[k])
EOF
}

# check_report NAME RC WANT_RC STAGE MESSAGE_GLOB [RESULT INTERRUPTED]: what NAME.json must say
check_report() {
	_n=$1 _rc=$2 _want=$3 _stage=$4 _msg=$5 _res=${6:-not-written} _int=${7:-False}
	expect_eq "$_n: exit status" "$_rc" "$_want"
	expect_match "$_n: the report is valid against the schema" "$(reports_valid "$_n.json")" \
		"1 reports, 0 bad"
	expect_eq "$_n: the report is this run's (stage, result, interrupted, exit status)" \
		"$(field "$_n.json" stage result interrupted exit_status 2>&1 | tr '\n' ' ')" \
		"$_stage $_res $_int $_want "
	expect_match "$_n: failure.message says why" "$(field "$_n.json" message 2>&1)" "$_msg"
	expect_eq "$_n: no temporary file left beside it" "$(ls -A | grep -c '^\.fclabel-report-')" 0
}

# fails NAME WANT_RC STAGE MESSAGE_GLOB CMD...: CMD (whose --json names NAME.json) run with the
# old report at NAME.json
fails() {
	_n=$1 _w=$2 _s=$3 _m=$4
	shift 4
	cp old.json "$_n.json"
	"$@" >"$_n.out" 2>"$_n.err"
	check_report "$_n" $? "$_w" "$_s" "$_m"
}

# ---- bad arguments once --json FILE is read --------------------------------------------------
cp base.img t.img
fails bogus 2 arguments "unrecognized option '--bogus'" \
	"$FCLABEL" label t.img -S "$FC" --json bogus.json --bogus
expect_eq "bogus: the target, not yet read, is null" "$(field bogus.json target target_kind | tr '\n' ' ')" "None None "
fails lockval 2 arguments "--lock=maybe: want yes, no or nonblock" \
	"$FCLABEL" check t.img -S "$FC" --json lockval.json --lock=maybe
expect_eq "lockval: a check's report" "$(field lockval.json command mode | tr '\n' ' ')" "check check "
fails twoimages 2 arguments "give exactly one IMAGE" \
	"$FCLABEL" relabel t.img base.img --from "$FC" --to fc2 --json twoimages.json
fails dirout 2 arguments "*is a directory: -o applies to images only" \
	"$FCLABEL" label tree -a / -S "$FC" -o x.img --json dirout.json
expect_eq "dirout: the target is named, a tree" "$(field dirout.json target target_kind | tr '\n' ' ')" "tree tree "
expect_match "bogus: the usage still goes to stderr" "$(cat bogus.err)" "*usage: fclabel label*"

# ---- missing inputs --------------------------------------------------------------------------
fails nofc 2 policy "*no-such-fc*No such file or directory*" \
	"$FCLABEL" label t.img -a /system -S "$OUT/no-such-fc" --json nofc.json
mkdir emptyroot
fails noplat 2 policy "no plat file_contexts: looked for*nothing was done*" \
	"$FCLABEL" label t.img -a /system --android-root emptyroot --json noplat.json

# ---- refused images --------------------------------------------------------------------------
cp base.img errors.img
debugfs -w -R "ssv state 2" errors.img >/dev/null 2>&1
cp errors.img errors.orig
fails errors 2 target "*errors.img*has errors*refusing to write*" \
	"$FCLABEL" label errors.img -a /system -S "$FC" --json errors.json
expect_eq "errors: the image is as it was" "$(cmp -s errors.img errors.orig && echo same)" same
# hold LOCKFILE FILE: another process takes an exclusive BSD lock on FILE until killed ($holder)
hold() {
	rm -f "$1"
	python3 -c 'import fcntl, sys, time
f = open(sys.argv[1]); fcntl.flock(f, fcntl.LOCK_EX); open(sys.argv[2], "w").close(); time.sleep(120)' \
		"$2" "$1" &
	holder=$!
	_i=0
	while [ ! -e "$1" ] && [ $_i -lt 200 ]; do sleep 0.05; _i=$((_i + 1)); done
}
# waitfor FILE GLOB: until FILE's text matches (10 s at most)
waitfor() {
	_i=0
	while [ $_i -lt 200 ]; do
		case $(cat "$1" 2>/dev/null) in $2) return 0 ;; esac
		sleep 0.05
		_i=$((_i + 1))
	done
	return 1
}
cp base.img locked.img
hold held1 locked.img
fails locked 2 target "locked.img is locked by another process*nothing done" \
	"$FCLABEL" label locked.img -a /system -S "$FC" --lock=nonblock --json locked.json

# ---- a typo in -a ----------------------------------------------------------------------------
fails typo 1 mount-point "no spec matches /sytem (t.img's root, given by -a); the specs cover /system*; nothing done" \
	"$FCLABEL" label t.img -a /sytem -S fcn --json typo.json
fails typocheck 1 mount-point "no spec matches /sytem*" \
	"$FCLABEL" check t.img -a /sytem -S fcn --json typocheck.json

# ---- I/O errors ------------------------------------------------------------------------------
cp base.img io.img
fails ioopen 2 target "*io.img*Input/output error*" \
	env FCLABEL_FAULT=read:1 "$FCLABEL" label io.img -a /system -S "$FC" --json ioopen.json
# the first read that fails in the walk (after the open's)
n=2 walked=
while [ $n -le 40 ]; do
	cp base.img io.img
	cp old.json iowalk.json
	FCLABEL_FAULT=read:$n "$FCLABEL" label io.img -a /system -S "$FC" --json iowalk.json >iowalk.out 2>iowalk.err
	rc=$?
	if [ "$(field iowalk.json stage 2>/dev/null)" = walk ]; then walked=$n; break; fi
	n=$((n + 1))
done
expect_match "iowalk: some read fails in the walk (read:2 to read:40)" "$walked" "[0-9]*"
check_report iowalk "$rc" 2 walk "*read of block*Input/output error; stopped"

# ---- SIGINT and SIGKILL ----------------------------------------------------------------------
# while waiting for the image's lock: FILE is gone already, its temporary file beside it
cp old.json intlock.json
"$FCLABEL" label locked.img -a /system -S "$FC" --json intlock.json >intlock.out 2>intlock.err &
pid=$!
if waitfor intlock.err "*waiting for the lock on locked.img*"; then
	expect_eq "intlock: while the run waits, FILE is absent (the old report removed)" \
		"$([ -e intlock.json ] && echo there || echo absent)" absent
	expect_eq "intlock: ... and its temporary file is beside it" \
		"$(ls -A | grep -c '^\.fclabel-report-')" 1
	kill -INT $pid
	wait $pid
	check_report intlock $? 130 target "*interrupted while waiting for its lock; nothing done" \
		not-written True
else
	bad "intlock: fclabel did not wait for the lock: $(cat intlock.err)"
	kill $pid
	wait $pid
fi
# SIGKILL (no report can be written): no older report is left at FILE to be taken for this run's
cp old.json kill9.json
"$FCLABEL" label locked.img -a /system -S "$FC" --json kill9.json >kill9.out 2>kill9.err &
pid=$!
waitfor kill9.err "*waiting for the lock*" || bad "kill9: fclabel did not wait for the lock"
kill -KILL $pid
wait $pid 2>/dev/null
expect_eq "kill9: after SIGKILL, no old report at FILE" "$([ -e kill9.json ] && echo there || echo absent)" absent
rm -f .fclabel-report-*
kill $holder 2>/dev/null
wait $holder 2>/dev/null
# while waiting for a partition image's lock, loading the device's policy
mkdir aroot
cp "$FC" aroot/file_contexts
cp base.img part.img
hold held2 part.img
cp old.json intpol.json
"$FCLABEL" label t.img -a /system --android-root aroot --partition system=part.img -n \
	--json intpol.json >intpol.out 2>intpol.err &
pid=$!
if waitfor intpol.err "*waiting for the lock on part.img*"; then
	kill -INT $pid
	wait $pid
	check_report intpol $? 130 policy "*part.img: interrupted while waiting for its lock*" \
		not-written True
else
	bad "intpol: fclabel did not wait for the partition image's lock: $(cat intpol.err)"
	kill $pid
	wait $pid
fi
kill $holder 2>/dev/null
wait $holder 2>/dev/null
# in the walk: SIGINT after the first write in place (each block a commit)
if cc -shared -fPIC -O2 -o killshim.so "$TOP/tests/killshim.c" -ldl 2>/dev/null; then
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
	cp base.img walkint.img
	cp old.json intwalk.json
	FCLABEL_COMMIT_BLOCKS=1 KILL_AFTER_WRITES=1 KILL_SIGNAL=2 LD_PRELOAD=$OUT/killshim.so \
		"$FCLABEL" label walkint.img -a /system -S "$FC" --in-place --json intwalk.json \
		>intwalk.out 2>intwalk.err
	check_report intwalk $? 130 walk "interrupted by SIGINT after * of about * files" \
		partly-written True
else
	echo "no C compiler for the signal shim: SIGINT in the walk left out"
fi

# ---- streams, symlinks -----------------------------------------------------------------------
"$FCLABEL" label t.img -a /system -S "$OUT/no-such-fc" --json - >dash.out 2>dash.err
expect_eq "--json -: exit 2" "$?" 2
cp dash.out dash.json
expect_match "--json -: the report on stdout is valid" "$(reports_valid dash.json)" "1 reports, 0 bad"
expect_eq "--json -: it says where the run stopped" "$(field dash.json stage)" policy
# (standard output appending to a file: a rename over the file would lose what it held)
cp base.img ds.img
echo "a line before" >devstdout.all
"$FCLABEL" check ds.img -a /system -S "$FC" --json /dev/stdout >>devstdout.all 2>devstdout.err
expect_eq "--json /dev/stdout: written as a stream (what the file held stays)" \
	"$(head -n 1 devstdout.all)" "a line before"
tail -n +2 devstdout.all >devstdout.json
expect_match "--json /dev/stdout: the report follows it" "$(reports_valid devstdout.json)" \
	"1 reports, 0 bad"
expect_eq "--json /dev/stdout: it is still a symlink" "$([ -L /dev/stdout ] && echo link)" link
cp old.json real.json
ln -s real.json link.json
"$FCLABEL" label t.img -a /sytem -S fcn --json link.json >link.out 2>link.err
expect_eq "--json SYMLINK: the link stays" "$([ -L link.json ] && readlink link.json)" real.json
expect_eq "--json SYMLINK: the file it names is the new report" "$(field real.json stage)" mount-point

# ---- relabel --verify: what it finds wrong, as events ------------------------------------------
cp base.img v.img
"$FCLABEL" label v.img -a /system -S "$FC" >/dev/null 2>&1
# (the old and the new policy said to be the same: relabel enters nothing, the check finds all)
"$FCLABEL" relabel v.img -a /system --from fc2 --to fc2 --verify --json verify.json \
	>verify.out 2>verify.err
expect_eq "verify: exit 1" "$?" 1
expect_match "verify: the report is valid" "$(reports_valid verify.json)" "1 reports, 0 bad"
expect_eq "verify: the difference is a verify-differs event" "$(field verify.json kinds)" "verify-differs"
expect_eq "verify: ... naming the file, its label and the one wanted" \
	"$(python3 -c 'import json; e = json.load(open("verify.json"))["events"][0]; print(e["path"], e["has"], e["wants"], e["line"])')" \
	"/system/bin/sh u:object_r:shell_exec:s0 u:object_r:sh2_exec:s0 5"
# damage the relabel does not reach: the check finds it
cp base.img v.img
"$FCLABEL" label v.img -a /system -S "$FC" >/dev/null 2>&1
debugfs -w -R "sif /etc/selinux/plat_file_contexts mode 0170644" v.img >/dev/null 2>&1
"$FCLABEL" relabel v.img -a /system --from "$FC" --to fc2 --verify --json verify2.json \
	>verify2.out 2>verify2.err
expect_eq "verify2: exit 1" "$?" 1
expect_match "verify2: the report is valid" "$(reports_valid verify2.json)" "1 reports, 0 bad"
expect_eq "verify2: the relabel's change, then the check's finding" "$(field verify2.json kinds)" \
	"changed verify-error"
expect_match "verify2: stderr says some files could not be checked" "$(cat verify2.err)" \
	"*--verify: 0 file(s) differ from a full label; some files could not be checked*"

# ---- explain without -m ------------------------------------------------------------------------
"$FCLABEL" explain -S "$FC" /system/bin/sh >explain.out 2>&1
expect_eq "explain without -m: the header says any file type" "$(head -n 1 explain.out)" \
	"/system/bin/sh (mode 0: any file type):"
expect_eq "explain without -m: no (mode 00)" "$(grep -c '(mode 00)' explain.out)" 0
"$FCLABEL" explain -S "$FC" -m f /system/bin/sh >explainf.out 2>&1
expect_eq "explain -m f: the mode" "$(head -n 1 explainf.out)" "/system/bin/sh (mode 0100000):"

# ---- fclabel-label(1)'s /mnt/sysimage examples, as written --------------------------------------
# (the page's .EX block after "mounted at /mnt/sysimage", its continuation lines joined, run with
# /mnt/sysimage being a tree of ours)
awk '/^\.I \/mnt\/sysimage$/ { want = 1 } want && /^\.EX$/ { on = 1; next } on && /^\.EE$/ { exit }
	on { print }' "$TOP/man/fclabel-label.1" | sed 's/\\-/-/g; s/\\e$/\\/' >sysimage.sh
expect_eq "the /mnt/sysimage examples: two commands" "$(grep -c '^fclabel ' sysimage.sh)" 2
mkdir -p sysimage
probe=sysimage
: >sysimage/probe
if ! setfattr -n security.selinux -v system_u:object_r:etc_t:s0 sysimage/probe 2>/dev/null; then
	rm -f sysimage/probe
	mount -t tmpfs tmpfs sysimage 2>/dev/null && probe=mounted
	: >sysimage/probe
	setfattr -n security.selinux -v system_u:object_r:etc_t:s0 sysimage/probe 2>/dev/null || probe=
fi
if [ -n "$probe" ]; then
	rm -f sysimage/probe
	mkdir -p sysimage/etc/selinux/default/contexts/files sysimage/bin sysimage/home/u
	: >sysimage/bin/sh
	printf '%s\n' '/.*	system_u:object_r:default_t:s0' '/etc(/.*)?	system_u:object_r:etc_t:s0' \
		'/bin(/.*)?	system_u:object_r:bin_t:s0' '/home(/.*)?	system_u:object_r:home_t:s0' \
		>sysimage/etc/selinux/default/contexts/files/file_contexts
	sed "s|/mnt/sysimage|$OUT/sysimage|g; s|^fclabel |$FCLABEL |" sysimage.sh >sysimage.run
	sh -e sysimage.run >sysimage.out 2>sysimage.err
	expect_eq "the /mnt/sysimage examples run as written (label, then check: exit 0)" "$?" 0
	expect_eq "... and /bin/sh is labeled as the root's /bin/sh" \
		"$(getfattr --only-values -n security.selinux sysimage/bin/sh 2>/dev/null | tr -d '\0')" \
		"system_u:object_r:bin_t:s0"
	[ "$probe" = mounted ] && umount sysimage
else
	echo "security.selinux cannot be set here (nor on a tmpfs): the /mnt/sysimage examples left out"
fi
finish
