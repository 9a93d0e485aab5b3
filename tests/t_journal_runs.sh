# A journal in hundreds of pieces, written where its blocks are (imgfmt/journal.c holds the
# journal's blocks as runs, one for a journal mke2fs made): an image whose free space was all
# one-block holes when tune2fs added its journal, labeled in place with every label new. With
# each write in turn of a sample failed (FCLABEL_FAULT=write:N), e2fsck's replay of the journal
# then e2fsck -fn finds nothing, and every label is the old or the new one; some of the failed
# runs leave every new label after the replay (their transaction was committed, its blocks not
# yet written home: the replay wrote them from the log, so the log was where the journal's map
# says). The uninterrupted run leaves every new label and e2fsck -fn clean.
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/imglib.sh"
need_image_tools
command -v tune2fs >/dev/null 2>&1 || skip "tune2fs is not installed (Debian package e2fsprogs)"
cd "$OUT" || exit 1
export SOURCE_DATE_EPOCH=1700000000

# 3600 files of one 1 KiB block fill the image; every other one removed leaves 1800 holes of a
# block, where the journal's 1024 blocks go
mkdir -p tree
"$PY" -c '
import random
r = random.Random(37)
for i in range(3600):
    open("tree/f%d" % i, "wb").write(bytes(r.getrandbits(8) for _ in range(1024)))
'
mke2fs -q -F -t ext4 -O ^has_journal -I 256 -b 1024 -N 3700 -d tree base.img 5000K >/dev/null 2>&1 ||
	bad "mke2fs"
i=0
while [ $i -lt 3600 ]; do echo "rm /f$i"; i=$((i + 2)); done >rm.cmds
debugfs -w -f rm.cmds base.img >/dev/null 2>&1
tune2fs -O has_journal -J size=1 base.img >/dev/null 2>&1 || bad "tune2fs -j"
pieces=$(debugfs -R "ex <8>" base.img 2>/dev/null | grep -c '^ *[0-9]')
[ "$pieces" -ge 100 ] && ok "the journal is $pieces extents" ||
	bad "the journal is $pieces extents, not the hundreds the test needs"
printf '/.*\tsystem_u:object_r:old_t:s0\n' >old.fc
printf '/.*\tsystem_u:object_r:new_t:s0\n' >new.fc
"$FCLABEL" label base.img -S old.fc -a / >/dev/null 2>&1 || bad "the first label"

# labels IMAGE: each label the image holds, once
labels() { "$FCLABEL" dump "$1" -a / 2>/dev/null | awk -F '\t' '{ print $NF }' | sort -u | tr '\n' ' '; }

cp base.img whole.img
run whole env FCLABEL_FAULT=count "$FCLABEL" label whole.img -S new.fc -a /
expect_rc "labeled in place" 0
fsck_clean whole.img "the uninterrupted run"
expect_eq "the uninterrupted run's labels" "$(labels whole.img)" "system_u:object_r:new_t:s0 "
writes=$(sed -n 's/.* write=\([0-9]*\).*/\1/p' whole.err)
[ "${writes:-0}" -gt 500 ] && ok "$writes writes" || bad "the run counted ${writes:-no} writes"

# every fifth write failed, and the last twenty each
tried=0 replayed=0 wrong=""
n=1
while [ "$n" -le "${writes:-0}" ]; do
	cp base.img f.img
	FCLABEL_FAULT=write:$n "$FCLABEL" label f.img -S new.fc -a / >f.out 2>f.err
	frc=$?
	e2fsck -E journal_only -y f.img >/dev/null 2>&1
	if ! e2fsck -fn f.img >fsck.log 2>&1; then
		wrong="$wrong write $n: e2fsck -fn $(grep -v '^Pass\|^e2fsck 1\|files (' fsck.log | head -n 3 | tr '\n' '|');"
	fi
	l=$(labels f.img)
	case $l in
	"system_u:object_r:new_t:s0 ") [ $frc -ne 0 ] && replayed=$((replayed + 1)) ;;
	"system_u:object_r:old_t:s0 " | "system_u:object_r:new_t:s0 system_u:object_r:old_t:s0 ") ;;
	*) wrong="$wrong write $n: labels $l;" ;;
	esac
	tried=$((tried + 1))
	if [ "$n" -ge $((writes - 20)) ]; then n=$((n + 1)); else n=$((n + 5)); fi
done
[ -z "$wrong" ] && ok "$tried runs, each failed at a write: replayed, e2fsck -fn clean, old or new labels" ||
	bad "after a failed write and the replay:$wrong"
[ "$replayed" -gt 0 ] && ok "$replayed failed runs leave every new label after the replay" ||
	bad "no failed run was finished by the journal's replay"
finish
