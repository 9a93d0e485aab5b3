# Every string of a JSON report is UTF-8 (issue 30, case 12), and the stderr quoting agrees on
# what UTF-8 is. File names are bytes: each of the sequences a strict decoder rejects (UTF-16
# surrogates encoded as UTF-8, code points past U+10FFFF, overlong forms, lead bytes F5-FF, lone
# continuation bytes, a sequence cut short) is planted in a name, beside valid sequences at the
# edges of the ranges (U+D7FF, U+E000, U+FFFD, U+10FFFF), in a live tree and in an image made
# from it. Asserted, for `check DIR --json`, `label IMAGE --json` and `fclabel diff --json`:
#   - the report decodes as strict UTF-8 and parses (json.loads), and is valid by the schema;
#   - each name is written as Python's surrogateescape reads it back: valid characters as
#     themselves, every byte of an invalid sequence as the lone surrogate \udcXX; the paths in the
#     report, read back that way, are the names byte for byte;
#   - the check list (qname: stdout and stderr) quotes exactly the names with an invalid
#     sequence, every invalid byte as \ooo, valid characters as themselves;
#   - fclabel diff --json names a file_contexts called néw.fc as UTF-8 (not "n\u00c3\u00a9w.fc").
. "$TOP/tests/imglib.sh"
need_image_tools
cd "$OUT" || exit 1
rm -rf tree
mkdir tree

# the names: v- valid, i- invalid (each with its bytes in hex)
"$PY" - <<'EOF' >names.hex
import os
seqs = [
    ("v", "c3a9"), ("v", "e282ac"), ("v", "ed9fbf"), ("v", "ee8080"), ("v", "efbfbd"),
    ("v", "f09d849e"), ("v", "f48fbfbf"),
    ("i", "eda080"), ("i", "edbfbf"), ("i", "f4908080"), ("i", "c0af"), ("i", "c1bf"),
    ("i", "e080af"), ("i", "e09fbf"), ("i", "f08080af"), ("i", "f08fbfbf"), ("i", "f5808080"),
    ("i", "f888808080"), ("i", "fe"), ("i", "ff"), ("i", "80"), ("i", "bf"), ("i", "e282"),
]
for kind, hx in seqs:
    name = ("%s-%s-" % (kind, hx)).encode() + bytes.fromhex(hx) + b"-x"
    open(os.path.join(b"tree", name), "wb").close()
    print(name.hex())
# a sequence cut short by the end of the name
name = b"i-end-" + bytes.fromhex("e282")
open(os.path.join(b"tree", name), "wb").close()
print(name.hex())
EOF
expect_eq "the tree holds every planted name" "$(ls tree | wc -l)" "$(wc -l <names.hex)"
printf '/\tsystem_u:object_r:root_t:s0\n/.*\tsystem_u:object_r:default_t:s0\n' >fc

# judge KIND REPORT [LIST]: the report (and the check list) against the names
judge() {
	"$PY" - names.hex "$1" "$2" "${3:-}" <<'EOF'
import json, sys
hexes, kind, report, listing = sys.argv[1:5]
names = [bytes.fromhex(l.strip()) for l in open(hexes) if l.strip()]
if len(names) < 20:
    print("FAIL %s: only %d names read" % (kind, len(names)))
    sys.exit(1)
raw = open(report, "rb").read()
fails = 0
def bad(msg):
    global fails
    fails += 1
    print("FAIL %s: %s" % (kind, msg))
try:
    text = raw.decode("utf-8")  # strict: no surrogates, no overlongs, nothing past U+10FFFF
except UnicodeDecodeError as e:
    bad("not UTF-8: %s (%r)" % (e, raw[max(0, e.start - 20):e.end + 10]))
    sys.exit(1)
try:
    doc = json.loads(text)
except ValueError as e:
    bad("not JSON: %s" % e)
    sys.exit(1)
paths = set()
for ev in doc.get("events", []):
    paths.add(ev["path"].encode("utf-8", "surrogateescape"))
for n in names:
    if b"/" + n not in paths:
        bad("%r: not in the report's paths (read back with surrogateescape)" % n)
    # how the report must spell it: valid characters as themselves, invalid bytes \udcXX
    want = "".join("\\udc%02x" % (ord(c) - 0xdc00) if 0xdc80 <= ord(c) <= 0xdcff else c
                   for c in n.decode("utf-8", "surrogateescape"))
    if ('"path": "/%s"' % want).encode() not in raw:
        bad("%r: not spelled %r in the report" % (n, want))
if listing:
    lines = open(listing, "rb").read().split(b"\n")
    for n in names:
        d = n.decode("utf-8", "surrogateescape")
        if any(0xdc80 <= ord(c) <= 0xdcff for c in d):
            want = b'"/' + b"".join(b"\\%03o" % (ord(c) - 0xdc00) if 0xdc80 <= ord(c) <= 0xdcff
                                     else c.encode() for c in d) + b'"'
        else:
            want = b"/" + n
        if not any(l.startswith(want + b"\t") for l in lines):
            bad("%r: the list does not name it as %r" % (n, want))
print("%s: %d names, %d wrong" % (kind, len(names), fails))
sys.exit(1 if fails else 0)
EOF
}

# ---- a live tree ----
"$FCLABEL" check tree -a / -S fc --json tree.json >tree.out 2>tree.err
expect_eq "check DIR --json: exit 1 (nothing labeled)" "$?" 1
judge tree tree.json && ok "check DIR --json: every name UTF-8, escaped where invalid, read back byte for byte" ||
	bad "check DIR --json: see above"
"$FCLABEL" check tree -a / -S fc >list.out 2>list.err
expect_eq "check DIR: exit 1" "$?" 1
judge list tree.json list.out && ok "check DIR's list (qname) quotes exactly the invalid names, each invalid byte as \\ooo" ||
	bad "check DIR's list: see above"

# ---- an image ----
mkimg utf8.img tree 4M -t ext4 -I 256 || finish
"$FCLABEL" label utf8.img -S fc --json img.json >img.out 2>img.err
expect_eq "label IMAGE --json: exit 0" "$?" 0
judge image img.json && ok "label IMAGE --json: every name UTF-8, escaped where invalid, read back byte for byte" ||
	bad "label IMAGE --json: see above"
expect_match "the reports are valid by the schema" "$(reports_valid tree.json img.json)" "2 reports, 0 bad"

# ---- fclabel diff --json: file names as UTF-8 ----
printf '/a\tsystem_u:object_r:a_t:s0\n' >old.fc
printf '/a\tsystem_u:object_r:b_t:s0\n/b\tsystem_u:object_r:b_t:s0\n' >"n$(printf '\303\251')w.fc"
cp "n$(printf '\303\251')w.fc" "bad$(printf '\355\240\200')x.fc"
"$FCLABEL" diff --json old.fc "n$(printf '\303\251')w.fc" >diff.json 2>diff.err
expect_eq "diff --json: exit 1 (changes)" "$?" 1
"$FCLABEL" diff --json old.fc "bad$(printf '\355\240\200')x.fc" >diff2.json 2>diff2.err
"$PY" - diff.json diff2.json >diff.check <<'EOF'
import json, sys
out = []
for p in sys.argv[1:]:
    try:
        doc = json.loads(open(p, "rb").read().decode("utf-8"))
        out.append(sorted({c["new"]["file"] for c in doc["changes"] if "new" in c}))
    except (ValueError, UnicodeDecodeError) as e:
        out.append("%s: %s" % (p, e))
print(repr(out))
EOF
expect_eq "diff --json: strict UTF-8 JSON; néw.fc as itself, a surrogate's bytes as \\udcXX" \
	"$(cat diff.check)" "[['néw.fc'], ['bad\\udced\\udca0\\udc80x.fc']]"
expect_match "diff --json: the name is written as UTF-8, not escaped byte by byte" "$(cat diff.json)" \
	'*"file": "néw.fc"*'
finish
