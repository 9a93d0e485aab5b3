# fclabel label on Android partition images built from real phone listings, against golden
# labels. For each $SHARED/images/NAME (see $SHARED/README.md): tree.tsv lists the dump's files
# (type f/x/l/d, git mode, size, path, symlink target); NAME.labels.tsv gives the label libselinux
# 3.4 selabel_lookup gives each on-device path, with the file_contexts its header names,
# concatenated in that order.
# The listing's top directories are partitions; each is mapped to its on-device mount point by
# trying /PART and / (system-as-root): the mount point under which every entry of the partition
# is a labels.tsv path (pixel5: system -> /, vendor -> /vendor, product, system_ext; leagoo:
# system -> /system, vendor -> /vendor; partitions no labels.tsv path covers, such as boot or
# system_other, are left out). One ext4 image per partition, with empty files (modes from the
# listing) and symlinks with their targets, labeled with
#   fclabel label PART.img -a MOUNTPOINT -S FC1,FC2
# Every labels.tsv row must be covered by exactly one image entry, and every entry's label (read
# back independently) must equal labels.tsv and `fclabel lookup`; e2fsck clean; nothing else
# in the image changes.
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/imglib.sh"
[ -d "$SHARED/images" ] || skip "no Android image listings (\$SHARED/images is absent: $SHARED)"
need_image_tools
start=$(date +%s)
cd "$OUT" || exit 1

nimg=0
for d in "$SHARED"/images/*/; do
	d=${d%/}
	name=$(basename "$d")
	[ -f "$d/tree.tsv" ] || { echo "note: $name has no tree.tsv; skipped"; continue; }
	set -- "$d"/*.labels.tsv
	[ -f "$1" ] || { echo "note: $name has no labels.tsv; skipped"; continue; }
	labels=$1
	nimg=$((nimg + 1))
	echo
	echo "== $name"
	w=$OUT/$name
	mkdir -p "$w"
	# plan.py: partitions, mount points, trees, golden files; prints "PART<TAB>MOUNTPOINT" lines
	"$PY" - "$d" "$labels" "$w" >"$w/plan" 2>"$w/plan.err" <<'EOF'
import os, sys
d, labels, w = sys.argv[1], sys.argv[2], sys.argv[3]
def rows(path):
    with open(path, "rb") as f:
        for line in f:
            if line.startswith(b"#"):
                continue
            yield line.rstrip(b"\n").split(b"\t")
gold = {}
files = None
with open(labels, "rb") as f:
    for line in f:
        if line.startswith(b"#") and b"concatenated in this order" in line:
            files = [x.strip().decode() for x in line.split(b":", 1)[1].split(b",")]
for r in rows(labels):
    if len(r) == 3:
        gold[r[1]] = (r[0], r[2])
if not files:
    sys.exit("no 'concatenated in this order' header in %s" % labels)
with open(os.path.join(w, "fcarg"), "w") as f:
    f.write(",".join(os.path.join(d, x) for x in files))
tree = {}
for r in rows(os.path.join(d, "tree.tsv")):
    if len(r) >= 4:
        tree[r[3]] = r
parts = sorted({p.split(b"/")[0] for p in tree if b"/" in p})
covered = {}
for part in parts:
    ents = [p for p in tree if p.startswith(part + b"/")]
    best = None
    for mp in (b"/" + part, b"/"):
        dev = {p: (mp.rstrip(b"/") + p[len(part):]) for p in ents}
        if all(v in gold for v in dev.values()):
            best = (mp, dev)
            break
    if not best:
        n = max(sum(1 for p in ents if (m.rstrip(b"/") + p[len(part):]) in gold) for m in (b"/" + part, b"/"))
        sys.stderr.write("partition %s: %d entries, at most %d in labels.tsv: left out\n" % (part.decode(), len(ents), n))
        continue
    mp, dev = best
    root = os.path.join(w.encode(), b"parts", part)
    os.makedirs(root, exist_ok=True)
    g = open(os.path.join(w.encode(), b"golden." + part), "wb")
    rootdev = mp if mp != b"/" else b"/"
    if rootdev in gold:
        g.write(rootdev + b"\t" + gold[rootdev][1] + b"\n")
        covered.setdefault(rootdev, []).append(part)
    for p in sorted(ents):
        t, mode, _size, _path = tree[p][:4]
        target = tree[p][4] if len(tree[p]) > 4 else b""
        dst = os.path.join(root, p[len(part) + 1:])
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if t == b"d":
            os.makedirs(dst, exist_ok=True)
        elif t == b"l":
            os.symlink(target or b"target", dst)
        else:
            open(dst, "wb").close()
            os.chmod(dst, 0o755 if t == b"x" or mode == b"100755" else 0o644)
        gt, ctx = gold[dev[p]]
        want_t = {b"f": b"f", b"x": b"f", b"d": b"d", b"l": b"l"}[t]
        if gt != want_t:
            sys.stderr.write("note: %s is %s in tree.tsv, %s in labels.tsv\n" % (p.decode(errors="replace"), t.decode(), gt.decode()))
        g.write(dev[p] + b"\t" + ctx + b"\n")
        covered.setdefault(dev[p], []).append(part)
    g.close()
    print("%s\t%s\t%d" % (part.decode(), mp.decode(), len(ents) + 1))
missing = [p for p in gold if p not in covered]
twice = [p for p, v in covered.items() if len(v) > 1]
with open(os.path.join(w, "coverage"), "w") as f:
    f.write("%d %d %d\n" % (len(gold), len(missing), len(twice)))
    for p in missing[:10]:
        f.write("missing %s\n" % p.decode(errors="replace"))
    for p in twice[:10]:
        f.write("twice %s\n" % p.decode(errors="replace"))
EOF
	if [ $? -ne 0 ]; then
		bad "$name: cannot read the listing: $(tail -n 3 "$w/plan.err")"
		continue
	fi
	cat "$w/plan.err"
	fc=$(cat "$w/fcarg")
	echo "     file_contexts: $(echo "$fc" | tr ',' '\n' | xargs -n 1 basename | tr '\n' ' ')"
	set -- $(head -n 1 "$w/coverage")
	expect_eq "$name: every labels.tsv path is an entry of exactly one partition image" \
		"$2 missing, $3 twice" "0 missing, 0 twice"
	[ "$2" = 0 ] && [ "$3" = 0 ] || sed -n '2,$p' "$w/coverage"
	[ -s "$w/plan" ] || bad "$name: no partition maps onto labels.tsv"
	exec 3<"$w/plan"
	while IFS='	' read -r part mp n <&3; do
		VNAME="$name $part"
		img=$w/$part.img
		echo "  -- $part: $n entries, mounted at $mp"
		mkimg "$img" "$w/parts/$part" 256M -t ext4 -N $((n + 1000)) || continue
		fsck_clean "$img" "$VNAME: the image as made"
		cp --sparse=always "$img" "$w/before.img"
		run label "$FCLABEL" label "$img" -a "$mp" -S "$fc"
		expect_rc "$VNAME: label -a $mp" 0
		echo "     $(cat "$OUT/label.out")"
		fsck_clean "$img" "$VNAME: labeled"
		verify --before "$w/before.img" --after "$img" --fc "$fc" --mp "$mp" \
			--summary "$OUT/label.out" --stderr "$OUT/label.err" --golden "$w/golden.$part" --sample 100
		run chk "$FCLABEL" check "$img" -a "$mp" -S "$fc"
		expect_rc "$VNAME: check afterwards" 0
		rm -f "$w/before.img"
	done
	exec 3<&-
	[ "$fails" -eq 0 ] && rm -rf "$w/parts" "$w"/*.img
done
[ "$nimg" -gt 0 ] || skip "no image listing with tree.tsv and labels.tsv under $SHARED/images"
echo "t_image_android: $(($(date +%s) - start)) s"
finish
