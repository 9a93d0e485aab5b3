/*
 * A directory's entries read as ext2fs_dir_iterate(fs, dir, 0, ...) gives them, for the common
 * case only: a block map of extents held in the inode. Each run of contiguous blocks comes in one
 * read (the library reads a block at a time, and reads the inode again first), and the blocks'
 * checksums are computed with the CPU's crc32c (imgfmt_crc32c; libext2fs's is in software): the
 * directory blocks were a third of a label's time through the library. Anything else (an extent
 * tree with index nodes, uninitialized or overlapping extents, blocks outside the file system,
 * inline data, a block whose checksum or entries fail the library's checks, a read error) is
 * left to the library, from the start of the directory, so that what a user reads about a
 * damaged directory stays the library's words (as itable.c does for inodes).
 */
#include <stdlib.h>
#include <string.h>

#include "imgfmt.h"
#include "internal.h"

/* Blocks read at once: a window that the next directories' blocks are often in (an image made
 * by mke2fs -d or a copy puts a tree's directory blocks near each other in the walk's order:
 * 99.6% of them within the 16 blocks after the last in the bench's image), and the pieces a
 * large directory's run of blocks comes in. A block read ahead is still what is on disk when it
 * is used: a label writes no directory block, and writes none of a block two things claim (the
 * claims scan refuses such an image before the first write). */
#define DIRREAD_CHUNK 16u

/* ext4's checksum tail: the last 12 bytes of a directory block, an entry of inode 0 */
#define TAIL_SIZE 12u
#define TAIL_NAME_LEN_CSUM 0xDE00u /* its name_len and file_type, as one 16-bit field */

struct dirread {
	ext2_filsys fs;
	char *buf;   /* DIRREAD_CHUNK blocks: the window */
	blk64_t at;  /* the first of them */
	unsigned n;  /* how many were read (0: none) */
};

struct dirread *dirread_new(ext2_filsys fs)
{
	struct dirread *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->fs = fs;
	if (!(d->buf = malloc((size_t)DIRREAD_CHUNK * fs->blocksize))) {
		free(d);
		return NULL;
	}
	return d;
}

void dirread_free(struct dirread *d)
{
	if (!d)
		return;
	free(d->buf);
	free(d);
}

/* The extents that follow the header in the inode's i_block. */
static const struct ext3_extent *inode_extent(const struct ext2_inode_large *in)
{
	return (const struct ext3_extent *)((const struct ext3_extent_header *)in->i_block + 1);
}

static uint16_t le16_at(const char *p)
{
	return (uint16_t)((unsigned char)p[0] | (unsigned char)p[1] << 8);
}

static uint32_t le32_at(const char *p)
{
	return (uint32_t)le16_at(p) | (uint32_t)le16_at(p + 2) << 16;
}

/*
 * Whether block b (of directory ino, generation gen) has ext4's checksum tail, reached from its
 * first entry, and it is right: what ext2fs_dir_block_csum_verify accepts through the tail. An
 * htree node has no tail (the library checks its dx tail instead): not one this file reads.
 */
static bool tail_csum_ok(ext2_filsys fs, ext2_ino_t ino, uint32_t gen, const char *b)
{
	size_t bs = fs->blocksize, top = bs - TAIL_SIZE, at = 0;

	while (at < top) {
		unsigned rl = le16_at(b + at + 4);
		if (rl < 8 || (rl & 3))
			return false;
		at += rl;
	}
	if (at != top || le32_at(b + top) || le16_at(b + top + 4) != TAIL_SIZE ||
	    le16_at(b + top + 6) != TAIL_NAME_LEN_CSUM)
		return false;
	uint32_t le_ino = ext2fs_cpu_to_le32(ino), le_gen = ext2fs_cpu_to_le32(gen);
	uint32_t crc = imgfmt_crc32c(fs->csum_seed, &le_ino, 4);
	crc = imgfmt_crc32c(crc, &le_gen, 4);
	crc = imgfmt_crc32c(crc, b, top);
	return le32_at(b + top + 8) == crc;
}

/*
 * The entries in use of one block, to fn, with ext2fs_process_dir_block's checks: false when an
 * entry fails them. *stop: fn asked to (DIRENT_ABORT).
 */
static bool block_entries(ext2_filsys fs, char *b, dirread_fn fn, void *arg, bool *stop)
{
	unsigned bs = fs->blocksize, at = 0;

	while (at < bs - 8) {
		struct ext2_dir_entry *d = (struct ext2_dir_entry *)(b + at);
		unsigned rl = d->rec_len;
		if (at + rl > bs || rl < 8 || (rl % 4) || (unsigned)ext2fs_dirent_name_len(d) + 8 > rl)
			return false;
		if (d->inode && (fn(d, (int)at, (int)bs, b, arg) & DIRENT_ABORT)) {
			*stop = true;
			return true;
		}
		at += rl;
	}
	return true;
}

/* Blocks [start, start + n) (n <= DIRREAD_CHUNK, inside the file system): from the window, else
 * a window read from start (or, when that fails, those blocks alone). NULL: they cannot be read. */
static char *blocks_at(struct dirread *r, blk64_t start, unsigned n)
{
	ext2_filsys fs = r->fs;
	blk64_t left = ext2fs_blocks_count(fs->super) - start;
	unsigned want = left < DIRREAD_CHUNK ? (unsigned)left : DIRREAD_CHUNK;

	if (r->n && start >= r->at && start + n <= r->at + r->n)
		return r->buf + (size_t)(start - r->at) * fs->blocksize;
	r->n = 0;
	/* (a block past the run that cannot be read is not the run's error: the run alone is
	 * read again, as the library reads it, and its error is the one that counts) */
	imgfmt_read_ahead(want > n);
	errcode_t rc = io_channel_read_blk64(fs->io, start, (int)want, r->buf);
	imgfmt_read_ahead(false);
	if (rc && (want == n || io_channel_read_blk64(fs->io, start, (int)(want = n), r->buf)))
		return NULL;
	r->at = start;
	r->n = want;
	return r->buf;
}

/* One extent's blocks (at most DIRREAD_CHUNK at a time): false when one cannot be read or fails
 * a check. */
static bool extent_entries(struct dirread *r, ext2_ino_t ino, uint32_t gen, blk64_t start,
			   unsigned len, dirread_fn fn, void *arg, bool *stop)
{
	ext2_filsys fs = r->fs;
	bool csum = ext2fs_has_feature_metadata_csum(fs->super) &&
		    !(fs->flags & EXT2_FLAG_IGNORE_CSUM_ERRORS);

	while (len && !*stop) {
		unsigned n = len < DIRREAD_CHUNK ? len : DIRREAD_CHUNK;
		char *run = blocks_at(r, start, n);
		if (!run)
			return false;
		for (unsigned i = 0; i < n && !*stop; i++) {
			char *b = run + (size_t)i * fs->blocksize;
			if ((csum && !tail_csum_ok(fs, ino, gen, b)) ||
			    !block_entries(fs, b, fn, arg, stop))
				return false;
		}
		start += n;
		len -= n;
	}
	return true;
}

/*
 * The extents of the inode's own extent node, when it is one this file reads (what
 * ext2fs_extent_header_verify accepts, a leaf, at least one extent, each initialized, after the
 * one before and inside the file system): their number, else 0.
 */
static unsigned inode_extents(ext2_filsys fs, const struct ext2_inode_large *in)
{
	const struct ext3_extent_header *h = (const struct ext3_extent_header *)in->i_block;
	const struct ext3_extent *e = inode_extent(in);
	unsigned n = ext2fs_le16_to_cpu(h->eh_entries), max = ext2fs_le16_to_cpu(h->eh_max);
	unsigned fit = (sizeof(in->i_block) - sizeof(*h)) / sizeof(*e);
	uint64_t next = 0, blocks = ext2fs_blocks_count(fs->super);

	if (ext2fs_le16_to_cpu(h->eh_magic) != EXT3_EXT_MAGIC || h->eh_depth || !n || n > max ||
	    max > fit || max + 2 < fit)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		unsigned len = ext2fs_le16_to_cpu(e[i].ee_len);
		uint64_t lblk = ext2fs_le32_to_cpu(e[i].ee_block);
		uint64_t pblk = ext2fs_le32_to_cpu(e[i].ee_start) |
				(uint64_t)ext2fs_le16_to_cpu(e[i].ee_start_hi) << 32;
		if (!len || len > EXT_INIT_MAX_LEN || lblk < next ||
		    pblk < fs->super->s_first_data_block || pblk + len > blocks)
			return 0;
		next = lblk + len;
	}
	return n;
}

int dirread_entries(struct dirread *r, ext2_ino_t ino, const struct ext2_inode_large *in,
		    dirread_fn fn, void *arg)
{
	ext2_filsys fs = r->fs;
	unsigned n;

#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return 0; /* the library swaps the entries' fields to the host's order: its to read */
#endif
	if (fs->blocksize >= 65536 || !LINUX_S_ISDIR(in->i_mode) ||
	    (in->i_flags & (EXT4_INLINE_DATA_FL | EXT4_EXTENTS_FL)) != EXT4_EXTENTS_FL ||
	    !(n = inode_extents(fs, in)))
		return 0;
	const struct ext3_extent *e = inode_extent(in);
	bool stop = false;
	for (unsigned i = 0; i < n && !stop; i++) {
		blk64_t start = ext2fs_le32_to_cpu(e[i].ee_start) |
				(blk64_t)ext2fs_le16_to_cpu(e[i].ee_start_hi) << 32;
		if (!extent_entries(r, ino, in->i_generation, start, ext2fs_le16_to_cpu(e[i].ee_len),
				    fn, arg, &stop))
			return 0;
	}
	return 1;
}
