# EROFS images of a newer erofs-utils than Debian's (fixtures/erofs/, made by
# fixtures/erofs/make.sh with 1.9.3): LZMA (MicroLZMA), DEFLATE and Zstandard pclusters,
# ztailpacking, fragments and whole files in the packed inode, dedupe, interlaced uncompressed
# pclusters, full indexes, compressed directories, 1 KiB blocks, two algorithms in one image.
# Every file's data is the input tree's (remade by make.sh tree), every label what
# fixtures/erofs/file_contexts gave mkfs.erofs (check: nothing differs), and another policy finds
# the same differences in every image; an unknown algorithm is refused, naming it; random
# corruptions of each image come to a clear end, no crash and no hang.
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/imglib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
FX=$TOP/fixtures/erofs
cd "$OUT" || exit 1
[ -x "$TOP/tests/erofscat" ] || make -s -C "$TOP" tests/erofscat >/dev/null 2>&1 ||
	bad "cannot build tests/erofscat"
CAT=$TOP/tests/erofscat

rm -rf tree
PY=$PY sh "$FX/make.sh" tree tree || bad "make.sh tree failed"
(cd tree && find . -type f | sed 's|^\.||' | LC_ALL=C sort) >files
n=$(wc -l <files)
# a policy under which the text and data files' labels differ
sed 's/text_t/text2_t/; s/data_t/data2_t/' "$FX/file_contexts" >fc2

imgs=$(cd "$FX" && ls *.img)
[ -n "$imgs" ] || bad "no images in fixtures/erofs"
first=
for i in $imgs; do
	if "$CAT" -d tree "$FX/$i" <files >"cat.$i" 2>&1; then
		ok "$i: the data of all $n files read as the tree's"
	else
		bad "$i: files read wrong: $(head -n 3 "cat.$i" | tr '\n' '|')"
	fi
	run "chk.$i" "$FCLABEL" check "$FX/$i" -S "$FX/file_contexts" -a /
	expect_rc "$i: every label as file_contexts says" 0
	expect_match "... every file scanned" "$(tail -n 1 "chk.$i.err")" "*scanned 84, differ 0,*errors 0, warnings 0*"
	run "chk2.$i" "$FCLABEL" check "$FX/$i" -S fc2 -a /
	LC_ALL=C sort "chk2.$i.out" >"chk2.$i.list"
	if [ -z "$first" ]; then
		first=$i
		expect_rc "$i: another policy: differences" 1
	elif [ "$rc" = 1 ] && cmp -s "chk2.$first.list" "chk2.$i.list"; then
		ok "$i: another policy: the differences $first has ($(wc -l <"chk2.$i.list"))"
	else
		bad "$i: another policy: exit $rc; $(diff "chk2.$first.list" "chk2.$i.list" | head -n 4 | tr '\n' '|')"
	fi
done
expect_eq "a symlink's target" "$("$CAT" "$FX/lzma-ztail.img" /data/link 2>&1)" \
	"erofscat: /data/link: not a regular file (mode 0120777)"

# algorithm 5 in a file's compression header (h_algorithmtype, byte 6 of the 8 bytes, 8-aligned,
# after the inode and its attributes): refused, naming it
setalg() { # IMG PATH ALG
	set -- "$1" "$2" "$3" "$("$CAT" -i "$1" "$2")"
	"$PY" - "$@" <<'PYEOF'
import sys
img, path, alg, where = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split()
off, isize, xsize = int(where[1]), int(where[2]), int(where[3])
hdr = (off + isize + xsize + 7) & ~7
f = open(img, "r+b")
f.seek(hdr + 6)
f.write(bytes([alg]))
PYEOF
}
cp "$FX/zstd-ztail.img" alg5.img && setalg alg5.img /text/t8 5
"$CAT" alg5.img /text/t8 >/dev/null 2>alg5.err
expect_eq "algorithm 5: refused (exit 1)" "$?" 1
expect_match "... naming it" "$(cat alg5.err)" "*/text/t8*compression algorithm 5, which fclabel does not know*"
"$CAT" alg5.img /text/t7 >/dev/null 2>&1
expect_eq "... the other files read" "$?" 0

# random bytes over each image (metadata mostly, anything sometimes): check and every file's
# data come to a clear end, no crash, no hang
PYTHONPATH=$TOP/tests "$PY" - "$FX" $imgs <<'PYEOF'
import random, struct, sys
from erofssum import resum
rnd = random.Random(34)
k = 0
for name in sys.argv[2:]:
    data = open(sys.argv[1] + "/" + name, "rb").read()
    bs = 1 << data[1036]
    meta = struct.unpack_from("<I", data, 1064)[0] * bs
    for j in range(6):
        b = bytearray(data)
        lo, hi = (meta, min(len(b), meta + 3 * bs)) if j < 4 else (2048, len(b))
        for _ in range(rnd.choice((1, 4, 16))):
            b[rnd.randrange(lo, hi)] = rnd.randrange(256)
        if k % 3:
            resum(b)
        open("fuzz.%03d" % k, "wb").write(b)
        k += 1
PYEOF
crashes=0
count=0
for f in fuzz.???; do
	count=$((count + 1))
	timeout 20 "$FCLABEL" check "$f" -S "$FX/file_contexts" -a / >/dev/null 2>"$f.err"
	r=$?
	timeout 20 "$CAT" -d tree "$f" <files >/dev/null 2>"$f.cat.err"
	r2=$?
	if [ $r -ge 124 ] || [ $r2 -ge 124 ] || grep -q 'Sanitizer\|runtime error' "$f.err" "$f.cat.err"; then
		crashes=$((crashes + 1))
		bad "$f: exit $r/$r2: $(tail -n 2 "$f.err" "$f.cat.err" | tr '\n' '|')"
	fi
done
[ $crashes = 0 ] && ok "$count randomly corrupted images: check and every file's data, no crash, no hang"
finish
