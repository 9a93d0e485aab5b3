/*
 * An image written in place survives a kill at any write: its jbd2 journal is replayed first
 * where a mount would replay it, and the labels are then written as transactions of that
 * journal; where there is no journal (or one fclabel does not write), in an order that can only
 * leak a block, which the next run repairs (repair.c). imgfmt/overlay.c does the writing; this is
 * what it needs to know of the file system.
 */
#include <errno.h>
#include <et/com_err.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The journal's blocks as runs (imgfmt_jrun), gathered block by block. */
struct jmap {
	struct imgfmt_jrun *r;
	size_t nr, cap;
	uint32_t n;   /* the blocks so far */
	blk64_t end;  /* the file system's blocks */
	bool bad;
};

static int map_one(ext2_filsys fs, blk64_t *blocknr, e2_blkcnt_t blockcnt, blk64_t ref_blk,
		   int ref_offset, void *priv)
{
	struct jmap *m = priv;
	(void)ref_blk;
	(void)ref_offset;
	/* a hole, a block out of order or outside the file system: not a log to write */
	if (blockcnt < 0 || (uint64_t)blockcnt != m->n || *blocknr < fs->super->s_first_data_block ||
	    *blocknr >= m->end || m->n == UINT32_MAX) {
		m->bad = true;
		return BLOCK_ABORT;
	}
	m->n++;
	struct imgfmt_jrun *last = m->nr ? &m->r[m->nr - 1] : NULL;
	if (last && last->blk + last->len == *blocknr) {
		last->len++;
		return 0;
	}
	if (m->nr == m->cap) {
		size_t c = m->cap ? m->cap * 2 : 16;
		struct imgfmt_jrun *nr = realloc(m->r, c * sizeof(*nr));
		if (!nr) {
			m->bad = true;
			return BLOCK_ABORT;
		}
		m->r = nr;
		m->cap = c;
	}
	m->r[m->nr++] = (struct imgfmt_jrun){ .blk = *blocknr, .first = m->n - 1, .len = 1 };
	return 0;
}

errcode_t img_journal_load(ext2_filsys fs, struct imgfmt_journal **j, char *why, size_t n)
{
	struct ext2_super_block *sb = fs->super;
	struct jmap m = { .end = ext2fs_blocks_count(fs->super) };
	errcode_t rc;

	*j = NULL;
	*why = 0;
	if (!ext2fs_has_feature_journal(sb))
		return 0;
	if (!sb->s_journal_inum) {
		snprintf(why, n, "its journal is on another device");
		return EXT2_ET_UNSUPP_FEATURE;
	}
	rc = ext2fs_block_iterate3(fs, sb->s_journal_inum, BLOCK_FLAG_DATA_ONLY | BLOCK_FLAG_READ_ONLY,
				   NULL, map_one, &m);
	if (!rc && m.bad)
		rc = EXT2_ET_BAD_BLOCK_IN_INODE_TABLE;
	if (rc) {
		snprintf(why, n, "cannot map its journal (inode %u): %s", sb->s_journal_inum,
			 m.bad ? "a hole, or a block outside the file system" : error_message(rc));
		free(m.r);
		return rc;
	}
	rc = imgfmt_journal_open(imgfmt_overlay_lower(fs->io), fs->blocksize, m.r, m.nr, j, why, n);
	free(m.r);
	return rc;
}

/* Writes the primary superblock below the overlay with needs_recovery cleared, as the disk has
 * it otherwise. */
static errcode_t clear_recover(ext2_filsys fs)
{
	io_channel io = imgfmt_overlay_lower(fs->io);
	struct ext2_super_block sb;
	unsigned at = SUPERBLOCK_OFFSET / fs->blocksize, off = SUPERBLOCK_OFFSET % fs->blocksize;
	char *blk = malloc(fs->blocksize);
	errcode_t rc;

	if (!blk)
		return ENOMEM;
	if ((rc = io_channel_read_blk64(io, at, 1, blk)))
		goto out;
	memcpy(&sb, blk + off, sizeof(sb));
	ext2fs_clear_feature_journal_needs_recovery(&sb);
	ext2fs_superblock_csum_set(fs, &sb);
	memcpy(blk + off, &sb, sizeof(sb));
	if (!(rc = io_channel_write_blk64(io, at, 1, blk)))
		rc = io_channel_flush(io);
out:
	free(blk);
	return rc;
}

struct replay_to {
	io_channel io;
};

static errcode_t put_home(void *arg, uint64_t blk, const char *data)
{
	struct replay_to *t = arg;
	return io_channel_write_blk64(t->io, blk, 1, data);
}

int img_recover(struct image *img, const char *cmd, bool *reopen)
{
	ext2_filsys fs = img->fs;
	struct imgfmt_journal *j = NULL;
	char why[512];
	bool flag = ext2fs_has_feature_journal_needs_recovery(fs->super);
	errcode_t rc;

	*reopen = false;
	if (!ext2fs_has_feature_journal(fs->super)) {
		if (!flag)
			return 0;
		/* e2fsck clears it: there is nothing to replay */
		fprintf(stderr, "fclabel %s: %s: its superblock asks for journal recovery but it has "
			"no journal; refusing to write (run e2fsck -f first)\n", cmd, img->name);
		return -1;
	}
	rc = img_journal_load(fs, &j, why, sizeof(why));
	if (rc) {
		if (!flag && rc == EXT2_ET_UNSUPP_FEATURE)
			return 0; /* written in order, not through it (img_begin_writes) */
		if (!flag)
			return 0; /* a journal fclabel cannot read: written in order, as without one */
		fprintf(stderr, "fclabel %s: %s: its journal needs recovery, which fclabel cannot do "
			"here (%s); refusing to write, whatever --force says (mount it once, or run "
			"e2fsck -E journal_only)\n", cmd, img->name, why);
		return -1;
	}
	bool dirty = !imgfmt_journal_empty(j);
	if (dirty && !flag) {
		/* a mount would discard these transactions, e2fsck would ask: not ours to decide */
		fprintf(stderr, "fclabel %s: %s: its journal holds transactions that were never "
			"replayed, but its superblock does not ask for recovery; refusing to write, "
			"whatever --force says (run e2fsck -f first)\n", cmd, img->name);
		imgfmt_journal_free(j);
		return -1;
	}
	if (!flag) {
		imgfmt_journal_free(j);
		return 0;
	}
	if (imgfmt_journal_errno(j)) {
		fprintf(stderr, "fclabel %s: %s: its journal recorded an error (%d); refusing to "
			"write, whatever --force says (run e2fsck -f first)\n", cmd, img->name,
			imgfmt_journal_errno(j));
		imgfmt_journal_free(j);
		return -1;
	}
	struct imgfmt_replay st;
	struct replay_to t = { imgfmt_overlay_lower(fs->io) };
	rc = imgfmt_journal_replay(j, put_home, &t, &st, why, sizeof(why));
	if (!rc)
		rc = io_channel_flush(t.io);
	if (!rc)
		rc = imgfmt_journal_reset(j, true);
	if (!rc)
		rc = clear_recover(fs);
	imgfmt_journal_free(j);
	if (rc) {
		fprintf(stderr, "fclabel %s: %s: its journal needs recovery, and replaying it failed: "
			"%s; refusing to write (mount it once, or run e2fsck -E journal_only)\n", cmd,
			img->name, *why ? why : error_message(rc));
		return -1;
	}
	if (!st.transactions)
		fprintf(stderr, "fclabel %s: %s: its superblock asked for journal recovery, and its "
			"journal holds nothing to replay (a write interrupted before it committed): "
			"the flag cleared, as a mount would\n", cmd, img->name);
	else
		fprintf(stderr, "fclabel %s: %s: replayed its journal first, as a mount would (%lu "
			"transaction%s, %lu block%s)\n", cmd, img->name, st.transactions,
			st.transactions == 1 ? "" : "s", st.blocks, st.blocks == 1 ? "" : "s");
	*reopen = true;
	return 0;
}

/* ---- the overlay ---- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Which of the ordered writes blk belongs to: an inode table's (last), an allocation record's
 * (bitmaps, group descriptors, superblocks: before the inodes), or contents (first). */
static int write_order(void *arg, uint64_t blk)
{
	const struct image *img = arg;
	size_t lo = 0, hi = img->nitab;
	/* the last table starting at or before blk */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (img->itab[mid] <= blk)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && blk < img->itab[lo - 1] + img->fs->inode_blocks_per_group)
		return IMGFMT_ORDER_INODES;
	if (blk < ext2fs_blocks_count(img->fs->super) &&
	    ext2fs_test_block_bitmap2(img->records, blk))
		return IMGFMT_ORDER_RECORDS;
	return IMGFMT_ORDER_CONTENTS;
}

/* The blocks of the allocation records: superblocks, group descriptors (with their reserve),
 * bitmaps. */
static errcode_t find_records(struct image *img)
{
	ext2_filsys fs = img->fs;
	errcode_t rc = ext2fs_allocate_block_bitmap(fs, "allocation records", &img->records);
	if (rc)
		return rc;
	for (dgrp_t g = 0; g < fs->group_desc_count; g++) {
		ext2fs_reserve_super_and_bgd(fs, g, img->records);
		blk64_t b = ext2fs_block_bitmap_loc(fs, g), i = ext2fs_inode_bitmap_loc(fs, g);
		if (b && b < ext2fs_blocks_count(fs->super))
			ext2fs_mark_block_bitmap2(img->records, b);
		if (i && i < ext2fs_blocks_count(fs->super))
			ext2fs_mark_block_bitmap2(img->records, i);
	}
	/* the superblock's block, whatever the group's layout */
	ext2fs_mark_block_bitmap2(img->records, SUPERBLOCK_OFFSET / fs->blocksize);
	return 0;
}

int img_begin_writes(struct image *img, bool sync, const char *cmd, bool verbose)
{
	ext2_filsys fs = img->fs;
	struct imgfmt_overlay_params p = { .blocksize = fs->blocksize, .sync = sync,
					   .now = (int64_t)fs->now, .order = write_order,
					   .order_arg = img, .writeback_fd = img->lockfd,
					   .writeback_base = img->part.set ? img->part.offset : 0 };
	char why[512];

	if (!imgfmt_overlay_active(fs->io) && fs->io->manager != imgfmt_overlay_manager)
		return 0; /* a copy, or a sparse image: whole or nothing already */
	if (!(img->itab = malloc(fs->group_desc_count * sizeof(*img->itab)))) {
		fprintf(stderr, "fclabel %s: out of memory\n", cmd);
		return -1;
	}
	for (dgrp_t g = 0; g < fs->group_desc_count; g++)
		img->itab[g] = ext2fs_inode_table_loc(fs, g);
	img->nitab = fs->group_desc_count;
	qsort(img->itab, img->nitab, sizeof(*img->itab), cmp_u64);
	errcode_t rc0 = find_records(img);
	if (rc0) {
		fprintf(stderr, "fclabel %s: %s: %s\n", cmd, img->name, error_message(rc0));
		return -1;
	}

	errcode_t rc = img_journal_load(fs, &img->journal, why, sizeof(why));
	if (!rc && img->journal) {
		uint32_t cap = imgfmt_journal_capacity(img->journal);
		p.mode = IMGFMT_OV_JOURNAL;
		p.journal = img->journal;
		/* a commit comes between two files: room for one more file's blocks */
		img->commit_limit = cap > 1024 ? cap - 512 : cap / 2;
		if (img->commit_limit > (64u << 20) / fs->blocksize)
			img->commit_limit = (64u << 20) / fs->blocksize;
	} else {
		if (ext2fs_has_feature_journal(fs->super))
			fprintf(stderr, "fclabel %s: note: %s: %s; its labels are written in an order "
				"a kill can only leak a block by, not through its journal\n", cmd,
				img->name, why);
		p.mode = IMGFMT_OV_ORDERED;
		img->commit_limit = (64u << 20) / fs->blocksize;
	}
	/* for the test suite: commits every few blocks, so that a small image takes many */
	const char *e = getenv("FCLABEL_COMMIT_BLOCKS");
	if (e && *e && strtoul(e, NULL, 10) >= 1 && strtoul(e, NULL, 10) < img->commit_limit)
		img->commit_limit = strtoul(e, NULL, 10);
	if (img->commit_limit < 1 || (p.mode == IMGFMT_OV_JOURNAL &&
				      imgfmt_journal_capacity(img->journal) < 64)) {
		fprintf(stderr, "fclabel %s: %s: its journal is too small to write through\n", cmd,
			img->name);
		return -1;
	}
	img->ov_mode = p.mode;
	if ((rc = imgfmt_overlay_begin(fs->io, &p))) {
		fprintf(stderr, "fclabel %s: %s: %s\n", cmd, img->name, error_message(rc));
		return -1;
	}
	if (verbose)
		fprintf(stderr, "fclabel %s: %s: written in place %s\n", cmd, img->name,
			p.mode == IMGFMT_OV_JOURNAL ? "through its journal" : "in crash order");
	return 0;
}
