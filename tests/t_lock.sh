#!/bin/sh
# One writer at a time: fclabel takes a BSD lock (flock) on an image, exclusive to write, shared to
# read, before it reads what it writes back, and holds it until the result is on disk.
# - a lock held by util-linux flock(1): label does not write while it is held (the image stays
#   byte for byte, the labeler waits) and completes after it is released; with --lock=nonblock it
#   exits 2 at once, the image unchanged; check takes a shared lock (it runs beside a shared
#   holder, waits for an exclusive one); --lock=no takes none;
# - an image replaced (renamed over) while a labeler waits for its lock: the labeler labels the
#   new file, not the unlinked one;
# - two labelers racing on one image with two policies, at several offsets, with 256-byte inodes
#   (in place) and 128-byte inodes (a copy renamed over it): the image is always one of the two
#   runs' results whole (check with that policy finds nothing) and e2fsck -fn is clean;
# - a byte-range lock (fcntl) of another process, as QEMU holds on the disks of a running virtual
#   machine (an OFD read lock on one byte), or a classic POSIX write lock over the whole file:
#   label refuses at once (exit 2, naming the process and "nothing written"), the image stays byte
#   for byte; check reads it; --lock=no takes no lock and looks at none; once the holder is
#   gone, label writes.
. "$TOP/tests/imglib.sh"
need_image_tools
command -v flock >/dev/null 2>&1 || skip "flock(1) is not installed (util-linux)"
cd "$OUT" || exit 1
small_tree tree
# 20,000 files: enough for two unlocked runs to mix their writes (see the control below)
"$PY" -c '
import os
for d in range(100):
    os.makedirs("tree/data/d%d" % d, exist_ok=True)
    for i in range(200):
        open("tree/data/d%d/f%d" % (d, i), "w").close()'

small_policy fcA
sed 's/data_t/dataB_t/; s/etc_t/etcB_t/; s/bin_t/binB_t/' fcA >fcB

# alive PID: whether the process is still there
alive() { kill -0 "$1" 2>/dev/null; }

# ---- a lock held by flock(1) ----
mkimg img256 tree 96M -t ext4 -I 256 -N 30000 || finish
cp img256 base256
# (-o: the lock stays with flock(1), not with the command it runs: killing it releases the lock)
flock -o img256 sleep 60 &
holder=$!
sleep 0.5
s0=$(sum img256)
"$FCLABEL" label img256 -S fcA >label.out 2>label.err &
lab=$!
sleep 1
alive "$lab" && ok "label waits while flock(1) holds the image" || bad "label did not wait: $(cat label.err)"
expect_match "it says once that it waits, and for whom (not only on a terminal)" "$(cat label.err)" \
	"*waiting for the lock on img256 (held by PID $holder*"
expect_eq "nothing written while the lock is held" "$(sum img256)" "$s0"
t0=$(date +%s%N)
"$FCLABEL" label img256 -S fcA --lock=nonblock >nb.out 2>nb.err
nbrc=$?
t1=$(date +%s%N)
expect_eq "--lock=nonblock on a held image: exit" "$nbrc" 2
expect_match "--lock=nonblock names the image" "$(cat nb.err)" "*img256 is locked by another process*"
expect_eq "--lock=nonblock wrote nothing" "$(sum img256)" "$s0"
# (the wait it would make is the holder's 60 s: a loaded machine's slowness is far below it)
[ $(((t1 - t0) / 1000000)) -le 5000 ] && ok "--lock=nonblock does not wait ($(((t1 - t0) / 1000000)) ms)" ||
	bad "--lock=nonblock waited $(((t1 - t0) / 1000000)) ms"
kill "$holder"
wait "$holder" 2>/dev/null
wait "$lab"
expect_eq "label after the lock is released: exit" "$?" 0
"$FCLABEL" check img256 -S fcA >/dev/null 2>&1
expect_eq "the image is labeled" "$?" 0

# check: a shared lock (beside a shared holder; it waits for an exclusive one)
flock -o -s img256 sleep 60 &
holder=$!
sleep 0.3
"$FCLABEL" check img256 -S fcA --lock=nonblock >/dev/null 2>ck.err
expect_eq "check beside a shared lock" "$?" 0
"$FCLABEL" label img256 -S fcB --lock=nonblock >/dev/null 2>&1
expect_eq "label beside a shared lock refuses with nonblock" "$?" 2
kill "$holder"
wait "$holder" 2>/dev/null
flock -o img256 sleep 60 &
holder=$!
sleep 0.3
"$FCLABEL" check img256 -S fcA --lock=nonblock >/dev/null 2>&1
expect_eq "check beside an exclusive lock refuses with nonblock" "$?" 2
"$FCLABEL" check img256 -S fcA --lock=no >/dev/null 2>&1
expect_eq "check --lock=no takes none" "$?" 0
kill "$holder"
wait "$holder" 2>/dev/null

# ---- byte-range locks of other processes (fcntl: OFD, as QEMU takes them, and POSIX) ----
# holdlock KIND: a process (python3, its name in /proc) holding a lock on small.img until killed
holdlock() {
	rm -f held
	"$PY" - "$1" <<'EOF' &
import fcntl, os, struct, sys, time
fd = os.open("small.img", os.O_RDWR)
if sys.argv[1] == "ofd":
    # QEMU's way: a shared lock on one byte of its permission range, through its open file
    fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack("hhqqi", fcntl.F_RDLCK, os.SEEK_SET, 100, 1, 0))
else:
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # F_SETLK, F_WRLCK, the whole file
open("held", "w").close()
time.sleep(60)
EOF
	holder=$!
	for _i in $(seq 1 100); do [ -e held ] && break; sleep 0.05; done
}
small_tree stree
mkimg small.img stree 8M -t ext4 -I 256 || finish
cp small.img small.orig
for kind in ofd posix; do
	cp small.orig small.img
	holdlock $kind
	t0=$(date +%s%N)
	"$FCLABEL" label small.img -S fcA >bl.out 2>bl.err
	blrc=$?
	t1=$(date +%s%N)
	expect_eq "$kind lock: label refused" "$blrc" 2
	expect_match "$kind lock: says which process holds it, and that nothing was written" "$(cat bl.err)" \
		"*small.img is locked by another process (held by PID $holder, python3): a*lock on bytes*nothing written*"
	[ $(((t1 - t0) / 1000000)) -le 5000 ] && ok "$kind lock: refused at once ($(((t1 - t0) / 1000000)) ms)" ||
		bad "$kind lock: waited $(((t1 - t0) / 1000000)) ms"
	expect_eq "$kind lock: the image is byte for byte as it was" "$(cmp -s small.img small.orig && echo same)" same
	"$FCLABEL" check small.img -S fcA >/dev/null 2>bc.err
	expect_eq "$kind lock: check reads it (exit 1: not labeled)" "$?" 1
	kill "$holder"
	wait "$holder" 2>/dev/null
done
holdlock ofd
"$FCLABEL" label small.img -S fcA --lock=no >/dev/null 2>bn.err
expect_eq "ofd lock: --lock=no looks at no lock: label writes" "$?" 0
kill "$holder"
wait "$holder" 2>/dev/null
cp small.orig small.img
"$FCLABEL" label small.img -S fcA >/dev/null 2>ba.err
expect_eq "no lock held any more: label writes" "$?" 0

# ---- replaced while waiting ----
cp base256 img
flock -o img sleep 60 &
holder=$!
sleep 0.3
"$FCLABEL" label img -S fcB >rep.out 2>rep.err &
lab=$!
sleep 0.5
cp base256 new && mv new img # another run's result renamed over it
kill "$holder"
wait "$holder" 2>/dev/null
wait "$lab"
expect_eq "replaced while waiting: label exit" "$?" 0
"$FCLABEL" check img -S fcB >/dev/null 2>&1
expect_eq "the file the path names after the wait is the one labeled" "$?" 0

# ---- two labelers racing ----
race() { # ISIZE [OPTIONS]
	mkimg base tree 96M -t ext4 -I "$1" -N 30000 || return
	n_a=0 n_b=0 n_mixed=0 isz=$1
	shift
	for off in 0 0.02 0.05 0.1 0.2 0.4; do
		cp base r.img
		"$FCLABEL" label r.img -S fcA "$@" >ra.out 2>ra.err &
		pa=$!
		sleep "$off"
		"$FCLABEL" label r.img -S fcB "$@" >rb.out 2>rb.err &
		pb=$!
		wait "$pa"; ra=$?
		wait "$pb"; rb=$?
		[ -n "${CONTROL:-}" ] || [ "$ra$rb" = 00 ] ||
			bad "$isz-byte inodes $*, race at $off s: exits $ra $rb: $(cat ra.err rb.err | head -n 4)"
		if "$FCLABEL" check r.img -S fcA >/dev/null 2>&1; then
			n_a=$((n_a + 1))
		elif "$FCLABEL" check r.img -S fcB >/dev/null 2>&1; then
			n_b=$((n_b + 1))
		else
			n_mixed=$((n_mixed + 1))
			[ -n "${CONTROL:-}" ] ||
				bad "$isz-byte inodes $*, race at $off s: the image is neither run's result whole"
		fi
		[ -n "${CONTROL:-}" ] || fsck_clean r.img "$isz-byte inodes $*, race at $off s"
	done
}
race 256
ok "256-byte inodes, in place: 6 races, each image one run's result whole ($n_a A, $n_b B)"
race 128
ok "128-byte inodes, a copy renamed over it: 6 races, each one run's result whole ($n_a A, $n_b B)"
race 128 --in-place
ok "128-byte inodes, in place: 6 races, each one run's result whole ($n_a A, $n_b B)"
# the control: without the lock the same races do mix (the check above can fail)
CONTROL=1 race 128 --in-place --lock=no
ok "control, --lock=no: $n_mixed of 6 unlocked races left an image that is neither result whole"
finish
