#!/usr/bin/env python3
"""Android sparse images for the tests: write one from a raw image, list its chunks, damage one.

  sparse.py write RAW OUT [--crc] [--no-dont-care] [--block 4096]
      zero blocks -> DONT_CARE, one repeated 4-byte word -> FILL, the rest RAW; with --crc a
      CRC32 chunk after the first third of the chunks and one at the end.
  sparse.py holes RAW OUT     RAW chunks for the file's data, DONT_CARE for its holes (SEEK_DATA):
                              fast for a huge, mostly empty raw file
  sparse.py chunks IMG        prints "TYPE COUNT" per chunk type, and the header's totals
  sparse.py damage IMG KIND   KIND: truncate | overrun | crc | type | blocksize
"""
import struct, sys, zlib

RAW, FILL, DONT_CARE, CRC = 0xCAC1, 0xCAC2, 0xCAC3, 0xCAC4
NAMES = {RAW: "RAW", FILL: "FILL", DONT_CARE: "DONT_CARE", CRC: "CRC32"}


def write(raw, out, crc, dont_care, bs):
    data = open(raw, "rb").read()
    assert len(data) % bs == 0
    n = len(data) // bs
    runs = []  # (type, first block, count, fill)
    for b in range(n):
        blk = data[b * bs:(b + 1) * bs]
        word = blk[:4]
        if blk == word * (bs // 4):
            t, f = (DONT_CARE, None) if (word == b"\0\0\0\0" and dont_care) else (FILL, word)
        else:
            t, f = RAW, None
        if runs and runs[-1][0] == t and runs[-1][3] == f and runs[-1][1] + runs[-1][2] == b:
            runs[-1][2] += 1
        else:
            runs.append([t, b, 1, f])
    chunks, c = [], 0
    for i, (t, b, cnt, f) in enumerate(runs):
        if t == RAW:
            body = data[b * bs:(b + cnt) * bs]
            c = zlib.crc32(body, c)
        elif t == FILL:
            body = f
            c = zlib.crc32(f * (bs // 4) * cnt, c)
        else:
            body = b""
            c = zlib.crc32(b"\0" * bs * cnt, c)
        chunks.append(struct.pack("<HHII", t, 0, cnt, 12 + len(body)) + body)
        if crc and i == len(runs) // 3:
            chunks.append(struct.pack("<HHII", CRC, 0, 0, 16) + struct.pack("<I", c))
    if crc:
        chunks.append(struct.pack("<HHII", CRC, 0, 0, 16) + struct.pack("<I", c))
    hdr = struct.pack("<IHHHHIIII", 0xED26FF3A, 1, 0, 28, 12, bs, n, len(chunks), 0)
    with open(out, "wb") as f:
        f.write(hdr + b"".join(chunks))


def holes(raw, out, bs=4096):
    import os
    fd = os.open(raw, os.O_RDONLY)
    size = os.fstat(fd).st_size
    assert size % bs == 0
    chunks, pos = [], 0
    while pos < size:
        try:
            data = os.lseek(fd, pos, os.SEEK_DATA) // bs * bs
        except OSError:
            data = size
        if data > pos:
            chunks.append(struct.pack("<HHII", DONT_CARE, 0, (data - pos) // bs, 12))
        if data >= size:
            break
        hole = min(size, -(-os.lseek(fd, data, os.SEEK_HOLE) // bs) * bs)
        body = os.pread(fd, hole - data, data)
        chunks.append(struct.pack("<HHII", RAW, 0, (hole - data) // bs, 12 + len(body)) + body)
        pos = hole
    hdr = struct.pack("<IHHHHIIII", 0xED26FF3A, 1, 0, 28, 12, bs, size // bs, len(chunks), 0)
    with open(out, "wb") as f:
        f.write(hdr + b"".join(chunks))


def parse(img):
    d = bytearray(open(img, "rb").read())
    m, maj, mi, fh, ch, bs, tb, tc, cs = struct.unpack("<IHHHHIIII", d[:28])
    pos, out = fh, []
    for _ in range(tc):
        t, r, sz, tot = struct.unpack("<HHII", d[pos:pos + 12])
        out.append((pos, t, sz, tot))
        pos += tot
    return d, bs, tb, out


def chunks(img):
    d, bs, tb, cl = parse(img)
    counts = {}
    for _, t, _, _ in cl:
        counts[NAMES.get(t, hex(t))] = counts.get(NAMES.get(t, hex(t)), 0) + 1
    for k in sorted(counts):
        print(k, counts[k])
    print("blocks", tb, "chunks", len(cl))


def damage(img, kind):
    d, bs, tb, cl = parse(img)
    raw = [c for c in cl if c[1] == RAW]
    if kind == "truncate":
        d = d[:len(d) - bs // 2]
    elif kind == "overrun":
        # a chunk without data (DONT_CARE or FILL) claims more blocks than the image declares
        c = [c for c in cl if c[1] in (DONT_CARE, FILL)][-1]
        struct.pack_into("<I", d, c[0] + 4, c[2] + tb)
    elif kind == "crc":
        crcs = [c for c in cl if c[1] == CRC]
        struct.pack_into("<I", d, crcs[-1][0] + 12, struct.unpack_from("<I", d, crcs[-1][0] + 12)[0] ^ 1)
    elif kind == "type":
        struct.pack_into("<H", d, raw[0][0], 0xCAC9)
    elif kind == "blocksize":
        struct.pack_into("<I", d, 12, bs + 4)
    else:
        sys.exit("unknown damage " + kind)
    open(img, "wb").write(bytes(d))


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[0] == "write":
        bs = int(a[a.index("--block") + 1]) if "--block" in a else 4096
        write(a[1], a[2], "--crc" in a, "--no-dont-care" not in a, bs)
    elif a[0] == "holes":
        holes(a[1], a[2])
    elif a[0] == "chunks":
        chunks(a[1])
    elif a[0] == "damage":
        damage(a[1], a[2])
