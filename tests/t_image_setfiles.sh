# fclabel label against setfiles(8) itself, on loop-mounted copies of the same image (root,
# losetup/mount and policycoreutils' setfiles needed; skips otherwise, saying why).
# The image: about 3,000 paths shaped like this machine (imglib.sh's host_tree) plus FIFOs,
# sockets, device nodes, symlinks, agreeing hard links, user.* and ACL attributes, labels already
# there (wrong ones, and one under a <<none>> spec), names with spaces and newlines; 256- and
# 128-byte inodes. The policy: refpolicy's file_contexts when $SHARED has it, else a small one.
# - copy A labeled by fclabel, mounted: `setfiles -n -v -F -r MNT FC MNT` wants to change nothing;
# - copy B mounted, labeled by `setfiles -F -r MNT FC MNT`;
# - every path's security.selinux, byte for byte (trailing NUL included), is the same in A and
#   B (read back from the unmounted images, by imglib.sh's reader); both pass e2fsck -fn;
# - fclabel label refuses an image file while it is mounted, and leaves it alone.
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/imglib.sh"
[ "$(id -u)" = 0 ] || skip "needs root for loop mounts"
command -v losetup >/dev/null 2>&1 || skip "losetup is not installed (Debian package mount)"
command -v mount >/dev/null 2>&1 || skip "mount is not installed"
command -v setfiles >/dev/null 2>&1 || skip "setfiles is not installed (Debian package policycoreutils)"
need_image_tools
start=$(date +%s)
cd "$OUT" || exit 1
mkdir -p mnt probe/d
mkimg probe.img probe/d 4M -t ext4 || finish
mount -o loop probe.img mnt 2>probe.err || skip "mount -o loop does not work here: $(head -n 1 probe.err)"
umount mnt || skip "cannot unmount $OUT/mnt"
trap 'umount "$OUT/mnt" 2>/dev/null' EXIT INT TERM

FC=$SHARED/refpolicy/file_contexts
if [ ! -f "$FC" ]; then
	FC=$TOP/fixtures/host-policy/file_contexts
	echo "note: no refpolicy under $SHARED; using a small policy"
fi
echo "policy: $FC"

host_tree "$OUT/tree" 3000
"$PY" - "$OUT/tree" <<'EOF'
import os, socket, struct, sys
r = sys.argv[1]
def P(p): return os.path.join(r, p)
for d in ("dev", "tmp/a", "etc", "usr/bin", "var/log", "root", "odd"):
    os.makedirs(P(d), exist_ok=True)
os.mkfifo(P("dev/initctl"))
s = socket.socket(socket.AF_UNIX); s.bind(P("dev/log")); s.close()
os.mknod(P("dev/null"), 0o20666, os.makedev(1, 3))
os.mknod(P("dev/sda"), 0o60660, os.makedev(8, 0))
open(P("usr/bin/tool"), "w").write("x")
os.link(P("usr/bin/tool"), P("usr/bin/tool2"))
open(P("etc/shadow-"), "w").close()
open(P("etc/wrong"), "w").close()
os.setxattr(P("etc/wrong"), "security.selinux", b"system_u:object_r:wrong_t:s0\0")
os.setxattr(P("etc/wrong"), "user.keep", b"me")
open(P("tmp/a/kept"), "w").close()
os.setxattr(P("tmp/a/kept"), "security.selinux", b"system_u:object_r:kept_t:s0\0")
acl = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", t, p, i) for t, p, i in
                                      [(1, 6, 0xffffffff), (2, 4, 1000), (4, 4, 0xffffffff), (0x10, 4, 0xffffffff), (0x20, 4, 0xffffffff)])
open(P("var/log/acl"), "w").close()
os.setxattr(P("var/log/acl"), "system.posix_acl_access", acl)
os.symlink("../log/acl", P("var/log/link"))
for n in ("with space", "new\nline", "caf\u00e9"):
    open(P("odd/" + n), "w").close()
EOF
count=$(find tree | wc -l)
echo "tree: $count entries"

for isz in 256 128; do
	VNAME="setfiles, $isz-byte inodes"
	echo
	echo "== $VNAME"
	mkimg base.img tree 256M -t ext4 -I $isz -N $((count + 500)) || continue
	cp --sparse=always base.img a.img
	cp --sparse=always base.img b.img
	# A: fclabel
	run label "$FCLABEL" label a.img -S "$FC" -a /
	expect_rc "$VNAME: fclabel label" 0
	echo "     $(cat label.out)"
	fsck_clean a.img "$VNAME: A (fclabel)"
	verify --before base.img --after a.img --fc "$FC" --mp / --summary label.out --sample 50 >verify.log
	grep -v '^ok' verify.log
	if mount -o loop,ro a.img mnt 2>mount.err; then
		setfiles -n -v -F -r "$OUT/mnt" "$FC" "$OUT/mnt" >sf_n.out 2>sf_n.err
		rc=$?
		expect_eq "$VNAME: setfiles -n on A exits 0" "$rc" 0
		n=$(grep -c 'elabel' sf_n.out)
		expect_eq "$VNAME: setfiles -n -F wants to relabel nothing fclabel labeled" "$n" 0
		[ "$n" = 0 ] || head -n 10 sf_n.out
		[ -s sf_n.err ] && echo "     setfiles said: $(head -n 3 sf_n.err | tr '\n' '|')"
		# while A is mounted, fclabel must not write it
		s=$(sum a.img)
		run mounted "$FCLABEL" label a.img -S "$FC" -a /
		expect_rc "$VNAME: fclabel label refuses the mounted image file" 2
		expect_match "$VNAME: and says it is mounted" "$(cat mounted.err)" "*a.img*mounted*"
		umount mnt
		expect_eq "$VNAME: the refused image is unchanged" "$(sum a.img)" "$s"
	else
		bad "$VNAME: cannot mount A: $(head -n 1 mount.err)"
	fi
	# B: setfiles on the mounted copy
	if mount -o loop b.img mnt 2>mount.err; then
		setfiles -F -r "$OUT/mnt" "$FC" "$OUT/mnt" >sf.out 2>sf.err
		expect_eq "$VNAME: setfiles -F on B exits 0" "$?" 0
		[ -s sf.err ] && echo "     setfiles said: $(head -n 3 sf.err | tr '\n' '|')"
		umount mnt
	else
		bad "$VNAME: cannot mount B: $(head -n 1 mount.err)"
		continue
	fi
	fsck_clean b.img "$VNAME: B (setfiles)"
	# the labels, path by path: "MODE INO LINKS FILE_ACL LABEL PATH" -> "MODE LABEL PATH"
	"$PY" "$IMGTOOL" walk a.img --mp / | cut -f 1,5,6 >a.labels
	"$PY" "$IMGTOOL" walk b.img --mp / | cut -f 1,5,6 >b.labels
	n=$(wc -l <a.labels | tr -d ' ')
	[ "$n" -gt "$count" ] && ok "$VNAME: $n entries read back" || bad "$VNAME: only $n entries read back"
	if cmp -s a.labels b.labels; then
		ok "$VNAME: every label equals setfiles' (byte for byte, $n entries)"
	else
		bad "$VNAME: $(diff a.labels b.labels | grep -c '^<') entries differ between fclabel (<) and setfiles (>):"
		diff a.labels b.labels | head -n 20 | sed 's/^/       /'
	fi
	# labels are stored with their NUL, as setfiles stores them
	"$PY" - a.img b.img <<'EOF'
import sys
sys.path.insert(0, __import__("os").environ["OUT"])
from imgtool import Image, walk, label_of
a, b = Image(sys.argv[1]), Image(sys.argv[2])
bad = [p for p, i, m in walk(sys.argv[1], "") if label_of(a.xattrs_of(i)) != label_of(b.xattrs_of(i))]
print("raw label bytes differ on %d paths%s" % (len(bad), (": %r" % bad[:5]) if bad else ""))
sys.exit(1 if bad else 0)
EOF
	[ $? = 0 ] && ok "$VNAME: raw security.selinux values identical" || bad "$VNAME: raw security.selinux values differ"
done
echo "t_image_setfiles: $(($(date +%s) - start)) s"
finish
