# fclabel label with refpolicy (Debian 12's generated file_contexts, single-file form so that
# file_contexts.homedirs and .subs_dist apply) on an image shaped like this machine: about 20,000
# paths from `find /usr /etc /var /opt /root -xdev` (imglib.sh's host_tree: all of /etc, /var and
# /opt, a seeded sample of the rest, with their parent directories; directories as directories,
# symlinks as symlinks, everything else as empty files), 128-byte inodes (so labels go to shared
# attribute blocks), labeled with -a /. Every file's label is read back independently and must
# equal both `fclabel lookup` of its path and mode and libselinux 3.4 (tests/oracle); e2fsck is
# clean; the rest of the image is unchanged; check finds nothing afterwards; a second run writes
# nothing.
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/imglib.sh"
FC=$SHARED/refpolicy/file_contexts
[ -f "$FC" ] || skip "no refpolicy file_contexts ($FC is absent)"
need_image_tools
need_oracle
start=$(date +%s)
cd "$OUT" || exit 1
N=${FC_IMAGE_PATHS:-20000}

host_tree "$OUT/tree" "$N" >build.log
# and a few paths where <<none>>, file_contexts.homedirs and .subs_dist aliases decide
for p in tmp/a/b proc/1/stat run/user/1000/x var/tmp/x mnt/usb/file dev/shm/x \
	home/alice/.bashrc home/alice/public_html/index.html bin/sh lib64/libc.so.6 \
	etc/init.d/ssh etc/systemd/system/a.service sbin/init; do
	mkdir -p "tree/$(dirname "$p")" && : >"tree/$p"
done
cat build.log
count=$(find tree | wc -l)
[ "$count" -gt 1000 ] && ok "a tree of $count entries" || bad "only $count entries in the tree"

mkimg system.img tree 512M -t ext4 -I 128 -N $((count + 1000)) || finish
rm -rf tree
fsck_clean system.img "the image as made"
cp --sparse=always system.img before.img

run label "$FCLABEL" label system.img -S "$FC" -a /
expect_rc "label -S refpolicy -a /" 0
echo "     $(cat label.out)"
fsck_clean system.img "labeled"
verify --name refpolicy --before before.img --after system.img --fc "$FC" --mp / \
	--summary label.out --stderr label.err --shared fresh --oracle "$ORACLE"
s=$(sum system.img)
run again "$FCLABEL" label system.img -S "$FC" -a /
expect_match "a second run changes nothing" "$(cat again.err)" "*, changed 0, *"
expect_eq "a second run leaves the image byte for byte" "$(sum system.img)" "$s"
run chk "$FCLABEL" check system.img -S "$FC"
expect_rc "check afterwards" 0
expect_eq "check lists nothing" "$(cat chk.out)" ""
[ "$fails" -eq 0 ] && rm -f system.img before.img
echo "t_image_refpolicy: $(($(date +%s) - start)) s"
finish
