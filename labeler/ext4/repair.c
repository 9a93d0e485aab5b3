/*
 * What a run killed on an image without a journal can leave, repaired by the next run. There the
 * writes go in crash order (imgfmt/overlay.c), and the superblock says the file system is not
 * clean until the run ends; what a kill leaves is a leak: attribute blocks marked in use that no
 * inode points to, free counts and bitmap checksums that lag, reference counts and quota usage
 * too high. The next run (this file) looks as e2fsck's passes would at exactly those things and
 * makes them right, and refuses the image when it finds anything else (a claimed block the
 * bitmap calls free, a block claimed twice): that is not a leak, and is e2fsck's to repair.
 */
#include <errno.h>
#include <et/com_err.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct scan {
	ext2_filsys fs;
	const struct orphans *orphans; /* they hold their blocks and references too */
	blk64_t *ea;          /* the attribute block of each inode in use */
	size_t nea, capea;
	struct quota *usage;  /* what each owner's inodes use (NULL: no quota) */
	bool ea_inode;        /* an EA inode seen: its space is charged in ways not counted here */
	int err;
};

/* Inodes in use (links count not 0) and orphans: what holds blocks and references. Quota is
 * e2fsck's count (links count not 0): orphans are not charged there. */
static int scan_inode(ext2_filsys fs, ext2_ino_t ino, const struct ext2_inode *in, void *arg)
{
	struct scan *s = arg;
	if (!inode_holds_blocks(s->orphans, ino, in))
		return 0;
	blk64_t b = ext2fs_file_acl_block(fs, (struct ext2_inode *)in);
	if (b) {
		if (s->nea == s->capea) {
			size_t c = s->capea ? s->capea * 2 : 1024;
			blk64_t *n = realloc(s->ea, c * sizeof(*n));
			if (!n) {
				s->err = ENOMEM;
				return -1;
			}
			s->ea = n;
			s->capea = c;
		}
		s->ea[s->nea++] = b;
	}
	if (in->i_flags & EXT4_EA_INODE_FL)
		s->ea_inode = true;
	/* e2fsck's pass 1 charges the root and every inode from s_first_ino on, but the project
	 * quota file, the orphan file and EA inodes, what they use */
	struct ext2_super_block *sb = fs->super;
	if (s->usage && in->i_links_count && (ino == EXT2_ROOT_INO || ino >= EXT2_FIRST_INO(sb)) &&
	    !(in->i_flags & EXT4_EA_INODE_FL) && ino != sb->s_orphan_file_inum &&
	    !(ext2fs_has_feature_project(sb) && ino == sb->s_prj_quota_inum)) {
		blk64_t n = ext2fs_get_stat_i_blocks(fs, (struct ext2_inode *)in);
		if (n && quota_charge(s->usage, (const struct ext2_inode_large *)in,
				      (int64_t)n * 512)) {
			s->err = ENOMEM;
			return -1;
		}
	}
	return 0;
}

static int cmp_blk(const void *a, const void *b)
{
	blk64_t x = *(const blk64_t *)a, y = *(const blk64_t *)b;
	return x < y ? -1 : x > y;
}

/* Blocks marked in use that nothing claims and that hold an attribute block (what an
 * interrupted run allocates): freed. Others are left to e2fsck (*other). */
static errcode_t free_leaks(ext2_filsys fs, ext2fs_block_bitmap claimed, unsigned long *freed,
			    unsigned long *other)
{
	char *buf = malloc(fs->blocksize);
	blk64_t end = ext2fs_blocks_count(fs->super) - 1, b = fs->super->s_first_data_block;
	errcode_t rc = 0;

	if (!buf)
		return ENOMEM;
	while (b <= end && !ext2fs_find_first_set_block_bitmap2(fs->block_map, b, end, &b)) {
		if (!ext2fs_test_block_bitmap2(claimed, b)) {
			const struct ext2_ext_attr_header *h = (const void *)buf;
			if ((rc = io_channel_read_blk64(fs->io, b, 1, buf)))
				break;
			if (h->h_magic == EXT2_EXT_ATTR_MAGIC && h->h_blocks == 1) {
				ext2fs_block_alloc_stats2(fs, b, -1);
				(*freed)++;
			} else {
				(*other)++;
			}
		}
		/* the next cluster */
		b = EXT2FS_C2B(fs, EXT2FS_B2C(fs, b) + 1);
	}
	free(buf);
	return rc;
}

/* The free block counts (each group's, the superblock's) made what the bitmap says; the
 * bitmaps and descriptors are written, with their checksums, by the flush that follows. */
static unsigned long recount(ext2_filsys fs)
{
	blk64_t per = EXT2_CLUSTERS_PER_GROUP(fs->super), total = 0;
	unsigned long fixed = 0;
	for (dgrp_t g = 0; g < fs->group_desc_count; g++) {
		blk64_t first = EXT2FS_B2C(fs, ext2fs_group_first_block2(fs, g));
		blk64_t n = EXT2FS_B2C(fs, ext2fs_group_last_block2(fs, g)) - first + 1, used = 0;
		for (blk64_t i = 0; i < n && n <= per; i++)
			used += ext2fs_fast_test_block_bitmap2(fs->block_map, EXT2FS_C2B(fs, first + i)) != 0;
		if (n - used != ext2fs_bg_free_blocks_count(fs, g)) {
			ext2fs_bg_free_blocks_count_set(fs, g, (uint32_t)(n - used));
			ext2fs_group_desc_csum_set(fs, g);
			fixed++;
		}
		total += n - used;
	}
	if (EXT2FS_C2B(fs, total) != ext2fs_free_blocks_count(fs->super)) {
		ext2fs_free_blocks_count_set(fs->super, EXT2FS_C2B(fs, total));
		fixed++;
	}
	/* everything is written again: checksums made right on the way */
	ext2fs_mark_bb_dirty(fs);
	ext2fs_mark_super_dirty(fs);
	return fixed;
}

/* Each attribute block's h_refcount made the number of inodes in use pointing at it. */
static errcode_t fix_refcounts(ext2_filsys fs, struct scan *s, unsigned long *fixed)
{
	char *buf = malloc(fs->blocksize);
	errcode_t rc = 0;
	if (!buf)
		return ENOMEM;
	qsort(s->ea, s->nea, sizeof(*s->ea), cmp_blk);
	for (size_t i = 0, j; i < s->nea && !rc; i = j) {
		for (j = i; j < s->nea && s->ea[j] == s->ea[i]; j++)
			;
		struct ext2_ext_attr_header *h = (struct ext2_ext_attr_header *)buf;
		if (s->ea[i] < fs->super->s_first_data_block || s->ea[i] >= ext2fs_blocks_count(fs->super) ||
		    io_channel_read_blk64(fs->io, s->ea[i], 1, buf) || h->h_magic != EXT2_EXT_ATTR_MAGIC ||
		    h->h_refcount == j - i)
			continue; /* (a block that is not one is the inodes' problem, reported there) */
		h->h_refcount = (uint32_t)(j - i);
		if (!(rc = ext2fs_write_ext_attr3(fs, s->ea[i], buf, 0)))
			(*fixed)++;
	}
	free(buf);
	return rc;
}

int img_repair(struct image *img, const char *cmd)
{
	ext2_filsys fs = img->fs;
	struct claims_result cl = { .keep = true };
	struct scan s = { .fs = fs };
	unsigned long freed = 0, other = 0, counts = 0, refs = 0, quota = 0;
	char why[512] = "";
	struct quota *q = NULL;
	struct orphans *orphans = NULL;
	errcode_t rc;
	int ret = -1;

	if ((rc = orphans_read(fs, &orphans))) {
		snprintf(why, sizeof(why), "its orphans could not be read: %s", error_message(rc));
		goto out;
	}
	s.orphans = orphans;
	if ((rc = claims_scan(fs, orphans, &cl))) {
		snprintf(why, sizeof(why), "its block claims could not be read: %s", ext4_strerror(rc));
		goto out;
	}
	if (cl.cross[0] || cl.free[0]) {
		snprintf(why, sizeof(why), "%s", cl.cross[0] ? cl.cross : cl.free);
		goto out;
	}
	if (ext2fs_has_feature_quota(fs->super) && (!(s.usage = quota_new(fs)) || !(q = quota_new(fs)))) {
		rc = ENOMEM;
		goto failed;
	}
	if ((rc = itable_each(fs, scan_inode, &s)) || (rc = s.err))
		goto failed;
	if ((rc = free_leaks(fs, cl.claimed, &freed, &other)))
		goto failed;
	counts = recount(fs);
	if ((rc = fix_refcounts(fs, &s, &refs)))
		goto failed;
	if (q && !s.ea_inode && (rc = quota_repair(q, s.usage, &quota, why, sizeof(why))))
		goto out;
	/* what was made right goes to the disk before any label */
	if ((rc = ext2fs_flush2(fs, img->no_sync ? EXT2_FLAG_FLUSH_NO_SYNC : 0)))
		goto failed;
	if (freed || refs || quota || counts)
		fprintf(stderr, "fclabel %s: %s: was not cleanly closed (an interrupted write, or a "
			"crash); repaired what that leaves: %lu leaked attribute block%s freed, %lu "
			"reference count%s and %lu quota usage%s made right, free counts recounted%s\n",
			cmd, img->name, freed, freed == 1 ? "" : "s", refs, refs == 1 ? "" : "s", quota,
			quota == 1 ? "" : "s", other ? "" : "; nothing else found wrong");
	if (other)
		fprintf(stderr, "fclabel %s: %s: note: %lu block%s marked in use that no file claims "
			"and that are not attribute blocks: left to e2fsck (a leak is harmless)\n", cmd,
			img->name, other, other == 1 ? "" : "s");
	ret = 0;
	goto out;
failed:
	snprintf(why, sizeof(why), "%s", error_message(rc));
out:
	if (ret)
		fprintf(stderr, "fclabel %s: %s: its superblock says it was not cleanly closed, and "
			"what was found is not only what an interrupted write leaves: %s; refusing to "
			"write (run e2fsck -f first)\n", cmd, img->name, why);
	if (cl.claimed)
		ext2fs_free_block_bitmap(cl.claimed);
	quota_free(s.usage);
	quota_free(q);
	orphans_free(orphans);
	free(s.ea);
	return ret;
}
