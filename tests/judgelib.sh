# The judge of an image after a failure (a kill, an injected I/O error), for t_killwalk,
# t_faults and t_do_no_harm (sourced, after imglib.sh: it uses its imgtool.py). POSIX sh.
#
#   fsck_lines IMG OUT       e2fsck -fn's findings, one per line (what only describes the file
#                            system left out, the image's name made IMG, a line "e2fsck exit N"
#                            when it could not finish: N >= 8)
#   new_lines BEFORE AFTER   the lines of AFTER that BEFORE does not have, as often as they are
#                            more frequent there (a multiset difference; an empty BEFORE gives
#                            all of AFTER)
#   not_leak FILE            the lines of FILE (e2fsck -fn findings) that are not part of a
#                            leak: all but block bitmap differences that are all '-' (in use by
#                            the bitmap, by no file), free block and inode counts, a group's
#                            block bitmap checksum, an attribute block's reference count too
#                            high, quota usage recorded higher than the actual, and their
#                            "Fix? no" / IGNORED / "Update quota info" lines
#   needs_recovery IMG       whether the superblock says the journal needs recovery
#   has_journal IMG          whether the image has a journal
#   journal_replay IMG       e2fsck -E journal_only -y; 0 when it exited 0 or 1
#   loop_works               whether a loop mount works here (tried once; the reason in
#                            $loop_why when not)
#   kernel_replay IMG        a loop device, a read-only mount and umount (the kernel replays
#                            the journal): 0 when all worked and the kernel logged no error
#                            about it (dmesg, where readable); why not in $OUT/kmount.err
#   ea_dump IMG OUT          every extended attribute of every inode in use: "INO NAME HEX",
#                            read from the raw image (tests/imglib.sh's reader, not fclabel,
#                            not libext2fs); "INO !error WHY" for an inode whose attributes
#                            cannot be read (a bad attribute block)
#   ea_either BASE REF IMG   each attribute of each inode of IMG is the one of BASE (dump) or
#                            the one of REF (dump), absent included; prints what is not
#                            (at most 8 lines, in IMG.cmp too) and returns 1 when something is
#   ea_same REF IMG          the same, with REF only
#   ea_judge BASE REF either:IMG|same:IMG...   several at once (one python): IMG.cmp each
#   paths_of IMG OUT         "INO PATH" per entry (for the messages of ea_either and ea_same)

fsck_lines() {
	e2fsck -fn "$1" >"$2.raw" 2>&1
	_fr=$?
	grep -v -e '^e2fsck [0-9]' -e '^Pass [1-5][A-Z]*:' -e ' files (.* blocks$' -e '^ *$' \
		-e '^Warning: skipping journal recovery because doing a read-only filesystem check\.$' \
		-e '^Running additional passes' "$2.raw" | sed "s|$1|IMG|g" >"$2"
	[ "$_fr" -lt 8 ] || echo "e2fsck exit $_fr" >>"$2"
	rm -f "$2.raw"
}

new_lines() {
	awk 'FILENAME == ARGV[1] { n[$0]++; next } { if (n[$0] > 0) n[$0]--; else print }' "$1" "$2"
}

not_leak() {
	awk '
	/^Block bitmap differences: *( -([0-9]+|\([0-9]+--[0-9]+\)))+\.?$/ { next }
	/^Fix\? no$/ || /^IGNORED\.?$/ || /^Update quota info for quota type [0-9]+\? no$/ { next }
	/^Free (blocks|inodes) count wrong for group #[0-9]+ \([0-9]+, counted=[0-9]+\)\.$/ { next }
	/^Free (blocks|inodes) count wrong \([0-9]+, counted=[0-9]+\)\.$/ { next }
	/^(Block bitmap differences: +)?Group [0-9]+ block bitmap does not match checksum\.$/ { next }
	/WARNING: Filesystem still has errors/ || /^\*+$/ { next }
	/^Extended attribute block [0-9]+ has reference count [0-9]+, should be [0-9]+\.  Fix\? no$/ {
		s = $0
		sub(/.*reference count /, "", s)
		split(s, v, /, should be /)
		if (v[1] + 0 > v[2] + 0) next
	}
	/^\[QUOTA WARNING\] Usage inconsistent for ID [0-9]+:actual \([0-9]+, [0-9]+\) != expected \([0-9]+, [0-9]+\)$/ {
		s = $0
		gsub(/[^0-9]+/, " ", s)
		split(s, v, " ")
		# v: id, actual space, actual inodes, expected space, expected inodes
		if (v[4] + 0 >= v[2] + 0 && v[5] + 0 >= v[3] + 0) next
	}
	{ print }' "$1"
}

feature_on() { dumpe2fs -h "$1" 2>/dev/null | sed -n 's/^Filesystem features:\(.*\)/\1/p' | tr ' ' '\n' | grep -qx "$2"; }
needs_recovery() { feature_on "$1" needs_recovery; }
has_journal() { feature_on "$1" has_journal; }

journal_replay() {
	e2fsck -E journal_only -y "$1" >"$OUT/jreplay.log" 2>&1
	_jr=$?
	[ "$_jr" -le 1 ]
}

# The kernel's replay: a read-only mount of a loop device set up read-write (the kernel then
# replays the journal, "recovery complete", and writes nothing else: no orphan processing, no
# mount count), which also works where the kernel lacks quota support (CONFIG_QUOTA), as it
# refuses a read-write mount of an image with the quota feature there.
loop_why=
loop_tried=
loop_works() {
	if [ -z "$loop_tried" ]; then
		loop_tried=yes
		mkdir -p "$OUT/kmnt"
		if [ "$(id -u)" != 0 ]; then
			loop_why="not root: no loop mounts"
		elif ! command -v losetup >/dev/null; then
			loop_why="losetup is not installed"
		elif ! mke2fs -q -F -t ext4 "$OUT/kprobe.img" 4M >/dev/null 2>&1; then
			loop_why="mke2fs failed for the probe"
		elif ! kernel_replay "$OUT/kprobe.img"; then
			loop_why="a loop mount fails here: $(head -n 1 "$OUT/kmount.err")"
		fi
		rm -f "$OUT/kprobe.img"
	fi
	[ -z "$loop_why" ]
}

kernel_replay() {
	_kr=0
	_dev=
	# (a loop device another test took meanwhile: tried again)
	for _t in 1 2 3; do
		_dev=$(losetup -f --show "$1" 2>"$OUT/kmount.err") && break
		_dev=
		sleep 1
	done
	[ -n "$_dev" ] || return 1
	_mark=$(dmesg 2>/dev/null | tail -n 1)
	if mount -o ro "$_dev" "$OUT/kmnt" >>"$OUT/kmount.err" 2>&1; then
		umount "$OUT/kmnt" >>"$OUT/kmount.err" 2>&1 || { sleep 1; umount "$OUT/kmnt"; } || _kr=1
	else
		_kr=1
	fi
	# what the kernel said meanwhile (where this container may read it): a journal it replayed
	# only in part ("JBD2: Invalid checksum recovering ...") is a failure even when it mounts
	dmesg 2>/dev/null | awk -v m="$_mark" 'seen { print } $0 == m { seen = 1 }' |
		grep -e "(${_dev#/dev/})" -e 'JBD2: ' | grep -i -e error -e invalid -e corrupt -e fail \
		>"$OUT/kmount.msgs"
	if [ -s "$OUT/kmount.msgs" ]; then
		cat "$OUT/kmount.msgs" >>"$OUT/kmount.err"
		_kr=1
	fi
	losetup -d "$_dev" 2>>"$OUT/kmount.err"
	return $_kr
}
# (a test that mounts: leave no mount behind when it ends early)
kernel_cleanup() {
	if mountpoint -q "$OUT/kmnt" 2>/dev/null; then
		_d=$(findmnt -n -o SOURCE "$OUT/kmnt")
		umount "$OUT/kmnt"
		case $_d in /dev/loop*) losetup -d "$_d" ;; esac
	fi
}

EAJUDGE=$OUT/eajudge.py
cat >"$EAJUDGE" <<'PYEOF'
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from imgtool import Image, walk


def dump(img, out):
    im = Image(img)
    with open(out, "w") as f:
        for ino in range(1, im.inodes_count + 1):
            raw = im.inode(ino)
            if not (Image.mode(raw) and Image.links(raw)):
                continue
            try:
                xs = im.xattrs(raw)
            except (ValueError, IndexError) as e:
                f.write("%d !error %s\n" % (ino, str(e).replace(" ", "_")))
                continue
            for _w, name, val in xs:
                v = ("ea_inode:%d" % val[1]) if isinstance(val, tuple) else (val.hex() or "-")
                f.write("%d %s %s\n" % (ino, name, v))


def load(path):
    d = {}
    for line in open(path):
        ino, name, val = line.rstrip("\n").split(" ", 2)
        d.setdefault(int(ino), {})[name] = val
    return d


def show(v):
    if v is None:
        return "absent"
    if v.startswith("ea_inode:") or v == "-" or " " in v:
        return v
    try:
        b = bytes.fromhex(v)
        s = b.rstrip(b"\0").decode()
        if s.isprintable():
            return repr(s)
    except ValueError:
        pass
    return v[:48] + ("..." if len(v) > 48 else "")


def judge(states, got, paths):
    bad = []
    for ino in sorted(set(got) | set().union(*states)):
        g = got.get(ino, {})
        if "!error" in g:
            bad.append((ino, "attributes unreadable: %s" % g["!error"].replace("_", " ")))
            continue
        names = set(g).union(*(s.get(ino, {}) for s in states))
        for n in sorted(names):
            want = [s.get(ino, {}).get(n) for s in states]
            if g.get(n) not in want:
                bad.append((ino, "%s is %s, want %s" % (n, show(g.get(n)), " or ".join(
                    dict.fromkeys(show(w) for w in want)))))
                break
    out = ["inode %d (%s): %s" % (ino, paths.get(ino, "?"), why) for ino, why in bad[:8]]
    if len(bad) > 8:
        out.append("... and %d more inodes" % (len(bad) - 8))
    return (["%d inode(s):" % len(bad)] if bad else []) + out


def main():
    """dump IMG OUT | paths IMG OUT |
    judge PATHS BASE REF (either|same):IMG...: for each IMG, IMG.cmp gets what is wrong (empty
    when nothing is): either, each attribute is BASE's or REF's; same, each is REF's."""
    cmd = sys.argv[1]
    if cmd == "dump":
        dump(sys.argv[2], sys.argv[3])
        return 0
    if cmd == "paths":
        with open(sys.argv[3], "wb") as f:
            for p, ino, _m in walk(sys.argv[2], ""):
                f.write(b"%d %s\n" % (ino, p))
        return 0
    paths = {}
    if os.path.exists(sys.argv[2]):
        for line in open(sys.argv[2], "rb"):
            ino, p = line.rstrip(b"\n").split(b" ", 1)
            paths.setdefault(int(ino), p.decode("utf-8", "replace"))
    base, ref = load(sys.argv[3]), load(sys.argv[4])
    for arg in sys.argv[5:]:
        how, img = arg.split(":", 1)
        try:
            dump(img, img + ".eadump")
            out = judge([base, ref] if how == "either" else [ref], load(img + ".eadump"), paths)
        except Exception as e:  # an image this reader cannot open at all
            out = ["cannot read the image: %s" % e]
        with open(img + ".cmp", "w") as f:
            f.write("".join(l + "\n" for l in out))
    return 0


sys.exit(main())
PYEOF

# (compiled once: the tests run python with PYTHONDONTWRITEBYTECODE, and the judge runs often)
"$PY" -m py_compile "$OUT/imgtool.py" 2>/dev/null
ea_dump() { "$PY" -S "$EAJUDGE" dump "$1" "$2"; }
paths_of() { "$PY" -S "$EAJUDGE" paths "$1" "$2" 2>/dev/null; }
ea_judge() { "$PY" -S "$EAJUDGE" judge "${EA_PATHS:-/nonexistent}" "$@"; }
# ea_either BASE REF IMG / ea_same REF IMG: prints what is wrong, 1 when something is
ea_either() { ea_judge "$1" "$2" "either:$3"; cat "$3.cmp"; [ ! -s "$3.cmp" ]; }
ea_same() { ea_judge "$1" "$1" "same:$2"; cat "$2.cmp"; [ ! -s "$2.cmp" ]; }
