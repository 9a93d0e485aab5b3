#!/bin/sh
# The libFuzzer harnesses of tests/fuzz/ (see tests/fuzz/README).
#
#   sh tests/fuzz.sh [HARNESS...]   run each built harness (make fuzz-build) for FUZZ_SECONDS,
#                                   then print its execs, exec/s, cov, ft and corpus size
#   sh tests/fuzz.sh seeds          regenerate the seed corpora fixtures/fuzz/HARNESS/
#
# Environment: FUZZ_SECONDS (60), FUZZ_BUILD (tests/out/fuzz/build), FUZZ_OUT (tests/out/fuzz),
# FUZZ_ARGS (more libFuzzer options). Each harness runs in FUZZ_OUT/HARNESS: corpus/ (seeded
# from fixtures/fuzz/HARNESS, kept between runs), artifacts/ (crashes), log, dict.
# Exit status 1 when any harness left a crash, leak, timeout or out-of-memory artifact.
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
secs=${FUZZ_SECONDS:-60}
build=${FUZZ_BUILD:-tests/out/fuzz/build}
out=${FUZZ_OUT:-tests/out/fuzz}
all="fuzz_parse fuzz_lookup_diff fuzz_image fuzz_sparse fuzz_seapp fuzz_erofs"

# ---- dictionaries ----
dict() {
	case $1 in
	fuzz_parse|fuzz_lookup_diff) cat <<'EOF'
sep="\xff\xfe"
"(/.*)?"
".*"
"<<none>>"
" -- "
" -d "
" -l "
" -c "
" -b "
" -p "
" -s "
"u:object_r:"
"system_u:object_r:"
":s0"
"[^/]*"
"[^/]+"
"|"
"{2}"
"{1,3}"
"\\d"
"\\."
"\\\\"
"(?:"
"(?i)"
"\\Q"
"\\E"
"$"
"^"
"/usr/lib"
"/a/b|/c/d"
"\x0a"
"\x0d\x0a"
"\x09"
"#"
"\x01"
"//"
binmagic="\x8a\xff\x7c\xf9"
EOF
	;;
	fuzz_seapp) cat <<'EOF'
sep="\xff\xfe"
"user=_app"
"user=system"
"user=_isolated"
"user=_sdksandbox"
"seinfo=platform"
"name=com.x"
"name=com.*"
"domain=d"
"type=app_data_file"
"levelFrom=all"
"levelFrom=user"
"levelFrom=app"
"levelFromUid=true"
"level=s0:c1"
"isPrivApp=true"
"isEphemeralApp=true"
"isSystemServer=true"
"isV2App=true"
"minTargetSdkVersion=34"
"fromRunAs=true"
"isIsolatedComputeApp=true"
"isSdkSandboxNext=true"
"isSdkSandboxAudit=true"
"neverallow"
":privapp"
":targetSdkVersion="
":complete"
":partition=system"
"default"
" 10170 0 /data/user/0/x "
" none"
"/data/data/"
"/data/user/10/"
"/data/user_de/0/"
"/mnt/expand/0123abcd-0000-1111-2222-33334444aaaa/user/0/"
"/data/misc_ce/0/sdksandbox/"
"@10170 "
"u:object_r:t:s0"
EOF
	;;
	fuzz_sparse) cat <<'EOF'
magic="\x3a\xff\x26\xed"
raw="\xc1\xca"
fill="\xc2\xca"
dontcare="\xc3\xca"
crc="\xc4\xca"
v10="\x01\x00\x00\x00\x1c\x00\x0c\x00"
b1k="\x00\x04\x00\x00"
b4k="\x00\x10\x00\x00"
EOF
	;;
	fuzz_image) cat <<'EOF'
extmagic="\x53\xef"
eamagic="\x00\x00\x02\xea"
extent="\x0a\xf3"
selinux="selinux"
ctx="u:object_r:"
sparse="\x3a\xff\x26\xed"
EOF
	;;
	# EROFS: the magic, map header advise bits (big pclusters, inline, interlaced, fragment),
	# h_clusterbits' whole-file-in-packed-inode bit, CBLKCNT, the algorithms, a label
	fuzz_erofs) cat <<'EOF'
magic="\xe2\xe1\xf5\xe0"
adv_inline="\x08\x00"
adv_big="\x06\x00"
adv_frag="\x20\x00"
adv_interlaced="\x10\x00"
whole="\x80"
cblkcnt="\x08"
alg_lzma="\x01"
alg_deflate="\x02"
alg_zstd="\x03"
selinux="selinux"
ctx="u:object_r:"
EOF
	;;
	esac
}

# ---- seeds ----
seeds() {
	PATH=$PATH:/usr/sbin:/sbin
	for t in mke2fs img2simg python3; do
		command -v $t >/dev/null 2>&1 || { echo "fuzz.sh seeds: $t is not installed" >&2; exit 1; }
	done
	work=$(mktemp -d "${TMPDIR:-/tmp}/fclabel-seeds.XXXXXX") || exit 1
	trap 'rm -rf "$work"' EXIT
	# a tree: the demo image's, plus special files, links, a long symlink, small files for
	# inline_data, a directory of 16 names, extended attributes where the host allows
	t=$work/tree
	mkdir -p "$t"
	sh tests/mktree.sh fixtures/demo/tree "$t"
	mkdir -p "$t/data/cache" "$t/data/local/tmp" "$t/etc/many" "$t/dev"
	echo x >"$t/data/cache/f"
	ln "$t/bin/sh" "$t/bin/sh.link"
	ln "$t/bin/sh" "$t/data/local/tmp/sh.link"
	ln -s "$(printf '%0100d' 0)/long/target/that/does/not/fit/in/the/inode/$(printf '%0100d' 0)" "$t/etc/longlink"
	mkfifo "$t/etc/fifo" 2>/dev/null
	mknod "$t/etc/null" c 1 3 2>/dev/null
	mknod "$t/dev/block" b 7 0 2>/dev/null
	i=0
	while [ $i -lt 16 ]; do : >"$t/etc/many/entry-with-a-longish-name-$i"; i=$((i + 1)); done
	setfattr -n user.fuzz -v seed "$t/bin/init" 2>/dev/null
	setfattr -n security.selinux -v 'u:object_r:old_t:s0' "$t/bin/toybox" 2>/dev/null
	# the same bytes on every run: fixed UUID, hash seed and times
	find "$t" -exec touch -h -d @1700000000 {} +
	export E2FSPROGS_FAKE_TIME=1700000000 SOURCE_DATE_EPOCH=1700000000
	fc=fixtures/demo/file_contexts
	for h in $all; do rm -rf "fixtures/fuzz/$h"; done
	img() { # NAME SIZE MKE2FS-OPTIONS...
		n=$1 s=$2
		shift 2
		rm -f "$work/$n"
		mke2fs -q -F -U 6f636c61-6265-6c2d-6675-7a7a2d736565 \
			-E hash_seed=6f636c61-6265-6c2d-6675-7a7a2d736565 \
			"$@" -d "$t" "$work/$n" "$s" >"$work/mke2fs.log" 2>&1 ||
			{ echo "fuzz.sh seeds: mke2fs $*: $(tail -n 1 "$work/mke2fs.log")" >&2; return 1; }
	}
	ext4="-t ext4 -b 1024 -N 64 -m 0 -O ^has_journal,^resize_inode"
	img i256.img 128k $ext4 -I 256
	img i128.img 128k $ext4 -I 128
	img inline.img 128k $ext4 -I 256 -O inline_data
	img ext2.img 128k -t ext2 -b 1024 -N 64 -m 0 -O ^resize_inode -I 128
	img noext.img 128k -t ext4 -b 1024 -N 64 -m 0 -O ^has_journal,^resize_inode,^extent,^flex_bg,^64bit -I 256
	img b4k.img 256k -t ext4 -b 4096 -N 64 -m 0 -O ^has_journal,^resize_inode -I 256
	# what issue 24 found made worse: no ext_attr feature, quota (made consistent first)
	img noxattr.img 128k -t ext2 -b 1024 -N 64 -m 0 -O ^resize_inode,^ext_attr -I 128
	img quota.img 256k $ext4 -I 128 -O quota
	e2fsck -fy "$work/quota.img" >/dev/null 2>&1
	for n in i256 i128; do
		cp "$work/$n.img" "$work/$n-labeled.img"
		if [ -x ./fclabel ]; then
			./fclabel label "$work/$n-labeled.img" -S "$fc" -a /system >/dev/null 2>&1
		fi
	done
	img2simg "$work/i256.img" "$work/i256.simg" 4096 >/dev/null 2>&1
	img2simg "$work/b4k.img" "$work/b4k.simg" 4096 >/dev/null 2>&1
	img2simg "$work/i128-labeled.img" "$work/i128-labeled-1k.simg" 1024 >/dev/null 2>&1
	# compiled file_contexts (.bin), when selinux-utils is there
	if command -v sefcontext_compile >/dev/null 2>&1; then
		sefcontext_compile -o "$work/demo.bin" "$fc"
		printf '/a(/.*)?\tu:r:a_t:s0\n/a/b\t--\tu:r:b_t:s0\n/c/d.*\t<<none>>\n' >"$work/small"
		sefcontext_compile -o "$work/small.bin" "$work/small"
	fi
	WORK=$work python3 - <<'EOF'
import os, struct, zlib
work = os.environ["WORK"]
SEP = b"\xff\xfe"

def put(h, name, data):
    d = os.path.join("fixtures/fuzz", h)
    os.makedirs(d, exist_ok=True)
    assert len(data) < 64 * 1024, (h, name, len(data))
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)

def rd(p):
    with open(p, "rb") as f:
        return f.read()

# ---- images: trailing zeros cut (the harness extends to the superblock's size); byte 512
# (boot sector) chooses the options
def trim(b):
    return b.rstrip(b"\0")

def opt(b, o):
    b = bytearray(b)
    b[512] = o
    return bytes(b)

for n in ("i256", "i128", "inline", "ext2", "noext", "i256-labeled", "i128-labeled", "noxattr",
          "quota"):
    put("fuzz_image", n, trim(rd(f"{work}/{n}.img")))
lab = trim(rd(f"{work}/i256-labeled.img"))
for o, what in ((1, "system"), (2, "long"), (3, "excludes"), (4 | 64, "strict-json"),
                (8, "relabel"), (16 | 32, "dryrun-verbose")):
    put("fuzz_image", f"i256-labeled-{what}", opt(lab, o))
put("fuzz_image", "i128-long", opt(trim(rd(f"{work}/i128.img")), 2))
put("fuzz_image", "i128-labeled-1k.simg", rd(f"{work}/i128-labeled-1k.simg"))
b4k = rd(f"{work}/b4k.simg")
if len(b4k) < 64 * 1024:
    put("fuzz_image", "b4k.simg", b4k)

# ---- sparse images: img2simg outputs, and hand-built ones
def sparse(blksz, chunks, hdr=28, chdr=12, opt=0, total=None, crc=False):
    body, blocks, data = b"", 0, b""
    n = 0
    for c in chunks:
        kind = c[0]
        if kind == "raw":
            payload = c[1]
            nb = len(payload) // blksz
            body += struct.pack("<HHII", 0xCAC1, 0, nb, chdr + len(payload)) + b"\0" * (chdr - 12) + payload
            data += payload
        elif kind == "fill":
            nb = c[2]
            body += struct.pack("<HHII", 0xCAC2, 0, nb, chdr + 4) + b"\0" * (chdr - 12) + struct.pack("<I", c[1])
            data += struct.pack("<I", c[1]) * (nb * blksz // 4)
        elif kind == "skip":
            nb = c[1]
            body += struct.pack("<HHII", 0xCAC3, 0, nb, chdr) + b"\0" * (chdr - 12)
            data += b"\0" * (nb * blksz)
        elif kind == "crc":
            nb = 0
            body += struct.pack("<HHII", 0xCAC4, 0, 0, chdr + 4) + b"\0" * (chdr - 12) + struct.pack("<I", zlib.crc32(data))
        blocks += nb
        n += 1
    head = struct.pack("<IHHHHIIII", 0xED26FF3A, 1, 0, hdr, chdr, blksz,
                       blocks if total is None else total, n, 0)
    head = bytearray(head + b"\0" * (hdr - 28))
    head[24] = opt
    return bytes(head) + body

blk = lambda b, k=1: bytes(range(b)) * k if b <= 256 else (bytes(range(256)) * (b // 256)) * k
put("fuzz_sparse", "img2simg-4k", rd(f"{work}/i256.simg"))
put("fuzz_sparse", "img2simg-1k", rd(f"{work}/i128-labeled-1k.simg"))
mixed = [("raw", blk(1024, 2)), ("fill", 0xdeadbeef, 3), ("skip", 4), ("raw", blk(1024)), ("skip", 2)]
put("fuzz_sparse", "mixed", sparse(1024, mixed))
put("fuzz_sparse", "mixed-out", sparse(1024, mixed, opt=1))
put("fuzz_sparse", "mixed-discard", sparse(1024, mixed, opt=2))
put("fuzz_sparse", "mixed-crc", sparse(1024, mixed + [("crc",)], opt=1))
put("fuzz_sparse", "mixed-midcrc", sparse(1024, mixed[:2] + [("crc",)] + mixed[2:] + [("crc",)]))
put("fuzz_sparse", "bigheaders", sparse(1024, mixed, hdr=40, chdr=16, opt=5))
put("fuzz_sparse", "fill-4k", sparse(4096, [("fill", 0x01020304, 8), ("raw", blk(4096)), ("fill", 0, 4)]))
put("fuzz_sparse", "huge-dontcare", sparse(4096, [("raw", blk(4096)), ("skip", 60000), ("fill", 7, 3)], opt=1))
put("fuzz_sparse", "empty", sparse(4096, []))
put("fuzz_sparse", "zero-length-chunk", sparse(1024, [("skip", 0), ("raw", blk(1024)), ("fill", 5, 0)]))
put("fuzz_sparse", "bad-total", sparse(1024, mixed, total=3))
put("fuzz_sparse", "truncated", sparse(1024, mixed)[:-100])
put("fuzz_sparse", "b4k-fs.simg", b4k) if len(b4k) < 64 * 1024 else None
def raw(data, opt):  # the same harness on a raw image: byte 24 (boot block) has bit 8
    data = bytearray(data)
    data[24] = opt | 8
    return bytes(data)
put("fuzz_sparse", "raw", raw(blk(1024, 40), 0))
put("fuzz_sparse", "raw-tail-out", raw(blk(1024, 24) + b"tail", 1))
put("fuzz_sparse", "raw-discard", raw(blk(1024, 12) + bytes(700), 2))
put("fuzz_sparse", "raw-4k", raw(blk(4096, 9), 0))

# ---- file_contexts: flags byte, then sections separated by ff fe
demo = rd("fixtures/demo/file_contexts")
paths = b"\n".join(l.split(b" ", 1)[1] for l in rd("fixtures/demo/paths").splitlines())
quirks = b"""/.*\t\tu:r:default_t:s0
/x/c/?\t\tu:r:xc_t:s0
/e\\-dge/h\tu:r:edge_t:s0
/x/f\\d\t\tu:r:fdigit_t:s0
/x/f.*\t\tu:r:fany_t:s0
/a/b|/c/d\tu:r:alt_t:s0
/usr/lib(/.*)?\tu:r:lib_t:s0
/usr\t\tu:r:usr_t:s0
/p/lain\t\tu:r:plain_t:s0
/p/lai.\t\tu:r:regex_t:s0
/t/win\t--\tu:r:typed_t:s0
/t/win\t\tu:r:untyped_t:s0
/n/one(/.*)?\tu:r:n_t:s0
/n/one/x\t<<none>>
/(vendor|system/vendor)/bin(/.*)?\tu:r:vendor_exec_t:s0
/nl\t\tu:r:nl_t:s0
/a/b{2}\t\tu:r:b2_t:s0
/a/x{1,9}\tu:r:x_t:s0
/q/\\d+\\.\\d\tu:r:num_t:s0
/home/[^/]+/\\.ssh(/.*)?\tu:r:ssh_t:s0
/var/run/.*\\.pid\t--\tu:r:pid_t:s0
/dev/[sh]d[a-z]*\t-b\tu:r:disk_t:s0
/dev/tty[0-9]*\t-c\tu:r:tty_t:s0
/tmp/\\.X11-unix/.*\t-s\tu:r:xsock_t:s0
/run/.*\\.fifo\t-p\tu:r:fifo_t:s0
/bin/.*\t-l\tu:r:bin_link_t:s0
/srv(/.*)?\t-d\tu:r:srv_t:s0
"""
qpaths = b"""/x/c
/x/c/
/e-dge/h
/x/f1
/c/d
/a/b/anything
/usr
/usr/lib
/p/lain
/t/win
/n/one/x
/n/one/y
/vendor/bin/sh
/system/vendor/bin/sh
//usr///lib//x
/
/nl
/q/12.3
/home/u/.ssh/id
/dev/sda
/dev/tty1
/srv/www
"""
modes_q = b"\n".join(bytes([m]) + p for m, p in zip(b"0fdlcbpsx0fdlcbpsx0fdlc" * 2, qpaths.splitlines()))
subs = b"/myhome /home\n/var/run /run\n# comment\n/sys/x /\n"
subs_dist = b"/usr/local /usr\n/srv /var/www\n"
homedirs = b"/home/[^/]+\tu:r:home_t:s0\n/home/[^/]+/.+\tu:r:user_home_t:s0\n"
local = b"/opt(/.*)?\tu:r:opt_t:s0\n/usr/lib/x\t<<none>>\n"
newer = quirks.replace(b"u:r:lib_t", b"u:r:lib2_t").replace(b"/p/lain\t", b"/p/lain2\t") + b"/new(/.*)?\tu:r:new_t:s0\n"

P = "fuzz_parse"
put(P, "demo", b"\0" + demo + SEP * 6 + paths)
put(P, "quirks", b"\0" + quirks + SEP * 6 + qpaths)
put(P, "extras", b"\0" + quirks + SEP + homedirs + SEP + local + SEP + subs + SEP + subs_dist + SEP + newer + SEP + qpaths)
put(P, "extras-explicit-subs", b"\x08" + quirks + SEP + homedirs + SEP + local + SEP + subs + SEP + subs_dist + SEP + newer + SEP + qpaths)
put(P, "diff", b"\x01" + quirks + SEP * 5 + newer + SEP + qpaths)
put(P, "diff-subs", b"\x21" + quirks + SEP * 3 + subs + SEP + subs_dist + SEP + newer + SEP + qpaths)
put(P, "concat", b"\x10" + quirks + SEP * 5 + newer + SEP + qpaths)
put(P, "nodups", b"\x02" + quirks + b"/t/win\t-d\tu:r:x_t:s0\n")
put(P, "crlf", b"\0/a\tu:r:a_t:s0\r\n\t/b  --\t u:r:b_t:s0\r\n# comment\n/c -- u:r:c_t:s0 extra fields\n/e(x)\\ u:r:e_t:s0\n/d -d u:r:d_t:s0")
for name, text in (("bad-regex", b"/a u:r:a_t:s0\n/b(c u:r:b_t:s0\n"), ("bad-type", b"/a -x u:r:a_t:s0\n"),
                   ("missing-field", b"# c\n\n   /lonely\n"), ("nul", b"/a u:r:a_t:s0\n/b\0 u:r:b_t:s0\n"),
                   ("nonascii", b"/caf\xc3\xa9 u:r:a_t:s0\n"), ("class", b"/b[x u:r:b_t:s0\n"), ("empty", b"")):
    put(P, name, b"\0" + text)

for b in ("demo", "small"):
    if os.path.exists(f"{work}/{b}.bin") and SEP not in rd(f"{work}/{b}.bin"):
        put(P, f"{b}.bin", b"\0" + rd(f"{work}/{b}.bin") + SEP * 6 + paths)
        put(P, f"{b}.bin-diff", b"\x01" + rd(f"{work}/{b}.bin") + SEP * 5 + demo + SEP + paths)

L = "fuzz_lookup_diff"
put(L, "demo", b"\0" + demo + SEP + b"\n".join(l[:1] + l[2:] for l in rd("fixtures/demo/paths").splitlines()))
put(L, "quirks", b"\0" + quirks + SEP + modes_q)
put(L, "subs", b"\0" + quirks + SEP + modes_q + SEP + subs + SEP + subs_dist)
put(L, "extras", b"\0" + quirks + SEP + modes_q + SEP + subs + SEP + subs_dist + SEP + homedirs + SEP + local)
put(L, "baseonly", b"\x01" + quirks + SEP + modes_q + SEP + subs + SEP + subs_dist + SEP + homedirs + SEP + local)
put(L, "newline", b"\0/nl\tu:r:nl_t:s0\n/nl.\tu:r:dot_t:s0\n/e(x)\\\tu:r:e_t:s0\n" + SEP + b"0/nl\x01\nf/nl\n0/ex$\n0/ex\x01")
put(L, "crlf", b"\0/a\tu:r:a_t:s0\r\n\t/b  --\t u:r:b_t:s0\r\n# comment\n/c -- u:r:c_t:s0 extra\n/d -d u:r:d_t:s0" + SEP + b"f/a\nf/b\nd/b\n0/c\nd/d")
EOF
	# fuzz_erofs: EROFS images of the same tree (mkfs.erofs, erofs-utils; -T: fixed times, -U:
	# a fixed UUID), labeled with the demo's file_contexts
	if command -v mkfs.erofs >/dev/null 2>&1; then
		mkdir -p fixtures/fuzz/fuzz_erofs
		# and text that compresses, over several blocks and pclusters
		cp -a "$t" "$work/etree"
		python3 -c 'import sys; open(sys.argv[1], "w").write("".join("line %d of the seed\n" % (i % 97) for i in range(1200)))' "$work/etree/etc/text"
		touch -d @1700000000 "$work/etree/etc/text" "$work/etree/etc"
		for e in "plain:" "lz4:-zlz4" "lz4hc-big:-zlz4hc -C16384" "full:-zlz4 -E legacy-compress" \
			"shared:-x1" "ztail:-zlz4hc -C16384 -Eztailpacking"; do
			# shellcheck disable=SC2086
			mkfs.erofs ${e#*:} -T 1700000000 -U 6f636c61-6265-6c2d-6675-7a7a2d736565 \
				--file-contexts="$fc" "fixtures/fuzz/fuzz_erofs/${e%%:*}.img" "$work/etree" \
				>"$work/mkfs.erofs.log" 2>&1 ||
				echo "fuzz.sh seeds: mkfs.erofs ${e#*:}: $(tail -n 1 "$work/mkfs.erofs.log")" >&2
		done
	else
		echo "fuzz.sh seeds: mkfs.erofs is not installed (erofs-utils): fuzz_erofs has no seeds" >&2
	fi
	# and what Debian's mkfs.erofs cannot make: a few of fixtures/erofs/ (erofs-utils 1.9.3:
	# LZMA, DEFLATE, Zstandard, fragments, dedupe, interlaced, compressed directories)
	mkdir -p fixtures/fuzz/fuzz_erofs
	for i in lzma-frag-dedupe zstd-allfrag deflate-ztail lz4-interlaced lz4-zdir lz4hc-full-dedupe; do
		cp "fixtures/erofs/$i.img" "fixtures/fuzz/fuzz_erofs/fx-$i.img"
	done
	du -sh fixtures/fuzz/* | sed 's/^/  /'
	echo "seeds written to fixtures/fuzz/ ($(du -sk fixtures/fuzz | cut -f1) KiB)"
}

# ---- running ----
run_one() {
	h=$1
	bin=$build/$h
	[ -x "$bin" ] || { echo "fuzz.sh: $bin is not built (make fuzz-build)" >&2; return 2; }
	d=$out/$h
	mkdir -p "$d/corpus" "$d/artifacts"
	[ -d "fixtures/fuzz/$h" ] && cp -n "fixtures/fuzz/$h"/* "$d/corpus/" 2>/dev/null
	dict "$h" >"$d/dict"
	case $h in
	fuzz_parse) opts="-max_len=4096 -timeout=30" ;;
	# libselinux 3.4 leaks on most rejected inputs: libFuzzer's leak check would then stop the
	# world after nearly every run (fcontexts' own leaks are fuzz_parse's to find)
	fuzz_lookup_diff) opts="-max_len=2048 -timeout=30 -detect_leaks=0" ;;
	fuzz_image) opts="-max_len=65536 -timeout=60 -close_fd_mask=3 -rss_limit_mb=4096" ;;
	fuzz_sparse) opts="-max_len=65536 -timeout=60 -rss_limit_mb=4096" ;;
	*) opts="" ;;
	esac
	# libselinux 3.4 leaks on some lines it reads (read_spec_entry's strndup): not ours
	printf 'leak:libselinux.so\n' >"$out/lsan.supp"
	before=$(ls "$d/artifacts" | grep -c -E "^(crash|leak|timeout|oom)-")
	# shellcheck disable=SC2086
	LSAN_OPTIONS="suppressions=$out/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
		"$bin" -max_total_time="$secs" -print_final_stats=1 -artifact_prefix="$d/artifacts/" \
		-dict="$d/dict" $opts ${FUZZ_ARGS:-} "$d/corpus" >"$d/log" 2>&1
	rc=$?
	after=$(ls "$d/artifacts" | grep -c -E "^(crash|leak|timeout|oom)-")
	execs=$(grep -a '^stat::number_of_executed_units:' "$d/log" | tail -n 1 | tr -cd 0-9)
	eps=$(grep -a '^stat::average_exec_per_sec:' "$d/log" | tail -n 1 | tr -cd 0-9)
	last=$(grep -a -E '^#[0-9]+.* cov: ' "$d/log" | tail -n 1 | tr -cd ' -~')
	cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	corp=$(echo "$last" | sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p')
	files=$(ls "$d/corpus" | wc -l)
	printf '%-17s %5ss  execs %-9s exec/s %-6s cov %-6s ft %-6s corpus %s (%s files on disk)' \
		"$h" "$secs" "${execs:-?}" "${eps:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$files"
	if [ "$after" -gt "$before" ] || { [ "$rc" -ne 0 ] && [ "$rc" -ne 72 ]; }; then
		echo "  FAILED (exit $rc): $(ls -t "$d/artifacts" | grep -E "^(crash|leak|timeout|oom)-" | head -n 1); see $d/log"
		grep -a -m 3 -E 'ERROR: |SUMMARY|fuzz_[a-z_]*: ' "$d/log" | sed 's/^/    /'
		return 1
	fi
	echo
}

case ${1:-} in
seeds) seeds; exit 0 ;;
-h|--help) sed -n '2,12p' "$0"; exit 0 ;;
esac
status=0
for h in ${*:-$all}; do
	run_one "$h" || status=1
done
exit $status
