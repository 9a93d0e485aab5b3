# fclabel label / check on ext2, ext3 and ext4 images made by mke2fs -d from a tree with every
# kind of file: directories, files with data, symlinks (fast and slow), a FIFO, a socket, device
# nodes, hard links (agreeing and conflicting), user.*, security.capability, trusted.* and POSIX
# ACL attributes, labels already there (right, wrong, without NUL, under <<none>>), odd names
# (spaces, newline, tab, UTF-8, Latin-1, 255 bytes), a path longer than 4096 bytes, labels too long
# for the inode body, a directory of 1,000 files (htree, after e2fsck -D) and, in two images, of
# 100,000 entries.
# Image kinds: 128/256/512-byte inodes, metadata_csum on and off, ext2, ext3, ext4, inline_data,
# 1 KiB blocks, bigalloc, mount points / and /system.
# For each: check before (exit 1, lists exactly what differs; --json), -n (writes nothing,
# counts), label (-v, --json), then every label is read back by tests/imglib.sh's own reader (not
# fclabel) and compared with `fclabel lookup` of its path and mode (first path of a hard link);
# the summary counts, stderr's conflicts and the JSON report must match; inodes (owner, mode,
# times, size, flags, data pointers), other attributes, data and directory blocks unchanged;
# attribute block refcounts right; with 128-byte inodes, same-label files share blocks and the
# image grows by a few blocks only; e2fsck -fn clean; a second run writes nothing; check exits 0.
# Then (per kind): relabel with a second policy (shared blocks lose references or are freed) and
# back; -e (label and check); --strict with conflicts (exit 2, nothing written) and without.
# Last: hard links whose paths want no label by two routes are no conflict.
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/imglib.sh"
need_image_tools
start=$(date +%s)
cd "$OUT" || exit 1

# ---- the tree -------------------------------------------------------------------------------
# build_tree DIR NFILES: everything but the 100,000 entries (added to two images with debugfs:
# mke2fs -d takes quadratic time on a big directory, about 13 minutes for 100,000 files)
build_tree() {
	"$PY" - "$1" "$2" <<'EOF'
import os, socket, sys, random
root, nbig = sys.argv[1], int(sys.argv[2])
rng = random.Random(1)
isroot = os.geteuid() == 0
notes = []
def P(p): return os.path.join(root.encode(), p.encode("utf-8", "surrogateescape") if isinstance(p, str) else p)
def mkdirs(p): os.makedirs(P(p), exist_ok=True)
def mk(p, data=b"", mode=0o644):
    fp = P(p)
    os.makedirs(os.path.dirname(fp), exist_ok=True)
    with open(fp, "wb") as f:
        f.write(data)
    os.chmod(fp, mode)
def xattr(p, name, val):
    try:
        os.setxattr(P(p), name, val, follow_symlinks=False)
    except OSError as e:
        notes.append("cannot set %s on %s: %s" % (name, p, e))
def acl(entries):
    # the VFS form of a POSIX ACL: version 2, then (tag, perm, id) entries
    import struct
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", t, p, i) for t, p, i in entries)
mk("bin/sh", b"#!/bin/sh\necho hello\n", 0o755)
mk("bin/ls", bytes(rng.getrandbits(8) for _ in range(5000)), 0o755)
os.symlink("sh", P("bin/link"))
mk("etc/passwd", b"root:x:0:0::/root:/bin/sh\n")
mk("etc/shadow", b"root:*:1::::::\n", 0o600)
mk("etc/my.conf", b"a = 1\n" * 100)
mk("etc/preset_right")
xattr("etc/preset_right", "security.selinux", b"system_u:object_r:etc_t:s0\0")
mk("etc/preset_right_nonul")
xattr("etc/preset_right_nonul", "security.selinux", b"system_u:object_r:etc_t:s0")
mk("etc/preset_wrong")
xattr("etc/preset_wrong", "security.selinux", b"system_u:object_r:wrong_t:s0\0")
mk("etc/preset_none")
xattr("etc/preset_none", "security.selinux", b"system_u:object_r:preset_t:s0\0")
mk("none/a", b"a")
mk("none/preset", b"p")
xattr("none/preset", "security.selinux", b"system_u:object_r:preset_t:s0\0")
mkdirs("data/dir1/sub")
mk("data/dir1/file", b"in dir1\n")
os.mkfifo(P("data/fifo"))
os.symlink("../etc/passwd", P("data/link"))
os.symlink("x" * 200, P("data/longlink"))
mk("data/file", bytes(rng.getrandbits(8) for _ in range(20000)))
mk("data/old", b"old times\n")
os.utime(P("data/old"), ns=(86400 * 10**9 + 123456789, 2 * 86400 * 10**9 + 987654321))
mk("caps/ping", b"\x7fELF ping", 0o4755)
xattr("caps/ping", "security.capability", bytes.fromhex("0100000200200000000000000000000000000000"))
xattr("caps/ping", "user.comment", b"ping with cap_net_raw")
mk("caps/bigx", b"big")
xattr("caps/bigx", "user.big", b"v" * 300)
mk("caps/trusted", b"t")
xattr("caps/trusted", "trusted.note", b"trusted value")
mk("acl/file", b"acl")
xattr("acl/file", "system.posix_acl_access", acl([(1, 6, 0xffffffff), (2, 7, 1234), (4, 4, 0xffffffff), (0x10, 7, 0xffffffff), (0x20, 4, 0xffffffff)]))
mkdirs("acl/dir")
xattr("acl/dir", "system.posix_acl_default", acl([(1, 7, 0xffffffff), (2, 5, 55), (4, 5, 0xffffffff), (0x10, 7, 0xffffffff), (0x20, 5, 0xffffffff)]))
mk("acl/dir/inherits", b"i")
for name in ["name with spaces", "new\nline", "tab\tname", "utf8-\u00e9t\u00e9", b"latin1-\xe9", "-dash",
             " leading space", "trailing space ", "x" * 255, "q'uote\"s", "back\\slash", "star*"]:
    mk(os.path.join(b"odd", name if isinstance(name, bytes) else name.encode()), b"odd")
# hard links: agreeing (links/), conflicting (hl/one/x = hl/two/y), and one name <<none>>
# (hl/one/z = hl/none/w: the labeled name decides, whatever the walk order, as in setfiles)
mk("links/a", b"a")
os.link(P("links/a"), P("links/b"))
mk("links/c", b"c")
os.link(P("links/c"), P("links/d"))
os.link(P("links/c"), P("links/e"))
mk("hl/one/x", b"x")
mkdirs("hl/two")
os.link(P("hl/one/x"), P("hl/two/y"))
mk("hl/one/z", b"z")
mkdirs("hl/none")
os.link(P("hl/one/z"), P("hl/none/w"))
for i in range(20):
    mk("long/f%02d" % i, b"l")
mkdirs("dev")
try:
    os.mknod(P("dev/null"), 0o20666, os.makedev(1, 3))
    os.mknod(P("dev/loop0"), 0o60660, os.makedev(7, 0))
except OSError as e:
    notes.append("no device nodes: %s" % e)
s = socket.socket(socket.AF_UNIX)
s.bind(P("dev/sock"))
s.close()
mk("inline/tiny", b"0123456789")
mk("inline/mid", b"m" * 100)
mk("inline/d/one", b"1")
os.symlink("tiny", P("inline/l"))
mkdirs("emptydir")
if isroot:
    os.chown(P("etc/shadow"), 1000, 1000)
    os.chown(P("data/dir1"), 1234, 5678)
    os.lchown(P("data/link"), 42, 43)
# deeper than PATH_MAX: 22 directories of 200 bytes
d = P("deep")
os.mkdir(d)
fd = os.open(d, os.O_RDONLY)
for i in range(22):
    os.mkdir("d" * 200, dir_fd=fd)
    nfd = os.open("d" * 200, os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = nfd
wfd = os.open("leaf", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
os.write(wfd, b"leaf\n")
os.close(wfd)
os.close(fd)
mkdirs("big")
for i in range(nbig):
    open(P("big/f%06d" % i), "wb").close()
for n in notes:
    print("note:", n)
EOF
}

# write_fc PREFIX 1|2: the policy, for an image mounted at PREFIX ("" for /); 2 changes some labels
write_fc() {
	P=$1
	R=${1:-/}
	if [ "$2" = 1 ]; then
		etc=etc_t big=big_file_t caps=caps_t inl=inline_t long=long_label_with_a_type_name_long_enough_not_to_fit_beside_other_attributes_t
	else
		etc=etc2_t big=big_file_t caps=caps2_t inl=inline2_t long=another_long_label_with_a_type_name_long_enough_not_to_fit_in_the_inode_t
	fi
	cat <<EOF
# fclabel t_image_label policy $2 for mount point $R
$P/.*				system_u:object_r:default_t:s0
$R				system_u:object_r:root_t:s0
$P/lost\+found(/.*)?		system_u:object_r:lost_found_t:s0
$P/bin(/.*)?			system_u:object_r:bin_t:s0
$P/bin/sh		--	system_u:object_r:shell_exec_t:s0
$P/bin/.*		-l	system_u:object_r:bin_link_t:s0
$P/etc(/.*)?			system_u:object_r:$etc:s0
$P/etc/shadow.*		--	system_u:object_r:shadow_t:s0
$P/etc/preset_none	--	<<none>>
$P/none(/.*)?			<<none>>
$P/data(/.*)?			system_u:object_r:data_t:s0
$P/data/dir1		-d	system_u:object_r:data_dir_t:s0
$P/data/fifo		-p	system_u:object_r:fifo_t:s0
$P/data/.*		-l	system_u:object_r:data_link_t:s0
$P/caps(/.*)?			system_u:object_r:$caps:s0
$P/acl(/.*)?			system_u:object_r:acl_t:s0
$P/odd(/.*)?			system_u:object_r:odd_t:s0
$P/odd/new.line		--	system_u:object_r:newline_t:s0
$P/odd/name.with.spaces	--	system_u:object_r:spaces_t:s0
$P/odd/x+		--	system_u:object_r:long_name_t:s0
$P/hl(/.*)?			system_u:object_r:hl_t:s0
$P/hl/one(/.*)?			system_u:object_r:hl_one_t:s0
$P/hl/two(/.*)?			system_u:object_r:hl_two_t:s0
$P/hl/none(/.*)?		<<none>>
$P/links(/.*)?			system_u:object_r:links_t:s0
$P/long(/.*)?			system_u:object_r:$long:s0:c0.c1023
$P/dev(/.*)?			system_u:object_r:device_t:s0
$P/dev/.*		-c	system_u:object_r:chr_t:s0
$P/dev/.*		-b	system_u:object_r:blk_t:s0
$P/dev/.*		-s	system_u:object_r:sock_t:s0
$P/inline(/.*)?			system_u:object_r:$inl:s0
$P/emptydir		-d	system_u:object_r:empty_t:s0
$P/deep(/.*)?			system_u:object_r:deep_t:s0
$P/deep/(d{200}/){21}d{200}/leaf	--	system_u:object_r:deep_leaf_t:s0
$P/big(/.*)?			system_u:object_r:big_t:s0
$P/big/.*		--	system_u:object_r:$big:s0
$P/big/.*		-p	system_u:object_r:big_fifo_t:s0
EOF
	if [ "$2" = 2 ]; then
		# half the FIFOs and 50 of the files move: their shared blocks lose references
		printf '%s\t-p\tsystem_u:object_r:big_fifo2_t:s0\n' "$P/big/p0[0-4].*"
		printf '%s\t--\tsystem_u:object_r:big_file2_t:s0\n' "$P/big/f0000[0-4].*"
	fi
}

step=$(date +%s)
mkdir tree
build_tree "$OUT/tree" 1000 >build.log 2>&1 || { cat build.log; bad "building the tree"; finish; }
cat build.log
[ -e "$OUT/tree/deep/$(printf 'd%.0s' $(seq 200))" ] || bad "the tree has no deep/ directory"
for mp in "" /system; do
	write_fc "$mp" 1 >"fc1${mp#/}"
	write_fc "$mp" 2 >"fc2${mp#/}"
done
echo "tree: $(find tree | wc -l) entries, $(($(date +%s) - step)) s"

# the 99,000 more entries of big/ (FIFOs: debugfs mknod does not look the name up first, so it
# is fast once e2fsck -D has made big/ an htree directory)
printf 'cd /big\n' >fifos.cmd
"$PY" -c 'import sys
for i in range(1000, 100000): sys.stdout.write("mknod p%06d p\n" % i)' >>fifos.cmd

# ---- one image kind -------------------------------------------------------------------------
# kind NAME MOUNTPOINT BIG(0|1) EXTRA-CHECKS MKE2FS-OPTIONS...
kind() {
	name=$1 mp=$2 withbig=$3 extra=$4
	VNAME=$name kfails=$fails
	shift 4
	kstart=$(date +%s)
	echo
	big100k=
	[ "$withbig" = 1 ] && big100k=", big/ of 100,000 entries"
	echo "== $name: mke2fs $*, mount point ${mp:-/}$big100k"
	fc1=$OUT/fc1${mp#/} fc2=$OUT/fc2${mp#/}
	img=$OUT/$name.img
	if [ "$withbig" = 1 ]; then size=192M inodes=120000; else size=32M inodes=4096; fi
	mkimg "$img" "$OUT/tree" $size -N $inodes "$@" || return
	# the image made ready (e2fsck -D, the FIFOs): the same for the sanitized run (lib.sh's cache)
	pk=$(memo_key prepared "$MKIMG_KEY" "$withbig" "$OUT/fifos.cmd")
	if ! memo_get "$pk" "$img"; then
		e2fsck -fyD "$img" >"$OUT/fsckD.log" 2>&1
		[ $? -le 1 ] || { bad "$name: e2fsck -fyD: $(tail -n 3 "$OUT/fsckD.log")"; return; }
		[ "$withbig" = 1 ] && debugfs -w -f "$OUT/fifos.cmd" "$img" >"$OUT/mknod.log" 2>&1
		memo_put "$pk" "$img"
	fi
	if [ "$withbig" = 1 ]; then
		n=$(debugfs -R 'ls /big' "$img" 2>/dev/null | tr -s ' \n' '\n\n' | grep -c '^[fp]0')
		expect_eq "$name: big/ has 100,000 entries" "$n" 100000
	fi
	fsck_clean "$img" "$name: the image as made"
	flags=$(debugfs -R 'stat /big' "$img" 2>/dev/null | sed -n 's/.*Flags: \(0x[0-9a-f]*\).*/\1/p')
	[ $((flags & 0x1000)) -ne 0 ] && ok "$name: big/ is an htree directory" || bad "$name: big/ is not indexed (flags $flags)"
	cp --sparse=always "$img" "$OUT/before.img"
	s0=$(sum "$img")
	set -- -S "$fc1"
	[ -n "$mp" ] && set -- "$@" -a "$mp"

	# check before labeling: lists every file to change, exit 1
	run check0 "$FCLABEL" check "$img" "$@"
	expect_rc "$name: fclabel check before labeling" 1
	verify --mode check --before "$OUT/before.img" --after "$img" --fc "$fc1" --mp "$mp" \
		--check-out "$OUT/check0.out" --summary "$OUT/check0.err" --sample 0
	case $extra in *checkjson*)
		run check0j "$FCLABEL" check "$img" "$@" --json "$OUT/check0.json"
		expect_rc "$name: check --json before labeling" 1
		expect_eq "$name: check --json prints no list" "$(cat "$OUT/check0j.out")" ""
		verify --mode check --before "$OUT/before.img" --after "$img" --fc "$fc1" --mp "$mp" \
			--json "$OUT/check0.json" --summary "$OUT/check0j.err" --sample 0
		;;
	esac
	expect_eq "$name: check wrote nothing" "$(sum "$img")" "$s0"

	# -n: counts, writes nothing
	run dry "$FCLABEL" label "$img" "$@" -n --json "$OUT/dry.json"
	expect_rc "$name: label -n" 0
	expect_eq "$name: label -n wrote nothing" "$(sum "$img")" "$s0"
	verify --mode dry --before "$OUT/before.img" --after "$img" --fc "$fc1" --mp "$mp" \
		--summary "$OUT/dry.out" --json "$OUT/dry.json" --sample 0

	# label
	run label1 "$FCLABEL" label "$img" "$@" -v --json "$OUT/label1.json"
	expect_rc "$name: label" 0
	echo "     $(grep 'fclabel label:' "$OUT/label1.err")"
	expect_eq "$name: -v prints one 'relabeled' line per change" "$(grep -c '^relabeled [/"]' "$OUT/label1.out")" \
		"$(sed -n 's/.*, changed \([0-9]*\),.*/\1/p' "$OUT/label1.err")"
	if "$PY" -c "import json, sys; json.load(open(sys.argv[1]))" "$OUT/label1.json" 2>"$OUT/json.err"; then
		ok "$name: --json is valid JSON"
	else
		bad "$name: --json is not valid JSON: $(head -n 2 "$OUT/json.err")"
	fi
	fsck_clean "$img" "$name: labeled"
	isize=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Inode size:[[:space:]]*//p')
	shared=
	[ "$isize" = 128 ] && shared="--shared fresh"
	verify --before "$OUT/before.img" --after "$img" --fc "$fc1" --mp "$mp" --image-name "$img" \
		--summary "$OUT/label1.out" --stderr "$OUT/label1.err" --json "$OUT/label1.json" $shared

	# a second run writes nothing; check finds nothing
	s1=$(sum "$img")
	run label2 "$FCLABEL" label "$img" "$@"
	expect_rc "$name: second label run" 0
	expect_match "$name: second run changes nothing" "$(cat "$OUT/label2.err")" "*, changed 0, *"
	expect_eq "$name: second run leaves the image byte for byte" "$(sum "$img")" "$s1"
	run check1 "$FCLABEL" check "$img" "$@"
	expect_rc "$name: fclabel check after labeling" 0
	expect_eq "$name: check after labeling lists nothing" "$(cat "$OUT/check1.out")" ""

	case $extra in *relabel*)
		# another policy: some labels change (shared blocks lose references or are freed)
		cp --sparse=always "$img" "$OUT/before2.img"
		shared2=
		[ "$isize" = 128 ] && shared2="--shared relabel"
		run relabel "$FCLABEL" label "$img" -S "$fc2" ${mp:+-a "$mp"}
		expect_rc "$name: relabel with policy 2" 0
		echo "     $(grep 'fclabel label:' "$OUT/relabel.out")"
		fsck_clean "$img" "$name: relabeled"
		verify --before "$OUT/before2.img" --after "$img" --fc "$fc2" --mp "$mp" \
			--summary "$OUT/relabel.out" --stderr "$OUT/relabel.err" $shared2
		rm -f "$OUT/before2.img"
		;;
	esac
	case $extra in *back*)
		# and back to policy 1: the blocks of policy 2 are released again
		cp --sparse=always "$img" "$OUT/before3.img"
		run relabel3 "$FCLABEL" label "$img" -S "$fc1" ${mp:+-a "$mp"}
		expect_rc "$name: back to policy 1" 0
		fsck_clean "$img" "$name: back to policy 1"
		verify --before "$OUT/before3.img" --after "$img" --fc "$fc1" --mp "$mp" --sample 50 \
			--summary "$OUT/relabel3.out" $shared2 >"$OUT/back.log"
		grep -v '^ok   [^:]*: \(other ext\|inodes:\|i_blocks\|excluded\|the tree\|debugfs\)' "$OUT/back.log"
		rm -f "$OUT/before3.img"
		;;
	esac

	case $extra in *exclude*)
		# -e: the excluded subtrees keep what they had
		cp --sparse=always "$OUT/before.img" "$img"
		run excl "$FCLABEL" label "$img" "$@" -e "$mp/etc" -e "$mp/big/" -e "$mp/hl/two"
		expect_rc "$name: label -e" 0
		fsck_clean "$img" "$name: labeled with -e"
		verify --before "$OUT/before.img" --after "$img" --fc "$fc1" --mp "$mp" \
			--exclude "$mp/etc" --exclude "$mp/big" --exclude "$mp/hl/two" \
			--summary "$OUT/excl.out" --stderr "$OUT/excl.err" --sample 50
		# check -e leaves the same subtrees out; without -e it lists exactly what -e kept
		run excl_chk "$FCLABEL" check "$img" "$@" -e "$mp/etc" -e "$mp/big" -e "$mp/hl/two"
		expect_rc "$name: check -e after label -e" 0
		run excl_chk2 "$FCLABEL" check "$img" "$@"
		expect_rc "$name: check without -e after label -e" 1
		expect_eq "$name: check lists only files of the excluded subtrees" \
			"$(grep -v "^$mp/\(etc\|big\|hl/two\)[/	]" "$OUT/excl_chk2.out" | grep -c .)" 0
		;;
	esac

	case $extra in *strict*)
		# --strict: the conflicts are an error found before anything is written
		cp --sparse=always "$OUT/before.img" "$img"
		run strict "$FCLABEL" label "$img" "$@" --strict --json "$OUT/strict.json"
		[ "$rc" -ne 0 ] && ok "$name: --strict with hard link conflicts fails (exit $rc)" ||
			bad "$name: --strict with hard link conflicts exits 0"
		expect_eq "$name: --strict exit status" "$rc" 2
		expect_eq "$name: --strict wrote nothing" "$(sum "$img")" "$s0"
		expect_eq "$name: --strict names the conflict (a <<none>> name is none)" "$(grep -c 'hard link conflict: ' "$OUT/strict.err")" 1
		if "$PY" -c "import json, sys; json.load(open(sys.argv[1]))" "$OUT/strict.json" 2>/dev/null; then ok "$name: --strict --json is valid JSON"
		else bad "$name: --strict --json is not valid JSON"; fi
		# without conflicting paths --strict labels
		run strict2 "$FCLABEL" label "$img" "$@" --strict -e "$mp/hl/two"
		expect_rc "$name: --strict without conflicts" 0
		verify --before "$OUT/before.img" --after "$img" --fc "$fc1" --mp "$mp" \
			--exclude "$mp/hl/two" \
			--summary "$OUT/strict2.out" --stderr "$OUT/strict2.err" --sample 50 >"$OUT/strict2.log"
		grep -v '^ok   \(other ext\|inodes:\|i_blocks\|no data\|excluded\|debugfs\|attribute\)' "$OUT/strict2.log"
		;;
	esac
	rm -f "$OUT/before.img"
	# keep the image only when something failed
	[ "$fails" -gt "$kfails" ] || rm -f "$img"
	echo "     ($name: $(($(date +%s) - kstart)) s)"
}

#    name           mount    big extra                 mke2fs options
kind ext4-256       ""       1   -                          -t ext4 -I 256
kind ext4-128       ""       1   relabel                    -t ext4 -I 128
kind ext4-512       /system  0   relabel,back,exclude,checkjson -t ext4 -I 512
kind ext4-256-nocsum /system 0   relabel,back,strict        -t ext4 -I 256 -O ^metadata_csum
kind ext4-128-nocsum ""      0   relabel,back,exclude,checkjson -t ext4 -I 128 -O ^metadata_csum
kind ext4-128-1k    ""       0   relabel,back,strict        -t ext4 -I 128 -b 1024
kind ext2-256       ""       0   relabel,back,exclude       -t ext2 -I 256
kind ext3-128       /system  0   relabel,back,strict        -t ext3 -I 128
kind ext4-inline    ""       0   relabel,back,exclude,strict -t ext4 -I 256 -O inline_data
kind ext4-bigalloc  ""       0   relabel,back              -t ext4 -I 128 -O bigalloc -C 16384

# ---- hard links whose paths all want no label ------------------------------------------------
# one path under a <<none>> spec, the other matched by nothing: both leave the file alone, so
# there is nothing to conflict about (and --strict must not refuse)
echo
echo "== hard links wanting no label by two routes"
VNAME=nolabel-links
mkdir -p tree3/none tree3/unmatched tree3/a
echo x >tree3/none/h
ln tree3/none/h tree3/unmatched/h
echo y >tree3/a/f
# (the root <<none>>: a mount point no spec matches at all is refused as a wrong -a)
printf '/\t<<none>>\n/a(/.*)?\tsystem_u:object_r:a_t:s0\n/none(/.*)?\t<<none>>\n' >fc3
if mkimg nl.img "$OUT/tree3" 8M -t ext4; then
	cp nl.img nl0.img
	run nl "$FCLABEL" label nl.img -S fc3
	expect_rc "no-label hard links: label" 0
	verify --before nl0.img --after nl.img --fc fc3 --summary nl.out --stderr nl.err --sample 10
	cp nl0.img nl.img
	run nls "$FCLABEL" label nl.img -S fc3 --strict
	expect_rc "no-label hard links: --strict labels" 0
	expect_eq "no-label hard links: --strict reports no conflict" "$(grep -c 'conflict:' nls.err)" 0
fi

echo
echo "t_image_label: $(($(date +%s) - start)) s"
finish
