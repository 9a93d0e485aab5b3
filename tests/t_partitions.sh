# Partitions of a disk image (issue 33): GPT and MBR disks built here with sfdisk, their ext4
# partitions mke2fs'd apart and dd'd into place:
# - one ext4 partition (beside an ESP): label, check and relabel find it with no --part;
# - two: the several-candidates refusal (exit 2, naming both), --part by number and by GPT name,
#   -a / taking the Discoverable Partitions root; label, check and relabel of the chosen one;
# - every byte outside the chosen partition unchanged (the regions compared before and after),
#   and the partition's own file system clean and labeled as a plain image of it would be;
# - MBR, a partition starting off a block boundary (sector 63), in place and as a copy;
# - an Android sparse disk image;
# - refused, untouched: a partition past the disk's end, a file system bigger than its
#   partition, --part naming none, --part on an image with no table;
# - an image with no table labeled as before.
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/imglib.sh"
need_image_tools
command -v sfdisk >/dev/null 2>&1 || skip "sfdisk is not installed (Debian package fdisk)"
cd "$OUT" || exit 1

small_tree tree
small_policy fc
# a second policy for relabel: /etc's type changes
sed 's/etc_t/etc2_t/' fc >fc2
mkimg root.img tree 16M -t ext4 -I 256 || finish
mkimg home.img tree 8M -t ext4 -I 256 || finish

ROOT_X86=4f68bce3-e8cd-4db1-96e7-fbcaf984b709
LINUX=0FC63DAF-8483-4772-8E79-3D69D8477DE4
ESP=C12A7328-F81F-11D2-BA4B-00A0C93EC93B

# gpt DISK SIZE: a GPT disk, from the table on stdin; place DISK IMG SECTOR puts IMG there
gpt() {
	rm -f "$1" && truncate -s "$2" "$1" && sfdisk -q "$1" >"$OUT/sfdisk.log" 2>&1 ||
		bad "sfdisk $1: $(tail -n 2 "$OUT/sfdisk.log" | tr '\n' '|')"
}
place() { dd if="$2" of="$1" bs=512 seek="$3" conv=notrunc status=none; }

# outside_same WHAT DISK BEFORE START_SECTOR SECTORS: every byte before and after the
# partition as it was
outside_same() {
	_s=$(stat -c %s "$2")
	_end=$((($4 + $5) * 512))
	if cmp -s -n $(($4 * 512)) "$2" "$3" &&
	   cmp -s -i "$_end:$_end" "$2" "$3" && [ "$_s" = "$(stat -c %s "$3")" ]; then
		ok "$1: every byte outside the partition unchanged"
	else
		bad "$1: a byte outside the partition changed"
	fi
}
# extract DISK START SECTORS OUTIMG
extract() { dd if="$1" of="$4" bs=512 skip="$2" count="$3" status=none; }
# label_of IMG PATH: the label debugfs reads
label_of() { debugfs -R "ea_get -V $2 security.selinux" "$1" 2>/dev/null | tr -d '\0' | head -n 1; }

# ---- one ext4 partition beside an ESP --------------------------------------------------------
gpt one.img 24M <<EOF
label: gpt
start=2048, size=4096, type=$ESP, name="esp"
start=6144, size=32768, type=$LINUX, name="data"
EOF
place one.img root.img 6144
cp one.img one.orig
run one_label "$FCLABEL" label one.img -S fc
expect_rc "one partition: label with no --part" 0
expect_match "one partition: the run names it" "$(cat one_label.err)" "*partition 2 (\"data\")*"
outside_same "one partition: label" one.img one.orig 6144 32768
extract one.img 6144 32768 one.p2
fsck_clean one.p2 "one partition: its file system after label"
expect_eq "one partition: /bin/sh labeled" "$(label_of one.p2 /bin/sh)" "system_u:object_r:bin_t:s0"
# the same partition labeled as a plain image gives the same bytes
cp root.img plain.img
run plain "$FCLABEL" label plain.img -S fc
if cmp -s plain.img one.p2; then ok "one partition: the same bytes as the plain image labeled"
else bad "one partition: the partition differs from the plain image labeled"; fi
run one_check "$FCLABEL" check one.img -S fc
expect_rc "one partition: check after label" 0
run one_relabel "$FCLABEL" relabel one.img --from fc --to fc2
expect_rc "one partition: relabel" 0
outside_same "one partition: relabel" one.img one.orig 6144 32768
extract one.img 6144 32768 one.p2
expect_eq "one partition: relabel changed /etc/passwd" "$(label_of one.p2 /etc/passwd)" "system_u:object_r:etc2_t:s0"
fsck_clean one.p2 "one partition: its file system after relabel"
run one_check2 "$FCLABEL" check one.img -S fc2
expect_rc "one partition: check after relabel" 0

# ---- two ext4 partitions -----------------------------------------------------------------------
gpt two.img 40M <<EOF
label: gpt
start=2048, size=8192, type=$ESP, name="esp"
start=10240, size=32768, type=$ROOT_X86, name="root"
start=43008, size=16384, type=$LINUX, name="home"
EOF
place two.img root.img 10240
place two.img home.img 43008
cp two.img two.orig
run several "$FCLABEL" label two.img -S fc -a /etc -n
expect_rc "two partitions: no --part refused" 2
expect_match "two partitions: the refusal names both" "$(cat several.err)" "*2 (\"root\")*3 (\"home\")*--part*"
run several_check "$FCLABEL" check two.img -S fc -a /etc
expect_rc "two partitions: check with no --part refused" 2
if cmp -s two.img two.orig; then ok "two partitions: refused, the disk untouched"
else bad "two partitions: the refused disk changed"; fi
run byname "$FCLABEL" label two.img -S fc --part home
expect_rc "two partitions: --part by GPT name" 0
outside_same "two partitions: --part home" two.img two.orig 43008 16384
extract two.img 43008 16384 two.p3
fsck_clean two.p3 "two partitions: home after label"
expect_eq "two partitions: home labeled" "$(label_of two.p3 /etc/passwd)" "system_u:object_r:etc_t:s0"
# -z: the undo file is a plain file (not moved by the partition's offset); e2undo -o replays it
cp two.orig undo.img
run undo "$FCLABEL" label undo.img -S fc --part 3 --in-place -z undo.e2undo
expect_rc "two partitions: label -z" 0
if e2undo -o $((43008 * 512)) undo.e2undo undo.img >e2undo.log 2>&1 && cmp -s undo.img two.orig; then
	ok "two partitions: e2undo -o OFFSET gives the disk back byte for byte"
else
	bad "two partitions: e2undo did not give the disk back: $(tail -n 2 e2undo.log | tr '\n' '|')"
fi
run bynum "$FCLABEL" check two.img -S fc --part 3 --json bynum.json
expect_rc "two partitions: check --part by number" 0
expect_match "two partitions: the report names the partition" "$(tr -d ' \n' <bynum.json)" \
	'*"partition":{"number":3,"name":"home","offset":22020096,"size":8388608}*'
expect_match "two partitions: the report is valid" "$(reports_valid bynum.json)" "*1 reports, 0 bad*"
run rootcheck "$FCLABEL" check two.img -S fc --part 2
expect_rc "two partitions: check of the root (not labeled yet)" 1
cp two.img two.mid
# -a /: the Discoverable Partitions root of the two
run dps "$FCLABEL" label two.img -S fc -a /
expect_rc "two partitions: -a / takes the DPS root" 0
expect_match "two partitions: the run names the root" "$(cat dps.err)" "*partition 2 (\"root\")*"
outside_same "two partitions: -a /" two.img two.mid 10240 32768
run rel "$FCLABEL" relabel two.img --from fc --to fc2 --part root
expect_rc "two partitions: relabel --part root" 0
outside_same "two partitions: relabel" two.img two.mid 10240 32768
extract two.img 10240 32768 two.p2
fsck_clean two.p2 "two partitions: root after relabel"
run bad_name "$FCLABEL" check two.img -S fc --part nosuch
expect_rc "two partitions: --part naming none refused" 2
expect_match "two partitions: ... naming the partitions there are" "$(cat bad_name.err)" "*nosuch*1 (\"esp\")*"
run esp "$FCLABEL" check two.img -S fc --part esp
expect_rc "two partitions: --part of one with no ext4 refused" 2

# ---- MBR, a partition off a block boundary -------------------------------------------------------
rm -f mbr.img && truncate -s 24M mbr.img
sfdisk -q mbr.img >sfdisk.log 2>&1 <<EOF || bad "sfdisk mbr.img: $(tail -n 2 sfdisk.log)"
label: dos
start=63, size=32768, type=83
start=32831, size=8192, type=c
EOF
place mbr.img root.img 63
cp mbr.img mbr.orig
run mbr_inplace "$FCLABEL" label mbr.img -S fc --in-place
expect_rc "MBR at sector 63: label in place" 0
outside_same "MBR at sector 63: in place" mbr.img mbr.orig 63 32768
extract mbr.img 63 32768 mbr.p1
fsck_clean mbr.p1 "MBR at sector 63: the file system"
if cmp -s plain.img mbr.p1; then ok "MBR at sector 63: the same bytes as the plain image labeled"
else bad "MBR at sector 63: the partition differs from the plain image labeled"; fi
cp mbr.orig mbr2.img
run mbr_atomic "$FCLABEL" label mbr2.img -S fc --atomic --part 1
expect_rc "MBR: label as a copy renamed over it" 0
outside_same "MBR: as a copy" mbr2.img mbr.orig 63 32768
extract mbr2.img 63 32768 mbr2.p1
# (in place, the labels went through the journal; a copy's did not)
if same_fs mbr.p1 mbr2.p1; then ok "MBR: the copy gives the same file system as in place"
else bad "MBR: the copy differs from in place"; fi
run mbr_check "$FCLABEL" check mbr2.img -S fc
expect_rc "MBR: check" 0

# ---- Android sparse disk image -----------------------------------------------------------------
if command -v img2simg >/dev/null 2>&1; then
	img2simg two.orig two.simg
	run sparse "$FCLABEL" label two.simg -S fc --part home
	expect_rc "sparse disk: label --part home" 0
	simg2img two.simg two.unsparse
	outside_same "sparse disk" two.unsparse two.orig 43008 16384
	extract two.unsparse 43008 16384 sp.p3
	if same_fs sp.p3 two.p3; then ok "sparse disk: the partition as the raw disk's"
	else bad "sparse disk: the partition differs from the raw disk's"; fi
	run sparse_check "$FCLABEL" check two.simg -S fc --part 3
	expect_rc "sparse disk: check" 0
else
	echo "     (img2simg not installed: sparse disk not tried)"
fi

# ---- refused: bounds ------------------------------------------------------------------------------
# an MBR partition past the disk's end (MBR has no header that knows the disk's size)
cp mbr.orig past.img
truncate -s 12M past.img
cp past.img past.orig
run past "$FCLABEL" label past.img -S fc --part 1
expect_rc "a partition past the disk's end refused" 2
expect_match "... saying so" "$(cat past.err)" "*past the end of the disk*"
run past2 "$FCLABEL" label past.img -S fc
expect_rc "... with no --part too" 2
if cmp -s past.img past.orig; then ok "past the end: the disk untouched"
else bad "past the end: the disk changed"; fi
# a GPT cut short: libblkid reads no GPT there (its header says the disk is longer); refused,
# saying so
cp two.orig gptshort.img
truncate -s 28M gptshort.img
cp gptshort.img gptshort.orig
run gptshort "$FCLABEL" label gptshort.img -S fc --part 2
expect_rc "a GPT disk cut short refused" 2
expect_match "... saying why" "$(cat gptshort.err)" "*GPT*cut short*"
if cmp -s gptshort.img gptshort.orig; then ok "GPT cut short: the disk untouched"
else bad "GPT cut short: the disk changed"; fi
# a file system bigger than its partition
rm -f small.img && truncate -s 24M small.img
printf 'label: dos\nstart=2048, size=16384, type=83\n' | sfdisk -q small.img >/dev/null 2>&1
place small.img root.img 2048
cp small.img small.orig
run small "$FCLABEL" label small.img -S fc
expect_rc "a file system bigger than its partition refused" 2
expect_match "... saying so" "$(cat small.err)" "*file system says*"
if cmp -s small.img small.orig; then ok "bigger file system: the disk untouched"
else bad "bigger file system: the disk changed"; fi
# no table: as before, and --part refused
cp root.img notable.img
run notable "$FCLABEL" label notable.img -S fc
expect_rc "no table: labeled as before" 0
if cmp -s notable.img plain.img; then ok "no table: the same bytes as before"
else bad "no table: the bytes differ"; fi
run notable_part "$FCLABEL" check notable.img -S fc --part 1
expect_rc "no table: --part refused" 2
run tree_part "$FCLABEL" check tree -S fc -a / --part 1
expect_rc "a directory: --part refused" 2

# ---- dump of a partition; an EROFS partition (read only) -----------------------------------------
# (the partition's dump is the plain image's: the same file system, read through the offset)
cp root.img root.lab && "$FCLABEL" label root.lab -S fc >/dev/null 2>&1
run dump_lab "$FCLABEL" dump root.lab
cp one.orig one.lab
run one_lab "$FCLABEL" label one.lab -S fc
run dump_one "$FCLABEL" dump one.lab
expect_rc "dump: a disk's only ext4 partition, no --part" 0
if [ -s dump_one.out ] && cmp -s dump_one.out dump_lab.out; then
	ok "dump: the partition lists as the plain image labeled alike ($(wc -l <dump_one.out) paths)"
else bad "dump: the partition's listing differs from the plain image's: $(diff dump_lab.out dump_one.out | head -n 4 | tr '\n' '|')"; fi
if command -v mkfs.erofs >/dev/null 2>&1; then
	"$FCLABEL" dump --format file_contexts root.lab >erofs.fc 2>/dev/null
	rm -f usr.erofs
	mkfs.erofs -zlz4hc --file-contexts=erofs.fc usr.erofs tree >mkerofs.log 2>&1 ||
		bad "mkfs.erofs: $(tail -n 2 mkerofs.log | tr '\n' '|')"
	gpt ero.img 24M <<EOF
label: gpt
start=2048, size=4096, type=$ESP, name="esp"
start=6144, size=4096, type=$LINUX, name="usr"
EOF
	place ero.img usr.erofs 6144
	cp ero.img ero.orig
	run ero_check "$FCLABEL" check ero.img -S fc
	expect_rc "EROFS partition: check with no --part" 0
	expect_match "EROFS partition: the run names it" "$(cat ero_check.err)" "*partition 2 (\"usr\")*EROFS*"
	run ero_dump "$FCLABEL" dump ero.img
	run ero_bare "$FCLABEL" dump usr.erofs
	grep -v '^/lost+found	' dump_lab.out >dump_lab.nolf
	if [ -s ero_dump.out ] && cmp -s ero_dump.out ero_bare.out && cmp -s ero_dump.out dump_lab.nolf; then
		ok "EROFS partition: its dump is the bare EROFS image's and the ext4 image's ($(wc -l <ero_dump.out) paths)"
	else bad "EROFS partition: dumps differ: $(diff ero_bare.out ero_dump.out | head -n 4 | tr '\n' '|') $(diff dump_lab.nolf ero_dump.out | head -n 4 | tr '\n' '|')"; fi
	run ero_differs "$FCLABEL" check ero.img -S fc2 --part usr
	expect_rc "EROFS partition: check against another policy finds the difference" 1
	run ero_label "$FCLABEL" label ero.img -S fc
	expect_rc "EROFS partition: label refused" 2
	expect_match "... saying how it is labeled instead" "$(cat ero_label.err)" "*mkfs.erofs --file-contexts*"
	run ero_relabel "$FCLABEL" relabel ero.img --from fc --to fc2 --part 2
	expect_rc "EROFS partition: relabel refused" 2
	if cmp -s ero.img ero.orig; then ok "EROFS partition: refused, the disk untouched"
	else bad "EROFS partition: the refused disk changed"; fi
	# an ext4 root and an EROFS /usr: two candidates
	gpt mixed.img 40M <<EOF
label: gpt
start=2048, size=32768, type=$ROOT_X86, name="root"
start=34816, size=4096, type=$LINUX, name="usr"
EOF
	place mixed.img root.lab 2048
	place mixed.img usr.erofs 34816
	run mixed "$FCLABEL" dump mixed.img
	expect_rc "ext4 and EROFS partitions: dump with no --part refused" 2
	expect_match "... naming both" "$(cat mixed.err)" "*1 (\"root\")*2 (\"usr\")*--part*"
	run mixed_usr "$FCLABEL" dump mixed.img --part usr -a /usr
	expect_rc "ext4 and EROFS partitions: dump --part usr -a /usr" 0
	expect_match "... listed at /usr" "$(sed -n 2p mixed_usr.out)" "/usr/*"
	run mixed_root "$FCLABEL" check mixed.img -S fc -a /
	expect_rc "ext4 and EROFS partitions: check -a / takes the DPS root" 0
	expect_match "... the ext4 root" "$(cat mixed_root.err)" "*partition 1 (\"root\")*"
	# an EROFS file system bigger than its partition
	rm -f esmall.img && truncate -s 8M esmall.img
	printf 'label: dos\nstart=2048, size=4, type=83\n' | sfdisk -q esmall.img >/dev/null 2>&1
	place esmall.img usr.erofs 2048
	run esmall "$FCLABEL" check esmall.img -S fc
	expect_rc "an EROFS file system bigger than its partition refused" 2
	expect_match "... saying so" "$(cat esmall.err)" "*file system says*"
	if command -v img2simg >/dev/null 2>&1; then
		img2simg ero.orig ero.simg
		run ero_sparse "$FCLABEL" check ero.simg -S fc
		expect_rc "an EROFS partition of a sparse disk: refused" 2
		expect_match "... saying how to read it" "$(cat ero_sparse.err)" "*simg2img*"
	fi
else
	echo "     (mkfs.erofs not installed (Debian package erofs-utils): EROFS partitions not tried)"
fi
run dump_tree_part "$FCLABEL" dump tree --part 1
expect_rc "dump: a directory with --part refused" 2

# ---- a partition mounted through a device of its own ---------------------------------------------
# (a disk image attached with losetup -P, its partition 3 mounted from loopNp3: the whole disk's
# mount check does not see it; the run finds the partition's device in sysfs and the mount table)
mounted_part() {
	[ "$(id -u)" = 0 ] || { echo "     (a mounted partition: skipped: losetup and mount take root)"; return; }
	cp two.orig lp.img
	L=$(losetup -fP --show lp.img 2>losetup.err) || { echo "     (a mounted partition: skipped: losetup -P does not work here: $(head -n 1 losetup.err))"; return; }
	B=${L##*/}
	partx -a "$L" >/dev/null 2>&1 # (where no udev adds the partitions' devices)
	D=$(cat "/sys/block/$B/${B}p3/dev" 2>/dev/null)
	mkdir -p lpm
	if [ -z "$D" ] || ! mknod lp3 b "${D%:*}" "${D#*:}" 2>/dev/null || ! mount lp3 lpm 2>mount.err; then
		echo "     (a mounted partition: skipped: no partition device for $L here)"
		partx -d "$L" >/dev/null 2>&1; losetup -d "$L"; rm -f lp3; return
	fi
	run lpm_file "$FCLABEL" label lp.img -S fc --part 3
	expect_rc "mounted partition: label of the disk image refused" 2
	expect_match "... naming the partition's device and mount point" "$(cat lpm_file.err)" "*partition 3 is mounted (/dev/${B}p3, at *lpm)*"
	run lpm_dev "$FCLABEL" label "$L" -S fc --part 3
	expect_rc "mounted partition: label of the disk's device refused" 2
	run lpm_check "$FCLABEL" check "$L" -S fc --part 3
	expect_match "mounted partition: check of the disk's device warns" "$(cat lpm_check.err)" "*partition 3 of $L is mounted*"
	umount lpm
	partx -d "$L" >/dev/null 2>&1
	losetup -d "$L"
	rm -f lp3
	# (the mount itself writes partition 3's superblock: outside it, and its labels, as they were)
	outside_same "mounted partition: refused" lp.img two.orig 43008 16384
	extract lp.img 43008 16384 lp.p3
	expect_eq "mounted partition: nothing labeled there" "$(label_of lp.p3 /etc/passwd)" ""
}
mounted_part
finish
