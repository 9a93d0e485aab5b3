# EROFS data as erofs-utils' own checker reads it (issue 33's proof): for images Debian's
# mkfs.erofs builds in each of its shapes (uncompressed, chunked, no inline data; compact inodes
# where the owner fits, extended ones where it does not; lz4 and lz4hc; big pclusters, legacy
# full indexes, tail packing, fragments, dedupe, shared attributes), `fsck.erofs --extract`
# writes every file out (and so finds the image sound), and fclabel's reader (tests/erofscat)
# gives the same bytes for every regular file; fclabel dump of the image lists each path with
# the source tree's mode, owner and group, and the extracted file's (as root: fsck.erofs keeps
# owners only then; set-ID bits aside: it clears them). Symlink targets as extracted.
# (Debian's fsck.erofs 1.5 extracts no xattrs: the labels are t_erofs's and t_dump's to check.)
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/imglib.sh"
command -v mkfs.erofs >/dev/null 2>&1 || skip "mkfs.erofs is not installed (Debian package erofs-utils)"
command -v fsck.erofs >/dev/null 2>&1 || skip "fsck.erofs is not installed (Debian package erofs-utils)"
fsck.erofs --help 2>&1 | grep -q -- --extract || skip "this fsck.erofs has no --extract (erofs-utils 1.5 or later)"
cd "$OUT" || exit 1
[ -x "$TOP/tests/erofscat" ] || make -s -C "$TOP" tests/erofscat >/dev/null 2>&1 ||
	bad "cannot build tests/erofscat"

# a tree of every shape the reader meets: sizes around block, pcluster and extent boundaries,
# compressible text, random bytes, mixed runs, files repeating others (dedupe, fragments),
# empty files and directories, many names in one directory, deep paths, symlinks short and
# long, hard links, a FIFO, modes and owners of all kinds
rm -rf tree && mkdir tree
"$PY" - tree "$(id -u)" <<'PYEOF'
import os, random, sys
root, uid = sys.argv[1], int(sys.argv[2])
r = random.Random(330)
words = ["".join(r.choice("abcdefghijklmnop") for _ in range(r.randrange(2, 10))) for _ in range(800)]
def text(n): return (" ".join(r.choice(words) for _ in range(n // 3 + 1)))[:n].encode()
def rand(n): return bytes(r.randrange(256) for _ in range(n))
def mixed(n): return b"".join(rand(2000) if k % 3 == 0 else text(5000) for k in range(n // 6000 + 1))[:n]
os.makedirs(root + "/d/e/e/p/e/r", exist_ok=True)
os.makedirs(root + "/empty", exist_ok=True)
os.makedirs(root + "/many", exist_ok=True)
sizes = [0, 1, 511, 512, 4095, 4096, 4097, 8191, 8192, 12288, 65535, 65536, 65537, 131072,
         262143, 262144, 262145, 300000, 1048577]
n = 0
for kind, fn in (("t", text), ("r", rand), ("m", mixed)):
    for s in sizes:
        p = "%s/%s%d" % (root, kind, s)
        open(p, "wb").write(fn(s))
        n += 1
# the same bytes again (dedupe), and tails shared (fragments)
base = text(70000)
for k in range(4):
    open("%s/dup%d" % (root, k), "wb").write(base)
    open("%s/tail%d" % (root, k), "wb").write(text(9000 + k) + base[-3000:])
for i in range(400):
    open("%s/many/name-%04d-%s" % (root, i, "x" * (i % 40)), "wb").write(text(i * 7 % 3000))
open(root + "/d/e/e/p/e/r/leaf", "wb").write(text(5000))
os.symlink("t4096", root + "/link")
os.symlink("/" + "long/" * 150 + "target", root + "/longlink")
os.link(root + "/t4097", root + "/t4097.hard")
os.mkfifo(root + "/fifo")
for i, m in enumerate([0o4755, 0o2750, 0o1777, 0o600, 0o444, 0o000]):
    p = "%s/mode%d" % (root, i)
    open(p, "wb").write(text(100 * i))
    os.chmod(p, m)
if uid == 0:
    os.chown(root + "/mode1", 1000, 1001)
    os.chown(root + "/t4095", 70000, 70001)   # past 16 bits: an extended inode
    os.chown(root + "/many", 2000, 0)
PYEOF
(cd tree && find . -type f | sed 's|^\.||' | LC_ALL=C sort) >files
nf=$(wc -l <files)

# nosid DUMP N: its first N fields, the mode without set-user-ID and set-group-ID
nosid() {
	"$PY" -c 'import sys
n = int(sys.argv[2])
for l in open(sys.argv[1]):
    f = l.rstrip("\n").split("\t")
    f[1] = "0%o" % (int(f[1], 8) & ~0o6000)
    print("\t".join(f[:n]))' "$1" "$2"
}
run tree_dump "$FCLABEL" dump tree
cut -f 1-4 tree_dump.out >tree.cut

for shape in "plain:" "chunked:--chunksize=4096" "noinline:-Enoinline_data" \
	"shared:-x1" \
	"lz4:-zlz4" "lz4hc:-zlz4hc" "lz4hc9:-zlz4hc,9" "big:-zlz4 -C65536" \
	"aosp:-zlz4hc,9 -C262144" "legacy:-zlz4hc -Elegacy-compress" \
	"tail:-zlz4 -Eztailpacking" "frag:-zlz4hc -Efragments" "dedupe:-zlz4hc -Ededupe" \
	"all:-zlz4hc -C65536 -Eztailpacking,fragments,dedupe"; do
	name=${shape%%:*} opts=${shape#*:}
	rm -rf "x.$name" "e.$name"
	# shellcheck disable=SC2086
	if ! mkfs.erofs --quiet $opts "e.$name" tree >"mkfs.$name.log" 2>&1; then
		echo "     ($name: this mkfs.erofs cannot build it ($opts): $(tail -n 1 "mkfs.$name.log"))"
		continue
	fi
	if ! fsck.erofs --extract="$OUT/x.$name" "e.$name" >"fsck.$name.log" 2>&1; then
		bad "$name ($opts): fsck.erofs --extract fails: $(tail -n 2 "fsck.$name.log" | tr '\n' '|')"
		continue
	fi
	if "$TOP/tests/erofscat" -d "x.$name" "e.$name" <files >cat.$name.out 2>&1; then
		ok "$name ($opts): the bytes of all $nf files as fsck.erofs extracts them"
	else
		bad "$name ($opts): $(wc -l <cat.$name.out) files read otherwise than fsck.erofs: $(head -n 4 cat.$name.out | tr '\n' '|')"
	fi
	# modes, owners and the paths themselves (labels aside: none here): the image's dump is the
	# source tree's, whole; and the extracted tree's, but for set-user-ID and set-group-ID
	# (fsck.erofs sets the owner after the mode, and chown clears them)
	run "dump.$name" "$FCLABEL" dump "e.$name"
	run "dumpx.$name" "$FCLABEL" dump "x.$name"
	cut -f 1-4 "dump.$name.out" >a.cut
	if [ "$(wc -l <a.cut)" -gt "$nf" ] && cmp -s a.cut tree.cut; then
		ok "$name: fclabel dump gives every path's mode, owner and group as the source tree has them ($(wc -l <a.cut) paths)"
	else
		bad "$name: fclabel dump and the source tree differ: $(diff tree.cut a.cut | head -n 6 | tr '\n' '|')"
	fi
	if [ "$(id -u)" = 0 ]; then
		nosid "dump.$name.out" 4 >a.cut
		nosid "dumpx.$name.out" 4 >b.cut
		what="mode (less set-ID bits), owner and group"
	else
		nosid "dump.$name.out" 2 | grep -v '^/	' >a.cut
		nosid "dumpx.$name.out" 2 | grep -v '^/	' >b.cut
		what="mode (less set-ID bits; not root: fsck.erofs gives the files to whoever runs it)"
	fi
	if [ "$(wc -l <a.cut)" -gt "$nf" ] && cmp -s a.cut b.cut; then
		ok "$name: fclabel dump gives every path's $what as extracted ($(wc -l <a.cut) paths)"
	else
		bad "$name: fclabel dump and the extracted tree differ: $(diff a.cut b.cut | head -n 6 | tr '\n' '|')"
	fi
	# symlink targets as extracted
	(cd "x.$name" && readlink link longlink) >links.x 2>&1
	(cd tree && readlink link longlink) >links.t 2>&1
	if cmp -s links.x links.t; then ok "$name: symlink targets as extracted"
	else bad "$name: symlinks extracted otherwise: $(diff links.t links.x | head -n 4 | tr '\n' '|')"; fi
done
finish
