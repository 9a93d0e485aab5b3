#!/usr/bin/env python3
"""Inputs and reports for the differential tests (tests/t_diff_*.sh): fclabel against libselinux 3.4.

Standard library only; every random choice comes from --seed, so a run is reproducible.

  gen_fc.py adversarial --seed S --policies N --queries Q --out DIR
        N small random policies, DIR/pNNNN/ each: file_contexts (or part1..3), sometimes
        file_contexts.{homedirs,local,subs,subs_dist}, `fcarg` (the -S argument), `baseonly`
        (present: compare with --base-only / oracle -b), `queries` (NUL-separated "MODE PATH").
  gen_fc.py refpolicy --seed S --fc FC --tree TREE --out DIR [--min-queries M] [--base-queries B]
        DIR/queries (this machine's tree with real modes, every mode on a sample, paths made from
        each spec, the homedirs/subs area) and DIR/queries_base (a smaller sample, for --base-only).
  gen_fc.py android --seed S --shared SHARED --out DIR [--per-policy Q]
        DIR/NN-name/{fcarg,queries} for every Android policy; DIR/golden-NAME/{fcarg,queries,expected}
        from images/*/labels.tsv.
  gen_fc.py walkorder --seed S --queries Q --out FILE [--fc FC[,FC...]] [--extra N] [--max M]
        [--keep-order] [--tree]    Q's queries (--tree: find's "%m %y %p" records) in walk order (a directory's entries together), and N more
        names in each directory (odd ones, and the policy's literal runs in names).
  gen_fc.py split FILE OUT0 OUT1     split NUL-separated records into two halves
  gen_fc.py count FILE               number of NUL-separated records
  gen_fc.py report QUERIES OURS REF [--max N] [--label WHAT] [--names OURS_NAME,REF_NAME]
        compare two outputs line by line; print the first N differences; exit 1 on any.
  gen_fc.py sanity QUERIES REF       fail unless REF has one line per query and is not all <<none>>.

Records are bytes throughout (paths may hold any byte but NUL); Python strings here carry bytes
as latin-1 code points.
"""
import argparse
import os
import random
import re
import sys
import warnings

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    try:
        import re._parser as sre_parse  # Python >= 3.11
        import re._constants as sre_c
    except ImportError:  # pragma: no cover
        import sre_parse
        import sre_constants as sre_c

ENC = "latin-1"

# S_IFMT values of the seven file_contexts types.
TYPES = {"--": 0o100000, "-d": 0o040000, "-c": 0o020000, "-b": 0o060000,
         "-s": 0o140000, "-l": 0o120000, "-p": 0o010000}
TYPE_NAMES = list(TYPES)
FIND_TYPES = {"f": 0o100000, "d": 0o040000, "l": 0o120000, "c": 0o020000,
              "b": 0o060000, "p": 0o010000, "s": 0o140000}
PERMS = [0o644, 0o755, 0o600, 0o777, 0o4755, 0o2755, 0o1777, 0o444, 0o000, 0o750]
ODD_MODES = [0o170000, 0o030000, 0o070000, 0o110000, 0o150000, 0o160000, 0o177777, 0o300644]


def rand_mode(rng, typ=None):
    """A mode: of the given type bits (or a random one of the seven), with random permission bits."""
    if typ is None:
        typ = TYPES[rng.choice(TYPE_NAMES)]
    return typ | rng.choice(PERMS)


def every_mode(rng):
    """Mode 0 and each of the seven types, with random permissions."""
    return [0] + [rand_mode(rng, TYPES[t]) for t in TYPE_NAMES]


def any_mode(rng):
    r = rng.random()
    if r < 0.12:
        return 0
    if r < 0.17:
        return rng.choice(ODD_MODES)
    return rand_mode(rng)


def rec(mode, path):
    return b"%o %s\0" % (mode, path.encode(ENC))


def write_queries(path, records):
    with open(path, "wb") as f:
        for m, p in records:
            f.write(rec(m, p))
    return len(records)


def read_records(path):
    with open(path, "rb") as f:
        data = f.read()
    parts = data.split(b"\0")
    if parts and parts[-1] == b"":
        parts.pop()
    out = []
    for r in parts:
        m, _, p = r.partition(b" ")
        out.append((m.decode(ENC), p.decode(ENC)))
    return out


# ---------------------------------------------------------------------------------------------
# A string that a regex matches, from Python's own parse of it (the regex subset of file_contexts
# is read alike by Python and PCRE2). None when Python cannot parse it.

WORD_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789_"
ANY_CHARS = "abcdefxyz019_-./ ABZ\n" + "\xc3\xa9\xff"


def _in_class(items, ch):
    neg = False
    hit = False
    for op, av in items:
        if op is sre_c.NEGATE:
            neg = True
        elif op is sre_c.LITERAL:
            hit = hit or ord(ch) == av
        elif op is sre_c.RANGE:
            hit = hit or av[0] <= ord(ch) <= av[1]
        elif op is sre_c.CATEGORY:
            hit = hit or _in_category(av, ch)
        else:
            raise ValueError("class item %s" % op)
    return hit != neg


def _in_category(cat, ch):
    name = str(cat)
    if name.endswith("NOT_DIGIT"):
        return not ch.isdigit() or ord(ch) > 127
    if name.endswith("DIGIT"):
        return "0" <= ch <= "9"
    if name.endswith("NOT_WORD"):
        return ch not in WORD_CHARS and not ("A" <= ch <= "Z")
    if name.endswith("WORD"):
        return ch in WORD_CHARS or "A" <= ch <= "Z"
    if name.endswith("NOT_SPACE"):
        return ch not in " \t\n\r\f\v"
    if name.endswith("SPACE"):
        return ch in " \t\n\r\f\v"
    raise ValueError("category %s" % name)


def _pick_class(items, rng):
    pos = [(op, av) for op, av in items if op is not sre_c.NEGATE]
    if any(op is sre_c.NEGATE for op, _ in items) or rng.random() < 0.1:
        # negated class (or sometimes anyway): try characters until one is in
        pool = "abcxyz09_-.QZ \n\xc3"
        for _ in range(40):
            ch = rng.choice(pool)
            if _in_class(items, ch):
                return ch
    op, av = rng.choice(pos) if pos else (None, None)
    if op is sre_c.LITERAL:
        return chr(av)
    if op is sre_c.RANGE:
        return chr(rng.randint(av[0], min(av[1], av[0] + 40)))
    if op is sre_c.CATEGORY:
        for _ in range(60):
            ch = rng.choice(WORD_CHARS + " \t-/.Q")
            if _in_category(av, ch):
                return ch
    return "a"


def _emit(items, rng, out, depth=0):
    for op, av in items:
        if op is sre_c.LITERAL:
            out.append(chr(av))
        elif op is sre_c.NOT_LITERAL:
            out.append(rng.choice([c for c in "abz0_" if ord(c) != av]))
        elif op is sre_c.ANY:
            out.append(rng.choice(ANY_CHARS) if rng.random() < 0.3 else rng.choice("abcxyz"))
        elif op is sre_c.IN:
            out.append(_pick_class(av, rng))
        elif op is sre_c.BRANCH:
            _emit(rng.choice(av[1]), rng, out, depth + 1)
        elif op is sre_c.SUBPATTERN:
            _emit(av[-1], rng, out, depth + 1)
        elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, getattr(sre_c, "POSSESSIVE_REPEAT", None)):
            lo, hi, sub = av
            hi = lo + 3 if hi is sre_c.MAXREPEAT else min(hi, lo + 3)
            n = rng.randint(lo, hi)
            if rng.random() < 0.3:
                n = lo
            for _ in range(n):
                _emit(sub, rng, out, depth + 1)
        elif op is sre_c.AT:
            pass
        else:
            raise ValueError("op %s" % op)


def sample_regex(rx, rng):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = sre_parse.parse(rx, 0)
        out = []
        _emit(tree, rng, out)
        return "".join(out)
    except Exception:  # noqa: BLE001 - anything Python cannot read: fall back
        return None


META = set(".^$?*+|[({")


def literal_prefix(rx):
    """The literal text before the first metacharacter, escapes resolved; a character followed by
    ?, * or { is not part of it."""
    out = []
    i = 0
    while i < len(rx):
        c = rx[i]
        if c == "\\" and i + 1 < len(rx):
            c = rx[i + 1]
            if c.isalnum():
                break
            nxt = rx[i + 2] if i + 2 < len(rx) else ""
            i += 2
        elif c in META:
            break
        else:
            nxt = rx[i + 1] if i + 1 < len(rx) else ""
            i += 1
        if nxt in ("?", "*", "{"):
            break
        out.append(c)
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# Path variants around a path that some spec matches.

EXTRA_NAMES = ["x", "bin", "lib", "etc", "a b", "tmp", "data", "foo.so", "1", "Q", ".ssh", "..", "."]


def variants(p, rng, names):
    """Near-misses and extensions of p."""
    out = [p]
    comps = [c for c in p.split("/")]
    r = rng.random
    if r() < 0.6:
        out.append(p.rstrip("/") + "/" + rng.choice(names))
    if r() < 0.3:
        out.append(p.rstrip("/") + "/" + rng.choice(names) + "/" + rng.choice(names))
    if r() < 0.35 and "/" in p.rstrip("/")[1:]:
        out.append(p.rstrip("/").rsplit("/", 1)[0] or "/")
    if r() < 0.3 and len(p) > 1:
        i = rng.randrange(1, len(p))
        out.append(p[:i] + rng.choice("a_Z9.-") + p[i + 1:])  # one character changed
    if r() < 0.2:
        out.append(p + rng.choice("az0.-"))
    if r() < 0.2 and len(p) > 1:
        out.append(p[:-1])
    if r() < 0.15:
        out.append(p + "/")
    if r() < 0.1:
        out.append(p + "\n")
    if r() < 0.05:
        out.append(p + "/\n")
    if r() < 0.12 and len(comps) > 1:
        i = rng.randrange(1, len(comps))
        out.append("/".join(comps[:i]) + "/" * rng.randint(2, 3) + "/".join(comps[i:]))
    if r() < 0.05:
        out.append("/" + p)
    if r() < 0.05:
        out.append("".join(ch.upper() if ch < "\x80" else ch for ch in p))
    if r() < 0.04:
        out.append(p + "\n" + rng.choice(names))
    if r() < 0.03 and len(p) > 2:
        i = rng.randrange(1, len(p))
        out.append(p[:i] + "\n" + p[i:])
    if r() < 0.04 and len(comps) > 1:
        out.append(p.replace("/", "/ ", 1))
    return out


SPECIAL_PATHS = ["/", "//", "///", "/\n", "//\n", "/ ", "/\t", "/a b", "/a b/c d", "",
                 "rel", "rel/path", " /a", "\n", "./a", "/.", "/..", "/./a", "/a/../b",
                 "/\xc3\xa9", "/\xff", "/a\n\n", "/a/\n", "/a\nb", "/" + "a/" * 2100, "/x" * 3000,
                 "/" + "n" * 5000, "/usr/" + "y" * 300 + "/lib"]


# ---------------------------------------------------------------------------------------------
# Random policies.

POOL = ["a", "b", "c", "x", "bin", "lib", "lib64", "usr", "etc", "data", "vendor", "system",
        "e-dge", "f1", "h", "ab", "abc", "d.txt", ".hidden", "co.de", "sub", "sbin", "home",
        "root", "u", "v2", "lost+found"]

ATOMS = ["[^/]+", "[^/]*", "[0-9]+", "\\d", "\\d+", "[a-z]+", "\\w+", "[0-9]{1,3}", ".*", ".+",
         "[a-c]", "[^/]", "\\w", "[a-z]*", "[.]", "[^a/]+"]
SUFFIXES = ["(/.*)?", "(/.*)?", "(/.*)?", "(/.+)?", "/.*", "(/[^/]*)?", "/?", "(/[^/]+)*", "",
            "", "", ".*", "(\\..*)?"]


def esc(name, rng):
    """Name as regex: '.' mostly escaped, '-' sometimes escaped, '+' always escaped."""
    out = []
    for ch in name:
        if ch == ".":
            out.append("\\." if rng.random() < 0.8 else ".")
        elif ch == "-":
            out.append("\\-" if rng.random() < 0.3 else "-")
        elif ch == "+":
            out.append("\\+")
        else:
            out.append(ch)
    return "".join(out)


def plain_name(name, rng):
    """A name that stays plain for 3.4 (no metacharacter outside an escape)."""
    out = []
    for ch in name:
        if ch in ".+":
            out.append("\\" + ch)  # an escaped '.' leaves the spec plain in 3.4
        elif ch == "-" and rng.random() < 0.2:
            out.append("\\-")
        else:
            out.append(ch)
    return "".join(out)


class PolicyGen:
    def __init__(self, rng):
        self.rng = rng
        self.names = rng.sample(POOL, rng.randint(6, 11))
        self.tops = self.names[: rng.randint(2, 4)]
        self.n = 0

    def name(self):
        return self.rng.choice(self.names)

    def top(self):
        return self.rng.choice(self.tops)

    def comp(self, unbounded):
        """One component as regex; unbounded[0] counts the '.'-based unbounded quantifiers used."""
        rng = self.rng
        r = rng.random()
        if r < 0.45:
            return esc(self.name(), rng)
        if r < 0.7:
            a = rng.choice(ATOMS)
            if a in (".*", ".+"):
                if unbounded[0] >= 1:
                    a = "[^/]+"
                else:
                    unbounded[0] += 1
            return a
        if r < 0.8:
            k = rng.randint(2, 3)
            return "(" + "|".join(esc(n, rng) for n in rng.sample(self.names, k)) + ")"
        if r < 0.87:
            n = self.name()
            return esc(n, rng) + rng.choice(["?", "*", "+", "{1,3}", "{0,2}"])
        if r < 0.93:
            n = self.name()
            if unbounded[0] >= 1:
                return esc(n, rng) + "[^/]*"
            unbounded[0] += 1
            return esc(n, rng) + ".*"
        return esc(self.name(), rng) + "\\d?"

    def suffix(self, unbounded):
        s = self.rng.choice(SUFFIXES)
        if "." in s and "\\." not in s and "[.]" not in s:
            if unbounded[0] >= 2:
                return "(/[^/]*)?"
            unbounded[0] += 1
        return s

    def regex_spec(self, stem_literal=True):
        rng = self.rng
        unb = [0]
        k = rng.randint(0, 3)
        first = esc(self.top(), rng) if stem_literal else self.comp(unb)
        comps = [first] + [self.comp(unb) for _ in range(k)]
        return "/" + "/".join(comps) + self.suffix(unb)

    def plain_spec(self):
        rng = self.rng
        k = rng.randint(0, 3)
        comps = [self.top()] + [self.name() for _ in range(k)]
        s = "/" + "/".join(plain_name(c, rng) for c in comps)
        r = rng.random()
        if r < 0.05:
            s += "/x]y"
        elif r < 0.08:
            s += "/c}d"
        elif r < 0.11:
            s += "#b"
        elif r < 0.13:
            s += "/,@=%"
        elif r < 0.2:
            s += rng.choice(["\\d", "\\w", "\\-x", "\\.y", "\\d\\d"])  # plain for 3.4, regex escapes
        return s

    def quirk_spec(self):
        rng = self.rng
        a, b, c, d = self.top(), self.name(), self.top(), self.name()
        return rng.choice([
            "/%s/%s/?" % (a, b),
            "/%s/?" % a,
            "/e\\-dge/%s" % b,
            "/e\\-dge(/.*)?",
            "/%s/f\\d" % a,
            "/%s/%s|/%s/%s" % (a, b, c, d),
            "/%s|/%s/%s" % (a, c, d),
            "/%s/%s(/.*)?" % (a, b),
            "/%s(/.*)?" % a,
            "/%s/%s$" % (a, b),
            "/%s/br{ace}" % a,
            "/%s/\\/%s" % (a, b),
            "/%s/." % a,
            "/%s/.." % a,
            "/%s/[^/]/[^/]" % a,
            "/%s/x{2}" % a,
            "/%s/%s/" % (a, b),
            "/%s//%s" % (a, b),
            "/%s/(%s)" % (a, b),
            "/%s/(%s/)?%s" % (a, b, d),
        ])

    def nostem_spec(self):
        rng = self.rng
        a, b, c = self.top(), self.name(), self.name()
        head = rng.choice([
            "(%s|%s/%s)" % (a, c, b), "(%s|%s)" % (a, self.top()), "%s?%s" % (a[:-1], a[-1]) if len(a) > 1 else a + "?",
            "[%s]%s" % (a[0], a[1:]), "%s.*" % a, "%s[^/]*" % a, "[^/]+", "(%s)" % a, "%s+" % a,
        ])
        tail = "/".join(esc(self.name(), rng) for _ in range(rng.randint(0, 2)))
        s = "/" + head + ("/" + tail if tail else "")
        return s + rng.choice(["(/.*)?", "", "(/[^/]*)?", "/[^/]+"])

    def catchall_spec(self):
        return self.rng.choice([".*", "/.*", "/[^/]*", "(/.*)?", "/.+", "/[^/]+(/.*)?", "/"])

    def relative_spec(self):
        rng = self.rng
        a, b = self.name(), self.name()
        return rng.choice([
            "%s/%s" % (a, b), ".*/%s" % b, "[/]%s/%s" % (a, b), "%s|/%s/%s" % (a, self.top(), b),
            "%s(/.*)?" % a, "(%s)/.*" % a, "\\/%s" % a,
        ])

    def topalt_spec(self):
        rng = self.rng
        x = self.regex_spec() if rng.random() < 0.5 else self.plain_spec()
        y = self.regex_spec() if rng.random() < 0.5 else self.plain_spec()
        if rng.random() < 0.2:
            y = y.lstrip("/")
        return x + "|" + y

    def spec(self):
        r = self.rng.random()
        if r < 0.27:
            return self.plain_spec()
        if r < 0.62:
            return self.regex_spec()
        if r < 0.70:
            return self.quirk_spec()
        if r < 0.78:
            return self.nostem_spec()
        if r < 0.84:
            return self.topalt_spec()
        if r < 0.87:
            return self.catchall_spec()
        if r < 0.91:
            return self.relative_spec()
        if r < 0.95:
            return self.exotic_spec()
        return self.regex_spec(stem_literal=False)

    def exotic_spec(self):
        """PCRE2 features that real policies do not use but that PCRE2 (and so 3.4) accepts."""
        rng = self.rng
        a, b, c = self.top(), self.name(), self.name()
        eb = esc(b, rng)
        return rng.choice([
            "/%s/(?i)%s" % (a, eb.upper()),          # inline flag: case-insensitive to the end
            "/%s/(?i:%s)/%s" % (a, eb.upper(), c),
            "(?i)/%s/%s" % (a.upper(), eb),          # a flag first: no stem
            "/%s/(?:%s|%s)(/.*)?" % (a, eb, esc(c, rng)),
            "/%s/\\Q%s.x\\E" % (a, b),               # quoted text: '.' is literal there
            "/%s/\\x61%s" % (a, eb),                 # plain for 3.4 (the escape skips 'x'); matches /A/ab...
            "/%s/%s\\n" % (a, eb),                   # plain for 3.4; matches a newline
            "/%s/\\141%s" % (a, eb),                 # octal escape: 'a'
            "/%s/\\x{61}%s" % (a, eb),
            "/%s/\\o{141}%s.*" % (a, eb),
            "/%s/x\\ty" % a,                         # a tab
            "/%s/\\S+" % a,
            "/%s/\\D\\W?" % a,
            "/%s/[[:digit:]]+" % a,
            "/%s/[[:alpha:]_]*" % a,
            "/%s/%s|" % (a, eb),                     # an empty top-level alternative: ^/a/b|$
            "/%s/(%s|)x" % (a, eb),
            "/%s/%s(?=x)x" % (a, eb),
            "/%s/(?!%s)[^/]+" % (a, eb),
            "/%s/(%s)\\1" % (a, eb),                 # a back reference
            "/%s/%s\\z" % (a, eb),                   # \z: no newline allowed before the end
            "/%s/%s\\Z" % (a, eb),
            "/%s/\\b%s\\b" % (a, eb),
            "/%s/(?-s)%s.x" % (a, eb),               # '.' without DOTALL
            "/%s/(?m)%s$" % (a, eb),                 # multi-line '$'
            "/%s/%s$/x" % (a, eb),                   # '$' in the middle: never matches
            "/%s/^%s" % (a, eb),                     # '^' in the middle: never matches
            # (3.4 refuses a file with a non-ASCII byte in its first three fields: bytes as escapes)
            "/%s/\\xc3\\xa9" % a,                    # UTF-8 bytes, matched byte by byte
            "/%s/[\\xc3\\xa9]" % a,
            "/%s/.\\xa9" % a,
            "/%s/[\\x80-\\xff]+" % a,
            "/%s/[^/]{2}" % a,
            "/%s/x{,2}" % a,                         # PCRE2 10.42: the literal text "{,2}"
            "/%s/(%s){2,}" % (a, eb),
        ])

    def ctx(self):
        self.n += 1
        r = self.rng.random()
        if r < 0.06:
            return "<<none>>"
        if r < 0.065:
            return self.rng.choice(["<<none>>x", "<<NONE>>", "<<none"])  # not <<none>>: contexts
        return "u:object_r:t%d_t:s0" % self.n

    def typ(self):
        return None if self.rng.random() < 0.55 else self.rng.choice(TYPE_NAMES)

    def entries(self, count, catchall_first):
        """A list of (regex, type, context), with twins and plain/regex pairs mixed in."""
        rng = self.rng
        ents = []
        if catchall_first:
            ents.append((self.catchall_spec(), None, self.ctx()))
        while len(ents) < count:
            rx = self.spec()
            ents.append((rx, self.typ(), self.ctx()))
            r = rng.random()
            if r < 0.15:
                # twin: same regex, other type (typed/untyped), before or after
                t = ents[-1][1]
                t2 = rng.choice(TYPE_NAMES) if t is None else (None if rng.random() < 0.6 else rng.choice(TYPE_NAMES))
                pos = rng.randint(0, len(ents))
                ents.insert(pos, (rx, t2, self.ctx()))
            elif r < 0.27:
                # the same path as a plain spec and as a regex spec, in either order
                p = self.plain_spec()
                rx2 = rng.choice([p + "(/.*)?", p + "/?", p[:-1] + "[" + p[-1] + "]", p + "|/zz", "(" + p + ")",
                                  p.replace("/", "/+", 1), p + ".*", p + "$"])
                pair = [(p, self.typ(), self.ctx()), (rx2, self.typ(), self.ctx())]
                rng.shuffle(pair)
                pos = rng.randint(0, len(ents))
                ents[pos:pos] = pair
            elif r < 0.30:
                # the same regex and type twice (a duplicate libselinux accepts without validation)
                ents.insert(rng.randint(0, len(ents)), (rx, ents[-1][1], self.ctx()))
        return ents


def format_lines(ents, rng, crlf, extras=True):
    """file_contexts text lines (without the final line ending decision)."""
    lines = []
    for rx, t, ctx in ents:
        r = rng.random()
        if extras and r < 0.06:
            lines.append(rng.choice(["# comment %s" % rx, "   # indented comment", "#", "#/not/a/spec x_t",
                                     "\t# tab", "## /a -- b", "# caf\xc3\xa9 \xff"]))
        elif extras and r < 0.1:
            lines.append(rng.choice(["", "   ", "\t", " \t "]))
        sep = lambda: rng.choice([" ", "\t", "  ", "\t\t", " \t"])  # noqa: E731
        lead = rng.choice(["", "", "", "", " ", "\t", "  "]) if extras else ""
        if t is None and extras and rng.random() < 0.01:
            ctx = rng.choice(TYPE_NAMES)  # two fields: "--" is then the context, not a type
        if t is None:
            line = lead + rx + sep() + ctx
        else:
            line = lead + rx + sep() + t + sep() + ctx
            if extras and rng.random() < 0.05:
                line += sep() + rng.choice(["junk", "more fields", "#x", "-d", "caf\xc3\xa9"])
        if extras and rng.random() < 0.04:
            line += rng.choice([" ", "\t", "  "])
        lines.append(line)
    end = "\r\n" if crlf else "\n"
    return [ln + (end if not crlf or rng.random() < 0.9 else "\n") for ln in lines]


def gen_subs(rng, pg, specs_paths):
    """A .subs-style list: SRC DST lines (later lines win)."""
    lines = []
    n = rng.randint(1, 5)
    for _ in range(n):
        r = rng.random()
        src = "/" + pg.top()
        if r < 0.4:
            src += "/" + pg.name()
        elif r < 0.5 and specs_paths:
            src = rng.choice(specs_paths).rstrip("/\n") or "/" + pg.top()
        elif r < 0.55:
            src += "/"
        elif r < 0.58:
            src = pg.name()  # no leading slash: never a prefix of a key
        elif r < 0.62:
            src = "/"
        r = rng.random()
        if r < 0.25:
            dst = "/"
        elif r < 0.75:
            dst = "/" + pg.top() + ("/" + pg.name() if rng.random() < 0.5 else "")
        elif r < 0.82:
            dst = "/" + pg.name() + "/"
        elif r < 0.86:
            dst = pg.name()
        else:
            dst = "/" + pg.name()
        if rng.random() < 0.15:
            lines.append(rng.choice(["# alias comment", "", "   ", "  # x /y"]))
        sep = rng.choice([" ", "\t", "  "])
        line = rng.choice(["", " ", "\t"]) + src + sep + dst
        if rng.random() < 0.08:
            line += sep + "ignored"
        lines.append(line)
    return [ln + "\n" for ln in lines]


def policy_queries(rng, pg, ents, subs_lines, nq):
    """About nq query records for one policy."""
    qs = []
    names = pg.names + EXTRA_NAMES
    paths = []
    for rx, t, _ in ents:
        for _ in range(rng.randint(1, 3)):
            s = sample_regex(rx, rng)
            if s is None:
                s = "/" + literal_prefix(rx).lstrip("/")
            paths.extend(variants(s, rng, names))
        pre = literal_prefix(rx)
        if pre:
            paths.append(pre)
            if rng.random() < 0.3:
                paths.append(pre.rstrip("/") + "/" + rng.choice(names))
    for ln in subs_lines:
        f = ln.split()
        if len(f) >= 2 and not f[0].startswith("#"):
            for p in (f[0], f[1]):
                paths.extend([p, p + "/" + rng.choice(names), p + rng.choice("xy"), p + "/",
                              p + "//" + rng.choice(names), p + "/" + rng.choice(names) + "/" + rng.choice(names)])
    derived = list(paths)
    paths.extend(SPECIAL_PATHS)
    typed = [t for _, t, _ in ents if t]
    for p in paths:
        r = rng.random()
        if r < 0.1:
            for m in every_mode(rng):
                qs.append((m, p))
            qs.append((rng.choice(ODD_MODES), p))
        elif r < 0.35 and typed:
            qs.append((rand_mode(rng, TYPES[rng.choice(typed)]), p))
        else:
            qs.append((any_mode(rng), p))
    while len(qs) < nq:
        # top up: random paths over the policy's names, and variants of spec-made ones
        if derived and rng.random() < 0.5:
            p = rng.choice(variants(rng.choice(derived), rng, names))
        else:
            k = rng.randint(1, 5)
            p = "/" + "/".join(rng.choice(names) for _ in range(k)) + rng.choice(["", "", "", "/", "//", "\n"])
        qs.append((any_mode(rng), p))
    rng.shuffle(qs)
    if len(qs) > nq:
        # keep the special paths, trim the rest
        special = [q for q in qs if q[1] in SPECIAL_PATHS]
        rest = [q for q in qs if q[1] not in SPECIAL_PATHS]
        qs = special + rest[: max(0, nq - len(special))]
        rng.shuffle(qs)
    return qs


def cmd_adversarial(a):
    os.makedirs(a.out, exist_ok=True)
    total = 0
    for i in range(a.policies):
        rng = random.Random("%s/%d" % (a.seed, i))
        pg = PolicyGen(rng)
        d = os.path.join(a.out, "p%04d" % i)
        os.makedirs(d, exist_ok=True)
        size = rng.randint(8, 60) if rng.random() < 0.93 else rng.randint(150, 400)
        ents = pg.entries(size, catchall_first=rng.random() < 0.35)
        crlf = rng.random() < 0.12
        lines = format_lines(ents, rng, crlf)
        kind = rng.random()
        all_ents = list(ents)
        subs_lines = []
        base = os.path.join(d, "file_contexts")
        fcarg = base
        baseonly = False
        if kind < 0.2:
            # several files: their concatenation
            nparts = rng.randint(2, 3)
            cuts = sorted(rng.sample(range(1, max(2, len(lines))), min(nparts - 1, max(1, len(lines) - 1))))
            parts = []
            prev = 0
            for c in cuts + [len(lines)]:
                parts.append(lines[prev:c])
                prev = c
            if rng.random() < 0.15:
                parts.insert(rng.randint(0, len(parts)), [])  # an empty file
            names = []
            for j, pl in enumerate(parts):
                text = "".join(pl)
                if text and rng.random() < 0.4:
                    text = text.rstrip("\n")  # a file whose last line has no newline (CRLF keeps its \r)
                fn = os.path.join(d, "part%d" % (j + 1))
                with open(fn, "wb") as f:
                    f.write(text.encode(ENC))
                names.append(fn)
            fcarg = ",".join(names)
            if rng.random() < 0.5:
                # decoys: the several-file form reads no .homedirs/.local and applies no .subs
                with open(names[0] + ".homedirs", "wb") as f:
                    f.write("".join(format_lines(pg.entries(4, True), rng, False)).encode(ENC))
                with open(names[-1] + ".local", "wb") as f:
                    f.write("".join(format_lines(pg.entries(4, True), rng, False)).encode(ENC))
                with open(names[0] + ".subs_dist", "wb") as f:
                    f.write("".join(gen_subs(rng, pg, [])).encode(ENC))
        else:
            text = "".join(lines)
            if rng.random() < 0.3:
                text = text.rstrip("\n")
            with open(base, "wb") as f:
                f.write(text.encode(ENC))
            baseonly = kind < 0.3
            for ext in ("homedirs", "local"):
                if rng.random() < 0.3:
                    more = pg.entries(rng.randint(2, 12), catchall_first=False)
                    if not baseonly:
                        all_ents.extend(more)
                    with open(base + "." + ext, "wb") as f:
                        f.write("".join(format_lines(more, rng, crlf)).encode(ENC))
            sample_paths = [sample_regex(rx, rng) or "/" + pg.top() for rx, _, _ in ents[:10]]
            for ext in ("subs", "subs_dist"):
                if rng.random() < 0.35:
                    sl = gen_subs(rng, pg, sample_paths)
                    subs_lines.extend(sl)
                    with open(base + "." + ext, "wb") as f:
                        f.write("".join(sl).encode(ENC))
        with open(os.path.join(d, "fcarg"), "w") as f:
            f.write(fcarg + "\n")
        if baseonly:
            open(os.path.join(d, "baseonly"), "w").close()
        qs = policy_queries(rng, pg, all_ents, subs_lines, a.queries)
        total += write_queries(os.path.join(d, "queries"), qs)
        with open(os.path.join(d, "nrel"), "w") as f:
            # queries whose path is not absolute: the only <<error>> answers libselinux may give
            f.write("%d\n" % sum(1 for _, p in qs if not p.startswith("/")))
    print("generated %d policies, %d queries" % (a.policies, total))


# ---------------------------------------------------------------------------------------------
# Real policies: specs of a file, queries made from them.

def read_specs(path):
    """(regex, type) of each spec line of a file_contexts file (no validation)."""
    out = []
    try:
        with open(path, "rb") as f:
            for raw in f:
                line = raw.decode(ENC).strip()
                if not line or line.startswith("#"):
                    continue
                fl = line.split()
                if len(fl) < 2:
                    continue
                out.append((fl[0], fl[1] if len(fl) >= 3 else None))
    except OSError:
        pass
    return out


def read_subs(path):
    out = []
    try:
        with open(path, "rb") as f:
            for raw in f:
                fl = raw.decode(ENC).split()
                if len(fl) >= 2 and not fl[0].startswith("#"):
                    out.append((fl[0], fl[1]))
    except OSError:
        pass
    return out


SPEC_NAMES = ["x", "bin", "lib", "a.so", "file.conf", "sub", "1", ".ssh", "cache", "log", "data"]


def spec_paths(specs, rng, per_spec):
    """(mode, path) made from each spec: samples of its regex, its literal prefix, variants."""
    out = []
    for rx, t in specs:
        tm = TYPES.get(t) if t else None
        for _ in range(per_spec):
            s = sample_regex(rx, rng)
            if s is None or not s.startswith("/"):
                s = "/" + literal_prefix(rx).lstrip("/")
            for p in variants(s, rng, SPEC_NAMES)[:3]:
                out.append((rand_mode(rng, tm) if tm and rng.random() < 0.6 else any_mode(rng), p))
        pre = literal_prefix(rx)
        if pre.startswith("/"):
            out.append((any_mode(rng), pre))
            out.append((any_mode(rng), pre.rstrip("/") + "/" + rng.choice(SPEC_NAMES)))
    return out


def read_tree(path):
    """Records of `find -printf '%m %y %p\\0'`: (mode, path)."""
    out = []
    with open(path, "rb") as f:
        data = f.read()
    for r in data.split(b"\0"):
        if not r:
            continue
        try:
            perm, typ, p = r.split(b" ", 2)
            mode = FIND_TYPES.get(typ.decode(), 0) | int(perm, 8)
        except ValueError:
            continue
        out.append((mode, p.decode(ENC)))
    return out


def cmd_refpolicy(a):
    rng = random.Random("%s/refpolicy" % a.seed)
    os.makedirs(a.out, exist_ok=True)
    tree = read_tree(a.tree)
    # a stratified sample of the machine's tree: at most --per-dir paths under each /a/b/c
    groups = {}
    for m, p in tree:
        groups.setdefault("/".join(p.split("/")[:4]), []).append((m, p))
    real = []
    for k in sorted(groups):
        g = sorted(groups[k])  # not in readdir order: the same tree gives the same sample
        if len(g) > a.per_dir:
            g = rng.sample(g, a.per_dir)
        real.extend(g)
    if len(real) > a.max_tree:
        real = rng.sample(real, a.max_tree)
    specs = read_specs(a.fc) + read_specs(a.fc + ".homedirs") + read_specs(a.fc + ".local")
    subs = read_subs(a.fc + ".subs") + read_subs(a.fc + ".subs_dist")
    derived = spec_paths(specs, rng, 4)
    area = []
    for home in ["/root", "/home/u", "/home/user", "/home/a b", "/home//u", "/home/u/", "/export/home/u"]:
        for sub in ["", "/.ssh", "/.ssh/authorized_keys", "/.ssh/id_rsa", "/public_html", "/public_html/cgi-bin/x",
                    "/www/.htaccess", "/bin", "/bin/tool", "/.cache/x", "/Music", "/.gnupg", "/.local/share/x",
                    "/.config", "/.mozilla/firefox", "/.xauthABC", "/quota.user", "/aquota.group", "/x/y/z"]:
            area.append(home + sub)
    for src, dst in subs:
        for p in (src, dst):
            area.extend([p, p + "/", p + "/bin/ls", p + "/x", p + "x", p + "//y", p + "/systemd/system/a.service",
                         p + "/lib/ld.so", p + "/init.d/ssh", p + "/lock/x", p + "/x/y"])
    area.extend(SPECIAL_PATHS)
    area_recs = []
    for p in area:
        area_recs.extend((m, p) for m in every_mode(rng))
        area_recs.append((rng.choice(ODD_MODES), p))
    # every mode on a sample of real and spec-made paths
    pool = [p for _, p in real] + [p for _, p in derived]
    allm = []
    for p in rng.sample(pool, min(len(pool), a.every_mode_paths)):
        allm.extend((m, p) for m in every_mode(rng))
        if rng.random() < 0.2:
            allm.append((rng.choice(ODD_MODES), p))
    qs = real + derived + area_recs + allm
    # top up with spec-made paths until the minimum is reached
    while len(qs) < a.min_queries:
        qs.extend(spec_paths(rng.sample(specs, min(len(specs), 2000)), rng, 2))
    rng.shuffle(qs)
    n = write_queries(os.path.join(a.out, "queries"), qs)
    base = rng.sample(real + derived + allm, min(a.base_queries - len(area_recs), len(real) + len(derived) + len(allm)))
    base += area_recs
    rng.shuffle(base)
    nb = write_queries(os.path.join(a.out, "queries_base"), base)
    print("refpolicy: %d queries (%d from this machine's tree of %d paths, %d made from %d specs, %d homedirs/subs area, "
          "%d every-mode), %d for --base-only" % (n, len(real), len(tree), len(derived), len(specs), len(area_recs),
                                                   len(allm), nb))


# ---------------------------------------------------------------------------------------------
# Android.

LISTING_MODES = {"f": 0o100644, "x": 0o100755, "d": 0o040755, "l": 0o120777}


def image_paths(imgdir):
    """(mode, path) of an image dir's listings, each path as labels.tsv writes it and raw."""
    out = []

    def add(mode, rel):
        rel = rel.strip("/")
        if not rel:
            return
        out.append((mode, "/" + rel))
        comps = rel.split("/")
        # the partitions of a dump: system/system/X is /system/X, boot/ramdisk/X is /X, ...
        if comps[0] in ("system", "system_other") and len(comps) > 1:
            out.append((mode, "/" + "/".join(comps[1:])))
        if comps[0] in ("boot", "vendor_boot", "recovery") and len(comps) > 2 and comps[1] == "ramdisk":
            out.append((mode, "/" + "/".join(comps[2:])))

    try:
        with open(os.path.join(imgdir, "tree.tsv"), "rb") as f:
            for raw in f:
                line = raw.decode(ENC).rstrip("\n")
                if line.startswith("#"):
                    continue
                fl = line.split("\t")
                if len(fl) >= 4:
                    add(LISTING_MODES.get(fl[0], 0o100644), fl[3])
    except OSError:
        pass
    for name in ("all_files.txt", "installed-files.txt", "installed-files-vendor.txt"):
        try:
            with open(os.path.join(imgdir, name), "rb") as f:
                for raw in f:
                    fl = raw.decode(ENC).split()
                    if not fl:
                        continue
                    p = fl[-1]
                    add(0o100644, p)
        except OSError:
            pass
    for fn in sorted(os.listdir(imgdir)):
        if fn.endswith(".labels.tsv"):
            for m, p, _ in read_labels(os.path.join(imgdir, fn))[1]:
                out.append((m, p))
    return out


def read_labels(path):
    """(files named in the header, [(mode, path, label)])."""
    files = []
    rows = []
    with open(path, "rb") as f:
        for raw in f:
            line = raw.decode(ENC).rstrip("\n")
            if line.startswith("#"):
                if "concatenated in this order" in line:
                    files = [x.strip() for x in line.split(":", 1)[1].split(",")]
                continue
            fl = line.split("\t")
            if len(fl) == 3:
                rows.append((LISTING_MODES.get(fl[0], 0o100644), fl[1], fl[2]))
    return files, rows


def test_paths(path):
    out = []
    try:
        with open(path, "rb") as f:
            for raw in f:
                fl = raw.decode(ENC).split()
                if fl and fl[0].startswith("/"):
                    out.append(fl[0])
    except OSError:
        pass
    return out


def android_policies(shared):
    """(name, [files]) of every Android policy to test."""
    pol = []
    adir = os.path.join(shared, "android")
    for ver in sorted(os.listdir(adir)):
        vd = os.path.join(adir, ver)
        if not os.path.isdir(vd):
            continue
        if ver == "devices":
            for dev in sorted(os.listdir(vd)):
                dd = os.path.join(vd, dev)
                fs = sorted(os.path.join(dd, x) for x in os.listdir(dd) if x.endswith("file_contexts"))
                for fpath in fs:
                    pol.append(("%s-%s" % (dev, os.path.basename(fpath)), [fpath]))
                if len(fs) > 1:
                    common = [x for x in fs if "common" in os.path.basename(x)]
                    rest = [x for x in fs if x not in common]
                    pol.append(("%s-all" % dev, common + rest))
            continue
        fs = sorted(os.path.join(vd, x) for x in os.listdir(vd) if "file_contexts" in x and not x.endswith("_test"))
        for fpath in fs:
            pol.append(("%s-%s" % (ver, os.path.basename(fpath)), [fpath]))
        priv = os.path.join(vd, "private_file_contexts")
        vend = os.path.join(vd, "vendor_file_contexts")
        if os.path.exists(priv) and os.path.exists(vend):
            pol.append(("%s-private+vendor" % ver, [priv, vend]))
    idir = os.path.join(shared, "images")
    if os.path.isdir(idir):
        for img in sorted(os.listdir(idir)):
            d = os.path.join(idir, img)
            if not os.path.isdir(d):
                continue
            for fn in sorted(os.listdir(d)):
                if fn.endswith("file_contexts"):
                    pol.append(("%s-%s" % (img[:12], fn), [os.path.join(d, fn)]))
                if fn.endswith(".labels.tsv"):
                    files, _ = read_labels(os.path.join(d, fn))
                    if files:
                        pol.append(("%s-concat" % img[:12], [os.path.join(d, x) for x in files]))
    return pol


def cmd_android(a):
    rng = random.Random("%s/android" % a.seed)
    os.makedirs(a.out, exist_ok=True)
    shared = a.shared
    idir = os.path.join(shared, "images")
    imgs = []
    if os.path.isdir(idir):
        imgs = [os.path.join(idir, x) for x in sorted(os.listdir(idir)) if os.path.isdir(os.path.join(idir, x))]
    listing = []
    for d in imgs:
        listing.extend(image_paths(d))
    seen = set()
    listing = [q for q in listing if not (q in seen or seen.add(q))]
    tpaths = test_paths(os.path.join(shared, "android", "android-14.0.0_r50", "plat_file_contexts_test"))
    total = 0
    pols = android_policies(shared)
    all_specs = {}
    for name, files in pols:
        specs = []
        for fpath in files:
            specs.extend(read_specs(fpath))
        all_specs[name] = specs
    for i, (name, files) in enumerate(pols):
        prng = random.Random("%s/android/%s" % (a.seed, name))
        d = os.path.join(a.out, "%02d-%s" % (i, name))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "fcarg"), "w") as f:
            f.write(",".join(files) + "\n")
        specs = all_specs[name]
        qs = []
        # every path of the image listings with its real mode: the images' own policies get all of
        # them, other policies a sample
        own = any(os.path.dirname(f) in imgs for f in files)
        qs.extend(listing if own else prng.sample(listing, min(len(listing), a.listing_sample)))
        for p in tpaths:
            qs.extend((m, p) for m in every_mode(prng))
        derived = spec_paths(specs, prng, 5)
        qs.extend(derived)
        # every mode on a sample of listing and spec-made paths
        pool = [p for _, p in listing] + [p for _, p in derived]
        for p in prng.sample(pool, min(len(pool), a.every_mode_paths)):
            qs.extend((m, p) for m in every_mode(prng))
        for p in SPECIAL_PATHS:
            qs.append((any_mode(prng), p))
        prng.shuffle(qs)
        total += write_queries(os.path.join(d, "queries"), qs)
    # golden labels from images/*/labels.tsv
    golden = 0
    for img in imgs:
        for fn in sorted(os.listdir(img)):
            if not fn.endswith(".labels.tsv"):
                continue
            files, rows = read_labels(os.path.join(img, fn))
            if not files or not rows:
                continue
            d = os.path.join(a.out, "golden-" + os.path.basename(img))
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "fcarg"), "w") as f:
                f.write(",".join(os.path.join(img, x) for x in files) + "\n")
            golden += write_queries(os.path.join(d, "queries"), [(m, p) for m, p, _ in rows])
            with open(os.path.join(d, "expected"), "wb") as f:
                for _, _, lab in rows:
                    f.write(lab.encode(ENC) + b"\n")
    print("android: %d policies, %d queries (%d listing paths, %d test paths); %d golden labels"
          % (len(pols), total, len(listing), len(tpaths), golden))


# ---------------------------------------------------------------------------------------------
# Helpers for the shell scripts.

def cmd_split(a):
    with open(a.file, "rb") as f:
        data = f.read()
    recs = data.split(b"\0")
    if recs and recs[-1] == b"":
        recs.pop()
    half = (len(recs) + 1) // 2
    for name, part in ((a.out0, recs[:half]), (a.out1, recs[half:])):
        with open(name, "wb") as f:
            for r in part:
                f.write(r + b"\0")


def cmd_count(a):
    with open(a.file, "rb") as f:
        print(f.read().count(b"\0"))


def read_lines(path):
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [x.decode(ENC) for x in lines]


def cmd_report(a):
    qs = read_records(a.queries)
    ours = read_lines(a.ours)
    ref = read_lines(a.ref)
    n1, n2 = a.names.split(",")
    bad = 0
    shown = 0
    if len(ours) != len(qs) or len(ref) != len(qs):
        print("%s: line counts differ: %d queries, %s %d lines, %s %d lines"
              % (a.label, len(qs), n1, len(ours), n2, len(ref)))
        bad += 1
    for i in range(min(len(qs), len(ours), len(ref))):
        if ours[i] != ref[i]:
            bad += 1
            if shown < a.max:
                m, p = qs[i]
                print("  #%d mode %s path %r: %s %s, %s %s" % (i, m, p, n1, ours[i], n2, ref[i]))
                shown += 1
    if bad:
        bymode = {}
        for i in range(min(len(qs), len(ours), len(ref))):
            if ours[i] != ref[i]:
                bymode[qs[i][0]] = bymode.get(qs[i][0], 0) + 1
        top = sorted(bymode.items(), key=lambda kv: -kv[1])[:6]
        print("%s: %d of %d answers differ (by mode: %s)"
              % (a.label, bad, len(qs), ", ".join("%s: %d" % kv for kv in top)))
        return 1
    return 0


def cmd_sanity(a):
    nq = len(read_records(a.queries))
    ref = read_lines(a.ref)
    if len(ref) != nq:
        print("sanity: %d queries but %d reference lines" % (nq, len(ref)))
        return 1
    labeled = sum(1 for x in ref if x not in ("<<none>>", "<<error>>"))
    if nq and not labeled:
        print("sanity: the reference labels nothing: the comparison would prove nothing")
        return 1
    if len(set(ref)) < 2 and nq > 10:
        print("sanity: the reference gives one answer for everything")
        return 1
    return 0


# ---------------------------------------------------------------------------------------------
# Walk order: a directory's entries one after another, as a walk looks them up (fclabel keeps
# per directory what its entries' lookups share: fcontexts/dirmemo.c).

WALK_NAMES = ["\n", "x\n", "\n\n", "a\nb", "x", "a b", ".", "..", "\xff"]


def name_pieces(fcs):
    """Names made of the policy's regexes: their literal runs cut at '/', each also inside a
    longer name (a name may start with, end with or contain the run a spec needs)."""
    out = set()
    for fc in fcs:
        for rx, _ in read_specs(fc):
            plain = rx.replace("\\.", ".").replace("\\-", "-").replace("\\+", "+")
            for run in re.split(r"[\\^$|?*+()\[\]{}]", plain):
                for piece in run.split("/"):
                    if piece and piece != ".":
                        out.update([piece, piece + "x", "x" + piece, piece[:-1] or piece])
    return sorted(out)


def cmd_walkorder(a):
    """A's queries in walk order: each path's directory's entries together (sorted by path, or
    as given with --keep-order: a find listing), and --extra more names in each directory, made
    of the queries' own names, the policy's literal runs and odd names."""
    rng = random.Random("%s/walkorder" % a.seed)
    if a.tree:
        # find's "%m %y %p" records: permissions, type letter, path
        recs = [("%o" % (FIND_TYPES.get(m.split(" ", 1)[1][:1], 0) | int(m.split(" ", 1)[0], 8)),
                 p) for m, p in ((r[0] + " " + r[1][:1], r[1][2:]) for r in read_records(a.queries))]
    else:
        recs = read_records(a.queries)
    if not a.keep_order:
        recs.sort(key=lambda r: r[1])
    fcs = [f for f in (a.fc or "").split(",") if f]
    pool = sorted(set(p[p.rfind("/") + 1:] for _, p in recs if "/" in p) - {""})
    pieces = name_pieces(fcs)
    seen, out = set(), []
    for m, p in recs:
        out.append((int(m, 8), p))
        d = p[: p.rfind("/") + 1]
        if not d.startswith("/") or d in seen:
            continue
        seen.add(d)
        for _ in range(a.extra):
            r = rng.random()
            src = WALK_NAMES + EXTRA_NAMES if r < 0.2 else pieces if r < 0.7 and pieces else pool
            out.append((any_mode(rng), d + rng.choice(src)))
        if len(out) >= a.max:
            break
    n = write_queries(a.out, out[: a.max])
    print("walkorder: %d queries in %d directories" % (n, len(seen)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("adversarial")
    p.add_argument("--seed", default="20261203")
    p.add_argument("--policies", type=int, default=300)
    p.add_argument("--queries", type=int, default=2000)
    p.add_argument("--out", required=True)
    p = sub.add_parser("refpolicy")
    p.add_argument("--seed", default="20261203")
    p.add_argument("--fc", required=True)
    p.add_argument("--tree", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--min-queries", type=int, default=300000)
    p.add_argument("--base-queries", type=int, default=30000)
    p.add_argument("--per-dir", type=int, default=2500)
    p.add_argument("--max-tree", type=int, default=150000)
    p.add_argument("--every-mode-paths", type=int, default=10000)
    p = sub.add_parser("android")
    p.add_argument("--seed", default="20261203")
    p.add_argument("--shared", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--listing-sample", type=int, default=6000)
    p.add_argument("--every-mode-paths", type=int, default=600)
    p = sub.add_parser("walkorder")
    p.add_argument("--seed", default="20261203")
    p.add_argument("--queries", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--fc", default="")
    p.add_argument("--extra", type=int, default=4)
    p.add_argument("--max", type=int, default=1000000)
    p.add_argument("--keep-order", action="store_true")
    p.add_argument("--tree", action="store_true")
    p = sub.add_parser("split")
    p.add_argument("file")
    p.add_argument("out0")
    p.add_argument("out1")
    p = sub.add_parser("count")
    p.add_argument("file")
    p = sub.add_parser("report")
    p.add_argument("queries")
    p.add_argument("ours")
    p.add_argument("ref")
    p.add_argument("--max", type=int, default=20)
    p.add_argument("--label", default="compare")
    p.add_argument("--names", default="fclabel,libselinux")
    p = sub.add_parser("sanity")
    p.add_argument("queries")
    p.add_argument("ref")
    a = ap.parse_args()
    rc = {"adversarial": cmd_adversarial, "refpolicy": cmd_refpolicy, "android": cmd_android,
          "walkorder": cmd_walkorder, "split": cmd_split, "count": cmd_count, "report": cmd_report, "sanity": cmd_sanity}[a.cmd](a)
    sys.exit(rc or 0)


if __name__ == "__main__":
    main()
