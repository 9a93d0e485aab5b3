# fclabel label|check|relabel on a live directory tree (tmpfs mounts; root, mount and setfiles
# needed: skips otherwise, saying why). Each tree: about 3,000 paths shaped like this machine
# (imglib.sh's host_tree) plus /ttest: FIFO, socket, device nodes, symlinks (relative, dangling,
# and pointing outside the tree at sentinel files), agreeing and conflicting hard links, labels
# already there (wrong ones, one without its NUL), names with spaces, a newline, non-UTF-8
# bytes, a 60-level deep path, and another tmpfs mounted at /ttest/inner.
# - A labeled by fclabel, B by `setfiles -F -r B FC B`: every entry's security.selinux equal byte
#   for byte (read through O_PATH descriptors, symlinks' own); nothing outside the tree changed;
#   user.* attributes kept; a second run and setfiles -n on A change nothing;
# - check: exit 0, then 1 naming a changed label; read-only (also on a read-only mount);
# - --cross-mounts labels the inner file system as setfiles run on it does; by default not;
# - -e leaves subtrees as they were; -n writes nothing; --strict refuses a hard link conflict;
# - relabel between two policies equals labeling with the new one, and skips directories;
# - a symlink swapped in for a directory and for a file between the listing and the open (an
#   LD_PRELOAD shim) is labeled as the symlink it is: the files it points to are unchanged;
# - a path longer than PATH_MAX is labeled; image-only options are refused for a directory.
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/imglib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (tmpfs mounts, security.* attributes)"
command -v mount >/dev/null 2>&1 || skip "mount is not installed"
command -v setfiles >/dev/null 2>&1 || skip "setfiles is not installed (Debian package policycoreutils)"
command -v "$PY" >/dev/null 2>&1 || skip "python3 is not installed"
[ -x "$FCLABEL" ] || skip "fclabel is not built ($FCLABEL): run make"
[ -r /proc/self/fd ] || skip "/proc is not mounted"
cd "$OUT" || exit 1
need_tmpfs_labels
track_mounts
start=$(date +%s)

# ---- the policy: refpolicy (or a small one) plus the lines for /ttest
FC=$OUT/fc
if [ -f "$SHARED/refpolicy/file_contexts" ]; then
	cp "$SHARED/refpolicy/file_contexts" "$FC"
else
	echo "note: no refpolicy under $SHARED; using a small policy"
	cp "$TOP/fixtures/host-policy/file_contexts" "$FC"
fi
cat >>"$FC" <<'EOF'
/ttest(/.*)?	system_u:object_r:tt_t:s0
/ttest/conflict_a(/.*)?	system_u:object_r:tt_a_t:s0
/ttest/conflict_b(/.*)?	system_u:object_r:tt_b_t:s0
/ttest/.*	-p	system_u:object_r:tt_fifo_t:s0
/ttest/.*	-s	system_u:object_r:tt_sock_t:s0
/ttest/.*	-c	system_u:object_r:tt_chr_t:s0
/ttest/.*	-b	system_u:object_r:tt_blk_t:s0
/ttest/.*	-l	system_u:object_r:tt_lnk_t:s0
/ttest/nonul	--	system_u:object_r:tt_nonul_t:s0
/ttest/none(/.*)?	<<none>>
/ttest/deep/.*/leaf	--	system_u:object_r:tt_leaf_t:s0
/ttest/inner(/.*)?	system_u:object_r:tt_inner_t:s0
/ttest/race(/.*)?	system_u:object_r:tt_race_t:s0
/ttest/race/.*	-l	system_u:object_r:tt_race_lnk_t:s0
EOF
# the old policy for relabel: another type for /usr/bin
sed 's/:bin_t:/:oldbin_t:/' "$FC" >"$OUT/fc.old"
echo "policy: $FC ($(wc -l <"$FC") lines)"

# ---- outside every tree: sentinels with known labels, that symlinks in the trees point at
OUTSIDE=$OUT/outside
mkdir -p "$OUTSIDE/dir"
mount -t tmpfs tmpfs "$OUTSIDE" && echo "$OUTSIDE" >>"$mounts"
mkdir -p "$OUTSIDE/dir"
: >"$OUTSIDE/sentinel"
: >"$OUTSIDE/dir/inside"
for f in "$OUTSIDE" "$OUTSIDE/sentinel" "$OUTSIDE/dir" "$OUTSIDE/dir/inside"; do
	setfattr -h -n security.selinux -v "system_u:object_r:sentinel_t:s0" "$f"
done

# dump DIR OUT: "PATH<TAB>TYPE<TAB>LABEL(hex, or -)" for every entry, sorted, read through
# O_PATH descriptors relative to the parent's (any depth; a symlink's own label)
DUMP=$OUT/dump.py
cat >"$DUMP" <<'EOF'
import errno, os, stat, sys
sys.setrecursionlimit(100000)
def lab(fd):
    try:
        return os.getxattr("/proc/self/fd/%d" % fd, "security.selinux").hex()
    except OSError as e:
        if e.errno == errno.ENODATA:
            return "-"
        raise
out = []
def rec(dfd, rel):
    for n in sorted(os.listdir(dfd)):
        fd = os.open(n, os.O_PATH | os.O_NOFOLLOW, dir_fd=dfd)
        st = os.fstat(fd)
        p = rel + b"/" + os.fsencode(n)
        out.append(b"%s\t%o\t%s" % (p.replace(b"\\", b"\\\\").replace(b"\n", b"\\n"),
                                    stat.S_IFMT(st.st_mode), lab(fd).encode()))
        if stat.S_ISDIR(st.st_mode):
            sub = os.open(n, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dfd)
            rec(sub, p)
            os.close(sub)
        os.close(fd)
root = os.open(sys.argv[1], os.O_PATH | os.O_DIRECTORY)
out.append(b"/\t%o\t%s" % (stat.S_IFDIR, lab(root).encode()))
rec(os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY), b"")
sys.stdout.buffer.write(b"".join(l + b"\n" for l in out))
EOF
dump() { "$PY" "$DUMP" "$1" >"$2"; }
# the label of one entry (as dump shows it) and its text
label_of() { grep -a "^$2	" "$1" | cut -f 3 | "$PY" -c 'import sys; h = sys.stdin.read().strip(); print(bytes.fromhex(h).decode(errors="replace").rstrip("\0") if h not in ("", "-") else h)'; }

# mktree NAME [deep]: a tmpfs at $OUT/NAME with the tree, and one more at NAME/ttest/inner
mktree() {
	_t=$OUT/$1
	mkdir -p "$_t"
	mount -t tmpfs tmpfs "$_t" || { bad "mount tmpfs at $_t"; return 1; }
	echo "$_t" >>"$mounts"
	host_tree "$_t" 3000 >/dev/null
	"$PY" - "$_t" "$OUTSIDE" "${2:-}" <<'EOF' || bad "building $_t"
import os, socket, sys
root, outside, extra = sys.argv[1].encode(), sys.argv[2].encode(), sys.argv[3]
T = root + b"/ttest"
def P(p): return T + b"/" + p
for d in (b"conflict_b", b"conflict_a", b"odd", b"none", b"inner", b"race/victimdir", b"dev"):
    os.makedirs(P(d), exist_ok=True)
open(P(b"conflict_a/f"), "w").close()
os.link(P(b"conflict_a/f"), P(b"conflict_b/f"))         # two labels: the first path decides
open(P(b"none/linked"), "w").close()
os.link(P(b"none/linked"), P(b"linked_too"))            # <<none>> and a label: the label decides
open(P(b"agree1"), "w").close()
os.link(P(b"agree1"), P(b"agree2"))
os.mkfifo(P(b"dev/fifo"))
s = socket.socket(socket.AF_UNIX); s.bind(P(b"dev/sock")); s.close()
os.mknod(P(b"dev/null"), 0o20666, os.makedev(1, 3))
os.mknod(P(b"dev/loop9"), 0o60660, os.makedev(7, 9))
os.symlink(b"agree1", P(b"link_rel"))
os.symlink(b"nowhere/at/all", P(b"dangling"))
os.symlink(outside + b"/sentinel", P(b"link_out"))
os.symlink(outside + b"/dir", P(b"dirlink_out"))
os.symlink(outside + b"/dir", P(b"odd/dirlink_out2"))
for n in (b"with space", b"new\nline", b"caf\xc3\xa9", b"bad\xff\xfe", b"tab\there", b"[x]*?",
          b"back\\slash", b"-dash"):
    open(P(b"odd/" + n), "w").close()
os.mkdir(P(b"odd/dir with space"))
open(P(b"odd/dir with space/f"), "w").close()
open(P(b"wrong"), "w").close()
os.setxattr(P(b"wrong"), "security.selinux", b"system_u:object_r:wrong_t:s0\0")
os.setxattr(P(b"wrong"), "user.keep", b"me")
open(P(b"nonul"), "w").close()
os.setxattr(P(b"nonul"), "security.selinux", b"system_u:object_r:tt_nonul_t:s0")
open(P(b"none/kept"), "w").close()
os.setxattr(P(b"none/kept"), "security.selinux", b"system_u:object_r:kept_t:s0\0")
os.mkdir(P(b"race/victimdir/sub"))
open(P(b"race/victimdir/x"), "w").close()
open(P(b"race/victimfile"), "w").close()
d = P(b"deep")
for i in range(60):
    d += b"/level%02d_abcdefghijklmnopqrstuvwxyz" % i
os.makedirs(d)
open(d + b"/leaf", "w").close()
if extra == "links":
    # hard links across directories, the first name in either (and a <<none>> name): with
    # threads, another thread may meet the second name first
    for d in (b"conflict_a/many", b"conflict_b/many", b"none/many", b"plain"):
        os.makedirs(P(d))
    for i in range(150):
        a, b = P(b"conflict_a/many/%03d" % i), P(b"conflict_b/many/%03d" % i)
        first, second = (a, b) if i % 2 else (b, a)
        open(first, "w").close()
        os.link(first, second)
        if i % 3 == 0:
            os.link(first, P(b"none/many/%03d" % i))
        if i % 5 == 0:
            os.link(first, P(b"plain/%03d" % i))
    for i in range(300):
        os.makedirs(P(b"plain/d%03d/sub" % i))
        open(P(b"plain/d%03d/sub/f" % i), "w").close()
    # a directory of many times the walk's parts (256 entries), subdirectories and hard links
    # spread through it
    os.makedirs(P(b"big"))
    for i in range(20000):
        if i % 997 == 0:
            os.makedirs(P(b"big/d%05d/sub" % i))
            open(P(b"big/d%05d/sub/f" % i), "w").close()
        elif i % 1499 == 0:
            os.link(P(b"conflict_a/many/%03d" % (i % 150)), P(b"big/l%05d" % i))
        else:
            open(P(b"big/f%05d" % i), "w").close()
if extra == "deep":
    # beyond PATH_MAX: made with descriptors, one level at a time
    fd = os.open(P(b"deep"), os.O_RDONLY | os.O_DIRECTORY)
    for i in range(200):
        n = b"long%03d_" % i + b"x" * 40
        os.mkdir(n, dir_fd=fd)
        nfd = os.open(n, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = nfd
    os.close(os.open(b"leaf", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
EOF
	mount -t tmpfs tmpfs "$_t/ttest/inner" || { bad "mount tmpfs at $_t/ttest/inner"; return 1; }
	echo "$_t/ttest/inner" >>"$mounts"
	mkdir -p "$_t/ttest/inner/sub"
	: >"$_t/ttest/inner/a"
	: >"$_t/ttest/inner/sub/b"
	ln -s a "$_t/ttest/inner/l"
}

for t in a b c d; do mktree $t || finish; done
mktree e deep || finish
mktree f links || finish
mktree g links || finish
dump "$OUT/a" a.0
count=$(wc -l <a.0 | tr -d ' ')
echo "trees: $count entries each (a..e; e also has a path of about 10,000 bytes)"

# ---- A by fclabel, B by setfiles
run label "$FCLABEL" label "$OUT/a" -a / -S "$FC"
expect_rc "fclabel label on a tmpfs tree" 0
echo "     $(grep scanned label.err)"
expect_match "the hard link conflict is reported" "$(cat label.err)" "*hard link conflict*conflict_a/f*conflict_b/f*"
expect_match "the mount point is not crossed, and said so" "$(cat label.err)" "*1 mount point(s) not crossed (/ttest/inner*"
setfiles -F -r "$OUT/b" "$FC" "$OUT/b" >sf.out 2>sf.err
expect_eq "setfiles -F -r B FC B exits 0" "$?" 0
dump "$OUT/a" a.1
dump "$OUT/b" b.1
n=$(grep -c -v '	-$' a.1)
[ "$n" -gt 3000 ] && ok "$n entries labeled" || bad "only $n entries labeled"
if cmp -s a.1 b.1; then
	ok "every label equals setfiles' (byte for byte, $count entries)"
else
	bad "$(diff a.1 b.1 | grep -c '^<') entries differ between fclabel (<) and setfiles (>):"
	diff a.1 b.1 | head -n 20 | sed 's/^/       /'
fi
first=$(sed -n 's/.*hard link conflict: inode [0-9]* is \(\/ttest\/conflict_[ab]\/f\) (\([^,]*\),.*/\1 \2/p' label.err)
expect_eq "the first path of a conflicting hard link ($first) decides" \
	"$(label_of a.1 /ttest/conflict_a/f) $(label_of a.1 /ttest/conflict_b/f)" "${first#* } ${first#* }"
expect_eq "a FIFO is labeled as a FIFO" "$(label_of a.1 /ttest/dev/fifo)" "system_u:object_r:tt_fifo_t:s0"
expect_eq "a socket as a socket" "$(label_of a.1 /ttest/dev/sock)" "system_u:object_r:tt_sock_t:s0"
expect_eq "a block device as one" "$(label_of a.1 /ttest/dev/loop9)" "system_u:object_r:tt_blk_t:s0"
expect_eq "a symlink pointing outside: its own label" "$(label_of a.1 /ttest/link_out)" "system_u:object_r:tt_lnk_t:s0"
expect_eq "a non-UTF-8 name" "$(label_of a.1 "$(printf '/ttest/odd/bad\377\376')")" "system_u:object_r:tt_t:s0"
expect_eq "the deep leaf" "$(label_of a.1 "$(grep -a -o '^/ttest/deep/[^	]*/leaf' a.1)")" "system_u:object_r:tt_leaf_t:s0"
expect_eq "a label without its NUL that is right is left as it is" "$(grep -a '^/ttest/nonul	' a.1 | cut -f 3)" \
	"$(printf 'system_u:object_r:tt_nonul_t:s0' | od -An -tx1 | tr -d ' \n')"
expect_eq "<<none>> leaves a label as it was" "$(label_of a.1 /ttest/none/kept)" "system_u:object_r:kept_t:s0"
expect_eq "a hard link with a <<none>> name: its labeled name decides, as in setfiles" \
	"$(label_of a.1 /ttest/none/linked) $(label_of a.1 /ttest/linked_too)" \
	"$(label_of b.1 /ttest/linked_too) $(label_of b.1 /ttest/linked_too)"
expect_eq "the file system mounted inside is left alone" "$(grep -a '^/ttest/inner' a.1 | cut -f 3 | sort -u | tr '\n' ' ')" "- "
expect_eq "user.* attributes are kept" "$("$PY" -c 'import os, sys; print(os.getxattr(sys.argv[1], "user.keep").decode())' "$OUT/a/ttest/wrong" 2>&1)" "me"
setfiles -n -v -F -r "$OUT/a" "$FC" "$OUT/a" >sfn.out 2>sfn.err
expect_eq "setfiles -n -F wants to relabel nothing fclabel labeled" "$(grep -c -i 'relabel' sfn.out)" 0

dump "$OUTSIDE" outside.0
expect_eq "the sentinels outside the tree keep their label" "$(cut -f 3 outside.0 | sort -u | wc -l | tr -d ' ')" 1

run again "$FCLABEL" label "$OUT/a" -a / -S "$FC"
expect_rc "label again" 0
expect_match "a second run changes nothing" "$(grep scanned again.err)" "*changed 0,*"

# ---- check (read-only)
run check "$FCLABEL" check "$OUT/a" -a / -S "$FC"
expect_rc "check on the labeled tree" 0
expect_eq "check lists nothing" "$(cat check.out)" ""
setfattr -h -n security.selinux -v "system_u:object_r:changed_t:s0" "$OUT/a/ttest/odd/with space"
dump "$OUT/a" a.2
run check2 "$FCLABEL" check "$OUT/a" -a / -S "$FC"
expect_rc "check after one label was changed" 1
expect_eq "check names that file" "$(cut -f 1,2 check2.out)" "/ttest/odd/with space	has system_u:object_r:changed_t:s0"
dump "$OUT/a" a.3
cmp -s a.2 a.3 && ok "check wrote nothing" || bad "check changed labels"
if mount -o remount,ro "$OUT/a"; then
	run checkro "$FCLABEL" check "$OUT/a" -a / -S "$FC"
	expect_rc "check on a read-only mount" 1
	run dryro "$FCLABEL" label -n "$OUT/a" -a / -S "$FC"
	expect_rc "label -n on a read-only mount" 0
	expect_match "label -n counts the change" "$(grep scanned dryro.err)" "*would change 1,*"
	run labelro "$FCLABEL" label "$OUT/a" -a / -S "$FC"
	expect_rc "label on a read-only mount fails at the first write" 2
	expect_match "and says why, once" "$(cat labelro.err)" "*is on a read-only file system; stopped at the first write*"
	expect_eq "one error, not one per file" "$(grep -c 'read-only' labelro.err)" 1
	mount -o remount,rw "$OUT/a"
fi
dump "$OUT/a" a.4
cmp -s a.2 a.4 && ok "nothing was written by -n" || bad "label -n wrote"

# ---- --cross-mounts: the inner file system too, as setfiles run on it labels it
run cross "$FCLABEL" label "$OUT/a" -a / -S "$FC" --cross-mounts
expect_rc "label --cross-mounts" 0
setfiles -F -r "$OUT/b" "$FC" "$OUT/b/ttest/inner" >sf2.out 2>&1
expect_eq "setfiles on the inner mount exits 0" "$?" 0
dump "$OUT/a" a.5
dump "$OUT/b" b.5
expect_eq "the inner file system is labeled" "$(label_of a.5 /ttest/inner/sub/b)" "system_u:object_r:tt_inner_t:s0"
if cmp -s a.5 b.5; then ok "--cross-mounts equals setfiles on both file systems"
else bad "--cross-mounts differs from setfiles:"; diff a.5 b.5 | head -n 10 | sed 's/^/       /'; fi

# ---- -n, -e, --json on C
dump "$OUT/c" c.0
run dry "$FCLABEL" label -n -v "$OUT/c" -a / -S "$FC"
expect_rc "label -n" 0
dump "$OUT/c" c.1
cmp -s c.0 c.1 && ok "label -n writes nothing" || bad "label -n wrote"
expect_eq "label -n -v lists each file it counts" "$(grep -c '^would relabel' dry.out)" \
	"$(sed -n 's/.*would change \([0-9]*\),.*/\1/p' dry.err)"
expect_match "and as many as the label of A changed" "$(grep scanned label.err)" \
	"*changed $(sed -n 's/.*would change \([0-9]*\),.*/\1/p' dry.err),*"
run excl "$FCLABEL" label "$OUT/c" -a / -S "$FC" -e /ttest/odd -e /usr --json "$OUT/c.json"
expect_rc "label -e /ttest/odd -e /usr --json" 0
dump "$OUT/c" c.2
"$PY" - c.0 c.2 a.1 <<'EOF'
import sys
def load(f):
    return dict(l.rsplit(b"\t", 2)[0::2] for l in open(f, "rb").read().splitlines())
before, after, want = load(sys.argv[1]), load(sys.argv[2]), load(sys.argv[3])
ex = lambda p: p.startswith(b"/ttest/odd/") or p == b"/ttest/odd" or p == b"/usr" or p.startswith(b"/usr/")
bad = [p for p in after if (after[p] != before[p] if ex(p) else after[p] != want[p])]
n = sum(1 for p in after if ex(p))
print("%s   -e: %d excluded entries as they were, the other %d as a full label; %d wrong %r" %
      ("ok" if not bad and n else "FAIL", n, len(after) - n, len(bad), bad[:5]))
sys.exit(1 if bad or not n else 0)
EOF
[ $? = 0 ] || fails=$((fails + 1))
"$PY" - "$OUT/c.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
paths = [e["path"] for e in j["events"]]
ok = j["target"].endswith("/c") and j["target_kind"] == "tree" and j["mode"] == "label" and \
    j["summary"]["differ"] == len([e for e in j["events"] if e["event"] == "changed"]) and \
    any(p.startswith("/ttest/deep/") for p in paths)
print("%s   --json on a tree: %d events, \"target\": %s" % ("ok" if ok else "FAIL", len(paths), j.get("target")))
sys.exit(0 if ok else 1)
EOF
[ $? = 0 ] || fails=$((fails + 1))

# ---- --strict, then relabel, on D
dump "$OUT/d" d.0
run strict "$FCLABEL" label --strict "$OUT/d" -a / -S "$FC"
expect_rc "label --strict with a hard link conflict" 2
dump "$OUT/d" d.1
cmp -s d.0 d.1 && ok "--strict wrote nothing" || bad "--strict wrote"
run old "$FCLABEL" label "$OUT/d" -a / -S "$OUT/fc.old"
expect_rc "label with the old policy" 0
run relabel "$FCLABEL" relabel "$OUT/d" -a / --from "$OUT/fc.old" --to "$FC" --verify
expect_rc "relabel --from OLD --to NEW --verify" 0
cat relabel.out relabel.err
dump "$OUT/d" d.2
if cmp -s d.2 b.1; then ok "relabel equals a full label with the new policy (setfiles')"
else bad "relabel differs from a full label:"; diff d.2 b.1 | head -n 10 | sed 's/^/       /'; fi
skipped=$(sed -n 's/.*skipped (no change can reach them) \([0-9]*\).*/\1/p' relabel.err)
[ "${skipped:-0}" -gt 0 ] && ok "relabel skipped $skipped directories" || bad "relabel skipped no directory: $(cat relabel.err)"
expect_match "relabel changed only /usr/bin's files" "$(grep 'scanned' relabel.err)" "*changed [1-9]*"

# ---- a symlink swapped in during the walk; a path longer than PATH_MAX (E)
if cc -shared -fPIC -O2 -o treeshim.so "$TOP/tests/treeshim.c" -ldl -lpthread 2>shim.err; then
	dump "$OUTSIDE" outside.1
	# swapped NAMES LOG OUT ERR ARGS...: fclabel ARGS with the shim swapping NAMES, logging to
	# LOG (under the sanitized runs: ASan lets a preloaded library come before its runtime)
	swapped() {
		_n=$1 _l=$2 _o=$3 _e=$4
		shift 4
		: >"$_l"
		SWAP_NAMES=$_n SWAP_LOG=$_l \
			ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
			LD_PRELOAD=$OUT/treeshim.so "$FCLABEL" "$@" >"$_o" 2>"$_e"
	}
	swapped "victimdir=$OUTSIDE/dir,victimfile=$OUTSIDE/sentinel" "$OUT/swap.log" race.out race.err \
		label "$OUT/e" -a / -S "$FC"
	rc=$?
	expect_eq "label with two symlinks swapped in mid-walk exits 0" "$rc" 0
	expect_eq "the shim swapped both" "$(grep -c '^swapped' swap.log)" 2
	dump "$OUTSIDE" outside.2
	cmp -s outside.1 outside.2 && ok "nothing outside the tree was written" ||
		{ bad "files outside the tree changed:"; diff outside.1 outside.2 | head -n 5; }
	dump "$OUT/e" e.1
	expect_eq "the directory swapped for a symlink: the symlink is labeled" \
		"$(grep -a '^/ttest/race/victimdir	' e.1 | cut -f 2)$(label_of e.1 /ttest/race/victimdir)" "120000system_u:object_r:tt_race_lnk_t:s0"
	expect_eq "the file swapped for a symlink: the symlink is labeled" \
		"$(label_of e.1 /ttest/race/victimfile)" "system_u:object_r:tt_race_lnk_t:s0"
	# on a labeled tree a label is read by name (getxattrat) and the file opened only to write
	# it: a symlink swapped in between the two is labeled as a symlink, through its descriptor
	"$FCLABEL" label "$OUT/c" -a / -S "$FC" >/dev/null 2>&1
	setfattr -h -n security.selinux -v "system_u:object_r:wrong_t:s0" "$OUT/c/ttest/race/victimfile"
	dump "$OUTSIDE" outside.3
	swapped "victimfile=$OUTSIDE/sentinel" "$OUT/swap2.log" race2.out race2.err \
		label "$OUT/c" -a / -S "$FC" -T 1 -v
	expect_eq "label of a labeled tree with a symlink swapped in before the write exits 0" "$?" 0
	expect_eq "the shim swapped it" "$(grep -c '^swapped' swap2.log)" 1
	dump "$OUTSIDE" outside.4
	cmp -s outside.3 outside.4 && ok "nothing outside the tree was written" ||
		{ bad "files outside the tree changed:"; diff outside.3 outside.4 | head -n 5; }
	dump "$OUT/c" c.3
	expect_eq "the symlink swapped in is labeled as a symlink" \
		"$(grep -a '^/ttest/race/victimfile	' c.3 | cut -f 2)$(label_of c.3 /ttest/race/victimfile)" "120000system_u:object_r:tt_race_lnk_t:s0"
	expect_eq "the file it replaced keeps its label" "$(label_of c.3 /ttest/race/victimfile.orig)" "system_u:object_r:wrong_t:s0"
	expect_eq "and -v names that one change" "$(grep -c '^relabeled' race2.out)" 1
else
	bad "cannot build tests/treeshim.c: $(head -n 3 shim.err | tr '\n' '|')"
	"$FCLABEL" label "$OUT/e" -a / -S "$FC" >race.out 2>race.err
	dump "$OUT/e" e.1
fi
leaf=$(grep -a -o '^/ttest/deep/long[^	]*/leaf' e.1)
expect_eq "a path of ${#leaf} bytes (over PATH_MAX) is labeled" "$(label_of e.1 "$leaf")" "system_u:object_r:tt_leaf_t:s0"
run echeck "$FCLABEL" check "$OUT/e" -a / -S "$FC"
expect_rc "check on E" 1
expect_eq "check lists only what the shim created after the listing" "$(cut -f 1 echeck.out | sort | tr '\n' ' ')" \
	"$([ -s swap.log ] && echo "/ttest/race/victimdir.orig /ttest/race/victimdir.orig/sub /ttest/race/victimdir.orig/x /ttest/race/victimfile.orig ")"

# ---- threads: -T 1 and -T 4 give the same labels, hard-link decisions and output (F, G)
run thr1 "$FCLABEL" label "$OUT/f" -a / -S "$FC" -T 1 -v --json "$OUT/thr1.json"
expect_rc "label -T 1 -v --json" 0
run thr4 "$FCLABEL" label "$OUT/g" -a / -S "$FC" --threads 4 -v --json "$OUT/thr4.json"
expect_rc "label --threads 4 -v --json" 0
dump "$OUT/f" f.1
dump "$OUT/g" g.1
expect_eq "-T 4 labels every entry as -T 1 ($(wc -l <f.1 | tr -d ' ') entries)" "$(cmp f.1 g.1 2>&1)" ""
expect_eq "and as setfiles would (the shared entries)" \
	"$(grep -a -v -e '^/ttest/conflict_[ab]/many' -e '^/ttest/none/many' -e '^/ttest/plain' -e '^/ttest/big' f.1 | cmp - b.1 2>&1)" ""
n=$(grep -c 'hard link conflict' thr1.err)
[ "$n" -gt 100 ] && ok "$n hard link conflicts across directories" || bad "only $n hard link conflicts: $(head -n 2 thr1.err)"
# the tree's name and the time aside, the output is the same
norm() { sed -e "s#$OUT/[fg]#TREE#g" -e 's/, [0-9.]* s$//' -e 's/"seconds": [0-9.]*/"seconds": S/' -e 's/"claims_seconds": [0-9.]*/"claims_seconds": S/' "$1"; }
for x in out err; do
	if [ "$(norm thr1.$x)" = "$(norm thr4.$x)" ]; then ok "-T 4 writes the same std$x as -T 1 ($(wc -l <thr1.$x | tr -d ' ') lines)"
	else bad "std$x differs between -T 1 and -T 4:"; diff thr1.$x thr4.$x | head -n 6 | sed 's/^/       /'; fi
done
if [ "$(norm thr1.json)" = "$(norm thr4.json)" ]; then ok "and the same --json report"
else bad "--json differs between -T 1 and -T 4:"; diff thr1.json thr4.json | head -n 6 | sed 's/^/       /'; fi
# each linked file: its first labeled name in walk order decides (the walk lists a directory as
# readdir does: depth first, in getdents order)
"$PY" - "$OUT/f" f.1 <<'EOF'
import os, stat, sys
root = os.fsencode(sys.argv[1])
lab = {}
for l in open(sys.argv[2], "rb").read().splitlines():
    p, t, v = l.rsplit(b"\t", 2)
    lab[p] = bytes.fromhex(v.decode()).rstrip(b"\0").decode() if v != b"-" else "-"
first = {}
def walk(rel):
    for n in os.listdir(root + rel):
        p = rel + b"/" + n
        st = os.lstat(root + p)
        if stat.S_ISDIR(st.st_mode):
            if not os.path.ismount(root + p):
                walk(p)
        elif st.st_nlink > 1 and not p.startswith(b"/ttest/none/"):
            first.setdefault(st.st_ino, p)
walk(b"/ttest")
typ = lambda p: "tt_a_t" if b"/conflict_a/" in p else "tt_b_t" if b"/conflict_b/" in p else "tt_t"
bad = []
for i in range(150):
    a, b = b"/ttest/conflict_a/many/%03d" % i, b"/ttest/conflict_b/many/%03d" % i
    want = "system_u:object_r:%s:s0" % typ(first[os.lstat(root + a).st_ino])
    if lab[a] != want or lab[b] != want:
        bad.append((i, lab[a], lab[b], want))
print("%s   hard links across directories: the first labeled name in walk order decides "
      "(%d wrong %r)" % ("ok" if not bad else "FAIL", len(bad), bad[:3]))
sys.exit(1 if bad else 0)
EOF
[ $? = 0 ] || fails=$((fails + 1))
setfattr -h -n security.selinux -v "system_u:object_r:changed_t:s0" "$OUT/g/ttest/plain/d123/sub/f"
run chk1 "$FCLABEL" check "$OUT/g" -a / -S "$FC" -T 1
run chk4 "$FCLABEL" check "$OUT/g" -a / -S "$FC" -T 4
expect_eq "check -T 4 lists what check -T 1 lists" "$(cat chk4.out)" "$(cat chk1.out)"
expect_eq "which is the changed file" "$(cut -f 1 chk4.out)" "/ttest/plain/d123/sub/f"
run thr0 "$FCLABEL" label "$OUT/g" -a / -S "$FC" -T 0
expect_rc "-T 0 is refused" 2
expect_match "and says why" "$(cat thr0.err)" "*--threads '0': want a number from 1 to 256*"

# ---- options that apply to images only
for opt in "-z $OUT/undo" "-o $OUT/x.img" --no-sync --force; do
	run opt "$FCLABEL" label "$OUT/a" -a / -S "$FC" $opt
	expect_rc "label DIR ${opt%% *} is refused" 2
	expect_match "and says why" "$(cat opt.err)" "*is a directory*applies to images only*"
done
: >"$OUT/not-a-dir"
run xm "$FCLABEL" check "$OUT/not-a-dir" -a / -S "$FC" --cross-mounts
expect_rc "--cross-mounts on an image is refused" 2
run xt "$FCLABEL" check "$OUT/not-a-dir" -a / -S "$FC" -T 2
expect_rc "--threads on an image is refused" 2
expect_match "and says why" "$(cat xt.err)" "*is not a directory: --threads applies to directories only*"
echo "t_tree: $(($(date +%s) - start)) s"
finish
