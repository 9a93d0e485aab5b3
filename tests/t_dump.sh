# fclabel dump: what an image (and a live tree) carries, a line per path.
# - An ext4 image made with mke2fs -d from a tree built here (a symlink, a FIFO, a device node when
#   mknod works, names with spaces and regex characters: a+b(c).txt, x)y, [br], {c}, $d^, a
#   backslash, UTF-8; hard links; owners and modes of several kinds), labeled by fclabel label
#   with a small policy (one subtree <<none>>): every line's mode, uid and gid are debugfs stat's,
#   its label debugfs ea_get's; the lines are sorted by path (bytes); every path is there once.
# - --json parses (python3 -m json.tool) and says what the text says; --format json the same.
# - The round trip: dump --format file_contexts of the labeled image, fclabel label of a fresh
#   (unlabeled) copy with that file, dump again: identical; the same with -a /system.
# - The same tree copied to a directory and labeled with fclabel label DIR -a / (root and a file
#   system keeping security.selinux: else skipped, saying why): its dump is the image's (but
#   lost+found, which only the image has).
# - mkfs.erofs --file-contexts with the dump's file_contexts (libselinux reads it), uncompressed
#   and lz4hc: fclabel's dump of the EROFS image is the ext4 image's; mounted (root, and a kernel
#   with EROFS: else skipped, saying why), the kernel's reading is too.
# - Odd names at the top (a parenthesis, a space, a backslash, a tab, control bytes, UTF-8 and
#   bytes that are not, brackets, braces, ^ $ | ? * +), where libselinux reads a literal stem:
#   the round trip, and mkfs.erofs, give every label back.
# - A name with a newline: --format file_contexts exits 2 naming it, writing nothing; the text
#   form quotes it.
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/imglib.sh"
need_image_tools
cd "$OUT" || exit 1

# ---- the tree and the policy -------------------------------------------------------------------
mktree() {
	rm -rf "$1"
	mkdir -p "$1/bin" "$1/etc/sp ace" "$1/data/sub" "$1/nolabel/in"
	printf '#!/bin/sh\n' >"$1/bin/sh"
	chmod 4755 "$1/bin/sh"
	printf 'root:x:0:0\n' >"$1/etc/passwd"
	# (hard links whose names the policy labels alike: a tree's walk and an image's meet the
	# names in different orders, and the first decides a conflict)
	ln "$1/etc/passwd" "$1/etc/passwd.hard"
	ln "$1/etc/passwd" "$1/etc/group.hard2"
	for n in 'a+b(c).txt' 'x)y' '[br]' '{c}' '$d^' 'back\slash' 'q?s*t' 'pipe|bar' 'é.txt' '.hidden'; do
		echo "$n" >"$1/etc/sp ace/$n"
	done
	echo 1 >"$1/data/sub/f1"
	echo 2 >"$1/data/sub/f2"
	chmod 600 "$1/data/sub/f2"
	echo n >"$1/nolabel/in/n"
	ln -s ../etc/passwd "$1/data/link"
	mkfifo "$1/data/fifo"
	mknod "$1/data/null" c 1 3 2>/dev/null || echo "(no device node: mknod does not work here)"
	mknod "$1/data/loop" b 7 0 2>/dev/null || true
	if [ "$(id -u)" = 0 ]; then
		chown 1000:1001 "$1/data/sub/f1"
		chown 2000:0 "$1/data/sub"
		chown -h 3000:3001 "$1/data/link"
	fi
}
mktree tree

cat >fc <<'EOF'
/.*			system_u:object_r:default_t:s0
/			system_u:object_r:root_t:s0
/bin(/.*)?		system_u:object_r:bin_t:s0
/etc(/.*)?		system_u:object_r:etc_t:s0
/etc/sp\x20ace(/.*)?	system_u:object_r:etc_space_t:s0
/etc/sp\x20ace/a\+b.*	--	system_u:object_r:etc_plus_t:s0
/data(/.*)?		system_u:object_r:data_t:s0
/data/.*	-l	system_u:object_r:data_link_t:s0
/data/.*	-p	system_u:object_r:data_fifo_t:s0
/data/sub/f2	--	system_u:object_r:data_secret_t:s0:c1,c2
/nolabel(/.*)?		<<none>>
EOF

mkimg plain.img tree 8M -t ext4 -I 256 || { finish; }
cp plain.img labeled.img
run label "$FCLABEL" label labeled.img -S fc
expect_rc "fclabel label the image" 0

# ---- the text form against debugfs ---------------------------------------------------------------
run dump "$FCLABEL" dump labeled.img
expect_rc "dump of the labeled image" 0
cat >check.py <<'EOF'
import json, os, subprocess, sys

def unquote(s):
    # qname: "..." with C escapes (\n \t \" \\ \ooo) for odd names; else as it is
    if not s.startswith('"'):
        return s.encode("utf-8", "surrogateescape")
    s, out, i = s[1:-1], bytearray(), 0
    while i < len(s):
        c = s[i]
        if c != "\\":
            out += c.encode("utf-8", "surrogateescape"); i += 1; continue
        n = s[i + 1]
        if n in "01234567":
            out.append(int(s[i + 1:i + 4], 8)); i += 4; continue
        out.append(ord({"n": "\n", "t": "\t", "a": "\a", "b": "\b", "f": "\f", "r": "\r",
                        "v": "\v"}.get(n, n))); i += 2
    return bytes(out)

def read_text(path):
    recs = []
    for line in open(path, encoding="utf-8", errors="surrogateescape").read().splitlines():
        f = line.split("\t")
        assert len(f) == 5, "not five fields: %r" % line
        recs.append((unquote(f[0]), int(f[1], 8), int(f[2]), int(f[3]),
                     None if f[4] == "-" else unquote(f[4])))
    return recs

TYPES = {"regular": 0o100000, "directory": 0o40000, "symlink": 0o120000, "FIFO": 0o10000,
         "character special": 0o20000, "block special": 0o60000, "socket": 0o140000}

def debugfs(img, req):
    r = subprocess.run(["debugfs", "-R", req, img], capture_output=True)
    return r.stdout

def stat(img, p):
    out = debugfs(img, 'stat "%s"' % p.decode("utf-8", "surrogateescape")).decode("utf-8", "replace")
    typ = out.split("Type: ", 1)[1].split("   ")[0].strip()
    perm = int(out.split("Mode: ", 1)[1].split()[0], 8)
    user = int(out.split("User: ", 1)[1].split()[0])
    group = int(out.split("Group: ", 1)[1].split()[0])
    return TYPES[typ] | perm, user, group

def label(img, p):
    out = debugfs(img, 'ea_get -V "%s" security.selinux' % p.decode("utf-8", "surrogateescape"))
    if not out.strip() or b"not found" in out:
        return None
    v = out[:-1] if out.endswith(b"\n") else out
    return v[:-1] if v.endswith(b"\0") else v

def walk_paths(img):
    # every path of the image, from debugfs ls -p (recursive by hand)
    paths, todo = [b"/"], [b"/"]
    while todo:
        d = todo.pop()
        for line in debugfs(img, 'ls -p "%s"' % d.decode("utf-8", "surrogateescape")).split(b"\n"):
            f = line.split(b"/")
            if len(f) < 8 or f[5] in (b"", b".", b".."):
                continue
            name = f[5]
            p = (d.rstrip(b"/") + b"/" + name)
            paths.append(p)
            if int(f[2], 8) & 0o170000 == 0o40000:
                todo.append(p)
    return paths

cmd = sys.argv[1]
if cmd == "debugfs":
    img, dump = sys.argv[2], sys.argv[3]
    recs, bad = read_text(dump), 0
    paths = [r[0] for r in recs]
    if paths != sorted(paths):
        print("FAIL the lines are not sorted by path (bytes)"); bad += 1
    if sorted(paths) != sorted(walk_paths(img)):
        print("FAIL the paths are not debugfs's: %r" % (set(paths) ^ set(walk_paths(img))))
        bad += 1
    for p, mode, uid, gid, lab in recs:
        want = stat(img, p)
        if (mode, uid, gid) != want:
            print("FAIL %r: mode/uid/gid %o %d %d, debugfs %o %d %d" % ((p, mode, uid, gid) + want))
            bad += 1
        wl = label(img, p)
        if lab != wl:
            print("FAIL %r: label %r, debugfs %r" % (p, lab, wl)); bad += 1
    print("%d paths checked against debugfs, %d wrong" % (len(recs), bad))
    sys.exit(1 if bad else 0)
if cmd == "json":
    text, js = read_text(sys.argv[2]), json.load(open(sys.argv[3]))
    conv = [(o["path"].encode("utf-8", "surrogateescape"), int(o["mode"], 8), o["uid"], o["gid"],
             None if o["label"] is None else o["label"].encode("utf-8", "surrogateescape"))
            for o in js]
    if conv != text:
        print("FAIL the JSON and the text differ")
        sys.exit(1)
    print("%d objects agree with the text" % len(conv))
if cmd == "kinds":
    # which kinds of file and which odd names the dump holds (the test's own sanity)
    recs = read_text(sys.argv[2])
    kinds = {r[1] & 0o170000 for r in recs}
    print("all" if {0o10000, 0o100000, 0o120000, 0o40000} <= kinds else sorted(kinds))
EOF
if "$PY" check.py debugfs labeled.img dump.out >debugfs.log; then ok "$(tail -n 1 debugfs.log)"; else
	bad "dump and debugfs disagree: $(grep FAIL debugfs.log | head -n 5 | tr '\n' '|')"; fi
expect_match "every kind of file is listed" "$("$PY" check.py kinds dump.out)" "all"
expect_match "a name with regex characters is listed as it is" "$(cat dump.out)" "*/etc/sp ace/a+b(c).txt	0100644	*etc_plus_t*"
expect_match "a file the policy leaves alone has '-'" "$(grep '^/nolabel/in/n	' dump.out)" "*	-"
expect_match "a label with categories is whole" "$(grep '^/data/sub/f2	' dump.out)" "*data_secret_t:s0:c1,c2"
if [ "$(id -u)" = 0 ]; then
	expect_match "owners are listed" "$(grep '^/data/sub/f1	' dump.out)" "/data/sub/f1	0100644	1000	1001	*"
fi
expect_eq "hard links: each name listed" "$(grep -c 'hard' dump.out)" 2

# ---- JSON ------------------------------------------------------------------------------------
run json "$FCLABEL" dump --json labeled.img
expect_rc "dump --json" 0
if "$PY" -m json.tool json.out >/dev/null 2>json.err; then ok "--json parses (python3 -m json.tool)"; else
	bad "--json does not parse: $(head -n 2 json.err)"; fi
expect_match "JSON agrees with the text" "$("$PY" check.py json dump.out json.out 2>&1)" "*objects agree*"
run json2 "$FCLABEL" dump --format json labeled.img
expect_eq "--format json is --json" "$(cmp -s json.out json2.out && echo same)" same

# ---- the round trip --------------------------------------------------------------------------
roundtrip() { # WHAT (with $MP: -a; $PLAIN: the unlabeled image, default plain.img; fc: the policy)
	_w=$1
	cp "${PLAIN:-plain.img}" rt-src.img
	run rtl "$FCLABEL" label rt-src.img -S fc ${MP:+-a "$MP"}
	run rtd1 "$FCLABEL" dump rt-src.img ${MP:+-a "$MP"}
	run rtfc "$FCLABEL" dump --format file_contexts rt-src.img ${MP:+-a "$MP"}
	expect_rc "$_w: dump --format file_contexts" 0
	cp "${PLAIN:-plain.img}" rt-dst.img
	run rtl2 "$FCLABEL" label rt-dst.img -S "$OUT/rtfc.out" ${MP:+-a "$MP"}
	expect_rc "$_w: fclabel label of a fresh copy with the dump's file_contexts" 0
	run rtd2 "$FCLABEL" dump rt-dst.img ${MP:+-a "$MP"}
	if [ -s rtd1.out ] && cmp -s rtd1.out rtd2.out; then
		ok "$_w: the round trip gives every label back ($(wc -l <rtd1.out) paths)"
	else
		bad "$_w: the round trip differs: $(diff rtd1.out rtd2.out | head -n 6 | tr '\n' '|')"
	fi
}
MP= roundtrip "at /"
has_line() { # WHAT FILE LINE: FILE holds LINE exactly
	if grep -qxF -- "$3" "$2"; then ok "$1"; else bad "$1: no line [$3] in $2"; fi
}
has_line "the file_contexts escapes regex characters" rtfc.out \
	'/etc/sp[\x20]ace/a\+b\(c[)]\.txt	--	system_u:object_r:etc_plus_t:s0'
has_line "... and a backslash" rtfc.out '/etc/sp[\x20]ace/back[\\]slash	--	system_u:object_r:etc_space_t:s0'
has_line "... brackets and braces" rtfc.out '/etc/sp[\x20]ace/\[br[]]	--	system_u:object_r:etc_space_t:s0'
has_line "... and bytes past ASCII (libselinux reads ASCII only)" rtfc.out \
	'/etc/sp[\x20]ace/[\xc3][\xa9]\.txt	--	system_u:object_r:etc_space_t:s0'
has_line "... with the file's type" rtfc.out '/data/fifo	-p	system_u:object_r:data_fifo_t:s0'
expect_match "a file with no label gets <<none>>" "$(grep '^/nolabel/in/n' rtfc.out)" '*	--	<<none>>'
sed 's|^/\.\*|/system(/.*)?|; s|^/	|/system	|; s|^/\([a-z]\)|/system/\1|' fc >fc.system
cp fc fc.root
cp fc.system fc
MP=/system roundtrip "at /system (-a)"
cp fc.root fc
expect_match "-a: paths as mounted there" "$(head -n 2 rtd1.out)" "/system	040755*"

# ---- a live tree -----------------------------------------------------------------------------
tree_dump() {
	[ "$(id -u)" = 0 ] || { echo "(the live tree: skipped: not root, so security.selinux cannot be set)"; return; }
	mkdir -p live
	if ! { : >live/probe && setfattr -h -n security.selinux -v x live/probe 2>/dev/null; }; then
		mount -t tmpfs tmpfs live 2>/dev/null || { echo "(the live tree: skipped: no file system here keeps security.selinux, and tmpfs cannot be mounted)"; return; }
		LIVE_MOUNTED=1
		: >live/probe
		setfattr -h -n security.selinux -v x live/probe 2>/dev/null ||
			{ echo "(the live tree: skipped: tmpfs here does not keep security.selinux)"; return; }
	fi
	rm -f live/probe
	mktree live/t >/dev/null
	run tl "$FCLABEL" label live/t -a / -S fc
	expect_rc "fclabel label DIR -a /" 0
	run td "$FCLABEL" dump live/t
	expect_rc "dump DIR" 0
	grep -v '^/lost+found	' dump.out | grep -v '^/	' >img.nolf
	grep -v '^/	' td.out >tree.nolf
	if cmp -s img.nolf tree.nolf; then ok "the tree's dump is the image's ($(wc -l <tree.nolf) paths)"; else
		bad "the tree's dump differs from the image's: $(diff img.nolf tree.nolf | head -n 6 | tr '\n' '|')"; fi
	run td1 "$FCLABEL" dump -T 1 live/t
	expect_eq "one thread or many: the same dump" "$(cmp -s td.out td1.out && echo same)" same
	run tdfc "$FCLABEL" dump --format file_contexts live/t
	expect_rc "dump --format file_contexts DIR" 0
	mktree live/u >/dev/null
	run tl2 "$FCLABEL" label live/u -a / -S "$OUT/tdfc.out"
	run td2 "$FCLABEL" dump live/u
	expect_eq "the tree's round trip" "$(cmp -s td.out td2.out && echo same)" same
}
LIVE_MOUNTED=
tree_dump
[ -n "$LIVE_MOUNTED" ] && umount live

# ---- mkfs.erofs --file-contexts (libselinux's reading of the same file) --------------------------
erofs_dump() { # WHAT TREE DUMP: mkfs.erofs of TREE with rtfc.out gives DUMP's labels
	command -v mkfs.erofs >/dev/null 2>&1 || { echo "(mkfs.erofs: skipped: not installed, Debian package erofs-utils)"; return; }
	grep -v '^/lost+found	' "$3" >img.nolf2
	for z in "" lz4hc; do
		rm -f e.img
		run mkerofs mkfs.erofs ${z:+-z$z} --file-contexts="$OUT/rtfc.out" e.img "$2"
		[ "$rc" = 0 ] || { bad "mkfs.erofs --file-contexts with the dump's file_contexts: $(tail -n 2 mkerofs.err | tr '\n' '|')"; return; }
		# (fclabel's own reading of the EROFS image: no mount, no root)
		run ee "$FCLABEL" dump e.img
		if [ "$rc" = 0 ] && [ -s ee.out ] && cmp -s img.nolf2 ee.out; then
			ok "$1: fclabel dump of mkfs.erofs ${z:-(uncompressed)} --file-contexts with the dump's file_contexts gives every path, mode, owner and label back ($(wc -l <ee.out) paths)"
		else
			bad "$1: fclabel dump of the EROFS image ${z:-(uncompressed)} differs from the ext4 image's (rc $rc): $(diff img.nolf2 ee.out | head -n 6 | tr '\n' '|') $(head -n 2 ee.err)"
		fi
	done
	# (the kernel's reading of the same image, where a mount is possible)
	[ "$(id -u)" = 0 ] || { echo "(mkfs.erofs: the kernel's reading skipped: a mount takes root)"; return; }
	mkdir -p em
	mount -t erofs -o loop,ro e.img em 2>mount.err ||
		{ echo "(mkfs.erofs: the kernel's reading skipped: mount -t erofs does not work here: $(head -n 1 mount.err))"; return; }
	run ed "$FCLABEL" dump em
	umount em
	if [ -s ed.out ] && cmp -s img.nolf2 ed.out; then
		ok "$1: the kernel's mount of that EROFS image gives every label back too ($(wc -l <ed.out) paths)"
	else
		bad "$1: mkfs.erofs's labels, read by the kernel, differ from the image's: $(diff img.nolf2 ed.out | head -n 6 | tr '\n' '|')"
	fi
}
MP= roundtrip "at / (for mkfs.erofs)"
erofs_dump "the tree" tree dump.out

# ---- odd names at the top, where libselinux's stem rule reads them --------------------------------
# (a spec's first component without .^$?*+|[({ is a literal stem, compared with the path's as a
# string: an escape there other than of those would make the spec match nothing)
rm -rf odd && mkdir odd
"$PY" - odd <<'PYEOF'
import os, sys
root = sys.argv[1].encode()
names = [b"x)y", b"sp ace", b"b\\s", b"tab\tname", b"ctl\x01", "\u00fc".encode(), b"\xff\xfe",
         b"dot.", b"{}", b"]", b"a|b", b"^c$", b"#hash", b"-lead", b"q?", b"st*r", b"pl+s", b"(p)",
         b"[k]", b"del\x7f", b"\\x41"]
for n in names:
    os.mkdir(os.path.join(root, n))
    for p in (os.path.join(root, n, n), os.path.join(root, n + b".f")):
        with open(p, "wb") as f:
            f.write(n)
PYEOF
cat >fc.odd <<'FCEOF'
/.*			system_u:object_r:default_t:s0
/			system_u:object_r:root_t:s0
/[a-m].*		system_u:object_r:am_t:s0
/.*/.*			system_u:object_r:deep_t:s0
/.*\.f		--	system_u:object_r:dotf_t:s0
FCEOF
if mkimg odd.img odd 4M -t ext4; then
	cp fc fc.keep
	cp fc.odd fc
	PLAIN=odd.img MP= roundtrip "odd names at the top"
	cp fc.keep fc
	run oddd "$FCLABEL" dump rt-src.img
	# 21 names, each a directory with a file in it and a file beside it; the root, lost+found
	expect_eq "odd names: every path listed" "$(grep -c '' oddd.out)" 65
	expect_eq "odd names: every path labeled" "$(grep -c '	-$' oddd.out)" 0
	erofs_dump "odd names" odd oddd.out
fi

# ---- what file_contexts cannot say -----------------------------------------------------------
rm -rf nl && mkdir -p nl
printf x >"nl/bad
name"
echo ok >nl/good
mkimg nl.img nl 2M -t ext4
run nlfc "$FCLABEL" dump --format file_contexts nl.img
expect_rc "a name with a newline: --format file_contexts refused" 2
expect_match "... naming it and saying why" "$(cat nlfc.err)" '*"/bad\\nname"*newline*file_contexts*'
expect_eq "... and writing nothing" "$(wc -c <nlfc.out)" 0
run nltx "$FCLABEL" dump nl.img
expect_rc "... the text form lists it" 0
expect_match "... quoted" "$(cat nltx.out)" '*"/bad\\nname"	0100644*'

# ---- bad usage ---------------------------------------------------------------------------------
run u1 "$FCLABEL" dump
expect_rc "no target" 2
run u2 "$FCLABEL" dump --format yaml labeled.img
expect_rc "an unknown format" 2
run u3 "$FCLABEL" dump nosuch.img
expect_rc "a missing image" 2
finish
