/*
 * Writing security.selinux and security.sehash on ext4 inodes: the label blocks files share, the
 * label alone in the inode body, any other attribute through libext2fs (a shared block copied
 * first), the commits in place, and the reference counts made right after a walk. The context,
 * its refusals, reading and the blocks held in memory are xattr.c's.
 *
 * Writing goes through libext2fs's ext2fs_xattr_* (checksums, in-inode placement, copy-on-write
 * of shared blocks) except in one case the library handles badly: an inode with no in-inode
 * room (128-byte inodes) whose only attribute is the label. The library would give each such
 * file its own 4 KiB block; like the kernel's mbcache we share one block per distinct label
 * (h_refcount up to EXT2_EXT_ATTR_REFCOUNT_MAX), which e2fsck accepts.
 *
 * Crash order. libext2fs keeps the allocation bitmaps in memory until the image is closed; a run
 * killed in between would leave inodes pointing at blocks the bitmap on disk calls free. So
 * every allocation and release is made durable in the order a crash can live with: a new block's
 * contents, then its bitmap block, group descriptor and superblock, then the inode that points
 * to it; a released block's inode first, then the bitmap. A reference is added to a shared
 * block before the inode points to it, and dropped after. With 128-byte inodes (where every
 * label lives in a block) the image is opened with libext2fs's block cache off, so these
 * writes reach the file in this order; what remains is the few microseconds between two of
 * them. Label-only blocks found on the image are shared like the ones we make, so a rerun
 * after a kill ends with the image an uninterrupted run gives.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Something that must reach the disk after the inodes that no longer use it (ordered). */
struct xattr_release {
	blk64_t blk;
	bool put; /* a reference dropped (put_block); else the block freed (the library's) */
};

/* The kernel sets ext_attr when it first writes an attribute: so do we, before the first one
 * reaches the image (in place: the superblock goes first). */
static errcode_t ensure_feature(struct xattr_ctx *x)
{
	ext2_filsys fs = x->fs;
	if (ext2fs_has_feature_xattr(fs->super))
		return 0;
	ext2fs_set_feature_xattr(fs->super);
	ext2fs_mark_super_dirty(fs);
	if (x->cache)
		return 0; /* a copy: ext2fs_close writes it */
	ext2fs_superblock_csum_set(fs, fs->super);
	return io_channel_write_byte(fs->io, SUPERBLOCK_OFFSET, SUPERBLOCK_SIZE, fs->super);
}

/* ---- allocation, made durable in crash order ---- */

/* Writes what ext2fs_block_alloc_stats2 changed for blk, as ext2fs_flush would: the group's
 * block bitmap, its descriptor block and the primary superblock. */
static errcode_t persist_alloc(struct xattr_ctx *x, blk64_t blk)
{
	ext2_filsys fs = x->fs;
	dgrp_t g = ext2fs_group_of_blk2(fs, blk);
	size_t nbytes = EXT2_CLUSTERS_PER_GROUP(fs->super) / 8;
	errcode_t rc;

	if (!fs->block_map || nbytes > fs->blocksize)
		return 0; /* nothing loaded to write (read-only), or a layout we leave to close */
	if (x->cache) {
		/* deferred: ext2fs_close writes them; memory as it would be in place */
		ext2fs_group_desc_csum_set(fs, g);
		ext2fs_superblock_csum_set(fs, fs->super);
		return 0;
	}
	memset(x->wbuf, 0xff, fs->blocksize);
	blk64_t first = EXT2FS_B2C(fs, fs->super->s_first_data_block) +
			(blk64_t)g * EXT2_CLUSTERS_PER_GROUP(fs->super);
	rc = ext2fs_get_block_bitmap_range2(fs->block_map, first, nbytes * 8,
					    x->wbuf);
	if (rc)
		return rc;
	if (g == fs->group_desc_count - 1) {
		/* the last group's bits past the end of the file system are set */
		blk64_t nbits = EXT2FS_NUM_B2C(fs, (ext2fs_blocks_count(fs->super) -
						    (blk64_t)fs->super->s_first_data_block) %
						   (blk64_t)EXT2_BLOCKS_PER_GROUP(fs->super));
		for (blk64_t j = nbits; nbits && j < (blk64_t)fs->blocksize * 8; j++)
			ext2fs_set_bit64(j, x->wbuf);
	}
	ext2fs_block_bitmap_csum_set(fs, g, x->wbuf, (int)nbytes);
	ext2fs_group_desc_csum_set(fs, g);
	rc = io_channel_write_blk64(fs->io, ext2fs_block_bitmap_loc(fs, g), 1, x->wbuf);
	if (rc)
		return rc;
	unsigned per = fs->blocksize / EXT2_DESC_SIZE(fs->super), i = g / per;
	rc = io_channel_write_blk64(fs->io,
				    ext2fs_descriptor_block_loc2(fs, fs->super->s_first_data_block, i),
				    1, (char *)fs->group_desc + (size_t)i * fs->blocksize);
	if (rc)
		return rc;
	ext2fs_superblock_csum_set(fs, fs->super);
	return io_channel_write_byte(fs->io, SUPERBLOCK_OFFSET, SUPERBLOCK_SIZE, fs->super);
}

/* ---- the shared-block path ---- */

/* A block holding exactly one attribute, security.selinux = v (len bytes, NUL included). */
static void build_block(struct xattr_ctx *x, const char *v, size_t len)
{
	char *b = x->wbuf;
	struct ext2_ext_attr_header *h = (struct ext2_ext_attr_header *)b;
	struct ext2_ext_attr_entry *e = (struct ext2_ext_attr_entry *)(b + sizeof(*h));
	size_t voff = x->fs->blocksize - EXT2_EXT_ATTR_SIZE(len);

	memset(b, 0, x->fs->blocksize);
	h->h_magic = EXT2_EXT_ATTR_MAGIC;
	h->h_refcount = 1;
	h->h_blocks = 1;
	e->e_name_len = XATTR_NAME_LEN;
	e->e_name_index = XATTR_SEC_INDEX;
	e->e_value_offs = (uint16_t)voff;
	e->e_value_size = (uint32_t)len;
	memcpy((char *)(e + 1), XATTR_NAME, XATTR_NAME_LEN);
	memcpy(b + voff, v, len);
	e->e_hash = ext2fs_ext_attr_hash_entry(e, b + voff);
	ext2fs_ext_attr_block_rehash(h, (struct ext2_ext_attr_entry *)
					(b + sizeof(*h) + EXT2_EXT_ATTR_LEN(XATTR_NAME_LEN)));
}

/* Takes a reference on a block holding only v, allocating one if needed. */
static errcode_t get_shared_block(struct xattr_ctx *x, ext2_ino_t ino,
				  struct ext2_inode_large *inode, const char *v, size_t len,
				  blk64_t *out)
{
	struct xattr_shared *s = xattr_shared_find(x, v, len);
	errcode_t rc;

	if (s && !xattr_read_block(x, ino, s->blk)) {
		struct ext2_ext_attr_header *h = (struct ext2_ext_attr_header *)x->block;
		const char *cv = NULL;
		size_t cl = 0;
		unsigned others;
		bool inum = false;
		/* still what we think it is, and room for one more reference */
		if (xattr_find_label(x->block, x->fs->blocksize, x->block + sizeof(*h), x->block,
				     &cv, &cl, &others, &inum) == 1 && !others && cl == len &&
		    !memcmp(cv, v, len) &&
		    h->h_refcount < EXT2_EXT_ATTR_REFCOUNT_MAX && h->h_blocks == 1) {
			h->h_refcount++;
			rc = xattr_write_block(x, ino, s->blk, x->block);
			if (rc) {
				x->block_nr = 0;
				return rc;
			}
			x->shared_refs++;
			s->refs = h->h_refcount;
			*out = s->blk;
			return 0;
		}
		if ((rc = xattr_shared_forget(x, s->blk)))
			return rc;
	}
	blk64_t goal = ext2fs_find_inode_goal(x->fs, ino, (struct ext2_inode *)inode, 0), blk;
	rc = ext2fs_new_block2(x->fs, goal, NULL, &blk);
	if (rc)
		return rc;
	build_block(x, v, len);
	/* the block is written before any inode points to it */
	rc = xattr_write_block(x, ino, blk, x->wbuf);
	if (rc)
		return rc;
	ext2fs_block_alloc_stats2(x->fs, blk, +1);
	if ((rc = persist_alloc(x, blk)))
		return rc;
	x->allocated++;
	x->block_nr = 0;
	*out = blk;
	return xattr_shared_remember(x, v, len, blk);
}

static errcode_t hold_release(struct xattr_ctx *x, blk64_t blk, bool put)
{
	if (x->nrel == x->caprel) {
		size_t c = x->caprel ? x->caprel * 2 : 64;
		struct xattr_release *n = realloc(x->rel, c * sizeof(*n));
		if (!n)
			return ENOMEM;
		x->rel = n;
		x->caprel = c;
	}
	x->rel[x->nrel++] = (struct xattr_release){ blk, put };
	return 0;
}

static errcode_t drop_ref(struct xattr_ctx *x, ext2_ino_t ino, blk64_t blk);

/* Drops this inode's reference on an attribute block (its inode no longer points to it): at
 * once, or (ordered) once the inodes are on disk. */
static errcode_t put_block(struct xattr_ctx *x, ext2_ino_t ino, blk64_t blk)
{
	if (x->ordered && !x->applying)
		return hold_release(x, blk, true);
	return drop_ref(x, ino, blk);
}

static errcode_t drop_ref(struct xattr_ctx *x, ext2_ino_t ino, blk64_t blk)
{
	errcode_t rc = xattr_read_block(x, ino, blk);
	if (rc)
		return rc;
	struct ext2_ext_attr_header *h = (struct ext2_ext_attr_header *)x->block;
	if (h->h_refcount <= 1) {
		if ((rc = xattr_shared_forget(x, blk)))
			return rc;
		x->block_nr = 0;
		/* what it last held is left on the image, as in place */
		if ((rc = xattr_cache_release(x, blk)))
			return rc;
		ext2fs_block_alloc_stats2(x->fs, blk, -1);
		return persist_alloc(x, blk);
	}
	h->h_refcount--;
	rc = xattr_write_block(x, ino, blk, x->block);
	if (rc)
		x->block_nr = 0;
	return rc;
}

static errcode_t set_shared(struct xattr_ctx *x, ext2_ino_t ino, struct ext2_inode_large *inode,
			    const char *v, size_t len)
{
	blk64_t old = ext2fs_file_acl_block(x->fs, (struct ext2_inode *)inode), blk;
	/* header, one entry, the end marker and the value must fit in one block */
	if (sizeof(struct ext2_ext_attr_header) + EXT2_EXT_ATTR_LEN(XATTR_NAME_LEN) + 4 +
	    EXT2_EXT_ATTR_SIZE(len) > x->fs->blocksize)
		return EXT2_ET_EA_NO_SPACE;
	errcode_t rc = get_shared_block(x, ino, inode, v, len, &blk);

	if (rc)
		return rc;
	ext2fs_file_acl_block_set(x->fs, (struct ext2_inode *)inode, blk);
	if (!old && (rc = ext2fs_iblk_add_blocks(x->fs, (struct ext2_inode *)inode, 1)))
		return rc;
	/* the owner is charged the block, as the kernel charges it */
	if (!old && (rc = quota_charge(x->quota, inode, EXT2_CLUSTER_SIZE(x->fs->super))))
		return rc;
	rc = ext2fs_write_inode_full(x->fs, ino, (struct ext2_inode *)inode, (int)x->isize);
	if (rc)
		return rc;
	/* the old block is released only once the inode no longer points to it */
	return old ? put_block(x, ino, old) : 0;
}

/*
 * The label alone in the inode body (the common case with 256-byte and larger inodes): written
 * here, without the library's read-all/rewrite-all of every attribute. Returns 1 when it does
 * not apply.
 */
static int set_in_inode(struct xattr_ctx *x, ext2_ino_t ino, struct ext2_inode_large *inode,
			const char *v, size_t len)
{
	size_t isize = EXT2_INODE_SIZE(x->fs->super);
	if (isize <= EXT2_GOOD_OLD_INODE_SIZE || inode->i_extra_isize < 4 ||
	    inode->i_extra_isize % 4 || EXT2_GOOD_OLD_INODE_SIZE + inode->i_extra_isize + 4u > isize)
		return 1;
	char *area = (char *)inode + EXT2_GOOD_OLD_INODE_SIZE + inode->i_extra_isize;
	size_t size = isize - EXT2_GOOD_OLD_INODE_SIZE - inode->i_extra_isize;
	size_t need = 4 + EXT2_EXT_ATTR_LEN(XATTR_NAME_LEN) + 4 + EXT2_EXT_ATTR_SIZE(len);
	if (need > size)
		return 1;
	/* values are relative to the first entry, just after the magic */
	size_t voff = size - 4 - EXT2_EXT_ATTR_SIZE(len);
	struct ext2_ext_attr_entry e = { 0 };
	memset(area, 0, size);
	*(uint32_t *)area = EXT2_EXT_ATTR_MAGIC;
	e.e_name_len = XATTR_NAME_LEN;
	e.e_name_index = XATTR_SEC_INDEX;
	e.e_value_offs = (uint16_t)voff;
	e.e_value_size = (uint32_t)len;
	memcpy(area + 4 + sizeof(e), XATTR_NAME, XATTR_NAME_LEN);
	memcpy(area + 4 + voff, v, len);
	memcpy(area + 4, &e, sizeof(e));
	e.e_hash = ext2fs_ext_attr_hash_entry((struct ext2_ext_attr_entry *)(area + 4), area + 4 + voff);
	memcpy(area + 4, &e, sizeof(e));
	return 0;
}

/*
 * The inode's attribute block (x->block holds it) copied to a new block that only it uses, the
 * inode pointed there, and its reference on the old one dropped: the new block is taken before
 * anything changes, so that an image with no free block leaves the file as it was (libext2fs's
 * own copy-on-write drops the shared block's count first, and keeps it dropped when no block is
 * free), and a kill in the middle can only leak the copy. *blk becomes the copy.
 */
static errcode_t copy_block(struct xattr_ctx *x, ext2_ino_t ino, struct ext2_inode_large *in,
			    blk64_t *blk)
{
	ext2_filsys fs = x->fs;
	blk64_t old = *blk, nb;
	errcode_t rc = xattr_may_allocate(x);
	if (rc)
		return rc;
	memcpy(x->wbuf, x->block, fs->blocksize);
	((struct ext2_ext_attr_header *)x->wbuf)->h_refcount = 1;
	blk64_t goal = ext2fs_find_inode_goal(fs, ino, (struct ext2_inode *)in, 0);
	if ((rc = ext2fs_new_block2(fs, goal, NULL, &nb)))
		return rc;
	if ((rc = xattr_write_block(x, ino, nb, x->wbuf)))
		return rc;
	ext2fs_block_alloc_stats2(fs, nb, +1);
	if ((rc = persist_alloc(x, nb)))
		return rc;
	x->allocated++;
	x->block_nr = 0;
	ext2fs_file_acl_block_set(fs, (struct ext2_inode *)in, nb);
	if ((rc = ext2fs_write_inode_full(fs, ino, (struct ext2_inode *)in, (int)x->isize)))
		return rc;
	*blk = nb;
	return put_block(x, ino, old);
}

/* Any attribute, through libext2fs (checksums, in-inode placement); a block it allocates or
 * frees is made durable as soon as it can be, and charged to the owner's quota. A shared block
 * (and, when the writes are ordered, any block) is copied first (copy_block), so that the
 * library only ever rewrites a block no inode on disk points to yet, or one only this inode
 * uses. */
static errcode_t set_by_library(struct xattr_ctx *x, ext2_ino_t ino, const char *name,
				const void *value, size_t len)
{
	struct ext2_inode_large *in = (struct ext2_inode_large *)x->ibuf;
	struct ext2_xattr_handle *h;
	errcode_t rc;

	x->block_nr = 0; /* the library may rewrite the block we cached */
	if ((rc = ext2fs_read_inode_full(x->fs, ino, (struct ext2_inode *)in, (int)x->isize)))
		return rc;
	blk64_t before = ext2fs_file_acl_block(x->fs, (struct ext2_inode *)in);
	blk64_t iblocks = ext2fs_get_stat_i_blocks(x->fs, (struct ext2_inode *)in);
	x->no_alloc = LINUX_S_ISLNK(in->i_mode) && (in->i_flags & EXT4_INLINE_DATA_FL);
	if (before) {
		if ((rc = xattr_read_block(x, ino, before)))
			goto out;
		if ((((struct ext2_ext_attr_header *)x->block)->h_refcount > 1 || x->ordered) &&
		    (rc = copy_block(x, ino, in, &before)))
			goto out;
		x->block_nr = 0;
		if ((rc = xattr_cache_release(x, before)))
			goto out;
	}
	if ((rc = ext2fs_xattrs_open(x->fs, ino, &h)))
		goto out;
	rc = ext2fs_xattrs_read(h);
	/* Values that fit in neither the inode nor one block would go to an EA inode, whose
	 * blocks and quota fclabel does not count: the library is not let make one. */
	bool ea_inode = ext2fs_has_feature_ea_inode(x->fs->super);
	if (ea_inode)
		ext2fs_clear_feature_ea_inode(x->fs->super);
	if (!rc)
		rc = ext2fs_xattr_set(h, name, value, len);
	if (ea_inode)
		ext2fs_set_feature_ea_inode(x->fs->super);
	if (rc == EXT2_ET_EA_NO_SPACE && ea_inode)
		rc = XATTR_E_TOO_BIG;
	errcode_t rc2 = ext2fs_xattrs_close(&h);
	if (rc || rc2) {
		rc = rc ? rc : rc2;
		goto out;
	}
	/* the library wrote the block and the inode; the bitmap follows as soon as it can */
	if ((rc = ext2fs_read_inode_full(x->fs, ino, (struct ext2_inode *)in, (int)x->isize)))
		goto out;
	blk64_t now = ext2fs_file_acl_block(x->fs, (struct ext2_inode *)in);
	int64_t delta = (int64_t)ext2fs_get_stat_i_blocks(x->fs, (struct ext2_inode *)in) -
			(int64_t)iblocks;
	if ((rc = quota_charge(x->quota, in, delta * 512)))
		goto out;
	if (now != before && now && (rc = persist_alloc(x, now)))
		goto out;
	if (now != before && before && ext2fs_group_of_blk2(x->fs, before) !=
	    (now ? ext2fs_group_of_blk2(x->fs, now) : (dgrp_t)-1))
		rc = persist_alloc(x, before);
out:
	x->no_alloc = false;
	return rc;
}

/* Whether the inode's attributes may be written (*others: how many besides the label). */
static errcode_t writable(struct xattr_ctx *x, ext2_ino_t ino, struct ext2_inode_large *inode,
			  unsigned *others)
{
	const char *cur;
	size_t curlen;
	bool inum;
	errcode_t rc = xattr_inspect(x, ino, inode, &cur, &curlen, others, &inum);
	if (rc)
		return rc;
	/* values in EA inodes: a rewrite would change what e2fsck checks of them; left alone */
	if (inum)
		return XATTR_E_EA_INODE;
	if ((rc = xattr_may_write(x)) || (rc = ensure_feature(x)))
		return rc;
	return 0;
}

/*
 * An inode written alone, as ext2fs_write_inode_full writes it (its checksum set the same way,
 * with the CPU's crc32c: inode_csum_set), but only its own bytes: the library reads the inode's
 * block and writes it whole, which in place the overlay copies whole again, for every inode
 * labeled. The library's inode cache is emptied, since its copy of the block (or of this inode)
 * is older now. Where a channel cannot write bytes, or the library would refuse (its error
 * then), the library writes it.
 */
static errcode_t write_inode_alone(struct xattr_ctx *x, ext2_ino_t ino,
				   const struct ext2_inode_large *inode)
{
	ext2_filsys fs = x->fs;
	size_t isize = EXT2_INODE_SIZE(fs->super);
	ext2_ino_t ipg = fs->super->s_inodes_per_group;
	blk64_t table = ext2fs_inode_table_loc(fs, (ino - 1) / ipg);
	unsigned long long off = table * (unsigned long long)fs->blocksize +
				 (unsigned long long)((ino - 1) % ipg) * isize;
	bool big_endian = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;

	if (big_endian || fs->write_inode || !(fs->flags & EXT2_FLAG_RW) || isize > x->isize ||
	    !fs->io->manager->write_byte || !table || table < fs->super->s_first_data_block ||
	    table + fs->inode_blocks_per_group - 1 >= ext2fs_blocks_count(fs->super) ||
	    off != (unsigned long)off)
		return ext2fs_write_inode_full(fs, ino, (struct ext2_inode *)inode, (int)x->isize);
	struct ext2_inode_large *w = (struct ext2_inode_large *)x->ibuf;
	memcpy(w, inode, isize);
	inode_csum_set(fs, ino, w);
	errcode_t rc = io_channel_write_byte(fs->io, (unsigned long)off, (int)isize, w);
	ext2fs_flush_icache(fs);
	if (rc == EXT2_ET_UNIMPLEMENTED)
		return ext2fs_write_inode_full(fs, ino, (struct ext2_inode *)inode, (int)x->isize);
	if (!rc)
		fs->flags |= EXT2_FLAG_CHANGED;
	return rc;
}

errcode_t xattr_set_label(struct xattr_ctx *x, ext2_ino_t ino, struct ext2_inode_large *inode,
			  const char *ctx)
{
	size_t len = strlen(ctx) + 1;
	unsigned others;
	errcode_t rc = writable(x, ino, inode, &others);
	if (rc)
		return rc;
	bool no_ibody = EXT2_INODE_SIZE(x->fs->super) <= EXT2_GOOD_OLD_INODE_SIZE;
	if (no_ibody && !others && !(inode->i_flags & EXT4_EA_INODE_FL))
		return set_shared(x, ino, inode, ctx, len);
	/* nothing but (perhaps) the label, and that in the body: rewrite the body only */
	if (!no_ibody && !others && !ext2fs_file_acl_block(x->fs, (struct ext2_inode *)inode) &&
	    set_in_inode(x, ino, inode, ctx, len) == 0)
		return write_inode_alone(x, ino, inode);
	return set_by_library(x, ino, "security.selinux", ctx, len);
}

errcode_t xattr_set_digest(struct xattr_ctx *x, ext2_ino_t ino, const unsigned char *digest,
			   size_t len)
{
	struct ext2_inode_large *in = (struct ext2_inode_large *)x->ibuf;
	unsigned others;
	errcode_t rc = ext2fs_read_inode_full(x->fs, ino, (struct ext2_inode *)in, (int)x->isize);
	if (!rc)
		rc = writable(x, ino, in, &others);
	return rc ? rc : set_by_library(x, ino, XATTR_DIGEST_NAME, digest, len);
}

/* ---- in place: commits ---- */

/* ordered: libext2fs freed a block (its ext2fs_free_ext_attr, when a file's attributes come to
 * fit in its inode): it stays in use until the inode no longer pointing to it is on disk. */
static void stats_hook(ext2_filsys fs, blk64_t blk, int inuse)
{
	struct xattr_ctx *x = fs->priv_data;
	if (!x || x->applying || inuse >= 0)
		return;
	x->applying = true;
	ext2fs_block_alloc_stats2(fs, blk, +1);
	x->applying = false;
	if (hold_release(x, blk, false) && !x->commit_failed)
		x->commit_failed = ENOMEM; /* (the next commit fails on it: the block is not freed) */
}

void xattr_set_inplace(struct xattr_ctx *x, bool ordered, size_t limit)
{
	x->inplace = true;
	x->ordered = ordered;
	x->commit_limit = limit;
	if (ordered)
		ext2fs_set_block_alloc_stats_callback(x->fs, stats_hook, &x->old_stats);
}

bool xattr_held(const struct xattr_ctx *x)
{
	return x && x->inplace && imgfmt_overlay_held(x->fs->io);
}

bool xattr_commit_due(const struct xattr_ctx *x)
{
	return x && x->inplace && imgfmt_overlay_held(x->fs->io) >= x->commit_limit;
}

/* The quota files' share of a commit: a failure fails the commit (and the run: what is held is
 * dropped, never written with labels whose blocks the quota files do not count). */
static errcode_t quota_step(struct xattr_ctx *x, int which)
{
	errcode_t rc = quota_commit(x->quota, which, x->quota_why, sizeof(x->quota_why));
	if (rc && !x->quota_rc)
		x->quota_rc = rc;
	return rc;
}

static errcode_t commit_once(struct xattr_ctx *x)
{
	errcode_t rc = 0;
	if (!x->ordered) {
		if ((rc = quota_step(x, QC_ALL)))
			return rc;
		return imgfmt_overlay_commit(x->fs->io);
	}
	/* charges, new blocks and references, then the inodes; then what they gave back */
	if ((rc = quota_step(x, QC_UP)) || (rc = imgfmt_overlay_commit(x->fs->io)))
		return rc;
	x->inodes_on_disk = true;
	x->applying = true;
	for (size_t i = 0; i < x->nrel && !rc; i++) {
		blk64_t b = x->rel[i].blk;
		if (x->rel[i].put) {
			rc = drop_ref(x, 0, b);
		} else {
			ext2fs_block_alloc_stats2(x->fs, b, -1);
			rc = persist_alloc(x, b);
		}
	}
	x->applying = false;
	if (rc)
		return rc;
	x->nrel = 0;
	if ((rc = quota_step(x, QC_DOWN)))
		return rc;
	return imgfmt_overlay_commit(x->fs->io);
}

bool xattr_commit_failed(const struct xattr_ctx *x)
{
	return x && x->commit_failed;
}

bool xattr_inodes_on_disk(const struct xattr_ctx *x)
{
	return x->inodes_on_disk;
}

errcode_t xattr_commit(struct xattr_ctx *x)
{
	if (!x->inplace)
		return 0;
	x->inodes_on_disk = false;
	/* a commit that failed part of the way leaves memory ahead of the disk: no other follows */
	if (!x->commit_failed)
		x->commit_failed = commit_once(x);
	return x->commit_failed;
}

errcode_t xattr_finish(struct xattr_ctx *x, char *why, size_t n)
{
	errcode_t rc;
	*why = 0;
	if (!x->inplace)
		return quota_commit(x->quota, QC_ALL, why, n);
	if ((rc = xattr_commit(x)) && x->quota_rc == rc && rc != ENOMEM)
		snprintf(why, n, "%s", x->quota_why);
	return rc;
}

static int cmp_blk(const void *a, const void *b)
{
	blk64_t p = *(const blk64_t *)a, q = *(const blk64_t *)b;
	return p < q ? -1 : p > q;
}

errcode_t xattr_reconcile(struct xattr_ctx *x, unsigned long *fixed)
{
	ext2_filsys fs = x->fs;
	ext2_inode_scan scan;
	struct ext2_inode inode;
	ext2_ino_t ino;
	unsigned *refs = NULL;
	size_t n = 0;
	const struct orphans *orphans;
	errcode_t rc;

	*fixed = 0;
	if (!(fs->flags & EXT2_FLAG_RW))
		return 0;
	/* an orphan's reference is as real as a file's: a mount releases it */
	if ((rc = xattr_orphans(x, &orphans)))
		return rc;
	/* Only the counts read from the image can be wrong (those of the blocks this run made are
	 * exact: each change of an inode's block moved a reference from the one to the other):
	 * the image's blocks labels share, and those out of sh (recheck), sorted by number for a
	 * binary search per inode. */
	blk64_t *blks = malloc((x->nsh + x->nrecheck + 1) * sizeof(*blks));
	if (!blks)
		return ENOMEM;
	for (size_t i = 0; i < x->nsh; i++)
		if (x->sh[i].found)
			blks[n++] = x->sh[i].blk;
	for (size_t i = 0; x->recheck && i <= x->maskrecheck; i++)
		if (x->recheck[i])
			blks[n++] = x->recheck[i];
	qsort(blks, n, sizeof(*blks), cmp_blk);
	size_t u = 0;
	for (size_t i = 0; i < n; i++)
		if (!u || blks[u - 1] != blks[i])
			blks[u++] = blks[i];
	n = u;
	if (!n) {
		free(blks);
		return 0;
	}
	if (!(refs = calloc(n, sizeof(*refs)))) {
		rc = ENOMEM;
		goto out;
	}
	if ((rc = ext2fs_open_inode_scan(fs, 0, &scan)))
		goto out;
	for (;;) {
		rc = ext2fs_get_next_inode(scan, &ino, &inode);
		/* an inode whose checksum fails is still returned, and still counts (as e2fsck
		 * counts it): a damaged inode must not stop the count (and fail the run) */
		if (rc == EXT2_ET_INODE_CSUM_INVALID || rc == EXT2_ET_INODE_IS_GARBAGE)
			rc = 0;
		if (rc || !ino)
			break;
		blk64_t b = ext2fs_file_acl_block(fs, &inode);
		if (!b || !inode_holds_blocks(orphans, ino, &inode))
			continue;
		blk64_t *hit = bsearch(&b, blks, n, sizeof(*blks), cmp_blk);
		if (hit)
			refs[hit - blks]++;
	}
	ext2fs_close_inode_scan(scan);
	if (rc)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (!refs[i] || xattr_read_block(x, 0, blks[i]))
			continue;
		struct ext2_ext_attr_header *h = (struct ext2_ext_attr_header *)x->block;
		if (h->h_refcount == refs[i])
			continue;
		h->h_refcount = refs[i];
		if ((rc = xattr_write_block(x, 0, blks[i], x->block))) {
			x->block_nr = 0;
			goto out;
		}
		(*fixed)++;
	}
out:
	free(refs);
	free(blks);
	return rc;
}
