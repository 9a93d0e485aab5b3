/*
 * fuzz_erofs: the EROFS reader (labeler/erofs/) on a fuzzed image, through the calls `fclabel
 * check` makes (erofs_open, erofs_label through the engine, erofs_close) and those that read
 * files (--android-root, packages.list): every entry's attributes, every regular file's data
 * (uncompressed and LZ4), every symlink's target, every directory listed and looked up by name.
 *
 * Input: an EROFS image, as mkfs.erofs writes it (the seeds: fixtures/fuzz/fuzz_erofs/, made
 * by tests/fuzz.sh seeds from a small tree: uncompressed, lz4, lz4hc with big pclusters, full
 * indexes, shared attributes, labeled with --file-contexts; ztailpacking; and the images of
 * fixtures/erofs/: LZMA, DEFLATE, Zstandard, fragments, dedupe, compressed directories).
 * Byte 0 (never read: EROFS begins at 1024) picks whether the superblock's checksum is made
 * right before the image is opened (even: it is, so that changes to the inodes that share its
 * block are read, not refused at the checksum).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/engine.h"
#include "erofs/internal.h"
#include "fuzzutil.c"

#define FZ_MAX_INPUT (1 << 20)

static const char policy[] =
	"/.*\t\t\tu:object_r:system_file:s0\n"
	"/(system/)?bin(/.*)?\t--\tu:object_r:exec_t:s0\n"
	"/(system/)?etc(/.*)?\tu:object_r:etc_t:s0\n"
	"/(system/)?[^/]*/fifo\t-p\tu:object_r:fifo_t:s0\n"
	"/(system/)?[^/]*/link\t-l\tu:object_r:link_t:s0\n";

static fc_set *set;
static uint8_t copy[FZ_MAX_INPUT];

/* The superblock's crc32c (COMPAT_SB_CHKSUM) over the rest of its block, made right. */
static void resum(uint8_t *b, size_t size)
{
	if (size < 1024 + 128 || !(b[1032] & 1) || b[1036] > 16 || b[1036] < 9)
		return;
	size_t len = (size_t)1 << b[1036];
	len = len > 1024 ? len - 1024 : len;
	if (len > size - 1024)
		return;
	uint32_t crc = 0xffffffffu;
	for (size_t i = 0; i < len; i++) {
		crc ^= i >= 4 && i < 8 ? 0 : b[1024 + i];
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78u & -(crc & 1));
	}
	for (int k = 0; k < 4; k++)
		b[1028 + k] = (uint8_t)(crc >> (8 * k));
}
static FILE *devnull;

struct ctx {
	struct erofs_img *img;
	const char *parent;
};

static bool count_entry(const char *name, size_t nlen, void *arg)
{
	(void)name;
	(void)nlen;
	return ++*(unsigned *)arg > 100000;
}

static int visit(const struct erofs_entry *e, void *arg)
{
	struct ctx *c = arg;
	char why[300], link[4096], *buf;
	size_t len;
	const unsigned char *v;
	unsigned n = 0;
	if (!e->ino)
		return 0;
	(void)erofs_xattr_get(c->img, e->ino, "security.selinux", &v, &len, why, sizeof(why));
	(void)erofs_xattr_get(c->img, e->ino, "user.x", &v, &len, why, sizeof(why));
	if (S_ISREG(e->ino->mode) && !erofs_read_nid(c->img, e->nid, &buf, &len, 4u << 20, why,
						     sizeof(why)))
		free(buf);
	if (S_ISLNK(e->ino->mode))
		(void)erofs_readlink(c->img, e->nid, link, sizeof(link), why, sizeof(why));
	if (S_ISDIR(e->ino->mode)) {
		uint64_t nid;
		unsigned mode;
		(void)erofs_list(c->img, e->nid, count_entry, &n, why, sizeof(why));
		(void)erofs_find(c->img, e->nid, "etc", 3, &nid, &mode, why, sizeof(why));
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[512], why[600], *buf;
	size_t len;
	struct erofs_img *img;

	if (!set) {
		struct fc_error err;
		fz_write(fz_path(path, sizeof(path), "policy"), policy, strlen(policy));
		const char *files[1] = { path };
		if (fc_load(&set, files, 1, FC_BASE_ONLY | FC_NO_DUPS, &err))
			abort();
		if (!(devnull = fopen("/dev/null", "w")))
			abort();
	}
	if (size > FZ_MAX_INPUT)
		return 0;
	memcpy(copy, data, size);
	if (size && !(data[0] & 1))
		resum(copy, size);
	fz_write(fz_path(path, sizeof(path), "image"), copy, size);
	if (erofs_probe(path) != 1 || erofs_open(path, &img, why, sizeof(why)))
		return 0;
	/* fclabel check, at the root and below a mount point */
	struct label_opts o = { .mode = LM_CHECK, .cmd = "check", .mountpoint = "",
				.list = devnull };
	struct label_stats st;
	(void)erofs_label(img, set, &o, &st);
	o.mountpoint = "/system";
	o.json = devnull;
	(void)erofs_label(img, set, &o, &st);
	(void)erofs_is_labeled(img);
	/* every file read, as --android-root reads the policy's */
	struct ctx c = { img, "" };
	(void)erofs_walk(img, "", visit, NULL, &c, NULL);
	if (!erofs_read_file(img, "/etc/passwd", &buf, &len, 1 << 20, why, sizeof(why)))
		free(buf);
	erofs_close(img);
	return 0;
}
