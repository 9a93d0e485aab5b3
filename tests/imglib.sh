# Shared helpers of the image tests tests/t_image_*.sh (sourced). POSIX sh.
#
# Environment (set by tests/run.sh; defaults here so a test can run by hand):
#   TOP  repo root   FCLABEL  the fclabel binary   SHARED  shared data   OUT  scratch dir
# Besides lib.sh's ok/bad/expect_eq/finish/skip:
#   need_image_tools        skip unless e2fsprogs' mke2fs/debugfs/e2fsck and python3 are there
#   run NAME CMD...         runs CMD; stdout in $OUT/NAME.out, stderr in $OUT/NAME.err, status in $rc
#   expect_rc WHAT WANT     checks $rc (from run); shows the command's stderr when it differs
#   fsck_clean IMG WHAT     e2fsck -fn must find nothing
#   mkimg IMG TREE SIZE MKE2FS-OPTIONS...   mke2fs -d TREE; fails the test when mke2fs fails
#   sum FILE                sha256 of a file
#   verify ARGS...          $IMGTOOL verify (an independent reader of the image, see below):
#                           its failed checks are added to this test's
#   host_tree DIR N         a tree of about N entries shaped like this machine's /usr /etc ...
#   xattr_dump DIR OUT      the security.* attributes of a live tree, sorted, to compare
#   sparse_same A B         whether two (sparse) files are equal byte for byte, quickly
#   same_fs A B             whether two images are equal byte for byte but for their journals'
#                           blocks (a label in place passes through the journal, a copy's not)
#   need_nogetxattrat       W=tests/nogetxattrat (the seccomp wrapper), built if stale, or skip
#   need_tmpfs_labels       skip unless a tmpfs mounts here and keeps security.selinux
#   track_mounts            $mounts lists what the test mounts; unmounted at exit, last first
#   zz_policy FC            FC: refpolicy (or the host fixture) and the /zz specs of the tree
#                           tests (a directory, symlinks, FIFOs, a hard link)
# $IMGTOOL (written to $OUT/imgtool.py) reads images without fclabel: the tree from debugfs
# (ls -p), inodes and extended attributes parsed from the raw image and cross-checked against
# debugfs on a sample; `verify --before B --after A --fc FC ...` checks that A is B labeled.
: "${TOP:=$(cd "$(dirname "$0")/.." && pwd)}"
. "$TOP/tests/lib.sh"
: "${SHARED:=$TOP/../shared/data}"
: "${FC_SEED:=20261203}"
export TOP OUT FCLABEL SHARED FC_SEED
PATH=$PATH:/usr/sbin:/sbin
export PATH
PY=python3
IMGTOOL=$OUT/imgtool.py

need_nogetxattrat() {
	W=$TOP/tests/nogetxattrat
	if [ ! -x "$W" ] || [ "$W" -ot "$TOP/tests/nogetxattrat.c" ]; then
		make -s -C "$TOP" tests/nogetxattrat >"$OUT/build.log" 2>&1 ||
			skip "cannot build tests/nogetxattrat: $(tail -n 1 "$OUT/build.log")"
	fi
}

need_tmpfs_labels() {
	mkdir -p "$OUT/probe"
	mount -t tmpfs tmpfs "$OUT/probe" 2>"$OUT/probe.err" ||
		skip "mount -t tmpfs does not work here: $(head -n 1 "$OUT/probe.err")"
	: >"$OUT/probe/f"
	setfattr -h -n security.selinux -v x "$OUT/probe/f" 2>"$OUT/probe.err" ||
		{ umount "$OUT/probe"; skip "tmpfs here does not keep security.selinux: $(head -n 1 "$OUT/probe.err")"; }
	umount "$OUT/probe"
}

track_mounts() {
	mounts=$OUT/mounts
	: >"$mounts"
	trap 'tac "$mounts" 2>/dev/null | while read -r _m; do umount "$_m" 2>/dev/null; done' EXIT INT TERM
}

zz_policy() {
	if [ -f "$SHARED/refpolicy/file_contexts" ]; then
		cp "$SHARED/refpolicy/file_contexts" "$1"
	else
		cp "$TOP/fixtures/host-policy/file_contexts" "$1"
	fi
	cat >>"$1" <<'EOF'
/zz(/.*)?	system_u:object_r:zz_t:s0
/zz/.*	-l	system_u:object_r:zz_lnk_t:s0
/zz/.*	-p	system_u:object_r:zz_fifo_t:s0
/zz/hard	--	system_u:object_r:zz_hard_t:s0
EOF
}

need_image_tools() {
	[ -x "$FCLABEL" ] || skip "fclabel is not built ($FCLABEL): run make"
	for _t in mke2fs debugfs e2fsck dumpe2fs; do
		command -v "$_t" >/dev/null 2>&1 || skip "$_t is not installed (Debian package e2fsprogs)"
	done
	command -v "$PY" >/dev/null 2>&1 || skip "python3 is not installed"
	# mke2fs -d (populate from a directory, with extended attributes) is e2fsprogs >= 1.43
	mkdir -p "$OUT/.probe/d" && : >"$OUT/.probe/d/f"
	mke2fs -q -F -t ext4 -d "$OUT/.probe/d" "$OUT/.probe/img" 1M >"$OUT/.probe/log" 2>&1 ||
		skip "mke2fs cannot populate an image from a directory (-d): $(tail -n 1 "$OUT/.probe/log")"
	rm -rf "$OUT/.probe"
}

run() {
	_n=$1
	shift
	"$@" >"$OUT/$_n.out" 2>"$OUT/$_n.err"
	rc=$?
}

expect_rc() {
	if [ "$rc" = "$2" ]; then
		ok "$1 (exit $rc)"
	else
		bad "$1: exit $rc, want $2; stderr: $(tail -n 3 "$OUT/$_n.err" | tr '\n' '|')"
	fi
}

fsck_clean() {
	e2fsck -fn "$1" >"$OUT/fsck.log" 2>&1
	_r=$?
	if [ "$_r" = 0 ]; then
		ok "$2: e2fsck -fn clean"
	else
		bad "$2: e2fsck -fn exit $_r: $(grep -v '^Pass\|^e2fsck 1\|files (' "$OUT/fsck.log" | head -n 8 | tr '\n' '|')"
		cp "$OUT/fsck.log" "$OUT/fsck.$(basename "$1").log"
	fi
}

# small_tree DIR: a few files, a directory below another and a symlink (t_image_formats,
# t_image_corrupt)
small_tree() {
	mkdir -p "$1/bin" "$1/etc" "$1/data/sub"
	printf '#!/bin/sh\n' >"$1/bin/sh"
	printf 'root:x:0:0\n' >"$1/etc/passwd"
	for _i in 1 2 3 4 5 6 7 8; do echo "$_i" >"$1/data/f$_i"; done
	echo x >"$1/data/sub/x"
	ln -s ../etc/passwd "$1/data/link"
}

# small_policy FILE: a file_contexts for small_tree (every directory its own type, links and
# even-numbered files typed)
small_policy() {
	cat >"$1" <<'EOF'
/.*			system_u:object_r:default_t:s0
/			system_u:object_r:root_t:s0
/bin(/.*)?		system_u:object_r:bin_t:s0
/etc(/.*)?		system_u:object_r:etc_t:s0
/data(/.*)?		system_u:object_r:data_t:s0
/data/.*	-l	system_u:object_r:data_link_t:s0
/data/f[2468]	--	system_u:object_r:data_even_t:s0
EOF
}

mkimg() {
	_img=$1 _tree=$2 _size=$3
	shift 3
	rm -f "$_img"
	MKIMG_KEY=$(memo_key mkimg "$("$PY" "$TOP/tests/treekey.py" "$_tree")" "$_size" "$@")
	memo_get "$MKIMG_KEY" "$_img" && return 0
	if ! mke2fs -q -F "$@" -d "$_tree" "$_img" "$_size" >"$OUT/mke2fs.log" 2>&1; then
		bad "mke2fs $* -d $_tree: $(tail -n 3 "$OUT/mke2fs.log" | tr '\n' '|')"
		return 1
	fi
	memo_put "$MKIMG_KEY" "$_img"
}

sum() { sha256sum "$1" | cut -d ' ' -f 1; }

verify() {
	_vk=$(memo_key verify "$IMGTOOL" ${VNAME:+--name "$VNAME"} "$@")
	if memo_get "$_vk" "$OUT/verify.out"; then
		cat "$OUT/verify.out"
		return 0
	fi
	"$PY" "$IMGTOOL" verify ${VNAME:+--name "$VNAME"} "$@" >"$OUT/verify.out"
	_r=$?
	cat "$OUT/verify.out"
	[ "$_r" -eq 0 ] && memo_put "$_vk" "$OUT/verify.out"
	fails=$((fails + _r))
	return "$_r"
}

# xattr_dump DIR OUT: "PATH<TAB>NAME=HEX" for each security.* attribute of each entry below DIR
# (a symlink's own), paths relative to DIR, sorted: trees labeled alike give the same file
xattr_dump() {
	(cd "$1" && getfattr -R -P -h -d -m '^security\.' -e hex . 2>/dev/null) |
		awk '/^# file: / { f = substr($0, 9); next } /=/ { print f "\t" $0 }' | LC_ALL=C sort >"$2"
}

# sparse_same A B: whether two files are equal byte for byte, reading only where either has
# data (SEEK_DATA): quick on a large sparse image
same_fs() {
	cmp -s "$1" "$2" || "$PY" "$IMGTOOL" samefs "$1" "$2" >/dev/null
}

sparse_same() {
	"$PY" - "$1" "$2" <<'EOF'
import os, sys
fds = [os.open(p, os.O_RDONLY) for p in sys.argv[1:3]]
size = os.fstat(fds[0]).st_size
if os.fstat(fds[1]).st_size != size:
    sys.exit(1)
segs = []
for fd in fds:
    off = 0
    while off < size:
        try:
            d = os.lseek(fd, off, os.SEEK_DATA)
        except OSError:
            break
        h = os.lseek(fd, d, os.SEEK_HOLE)
        segs.append((d, h))
        off = h
end = 0
for d, h in sorted(segs):
    d = max(d, end)
    while d < h:
        n = min(h - d, 1 << 20)
        if os.pread(fds[0], n, d) != os.pread(fds[1], n, d):
            sys.exit(1)
        d += n
    end = max(end, h)
EOF
}

# host_tree DIR N: a tree shaped like this machine: all of /etc, /var and /opt and a seeded
# sample of /usr and /root (N entries in all, with their parent directories) from
# `find -xdev`; directories as directories, symlinks as symlinks (to "target"), the rest empty
# files. Prints a one-line summary.
host_tree() {
	find /usr /etc /var /opt /root -xdev \( -path "$TOP" -o -path "$OUT" \) -prune -o -printf '%y\0%p\0' \
		2>/dev/null >"$OUT/host.list"
	"$PY" - "$1" "$FC_SEED" "$2" "$OUT/host.list" <<'EOF'
import os, random, sys
root, seed, n = sys.argv[1].encode(), sys.argv[2], int(sys.argv[3])
data = open(sys.argv[4], "rb").read().split(b"\0")
ents = [(data[i], data[i + 1]) for i in range(0, len(data) - 1, 2)]
top = (b"etc", b"var", b"opt")
keep = [e for e in ents if e[1].split(b"/")[1] in top]
rest = [e for e in ents if e[1].split(b"/")[1] not in top]
rng = random.Random("%s/image-tree/%d" % (seed, n))
if len(keep) > n:
    keep = rng.sample(keep, n)
keep += rng.sample(rest, max(0, min(len(rest), n - len(keep))))
made = 0
for t, p in sorted(keep, key=lambda e: e[1]):
    dst = root + p
    try:
        if t == b"d":
            os.makedirs(dst, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if t == b"l":
                os.symlink(b"target", dst)
            else:
                open(dst, "wb").close()
        made += 1
    except OSError as e:
        sys.stderr.write("skipped %r: %s\n" % (p, e))
print("%d host entries, %d chosen, %d made" % (len(ents), len(keep), made))
EOF
	rm -f "$OUT/host.list"
}

cat >"$IMGTOOL" <<'PYEOF'
#!/usr/bin/env python3
"""imgtool: an independent reader of ext2/3/4 images for fclabel's image tests.

It does not use fclabel or libext2fs to read labels: the directory tree comes from debugfs
(`ls -p`, the same directory order as any libext2fs walk), inodes and extended attributes are
parsed here from the raw image (and cross-checked against debugfs on a sample).

  imgtool.py verify --before B.img --after A.img --fc FC[,FC] [--mp MP] [options]
      Checks that A is B correctly labeled (see --help). Prints "ok   ..." / "FAIL ..." lines
      and exits with the number of failed checks (at most 100).
  imgtool.py walk IMG [--mp MP]        prints "MODE<TAB>INO<TAB>LINKS<TAB>FILE_ACL<TAB>LABEL<TAB>PATH"
      per entry, in walk order (LABEL without its NUL, "-" when absent)
"""
import argparse
import codecs
import json
import math
import os
import re
import struct
import subprocess
import sys
import tempfile
import time

EA_MAGIC = 0xEA020000
REFCOUNT_MAX = 1024
PREFIX = {1: "user.", 2: "system.posix_acl_access", 3: "system.posix_acl_default", 4: "trusted.",
          6: "security.", 7: "system.", 8: "system.richacl"}
S_IFMT, S_IFDIR = 0o170000, 0o040000


def fsd(b):
    return b.decode("utf-8", "surrogateescape")


def show(p, n=160):
    """A path for messages: printable, shortened in the middle."""
    s = repr(fsd(p) if isinstance(p, bytes) else p)[1:-1]
    return s if len(s) <= n else s[:n // 2] + "..." + s[-n // 2:]


class Image:
    def __init__(self, path):
        self.path = path
        self.f = open(path, "rb")
        sb = self.read(1024, 1024)
        if struct.unpack_from("<H", sb, 0x38)[0] != 0xEF53:
            raise ValueError("%s: not an ext2/3/4 image" % path)
        (self.inodes_count, blocks_lo, _, free_lo, self.free_inodes, self.first_data,
         log_bs) = struct.unpack_from("<IIIIIII", sb, 0)
        self.bs = 1024 << log_bs
        self.bpg = struct.unpack_from("<I", sb, 0x20)[0]
        self.ipg = struct.unpack_from("<I", sb, 0x28)[0]
        self.state = struct.unpack_from("<H", sb, 0x3A)[0]
        rev = struct.unpack_from("<I", sb, 0x4C)[0]
        self.isize = struct.unpack_from("<H", sb, 0x58)[0] if rev >= 1 else 128
        self.compat, self.incompat, self.ro_compat = struct.unpack_from("<III", sb, 0x5C)
        self.reserved_gdt = struct.unpack_from("<H", sb, 0xCE)[0]
        self.is64 = bool(self.incompat & 0x80)
        desc = struct.unpack_from("<H", sb, 0xFE)[0] if self.is64 else 32
        self.desc = max(desc, 32)
        hi = struct.unpack_from("<I", sb, 0x150)[0] if self.is64 else 0
        self.blocks = blocks_lo | hi << 32
        hi = struct.unpack_from("<I", sb, 0x158)[0] if self.is64 else 0
        self.sb_free_blocks = free_lo | hi << 32
        self.backup_bgs = struct.unpack_from("<II", sb, 0x24C)
        self.ngroups = (self.blocks - self.first_data + self.bpg - 1) // self.bpg
        self.gdt_blocks = (self.ngroups * self.desc + self.bs - 1) // self.bs
        # the superblock's block (1 with 1 KiB blocks, also under bigalloc where s_first_data_block is 0)
        self.sb_blk = 1 if self.bs == 1024 else 0
        # bigalloc: allocation (free counts, i_blocks of an attribute block) is by cluster
        log_cluster = struct.unpack_from("<I", sb, 0x1C)[0]
        self.cluster = (1024 << log_cluster) if self.ro_compat & 0x200 else self.bs
        gdt = self.read((self.sb_blk + 1) * self.bs, self.ngroups * self.desc)
        self.groups = []
        self.gd_free_blocks = 0
        for g in range(self.ngroups):
            o = g * self.desc
            bb, ib, it, fb = struct.unpack_from("<IIIH", gdt, o)
            if self.desc >= 64:
                bbh, ibh, ith, fbh = struct.unpack_from("<IIIH", gdt, o + 0x20)
                bb |= bbh << 32
                ib |= ibh << 32
                it |= ith << 32
                fb |= fbh << 16
            self.groups.append((bb, ib, it))
            self.gd_free_blocks += fb
        self.itb = (self.ipg * self.isize + self.bs - 1) // self.bs
        self._tables = {}
        self._blocks = {}
        self._xattrs = {}

    def read(self, off, n):
        self.f.seek(off)
        return self.f.read(n)

    def block(self, nr):
        b = self._blocks.get(nr)
        if b is None:
            b = self.read(nr * self.bs, self.bs)
            if len(self._blocks) > 4096:
                self._blocks.clear()
            self._blocks[nr] = b
        return b

    def table(self, g):
        t = self._tables.get(g)
        if t is None:
            t = self.read(self.groups[g][2] * self.bs, self.ipg * self.isize)
            self._tables[g] = t
        return t

    def inode(self, ino):
        g, i = divmod(ino - 1, self.ipg)
        return self.table(g)[i * self.isize:(i + 1) * self.isize]

    def file_acl(self, raw):
        lo = struct.unpack_from("<I", raw, 0x68)[0]
        hi = struct.unpack_from("<H", raw, 0x76)[0] if self.is64 else 0
        return lo | hi << 32

    @staticmethod
    def iblocks(raw):
        lo = struct.unpack_from("<I", raw, 0x1C)[0]
        hi = struct.unpack_from("<H", raw, 0x74)[0]
        return lo | hi << 32

    @staticmethod
    def links(raw):
        return struct.unpack_from("<H", raw, 0x1A)[0]

    @staticmethod
    def mode(raw):
        return struct.unpack_from("<H", raw, 0)[0]

    def ibody_area(self, raw):
        """(offset of the in-inode xattr area, or None)."""
        if self.isize <= 128:
            return None
        extra = struct.unpack_from("<H", raw, 0x80)[0]
        a = 128 + extra
        if a + 4 <= self.isize and struct.unpack_from("<I", raw, a)[0] == EA_MAGIC:
            return a
        return None

    def xattrs_of(self, ino):
        x = self._xattrs.get(ino)
        if x is None:
            x = self._xattrs[ino] = self.xattrs(self.inode(ino))
        return x

    def xattrs(self, raw):
        """[(where, name, value)] of an inode; where is 'ibody' or 'block'. Raises on corruption."""
        out = []
        a = self.ibody_area(raw)
        if a is not None:
            out += [("ibody",) + e for e in entries(raw, a + 4, a + 4, self.isize)]
        blk = self.file_acl(raw)
        if blk:
            b = self.block(blk)
            if struct.unpack_from("<I", b, 0)[0] != EA_MAGIC:
                raise ValueError("EA block %d: bad magic" % blk)
            out += [("block",) + e for e in entries(b, 32, 0, self.bs)]
        return out

    def ea_block_header(self, blk):
        b = self.block(blk)
        magic, refcount, nblocks = struct.unpack_from("<III", b, 0)
        return magic, refcount, nblocks

    def journal_blocks(self):
        """The journal inode's blocks (in place, labels are written as its transactions)."""
        jino = struct.unpack_from("<I", self.read(1024, 1024), 0xE0)[0]
        if not (self.compat & 0x4) or not jino:
            return set()
        out = debugfs(self.path.encode() if isinstance(self.path, str) else self.path,
                      [b"blocks <%d>" % jino])
        return {int(w) for w in re.findall(rb"\b(\d+)\b", out.split(b"\n", 1)[-1])}

    def metadata_blocks(self):
        """Blocks a label write may legitimately change besides attribute blocks: superblocks,
        group descriptors (and their reserve), bitmaps, inode tables, the journal."""
        s = set(self.journal_blocks())
        sparse = self.ro_compat & 0x1
        sparse2 = self.compat & 0x200

        def has_super(g):
            if g == 0:
                return True
            if sparse2:
                return g in self.backup_bgs
            if not sparse:
                return True
            for p in (3, 5, 7):
                x = 1
                while x < g:
                    x *= p
                if x == g:
                    return True
            return g == 1
        for g in range(self.ngroups):
            start = self.first_data + g * self.bpg if g else self.sb_blk
            if has_super(g):
                if g == 0 and self.bs > 1024:
                    s.add(0)
                s.update(range(start, start + 1 + self.gdt_blocks + self.reserved_gdt))
            bb, ib, it = self.groups[g]
            s.add(bb)
            s.add(ib)
            s.update(range(it, it + self.itb))
        return s


def entries(buf, start, vbase, end):
    out = []
    p = start
    while p + 4 <= end and buf[p:p + 4] != b"\0\0\0\0":
        if p + 16 > end:
            raise ValueError("xattr entry runs past its area")
        nl, idx, voff, vinum, vsize, _h = struct.unpack_from("<BBHIII", buf, p)
        name = PREFIX.get(idx, "?%d." % idx) + fsd(buf[p + 16:p + 16 + nl])
        if vinum:
            val = ("ea_inode", vinum)
        else:
            if vbase + voff + vsize > end:
                raise ValueError("xattr value of %s runs past its area" % name)
            val = bytes(buf[vbase + voff:vbase + voff + vsize])
        out.append((name, val))
        p += (16 + nl + 3) & ~3
    return out


# ---- debugfs ----

def tmpdir():
    d = os.environ.get("OUT") or tempfile.gettempdir()
    return d


def debugfs(img, cmds):
    fd, cf = tempfile.mkstemp(prefix="dbgfs.", dir=tmpdir())
    with os.fdopen(fd, "wb") as f:
        f.write(b"".join(c + b"\n" for c in cmds))
    try:
        r = subprocess.run(["debugfs", "-f", cf, img], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
    finally:
        os.unlink(cf)
    return r.stdout


HDR = re.compile(rb"debugfs: ls -p <(\d+)>\n")
REC = re.compile(rb"/(\d+)/([0-7]+)/(\d+)/(\d+)/([^/]*)/(\d*)/\n")


def walk(img, mp):
    """[(path bytes, ino, mode)] in walk order (depth first, directory order), root first."""
    listing = {}
    level = [2]
    while level:
        out = debugfs(img, [b"ls -p <%d>" % d for d in level])
        pos, cur = 0, None
        while pos < len(out):
            m = HDR.match(out, pos)
            if m:
                cur = int(m.group(1))
                listing[cur] = []
                pos = m.end()
                continue
            m = REC.match(out, pos)
            if m and cur is not None:
                listing[cur].append((int(m.group(1)), int(m.group(2), 8), m.group(5)))
                pos = m.end()
                continue
            if out[pos:pos + 1] == b"\n":
                pos += 1
                continue
            raise ValueError("cannot parse debugfs ls -p output at %r" % out[pos:pos + 80])
        nxt = []
        for d in level:
            if d not in listing:
                raise ValueError("debugfs did not list directory inode %d" % d)
            for ino, mode, name in listing[d]:
                if name in (b".", b"..") or not ino:
                    continue
                if mode & S_IFMT == S_IFDIR and ino not in listing and ino not in nxt:
                    nxt.append(ino)
        level = nxt
    root_mode = [m for i, m, n in listing[2] if n == b"."][0]
    rootpath = mp.encode() if mp else b"/"
    res = [(rootpath, 2, root_mode)]
    seen = {2}
    stack = [(2, rootpath, 0)]
    # iterative depth-first, entering each directory right after its entry, as the labeler does
    while stack:
        d, path, i = stack.pop()
        ents = [e for e in listing[d] if e[2] not in (b".", b"..") and e[0]]
        while i < len(ents):
            ino, mode, name = ents[i]
            i += 1
            p = (path + b"/" + name) if path != b"/" else b"/" + name
            res.append((p, ino, mode))
            if mode & S_IFMT == S_IFDIR and ino not in seen:
                seen.add(ino)
                stack.append((d, path, i))
                stack.append((ino, p, 0))
                break
    return res


def lookup(fclabel, fc, records, extra=()):
    """fclabel lookup --batch -0 of [(mode, path)] -> [context or None]."""
    data = b"".join(b"0%o %s\0" % (m, p) for m, p in records)
    r = subprocess.run([fclabel, "lookup", "-S", fc] + list(extra) + ["--batch", "-0"], input=data,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines = r.stdout.decode("utf-8", "surrogateescape").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if r.returncode not in (0,) or len(lines) != len(records):
        raise RuntimeError("fclabel lookup failed (exit %d, %d answers for %d records): %s" %
                           (r.returncode, len(lines), len(records), r.stderr.decode()[-500:]))
    return [None if x == "<<none>>" else x for x in lines]


def oracle(path, fc, records, jobs=2):
    """libselinux 3.4's answers (tests/oracle), the records split among jobs processes."""
    n = len(records)
    parts = [records[i * n // jobs:(i + 1) * n // jobs] for i in range(jobs)]
    procs = []
    for part in parts:
        fd, name = tempfile.mkstemp(prefix="oracle-in.", dir=tmpdir())
        with os.fdopen(fd, "wb") as f:
            f.write(b"".join(b"0%o %s\0" % (m, p) for m, p in part))
        procs.append((subprocess.Popen([path, "-0", fc], stdin=open(name, "rb"), stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE), name, len(part)))
    out = []
    for p, name, count in procs:
        so, se = p.communicate()
        os.unlink(name)
        lines = so.decode("utf-8", "surrogateescape").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if p.returncode > 1 or len(lines) != count:
            raise RuntimeError("oracle failed (exit %d, %d answers for %d records): %s" %
                               (p.returncode, len(lines), count, se.decode()[-500:]))
        out += lines
    return [None if x == "<<none>>" else x for x in out]


def label_of(xs):
    v = [val for _w, n, val in xs if n == "security.selinux"]
    return v[0] if v else None


def same_label(stored, ctx):
    """stored value (bytes or None) holds ctx (str), with or without its NUL."""
    if stored is None or isinstance(stored, tuple):
        return False
    c = ctx.encode()
    return stored == c + b"\0" or stored == c


SUMMARY = re.compile(r"fclabel (label|check): (.*): scanned (\d+), (changed|would change|differ) (\d+), "
                     r"unchanged (\d+)(?:, hard links (\d+))?, no label (\d+), conflicts (\d+), "
                     r"errors (\d+), warnings (\d+), ([0-9.]+) s\n?$")


class Checker:
    def __init__(self, name="", maxshow=15):
        self.name = name + ": " if name else ""
        self.failed = 0
        self.maxshow = maxshow

    def check(self, what, problems, detail=None):
        """problems: list of strings (empty: ok)."""
        what = self.name + what
        if not problems:
            print("ok   %s" % what + (" (%s)" % detail if detail else ""))
            return True
        self.failed += 1
        print("FAIL %s: %d problem(s)" % (what, len(problems)))
        for p in problems[:self.maxshow]:
            print("       " + p)
        if len(problems) > self.maxshow:
            print("       ... and %d more" % (len(problems) - self.maxshow))
        return False


def masked(raw, isize):
    """An inode with what a label write may change blanked: i_blocks, i_file_acl, checksums and
    the in-inode attribute area."""
    b = bytearray(raw)
    for lo, hi in ((0x1C, 0x20), (0x68, 0x6C), (0x74, 0x78), (0x7C, 0x7E)):
        b[lo:hi] = b"\0" * (hi - lo)
    if isize > 128:
        b[0x82:0x84] = b"\0\0"
        extra = struct.unpack_from("<H", raw, 0x80)[0]
        start = 128 + extra
        b[start:] = b"\0" * (isize - start)
    return bytes(b)


def same_but_label(rb, ra, isize):
    """masked(rb) == masked(ra), fast."""
    if (rb[:0x1C] != ra[:0x1C] or rb[0x20:0x68] != ra[0x20:0x68] or rb[0x6C:0x74] != ra[0x6C:0x74]
            or rb[0x78:0x7C] != ra[0x78:0x7C] or rb[0x7E:0x80] != ra[0x7E:0x80]):
        return False
    if isize > 128:
        if rb[0x80:0x82] != ra[0x80:0x82]:
            return False
        start = 128 + struct.unpack_from("<H", rb, 0x80)[0]
        return rb[0x84:start] == ra[0x84:start]
    return True


def cmd_verify(a):
    t0 = time.time()
    try:
        return verify(a)
    finally:
        print("     (verify: %.1f s)" % (time.time() - t0))


def verify(a):
    ck = Checker(a.name)
    fclabel = a.fclabel
    mp = a.mp.rstrip("/") if a.mp and a.mp != "/" else ""
    excl = [e.rstrip("/").encode() or b"/" for e in a.exclude]

    def excluded(p):
        for e in excl:
            if p == e or p.startswith(e + b"/") or e == b"/":
                return True
        return False

    B = Image(a.before)
    A = Image(a.after)
    # the tree of the image before; that after is the same when no directory block and no inode
    # (but for its label) changed, which is checked below
    walked = walk(a.before, mp)
    # expectations
    recs = [(m, p) for p, _i, m in walked]
    want = lookup(fclabel, a.fc, recs, ["--base-only"] if a.base_only else [])
    first = {}      # ino -> index of its first path
    exp = {}        # ino -> wanted context or None (the first labeled path decides), only for scanned inodes
    conflicts = []
    n = dict(scanned=0, changed=0, unchanged=0, links=0, nolabel=0)
    changed_paths = []
    skip_subtree = None
    for k, (p, ino, mode) in enumerate(walked):
        if skip_subtree is not None and (p.startswith(skip_subtree + b"/") or skip_subtree == b"/"):
            continue
        skip_subtree = None
        if excluded(p):
            skip_subtree = p
            continue
        n["scanned"] += 1
        raw = B.inode(ino)
        isdir = mode & S_IFMT == S_IFDIR
        if not isdir and Image.links(raw) > 1:
            # the first path that gets a label decides (as in setfiles); one with no label
            # leaves the file to its other names
            if want[k] is None:
                n["nolabel"] += 1
                exp.setdefault(ino, None)
                continue
            if ino in first:
                w0 = want[first[ino]]
                if w0 != want[k]:
                    conflicts.append((walked[first[ino]][0], w0, p, want[k]))
                n["links"] += 1  # another name of a file labeled already
                continue
        first.setdefault(ino, k)
        exp[ino] = want[k]
        if want[k] is None:
            n["nolabel"] += 1
        elif same_label(label_of(B.xattrs_of(ino)), want[k]):
            n["unchanged"] += 1
        else:
            n["changed"] += 1
            changed_paths.append((p, label_of(B.xattrs_of(ino)), want[k]))
    ninodes = len({i for _p, i, _m in walked})
    print("     %d paths, %d inodes walked; expected: %s, conflicts %d" % (
        len(walked), ninodes, ", ".join("%s %d" % kv for kv in n.items()), len(conflicts)))

    # the summary line and stderr
    if a.summary:
        text = open(a.summary, encoding="utf-8", errors="surrogateescape").read()
        # (summaries go to stderr: NAME.out's summary is in NAME.err)
        if a.summary.endswith(".out") and os.path.exists(a.summary[:-4] + ".err"):
            text += open(a.summary[:-4] + ".err", encoding="utf-8", errors="surrogateescape").read()
        lines = [l for l in text.splitlines() if SUMMARY.match(l + "\n")]
        probs = []
        if len(lines) != 1:
            probs.append("expected one summary line, found %d in %r" % (len(lines), text[-300:]))
        else:
            m = SUMMARY.match(lines[0] + "\n")
            got = dict(scanned=int(m.group(3)), changed=int(m.group(5)), unchanged=int(m.group(6)),
                       links=int(m.group(7) or 0), nolabel=int(m.group(8)),
                       conflicts=int(m.group(9)), errors=int(m.group(10)),
                       warnings=int(m.group(11)))
            wantn = dict(n, conflicts=len(conflicts), errors=0, warnings=0)
            for k in wantn:
                if got[k] != wantn[k]:
                    probs.append("%s: summary says %d, expected %d" % (k, got[k], wantn[k]))
            if m.group(2) != a.image_name and a.image_name:
                probs.append("summary names %r, not %r" % (m.group(2), a.image_name))
        ck.check("summary line counts (%s)" % a.mode, probs)
    if a.stderr is not None:
        err = open(a.stderr, encoding="utf-8", errors="surrogateescape").read()
        nconf = len(re.findall(r"hard link conflict", err))
        probs = []
        if nconf != len(conflicts):
            probs.append("%d 'hard link conflict' messages on stderr, expected %d: %r" % (
                nconf, len(conflicts), err[-400:]))
        for p0, w0, p1, w1 in conflicts:
            if fsd(p1) not in err or fsd(p0) not in err:
                probs.append("conflict of %s and %s not named on stderr" % (show(p0), show(p1)))
        other = [l for l in err.splitlines() if l and "hard link conflict" not in l
                 and not l.startswith(" ") and "--strict" not in l and not SUMMARY.match(l + "\n")]
        if a.mode != "check" and other:
            probs.append("unexpected stderr: %r" % other[:5])
        ck.check("stderr reports exactly the hard link conflicts", probs,
                 "%d conflict(s)" % len(conflicts))
    if a.check_out is not None:
        text = open(a.check_out, "rb").read()
        # one line a file: a name that needs it is quoted, with C escapes (git's core.quotePath)
        recs_re = re.compile(rb"(.*?)\thas (.*?)\twants (.*?)\t([^\t\n]+:\d+)$")
        got, probs = [], []
        for line in text.split(b"\n")[:-1]:
            m = recs_re.match(line)
            if not m:
                probs.append("unparsable check output line %r" % line[:100])
                break
            p = m.group(1)
            if p.startswith(b'"') and p.endswith(b'"'):
                p = codecs.escape_decode(p[1:-1])[0]
            got.append((p, m.group(2), m.group(3)))
        wantrecs = sorted((p, (fsd(h.rstrip(b"\0").split(b"\0")[0]) if h else "(none)").encode(),
                           w.encode()) for p, h, w in changed_paths)
        if sorted(got) != wantrecs:
            gs, ws = set(got), set(wantrecs)
            for r in sorted(ws - gs)[:10]:
                probs.append("missing: %s has %s wants %s" % (show(r[0]), fsd(r[1]), fsd(r[2])))
            for r in sorted(gs - ws)[:10]:
                probs.append("unexpected: %s has %s wants %s" % (show(r[0]), fsd(r[1]), fsd(r[2])))
            if not probs:
                probs.append("%d lines, expected %d" % (len(got), len(wantrecs)))
        ck.check("fclabel check lists exactly the files whose label differs", probs,
                 "%d line(s)" % len(got))
    if a.json:
        probs = []
        try:
            j = json.load(open(a.json, encoding="utf-8"))
            ev = j.get("events", [])
            kind = {"label": "changed", "dry": "would-change", "check": "differs"}.get(a.mode, "changed")
            ch = [e["path"] for e in ev if e.get("event") == kind]
            # a JSON string is Unicode: a UTF-8 file name must come back as itself
            wantp, odd = [], 0
            for p, _h, _w in changed_paths:
                try:
                    wantp.append(p.decode("utf-8"))
                except UnicodeDecodeError:
                    odd += 1
            missing = sorted(set(wantp) - set(ch))
            if len(ch) != len(changed_paths) or missing:
                probs.append("%d '%s' events, expected %d; paths missing or garbled: %s; "
                             "events not expected: %s" % (
                                 len(ch), kind, len(changed_paths), [show(x) for x in missing[:4]],
                                 [show(x) for x in sorted(set(ch) - set(wantp))[:4]]))
            nc = len([e for e in ev if e.get("event") == "conflict"])
            if nc != len(conflicts):
                probs.append("%d conflict events, expected %d" % (nc, len(conflicts)))
            sm = j.get("summary", {})
            for k, jk in (("scanned", "scanned"), ("changed", "differ"), ("unchanged", "unchanged"),
                          ("links", "hard_links"), ("nolabel", "no_label")):
                if sm.get(jk) != n[k]:
                    probs.append("summary.%s = %r, expected %d" % (jk, sm.get(jk), n[k]))
            if sm.get("conflicts") != len(conflicts):
                probs.append("summary.conflicts = %r, expected %d" % (sm.get("conflicts"), len(conflicts)))
            wmap = {fsd(p): w for p, _h, w in changed_paths}
            for e in ev:
                if e.get("event") == kind:
                    wctx = wmap.get(e["path"])
                    if wctx is not None and e.get("wants") != wctx:
                        probs.append("event for %s wants %r, expected %r" % (show(e["path"]),
                                                                             e.get("wants"), wctx))
                        break
        except (ValueError, KeyError, TypeError) as ex:
            probs.append("not the expected JSON: %s" % ex)
        ck.check("--json report: events and totals", probs)

    if a.mode in ("dry", "check"):
        return ck.failed

    # labels
    probs = []
    nlab = 0
    dump = open(a.dump, "wb") if a.dump else None
    for k, (p, ino, mode) in enumerate(walked):
        if ino not in exp or first.get(ino) != k:
            continue
        rb, ra = B.inode(ino), A.inode(ino)
        try:
            lb, la = label_of(B.xattrs_of(ino)), label_of(A.xattrs_of(ino))
        except ValueError as ex:
            probs.append("%s (inode %d): %s" % (show(p), ino, ex))
            continue
        w = exp[ino]
        if dump:
            dump.write(b"%o\t%s\t%s\n" % (mode, p, la.rstrip(b"\0") if isinstance(la, bytes) else b"-"))
        if w is None or same_label(lb, w):
            if la != lb:
                probs.append("%s (inode %d): wants %s, had %r, must be left alone, has %r" % (
                    show(p), ino, w or "<<none>>", lb, la))
        elif la != w.encode() + b"\0":
            probs.append("%s (inode %d, mode 0%o): has %r, wants %r" % (show(p), ino, mode, la, w))
        else:
            nlab += 1
    if dump:
        dump.close()
    ck.check("every file has the label fclabel lookup gives its (first) path, or is left alone",
             probs, "%d written labels verified, %d inodes" % (nlab, len(exp)))
    # excluded inodes (never reached by a scanned path) are untouched
    probs = []
    for p, ino, mode in walked:
        if ino in exp:
            continue
        if label_of(B.xattrs_of(ino)) != label_of(A.xattrs_of(ino)):
            probs.append("%s (inode %d) is excluded but its label changed" % (show(p), ino))
    if excl:
        ck.check("excluded subtrees are untouched", probs,
                 "%d excluded inodes" % len({i for _p, i, _m in walked if i not in exp}))

    # every inode: only i_blocks / i_file_acl / checksums / attribute area may change
    probs, attr_probs, blk_probs = [], [], []
    ea_before, ea_after = {}, {}
    for ino in range(1, A.inodes_count + 1):
        rb, ra = B.inode(ino), A.inode(ino)
        inuse_b = Image.mode(rb) and Image.links(rb)
        inuse_a = Image.mode(ra) and Image.links(ra)
        if rb == ra:
            fb = B.file_acl(rb)
            if fb and inuse_b:
                ea_before.setdefault(fb, []).append(ino)
                ea_after.setdefault(fb, []).append(ino)
                # the inode is the same, but its attribute block may have been rewritten
                try:
                    xb = [(n_, v) for _w, n_, v in B.xattrs_of(ino) if n_ != "security.selinux"]
                    xa = [(n_, v) for _w, n_, v in A.xattrs_of(ino) if n_ != "security.selinux"]
                except ValueError as ex:
                    attr_probs.append("inode %d: %s" % (ino, ex))
                    continue
                if sorted(xb) != sorted(xa):
                    attr_probs.append("inode %d: other attributes changed: %r -> %r" % (ino, xb[:4], xa[:4]))
            continue
        if not same_but_label(rb, ra, A.isize):
            mb, ma = masked(rb, A.isize), masked(ra, A.isize)
            diff = [i for i in range(A.isize) if mb[i] != ma[i]]
            probs.append("inode %d: bytes other than blocks/file_acl/checksum/xattrs changed at offsets %s"
                         % (ino, diff[:12]))
        try:
            xb = [(n_, v) for _w, n_, v in B.xattrs_of(ino) if n_ != "security.selinux"]
            xa = [(n_, v) for _w, n_, v in A.xattrs_of(ino) if n_ != "security.selinux"]
        except ValueError as ex:
            attr_probs.append("inode %d: %s" % (ino, ex))
            continue
        if sorted(xb) != sorted(xa):
            attr_probs.append("inode %d: other attributes changed: %r -> %r" % (ino, xb[:4], xa[:4]))
        if ino not in exp:
            probs.append("inode %d changed but no walked path reaches it" % ino)
        fb, fa = B.file_acl(rb), A.file_acl(ra)
        per = A.cluster // 512
        if Image.iblocks(ra) - Image.iblocks(rb) != (per if fa else 0) - (per if fb else 0):
            blk_probs.append("inode %d: i_blocks %d -> %d but file_acl %d -> %d" % (
                ino, Image.iblocks(rb), Image.iblocks(ra), fb, fa))
        if fb and inuse_b:
            ea_before.setdefault(fb, []).append(ino)
        if fa and inuse_a:
            ea_after.setdefault(fa, []).append(ino)
    ck.check("inodes: owner, mode, times, size, flags, data pointers unchanged", probs)
    ck.check("other extended attributes (user.*, capability, ACLs, system.data) unchanged", attr_probs)
    ck.check("i_blocks grows or shrinks exactly with the attribute block", blk_probs)

    # attribute blocks: refcount = number of inodes pointing at it
    probs = []
    for blk, inos in sorted(ea_after.items()):
        magic, ref, nb = A.ea_block_header(blk)
        if magic != EA_MAGIC or nb != 1:
            probs.append("EA block %d: magic %#x, h_blocks %d" % (blk, magic, nb))
        elif ref != len(inos):
            probs.append("EA block %d: h_refcount %d but %d inodes point to it" % (blk, ref, len(inos)))
        elif ref > REFCOUNT_MAX:
            probs.append("EA block %d: h_refcount %d > %d" % (blk, ref, REFCOUNT_MAX))
    ck.check("attribute blocks: h_refcount equals the inodes pointing at each", probs,
             "%d blocks" % len(ea_after))

    # blocks: nothing but metadata and attribute blocks changed
    meta = A.metadata_blocks()
    allowed = meta | set(ea_before) | set(ea_after)
    probs = []
    chunk = 1 << 20
    with open(a.before, "rb") as fb_, open(a.after, "rb") as fa_:
        off = 0
        while True:
            x, y = fb_.read(chunk), fa_.read(chunk)
            if not x and not y:
                break
            if x != y:
                for i in range(0, max(len(x), len(y)), A.bs):
                    if x[i:i + A.bs] != y[i:i + A.bs]:
                        blk = (off + i) // A.bs
                        if blk not in allowed:
                            probs.append("block %d changed (not metadata, not an attribute block)" % blk)
            off += chunk
    ck.check("no data or directory block changed", probs)

    # block accounting
    delta = B.gd_free_blocks - A.gd_free_blocks
    newblocks = len(set(ea_after) - set(ea_before)) - len(set(ea_before) - set(ea_after))
    ck.check("used blocks grew by exactly the attribute blocks added", [] if delta == newblocks else [
        "free blocks (group descriptors) fell by %d; attribute blocks went from %d to %d" % (
            delta, len(ea_before), len(ea_after))], "%+d blocks" % delta)
    if a.shared:
        # 128-byte inodes: inodes whose only attribute is the label, labeled by this run
        groups = {}
        for ino, w in exp.items():
            ra = A.inode(ino)
            xs = A.xattrs_of(ino)
            if w is None or len(xs) != 1 or B.inode(ino) == ra:
                continue
            groups.setdefault(w, set()).add(A.file_acl(ra))
        counts = {}
        for ino, w in exp.items():
            ra = A.inode(ino)
            if w is not None and len(A.xattrs_of(ino)) == 1 and B.inode(ino) != ra:
                counts[w] = counts.get(w, 0) + 1
        probs = []
        slack = 1 if a.shared == "relabel" else 0
        for w, blks in sorted(groups.items()):
            limit = math.ceil(counts[w] / REFCOUNT_MAX) + slack
            if len(blks) > limit:
                probs.append("%d files labeled %s use %d blocks (at most %d)" % (counts[w], w, len(blks), limit))
            if 0 in blks:
                probs.append("a file labeled %s has no attribute block" % w)
        total = sum(counts.values())
        ck.check("128-byte inodes: files with the same label share attribute blocks", probs,
                 "%d label-only files, %d labels, %d blocks" % (total, len(groups),
                                                                 sum(len(b) for b in groups.values())))
        if total >= 50:
            ck.check("the image grew by far fewer blocks than files labeled",
                     [] if delta * 10 <= total else ["%d blocks for %d files" % (delta, total)],
                     "%d blocks for %d files" % (delta, total))
    # debugfs agrees with this reader on a sample
    sample = [i for _p, i, _m in walked][:: max(1, len(walked) // a.sample)][:a.sample]
    sample = sorted(set(sample) | {i for i in list(exp)[:50]})
    out = debugfs(a.after, [b"ea_get -x <%d> security.selinux\nstat <%d>" % (i, i) for i in sample])
    probs = []
    parts = re.split(rb"debugfs: ea_get -x <(\d+)> security.selinux\n", out)
    for k in range(1, len(parts), 2):
        ino = int(parts[k])
        body = parts[k + 1]
        m = re.match(rb"security\.selinux \((\d+)\) = ((?:[0-9a-f]{2} )*)\n", body)
        dv = bytes.fromhex(m.group(2).decode()) if m else None
        ra = A.inode(ino)
        mine = label_of(A.xattrs_of(ino))
        if dv != mine:
            probs.append("inode %d: debugfs reads %r, imgtool %r" % (ino, dv, mine))
        m = re.search(rb"File ACL: (\d+)", body)
        if not m or int(m.group(1)) != A.file_acl(ra):
            probs.append("inode %d: debugfs File ACL %r, imgtool %d" % (ino, m and m.group(1), A.file_acl(ra)))
        m = re.search(rb"Links: (\d+)\s+Blockcount: (\d+)", body)
        if not m or (int(m.group(1)), int(m.group(2))) != (Image.links(ra), Image.iblocks(ra)):
            probs.append("inode %d: debugfs links/blockcount %r" % (ino, m and m.groups()))
    if len(parts) // 2 != len(sample):
        probs.append("debugfs answered %d of %d" % (len(parts) // 2, len(sample)))
    ck.check("debugfs agrees with this reader (labels, File ACL, i_blocks) on a sample", probs,
             "%d inodes" % len(sample))

    if a.golden:
        # lines "PATH<TAB>CONTEXT": the label each listed path must have
        gold = {}
        for line in open(a.golden, "rb"):
            line = line.rstrip(b"\n")
            if not line or line.startswith(b"#"):
                continue
            pth, ctx = line.split(b"\t")
            gold[pth] = ctx
        probs = []
        have = {p: (i, m) for p, i, m in walked}
        for pth, ctx in gold.items():
            if pth not in have:
                probs.append("%s: listed, but not in the image" % show(pth))
                continue
            lab = label_of(A.xattrs_of(have[pth][0]))
            if lab != ctx + b"\0":
                probs.append("%s (mode 0%o): has %r, golden %s" % (show(pth), have[pth][1], lab, fsd(ctx)))
        ck.check("labels equal the golden file %s" % os.path.basename(a.golden), probs,
                 "%d paths" % len(gold))
    if a.oracle:
        ans = oracle(a.oracle, a.fc, recs)
        probs = []
        for k, (p, ino, mode) in enumerate(walked):
            if ans[k] != want[k]:
                probs.append("%s (mode 0%o): fclabel lookup %s, libselinux 3.4 %s" % (
                    show(p), mode, want[k] or "<<none>>", ans[k] or "<<none>>"))
                continue
            if first.get(ino) == k and ino in exp:
                la = label_of(A.xattrs_of(ino))
                w = ans[k]
                if w is not None and la != w.encode() + b"\0":
                    probs.append("%s: image has %r, libselinux 3.4 %s" % (show(p), la, w))
        ck.check("libselinux 3.4 (tests/oracle) agrees with every label in the image", probs,
                 "%d paths" % len(walked))
    return ck.failed


def cmd_walk(a):
    img = Image(a.img)
    out = sys.stdout.buffer
    for p, ino, mode in walk(a.img, a.mp.rstrip("/") if a.mp != "/" else ""):
        raw = img.inode(ino)
        lab = label_of(img.xattrs(raw))
        out.write(b"0%o\t%d\t%d\t%d\t%s\t%s\n" % (mode, ino, Image.links(raw), img.file_acl(raw),
                                                   lab.rstrip(b"\0") if isinstance(lab, bytes) else b"-", p))
    return 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("verify")
    v.add_argument("--before", required=True)
    v.add_argument("--after", required=True)
    v.add_argument("--fc", required=True)
    v.add_argument("--base-only", action="store_true")
    v.add_argument("--mp", default="")
    v.add_argument("--exclude", action="append", default=[])
    v.add_argument("--name", default="")
    v.add_argument("--mode", default="label", choices=["label", "dry", "check"])
    v.add_argument("--summary")
    v.add_argument("--image-name", default="")
    v.add_argument("--stderr")
    v.add_argument("--check-out")
    v.add_argument("--json")
    v.add_argument("--shared", choices=["fresh", "relabel"])
    v.add_argument("--sample", type=int, default=300)
    v.add_argument("--golden")
    v.add_argument("--oracle")
    v.add_argument("--dump")
    v.add_argument("--fclabel", default=os.environ.get("FCLABEL", "fclabel"))
    w = sub.add_parser("walk")
    w.add_argument("img")
    w.add_argument("--mp", default="")
    f = sub.add_parser("samefs")
    f.add_argument("a")
    f.add_argument("b")
    a = ap.parse_args()
    if a.cmd == "verify":
        return min(cmd_verify(a), 100)
    if a.cmd == "samefs":
        return cmd_samefs(a)
    return cmd_walk(a)


def cmd_samefs(a):
    """Whether two images hold the same bytes but for their journals' (written in place, the
    labels pass through the journal; a copy does not use it): 0, or 1 naming the first block
    that differs."""
    A, B = Image(a.a), Image(a.b)
    skip = A.journal_blocks() | B.journal_blocks()
    with open(a.a, "rb") as fa, open(a.b, "rb") as fb:
        blk = 0
        while True:
            x, y = fa.read(A.bs), fb.read(A.bs)
            if not x and not y:
                return 0
            if x != y and blk not in skip:
                print("block %d differs" % blk)
                return 1
            blk += 1


if __name__ == "__main__":
    sys.exit(main())
PYEOF
