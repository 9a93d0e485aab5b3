#!/bin/sh
# Differential test of the directory digest (security.sehash): fc_digest(), through tests/fcdigest,
# must give byte for byte what libselinux 3.4's selabel_hash_all_partial_matches() gives, through
# tests/oracle -d, for every directory: the same 40 hex digits, or both "<<nodigest>>".
# Queries are NUL-separated "0 DIR" records ($OUT/*/dirs), made by $OUT/dirs.py from:
#  (1) refpolicy: $SHARED/refpolicy/file_contexts as one file (with .homedirs, .subs_dist) and the
#      installed /etc/selinux/default one (its .bin too), over this machine's directories (/usr
#      /etc /var /opt /root /srv /home /boot and the top level), the ancestors of each spec's
#      literal prefix, a home area, and odd spellings (trailing "/", "//", a final newline, long
#      paths, relative ones);
#  (2) every Android policy that t_diff_android compares (one file, private+vendor, the images'
#      plat+vendor concatenations), over the image listings' directories and the ancestors of every
#      listed path, each spec's literal prefix, and /data trees as a device grows them;
#  (3) small random policies (tests/gen_fc.py adversarial: <<none>>, types, escapes, alternations,
#      twins, literal prefixes of each other) over every path of their queries and its ancestors;
#  (4) hand-written corner cases.
# Also: fcdigest -t (four threads racing on a fresh set) must agree with one thread.
#   FC_DIGEST_HOST (4000; a third of it for the installed policy), FC_DIGEST_ANDROID (1200 per
#   policy), FC_DIGEST_POLICIES (60 random policies, 400 directories each): sizes.
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/difflib.sh"

FCDIGEST=$TOP/tests/fcdigest
need_tools
stale=$(find "$TOP/tests/fcdigest.c" "$TOP/fcontexts" -newer "$FCDIGEST" -name '*.[ch]' 2>/dev/null)
if [ ! -x "$FCDIGEST" ] || [ -n "$stale" ]; then
	make -s -C "$TOP" tests/fcdigest >"$OUT/fcdigest-build.log" 2>&1 ||
		skip "cannot build tests/fcdigest: $(tail -n 1 "$OUT/fcdigest-build.log")"
fi
start=$(date +%s)

# ---- the directories ----
cat >"$OUT/dirs.py" <<'EOF'
"""dirs.py KIND ARGS...: NUL-separated "0 DIR" records for t_digest.sh (see there)."""
import os
import random
import sys

sys.path.insert(0, os.path.join(os.environ["TOP"], "tests"))
import gen_fc as g  # noqa: E402

ODD = ["/", "//", "/\n", "//\n", "/usr\n", "/usr/\n", "/a\nb", "/" + "a/" * 2100, "/x" * 3000,
       "/usr/" + "y" * 300 + "/lib", "rel", "rel/dir", "", " /usr"]
DATA = ["/data/data/com.example.app/files", "/data/data/com.example.app/cache",
        "/data/user/0/com.example.app/code_cache", "/data/user/10/com.example.app",
        "/data/user_de/0/com.example.app/databases", "/data/user_de/10",
        "/data/misc/profiles/cur/0/com.example.app", "/data/misc/profiles/ref/com.example.app",
        "/data/misc_ce/0/sdksandbox/com.example.app/shared", "/data/misc_de/10/sdksandbox",
        "/data/system_ce/0/backup", "/data/vendor_ce/0/facedata", "/data/vendor_de/0/fpdata",
        "/data/media/0/Android/data/com.example.app",
        "/data/app/~~A1b2==/com.example.app-Z9==/lib/arm64",
        "/data/dalvik-cache/arm64", "/data/misc/apexdata/com.android.art", "/data/local/tmp/x",
        "/data/system/users/0", "/data/misc/wifi/sockets", "/data/apex/active", "/data/per_boot",
        "/data/tombstones", "/data/anr", "/data/property", "/data/unencrypted", "/data/vendor/wifi",
        "/data/misc_ce/0/checkin", "/mnt/expand/0f1e2d3c/user/0/com.example.app",
        "/data/storage_area/0"]


def ancestors(p):
    """p and each proper prefix of it that ends before a '/' ("/" included)."""
    out = [p]
    i = p.find("/", 1)
    while i > 0:
        out.append(p[:i])
        i = p.find("/", i + 1)
    if p.startswith("/"):
        out.append("/")
    return out


def spec_dirs(files):
    out = []
    for f in files:
        for rx, _ in g.read_specs(f):
            pre = g.literal_prefix(rx)
            if pre.startswith("/"):
                out.extend(ancestors(pre.rstrip("/") or "/"))
    return out


def write(path, dirs, keep, cap, rng):
    """dirs (deduplicated, capped by a seeded sample) then keep, to path."""
    seen = set(keep)
    uniq = sorted({d for d in dirs if d not in seen})
    if len(uniq) > cap:
        uniq = rng.sample(uniq, cap)
    recs = uniq + list(dict.fromkeys(keep))
    rng.shuffle(recs)
    with open(path, "wb") as f:
        for d in recs:
            f.write(b"0 " + d.encode(g.ENC) + b"\0")
    return len(recs)


def odd_spellings(dirs, rng, n):
    out = []
    for d in rng.sample(dirs, min(n, len(dirs))):
        out.extend(rng.choice([[d + "/"], ["/" + d], [d.replace("/", "//", 2)], [d + "\n"],
                               [d + "/\n"], [d.upper()]]))
    return out


def host(seed, out, fc, cap, tree):
    rng = random.Random("%s/digest/host" % seed)
    with open(tree, "rb") as f:
        dirs = [r.split(b" ", 1)[1].decode(g.ENC) for r in f.read().split(b"\0") if r]
    dirs += spec_dirs([fc, fc + ".homedirs", fc + ".local"])
    for home in ["/root", "/home/u", "/home/user", "/home/u/.ssh", "/home/u/public_html/cgi-bin",
                 "/home/u/.local/share", "/home/u/.mozilla/firefox", "/home/u/.gnupg"]:
        dirs += ancestors(home)
    for src, dst in g.read_subs(fc + ".subs") + g.read_subs(fc + ".subs_dist"):
        for p in (src, dst):
            dirs += ancestors(p) + [p + "/lib", p + "/x/y"]
    keep = ODD + odd_spellings(sorted(set(dirs)), rng, 300)
    print("%d directories" % write(os.path.join(out, "dirs"), dirs, keep, cap, rng))


def android(seed, out, shared, cap):
    rng = random.Random("%s/digest/android" % seed)
    idir = os.path.join(shared, "images")
    listed = []
    if os.path.isdir(idir):
        for img in sorted(os.listdir(idir)):
            if os.path.isdir(os.path.join(idir, img)):
                for _, p in g.image_paths(os.path.join(idir, img)):
                    listed += ancestors(p)
    data = [a for d in DATA for a in ancestors(d)]
    total = 0
    for i, (name, files) in enumerate(g.android_policies(shared)):
        d = os.path.join(out, "%02d-%s" % (i, name))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "fcarg"), "w") as f:
            f.write(",".join(files) + "\n")
        prng = random.Random("%s/digest/android/%s" % (seed, name))
        dirs = listed + spec_dirs(files)
        keep = data + ODD + odd_spellings(sorted(set(dirs)), prng, 100)
        total += write(os.path.join(d, "dirs"), dirs, keep, cap, prng)
    print("%d directories" % total)


def adversarial(seed, adv, cap):
    total = 0
    for p in sorted(os.listdir(adv)):
        d = os.path.join(adv, p)
        rng = random.Random("%s/digest/%s" % (seed, p))
        dirs = [a for _, q in g.read_records(os.path.join(d, "queries")) for a in ancestors(q)]
        total += write(os.path.join(d, "dirs"), dirs, [], cap, rng)
    print("%d directories" % total)


if __name__ == "__main__":
    kind, a = sys.argv[1], sys.argv[2:]
    if kind == "host":
        host(a[0], a[1], a[2], int(a[3]), a[4])
    elif kind == "android":
        android(a[0], a[1], a[2], int(a[3]))
    else:
        adversarial(a[0], a[1], int(a[2]))
EOF
DIRS="$PY $OUT/dirs.py"

# ours OPTS FCARG DIRS OUTFILE: tests/fcdigest; 0 when its exit status agrees with its answers.
# shellcheck disable=SC2086 # OPTS is empty or one word
ours_digests() {
	"$FCDIGEST" $1 -0 "$2" <"$3" >"$4" 2>"$4.err"
	_d_rc=$?
	if grep -q '^<<error>>$' "$4"; then _d_want=1; else _d_want=0; fi
	if [ "$_d_rc" -ne "$_d_want" ]; then
		say "tests/fcdigest $1 -0 $2 <$3: exit status $_d_rc, expected $_d_want"
		sed -n '1,5s/^/    fcdigest: /p' "$4.err"
		return 1
	fi
	[ -s "$4.err" ] || rm -f "$4.err"
	return 0
}

# oracle_opts DIR: "-b" when DIR's policy is read without .homedirs and .local
oracle_opts() { if [ -e "$1/baseonly" ]; then echo -b; fi; }

# oracles DIR...: tests/oracle -d on each DIR/dirs (the policy named in DIR/fcarg) into
#   DIR/oracle.out, two at a time (2 cores).
oracles() {
	while [ $# -gt 0 ]; do
		oracle "$(oracle_opts "$1") -d" "$(cat "$1/fcarg")" "$1/dirs" "$1/oracle.out" &
		_r_p0=$! _r_p1=""
		if [ $# -gt 1 ]; then
			oracle "$(oracle_opts "$2") -d" "$(cat "$2/fcarg")" "$2/dirs" "$2/oracle.out" &
			_r_p1=$!
		fi
		wait "$_r_p0" || die "tests/oracle -d failed on $1"
		[ -z "$_r_p1" ] || wait "$_r_p1" || die "tests/oracle -d failed on $2"
		shift
		[ $# -eq 0 ] || shift
	done
}

# tally OUTFILE: counts the oracle's digests (TALLY_HEX) and <<nodigest>> answers (TALLY_NONE) in
#   OUTFILE, and adds them to the totals.
tally() {
	TALLY_HEX=$(grep -c '^[0-9a-f]\{40\}$' "$1")
	TALLY_NONE=$(grep -c '^<<nodigest>>$' "$1")
	HEX=$((HEX + TALLY_HEX)) NODIGEST=$((NODIGEST + TALLY_NONE))
}
HEX=0 NODIGEST=0

# compare_all each|total DIR...: fcdigest on each DIR (after `oracles`), compared with the
#   oracle; a line of counts for each DIR, or one for all. (Equal answers are counted here, not
#   by `compare`: two processes fewer for each of the many small random policies.)
compare_all() {
	_a_how=$1
	shift
	for _a_d in "$@"; do
		_a_ok=0 _a_fc=$(cat "$_a_d/fcarg")
		ours_digests "$(oracle_opts "$_a_d")" "$_a_fc" "$_a_d/dirs" "$_a_d/ours.out" || _a_ok=1
		if [ "$_a_ok" -eq 0 ] && cmp -s "$_a_d/ours.out" "$_a_d/oracle.out"; then
			rm -f "$_a_d/ours.out"
			DIFF_QUERIES=$((DIFF_QUERIES + $(nlines "$_a_d/oracle.out")))
		else
			compare "${_a_d##*/}" "$_a_fc" "$_a_d/dirs" "$_a_d/ours.out" "$_a_d/oracle.out" "$_a_ok"
		fi
		if [ "$_a_how" = each ]; then
			tally "$_a_d/oracle.out"
			say "  ${_a_d##*/}: $(nrec "$_a_d/dirs") directories, $TALLY_HEX digests, $TALLY_NONE none"
		fi
	done
	if [ "$_a_how" = total ]; then
		for _a_d in "$@"; do cat "$_a_d/oracle.out"; done >"$OUT/all.out"
		tally "$OUT/all.out"
		say "  $# policies, $(nlines "$OUT/all.out") directories, $TALLY_HEX digests, $TALLY_NONE none"
	fi
}

# one DIR FCARG [parallel]: the oracle and fcdigest on DIR/dirs, compared.
one() {
	echo "$2" >"$1/fcarg"
	oracle -d "$2" "$1/dirs" "$1/oracle.out" "${3:-}"
	compare_all each "$1"
}

# ---- (0) the wiring: a digest computed by hand, and Android 14's /data from the fact sheet ----
mkdir -p "$OUT/known"
printf '/data(/.*)?\tu:object_r:system_data_file:s0\n' >"$OUT/known/fc"
printf '0 /data\0000 /data/x/\0000 /\0000 /dat\0000 /datax\000' >"$OUT/known/dirs"
# SHA-1 of "/data(/.*)?" NUL, a 4-byte mode 0, "u:object_r:system_data_file:s0" NUL
want=$("$PY" -c 'import hashlib
print(hashlib.sha1(b"/data(/.*)?\0" + bytes(4) + b"u:object_r:system_data_file:s0\0").hexdigest())')
"$ORACLE" -d -0 "$OUT/known/fc" <"$OUT/known/dirs" >"$OUT/known/oracle.out" || die "tests/oracle -d failed"
[ "$(printf '%s\n' "$want" "$want" "$want" "$want" '<<nodigest>>')" = "$(cat "$OUT/known/oracle.out")" ] ||
	die "sanity: tests/oracle -d: $(tr '\n' ' ' <"$OUT/known/oracle.out"), expected $want x4, <<nodigest>>"
one "$OUT/known" "$OUT/known/fc"
a14=$SHARED/android/android-14.0.0_r50/private_file_contexts
if [ -f "$a14" ]; then
	printf '0 /data\000' | "$FCDIGEST" -0 "$a14" | grep -qx dc3cb2835d5971f93e36a8c63543c920b25bd7e1 ||
		die "sanity: fcdigest: the Android 14 digest of /data is not dc3cb283... (libselinux 3.4's)"
fi

# ---- (4) corner cases, by hand: each line is there for a rule of digest.c ----
mkdir -p "$OUT/edge"
cat >"$OUT/edge/fc" <<'EOF'
/.*		u:r:all_t:s0
/a(/.*)?	u:r:a_t:s0
/a/b		-d	u:r:ab_dir_t:s0
/a/b		u:r:ab_t:s0
/a/bc		--	u:r:abc_t:s0
/a/b/c		u:r:abc2_t:s0
/a/b/?		u:r:aslash_t:s0
/a/b(?<=c)	u:r:never_t:s0
/a/b\b		u:r:wordend_t:s0
/a/x\d		u:r:plainre_t:s0
/a/y\.z		u:r:escaped_t:s0
/e\-dge/h	u:r:dead_t:s0
/n(/.*)?	<<none>>
/n/keep		u:r:after_none_t:s0
/m/[^/]*	<<none>>
/m		u:r:m_t:s0
/p|/q/r		u:r:topalt_t:s0
/s/t$/u		u:r:dollar_t:s0
/v/(?i)w	u:r:caseless_t:s0
/lit\.only	-l	u:r:lit_t:s0
/lit\.only/deeper	-s	u:r:lit2_t:s0
EOF
for d in / /a /a/ /a/b /a/b/ /a/bc /a/b/c /a/b/c/d /a/x /a/x1 /a/y /a/y.z /a/yxz /e-dge /e-dge/h \
	/n /n/keep /m /m/x /p /q /q/r /x/q/r /s/t /s/t/u /v/W /v /lit.only /lit.onl /lit.only/d \
	/lit.only/deeper /lit.onlyx //a//b// /zz "/a/b
" "/lit.only
" "/lit.only

" "/a
b"; do
	printf '0 %s\000' "$d"
done >"$OUT/edge/dirs"
one "$OUT/edge" "$OUT/edge/fc"

# ---- (1) refpolicy on this machine's directories ----
find /usr /etc /var /opt /root /srv /home /boot -xdev \( -path "$TOP" -o -path "$OUT" \) -prune \
	-o -type d -printf '0 %p\000' >"$OUT/tree" 2>/dev/null
find / -maxdepth 1 -type d -printf '0 %p\000' >>"$OUT/tree" 2>/dev/null
n=0 cap=${FC_DIGEST_HOST:-4000}
for fc in "$SHARED/refpolicy/file_contexts" /etc/selinux/default/contexts/files/file_contexts; do
	[ -f "$fc" ] || continue
	n=$((n + 1))
	d=$OUT/refpolicy$n
	mkdir -p "$d"
	# the installed one is mostly the same policy again, read from its .bin: fewer directories
	[ "$n" -eq 1 ] || cap=$((cap / 3))
	msg=$($DIRS host "$FC_SEED" "$d" "$fc" "$cap" "$OUT/tree") ||
		die "dirs.py host failed"
	say "refpolicy $fc: $msg"
	one "$d" "$fc" parallel
done
rm -f "$OUT/tree"
if [ "$n" -gt 0 ]; then
	# four threads race on the lazy index and JIT code of a fresh set
	fc=$(cat "$OUT/refpolicy1/fcarg")
	"$FCDIGEST" -t -0 "$fc" <"$OUT/refpolicy1/dirs" >"$OUT/threads.out" 2>"$OUT/threads.err"
	[ $? -ne 3 ] || die "fcdigest -t: threads disagree with one thread: $(head -n 3 "$OUT/threads.err")"
	cmp -s "$OUT/threads.out" "$OUT/refpolicy1/oracle.out" ||
		die "fcdigest -t: the digests differ from libselinux's ($OUT/threads.out)"
	say "  threads: 4 threads at once gave one thread's $(nlines "$OUT/threads.out") answers"
else
	say "no refpolicy file_contexts (neither \$SHARED/refpolicy nor /etc/selinux/default): part (1) skipped"
fi

# ---- (2) Android ----
if [ -d "$SHARED/android" ]; then
	msg=$($DIRS android "$FC_SEED" "$OUT/android" "$SHARED" "${FC_DIGEST_ANDROID:-1200}") ||
		die "dirs.py android failed"
	say "android: $msg"
	oracles "$OUT"/android/[0-9]*-*
	compare_all each "$OUT"/android/[0-9]*-*
else
	say "no Android policies (\$SHARED/android is absent: $SHARED): part (2) skipped"
fi

# ---- (3) random policies ----
npol=${FC_DIGEST_POLICIES:-60}
"$PY" "$GEN" adversarial --seed "$FC_SEED" --policies "$npol" --queries 300 --out "$OUT/adv" \
	>/dev/null || die "tests/gen_fc.py adversarial failed"
msg=$($DIRS adversarial "$FC_SEED" "$OUT/adv" 400) || die "dirs.py adversarial failed"
say "random policies: $npol, $msg"
oracles "$OUT"/adv/p*
before=$NODIGEST
compare_all total "$OUT"/adv/p*
[ "$NODIGEST" -gt "$before" ] ||
	die "sanity: no random policy left a directory without a digest (<<none>> untested)"

say "$HEX digests and $NODIGEST <<nodigest>> answers compared"
[ "$HEX" -gt 1000 ] || die "sanity: fewer than 1000 digests compared"
sane=$OUT/refpolicy1
[ -d "$sane" ] || sane=$OUT/edge
sanity "$sane/dirs" "$sane/oracle.out"
finish t_digest $(( $(date +%s) - start ))
