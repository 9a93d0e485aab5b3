# The labeling engine through a fake target (tests/engineunit.c, as SQLite's test VFS): a tree
# held in memory that records every write. Plain label, dry run and check; hard links; digests;
# relabel's pruning; the device's walks of /data (--as-device); a write, a refusal and an I/O
# error injected. No image is built.
. "$TOP/tests/lib.sh"
unit_run engineunit 130
finish
