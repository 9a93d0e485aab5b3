"""An EROFS superblock's checksum (COMPAT_SB_CHKSUM), for tests that change an image's bytes.

The checksum (at byte 1028) is crc32c, seeded with ~0 and not inverted at the end, of the block
from byte 1024 to its end (the block size less 1024, or a whole block when blocks are 1 KiB or
less) with the checksum field read as 0.

    python3 erofssum.py IMAGE [VOLUME]   sets the volume name (16 bytes at 1024 + 64) when
                                         given, and makes the checksum right again
"""
import struct
import sys


def resum(b):
    """Makes the checksum of the image in bytearray b right (when it has one)."""
    if not struct.unpack_from("<I", b, 1032)[0] & 1 or b[1036] > 16:
        return
    bs = 1 << b[1036]
    n = bs - 1024 if bs > 1024 else bs
    sb = bytearray(b[1024:1024 + n])
    sb[4:8] = bytes(4)
    crc = 0xFFFFFFFF
    for x in sb:
        crc ^= x
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    struct.pack_into("<I", b, 1028, crc)


if __name__ == "__main__":
    with open(sys.argv[1], "r+b") as f:
        head = bytearray(f.read(65536 + 1024))
        if len(sys.argv) > 2:
            head[1024 + 64:1024 + 80] = sys.argv[2].encode().ljust(16, b"\0")[:16]
        resum(head)
        f.seek(0)
        f.write(head)
