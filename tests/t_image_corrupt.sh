# fclabel label / check on corrupted images: a catalogue of damage, each case made here from a
# good small image (mke2fs -d of a small tree, labeled) with debugfs -w or byte edits (python3).
# For every case, label (with a policy that changes labels, so it tries to write) and check (with
# the policy the image was labeled with):
# - do not crash (exit 0, 1 or 2 as the case wants; no sanitizer or abort message) and do not
#   hang (timeout 20 s; a directory loop is entered once),
# - say what is wrong, naming the path and (where there is one) the inode,
# - exit non-zero: 2 when the image is refused (the image is then unchanged byte for byte), 1 when
#   damaged entries were reported and left alone (the rest is labeled),
# - leave the image no worse: every problem e2fsck -fn reports afterwards it reported before
#   (check never writes: the image is unchanged).
# Cases: the superblock (magic, checksum), truncated images, group descriptors (tables outside the
# file system or over other metadata, checksum), the block bitmap (read from a data block, a bit
# flipped), directory entries (to a free inode, a never-used inode, the unused part of the inode
# table, out of range, a reserved inode, an ancestor / the root / the directory itself, rec_len
# and name_len past the block, names holding NUL or '/'), inodes (invalid file types, the root
# not a directory or cleared, a directory's extent header or extent out of the file system, a
# directory of i_size 0, a symlink of absurd size), attribute blocks (magic, h_blocks, value
# offset / size past the block, values over the names, NULs in a name, no end marker,
# e_value_inum, i_file_acl outside the file system or on metadata, h_refcount too low / too
# high), in-inode attributes (the same, i_extra_isize huge / not a multiple of 4 / exactly the
# inode; an inline-data directory's system.data), checksums (inode, directory block, attribute block); 128- and 256-byte inodes where
# attributes are involved. One or two cases run again under valgrind when it is installed.
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/imglib.sh"
need_image_tools
start=$(date +%s)
cd "$OUT" || exit 1

small_tree tree
# f1: a user attribute too big for the inode body (it goes to a block with 256-byte inodes too)
"$PY" -c 'import os, sys; os.setxattr(sys.argv[1], "user.big", b"v" * 200)' tree/data/f1 ||
	skip "cannot set user.* attributes in $OUT"
small_policy fc
# the run that writes: every label under /data changes
sed 's/data_t/data2_t/; s/data_even_t/data_even2_t/' fc >fc2

# ext.py: offsets in a raw image (no checksum is fixed: checksummed images are edited by debugfs
# or are the checksum cases)
cat >ext.py <<'PYEOF'
import struct, sys
f = open(sys.argv[2], "r+b")
def rd(off, n):
    f.seek(off)
    return f.read(n)
sb = rd(1024, 1024)
bs = 1024 << struct.unpack_from("<I", sb, 24)[0]
first, ipg = struct.unpack_from("<I", sb, 20)[0], struct.unpack_from("<I", sb, 40)[0]
isize = struct.unpack_from("<H", sb, 0x58)[0]
desc = max(struct.unpack_from("<H", sb, 0xFE)[0], 32) if struct.unpack_from("<I", sb, 0x60)[0] & 0x80 else 32
def gd(g, lo, hi):
    d = rd((first + 1) * bs + g * desc, desc)
    return struct.unpack_from("<I", d, lo)[0] | (struct.unpack_from("<I", d, hi)[0] << 32 if desc >= 64 else 0)
def ioff(ino):
    g, i = divmod(ino - 1, ipg)
    return gd(g, 8, 0x28) * bs + i * isize
a = sys.argv[3:]
cmd = sys.argv[1]
if cmd == "ioff":        # ioff IMG INO: where the inode is
    print(ioff(int(a[0])))
elif cmd == "acl":       # acl IMG INO: where its attribute block is
    print(struct.unpack_from("<I", rd(ioff(int(a[0])), 128), 0x68)[0] * bs)
elif cmd == "ibody":     # ibody IMG INO: where its in-inode attribute area is (the magic)
    o = ioff(int(a[0]))
    print(o + 128 + struct.unpack_from("<H", rd(o, isize), 0x80)[0])
elif cmd == "bbit":      # bbit IMG BLOCK: byte offset and bit of BLOCK in group 0's block bitmap
    n = int(a[0]) - first
    print(gd(0, 0, 0x20) * bs + n // 8, n % 8)
elif cmd == "dirent":    # dirent IMG BLOCK NAME: where the entry NAME is in directory block BLOCK
    blk = int(a[0])
    b, p = rd(blk * bs, bs), 0
    while p + 8 <= bs:
        ino, rl, nl = struct.unpack_from("<IHB", b, p)
        if b[p + 8:p + 8 + nl] == a[1].encode():
            print(blk * bs + p)
            sys.exit(0)
        if rl < 8:
            break
        p += rl
    sys.exit("no entry %s in block %d" % (a[1], blk))
elif cmd == "poke":      # poke IMG OFF FMT VALUE...: struct.pack(FMT, VALUE...) at OFF
    f.seek(int(a[0], 0))
    f.write(struct.pack(a[1], *[int(v, 0) for v in a[2:]]))
elif cmd == "fill":      # fill IMG OFF N BYTE
    f.seek(int(a[0], 0))
    f.write(bytes([int(a[2], 0)]) * int(a[1], 0))
elif cmd == "flip":      # flip IMG OFF BIT
    o, bit = int(a[0]), int(a[1])
    f.seek(o)
    v = f.read(1)[0] ^ (1 << bit)
    f.seek(o)
    f.write(bytes([v]))
PYEOF
X() { "$PY" "$OUT/ext.py" "$@"; }
# the first data block of a file or directory
blk() { debugfs -R "blocks $2" "$1" 2>/dev/null | awk '{print $1; exit}'; }
# the inode number of a path
ino() { debugfs -R "stat $2" "$1" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p'; }
dirent() { X dirent "$1" "$(blk "$1" "$2")" "$3"; }

# ---- base images ----------------------------------------------------------------------------
# n128, n256: no metadata_csum (byte edits stay what they are); c128, c256: metadata_csum;
# i256: n256 with inline_data; u128: n128 unlabeled. 1 KiB blocks, 4 MiB. The others are
# labeled with fc.
for k in n128 n256 c128 c256 i256; do
	isz=${k#?}
	case $k in n*) feat=-O\ ^metadata_csum ;; i*) feat=-O\ ^metadata_csum,inline_data ;; *) feat= ;; esac
	# shellcheck disable=SC2086
	mkimg base_$k.img tree 4M -t ext4 -b 1024 -I "$isz" $feat || finish
done
cp base_n128.img base_u128.img
for k in n128 n256 c128 c256 i256; do
	run lab "$FCLABEL" label base_$k.img -S fc
	expect_rc "base $k labeled" 0
	fsck_clean base_$k.img "base $k"
done
# the inodes the recipes use (the same on every base image: mke2fs -d is deterministic)
F1=$(ino base_n128.img /data/f1) F3=$(ino base_n128.img /data/f3) DATA=$(ino base_n128.img /data)
SUB=$(ino base_n128.img /data/sub) SUBI=$(ino base_i256.img /data/sub)
NINODES=$(dumpe2fs -h base_n128.img 2>/dev/null | sed -n 's/^Inode count: *//p')
expect_eq "recipe inodes found" "$([ -n "$F1" ] && [ -n "$F3" ] && [ -n "$DATA" ] && [ -n "$SUB" ] && [ -n "$SUBI" ] && [ -n "$NINODES" ] && echo yes)" yes
expect_match "recipe: /data/sub is inline in i256" "$(debugfs -R 'stat /data/sub' base_i256.img 2>/dev/null)" "*Size of inline data*"

# e2fsck -fn's problem lines, one per line, sorted: progress, banners and the summary dropped,
# the numbers of the free counts dropped (labels allocate blocks)
problems() {
	e2fsck -fn "$1" 2>&1 | grep -v -e '^Pass [1-5]' -e '^e2fsck 1\.' -e ' files (' -e '^$' \
		-e '\*\*\*\*\*' -e '^Running additional passes' |
		sed -e 's/^\(Free [a-z]* count wrong\)[^(]*(.*/\1/' | sort -u
}

# sanitizer, abort and libext2fs-unregistered-code messages
crashed() { grep -l -e 'Sanitizer' -e 'runtime error' -e 'Aborted' -e 'Assertion' -e 'Unknown code' "$@" 2>/dev/null; }

# corrupt NAME BASE EXPECT PATTERN RECIPE
#   BASE    n128 n256 c128 c256 i256 u128
#   RECIPE  shell run with $I the image being damaged
#   EXPECT  refuse  check and label exit 2, their messages match PATTERN, the image unchanged
#           warn    check and label exit 1, their messages match PATTERN; /data/f6 (never damaged)
#                   gets its new label
#           warn-   the same, but the damage hides /data/f6
#           wlabel  label exits 1 (PATTERN), check 0: reading the labels is unaffected, only a
#                   write would make things worse
#           rlabel  label refused (2, PATTERN), check 0 (the same)
#           rlabel1 label refused (2, PATTERN: before any write), check 1 (it reads what it can)
#           fine    no damage by the file system's rules (but /data/f3's label is gone): e2fsck
#                   clean, check 1 (f3 differs), label 0 and f3 and f6 get their labels
#   PATTERN a glob the messages must match (label's; and check's where it reports)
corrupt() {
	c=$1 base=$2 want=$3 pat=$4 recipe=$5
	I=$c.img
	cp "base_$base.img" "$I"
	eval "$recipe" >"$c.recipe.log" 2>&1
	cp "$I" "$c.orig"
	problems "$I" >"$c.fsck0"
	if [ "$want" = fine ]; then
		[ -s "$c.fsck0" ] && bad "$c: recipe: e2fsck should find nothing: $(head -n 3 "$c.fsck0" | tr '\n' '|')"
	elif [ ! -s "$c.fsck0" ]; then
		# (e2fsck -fn may exit 0 on damage it "ignores", such as a descriptor checksum)
		bad "$c: recipe did not damage the image (e2fsck -fn finds nothing): $(tail -n 3 "$c.recipe.log" | tr '\n' '|')"
	fi
	s0=$(sum "$I")
	run "$c.check" timeout 20 "$FCLABEL" check "$I" -S fc
	crc=$rc
	s1=$(sum "$I")
	run "$c.label" timeout 20 "$FCLABEL" label "$I" -S fc2
	lrc=$rc
	s2=$(sum "$I")
	problems "$I" >"$c.fsck1"
	case $want in
	refuse) cw=2 lw=2 ;;
	warn | warn-) cw=1 lw=1 ;;
	wlabel) cw=0 lw=1 ;;
	rlabel) cw=0 lw=2 ;;
	rlabel1) cw=1 lw=2 ;;
	fine) cw=1 lw=0 ;;
	esac
	f=""
	[ "$crc" = "$cw" ] || f="$f check exit $crc (want $cw: $(grep -v scanned "$c.check.err" | head -n 2 | tr '\n' '|'));"
	[ "$lrc" = "$lw" ] || f="$f label exit $lrc (want $lw: $(grep -v scanned "$c.label.err" | head -n 2 | tr '\n' '|'));"
	if [ -n "$(crashed "$c.check.err" "$c.label.err")" ]; then
		f="$f crash/sanitizer/unknown-code message: $(grep -h -e Sanitizer -e 'runtime error' -e Abort -e Assert -e 'Unknown code' "$c.check.err" "$c.label.err" | head -n 2 | tr '\n' '|');"
	fi
	case $want in fine) ;; *)
		case $(cat "$c.label.err") in $pat) ;; *) f="$f label does not say [$pat];" ;; esac ;;
	esac
	case $want in refuse | warn | warn-)
		case $(cat "$c.check.err") in $pat) ;; *) f="$f check does not say [$pat];" ;; esac ;;
	esac
	[ "$s0" = "$s1" ] || f="$f check changed the image;"
	[ "$want" = refuse ] && [ "$s1" != "$s2" ] && f="$f the refused image changed;"
	case $want in rlabel*) [ "$s1" != "$s2" ] && f="$f the refused image changed;" ;; esac
	new=$(comm -13 "$c.fsck0" "$c.fsck1")
	[ -z "$new" ] || f="$f e2fsck -fn reports new problems after label: $(echo "$new" | head -n 4 | tr '\n' '|');"
	case $want in warn | wlabel | fine)
		got=$(debugfs -R 'ea_get /data/f6 security.selinux' "$I" 2>/dev/null)
		case $got in *data_even2_t*) ;; *) f="$f /data/f6 (undamaged) was not labeled: [$got];" ;; esac ;;
	esac
	if [ "$want" = fine ]; then
		got=$(debugfs -R 'ea_get /data/f3 security.selinux' "$I" 2>/dev/null)
		case $got in *data2_t*) ;; *) f="$f /data/f3 was not labeled: [$got];" ;; esac
		grep -q '^/data/f3	has (none)' "$c.check.out" || f="$f check does not list /data/f3 as unlabeled;"
	fi
	if [ -z "$f" ]; then
		ok "$c: check $crc, label $lrc; $(grep -h -v scanned "$c.label.err" | head -n 1 | cut -c 1-150)"
	else
		bad "$c:$f"
	fi
}

# ---- the superblock, the size, the group descriptors, the block bitmap ---------------------
corrupt sb_magic n256 refuse '*sb_magic.img*Bad magic*' 'X poke $I 1080 "<H" 0x1234'
corrupt sb_checksum c256 refuse '*sb_checksum.img*uperblock checksum*' 'X poke $I 2044 "<I" 0x12345678'
corrupt truncated_in_itable n128 refuse '*truncated_in_itable.img*truncated*' 'truncate -s 100K $I'
corrupt truncated_in_data u128 refuse '*truncated_in_data.img*truncated*' 'truncate -s 600K $I'
corrupt gd_itable_outside c256 refuse '*gd_itable_outside.img*group descriptors*inode table*' \
	'debugfs -w -R "set_bg 0 inode_table 99999999" $I; debugfs -w -R "set_bg 0 checksum calc" $I'
corrupt gd_bbitmap_outside c128 refuse '*gd_bbitmap_outside.img*group descriptors*block bitmap*' \
	'debugfs -w -R "set_bg 0 block_bitmap 99999999" $I; debugfs -w -R "set_bg 0 checksum calc" $I'
corrupt gd_ibitmap_on_gdt n128 refuse '*gd_ibitmap_on_gdt.img*group descriptors*inode bitmap*' \
	'debugfs -w -R "set_bg 0 inode_bitmap 3" $I'
corrupt gd_checksum c256 refuse '*gd_checksum.img*checksum of group descriptor 0*' 'X poke $I 2078 "<H" 0x1234'
# the bitmap read from a data block: almost every block looks free (a write would allocate over
# the tree: this destroyed /data before the fix)
corrupt bbitmap_on_data n128 rlabel '*bbitmap_on_data.img*block bitmap of group 0*' \
	'debugfs -w -R "set_bg 0 block_bitmap $(blk $I /data/f4)" $I'
# one in-use block marked free, the counts left alone
corrupt bbitmap_bit_flipped n128 rlabel '*bbitmap_bit_flipped.img*block bitmap of group 0*' \
	'X flip $I $(X bbit $I $(blk $I /data/f4))'

# ---- directory entries ----------------------------------------------------------------------
corrupt ent_free_inode n128 warn '*/data/f7:*inode bitmap marks free*' 'debugfs -w -R "freei /data/f7" $I'
corrupt ent_never_used_inode n128 warn '*/data/ghost:*inode 40*' 'debugfs -w -R "ln <40> /data/ghost" $I'
corrupt ent_unused_itable_area c256 warn '*/data/ghost:*inode 900*unused part*' 'debugfs -w -R "ln <900> /data/ghost" $I'
corrupt ent_out_of_range n128 warn "*/data/f3:*inode 100000, outside 1..$NINODES*" \
	'X poke $I $(dirent $I /data f3) "<I" 100000'
for k in 128 256; do
	# before the fix the journal inode got a label (and with 128-byte inodes an attribute block)
	corrupt ent_journal_inode_$k n$k warn '*/data/f3:*inode 8,*reserved*' 'X poke $I $(dirent $I /data f3) "<I" 8'
done
corrupt ent_resize_inode n128 warn '*/data/f3:*inode 7,*reserved*' 'X poke $I $(dirent $I /data f3) "<I" 7'
corrupt loop_ancestor n128 warn '*/data/sub/loop:*directory inode '"$DATA"' is reached a second time*' \
	'debugfs -w -R "ln /data /data/sub/loop" $I'
corrupt loop_root n256 warn '*/data/sub/x:*directory inode 2 is reached a second time*' \
	'X poke $I $(dirent $I /data/sub x) "<I" 2'
corrupt loop_self n128 warn '*/data/f3:*directory inode '"$DATA"' is reached a second time*' \
	'X poke $I $(dirent $I /data f3) "<I" '"$DATA"
corrupt dirent_reclen_past_block n128 warn- "*/data:*cannot read directory (inode $DATA)*corrupted*" \
	'X poke $I $(($(dirent $I /data f3) + 4)) "<H" 2000'
corrupt dirent_reclen_zero n256 warn- "*/data:*cannot read directory (inode $DATA)*corrupted*" \
	'X poke $I $(($(dirent $I /data f3) + 4)) "<H" 0'
corrupt dirent_namelen_past_reclen n128 warn- "*/data:*cannot read directory (inode $DATA)*corrupted*" \
	'X poke $I $(($(dirent $I /data f3) + 6)) "<B" 200'
# the last entry (rec_len to the block's end) with name_len 255: "sub" and 252 NULs. Before the
# fix its path was "/data/sub" (up to the NUL), and /data/sub/x was looked up as /data/sub
corrupt dirent_name_nul n128 warn- "*/data/sub???*inode $SUB*NUL*" 'X poke $I $(($(dirent $I /data sub) + 6)) "<B" 255'
corrupt dirent_name_slash n128 warn "*/data/f?:*inode $F3*'/'*" 'X poke $I $(($(dirent $I /data f3) + 9)) "<B" 47'

# ---- inodes ---------------------------------------------------------------------------------
corrupt root_not_dir n128 warn- '*/:*root inode (2) is not a directory*' 'debugfs -w -R "sif <2> mode 0100644" $I'
corrupt root_cleared n256 warn- '*/:*inode 2 *' 'debugfs -w -R "clri <2>" $I'
corrupt type_bits_all n256 warn "*/data/f3:*inode $F3 has an invalid file type (mode 0170644)*" 'debugfs -w -R "sif /data/f3 mode 0170644" $I'
corrupt type_bits_none n128 warn "*/data/f3:*inode $F3 has an invalid file type (mode 0644)*" 'debugfs -w -R "sif /data/f3 mode 0644" $I'
corrupt type_bits_dir n128 warn- "*/data/sub:*inode $SUB has an invalid file type (mode 0130755)*" 'debugfs -w -R "sif /data/sub mode 0130755" $I'
# libext2fs's block iterator swallows the error: before the fix /data was skipped in silence
corrupt dir_extent_header n128 warn- "*/data:*directory inode $DATA has no entries*Corrupt extent header*" \
	'X poke $I $(($(X ioff $I '"$DATA"') + 40)) "<H" 0'
corrupt dir_extent_outside n256 warn- "*/data:*cannot read directory (inode $DATA)*" \
	'X poke $I $(($(X ioff $I '"$DATA"') + 60)) "<I" 9999999'
corrupt dir_size_zero n128 warn "*/data:*directory inode $DATA has i_size 0*" 'debugfs -w -R "sif /data size 0" $I'
# unlabeled: before the fix the new attribute block made e2fsck read the symlink's target as
# block numbers (new "illegal block" problems)
corrupt symlink_size_128 u128 warn '*/data/link:*symlink inode * has an impossible size 4294967295*' \
	'debugfs -w -R "sif /data/link size 0xffffffff" $I'
corrupt symlink_size_256 n256 warn '*/data/link:*symlink inode * has an impossible size 100*' \
	'debugfs -w -R "sif /data/link size 100" $I'

# ---- attribute blocks (f1: label and user.big; 128-byte inodes: every label is in a block) ---
# entry 0 of f1's block is at +32: e_name_len +0, e_value_offs +2, e_value_inum +4, e_value_size +8
for k in 128 256; do
	corrupt ea_magic_$k n$k warn "*/data/f1:*inode $F1*bad header*" 'X poke $I $(X acl $I '"$F1"') "<I" 0x12345678'
	corrupt ea_h_blocks_$k n$k warn "*/data/f1:*inode $F1*bad header*" 'X poke $I $(($(X acl $I '"$F1"') + 8)) "<I" 2'
	corrupt ea_value_past_block_$k n$k warn "*/data/f1:*inode $F1*invalid value*" 'X poke $I $(($(X acl $I '"$F1"') + 34)) "<H" 1020'
	corrupt ea_value_size_huge_$k n$k warn "*/data/f1:*inode $F1*invalid value*" 'X poke $I $(($(X acl $I '"$F1"') + 40)) "<I" 0x7fffffff'
	corrupt ea_value_over_names_$k n$k warn "*/data/f1:*inode $F1*invalid value offset*" 'X poke $I $(($(X acl $I '"$F1"') + 34)) "<H" 32'
	corrupt ea_name_nul_$k n$k warn "*/data/f1:*inode $F1*name length*" 'X poke $I $(($(X acl $I '"$F1"') + 32)) "<B" 255'
	corrupt ea_no_end_marker_$k n$k warn "*/data/f1:*inode $F1*name length*" 'X fill $I $(($(X acl $I '"$F1"') + 32)) 992 1'
	corrupt ea_value_inum_$k n$k warn "*/data/f1:*inode $F1*extended attribute*corrupted*" 'X poke $I $(($(X acl $I '"$F1"') + 36)) "<I" 999999'
	corrupt ea_block_outside_$k n$k warn "*/data/f1:*inode $F1*Illegal extended attribute block*" 'debugfs -w -R "sif /data/f1 file_acl 99999999" $I'
	# a block claimed twice (a group descriptor block as f1's attribute block): refused before
	# any write, since writing to one owner changes the other
	corrupt ea_block_on_metadata_$k n$k rlabel1 "*refusing to write to it: block 2 is inode $F1's attribute block and is claimed by another inode or the file system's own metadata too*" 'debugfs -w -R "sif /data/f1 file_acl 2" $I'
done
# h_refcount of the block /data, f3, f5, f7, sub and sub/x share: dropping a reference trusts it
# (too low: before the fix the block was freed while 3 inodes still used it; too high: leaked)
corrupt ea_refcount_low n128 wlabel "*/data/f3:*inode $F3*h_refcount 1 but 6 inodes*" 'X poke $I $(($(X acl $I '"$F3"') + 4)) "<I" 1'
corrupt ea_refcount_high n128 wlabel "*/data/f3:*inode $F3*h_refcount 9 but 6 inodes*" 'X poke $I $(($(X acl $I '"$F3"') + 4)) "<I" 9'
for k in 128 256; do
	corrupt ea_block_checksum_$k c$k warn "*/data/f1:*inode $F1*checksum*" 'X poke $I $(($(X acl $I '"$F1"') + 16)) "<I" 0x12345678'
done

# ---- in-inode attributes (256-byte inodes; f3: the label alone in the body) ----------------
# the area: magic +0, entry +4 (e_name_len +4, e_value_offs +6, e_value_inum +8, e_value_size +12)
corrupt ibody_value_past_end n256 warn "*/data/f3:*inode $F3*invalid value*" 'X poke $I $(($(X ibody $I '"$F3"') + 6)) "<H" 120'
corrupt ibody_value_size n256 warn "*/data/f3:*inode $F3*invalid value*" 'X poke $I $(($(X ibody $I '"$F3"') + 12)) "<I" 100'
corrupt ibody_name_len n256 warn "*/data/f3:*inode $F3*name length*" 'X poke $I $(($(X ibody $I '"$F3"') + 4)) "<B" 200'
corrupt ibody_no_end_marker n256 warn "*/data/f3:*inode $F3*" 'X poke $I $(($(X ibody $I '"$F3"') + 4)) "<B" 60'
corrupt ibody_value_inum n256 warn "*/data/f3:*inode $F3*extended attribute*corrupted*" 'X poke $I $(($(X ibody $I '"$F3"') + 8)) "<I" 999999'
# before the fix: labeled in silence (huge) and a misaligned read (odd, UBSan)
corrupt extra_isize_huge n256 warn "*/data/f3:*inode $F3 has an invalid i_extra_isize 4096*" 'X poke $I $(($(X ioff $I '"$F3"') + 128)) "<H" 4096'
corrupt extra_isize_odd n256 warn "*/data/f3:*inode $F3 has an invalid i_extra_isize 30*" 'X poke $I $(($(X ioff $I '"$F3"') + 128)) "<H" 30'
# an inline-data directory: its system.data attribute damaged, or gone with the area's magic
# (before the fix: no warning, exit 0)
corrupt inline_dir_system_data i256 warn- "*/data/sub:*inode $SUBI has inline data*system.data*" 'X poke $I $(($(X ibody $I '"$SUBI"') + 12)) "<I" 200'
corrupt inline_dir_no_magic i256 warn- "*/data/sub:*inode $SUBI has inline data*system.data*" 'X poke $I $(X ibody $I '"$SUBI"') "<I" 0'
# not damage: an area without the magic holds no attributes; i_extra_isize may fill the inode
corrupt ibody_no_magic n256 fine '' 'X poke $I $(X ibody $I '"$F3"') "<I" 0x12345678'
corrupt extra_isize_whole_inode n256 fine '' 'X poke $I $(($(X ioff $I '"$F3"') + 128)) "<H" 128'

# ---- checksums (metadata_csum) --------------------------------------------------------------
corrupt csum_inode_file c256 warn "*/data/f3:*inode $F3*checksum*" 'X poke $I $(($(X ioff $I '"$F3"') + 124)) "<H" 0x1234'
corrupt csum_inode_dir c256 warn- "*/data/sub:*inode $SUB*checksum*" 'X poke $I $(($(X ioff $I '"$SUB"') + 124)) "<H" 0x1234'
corrupt csum_dir_block c256 warn- "*/data:*inode $DATA*checksum*" 'X poke $I $(($(blk $I /data) * 1024 + 1020)) "<I" 0x12345678'
corrupt csum_inode_file_128 c128 warn "*/data/f3:*inode $F3*checksum*" 'X poke $I $(($(X ioff $I '"$F3"') + 124)) "<H" 0x1234'

# ---- a loop is entered once: every path is listed once, nothing below the loop -------------
for c in loop_ancestor loop_self; do
	run "$c.list" timeout 20 "$FCLABEL" label "$c.orig" -n -v -S fc2
	n=$(wc -l <"$c.list.out")
	u=$(sort -u "$c.list.out" | wc -l)
	deep=$(grep -c -e '/data/sub/loop/' -e '/data/f3/' "$c.list.out")
	if [ "$rc" = 1 ] && [ "$n" = "$u" ] && [ "$n" -lt 30 ] && [ "$deep" = 0 ]; then
		ok "$c: label -n -v lists $n files, each once, nothing below the loop"
	else
		bad "$c: label -n -v: exit $rc, $n lines, $u distinct, $deep below the loop"
	fi
done

# ---- --json: the damaged entry is an error event, with the warning as its detail -----------
cp loop_ancestor.orig js.img
run js timeout 20 "$FCLABEL" label js.img -S fc2 --json js.json
got=$("$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(d["summary"]["errors"], [(e["path"], "second time" in e.get("detail", "")) for e in d["events"] if e["event"] == "error"])' js.json 2>&1)
expect_eq "loop_ancestor: --json: errors 1, one error event naming the loop" "$rc $got" "1 1 [('/data/sub/loop', True)]"

# ---- valgrind -------------------------------------------------------------------------------
if ! command -v valgrind >/dev/null 2>&1; then
	echo "note: valgrind is not installed; the valgrind runs are skipped"
elif grep -q -a -e '__asan_init' -e 'AddressSanitizer' "$FCLABEL"; then
	echo "note: $FCLABEL is built with a sanitizer; the valgrind runs are skipped"
else
	for c in ea_name_nul_128 extra_isize_odd; do
		for cmd in check label; do
			cp "$c.orig" vg.img
			pol=fc
			[ $cmd = label ] && pol=fc2
			run vg timeout 120 valgrind --error-exitcode=99 -q "$FCLABEL" $cmd vg.img -S $pol
			# (valgrind's notes on ioctls it does not know, e.g. the loop devices the mount
			# check asks about, are no error)
			vgerr=$(grep '^==[0-9]*==' vg.err | grep -v -e 'unhandled ioctl' -e 'spurious value errors' \
				-e 'README_MISSING_SYSCALL' -e '^==[0-9]*== *$')
			if [ "$rc" = 1 ] && [ -z "$vgerr" ]; then
				ok "valgrind: $c: $cmd exits 1, no report"
			else
				bad "valgrind: $c: $cmd exit $rc: $(echo "$vgerr" | head -n 4 | tr '\n' '|')"
			fi
		done
	done
fi

echo "t_image_corrupt: $(($(date +%s) - start)) s"
finish
