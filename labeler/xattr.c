/*
 * security.selinux on ext4 inodes.
 *
 * Reading parses the in-inode area and the EA block directly (bounds-checked: images arrive
 * from people we do not control), with the last EA block kept, since shared blocks repeat.
 *
 * Writing goes through libext2fs's ext2fs_xattr_* (checksums, in-inode placement, copy-on-write
 * of shared blocks) except in one case the library handles badly: an inode with no in-inode
 * room (128-byte inodes) whose only attribute is the label. The library would give each such
 * file its own 4 KiB block; like the kernel's mbcache we share one block per distinct label
 * (h_refcount up to EXT2_EXT_ATTR_REFCOUNT_MAX), which e2fsck accepts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "label.h"

#define SEC_INDEX 6 /* "security." */
#define NAME "selinux"
#define NAME_LEN 7

struct shared {
	char *value; /* label with its NUL */
	size_t len;
	blk64_t blk;
};

struct xattr_ctx {
	ext2_filsys fs;
	char *block;        /* last EA block read */
	blk64_t block_nr;
	char *wbuf;
	char *value;        /* copy of the value returned by xattr_get_label */
	size_t value_cap;
	struct shared *sh;  /* label -> a block holding only it */
	size_t nsh, capsh;
	unsigned long allocated, shared_refs;
	size_t isize;
};

struct xattr_ctx *xattr_new(ext2_filsys fs)
{
	struct xattr_ctx *x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->fs = fs;
	x->isize = EXT2_INODE_SIZE(fs->super);
	if (x->isize < sizeof(struct ext2_inode_large))
		x->isize = sizeof(struct ext2_inode_large);
	x->block = malloc(fs->blocksize);
	x->wbuf = malloc(fs->blocksize);
	if (!x->block || !x->wbuf) {
		xattr_free(x);
		return NULL;
	}
	return x;
}

void xattr_free(struct xattr_ctx *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->nsh; i++)
		free(x->sh[i].value);
	free(x->sh);
	free(x->block);
	free(x->wbuf);
	free(x->value);
	free(x);
}

void xattr_stats(const struct xattr_ctx *x, unsigned long *allocated, unsigned long *shared)
{
	*allocated = x->allocated;
	*shared = x->shared_refs;
}

/*
 * Finds security.selinux among the entries starting at first, values relative to vbase,
 * everything inside [area, area+size). Returns 1 found, 0 absent, -1 corrupt.
 * *others counts the other entries.
 */
static int find_label(const char *area, size_t size, const char *first, const char *vbase,
		      const char **val, size_t *len, unsigned *others)
{
	const char *end = area + size, *p = first;

	*others = 0;
	while (p + sizeof(uint32_t) <= end) {
		struct ext2_ext_attr_entry e;
		if (*(const uint32_t *)p == 0)
			return *val ? 1 : 0;
		if (p + sizeof(e) > end)
			return -1;
		memcpy(&e, p, sizeof(e));
		const char *name = p + sizeof(e);
		if (name + e.e_name_len > end)
			return -1;
		if (e.e_name_index == SEC_INDEX && e.e_name_len == NAME_LEN &&
		    !memcmp(name, NAME, NAME_LEN) && e.e_value_inum == 0) {
			const char *v = vbase + e.e_value_offs;
			if (v < area || v > end || e.e_value_size > (size_t)(end - v))
				return -1;
			*val = v;
			*len = e.e_value_size;
		} else {
			(*others)++;
		}
		p += EXT2_EXT_ATTR_LEN(e.e_name_len);
	}
	return -1;
}

/* Reads the inode's EA block into x->block. */
static errcode_t read_block(struct xattr_ctx *x, ext2_ino_t ino, blk64_t blk)
{
	errcode_t rc;

	if (blk < x->fs->super->s_first_data_block || blk >= ext2fs_blocks_count(x->fs->super))
		return EXT2_ET_BAD_EA_BLOCK_NUM;
	if (blk == x->block_nr)
		return 0;
	x->block_nr = 0;
	rc = ext2fs_read_ext_attr3(x->fs, blk, x->block, ino);
	if (rc)
		return rc;
	if (((struct ext2_ext_attr_header *)x->block)->h_magic != EXT2_EXT_ATTR_MAGIC)
		return EXT2_ET_BAD_EA_HEADER;
	x->block_nr = blk;
	return 0;
}

/* The label and the count of other attributes of an inode; 0 or an errcode_t. */
static errcode_t inspect(struct xattr_ctx *x, ext2_ino_t ino, struct ext2_inode_large *inode,
			 const char **val, size_t *len, unsigned *others)
{
	unsigned o1 = 0, o2 = 0;
	errcode_t rc;

	*val = NULL;
	*len = 0;
	if (EXT2_INODE_SIZE(x->fs->super) > EXT2_GOOD_OLD_INODE_SIZE &&
	    inode->i_extra_isize >= 4 &&
	    EXT2_GOOD_OLD_INODE_SIZE + inode->i_extra_isize + 4u <= EXT2_INODE_SIZE(x->fs->super)) {
		const char *base = (const char *)inode;
		const char *area = base + EXT2_GOOD_OLD_INODE_SIZE + inode->i_extra_isize;
		size_t size = EXT2_INODE_SIZE(x->fs->super) - EXT2_GOOD_OLD_INODE_SIZE -
			      inode->i_extra_isize;
		if (*(const uint32_t *)area == EXT2_EXT_ATTR_MAGIC &&
		    find_label(area, size, area + 4, area + 4, val, len, &o1) < 0)
			return EXT2_ET_EA_BAD_NAME_LEN; /* corrupt in-inode attributes */
	}
	blk64_t blk = ext2fs_file_acl_block(x->fs, (struct ext2_inode *)inode);
	if (blk) {
		if ((rc = read_block(x, ino, blk)))
			return rc;
		const char *v = NULL;
		size_t l = 0;
		if (find_label(x->block, x->fs->blocksize,
			       x->block + sizeof(struct ext2_ext_attr_header), x->block, &v, &l,
			       &o2) < 0)
			return EXT2_ET_BAD_EA_HEADER;
		if (v && !*val) {
			*val = v;
			*len = l;
		} else if (v) {
			o2++;
		}
	}
	*others = o1 + o2;
	return 0;
}

errcode_t xattr_get_label(struct xattr_ctx *x, ext2_ino_t ino, struct ext2_inode_large *inode,
			  const char **val, size_t *len)
{
	unsigned others;
	errcode_t rc = inspect(x, ino, inode, val, len, &others);
	if (rc || !*val)
		return rc;
	/* copy: the block buffer is reused */
	if (*len + 1 > x->value_cap) {
		char *n = realloc(x->value, *len + 1);
		if (!n)
			return ENOMEM;
		x->value = n;
		x->value_cap = *len + 1;
	}
	memcpy(x->value, *val, *len);
	x->value[*len] = 0;
	*val = x->value;
	return 0;
}

/* ---- the shared-block path ---- */

static struct shared *shared_find(struct xattr_ctx *x, const char *v, size_t len)
{
	for (size_t i = 0; i < x->nsh; i++)
		if (x->sh[i].len == len && !memcmp(x->sh[i].value, v, len))
			return &x->sh[i];
	return NULL;
}

static void shared_forget(struct xattr_ctx *x, blk64_t blk)
{
	for (size_t i = 0; i < x->nsh; i++)
		if (x->sh[i].blk == blk) {
			free(x->sh[i].value);
			x->sh[i] = x->sh[--x->nsh];
			return;
		}
}

static errcode_t shared_remember(struct xattr_ctx *x, const char *v, size_t len, blk64_t blk)
{
	struct shared *s = shared_find(x, v, len);
	if (s) {
		s->blk = blk;
		return 0;
	}
	if (x->nsh == x->capsh) {
		size_t c = x->capsh ? x->capsh * 2 : 16;
		struct shared *n = realloc(x->sh, c * sizeof(*n));
		if (!n)
			return ENOMEM;
		x->sh = n;
		x->capsh = c;
	}
	s = &x->sh[x->nsh];
	if (!(s->value = malloc(len)))
		return ENOMEM;
	memcpy(s->value, v, len);
	s->len = len;
	s->blk = blk;
	x->nsh++;
	return 0;
}

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
	e->e_name_len = NAME_LEN;
	e->e_name_index = SEC_INDEX;
	e->e_value_offs = (uint16_t)voff;
	e->e_value_size = (uint32_t)len;
	memcpy((char *)(e + 1), NAME, NAME_LEN);
	memcpy(b + voff, v, len);
	e->e_hash = ext2fs_ext_attr_hash_entry(e, b + voff);
	ext2fs_ext_attr_block_rehash(h, (struct ext2_ext_attr_entry *)(b + sizeof(*h) +
									EXT2_EXT_ATTR_LEN(NAME_LEN)));
}

/* Takes a reference on a block holding only v, allocating one if needed. */
static errcode_t get_shared_block(struct xattr_ctx *x, ext2_ino_t ino,
				  struct ext2_inode_large *inode, const char *v, size_t len,
				  blk64_t *out)
{
	struct shared *s = shared_find(x, v, len);
	errcode_t rc;

	if (s && !read_block(x, ino, s->blk)) {
		struct ext2_ext_attr_header *h = (struct ext2_ext_attr_header *)x->block;
		const char *cv = NULL;
		size_t cl = 0;
		unsigned others;
		/* still what we think it is, and room for one more reference */
		if (find_label(x->block, x->fs->blocksize, x->block + sizeof(*h), x->block, &cv,
			       &cl, &others) == 1 && !others && cl == len && !memcmp(cv, v, len) &&
		    h->h_refcount < EXT2_EXT_ATTR_REFCOUNT_MAX && h->h_blocks == 1) {
			h->h_refcount++;
			rc = ext2fs_write_ext_attr3(x->fs, s->blk, x->block, ino);
			if (rc) {
				x->block_nr = 0;
				return rc;
			}
			x->shared_refs++;
			*out = s->blk;
			return 0;
		}
		shared_forget(x, s->blk);
	}
	blk64_t goal = ext2fs_find_inode_goal(x->fs, ino, (struct ext2_inode *)inode, 0), blk;
	rc = ext2fs_new_block2(x->fs, goal, NULL, &blk);
	if (rc)
		return rc;
	build_block(x, v, len);
	/* the block is written before any inode points to it */
	rc = ext2fs_write_ext_attr3(x->fs, blk, x->wbuf, ino);
	if (rc)
		return rc;
	ext2fs_block_alloc_stats2(x->fs, blk, +1);
	x->allocated++;
	x->block_nr = 0;
	*out = blk;
	return shared_remember(x, v, len, blk);
}

/* Drops this inode's reference on a label-only block. */
static errcode_t put_block(struct xattr_ctx *x, ext2_ino_t ino, blk64_t blk)
{
	errcode_t rc = read_block(x, ino, blk);
	if (rc)
		return rc;
	struct ext2_ext_attr_header *h = (struct ext2_ext_attr_header *)x->block;
	if (h->h_refcount <= 1) {
		shared_forget(x, blk);
		x->block_nr = 0;
		ext2fs_block_alloc_stats2(x->fs, blk, -1);
		return 0;
	}
	h->h_refcount--;
	rc = ext2fs_write_ext_attr3(x->fs, blk, x->block, ino);
	if (rc)
		x->block_nr = 0;
	return rc;
}

static errcode_t set_shared(struct xattr_ctx *x, ext2_ino_t ino, struct ext2_inode_large *inode,
			    const char *v, size_t len)
{
	blk64_t old = ext2fs_file_acl_block(x->fs, (struct ext2_inode *)inode), blk;
	/* header, one entry, the end marker and the value must fit in one block */
	if (sizeof(struct ext2_ext_attr_header) + EXT2_EXT_ATTR_LEN(NAME_LEN) + 4 +
	    EXT2_EXT_ATTR_SIZE(len) > x->fs->blocksize)
		return EXT2_ET_EA_NO_SPACE;
	errcode_t rc = get_shared_block(x, ino, inode, v, len, &blk);

	if (rc)
		return rc;
	ext2fs_file_acl_block_set(x->fs, (struct ext2_inode *)inode, blk);
	if (!old && (rc = ext2fs_iblk_add_blocks(x->fs, (struct ext2_inode *)inode, 1)))
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
	size_t need = 4 + EXT2_EXT_ATTR_LEN(NAME_LEN) + 4 + EXT2_EXT_ATTR_SIZE(len);
	if (need > size)
		return 1;
	/* values are relative to the first entry, just after the magic */
	size_t voff = size - 4 - EXT2_EXT_ATTR_SIZE(len);
	struct ext2_ext_attr_entry e = { 0 };
	memset(area, 0, size);
	*(uint32_t *)area = EXT2_EXT_ATTR_MAGIC;
	e.e_name_len = NAME_LEN;
	e.e_name_index = SEC_INDEX;
	e.e_value_offs = (uint16_t)voff;
	e.e_value_size = (uint32_t)len;
	memcpy(area + 4 + sizeof(e), NAME, NAME_LEN);
	memcpy(area + 4 + voff, v, len);
	memcpy(area + 4, &e, sizeof(e));
	e.e_hash = ext2fs_ext_attr_hash_entry((struct ext2_ext_attr_entry *)(area + 4), area + 4 + voff);
	memcpy(area + 4, &e, sizeof(e));
	return 0;
}

errcode_t xattr_set_label(struct xattr_ctx *x, ext2_ino_t ino, struct ext2_inode_large *inode,
			  const char *ctx)
{
	const char *cur;
	size_t curlen, len = strlen(ctx) + 1;
	unsigned others;
	errcode_t rc;

	rc = inspect(x, ino, inode, &cur, &curlen, &others);
	if (rc)
		return rc;
	bool no_ibody = EXT2_INODE_SIZE(x->fs->super) <= EXT2_GOOD_OLD_INODE_SIZE;
	if (no_ibody && !others && !(inode->i_flags & EXT4_EA_INODE_FL))
		return set_shared(x, ino, inode, ctx, len);
	/* nothing but (perhaps) the label, and that in the body: rewrite the body only */
	if (!no_ibody && !others && !ext2fs_file_acl_block(x->fs, (struct ext2_inode *)inode) &&
	    set_in_inode(x, ino, inode, ctx, len) == 0)
		return ext2fs_write_inode_full(x->fs, ino, (struct ext2_inode *)inode, (int)x->isize);
	struct ext2_xattr_handle *h;
	x->block_nr = 0; /* the library may rewrite the block we cached */
	rc = ext2fs_xattrs_open(x->fs, ino, &h);
	if (rc)
		return rc;
	rc = ext2fs_xattrs_read(h);
	if (!rc)
		rc = ext2fs_xattr_set(h, "security.selinux", ctx, len);
	errcode_t rc2 = ext2fs_xattrs_close(&h);
	return rc ? rc : rc2;
}
