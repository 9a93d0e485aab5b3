# A full image with 128-byte inodes (every label needs a block): labels that have a block to
# share are written; those that need a new block fail with a count; nothing is corrupted.
. "$TOP/tests/lib.sh"
cd "$OUT" || exit 1
command -v debugfs >/dev/null || skip "debugfs is not installed"
mkdir -p tree/a tree/b
i=1; while [ $i -le 50 ]; do : >tree/a/f$i; : >tree/b/g$i; i=$((i + 1)); done
printf '/.*\tsystem_u:object_r:default_t:s0\n/a(/.*)?\tsystem_u:object_r:a_t:s0\n/b(/.*)?\tsystem_u:object_r:b_t:s0\n' >fc1
# the new policy: /b/g1* (11 files) get a label no block holds yet
cp fc1 fc2
printf '/b/g1[0-9]?\tsystem_u:object_r:b1_t:s0\n' >>fc2
mke2fs -q -t ext4 -I 128 -N 256 -d tree img 4M >/dev/null 2>&1 || { bad "mke2fs"; finish; }
"$FCLABEL" label img -S fc1 >out 2>err
expect_eq "labeled with the first policy" "$?" 0
# fill every free block
bs=$(dumpe2fs -h img 2>/dev/null | awk -F: '/^Block size/ { print $2 + 0 }')
freeb() { dumpe2fs -h img 2>/dev/null | awk -F: '/^Free blocks/ { print $2 + 0 }'; }
head -c $(( ($(freeb) - 32) * bs )) /dev/urandom >big
debugfs -w -R "write big big" img >/dev/null 2>&1
n=0
while [ "$(freeb)" -gt 0 ] && [ $n -lt 200 ]; do
	head -c "$bs" /dev/urandom >s
	debugfs -w -R "write s s$n" img >/dev/null 2>&1
	n=$((n + 1))
done
expect_eq "the image is full" "$(freeb)" 0
before=$(e2fsck -fn img 2>&1 | grep -v -e '^e2fsck [0-9]' -e 'files (')
expect_eq "e2fsck -fn clean before" "$(e2fsck -fn img >/dev/null 2>&1; echo $?)" 0

"$FCLABEL" label img -S fc2 >out 2>err
expect_eq "full: exit 1" "$?" 1
expect_match "full: the count of files left unlabeled" "$(cat err)" "*11 file(s) could not be labeled: the image has no free block*"
expect_match "full: the first ones are named" "$(cat err)" "*/b/g1: cannot write system_u:object_r:b1_t:s0*"
expect_eq "full: at most 10 named" "$(grep -c 'cannot write' err)" 10
after=$(e2fsck -fn img 2>&1 | grep -v -e '^e2fsck [0-9]' -e 'files (')
expect_eq "full: e2fsck -fn as before" "$after" "$before"
# the new files (s*, big) were labeled by joining default_t's block; /b/g1* kept b_t
label() { debugfs -R "ea_get $1 security.selinux" img 2>/dev/null | sed -n 's/.*= "\(.*\)\\000".*/\1/p'; }
expect_eq "full: a new file joined an existing label's block" "$(label /s0)" "system_u:object_r:default_t:s0"
expect_eq "full: a file that needs a new block kept its label" "$(label /b/g12)" "system_u:object_r:b_t:s0"
expect_eq "full: the others are as the policy says" "$(label /b/g2)" "system_u:object_r:b_t:s0"
"$FCLABEL" check img -S fc2 >out 2>err
expect_match "full: check counts exactly those" "$(tail -n 1 err)" "*, differ 11, *"
finish
