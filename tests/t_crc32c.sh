# ext4's crc32c as fclabel computes it (imgfmt/crc32c.c: the CPU's instruction where it has one,
# a table in software where not): the standard check values, the instruction and the table
# alike on every length and alignment (tests/crcunit.c). (Whether the checksums written with it
# are right, e2fsck -fn says of every image the other tests write.)
. "$TOP/tests/lib.sh"
unit_run crcunit 11
finish
