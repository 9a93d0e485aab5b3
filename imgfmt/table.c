/*
 * The partition table of a disk image (GPT or MBR), read by libblkid's partition prober rather
 * than by hand: it knows the tables' corners (protective MBRs, the GPT header's CRCs, extended
 * and logical MBR partitions) as util-linux keeps them. For each partition it gives where it
 * lies, its number, GPT name and type, and whether an ext2/3/4 superblock is there and how big
 * that file system says it is, so that the labeler can choose one and check its bounds.
 *
 * An Android sparse image is expanded for the prober only where a table lives: the first MiBs
 * and the last (the GPT's backup), into a memory file as long as the disk, the rest a hole.
 */
#include <blkid/blkid.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define HEAD_BYTES (4u << 20)
#define TAIL_BYTES (1u << 20)

void imgfmt_table_free(struct imgfmt_table *t)
{
	free(t->p);
	memset(t, 0, sizeof(*t));
}

static uint32_t le32(const unsigned char *b)
{
	return b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24;
}

/* The disk's bytes at off (n of them), through a channel of the format's manager. */
static errcode_t read_at(io_channel ch, uint64_t off, void *buf, unsigned n)
{
	/* (the channel's blocks are 512 bytes: a sector, which every offset here is made of) */
	return io_channel_read_blk64(ch, off / 512, -(int)n, buf);
}

/* An ext2/3/4 superblock at byte start of the disk: its size in bytes into *bytes. */
static bool ext_at(int fd, io_channel ch, uint64_t start, uint64_t *bytes)
{
	unsigned char sb[1024];
	bool got = ch ? !read_at(ch, start + 1024, sb, sizeof(sb))
		      : ic_pread_all(fd, sb, sizeof(sb), start + 1024);
	if (!got || (sb[0x38] | sb[0x39] << 8) != EXT2_SUPER_MAGIC)
		return false;
	uint32_t log = le32(sb + 0x18);
	uint64_t blocks = le32(sb + 0x04);
	/* (the high half counts only with the 64bit feature, as libext2fs reads it) */
	if (le32(sb + 0x60) & EXT4_FEATURE_INCOMPAT_64BIT)
		blocks |= (uint64_t)le32(sb + 0x150) << 32;
	*bytes = log > 6 ? UINT64_MAX : blocks << (10 + log);
	return true;
}

/* An EROFS superblock (its magic, 0xe0f5e1e2, at byte 1024) at byte start of the disk: its
 * size in bytes (blocks at 36, the block size's log at 12) into *bytes. */
static bool erofs_at(int fd, io_channel ch, uint64_t start, uint64_t *bytes)
{
	unsigned char sb[128];
	bool got = ch ? !read_at(ch, start + 1024, sb, sizeof(sb))
		      : ic_pread_all(fd, sb, sizeof(sb), start + 1024);
	if (!got || le32(sb) != 0xe0f5e1e2u)
		return false;
	*bytes = sb[12] > 16 ? UINT64_MAX : (uint64_t)le32(sb + 36) << sb[12];
	return true;
}

/* Whether a sparse image's first chunk holds raw data with an ext2/3/4 superblock at byte 1024
 * of the disk: a file system, not a disk (a disk's first chunk holds its table). */
static bool sparse_fs_at_0(const char *path)
{
	unsigned char h[28], c[12], sb[2];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool fs = false;
	if (fd < 0)
		return false;
	if (ic_pread_all(fd, h, sizeof(h), 0)) {
		unsigned hsz = h[8] | h[9] << 8, csz = h[10] | h[11] << 8;
		uint64_t blksz = le32(h + 12);
		/* a RAW chunk first (0xcac1) of at least 2048 bytes: the superblock's magic in it */
		if (ic_pread_all(fd, c, sizeof(c), hsz) && (c[0] | c[1] << 8) == CT_RAW &&
		    (uint64_t)le32(c + 4) * blksz >= 2048 &&
		    ic_pread_all(fd, sb, sizeof(sb), (uint64_t)hsz + csz + 1024 + 0x38))
			fs = (sb[0] | sb[1] << 8) == EXT2_SUPER_MAGIC;
	}
	close(fd);
	return fs;
}

/* len bytes of the disk from off (a multiple of 64 KiB) copied into the memory file mfd. */
static int window(int mfd, io_channel ch, uint64_t off, uint64_t len)
{
	if (!len)
		return 0;
	char *m = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, (off_t)off);
	if (m == MAP_FAILED)
		return -1;
	errcode_t rc = read_at(ch, off, m, (unsigned)len);
	munmap(m, (size_t)len);
	return rc ? -1 : 0;
}

/* A memory file as long as the sparse disk, holding its head and tail: the prober's view. */
static int sparse_view(const char *path, io_channel *chp, uint64_t *size, char *why, size_t n)
{
	unsigned char h[28];
	int fd = open(path, O_RDONLY | O_CLOEXEC), mfd = -1;
	bool got = fd >= 0 && ic_pread_all(fd, h, sizeof(h), 0);
	if (fd >= 0)
		close(fd);
	if (!got) {
		snprintf(why, n, "cannot read its sparse header");
		return -1;
	}
	*size = (uint64_t)le32(h + 12) * le32(h + 16);
	errcode_t rc = imgfmt_sparse_manager->open(path, 0, chp);
	if (rc || (rc = io_channel_set_blksize(*chp, 512))) {
		snprintf(why, n, "cannot read it as a sparse image (%s)",
			 imgfmt_error() ? imgfmt_error() : strerror(rc > 0 && rc < 4096 ? (int)rc : EIO));
		if (!rc)
			io_channel_close(*chp);
		*chp = NULL;
		return -1;
	}
	/* (filled through mappings, not write(2): the only writes a run makes are to its image,
	 * which the tests that count them rely on; two windows, so that a 32-bit build maps a
	 * disk of any size) */
	mfd = memfd_create("fclabel-table", MFD_CLOEXEC);
	if (mfd < 0 || ftruncate(mfd, (off_t)*size) < 0) {
		snprintf(why, n, "no memory for its table");
		goto fail;
	}
	uint64_t end = *size / 512 * 512;
	uint64_t head = end < HEAD_BYTES ? end : HEAD_BYTES;
	/* (the tail's window starts on a 64 KiB boundary, as mmap wants a page's) */
	uint64_t tail = end > head + TAIL_BYTES ? (end - TAIL_BYTES) & ~(uint64_t)0xffff : end;
	if (tail < head)
		tail = head;
	if (window(mfd, *chp, 0, head) || window(mfd, *chp, tail, end - tail)) {
		snprintf(why, n, "cannot read its partition table");
		goto fail;
	}
	return mfd;
fail:
	if (mfd >= 0)
		close(mfd);
	io_channel_close(*chp);
	*chp = NULL;
	return -1;
}

errcode_t imgfmt_partitions(const char *path, enum img_format fmt, struct imgfmt_table *t,
			    char *why, size_t n)
{
	io_channel ch = NULL;
	int fd = -1;
	blkid_probe pr = NULL;
	errcode_t rc = 0;
	uint64_t size = 0, fsb;

	memset(t, 0, sizeof(*t));
	imgfmt_fault_hold(true);
	/* (a sparse file system, the common case, is told from its first chunk: the sparse reader,
	 * which checks every CRC32 chunk as it opens, is opened again only for a disk) */
	if (fmt == IMGFMT_SPARSE && sparse_fs_at_0(path))
		goto out;
	if (fmt == IMGFMT_SPARSE) {
		if ((fd = sparse_view(path, &ch, &size, why, n)) < 0) {
			rc = EXT2_ET_BAD_MAGIC;
			goto out;
		}
	} else if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		snprintf(why, n, "%s", strerror(errno));
		rc = (errcode_t)errno;
		goto out;
	}
	/* a file system from byte 0 is what fclabel has always read: no table is looked for
	 * (whatever stray bytes its first sectors hold) */
	if (ext_at(fd, ch, 0, &fsb) || erofs_at(fd, ch, 0, &fsb))
		goto out;
	if (!(pr = blkid_new_probe()) || blkid_probe_set_device(pr, fd, 0, 0)) {
		snprintf(why, n, "cannot probe it for a partition table");
		rc = EXT2_ET_NO_MEMORY;
		goto out;
	}
	blkid_probe_enable_superblocks(pr, 0);
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, BLKID_PARTS_ENTRY_DETAILS);
	t->disk_size = (uint64_t)blkid_probe_get_size(pr);
	blkid_partlist ls = blkid_probe_get_partitions(pr);
	blkid_parttable tab = ls ? blkid_partlist_get_table(ls) : NULL;
	int np = ls ? blkid_partlist_numof_partitions(ls) : 0;
	if (!tab || np <= 0) {
		/* no table, or an empty one: a disk as before; but a protective MBR (an entry of type
		 * 0xee, and the boot signature) with no GPT libblkid reads is a GPT damaged or cut
		 * short, whose header says the disk is longer than it is */
		unsigned char mbr[512];
		bool got = ch ? !read_at(ch, 0, mbr, sizeof(mbr)) : ic_pread_all(fd, mbr, sizeof(mbr), 0);
		for (int e = 0; got && !tab && e < 4 && mbr[510] == 0x55 && mbr[511] == 0xaa; e++)
			t->bad_gpt |= mbr[446 + 16 * e + 4] == 0xee;
		goto out;
	}
	snprintf(t->kind, sizeof(t->kind), "%s", blkid_parttable_get_type(tab) ?: "?");
	if (!(t->p = calloc((size_t)np, sizeof(*t->p)))) {
		rc = EXT2_ET_NO_MEMORY;
		snprintf(why, n, "out of memory");
		goto out;
	}
	for (int i = 0; i < np; i++) {
		blkid_partition bp = blkid_partlist_get_partition(ls, i);
		if (!bp || blkid_partition_is_extended(bp))
			continue; /* (an MBR extended partition holds others, not a file system) */
		struct imgfmt_part *p = &t->p[t->n++];
		const char *s;
		p->number = blkid_partition_get_partno(bp);
		p->start = (uint64_t)blkid_partition_get_start(bp) * 512;
		p->size = (uint64_t)blkid_partition_get_size(bp) * 512;
		if ((s = blkid_partition_get_name(bp)))
			snprintf(p->name, sizeof(p->name), "%s", s);
		if ((s = blkid_partition_get_type_string(bp)))
			snprintf(p->type, sizeof(p->type), "%s", s);
		else
			snprintf(p->type, sizeof(p->type), "0x%02x", blkid_partition_get_type(bp));
		for (char *c = p->type; *c; c++)
			if (*c >= 'A' && *c <= 'Z')
				*c = (char)(*c - 'A' + 'a');
		/* (a partition past the disk's end has no superblock read there: its bounds are
		 * the caller's to refuse) */
		p->inside = p->start <= t->disk_size && p->size <= t->disk_size - p->start;
		p->ext = p->inside && p->size >= 2048 && ext_at(fd, ch, p->start, &p->fs_bytes);
		p->erofs = p->inside && !p->ext && p->size >= 2048 &&
			   erofs_at(fd, ch, p->start, &p->fs_bytes);
	}
out:
	if (pr)
		blkid_free_probe(pr);
	if (fd >= 0)
		close(fd);
	if (ch)
		io_channel_close(ch);
	imgfmt_fault_hold(false);
	if (rc)
		imgfmt_table_free(t);
	return rc;
}
