#!/usr/bin/env python3
"""The house's rules, checked on a source tree and its built objects (t_layout.sh runs it).

    layout.py [--root DIR] [--only RULE...]

Prints "ok   RULE: ..." or "FAIL RULE: ..." for each rule, and exits 1 when one failed. The rules
(issue 32; ../shared/docs/style.md draws the house):

  rooms     the rooms exist (fcontexts, android, imgfmt, labeler/{cli,policy,engine,ext4,tree,erofs}),
            seapp/ does not, and labeler/ holds no source of its own outside its rooms
  includes  a file includes headers of its own room, or the one public header of a room below
            it: cli -> policy -> ext4, tree, erofs -> engine -> android -> fcontexts; ext4 -> imgfmt
  engine    nothing in labeler/engine/ names ext2fs, imgfmt or an ext4 function (in its text and
            in its objects' undefined symbols)
  circles   no circle of calls between object files (nm: A uses what B defines and B, through
            any chain, uses what A defines)
  android   no "/data, "/mnt/expand, packages.list" or AID_ in labeler/'s code (comments aside):
            Android's /data knowledge is android/'s
  quiet     the libraries (fcontexts, android, imgfmt) neither print nor exit: their objects use
            no stdio output, stderr/stdout, exit or abort
  size      no product .c over 900 lines
  bench     no benchmark in tests/ (bench/ holds them)

Facts only from the files: no rule is told an answer.
"""
import os
import re
import subprocess
import sys

ROOMS = {
    "fcontexts": "fcontexts",
    "android": "android",
    "imgfmt": "imgfmt",
    "cli": "labeler/cli",
    "policy": "labeler/policy",
    "engine": "labeler/engine",
    "ext4": "labeler/ext4",
    "tree": "labeler/tree",
    "erofs": "labeler/erofs",
}
# the one public header of each room, as it is included (-Ifcontexts -Iandroid -Iimgfmt -Ilabeler)
PUBLIC = {
    "fcontexts": "fcontexts.h",
    "android": "android.h",
    "imgfmt": "imgfmt.h",
    "policy": "policy/policy.h",
    "engine": "engine/engine.h",
    "ext4": "ext4/ext4.h",
    "tree": "tree/tree.h",
    "erofs": "erofs/erofs.h",
}
# who may use whom, directly; a room may use every room below it (the closure)
USES = {
    "cli": ["policy"],
    "policy": ["ext4", "tree", "erofs"],
    "ext4": ["engine", "imgfmt"],
    "tree": ["engine"],
    "erofs": ["engine"],
    "engine": ["android"],
    "android": ["fcontexts"],
    "fcontexts": [],
    "imgfmt": [],
}
LIBRARIES = ["fcontexts", "android", "imgfmt"]
MAX_LINES = 900


def below(room):
    seen, todo = set(), list(USES[room])
    while todo:
        r = todo.pop()
        if r not in seen:
            seen.add(r)
            todo += USES[r]
    return seen


class Checker:
    def __init__(self, root):
        self.root = root
        self.failed = 0

    def say(self, rule, problems, okmsg):
        if problems:
            self.failed += 1
            for p in problems[:20]:
                print("FAIL %s: %s" % (rule, p))
            if len(problems) > 20:
                print("FAIL %s: ... and %d more" % (rule, len(problems) - 20))
        else:
            print("ok   %s: %s" % (rule, okmsg))

    def files(self, room, exts=(".c", ".h")):
        d = os.path.join(self.root, ROOMS[room])
        if not os.path.isdir(d):
            return []
        return sorted(os.path.join(ROOMS[room], f) for f in os.listdir(d)
                      if f.endswith(exts) and os.path.isfile(os.path.join(d, f)))

    def objects(self, rooms=None):
        out = []
        for room in rooms or ROOMS:
            # (an object whose source is gone is a stale build's, not the house's)
            out += [f for f in self.files(room, (".o",))
                    if os.path.isfile(os.path.join(self.root, f[:-2] + ".c"))]
        return out

    def read(self, rel):
        with open(os.path.join(self.root, rel), encoding="utf-8", errors="replace") as f:
            return f.read()

    def nm(self, rel, *flags):
        p = subprocess.run(["nm"] + list(flags) + [os.path.join(self.root, rel)],
                           capture_output=True, text=True)
        return p.stdout.splitlines()

    def undefined(self, rel):
        return {l.split()[-1] for l in self.nm(rel, "-u") if l.strip()}

    def defined(self, rel):
        out = set()
        for l in self.nm(rel, "-g", "--defined-only"):
            p = l.split()
            if len(p) == 3 and p[1] in "TDBRCVW":
                out.add(p[2])
        return out

    # ---- the rules ----

    def rooms(self):
        problems = []
        for room, d in ROOMS.items():
            if not os.path.isdir(os.path.join(self.root, d)):
                problems.append("the room %s/ is missing" % d)
            elif not self.files(room, (".c",)):
                problems.append("the room %s/ holds no source" % d)
        if os.path.exists(os.path.join(self.root, "seapp")):
            problems.append("seapp/ still exists (Android's rules are android/'s)")
        lab = os.path.join(self.root, "labeler")
        if os.path.isdir(lab):
            for f in sorted(os.listdir(lab)):
                if f.endswith((".c", ".h")):
                    problems.append("labeler/%s lies outside the rooms" % f)
        for room in ROOMS:
            if room in PUBLIC and not os.path.isfile(
                    os.path.join(self.root, ROOMS[room], os.path.basename(PUBLIC[room]))):
                problems.append("%s has no public header %s" % (ROOMS[room], PUBLIC[room]))
        self.say("rooms", problems, "%d rooms, each with its sources; no seapp/" % len(ROOMS))

    def includes(self):
        problems = []
        public_of = {v: k for k, v in PUBLIC.items()}
        n = 0
        for room in ROOMS:
            own = {os.path.basename(f) for f in self.files(room, (".h",))}
            allowed = below(room)
            for f in self.files(room):
                for i, line in enumerate(self.read(f).splitlines(), 1):
                    m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                    if not m:
                        continue
                    n += 1
                    inc = m.group(1)
                    if inc in own and "/" not in inc:
                        continue
                    other = public_of.get(inc)
                    if other is None:
                        problems.append('%s:%d: includes "%s", neither its own room\'s nor '
                                        "a room's public header" % (f, i, inc))
                    elif other == room:
                        continue
                    elif other not in allowed:
                        problems.append('%s:%d: %s includes "%s": %s may not use %s' %
                                        (f, i, room, inc, room, other))
        self.say("includes", problems, "%d includes, each of its own room or of a public "
                 "header below it" % n)

    def engine(self):
        problems = []
        words = re.compile(r"\b(ext2fs\w*|ext2_\w+|imgfmt\w*|io_channel|io_manager|errcode_t|com_err|"
                           r"error_message)\b")
        ext4_defs = set()
        for o in self.objects(["ext4", "imgfmt"]):
            ext4_defs |= self.defined(o)
        for f in self.files("engine"):
            for i, line in enumerate(strip_comments(self.read(f)).splitlines(), 1):
                m = words.search(line)
                if m:
                    problems.append("%s:%d: names %s" % (f, i, m.group(1)))
                m = re.search(r'#\s*include\s+[<"]([^>"]+)[>"]', line)
                if m and ("ext2fs" in m.group(1) or m.group(1).startswith(("ext4/", "imgfmt"))):
                    problems.append("%s:%d: includes %s" % (f, i, m.group(1)))
        for o in self.objects(["engine"]):
            for s in sorted(self.undefined(o)):
                if s.startswith(("ext2fs_", "ext2_", "io_channel", "imgfmt_")) or s in ext4_defs:
                    problems.append("%s calls %s (ext4's or imgfmt's, or libext2fs's)" % (o, s))
        self.say("engine", problems, "labeler/engine/ names no ext2fs, imgfmt or ext4 function")

    def circles(self):
        objs = self.objects()
        if not objs:
            self.say("circles", ["no object files: build first (make)"], "")
            return
        defs = {}
        for o in objs:
            for s in self.defined(o):
                defs.setdefault(s, o)
        edges = {o: sorted({defs[s] for s in self.undefined(o) if s in defs and defs[s] != o})
                 for o in objs}
        problems = ["%s (%s)" % (" ".join(c), why(c, edges, defs, self)) for c in sccs(edges)]
        self.say("circles", problems, "no circle of calls among %d objects" % len(objs))

    def android(self):
        problems = []
        pat = re.compile(r'"/data|"/mnt/expand|packages\.list"|\bAID_')
        for room in ("cli", "policy", "engine", "ext4", "tree", "erofs"):
            for f in self.files(room):
                for i, line in enumerate(strip_comments(self.read(f)).splitlines(), 1):
                    m = pat.search(line)
                    if m:
                        problems.append("%s:%d: %s" % (f, i, line.strip()))
        self.say("android", problems, "no /data, /mnt/expand, packages.list or AID_ in labeler/")

    def quiet(self):
        problems = []
        banned = re.compile(r"^(__)?(v?f?printf|puts|fputs|putchar|fputc|putc|perror|exit|_exit|"
                            r"_Exit|abort|err|errx|warn|warnx|verr|vwarn|stderr|stdout|"
                            r"__\w*printf_chk|error|error_at_line|psignal|psiginfo)$")
        for room in LIBRARIES:
            for o in self.objects([room]):
                for s in sorted(self.undefined(o)):
                    if banned.match(s.split("@")[0]):
                        problems.append("%s uses %s" % (o, s))
        self.say("quiet", problems, "the libraries neither print nor exit")

    def size(self):
        problems = []
        n = 0
        for room in ROOMS:
            for f in self.files(room, (".c",)):
                n += 1
                lines = self.read(f).count("\n")
                if lines > MAX_LINES:
                    problems.append("%s has %d lines (at most %d)" % (f, lines, MAX_LINES))
        self.say("size", problems, "%d product .c files, none over %d lines" % (n, MAX_LINES))

    def bench(self):
        problems = []
        t = os.path.join(self.root, "tests")
        for f in sorted(os.listdir(t)) if os.path.isdir(t) else []:
            if "bench" in f or f.startswith("treefloor"):
                problems.append("tests/%s is a benchmark (bench/ holds them)" % f)
        if not os.path.isdir(os.path.join(self.root, "bench")):
            problems.append("bench/ is missing")
        self.say("bench", problems, "no benchmark in tests/")


def strip_comments(text):
    """C text without its comments (strings kept), line numbers kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def sccs(g):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            c = []
            while True:
                w = stack.pop()
                on.discard(w)
                c.append(w)
                if w == v:
                    break
            if len(c) > 1:
                out.append(sorted(c))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def why(c, edges, defs, chk):
    """One arrow of the circle each way, named by a symbol: 'a.o -> b.o (sym)'."""
    said = []
    for a in c:
        for b in edges[a]:
            if b in c:
                s = sorted(x for x in chk.undefined(a) if defs.get(x) == b)
                said.append("%s -> %s (%s)" % (os.path.basename(a), os.path.basename(b), s[0]))
                break
    return "; ".join(said)


def main():
    args = sys.argv[1:]
    root = "."
    only = None
    while args:
        a = args.pop(0)
        if a == "--root":
            root = args.pop(0)
        elif a == "--only":
            only = args
            args = []
        else:
            sys.exit("layout.py: unknown argument %s" % a)
    chk = Checker(root)
    rules = ["rooms", "includes", "engine", "circles", "android", "quiet", "size", "bench"]
    for r in only or rules:
        getattr(chk, r)()
    sys.exit(1 if chk.failed else 0)


if __name__ == "__main__":
    main()
