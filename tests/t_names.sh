#!/bin/sh
# Errors that name their cause, and names that stay one line.
# - File names with a newline, a tab, a double quote, a backslash, invalid UTF-8 (and valid UTF-8,
#   which is not quoted): in check's list, label -v, relabel --plan, warnings and explain, each
#   file is one line, its name quoted with C escapes as git's core.quotePath writes it, and the
#   quoted name read back (Python's escape decoding) gives the original bytes; --json has the
#   exact names.
# - A spec that makes PCRE2 give up (catastrophic backtracking: /data/(a|aa)+ against a long name)
#   is named, file:line, with PCRE2's reason, by label (a warning; the file left as it is; exit 1;
#   the --json error event has the spec and line), lookup and explain.
. "$TOP/tests/imglib.sh"
need_image_tools
cd "$OUT" || exit 1

"$PY" - <<'EOF'
import os
os.makedirs(b"tree/odd", exist_ok=True)
for n in [b"new\nline", b"tab\tname", b'q"uote', b"back\\slash", b"latin1-\xe9", b"bell\x07",
          b"del\x7f", "utf8-\u00e9t\u00e9".encode(), b"plain"]:
    open(b"tree/odd/" + n, "w").close()
os.makedirs("tree/data", exist_ok=True)
open("tree/data/" + "a" * 40 + "b", "w").close()
open("tree/data/ok", "w").close()
EOF
printf '/.*\tsystem_u:object_r:default_t:s0\n/odd(/.*)?\tsystem_u:object_r:odd_t:s0\n/data(/.*)?\tsystem_u:object_r:data_t:s0\n/data/(a|aa)+\tsystem_u:object_r:slow_t:s0\n' >fc
printf '/.*\tsystem_u:object_r:default_t:s0\n/odd(/.*)?\tsystem_u:object_r:odd2_t:s0\n/data(/.*)?\tsystem_u:object_r:data_t:s0\n' >fc2
mkimg img tree 8M -t ext4 || finish
cp img img0

# names PREFIX FILE WHAT: every odd name is one line of FILE starting PREFIX, quoted, and reads
# back as itself
names() {
	"$PY" - "$1" "$2" "$3" <<'EOF'
import codecs, sys
prefix, path, what = sys.argv[1].encode(), sys.argv[2], sys.argv[3]
want = {b"new\nline": 1, b"tab\tname": 1, b'q"uote': 1, b"back\\slash": 1, b"latin1-\xe9": 1,
        b"bell\x07": 1, b"del\x7f": 1, "utf8-\u00e9t\u00e9".encode(): 0, b"plain": 0}
got = {}
bad = 0
for line in open(path, "rb").read().split(b"\n"):
    if not line.startswith(prefix):
        continue
    rest = line[len(prefix):]
    if rest.startswith(b'"'):
        end = 1
        while rest[end:end + 1] != b'"':
            end += 2 if rest[end:end + 1] == b"\\" else 1
        name = codecs.escape_decode(rest[1:end])[0]
        quoted = True
    else:
        name = rest.split(b"\t")[0].split(b":")[0].split(b" ")[0]
        quoted = False
    if not name.startswith(b"/odd/"):
        continue
    n = name[len(b"/odd/"):]
    got[n] = got.get(n, 0) + 1
    if n in want and want[n] != quoted:
        print("FAIL %s: %r %s" % (what, n, "quoted" if quoted else "not quoted"))
        bad += 1
for n in want:
    if got.get(n) != 1:
        print("FAIL %s: %r on %d line(s), want 1" % (what, n, got.get(n, 0)))
        bad += 1
if not bad:
    print("ok   %s: each name one line, quoted where it must be, read back exactly" % what)
sys.exit(1 if bad else 0)
EOF
	[ $? -eq 0 ] || fails=$((fails + 1))
}

run chk "$FCLABEL" check img -S fc
names "" "$OUT/chk.out" "check's list"
run lbl "$FCLABEL" label img -S fc -v --json "$OUT/l.json"
expect_rc "label with a spec PCRE2 gives up on: exit" 1
names "relabeled " "$OUT/lbl.out" "label -v"
expect_match "the warning names the spec, its line and PCRE2's reason" "$(cat "$OUT/lbl.err")" \
	"*/data/aaaa*b: lookup failed: PCRE2 gave up matching fc:4 (/data/(a|aa)+): match limit exceeded*"
"$PY" - "$OUT/l.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1], encoding="utf-8", errors="surrogateescape"))
ev = [e for e in j["events"] if e["event"] == "error"]
assert len(ev) == 1 and ev[0]["spec"] == "fc" and ev[0]["line"] == 4 and "match limit" in ev[0]["detail"], ev
names = sorted(e["path"] for e in j["events"] if e["event"] == "changed" and e["path"].startswith("/odd/"))
assert "/odd/new\nline" in names and "/odd/tab\tname" in names and "/odd/latin1-\udce9" in names, names
print("ok   --json: the error event names the spec and line; names exact")
EOF
[ $? -eq 0 ] || fails=$((fails + 1))
rl=$(grep -v ': scanned [0-9]' "$OUT/lbl.err" | grep -c "^[a-z].*")
expect_eq "one warning line (and the summary)" "$rl" 1
run plan "$FCLABEL" relabel img --from fc --to fc2 --plan
names "would relabel " "$OUT/plan.out" "relabel --plan"
run look "$FCLABEL" lookup -S fc "/data/$(printf 'a%.0s' $(seq 40))b"
expect_rc "lookup: exit" 1
expect_match "lookup names the spec" "$(cat "$OUT/look.err")" "*PCRE2 gave up matching fc:4 (/data/(a|aa)+): match limit exceeded*"
run expl "$FCLABEL" explain -S fc "/data/$(printf 'a%.0s' $(seq 40))b" "$(printf '/odd/new\nline')"
expect_match "explain names the spec" "$(cat "$OUT/expl.err")" "*PCRE2 gave up matching fc:4*"
expect_eq "explain: a quoted name on its header" "$(grep -c '^"/odd/new\\nline" (mode' "$OUT/expl.out")" 1
# a damaged entry's warning: the name quoted there too
cp img0 img2
debugfs -w -R "set_inode_field \"/odd/tab	name\" links_count 0" img2 >/dev/null 2>&1
run dmg "$FCLABEL" check img2 -S fc
expect_eq "a warning names a quoted file on one line" "$(grep -c 'warning: "/odd/tab\\tname": ' "$OUT/dmg.err")" 1
finish
