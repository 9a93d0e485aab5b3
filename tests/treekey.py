#!/usr/bin/env python3
"""treekey.py DIR: a digest of everything mke2fs -d copies from a tree into an image but its
times: names, types, modes, owners, sizes, contents, symlink targets, device numbers, extended
attributes. Two trees with the same key make images that differ only in times, so an image made
from one stands for the other (tests/lib.sh's cache: the plain and the sanitized runs of a test
build the same tree)."""
import hashlib
import os
import stat
import sys


def main():
    root = os.fsencode(sys.argv[1])
    h = hashlib.sha1()
    first = {}  # inode -> the first name seen of a file with several
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            h.update(b"\0%s\0%o\0%d\0%d\0%d\0%d\0" % (os.path.relpath(p, root), st.st_mode,
                                                     st.st_uid, st.st_gid, st.st_size, st.st_rdev))
            if stat.S_ISLNK(st.st_mode):
                h.update(os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    h.update(hashlib.sha1(f.read()).digest())
            try:
                for x in sorted(os.listxattr(p, follow_symlinks=False)):
                    h.update(x.encode() + b"=" + os.getxattr(p, x, follow_symlinks=False))
            except OSError:
                pass
            # hard links: the same file under several names
            if st.st_nlink > 1 and not stat.S_ISDIR(st.st_mode):
                h.update(b"link:" + first.setdefault((st.st_dev, st.st_ino),
                                                     os.path.relpath(p, root)))
    print(h.hexdigest())


if __name__ == "__main__":
    main()
