#!/bin/sh
# Which name of a hard-linked file decides its label, when its names want different labels (a
# conflict), is the first in walk order (depth first, each directory in getdents order), as in
# setfiles, and does not depend on which thread meets which name first. Four copies of a tree,
# each with its own walk order (a tmpfs made in one creation order and in the reverse one; two
# ext4 file systems with different directory hash seeds), hold four conflicting pairs: names in
# sibling directories, in one directory of several of the threaded walk's parts (1,000 entries),
# deep against shallow, a directory against its subdirectory; and 2,000 other files, so that
# both threads work at once. On each copy, -T 2 four times and -T 1 once, the pairs' labels spoilt
# before each run:
# - each conflict message names first the pair's name that comes first in walk order (read here
#   with os.listdir), and the file keeps that name's label;
# - every run leaves the same labels as -T 1.
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/imglib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (mounts, security.* attributes)"
[ -x "$FCLABEL" ] || skip "fclabel is not built ($FCLABEL): run make"
command -v getfattr >/dev/null 2>&1 || skip "getfattr is not installed (Debian package attr)"
command -v mke2fs >/dev/null 2>&1 || skip "mke2fs is not installed (Debian package e2fsprogs)"
command -v "$PY" >/dev/null 2>&1 || skip "python3 is not installed"
[ -r /proc/self/fd ] || skip "/proc is not mounted"
cd "$OUT" || exit 1
track_mounts
need_tmpfs_labels

FC=$OUT/fc
zz_policy "$FC"
cat >>"$FC" <<'EOF'
/zz/a(/.*)?	system_u:object_r:zz_a_t:s0
/zz/b(/.*)?	system_u:object_r:zz_b_t:s0
/zz/c(/.*)?	system_u:object_r:zz_c_t:s0
/zz/d/sub(/.*)?	system_u:object_r:zz_dsub_t:s0
/zz/big/lo.*	system_u:object_r:zz_lo_t:s0
/zz/big/hi.*	system_u:object_r:zz_hi_t:s0
EOF
# the pairs: the two names of each
pairs="zz/a/p1 zz/b/p1
zz/big/lo0007 zz/big/hi0700
zz/a/deep/er/p3 zz/c/p3
zz/d/p4 zz/d/sub/p4"

# tree DIR fwd|rev: the tree, each directory's entries made in one order or the reverse
tree() {
	"$PY" - "$1" "$2" "$pairs" <<'EOF'
import os, sys
root, order, pairs = sys.argv[1], sys.argv[2], [l.split() for l in sys.argv[3].splitlines()]
names = ["zz/w/d%02d/f%02d" % (i, j) for i in range(50) for j in range(40)]
names += ["zz/big/f%04d" % i for i in range(1000) if i not in (7, 700)]
firsts = [p[0] for p in pairs]
seconds = [p[1] for p in pairs]
# the pairs' names among the others, in the order given (the reverse order reverses all)
todo = firsts + names[:1000] + seconds + names[1000:]
if order == "rev":
    todo.reverse()
    pairs = [p[::-1] for p in pairs]
for n in todo:
    p = os.path.join(root, n)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    other = [q for q in pairs if q[1] == n]
    if other:
        os.link(os.path.join(root, other[0][0]), p)
    else:
        open(p, "w").close()
EOF
}

# first DIR: for each pair, its name met first in walk order (depth first, getdents order)
first() {
	"$PY" - "$1" "$pairs" <<'EOF'
import os, sys
root, pairs = sys.argv[1], [l.split() for l in sys.argv[2].splitlines()]
order = {}
def walk(d, rel):
    for n in os.listdir(d):
        p, r = os.path.join(d, n), (rel + "/" + n).lstrip("/")
        order.setdefault(r, len(order))
        if os.path.isdir(p) and not os.path.islink(p):
            walk(p, r)
walk(root, "")
for a, b in pairs:
    print("/" + (a if order[a] < order[b] else b))
EOF
}

# spoil DIR: a wrong label on every pair's file
spoil() {
	echo "$pairs" | while read -r a b; do
		setfattr -n security.selinux -v system_u:object_r:wrong_t:s0 "$1/$a"
	done
}

# labels DIR: each pair's first name and its file's label
labels() {
	echo "$pairs" | while read -r a b; do
		printf '%s %s\n' "$a" "$(getfattr -h --only-values -n security.selinux "$1/$a" 2>/dev/null | tr -d '\0')"
	done
}

# kept ERR: from the conflict messages, the name each keeps and that name's label
kept() {
	sed -n 's/.*hard link conflict: inode [0-9]* is \([^ ]*\) (\([^,]*\),.*keeping the first$/\1 \2/p' "$1" | sort
}

# a tmpfs, and two ext4 file systems whose directories hash names with different seeds
mkdir -p tmp e1 e2
mount -t tmpfs tmpfs tmp && echo "$OUT/tmp" >>"$mounts" || bad "cannot mount a tmpfs"
for e in e1 e2; do
	seed=$([ $e = e1 ] && echo 6b2f5c1a-0d1e-4c55-9a53-1f9e0b9a1e01 || echo deadbeef-0000-4000-8000-000000000001)
	rm -f $e.img
	mke2fs -q -F -t ext4 -I 256 -N 20000 -E hash_seed=$seed $e.img 64M >/dev/null 2>&1 &&
		mount -o loop $e.img $e && echo "$OUT/$e" >>"$mounts" || bad "cannot make and mount an ext4 at $e"
done
tree tmp/fwd fwd
tree tmp/rev rev
tree e1/t fwd
tree e2/t fwd

orders=""
for c in tmp/fwd tmp/rev e1/t e2/t; do
	want=$(first "$c" | sort)
	orders="$orders|$(echo $want)"
	echo "$c: met first in walk order: $(echo $want)"
	i=0
	for T in 2 2 2 2 1; do
		i=$((i + 1))
		spoil "$c"
		"$FCLABEL" label "$c" -a / -S "$FC" -T $T >run.out 2>run.err
		rc=$?
		[ "$rc" = 0 ] || bad "$c: run $i (-T $T): exit $rc, want 0 (a conflict is no error, as in setfiles): $(tail -n 1 run.err)"
		got=$(kept run.err)
		expect_eq "$c: run $i (-T $T): each conflict keeps the name met first in walk order" \
			"$(echo "$got" | cut -d ' ' -f 1 | tr '\n' ' ')" "$(echo $want) "
		# the file keeps the label of the name kept
		echo "$got" | while read -r name ctx; do
			[ -n "$name" ] || continue
			on=$(getfattr -h --only-values -n security.selinux "$c$name" | tr -d '\0')
			[ "$on" = "$ctx" ] || echo "$name has $on, the message keeps $ctx"
		done >wrong.txt
		[ -s wrong.txt ] && bad "$c: run $i (-T $T): a file does not have the label of the name kept: $(cat wrong.txt | tr '\n' '|')"
		labels "$c" >"run.$i"
	done
	for j in 1 2 3 4; do
		cmp -s run.$j run.5 || bad "$c: -T 2 run $j left other labels than -T 1: $(diff run.$j run.5 | tr '\n' '|')"
	done
	ok "$c: four runs at -T 2 left the labels of the run at -T 1"
done
# the copies do not all meet the same names first: the order decides, not a fixed choice
[ "$(echo "$orders" | tr '|' '\n' | sed 1d | sort -u | wc -l)" -gt 1 ] &&
	ok "the copies' walk orders meet different names first" ||
	bad "every copy meets the same names first: the test cannot tell the walk order from another rule"
finish
