/*
 * Reading the inode tables a chunk at a time (ITABLE_CHUNK), not an inode or a block at a time as
 * libext2fs does: every inode in order (itable_each: the block-claims scan, the reference counts,
 * the repair), and the inodes a walk asks for, which come in about the order they were made
 * (struct itable_window); and the inodes' checksums, computed with the CPU's crc32c
 * (imgfmt_crc32c: libext2fs's is in software, a quarter of a label's time when it did them all).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

/*
 * Every inode of the inode tables, as libext2fs's inode scan reads them (a group whose inodes
 * were never used, and the unused tail of each table, skipped when the group descriptors have
 * checksums), but ITABLE_CHUNK at a time and without copying or checking each inode.
 */
/* The tables are read from the page cache more often than from the disk (an image just written
 * or copied): then the copy into buf is the cost, and a buffer that stays in the core's L2 cache
 * (and below malloc's mmap threshold: no page faults for a fresh mapping each call) makes the
 * scan of a 200,000-inode image 3-4 times faster than a megabyte at a time did (0.05 s -> 0.015
 * s on the 2-core machine of make bench-relabel; 16-128 KiB were alike). */
#define ITABLE_CHUNK (64u << 10)
/* A scan goes a unit at a time: ITABLE_UNIT of one group's table, a whole number of chunks, so
 * that unit after unit the tables are read as group after group; two threads share a scan out
 * by units (prescan.c), each small enough that the one that ends first waits little for the
 * other (a 200,000-inode image has 49 of them). */
#define ITABLE_UNIT (1u << 20)

static size_t unit_blocks(ext2_filsys fs)
{
	return ITABLE_UNIT > fs->blocksize ? ITABLE_UNIT / fs->blocksize : 1;
}

/* (0 for a table of no blocks: a superblock the open refused) */
static size_t units_per_group(ext2_filsys fs)
{
	size_t u = unit_blocks(fs);
	return (fs->inode_blocks_per_group + u - 1) / u;
}

size_t itable_units(ext2_filsys fs)
{
	return (size_t)fs->group_desc_count * units_per_group(fs);
}

char *itable_buf(ext2_filsys fs)
{
	return malloc(ITABLE_CHUNK > fs->blocksize ? ITABLE_CHUNK : fs->blocksize);
}

/* The nblk blocks of the tables at blk: where the mapping holds them, there; else read into
 * src->buf. NULL after a failed read (*rc). */
static const char *table_blocks(const struct itable_src *src, blk64_t blk, size_t nblk,
				errcode_t *rc)
{
	uint64_t have = src->map_len / src->fs->blocksize;
	if (src->map && blk < have && nblk <= have - blk)
		return src->map + blk * src->fs->blocksize;
	*rc = io_channel_read_blk64(src->io, blk, (int)nblk, src->buf);
	return *rc ? NULL : src->buf;
}

/* The mapping's pages of blocks [blk, end) let go once looked at: the scan of a 2,000,000-inode
 * image looks at 512 MB of tables, which a mapping kept whole counted as the run's memory (a peak
 * of 499 MiB against 76). The pages stay in the page cache; a page shared with the next unit is
 * mapped again by a look at it. */
static void let_go(const struct itable_src *src, blk64_t blk, blk64_t end)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)(src->map + blk * src->fs->blocksize) & ~(page - 1);
	uintptr_t e = (uintptr_t)(src->map + end * src->fs->blocksize);

	if (e > a)
		(void)madvise((void *)a, e - a, MADV_DONTNEED);
}

errcode_t itable_unit(const struct itable_src *src, size_t unit, itable_fn fn, void *arg)
{
	ext2_filsys fs = src->fs;
	size_t isize = EXT2_INODE_SIZE(fs->super), per_block = fs->blocksize / isize;
	size_t chunk = ITABLE_CHUNK > fs->blocksize ? ITABLE_CHUNK / fs->blocksize : 1;
	size_t upg = units_per_group(fs);
	ext2_ino_t ipg = fs->super->s_inodes_per_group, used = ipg;
	errcode_t rc = 0;

	if (!per_block)
		return EXT2_ET_CORRUPT_SUPERBLOCK;
	if (!upg || unit >= itable_units(fs))
		return 0;
	dgrp_t g = unit / upg;
	size_t first = unit % upg * unit_blocks(fs) * per_block;
	if (ext2fs_has_group_desc_csum(fs)) {
		if (ext2fs_bg_flags_test(fs, g, EXT2_BG_INODE_UNINIT))
			return 0;
		used -= used < ext2fs_bg_itable_unused(fs, g) ? used : ext2fs_bg_itable_unused(fs, g);
	}
	if (first >= used)
		return 0;
	size_t left = used - first;
	if (left > unit_blocks(fs) * per_block)
		left = unit_blocks(fs) * per_block;
	blk64_t table = ext2fs_inode_table_loc(fs, g), at = table + first / per_block;
	ext2_ino_t ino = g * ipg + 1 + first;
	if (!table)
		return EXT2_ET_MISSING_INODE_TABLE;
	blk64_t start = at, mapped = at;
	while (left) {
		size_t nblk = (left + per_block - 1) / per_block;
		if (nblk > chunk)
			nblk = chunk;
		size_t got = nblk * per_block < left ? nblk * per_block : left;
		const char *p = table_blocks(src, at, nblk, &rc);
		if (!p)
			break;
		for (size_t i = 0; i < got && !rc; i++, ino++)
			if (fn(fs, ino, (const struct ext2_inode *)(p + i * isize), arg) < 0)
				rc = EXT2_ET_CANCEL_REQUESTED;
		at += nblk;
		left -= got;
		if (p != src->buf)
			mapped = at;
		if (rc)
			break;
	}
	if (mapped > start)
		let_go(src, start, mapped);
	return rc;
}

errcode_t itable_each(ext2_filsys fs, itable_fn fn, void *arg)
{
	struct itable_src src = { .fs = fs, .io = fs->io, .buf = itable_buf(fs) };
	errcode_t rc = 0;

	if (!src.buf)
		return ENOMEM;
	for (size_t u = 0, n = itable_units(fs); u < n && !rc; u++)
		rc = itable_unit(&src, u, fn, arg);
	free(src.buf);
	return rc;
}

/*
 * An inode's checksum as ext4 defines it (as libext2fs's ext2fs_inode_csum computes it): crc32c
 * seeded with the file system's, over the inode number, its generation and the inode with its
 * checksum fields as zero; all 32 bits where the inode has room for the high half, else the low
 * 16. *hi: whether it has.
 */
static uint32_t inode_csum(ext2_filsys fs, ext2_ino_t ino, struct ext2_inode_large *in, bool *hi)
{
	size_t isize = EXT2_INODE_SIZE(fs->super);
	uint16_t lo = in->i_checksum_lo, h = 0;
	uint32_t le = ext2fs_cpu_to_le32(ino), c;

	*hi = isize > EXT2_GOOD_OLD_INODE_SIZE && in->i_extra_isize >= EXT4_INODE_CSUM_HI_EXTRA_END;
	in->i_checksum_lo = 0;
	if (*hi) {
		h = in->i_checksum_hi;
		in->i_checksum_hi = 0;
	}
	c = imgfmt_crc32c(fs->csum_seed, &le, 4);
	c = imgfmt_crc32c(c, &in->i_generation, 4);
	c = imgfmt_crc32c(c, in, isize);
	in->i_checksum_lo = lo;
	if (*hi)
		in->i_checksum_hi = h;
	return *hi ? c : c & 0xffff;
}

/* Whether the checksum is right (false also when the library would let it pass for another
 * reason, an inode of zeros: the library is then asked). */
bool inode_csum_ok(ext2_filsys fs, ext2_ino_t ino, struct ext2_inode_large *in)
{
	bool hi;
	if (!ext2fs_has_feature_metadata_csum(fs->super))
		return true;
	uint32_t c = inode_csum(fs, ino, in, &hi);
	uint32_t have = ext2fs_le16_to_cpu(in->i_checksum_lo);
	if (hi)
		have |= (uint32_t)ext2fs_le16_to_cpu(in->i_checksum_hi) << 16;
	return c == have;
}

void inode_csum_set(ext2_filsys fs, ext2_ino_t ino, struct ext2_inode_large *in)
{
	bool hi;
	if (!ext2fs_has_feature_metadata_csum(fs->super))
		return;
	uint32_t c = inode_csum(fs, ino, in, &hi);
	in->i_checksum_lo = ext2fs_cpu_to_le16(c & 0xffff);
	if (hi)
		in->i_checksum_hi = ext2fs_cpu_to_le16(c >> 16);
}

/*
 * The walk's inodes. A directory's entries name inodes made about when the directory's were
 * (mke2fs -d, e2fsdroid, a kernel filling a tree), so an inode asked for is most often in the
 * chunk the last one was: reading ITABLE_CHUNK at once turns the library's read of a block (and
 * its copies through each io_manager) per inode or two into one per chunk. The checksum is
 * verified here (inode_csum_ok); an inode that fails it, and a table the library would refuse
 * to read, are left to ext2fs_read_inode_full, so that what it says of them is said word for
 * word.
 *
 * The chunk is what the channel held when it was read: an inode written since is not in it. The
 * walk reads each inode here once, before anything writes it (a file's label is written when it
 * is visited), and asks the library for an inode met again (a hard link).
 */
struct itable_window *itable_window_new(ext2_filsys fs)
{
	struct itable_window *w = calloc(1, sizeof(*w));
	size_t chunk = ITABLE_CHUNK > fs->blocksize ? ITABLE_CHUNK / fs->blocksize : 1;
	if (!w || !(w->buf = malloc(chunk * fs->blocksize))) {
		free(w);
		return NULL;
	}
	w->fs = fs;
	w->chunk = chunk;
	return w;
}

void itable_window_free(struct itable_window *w)
{
	if (w) {
		free(w->buf);
		free(w);
	}
}

/* Inode ino into out (bufsize bytes; of an inode larger, only that much, as the library does):
 * true, or false when the library is to read it (it says why it cannot, or reads it). */
bool itable_window_read(struct itable_window *w, ext2_ino_t ino, struct ext2_inode_large *out,
			size_t bufsize)
{
	ext2_filsys fs = w->fs;
	size_t isize = EXT2_INODE_SIZE(fs->super);
	ext2_ino_t ipg = fs->super->s_inodes_per_group;
	dgrp_t g = (ino - 1) / ipg;
	blk64_t table = ext2fs_inode_table_loc(fs, g);
	if (!table || table < fs->super->s_first_data_block ||
	    table + fs->inode_blocks_per_group - 1 >= ext2fs_blocks_count(fs->super))
		return false;
	unsigned long long off = (unsigned long long)((ino - 1) % ipg) * isize;
	blk64_t blk = off / fs->blocksize, first = blk / w->chunk * w->chunk;
	if (w->at != table + first || !w->n) {
		/* no further than the blocks of the table in use (an image cut short after them is
		 * read as the library reads it) */
		ext2_ino_t used = ipg, unused = ext2fs_bg_itable_unused(fs, g);
		if (ext2fs_has_group_desc_csum(fs) && unused < ipg)
			used -= unused;
		blk64_t end = ((unsigned long long)used * isize + fs->blocksize - 1) / fs->blocksize;
		if (end > fs->inode_blocks_per_group)
			end = fs->inode_blocks_per_group;
		if (blk >= end)
			return false;
		size_t n = end - first < w->chunk ? end - first : w->chunk;
		w->n = 0;
		if (imgfmt_read_kept(fs->io, table + first, (int)n, w->buf))
			return false;
		w->at = table + first;
		w->n = n;
	}
	struct ext2_inode_large *in = (struct ext2_inode_large *)
		(w->buf + (blk - first) * fs->blocksize + off % fs->blocksize);
	if (!(fs->flags & EXT2_FLAG_IGNORE_CSUM_ERRORS) && !inode_csum_ok(fs, ino, in))
		return false;
	memcpy(out, in, bufsize < isize ? bufsize : isize);
	return true;
}
