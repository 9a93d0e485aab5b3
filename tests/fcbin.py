#!/usr/bin/env python3
"""Compiled file_contexts (sefcontext_compile's .bin) for tests/t_fcbin.sh.

  fcbin.py dump FILE                      one line per spec, in file order:
                                          ORDINAL TAB REGEX TAB TYPE TAB CONTEXT [TAB LINE]
  fcbin.py totext FILE OUT                the specs as a text file_contexts, in the order fclabel
                                          reads them (version 6: the regex specs by source line,
                                          then the literal specs in file order)
  fcbin.py downgrade --version N [--pcre1] IN OUT
                                          rewrite a version 5 file (libselinux 3.4) in the layout
                                          of version N (1..5); --pcre1 with PCRE1's two regex blobs
  fcbin.py corrupt IN OUTDIR              named damages of a version 5 or 6 file; prints
                                          "NAME OFFSET" per file (OFFSET: where fclabel must say
                                          the damage is, or - when any offset will do)
  fcbin.py queries --seed S [--per-spec N] OUT FC...
                                          "MODE PATH" NUL records made from the specs of the text
                                          files FC (tests/gen_fc.py's spec_paths, every mode)
  fcbin.py filter --seed S [--sample N] [--real-modes] [--exclude TEXT] IN OUT
                                          a sample of the records of IN; --real-modes keeps those
                                          whose mode is one of the seven file types, --exclude
                                          drops those whose path contains TEXT
  fcbin.py mutate --seed S --count N IN OUTDIR
                                          N copies with random byte flips, truncations, inserted or
                                          deleted bytes, and length fields set to odd values

A reader written from the layout description in fcontexts/binfile.c, independent of it.
"""
import argparse
import os
import random
import struct
import sys

MAGIC = 0xF97CFF8A
KINDS = {0: "", 1: "-d", 2: "-c", 3: "-b", 4: "-s", 5: "-p", 6: "-l", 7: "--"}
MODES = {0: "", 0o100000: "--", 0o040000: "-d", 0o020000: "-c", 0o060000: "-b", 0o140000: "-s",
         0o120000: "-l", 0o010000: "-p"}


class Reader:
    def __init__(self, data, be):
        self.d = data
        self.o = 0
        self.be = be

    def take(self, n):
        if n > len(self.d) - self.o:
            raise ValueError("truncated at %d" % self.o)
        b = self.d[self.o:self.o + n]
        self.o += n
        return b

    def u(self, size):
        fmt = {1: "B", 2: "H", 4: "I", 8: "Q"}[size]
        return struct.unpack((">" if self.be else "<") + fmt, self.take(size))[0]

    def cstr(self, n):
        return self.take(n).rstrip(b"\0").decode("latin-1")


def parse_v5(data):
    """(header bytes, [spec dict with raw bytes and field offsets]) of a version 1..5 file."""
    r = Reader(data, False)
    magic, version = r.u(4), r.u(4)
    assert magic == MAGIC and 1 <= version <= 5, "not a version 1-5 file"
    h = {"version": version, "pcre": b"", "arch": b""}
    if version >= 2:
        h["pcre"] = r.take(r.u(4))
    if version >= 5:
        h["arch"] = r.take(r.u(4))
    h["stems"] = []
    h["stems_at"] = r.o
    for _ in range(r.u(4)):
        n = r.u(4)
        h["stems"].append(r.take(n + 1))
    h["count_at"] = r.o
    specs = []
    pcre1 = version < 2 or int(h["pcre"].split(b".")[0] or b"10") < 10
    for _ in range(r.u(4)):
        s = {"at": r.o}
        s["ctx"] = r.take(r.u(4))
        s["regex_len_at"] = r.o
        s["regex"] = r.take(r.u(4))
        s["mode_at"] = r.o
        s["mode"] = r.u(4)
        s["stem_at"] = r.o
        s["stem"] = struct.unpack("<i", r.take(4))[0]
        s["meta_at"] = r.o
        s["meta"] = r.u(4)
        s["prefix"] = r.u(4) if version >= 4 else 0
        s["blobs"] = [r.take(r.u(4))]
        if pcre1:
            s["blobs"].append(r.take(r.u(4)))
        specs.append(s)
    h["end"] = r.o
    return h, specs


def parse_v6(data):
    r = Reader(data, True)
    assert r.u(4) == MAGIC and r.u(4) == 6, "not a version 6 file"
    r.take(r.u(4))
    r.take(r.u(4))
    total = r.u(8)
    ctx = [r.take(r.u(2)).decode("latin-1") for _ in range(r.u(4))]
    out = []

    def node(depth):
        r.take(r.u(2))
        for _ in range(r.u(4)):
            c = r.u(4)
            regex = r.cstr(r.u(2))
            r.take(r.u(2))
            k = r.u(1)
            out.append((regex, KINDS[k], ctx[c - 1], None))
        for _ in range(r.u(4)):
            c, line = r.u(4), r.u(4)
            regex = r.cstr(r.u(2))
            r.u(2)
            k = r.u(1)
            r.take(r.u(4))
            out.append((regex, KINDS[k], ctx[c - 1], line))
        for _ in range(r.u(4)):
            node(depth + 1)

    node(0)
    assert total == len(out)
    return out


def rows_of(path):
    data = open(path, "rb").read()
    if struct.unpack(">I", data[:4])[0] == MAGIC:
        return parse_v6(data)
    _, specs = parse_v5(data)
    return [(s["regex"].rstrip(b"\0").decode("latin-1"), MODES.get(s["mode"], "?"),
             s["ctx"].rstrip(b"\0").decode("latin-1"), None) for s in specs]


def cmd_dump(a):
    for i, (regex, typ, ctx, line) in enumerate(rows_of(a.file), 1):
        print("%d\t%s\t%s\t%s%s" % (i, regex, typ, ctx, "" if line is None else "\t%d" % line))


def cmd_totext(a):
    rows = list(enumerate(rows_of(a.file)))
    regex = sorted((r for r in rows if r[1][3] is not None), key=lambda r: (r[1][3], r[0]))
    lits = [r for r in rows if r[1][3] is None]
    with open(a.out, "w", encoding="latin-1") as f:
        for _, (rx, typ, ctx, _line) in regex + lits:
            f.write("%s\t%s\t%s\n" % (rx, typ, ctx) if typ else "%s\t%s\n" % (rx, ctx))


def write_v5(h, specs, version, pcre1):
    o = bytearray(struct.pack("<II", MAGIC, version))
    if version >= 2:
        pv = b"8.45 2021-06-15" if pcre1 else h["pcre"]
        o += struct.pack("<I", len(pv)) + pv
    if version >= 5:
        o += struct.pack("<I", len(h["arch"])) + h["arch"]
    o += struct.pack("<I", len(h["stems"]))
    for st in h["stems"]:
        o += struct.pack("<I", len(st) - 1) + st
    o += struct.pack("<I", len(specs))
    for s in specs:
        o += struct.pack("<I", len(s["ctx"])) + s["ctx"]
        o += struct.pack("<I", len(s["regex"])) + s["regex"]
        o += struct.pack("<Iii", s["mode"], s["stem"], s["meta"])
        if version >= 4:
            o += struct.pack("<I", s["prefix"])
        # no compiled regex (a PCRE1 pattern cannot be made here): a stand-in of the right shape
        blob = b"\x50\x43\x52\x45junk" if pcre1 else b""
        o += struct.pack("<I", len(blob)) + blob
        if pcre1:
            o += struct.pack("<I", 3) + b"xyz"
    return bytes(o)


def cmd_downgrade(a):
    h, specs = parse_v5(open(a.inp, "rb").read())
    with open(a.out, "wb") as f:
        f.write(write_v5(h, specs, a.version, a.pcre1 or a.version < 2))


def put32(data, at, value, be=False):
    return data[:at] + struct.pack(">I" if be else "<I", value & 0xFFFFFFFF) + data[at + 4:]


def cmd_corrupt(a):
    data = open(a.inp, "rb").read()
    os.makedirs(a.outdir, exist_ok=True)
    out = []

    def emit(name, blob, off):
        with open(os.path.join(a.outdir, name), "wb") as f:
            f.write(blob)
        out.append("%s %s" % (name, off))

    be = struct.unpack(">I", data[:4])[0] == MAGIC
    emit("empty-after-magic", data[:4], 4)
    emit("half-version", data[:6], 4)
    emit("version-7", put32(data, 4, 7, be), 4)
    emit("version-0", put32(data, 4, 0, be), 4)
    if not be:
        h, specs = parse_v5(data)
        emit("pcre-version-too-long", put32(data, 8, 0x7FFFFFFF), 12)
        emit("stem-count-huge", put32(data, h["stems_at"], 0xFFFFFFF0), h["stems_at"])
        emit("spec-count-huge", put32(data, h["count_at"], 0x40000000), h["count_at"])
        s = specs[len(specs) // 2]
        emit("cut-in-regex", data[:s["regex_len_at"] + 6], s["regex_len_at"] + 4)
        emit("regex-len-zero", put32(data, s["regex_len_at"], 0), s["regex_len_at"] + 4)
        emit("regex-len-past-end", put32(data, s["regex_len_at"], 0x7FFFFFF0), s["regex_len_at"] + 4)
        emit("bad-mode", put32(data, s["mode_at"], 0o170000), s["mode_at"])
        meta = [x for x in specs if x["meta"] == 1][0]
        emit("meta-flag-lies", put32(data, meta["meta_at"], 0), meta["at"])
        emit("meta-flag-256", put32(data, meta["meta_at"], 256), meta["at"])
        st = [x for x in specs if x["stem"] >= 0][0]
        wrong = (st["stem"] + 1) % max(1, len(h["stems"]))
        if wrong != st["stem"]:
            emit("stem-id-wrong", put32(data, st["stem_at"], wrong), st["at"])
        emit("stem-id-dropped", put32(data, st["stem_at"], 0xFFFFFFFF), st["at"])
        last = specs[-1]
        emit("truncated-last-spec", data[:len(data) - 3], "-")
        emit("trailing-bytes", data + b"\0\0", len(data))
        # a NUL inside a context: libselinux would cut the context there
        ctx_at = s["at"] + 4
        emit("nul-in-context", data[:ctx_at + 1] + b"\0" + data[ctx_at + 2:], ctx_at)
        emit("space-in-regex", data[:s["regex_len_at"] + 5] + b" " + data[s["regex_len_at"] + 6:],
             s["regex_len_at"] + 4)
        del last
    else:
        # version 6: the header's spec count (after magic, version, PCRE version and arch)
        r = Reader(data, True)
        r.take(8)
        r.take(r.u(4))
        r.take(r.u(4))
        total_at = r.o
        emit("spec-count-off-by-one", data[:total_at] + struct.pack(">Q", r.u(8) + 1) + data[total_at + 8:],
             total_at)
        ctxn_at = r.o
        emit("context-count-huge", put32(data, ctxn_at, 0x7FFFFFFF, True), ctxn_at)
        emit("truncated-half", data[:len(data) // 2], "-")
        emit("truncated-last-byte", data[:-1], "-")
        emit("trailing-bytes", data + b"\0", len(data))
    print("\n".join(out))


def cmd_mutate(a):
    rng = random.Random(a.seed)
    data = open(a.inp, "rb").read()
    os.makedirs(a.outdir, exist_ok=True)
    for i in range(a.count):
        d = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            op = rng.random()
            if op < 0.45:
                for _ in range(rng.randint(1, 3)):
                    d[rng.randrange(len(d))] ^= 1 << rng.randrange(8)
            elif op < 0.65:
                del d[rng.randrange(1, len(d)):]
            elif op < 0.75:
                at = rng.randrange(len(d))
                d[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
            elif op < 0.85:
                at = rng.randrange(len(d))
                del d[at:at + rng.randint(1, 4)]
            else:
                # a 4-byte field set to a boundary value
                at = rng.randrange(max(1, len(d) - 4))
                v = rng.choice([0, 1, 0xFF, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, len(d), len(d) + 1])
                d[at:at + 4] = struct.pack(rng.choice(["<I", ">I"]), v)
            if not d:
                d = bytearray(data[:4])
        with open(os.path.join(a.outdir, "m%03d" % i), "wb") as f:
            f.write(bytes(d))


def cmd_queries(a):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gen_fc
    rng = random.Random("%s/fcbin" % a.seed)
    specs = []
    for fc in a.fc:
        specs.extend(gen_fc.read_specs(fc))
    qs = gen_fc.spec_paths(specs, rng, a.per_spec)
    pool = sorted(set(p for _, p in qs))
    for p in rng.sample(pool, min(len(pool), 400)):
        qs.extend((m, p) for m in gen_fc.every_mode(rng))
    qs.extend((gen_fc.any_mode(rng), p) for p in gen_fc.SPECIAL_PATHS)
    rng.shuffle(qs)
    gen_fc.write_queries(a.out, qs)


def cmd_filter(a):
    rng = random.Random("%s/filter" % a.seed)
    recs = open(a.inp, "rb").read().split(b"\0")[:-1]
    if a.real_modes:
        real = {0o100000, 0o040000, 0o020000, 0o060000, 0o140000, 0o120000, 0o010000}
        recs = [r for r in recs if int(r.split(b" ", 1)[0], 8) & 0o170000 in real
                and int(r.split(b" ", 1)[0], 8) & ~0o177777 == 0]
    if a.exclude:
        recs = [r for r in recs if a.exclude.encode("latin-1") not in r.split(b" ", 1)[-1]]
    if a.sample and len(recs) > a.sample:
        recs = rng.sample(recs, a.sample)
    with open(a.out, "wb") as f:
        f.write(b"".join(r + b"\0" for r in recs))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("dump")
    p.add_argument("file")
    p = sub.add_parser("totext")
    p.add_argument("file")
    p.add_argument("out")
    p = sub.add_parser("downgrade")
    p.add_argument("--version", type=int, required=True)
    p.add_argument("--pcre1", action="store_true")
    p.add_argument("inp")
    p.add_argument("out")
    p = sub.add_parser("corrupt")
    p.add_argument("inp")
    p.add_argument("outdir")
    p = sub.add_parser("queries")
    p.add_argument("--seed", default="1")
    p.add_argument("--per-spec", type=int, default=4)
    p.add_argument("out")
    p.add_argument("fc", nargs="+")
    p = sub.add_parser("filter")
    p.add_argument("--seed", default="1")
    p.add_argument("--sample", type=int, default=0)
    p.add_argument("--real-modes", action="store_true")
    p.add_argument("--exclude")
    p.add_argument("inp")
    p.add_argument("out")
    p = sub.add_parser("mutate")
    p.add_argument("--seed", default="1")
    p.add_argument("--count", type=int, default=200)
    p.add_argument("inp")
    p.add_argument("outdir")
    a = ap.parse_args()
    {"dump": cmd_dump, "totext": cmd_totext, "downgrade": cmd_downgrade, "queries": cmd_queries, "filter": cmd_filter, "corrupt": cmd_corrupt, "mutate": cmd_mutate}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
