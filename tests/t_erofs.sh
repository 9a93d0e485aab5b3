# EROFS images, read-only (issue 33): fclabel check reads an EROFS image built by Debian's
# mkfs.erofs (uncompressed, -zlz4, -zlz4hc; labeled with --file-contexts or not; shared
# attributes with -x1; big pclusters, full indexes, ztailpacking, and fragments and dedupe where
# this mkfs.erofs makes them) and gives the report an ext4 image of the same tree, labeled the
# same way, gets, every file's data read as the tree's; label and relabel refuse it (exit 2, the
# image unchanged byte for byte), naming mkfs.erofs --file-contexts; truncated and corrupted
# images (a wrong superblock checksum too) get a clear error naming the image, no crash and no
# hang. An image in Android's sparse format is read the same. (Images of a newer erofs-utils:
# LZMA, DEFLATE, Zstandard, fragments, dedupe, compressed directories: t_erofs_fixtures.)
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/imglib.sh"
need_image_tools
command -v mkfs.erofs >/dev/null 2>&1 || skip "mkfs.erofs is not installed (Debian package erofs-utils)"
cd "$OUT" || exit 1

small_tree tree
# more than one directory block (4 KiB) of names, a hard link, a FIFO, a file big enough for
# blocks of its own besides an inline tail, and an owner past 16 bits (an extended inode)
mkdir tree/many
i=0
while [ $i -lt 300 ]; do : >"tree/many/a-rather-long-file-name-number-$i"; i=$((i + 1)); done
ln tree/etc/passwd tree/etc/passwd.hard
mkfifo tree/data/fifo
"$PY" -c 'import sys; open(sys.argv[1], "wb").write(bytes(range(256)) * 50)' tree/data/big
chown 70000:70001 tree/data/f3 2>/dev/null || true
# text that compresses, of sizes around block and extent boundaries, and a file of compressible
# and random runs (the random ones stored as PLAIN lclusters)
mkdir tree/text
"$PY" - tree/text <<'PYEOF'
import random, sys
r = random.Random(33)
words = ["".join(r.choice("abcdefghij") for _ in range(r.randrange(2, 9))) for _ in range(500)]
for i, sz in enumerate([100, 4095, 4096, 4097, 9000, 65536, 300000]):
    open("%s/t%d" % (sys.argv[1], i), "w").write(" ".join(r.choice(words) for _ in range(sz // 4))[:sz])
open(sys.argv[1] + "/mixed", "wb").write(b"".join(
    bytes(r.randrange(256) for _ in range(3000)) if k % 2 else b"abc" * 2000 for k in range(30)))
# for dedupe and fragments: copies, a prefix of another file, files of one repeated block, of
# exactly a block and of many pclusters, and tiny ones
t5 = open(sys.argv[1] + "/t5", "rb").read()
for name, data in [("dup5", t5), ("half5", t5[:30000]), ("blocks", t5[:4096] * 40),
                   ("one", b"x"), ("empty", b""), ("exact", t5[5000:9096])]:
    open("%s/%s" % (sys.argv[1], name), "wb").write(data)
PYEOF
small_policy fc
# a policy under which every label of /data differs
sed 's/data_t/data2_t/; s/data_even_t/data_even2_t/' fc >fc2

# mkfs.erofs NAME OPTIONS...: e.NAME from tree
mkero() {
	_n=$1
	shift
	rm -f "e.$_n"
	if mkfs.erofs "$@" "e.$_n" tree >"mkfs.$_n.log" 2>&1; then
		return 0
	fi
	bad "mkfs.erofs $* failed: $(tail -n 2 "mkfs.$_n.log" | tr '\n' '|')"
	return 1
}
for z in plain lz4 lz4hc; do
	case $z in plain) zo= ;; *) zo=-z$z ;; esac
	mkero "$z.none" $zo
	mkero "$z.lab" $zo --file-contexts=fc
done
mkero shared.lab -x1 --file-contexts=fc
# full (8-byte) lcluster indexes instead of compact ones
mkero full.lab -zlz4hc -E legacy-compress --file-contexts=fc
# big pclusters (several blocks compressed together): 64 KiB, and AOSP's 256 KiB with lz4hc
mkero big.lab -zlz4 -C65536 --file-contexts=fc
mkero aosp.lab -zlz4hc -C262144 --file-contexts=fc
mkero bigfull.lab -zlz4hc -C65536 -E legacy-compress --file-contexts=fc
# the last pcluster inline after the indexes (ztailpacking): small pclusters, big ones, full
# indexes; with fragments and dedupe too where this mkfs.erofs has them (1.6 on; 1.5 takes the
# options and leaves them out)
mkero ztail.lab -zlz4 -Eztailpacking --file-contexts=fc
mkero ztailbig.lab -zlz4hc -Eztailpacking -C65536 --file-contexts=fc
mkero ztailfull.lab -zlz4hc -Eztailpacking -E legacy-compress --file-contexts=fc
mkero tfd.lab -zlz4hc -Eztailpacking,fragments,dedupe -C16384 --file-contexts=fc
mkero frag.lab -zlz4 -Efragments --file-contexts=fc
mkero dedupe.lab -zlz4hc -Ededupe -C65536 --file-contexts=fc
# the ext4 reference: the same tree, labeled by fclabel with the same policy
mkimg e4.none tree 8M -t ext4 -I 256 || finish
cp e4.none e4.lab
run e4label "$FCLABEL" label e4.lab -S fc -a /
expect_rc "ext4 reference labeled" 0

# check's list (sorted, without ext4's lost+found) and exit status
check_list() { # IMG FC NAME
	run "$3" "$FCLABEL" check "$1" -S "$2" -a /
	grep -v '^/lost+found' "$OUT/$3.out" | LC_ALL=C sort >"$OUT/$3.list"
	echo "$rc"
}
ZALL="plain lz4 lz4hc shared full big aosp bigfull ztail ztailbig ztailfull tfd frag dedupe"
for fcn in fc fc2; do
	for state in none lab; do
		want=$(check_list e4.$state $fcn e4.$state.$fcn)
		for z in $ZALL; do
			[ -f e.$z.$state ] || continue
			got=$(check_list e.$z.$state $fcn e.$z.$state.$fcn)
			if [ "$got" = "$want" ] && cmp -s e4.$state.$fcn.list e.$z.$state.$fcn.list; then
				ok "check $z ($state, $fcn): as ext4 (exit $got, $(wc -l <e.$z.$state.$fcn.list) differing)"
			else
				bad "check $z ($state, $fcn): exit $got (ext4 $want); $(diff e4.$state.$fcn.list e.$z.$state.$fcn.list | head -n 6 | tr '\n' '|')"
			fi
		done
	done
done
# every file is read, hard links counted once; the JSON report is the ext4 one's (validated
# against the schema with the suite's other reports)
run sum "$FCLABEL" check e.lz4hc.lab -S fc -a / --json check.e.json
expect_rc "check of a labeled lz4hc image" 0
expect_match "its summary" "$(tail -n 1 sum.err)" "*scanned 336, differ 0, unchanged 335, hard links 1, no label 0,*errors 0, warnings 0*"
# every regular file's bytes as the reader gives them (tests/erofscat) are the tree's
[ -x "$TOP/tests/erofscat" ] || make -s -C "$TOP" tests/erofscat >/dev/null 2>&1 ||
	bad "cannot build tests/erofscat"
(cd tree && find . -type f | sed 's|^\.||' | LC_ALL=C sort) >files
n=$(wc -l <files)
for z in $ZALL; do
	if "$TOP/tests/erofscat" -d tree e.$z.lab <files >cat.$z.out 2>&1; then
		ok "$z: the data of all $n files read as the tree's"
	else
		bad "$z: files read wrong: $(head -n 4 cat.$z.out | tr '\n' '|')"
	fi
done
# the labels as the reader gives them: what --file-contexts stored
expect_eq "the label of /etc/passwd" "$("$TOP/tests/erofscat" -x security.selinux e.lz4.lab /etc/passwd)" \
	"system_u:object_r:etc_t:s0"
"$TOP/tests/erofscat" -x security.selinux e.lz4.none /etc/passwd >/dev/null 2>&1
expect_eq "an unlabeled image: no security.selinux (exit 3)" "$?" 3
# Long xattr name prefixes (INCOMPAT_XATTR_PREFIXES, erofs-utils 1.7): Debian's mkfs.erofs
# 1.5 writes none, so they are made here from a labeled image: a prefix table appended (its
# records at xattr_prefix_start * 4: a 16-bit length, the short prefix's index, the infix) and
# each security.selinux entry turned to name prefix 0 (index 0x80). Prefix "security." + "":
# the same labels. Prefix "security." + "selinux" with the entries' names made empty: the value
# then begins with the old name's bytes, "selinux" and the label.
# resum IMG: the superblock's checksum (crc32c from byte 1024 to the end of its block, the field
# read as 0; COMPAT_SB_CHKSUM) made right again after a change
resum() { "$PY" "$TOP/tests/erofssum.py" "$1"; } # IMG
longpfx() { # IN OUT INFIX
	"$PY" - "$@" <<'PYEOF'
import struct, sys
src, dst, infix = sys.argv[1], sys.argv[2], sys.argv[3].encode()
b = bytearray(open(src, "rb").read())
bs = 1 << b[1024 + 12]
n = 0
pat = b"selinux"
i = b.find(pat)
while i >= 0:
    e = i - 4
    if e >= 0 and b[e] == 7 and b[e + 1] == 6:
        b[e + 1] = 0x80
        if infix:
            vs = struct.unpack_from("<H", b, e + 2)[0]
            b[e] = 0
            struct.pack_into("<H", b, e + 2, vs + 7)
        n += 1
    i = b.find(pat, i + 1)
start = len(b)
rec = struct.pack("<HB", 1 + len(infix), 6) + infix
b += rec + bytes(bs - len(rec))
struct.pack_into("<I", b, 1024 + 80, struct.unpack_from("<I", b, 1024 + 80)[0] | 0x40)
b[1024 + 91] = 1
struct.pack_into("<I", b, 1024 + 92, start // 4)
struct.pack_into("<I", b, 1024 + 36, len(b) // bs)
open(dst, "wb").write(b)
print(n)
PYEOF
}
n=$(longpfx e.plain.lab e.pfx0 "") && resum e.pfx0
run pfx0 "$FCLABEL" check e.pfx0 -S fc -a /
expect_rc "long prefix security.+'' ($n entries): every label as before" 0
n=$(longpfx e.plain.lab e.pfx1 selinux) && resum e.pfx1
expect_eq "long prefix security.+selinux ($n entries): the value after the name" \
	"$("$TOP/tests/erofscat" -x security.selinux e.pfx1 /etc/passwd)" "selinuxsystem_u:object_r:etc_t:s0"
cp e.pfx0 c.pfxidx && "$PY" -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[1024 + 91] = 0; open(sys.argv[1], "wb").write(b)' c.pfxidx && resum c.pfxidx
run pfx2 "$FCLABEL" check c.pfxidx -S fc -a /
expect_rc "an entry naming a long prefix the image does not have: no label, no crash" 1

# in Android's sparse format (img2simg; as AOSP ships system.img): read the same, expanded into
# memory; label refuses it, unchanged; a sparse file cut short gets a clear error
if command -v img2simg >/dev/null 2>&1; then
	img2simg e.lz4hc.lab s.lz4hc >/dev/null 2>&1 || bad "img2simg failed"
	want=$(check_list e4.lab fc2 e4.lab.fc2s)
	got=$(check_list s.lz4hc fc2 s.lz4hc.fc2)
	if [ "$got" = "$want" ] && cmp -s e4.lab.fc2s.list s.lz4hc.fc2.list; then
		ok "check of a sparse EROFS image: as ext4 (exit $got, $(wc -l <s.lz4hc.fc2.list) differing)"
	else
		bad "check of a sparse EROFS image: exit $got (ext4 $want); $(diff e4.lab.fc2s.list s.lz4hc.fc2.list | head -n 4 | tr '\n' '|')"
	fi
	cp s.lz4hc ws.lz4hc
	run labs "$FCLABEL" label ws.lz4hc -S fc2 -a /
	expect_rc "label refuses a sparse EROFS image" 2
	cmp -s ws.lz4hc s.lz4hc && ok "... the image unchanged" || bad "label changed ws.lz4hc"
	head -c $(($(wc -c <s.lz4hc) / 2)) s.lz4hc >trunc.sparse
	run strunc "$FCLABEL" check trunc.sparse -S fc -a /
	expect_rc "a sparse EROFS image cut short: refused" 2
	expect_match "... saying so" "$(cat strunc.err)" "*trunc.sparse*truncated*"
fi

# -n (a dry run) reads it too
run dry "$FCLABEL" label -n e.plain.lab -S fc2 -a /
expect_rc "label -n of an EROFS image" 0

# label and relabel refuse it, before touching it
for z in plain lz4hc; do
	cp e.$z.lab w.$z
	run lab "$FCLABEL" label w.$z -S fc2 -a / --json label.w.$z.json
	expect_rc "label refuses EROFS ($z)" 2
	expect_match "... saying how it is labeled" "$(cat lab.err)" "*w.$z*mkfs.erofs --file-contexts*nothing written*"
	cmp -s w.$z e.$z.lab && ok "... the image unchanged" || bad "label changed w.$z"
	expect_match "... its report says where it stopped" "$(cat label.w.$z.json)" \
		'*"failure": {"stage": "target", "message": "w.'$z': an EROFS image is read-only*'
	run rel "$FCLABEL" relabel w.$z --from fc --to fc2 -a /
	expect_rc "relabel refuses EROFS ($z)" 2
	cmp -s w.$z e.$z.lab && ok "... the image unchanged" || bad "relabel changed w.$z"
done

# bad input: truncated and corrupted images; each run under a timeout, no crash
bad_case() { # NAME FILE WANT-GLOB-OF-STDERR
	timeout 20 "$FCLABEL" check "$2" -S fc -a / >"bad.$1.out" 2>"bad.$1.err"
	_r=$?
	if [ $_r -ge 124 ] || grep -q 'Sanitizer\|runtime error\|Segmentation' "bad.$1.err"; then
		bad "corrupt $1: exit $_r: $(tail -n 3 "bad.$1.err" | tr '\n' '|')"
	elif [ $_r = 0 ]; then
		bad "corrupt $1: exit 0"
	else
		case $(cat "bad.$1.err") in
		$3) ok "corrupt $1: exit $_r, $(grep -m1 . "bad.$1.err" | cut -c1-110)" ;;
		*) bad "corrupt $1: exit $_r; stderr: $(tail -n 3 "bad.$1.err" | tr '\n' '|')" ;;
		esac
	fi
}
head -c 1100 e.plain.lab >trunc.sb
bad_case "truncated in the superblock" trunc.sb "*trunc.sb*"
head -c 4096 e.plain.lab >trunc.1
bad_case "truncated after the superblock" trunc.1 "*trunc.1*truncated*"
head -c $(($(wc -c <e.plain.lab) / 2)) e.plain.lab >trunc.half
bad_case "truncated in half" trunc.half "*trunc.half*truncated*"
# poke IMG OFFSET FORMAT VALUE: a field of the image changed, and the superblock's checksum
# made right again, so that what comes after it is what gets checked; pokebad: the checksum
# left
pokebad() { "$PY" -c 'import struct, sys
f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2])); f.write(struct.pack(sys.argv[3], int(sys.argv[4], 0)))' "$@"; }
poke() {
	pokebad "$@"
	resum "$1"
}
# the superblock's checksum: a byte it covers changed (the inode count, and a byte of the
# block's padding past the superblock) gets a clear error naming the image; the same image with
# its checksum made right again is read
cp e.plain.lab c.sum && pokebad c.sum 1040 '<B' 0x5a
bad_case "a byte of the superblock changed, not its checksum" c.sum "*c.sum: corrupt EROFS superblock: checksum*"
cp e.plain.lab c.sum2 && pokebad c.sum2 3000 '<B' 0x01
bad_case "a byte of its block's padding changed" c.sum2 "*c.sum2: corrupt EROFS superblock: checksum*"
poke c.sum 1040 '<B' 0x5a
run sumok "$FCLABEL" check c.sum -S fc -a /
expect_rc "... its checksum made right again: read" 0
cp e.plain.lab c.blkbits && poke c.blkbits 1036 '<B' 30
bad_case "block size 2^30" c.blkbits "*c.blkbits*block size*"
cp e.plain.lab c.root && poke c.root 1038 '<H' 0xffff
bad_case "root nid past the end" c.root "*c.root*"
cp e.plain.lab c.meta && poke c.meta 1064 '<I' 0x7fffffff
bad_case "meta area past the end" c.meta "*c.meta*meta area*"
cp e.plain.lab c.incompat && poke c.incompat 1104 '<I' 0x80000000
bad_case "an unknown incompat feature" c.incompat "*c.incompat*EROFS features*"
# random bytes written over the metadata (inodes, directories, attributes, compression
# indexes) of an uncompressed image with shared attributes and of a compressed one with big
# pclusters, and over anything (compressed data too): whatever they hit, check and every
# file's data come to a clear end, no crash, no hang
PYTHONPATH=$TOP/tests "$PY" - e.shared.lab e.aosp.lab <<'PYEOF'
import random, struct, sys
from erofssum import resum
rnd = random.Random(33)
k = 0
for src in sys.argv[1:]:
    data = open(src, "rb").read()
    bs = 1 << data[1036]
    meta = struct.unpack_from("<I", data, 1064)[0] * bs
    for j in range(30):
        b = bytearray(data)
        lo, hi = (meta, min(len(b), meta + 3 * bs)) if j < 20 else (1100, len(b))
        for _ in range(rnd.choice((1, 4, 16))):
            b[rnd.randrange(lo, hi)] = rnd.randrange(256)
        if k % 3:
            resum(b)
        open("fuzz.%02d" % k, "wb").write(b)
        k += 1
PYEOF
crashes=0
for f in fuzz.??; do
	timeout 20 "$FCLABEL" check "$f" -S fc -a / >/dev/null 2>"$f.err"
	r=$?
	timeout 20 "$TOP/tests/erofscat" -d tree "$f" <files >/dev/null 2>"$f.cat.err"
	r2=$?
	if [ $r -ge 124 ] || [ $r2 -ge 124 ] || grep -q 'Sanitizer\|runtime error' "$f.err" "$f.cat.err"; then
		crashes=$((crashes + 1))
		bad "$f: exit $r/$r2: $(tail -n 2 "$f.err" "$f.cat.err" | tr '\n' '|')"
	fi
done
[ $crashes = 0 ] && ok "60 randomly corrupted images: check and every file's data, no crash, no hang"
finish
