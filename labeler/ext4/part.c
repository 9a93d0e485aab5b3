/*
 * Which partition of a disk image a run works on. mkosi, systemd-repart, osbuild, wic and debos
 * write whole disks (GPT or MBR, an ESP beside an ext4 root); the run takes one partition of
 * such a disk: the one --part names (its number, or its GPT name), or with no --part the only
 * one holding a file system fclabel reads (ext2/3/4, or EROFS: read only), and with -a / a
 * root of the Discoverable Partitions Specification before the others. Where that leaves more than one, nothing is guessed: the
 * run is refused, naming them, for --part to choose. A partition is taken only when it lies
 * inside the disk and holds the whole of its file system: a table that says otherwise is
 * damaged, or the disk was cut short, and a write there would land on another partition or
 * past the end.
 *
 * The table is read by libblkid (imgfmt/table.c); the reads and writes of the run then go
 * through a channel that holds them to the partition's range (imgfmt/part.c).
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The Discoverable Partitions Specification's root types (x86-64, arm64, and the others a disk
 * built elsewhere may carry: x86, arm, riscv64, loongarch64). */
static const char *const dps_roots[] = {
	"4f68bce3-e8cd-4db1-96e7-fbcaf984b709", /* x86-64 */
	"b921b045-1df0-41c3-af44-4c6f280d3fae", /* arm64 */
	"44479540-f297-41b2-9af7-d131d5f0458a", /* x86 */
	"69dad710-2ce4-4e3c-b16c-21a1d49abed3", /* arm */
	"72ec70a6-cf74-40e6-bd49-4bda08e8f224", /* riscv64 */
	"77055800-792c-4f94-b39a-98c91b762bb6", /* loongarch64 */
};

static bool dps_root(const struct imgfmt_part *p)
{
	for (size_t i = 0; i < sizeof(dps_roots) / sizeof(dps_roots[0]); i++)
		if (!strcmp(p->type, dps_roots[i]))
			return true;
	return false;
}

/* "2 (\"root\")" or "2": how a partition is named in a message. */
static void part_label(const struct imgfmt_part *p, char *buf, size_t n)
{
	if (*p->name)
		snprintf(buf, n, "%d (\"%s\")", p->number, p->name);
	else
		snprintf(buf, n, "%d", p->number);
}

/* The partitions that pass want(), as "1 (\"esp\"), 2 (\"root\")", into buf. */
static size_t list_parts(const struct imgfmt_table *t, bool (*want)(const struct imgfmt_part *),
			 char *buf, size_t n)
{
	size_t k = 0, at = 0;
	buf[0] = 0;
	for (size_t i = 0; i < t->n; i++) {
		char l[100];
		if (want && !want(&t->p[i]))
			continue;
		part_label(&t->p[i], l, sizeof(l));
		if (at < n)
			at += (size_t)snprintf(buf + at, n - at, "%s%s", k ? ", " : "", l);
		k++;
	}
	return k;
}

/* A file system fclabel reads: ext2/3/4, or EROFS (read-only: checked and listed). */
static bool holds_fs(const struct imgfmt_part *p)
{
	return p->ext || p->erofs;
}

static bool holds_fs_root(const struct imgfmt_part *p)
{
	return holds_fs(p) && dps_root(p);
}

/* The partition --part names: a number, else a GPT name (exactly). */
static const struct imgfmt_part *named(const struct imgfmt_table *t, const char *arg)
{
	bool digits = *arg != 0;
	for (const char *c = arg; *c; c++)
		digits = digits && isdigit((unsigned char)*c);
	for (size_t i = 0; digits && i < t->n; i++)
		if (t->p[i].number == atoi(arg))
			return &t->p[i];
	for (size_t i = 0; i < t->n; i++)
		if (*t->p[i].name && !strcmp(t->p[i].name, arg))
			return &t->p[i];
	return NULL;
}

static const struct imgfmt_part *gpt_named(const struct imgfmt_table *t, const char *gpt)
{
	for (size_t i = 0; i < t->n; i++)
		if (*t->p[i].name && !strcmp(t->p[i].name, gpt))
			return &t->p[i];
	return NULL;
}

int img_parts_named(const char *name, const char *const *gpt, size_t k, bool *has)
{
	struct imgfmt_table t;
	enum img_format fmt;
	char why[256];
	int found = 0;

	memset(has, 0, k * sizeof(*has));
	imgfmt_fault_hold(true);
	errcode_t drc = imgfmt_detect(name, &fmt, why, sizeof(why));
	imgfmt_fault_hold(false);
	if (drc)
		return 0;
	if (imgfmt_partitions(name, fmt, &t, why, sizeof(why)))
		return -1;
	for (size_t i = 0; i < k; i++)
		found += (has[i] = gpt_named(&t, gpt[i]) != NULL);
	imgfmt_table_free(&t);
	return found;
}

/* Whether p can be taken: inside the disk, holding the whole of its file system. */
static int usable(const char *cmd, const char *name, enum img_format fmt,
		  const struct imgfmt_table *t, const struct imgfmt_part *p)
{
	char l[100];
	part_label(p, l, sizeof(l));
	if (!p->inside) {
		fprintf(stderr, "fclabel %s: %s: partition %s (bytes %" PRIu64 " to %" PRIu64 ") "
			"extends past the end of the disk (%" PRIu64 " bytes): the table is damaged "
			"or the image was cut short; refusing it\n", cmd, qname(name), l, p->start,
			p->start + p->size, t->disk_size);
		return -1;
	}
	if (!holds_fs(p)) {
		fprintf(stderr, "fclabel %s: %s: partition %s holds no file system fclabel reads "
			"(ext2/3/4 or EROFS)\n", cmd, qname(name), l);
		return -1;
	}
	if (p->erofs && fmt == IMGFMT_SPARSE) {
		fprintf(stderr, "fclabel %s: %s: partition %s holds EROFS, in an Android sparse disk "
			"image: fclabel reads an EROFS partition of a raw disk image only (expand it "
			"first: simg2img)\n", cmd, qname(name), l);
		return -1;
	}
	if (p->fs_bytes > p->size) {
		fprintf(stderr, "fclabel %s: %s: partition %s holds %" PRIu64 " bytes but its file "
			"system says it has %" PRIu64 " (the table or the file system is damaged); "
			"refusing it\n", cmd, qname(name), l, p->size, p->fs_bytes);
		return -1;
	}
	return 0;
}

int img_choose_part(const char *cmd, const char *name, struct img_params *p)
{
	struct imgfmt_table t;
	enum img_format fmt;
	char why[256] = "", list[1024];
	const struct imgfmt_part *take = NULL;
	int r = -1;

	memset(&p->where, 0, sizeof(p->where));
	/* (an image that cannot be read is img_open's to say; this look is not the run's own
	 * reading of it, so FCLABEL_FAULT's Nth I/O stays the run's Nth) */
	imgfmt_fault_hold(true);
	errcode_t drc = imgfmt_detect(name, &fmt, why, sizeof(why));
	imgfmt_fault_hold(false);
	if (drc)
		return p->part ? (fprintf(stderr, "fclabel %s: %s: %s\n", cmd, qname(name), why), -1)
			       : 0;
	if (imgfmt_partitions(name, fmt, &t, why, sizeof(why))) {
		fprintf(stderr, "fclabel %s: %s: %s\n", cmd, qname(name), why);
		return -1;
	}
	if (!t.n && t.bad_gpt) {
		fprintf(stderr, "fclabel %s: %s: its protective MBR says it holds a GPT, but no GPT "
			"can be read there (damaged, or the disk was cut short: its header puts the "
			"end of the disk past the end of the file); refusing it\n", cmd, qname(name));
		goto out;
	}
	if (!t.n) {
		if (!p->part)
			return 0; /* a file system as before */
		fprintf(stderr, "fclabel %s: %s: --part %s: it has no partition table\n", cmd,
			qname(name), p->part);
		goto out;
	}
	if (p->part) {
		if (!(take = named(&t, p->part))) {
			list_parts(&t, NULL, list, sizeof(list));
			fprintf(stderr, "fclabel %s: %s: --part %s: no such partition (its %s table "
				"has %s)\n", cmd, qname(name), p->part, t.kind, list);
			goto out;
		}
	} else if (p->prefer && (take = gpt_named(&t, p->prefer))) {
		/* (--partition vendor=DISK: DISK's partition named vendor) */
	} else {
		/* with -a /, a Discoverable Partitions root among several is the one */
		bool (*want)(const struct imgfmt_part *) = holds_fs;
		size_t k = list_parts(&t, holds_fs, list, sizeof(list));
		if (k > 1 && p->root && list_parts(&t, holds_fs_root, why, sizeof(why)) == 1) {
			want = holds_fs_root;
			k = 1;
		}
		for (size_t i = 0; i < t.n && k == 1 && !take; i++)
			if (want(&t.p[i]))
				take = &t.p[i];
		if (!take && k > 1) {
			fprintf(stderr, "fclabel %s: %s: %zu partitions hold a file system fclabel reads: "
				"%s; give --part N|NAME\n", cmd, qname(name), k, list);
			goto out;
		}
		if (!take) {
			for (size_t i = 0; i < t.n && !take; i++)
				if (!t.p[i].inside)
					take = &t.p[i]; /* (said below: past the disk's end) */
			if (!take) {
				list_parts(&t, NULL, list, sizeof(list));
				fprintf(stderr, "fclabel %s: %s: no partition of its %s table holds a "
					"file system fclabel reads (ext2/3/4 or EROFS; it has %s)\n",
					cmd, qname(name), t.kind, list);
				goto out;
			}
		}
	}
	if (usable(cmd, name, fmt, &t, take))
		goto out;
	p->where.set = true;
	p->where.number = take->number;
	snprintf(p->where.name, sizeof(p->where.name), "%s", take->name);
	p->where.offset = take->start;
	p->where.size = take->size;
	p->where.erofs = take->erofs;
	r = 0;
out:
	imgfmt_table_free(&t);
	return r;
}
