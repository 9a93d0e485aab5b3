/*
 * Orphans: inodes that a mounted file system unlinked (links count 0), or was truncating, while
 * a process still held them open. An image copied from a frozen or crashed mount keeps them,
 * with their blocks and their attribute-block references, until the next mount (or e2fsck)
 * releases them: so wherever fclabel counts the inodes in use (the block claims, the users of
 * an attribute block), an orphan counts too. A count made without them "corrects" a shared
 * block's h_refcount down, and the release then frees a block other files still use.
 *
 * Two places list them, both read here as the kernel's ext4_orphan_cleanup and e2fsck's
 * release_orphan_inodes read them: the chain from the superblock's s_last_orphan through each
 * inode's i_dtime, and, with orphan_file and orphan_present, the orphan file
 * (s_orphan_file_inum): blocks of 32-bit inode numbers (0: an empty slot) ending in a tail
 * whose magic says the block is one. Both come from the image: a chain that loops or runs on
 * stops at an inode seen before (at most s_inodes_count of them), numbers outside the inode
 * range or of inodes the bitmap calls free are not orphans, and no more of the file is read
 * than the kernel reads of one.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

#define ORPHAN_FILE_MAX (8u << 20)

struct orphans {
	ext2fs_inode_bitmap set; /* NULL: none */
};

/* Adds ino; false when it is not one (out of range, free) or was seen already (a loop). */
static bool add(ext2_filsys fs, struct orphans *o, ext2_ino_t ino, errcode_t *rc)
{
	if (ino < EXT2_FIRST_INO(fs->super) || ino > fs->super->s_inodes_count)
		return false;
	/* an inode the bitmap calls free holds nothing (its blocks may be another's by now) */
	if (fs->inode_map && !ext2fs_test_inode_bitmap2(fs->inode_map, ino))
		return false;
	if (!o->set && (*rc = ext2fs_allocate_inode_bitmap(fs, "orphan inodes", &o->set)))
		return false;
	if (ext2fs_test_inode_bitmap2(o->set, ino))
		return false;
	ext2fs_mark_inode_bitmap2(o->set, ino);
	return true;
}

/* The orphan list: s_last_orphan, then each inode's i_dtime. */
static errcode_t read_list(ext2_filsys fs, struct orphans *o)
{
	ext2_ino_t ino = fs->super->s_last_orphan;
	errcode_t rc = 0;

	while (ino && add(fs, o, ino, &rc)) {
		struct ext2_inode in;
		errcode_t r = ext2fs_read_inode(fs, ino, &in);
		/* a damaged inode is still an orphan, but where it points next cannot be trusted */
		if (r == EXT2_ET_INODE_CSUM_INVALID || r == EXT2_ET_INODE_IS_GARBAGE)
			break;
		if (r)
			return r;
		ino = in.i_dtime;
	}
	return rc;
}

/* The orphan file's blocks (orphan_file): those that are orphan blocks (the tail's magic). */
static errcode_t read_file(ext2_filsys fs, struct orphans *o)
{
	ext2_ino_t ino = fs->super->s_orphan_file_inum;
	struct ext2_inode in;
	errcode_t rc;
	char *buf;

	/* (without orphan_present, neither the kernel nor e2fsck releases what the file holds) */
	if (!ext2fs_has_feature_orphan_file(fs->super) ||
	    !ext2fs_has_feature_orphan_present(fs->super) || !ino || ino > fs->super->s_inodes_count)
		return 0;
	if ((rc = ext2fs_read_inode(fs, ino, &in)))
		return rc == EXT2_ET_INODE_CSUM_INVALID ? 0 : rc;
	if (!LINUX_S_ISREG(in.i_mode))
		return 0;
	unsigned per = (unsigned)ext2fs_inodes_per_orphan_block(fs);
	blk64_t n = EXT2_I_SIZE(&in) / fs->blocksize;
	/* (the kernel spreads its entries over the blocks, one per CPU; it mounts no orphan file
	 * past 8 MiB: Linux commit 0a6ce20c1564) */
	if (n > ORPHAN_FILE_MAX / fs->blocksize)
		n = ORPHAN_FILE_MAX / fs->blocksize;
	if (!(buf = malloc(fs->blocksize)))
		return ENOMEM;
	for (blk64_t i = 0; i < n; i++) {
		blk64_t b = 0;
		/* (one block's mapping at a time: a damaged tree costs a lookup per block at most) */
		if ((rc = ext2fs_bmap2(fs, ino, &in, NULL, 0, i, NULL, &b)))
			break;
		if (!b || b < fs->super->s_first_data_block || b >= ext2fs_blocks_count(fs->super))
			continue;
		if ((rc = io_channel_read_blk64(fs->io, b, 1, buf)))
			break;
		const struct ext4_orphan_block_tail *t = ext2fs_orphan_block_tail(fs, buf);
		if (ext2fs_le32_to_cpu(t->ob_magic) != EXT4_ORPHAN_BLOCK_MAGIC)
			continue;
		const uint32_t *v = (const uint32_t *)buf;
		for (unsigned j = 0; j < per && !rc; j++)
			if (v[j])
				add(fs, o, ext2fs_le32_to_cpu(v[j]), &rc);
		if (rc)
			break;
	}
	free(buf);
	return rc;
}

errcode_t orphans_read(ext2_filsys fs, struct orphans **out)
{
	struct orphans *o = calloc(1, sizeof(*o));
	errcode_t rc;

	*out = NULL;
	if (!o)
		return ENOMEM;
	if ((rc = read_list(fs, o)) || (rc = read_file(fs, o))) {
		orphans_free(o);
		return rc;
	}
	*out = o;
	return 0;
}

void orphans_free(struct orphans *o)
{
	if (!o)
		return;
	if (o->set)
		ext2fs_free_inode_bitmap(o->set);
	free(o);
}

bool inode_holds_blocks(const struct orphans *o, ext2_ino_t ino, const struct ext2_inode *in)
{
	return in->i_links_count || (o && o->set && ext2fs_test_inode_bitmap2(o->set, ino));
}
