/*
 * Which blocks the file system claims, found as e2fsck's pass 1 finds them, before fclabel writes
 * to an image: a block claimed twice (a file's block map inside an inode table, two files
 * cross-linked) means that a write to one owner (an inode's label) changes the other; and before
 * it takes a free block for a label, a block bitmap that calls a claimed block free would hand
 * that block out (and the label would overwrite a file).
 *
 * Claims: the superblocks and group descriptors (with the reserved ones), each group's bitmaps
 * and inode table, the MMP block; for every inode in use (links count not 0, one of the
 * reserved inodes, or an orphan: orphans.c), its attribute block (shared between inodes: claimed
 * once) and its blocks: the extent tree's nodes and extents, or the indirect blocks and what they
 * map. The resize inode claims only its double-indirect block (the reserved descriptors it maps
 * are the groups'). The inode tables are read 64 KiB at a time, skipping what the group
 * descriptors say was never used, as libext2fs's inode scan does.
 *
 * The image says what its trees are, and a hostile one says anything: so a tree node is a block
 * like any other, claimed when it is entered, and a node met a second time (an index whose every
 * entry points at one block, a triple-indirect block holding its own number) is a block claimed
 * twice, which alone refuses the image: the scan stops at the first one. Each block is then
 * entered at most once, so the scan costs what the image holds, not what it says; and SIGINT or
 * SIGTERM stops it where it is.
 *
 * shared_blocks (e2fsdroid -s: files with the same contents share their data blocks, read-only,
 * which e2fsck accepts): a data block may be claimed again as data, by another file or the same
 * one; the groups' metadata, tree nodes and attribute blocks, which fclabel or the kernel write,
 * still may not be shared with anything.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct claims {
	ext2_filsys fs;
	struct itable_src src;       /* where the inode tables and tree nodes are read */
	size_t units;                /* of the inode tables, looked at */
	const struct orphans *orphans;
	ext2fs_block_bitmap claimed; /* every claim */
	ext2fs_block_bitmap ea;      /* the attribute blocks among them */
	ext2fs_block_bitmap owned;   /* shared_blocks: the claims other than file data, which
				      * nothing may share (NULL without it: every claim is owned) */
	ext2_ino_t ino;              /* the inode being looked at */
	blk64_t last_cluster;        /* bigalloc: its last claimed data cluster */
	bool have_last;
	bool is64;                   /* 64bit: attribute blocks past 2^32 */
	char *buf;                   /* a block per tree level, for tree nodes */
	struct claims_result *res;
	errcode_t err;               /* a block could not be read, or CLAIMS_E_INTERRUPTED */
};

#define SAY(field, ...) do { if (!c->res->field[0]) \
	snprintf(c->res->field, sizeof(c->res->field), __VA_ARGS__); } while (0)

/* Whether the scan is over: a block claimed twice (the image is refused, nothing more is
 * needed) or a block that could not be read. Asked for every block pointer: no call. */
static inline bool over(const struct claims *c)
{
	return c->err || c->res->cross[0];
}

/* ... or SIGINT or SIGTERM, or the run has ended (prescan.c): asked for every inode and every
 * tree node, which bounds how long a hostile image keeps the scan going after a signal. */
static bool stopped(struct claims *c)
{
	if ((label_stop_signal || (c->res->cancel && atomic_load(c->res->cancel))) && !c->err)
		c->err = CLAIMS_E_INTERRUPTED;
	return over(c);
}

static bool outside(const struct claims *c, blk64_t blk, blk64_t end)
{
	return blk < c->fs->super->s_first_data_block || end >= ext2fs_blocks_count(c->fs->super) ||
	       end < blk;
}

/* Marks [blk, end] claimed (owned: by no one else, even with shared_blocks), after saying when
 * the bitmap calls a block of it free. */
static void mark(struct claims *c, blk64_t blk, blk64_t end, bool owned)
{
	blk64_t at;
	if (!ext2fs_find_first_zero_block_bitmap2(c->fs->block_map, blk, end, &at))
		SAY(free, "inode %u claims block %llu, which the block bitmap calls free", c->ino,
		    (unsigned long long)at);
	ext2fs_mark_block_bitmap_range2(c->claimed, blk, (unsigned)(end - blk + 1));
	if (owned && c->owned)
		ext2fs_mark_block_bitmap_range2(c->owned, blk, (unsigned)(end - blk + 1));
}

static void twice(struct claims *c, blk64_t at)
{
	SAY(cross, "block %llu is claimed by inode %u and by another inode or the file system's own "
	    "metadata", (unsigned long long)at, c->ino);
}

/* Data blocks [blk, blk + n) of the current inode. A claim outside the file system, or in a
 * damaged tree, is e2fsck's to drop: it is not counted, and nothing stops. */
static void claim_data(struct claims *c, blk64_t blk, blk64_t n)
{
	ext2_filsys fs = c->fs;
	blk64_t end = blk + n - 1, first = blk, at;

	if (!n || outside(c, blk, end))
		return;
	/* bigalloc: the cluster the inode's previous data claim ended in may hold this one too
	 * (without it a cluster is a block: the same block twice in a row is claimed twice) */
	if (ext2fs_has_feature_bigalloc(fs->super) && c->have_last &&
	    EXT2FS_B2C(fs, blk) == c->last_cluster)
		first = EXT2FS_C2B(fs, c->last_cluster + 1);
	/* (shared_blocks: only what is not file data is owned) */
	if (first <= end && !ext2fs_find_first_set_block_bitmap2(c->owned ? c->owned : c->claimed,
								  first, end, &at)) {
		twice(c, at);
		return;
	}
	mark(c, blk, end, false);
	c->last_cluster = EXT2FS_B2C(fs, end);
	c->have_last = true;
}

/* A block of the current inode that nothing may share (a tree node, the resize inode's
 * block): claimed, and false when it cannot be (outside the file system: e2fsck drops it) or
 * was claimed before (the scan stops). */
static bool claim_owned(struct claims *c, blk64_t blk)
{
	if (stopped(c) || outside(c, blk, blk))
		return false;
	if (ext2fs_test_block_bitmap2(c->claimed, blk)) {
		twice(c, blk);
		return false;
	}
	mark(c, blk, blk, true);
	return true;
}

/* An attribute block: shared between inodes, claimed once. */
static void claim_ea(struct claims *c, blk64_t blk)
{
	if (outside(c, blk, blk) || ext2fs_test_block_bitmap2(c->ea, blk))
		return;
	if (ext2fs_test_block_bitmap2(c->claimed, blk)) {
		SAY(cross, "block %llu is inode %u's attribute block and is claimed by another "
		    "inode or the file system's own metadata too", (unsigned long long)blk, c->ino);
		return;
	}
	if (!ext2fs_test_block_bitmap2(c->fs->block_map, blk))
		SAY(free, "inode %u's attribute block %llu is free in the block bitmap", c->ino,
		    (unsigned long long)blk);
	ext2fs_mark_block_bitmap2(c->claimed, blk);
	if (c->owned)
		ext2fs_mark_block_bitmap2(c->owned, blk);
	ext2fs_mark_block_bitmap2(c->ea, blk);
}

/* A tree node of the inode, entered once: claimed, and read into buf; false when it is not to
 * be entered (see claim_owned), or could not be read (c->err). */
static bool read_node(struct claims *c, blk64_t blk, char *buf)
{
	if (!claim_owned(c, blk))
		return false;
	errcode_t rc = io_channel_read_blk64(c->src.io, blk, 1, buf);
	if (rc && !c->err)
		c->err = rc;
	return !rc;
}

/* An extent tree node (the root in i_block, or a block depth levels above the leaves; -1: the
 * root, whatever its depth). A damaged node is e2fsck's to drop, with what it maps. */
static void claim_extents(struct claims *c, const char *node, size_t size, int depth)
{
	const struct ext3_extent_header *h = (const struct ext3_extent_header *)node;
	unsigned n = ext2fs_le16_to_cpu(h->eh_entries);

	if (ext2fs_le16_to_cpu(h->eh_magic) != EXT3_EXT_MAGIC || n > ext2fs_le16_to_cpu(h->eh_max) ||
	    sizeof(*h) + (size_t)n * sizeof(struct ext3_extent) > size ||
	    (depth >= 0 && ext2fs_le16_to_cpu(h->eh_depth) != depth) ||
	    ext2fs_le16_to_cpu(h->eh_depth) > 5)
		return;
	depth = ext2fs_le16_to_cpu(h->eh_depth);
	if (!depth) {
		const struct ext3_extent *e = (const struct ext3_extent *)(h + 1);
		for (unsigned i = 0; i < n && !over(c); i++) {
			unsigned len = ext2fs_le16_to_cpu(e[i].ee_len);
			if (len > EXT_INIT_MAX_LEN)
				len -= EXT_INIT_MAX_LEN;
			claim_data(c, ext2fs_le32_to_cpu(e[i].ee_start) |
				      (blk64_t)ext2fs_le16_to_cpu(e[i].ee_start_hi) << 32, len);
		}
		return;
	}
	const struct ext3_extent_idx *ix = (const struct ext3_extent_idx *)(h + 1);
	char *buf = c->buf + (size_t)(depth - 1) * c->fs->blocksize;
	for (unsigned i = 0; i < n && !over(c); i++) {
		blk64_t child = ext2fs_le32_to_cpu(ix[i].ei_leaf) |
				(blk64_t)ext2fs_le16_to_cpu(ix[i].ei_leaf_hi) << 32;
		if (read_node(c, child, buf))
			claim_extents(c, buf, c->fs->blocksize, depth - 1);
	}
}

/* An indirect block of level (1: it maps data blocks), read into the buffer of that level. */
static void claim_indirect(struct claims *c, blk64_t blk, int level)
{
	char *buf = c->buf + (size_t)(level - 1) * c->fs->blocksize;
	if (!read_node(c, blk, buf))
		return;
	const uint32_t *p = (const uint32_t *)buf;
	for (size_t i = 0; i < c->fs->blocksize / 4 && !over(c); i++) {
		blk64_t b = ext2fs_le32_to_cpu(p[i]);
		if (b && level == 1)
			claim_data(c, b, 1);
		else if (b)
			claim_indirect(c, b, level - 1);
	}
}

/* ext2fs_file_acl_block, without a call into the library for every inode in use */
static blk64_t acl_block(const struct claims *c, const struct ext2_inode *in)
{
	blk64_t b = ext2fs_le32_to_cpu(in->i_file_acl);
	if (c->is64)
		b |= (blk64_t)ext2fs_le16_to_cpu(in->osd2.linux2.l_i_file_acl_high) << 32;
	return b;
}

static void claim_inode(struct claims *c, ext2_ino_t ino, const struct ext2_inode *in)
{
	ext2_filsys fs = c->fs;

	c->ino = ino;
	c->have_last = false;
	blk64_t acl = acl_block(c, in);
	if (acl)
		claim_ea(c, acl);
	if (ino == EXT2_RESIZE_INO) {
		blk64_t d = ext2fs_le32_to_cpu(in->i_block[EXT2_DIND_BLOCK]);
		if (d)
			claim_owned(c, d);
		return;
	}
	/* (the bad blocks inode has no file type: what it maps is claimed all the same) */
	if (ino != EXT2_BAD_INO && !ext2fs_inode_has_valid_blocks2(fs, (struct ext2_inode *)in))
		return;
	if (in->i_flags & EXT4_EXTENTS_FL) {
		claim_extents(c, (const char *)in->i_block, sizeof(in->i_block), -1);
		return;
	}
	for (int i = 0; i < EXT2_NDIR_BLOCKS && !over(c); i++)
		if (in->i_block[i])
			claim_data(c, ext2fs_le32_to_cpu(in->i_block[i]), 1);
	for (int l = 1; l <= 3 && !over(c); l++) {
		blk64_t b = ext2fs_le32_to_cpu(in->i_block[EXT2_IND_BLOCK + l - 1]);
		if (b)
			claim_indirect(c, b, l);
	}
}

/* The groups' own blocks: superblock and descriptor copies, bitmaps, inode tables, into map.
 * Their placement was checked when the image was opened (ext2fs_check_desc). */
static void mark_metadata(ext2_filsys fs, ext2fs_block_bitmap map)
{
	for (dgrp_t g = 0; g < fs->group_desc_count; g++) {
		ext2fs_reserve_super_and_bgd(fs, g, map);
		ext2fs_mark_block_bitmap2(map, ext2fs_block_bitmap_loc(fs, g));
		ext2fs_mark_block_bitmap2(map, ext2fs_inode_bitmap_loc(fs, g));
		ext2fs_mark_block_bitmap_range2(map, ext2fs_inode_table_loc(fs, g),
						fs->inode_blocks_per_group);
	}
	if (ext2fs_has_feature_mmp(fs->super) && fs->super->s_mmp_block &&
	    fs->super->s_mmp_block < ext2fs_blocks_count(fs->super))
		ext2fs_mark_block_bitmap2(map, fs->super->s_mmp_block);
}

static int each_claim(ext2_filsys fs, ext2_ino_t ino, const struct ext2_inode *in, void *arg)
{
	struct claims *c = arg;
	if (stopped(c))
		return -1;
	if (ino >= EXT2_FIRST_INO(fs->super) && !inode_holds_blocks(c->orphans, ino, in))
		return 0;
	if (ino < EXT2_FIRST_INO(fs->super) && ino != EXT2_ROOT_INO && !in->i_mode &&
	    !in->i_blocks && !in->i_links_count)
		return 0; /* a reserved inode never used */
	claim_inode(c, ino, in);
	return over(c) ? -1 : 0;
}

void claims_free(struct claims *c)
{
	if (!c)
		return;
	if (c->claimed)
		ext2fs_free_block_bitmap(c->claimed);
	if (c->ea)
		ext2fs_free_block_bitmap(c->ea);
	if (c->owned)
		ext2fs_free_block_bitmap(c->owned);
	free(c->buf);
	free(c->src.buf);
	free(c);
}

size_t claims_units(const struct claims *c)
{
	return c->units;
}

errcode_t claims_new(ext2_filsys fs, const struct orphans *orphans, struct claims_result *res,
		     struct claims **out)
{
	struct claims *c = calloc(1, sizeof(*c));
	errcode_t rc = ENOMEM;

	*out = NULL;
	if (!c)
		return ENOMEM;
	*c = (struct claims){ .fs = fs, .src = { .fs = fs, .io = fs->io }, .orphans = orphans,
			      .res = res, .is64 = ext2fs_has_feature_64bit(fs->super) };
	res->cross[0] = res->free[0] = 0;
	if (!fs->block_map) {
		rc = EXT2_ET_NO_BLOCK_BITMAP;
		goto fail;
	}
	if ((rc = ext2fs_allocate_block_bitmap(fs, "claimed blocks", &c->claimed)) ||
	    (rc = ext2fs_allocate_block_bitmap(fs, "attribute blocks", &c->ea)) ||
	    (ext2fs_has_feature_shared_blocks(fs->super) &&
	     (rc = ext2fs_allocate_block_bitmap(fs, "owned blocks", &c->owned))))
		goto fail;
	rc = ENOMEM;
	if (!(c->buf = malloc((size_t)6 * fs->blocksize)) || !(c->src.buf = itable_buf(fs)))
		goto fail;
	mark_metadata(fs, c->claimed);
	if (c->owned)
		mark_metadata(fs, c->owned);
	*out = c;
	return 0;
fail:
	claims_free(c);
	return rc;
}

errcode_t claims_run(struct claims *c, io_channel io, const char *map, uint64_t map_len,
		     atomic_size_t *next, size_t most)
{
	errcode_t rc = 0;
	size_t n = itable_units(c->fs), u;

	c->src.io = io;
	c->src.map = map;
	c->src.map_len = map_len;
	while (!rc && most-- && (u = atomic_fetch_add(next, 1)) < n) {
		c->units++;
		rc = itable_unit(&c->src, u, each_claim, c);
	}
	/* (a block claimed twice stops the scan: that is its answer, not an error) */
	if (c->err)
		return c->err;
	return rc == EXT2_ET_CANCEL_REQUESTED && c->res->cross[0] ? 0 : rc;
}

/* The bits of map for blocks [at, at + n) into w (n a multiple of 64; past end: 0). */
static errcode_t bits(ext2fs_block_bitmap map, blk64_t at, size_t n, blk64_t end, uint64_t *w)
{
	memset(w, 0, n / 8);
	return ext2fs_get_block_bitmap_range2(map, at, at + n - 1 > end ? end - at + 1 : n, w);
}

#define WINDOW 65536 /* blocks compared at a time */

/* Whether a block is claimed by both, other than the groups' own blocks (meta: both claim them
 * first) and an attribute block both name (attribute blocks are shared). */
static errcode_t overlap_in(const struct claims *a, const struct claims *b,
			    ext2fs_block_bitmap meta, uint64_t *w, bool *overlap)
{
	ext2_filsys fs = b->fs;
	blk64_t end = ext2fs_blocks_count(fs->super) - 1;
	uint64_t *ac = w, *bc = ac + WINDOW / 64, *ae = bc + WINDOW / 64, *be = ae + WINDOW / 64,
		 *m = be + WINDOW / 64;
	errcode_t rc = 0;

	for (blk64_t at = fs->super->s_first_data_block; at <= end; at += WINDOW) {
		if ((rc = bits(a->claimed, at, WINDOW, end, ac)) ||
		    (rc = bits(b->claimed, at, WINDOW, end, bc)) ||
		    (rc = bits(a->ea, at, WINDOW, end, ae)) || (rc = bits(b->ea, at, WINDOW, end, be)) ||
		    (rc = bits(meta, at, WINDOW, end, m)))
			return rc;
		for (size_t i = 0; i < WINDOW / 64; i++)
			if (ac[i] & bc[i] & ~m[i] & ~(ae[i] & be[i])) {
				*overlap = true;
				return 0;
			}
		if (end - at < WINDOW) /* (and no wrap past 2^64) */
			break;
	}
	return 0;
}

errcode_t claims_overlap(const struct claims *a, const struct claims *b, bool *overlap)
{
	ext2fs_block_bitmap meta = NULL;
	uint64_t *w = malloc(5 * WINDOW / 8);
	errcode_t rc = w ? ext2fs_allocate_block_bitmap(b->fs, "metadata blocks", &meta) : ENOMEM;

	*overlap = false;
	if (!rc) {
		mark_metadata(b->fs, meta);
		rc = overlap_in(a, b, meta, w, overlap);
	}
	if (meta)
		ext2fs_free_block_bitmap(meta);
	free(w);
	return rc;
}

errcode_t claims_scan(ext2_filsys fs, const struct orphans *orphans, struct claims_result *res)
{
	struct claims *c;
	atomic_size_t next = 0;
	errcode_t rc = claims_new(fs, orphans, res, &c);

	if (!rc)
		rc = claims_run(c, fs->io, NULL, 0, &next, SIZE_MAX);
	if (!rc && res->keep) {
		res->claimed = c->claimed; /* (the caller's to free) */
		c->claimed = NULL;
	}
	claims_free(c);
	return rc;
}
