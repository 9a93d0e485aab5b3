/*
 * security.selinux on ext4 inodes: the context and the refusals every write passes, reading, and
 * the label blocks held in memory (writing them: xattr_write.c).
 *
 * Reading parses the in-inode area and the EA block directly (bounds-checked: images arrive
 * from people we do not control), with the last EA block kept, since shared blocks repeat.
 *
 * Deferred writes. When the image is written as a copy renamed over it (or a sparse image
 * replaced whole), a kill leaves the original whatever the order of the writes, and that order
 * costs: every reference added to a shared block rewrote the block and its checksum. There the
 * label blocks are held in memory (struct ea_cache): a reference changes the block held, and
 * each block reaches the image once, checksummed, when the walk is over (xattr_write_back),
 * before ext2fs_close writes the bitmaps; an allocation is left to ext2fs_close too. The
 * decisions are the ones made in place, from the same block contents, so the result is the
 * same bytes. What reads or writes attribute blocks on the image itself (the library's xattr
 * calls, the engine's reference count) is given the blocks it may see written first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

/* Label blocks held in memory (deferred writes): a block is live while what it holds is newer
 * than, or the same as, the image's; dirty while the image's is older. */
struct ea_cached {
	blk64_t blk;
	bool live, dirty;
};
struct ea_cache {
	struct ea_cached *e; /* in the order they came */
	char *data;          /* cap blocks, e[i]'s at i * blocksize */
	uint32_t *idx;       /* open addressing on blk: index into e, plus 1; 0 empty */
	size_t n, cap, mask;
};

/* At most this much of the label blocks waits in memory: past it, all are written and the
 * cache starts again (a walk meets a few hundred labels; an image whose files each have a
 * block of their own, relabeled, may dirty one per file). */
#define CACHE_BYTES (8u << 20)

/*
 * Before the first write, the image's block claims are looked at (claims.c): a block claimed
 * twice refuses the image, since a write to one owner changes the other (a file's block map in
 * an inode table); a claimed block the bitmap calls free refuses it from the first block taken
 * on, since the bitmap would hand it out. A refusal stands for the rest of the run. The scan
 * started on a thread of its own as the run began (prescan.c) answers when it read this image as
 * it is; its time here is the wait for it, and the share of it this thread takes then
 * (claims_seconds).
 */
errcode_t xattr_may_write(struct xattr_ctx *x)
{
	if (!x->scanned) {
		struct timespec t0, t1;
		const struct orphans *orphans;
		errcode_t rc;
		/* (a quota file found wrong only at the commit is one the labels were written
		 * without) */
		if (quota_check(x->quota, x->why, sizeof(x->why))) {
			x->scanned = true;
			x->refusal = x->why;
			return XATTR_E_CLAIMS;
		}
		if ((rc = xattr_orphans(x, &orphans)))
			return rc;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		rc = img_prescan_take(x->fs, orphans, &x->claims)
			     ? 0 : claims_scan(x->fs, orphans, &x->claims);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		x->claims_seconds = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (rc)
			return rc;
		x->scanned = true;
		if (x->claims.cross[0])
			x->refusal = x->claims.cross;
	}
	return x->refusal ? XATTR_E_CLAIMS : 0;
}

/* An inline-data symlink is never given a block (no_alloc): e2fsck's pass 1 does not count one
 * there, and would free it while the symlink still points to it. */
errcode_t xattr_may_allocate(struct xattr_ctx *x)
{
	errcode_t rc = xattr_may_write(x);
	if (rc)
		return rc;
	if (x->no_alloc)
		return XATTR_E_INLINE_SYMLINK;
	if (x->claims.free[0]) {
		x->refusal = x->claims.free;
		return XATTR_E_CLAIMS;
	}
	return 0;
}

/* libext2fs's get_alloc_block hook: every allocation, ours (ext2fs_new_block2 without a map) and
 * the library's (ext2fs_alloc_block2), comes here. */
static errcode_t alloc_gate(ext2_filsys fs, blk64_t goal, blk64_t *ret)
{
	struct xattr_ctx *x = fs->priv_data;
	errcode_t rc = x ? xattr_may_allocate(x) : 0;
	return rc ? rc : ext2fs_new_block2(fs, goal, fs->block_map, ret);
}

errcode_t xattr_orphans(struct xattr_ctx *x, const struct orphans **o)
{
	errcode_t rc = x->orphans ? 0 : orphans_read(x->fs, &x->orphans);
	*o = x->orphans;
	return rc;
}

const char *xattr_strerror(const struct xattr_ctx *x, errcode_t rc)
{
	if (rc == XATTR_E_CLAIMS && x->refusal)
		return x->refusal; /* what claims.c found, named */
	return ext4_strerror(rc);
}

static struct ea_cache *cache_new(ext2_filsys fs)
{
	struct ea_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->cap = CACHE_BYTES / fs->blocksize;
	if (c->cap < 64)
		c->cap = 64;
	for (c->mask = 1; c->mask < c->cap * 2; c->mask <<= 1)
		;
	c->e = malloc(c->cap * sizeof(*c->e));
	c->data = malloc(c->cap * (size_t)fs->blocksize);
	c->idx = calloc(c->mask, sizeof(*c->idx));
	c->mask--;
	if (!c->e || !c->data || !c->idx) {
		free(c->e);
		free(c->data);
		free(c->idx);
		free(c);
		return NULL;
	}
	return c;
}

struct xattr_ctx *xattr_new(ext2_filsys fs, bool deferred)
{
	struct xattr_ctx *x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->fs = fs;
	x->isize = EXT2_INODE_SIZE(fs->super);
	if (x->isize < sizeof(struct ext2_inode_large))
		x->isize = sizeof(struct ext2_inode_large);
	x->block = x->own = malloc(fs->blocksize);
	x->wbuf = malloc(fs->blocksize);
	x->ibuf = calloc(1, x->isize);
	bool rw = fs->flags & EXT2_FLAG_RW;
	if (!x->own || !x->wbuf || !x->ibuf || (deferred && rw && !(x->cache = cache_new(fs))) ||
	    (rw && ext2fs_has_feature_quota(fs->super) && !(x->quota = quota_new(fs)))) {
		xattr_free(x);
		return NULL;
	}
	if (rw) {
		/* every block the library or we take passes the gate (alloc_gate) */
		fs->priv_data = x;
		fs->get_alloc_block = alloc_gate;
	}
	return x;
}

void xattr_free(struct xattr_ctx *x)
{
	if (!x)
		return;
	if (x->fs->priv_data == x) {
		x->fs->priv_data = NULL;
		x->fs->get_alloc_block = NULL;
	}
	if (x->ordered)
		ext2fs_set_block_alloc_stats_callback(x->fs, x->old_stats, NULL);
	free(x->rel);
	quota_free(x->quota);
	orphans_free(x->orphans);
	free(x->ibuf);
	if (x->cache) {
		free(x->cache->e);
		free(x->cache->data);
		free(x->cache->idx);
		free(x->cache);
	}
	for (size_t i = 0; i < x->nsh; i++)
		free(x->sh[i].value);
	free(x->sh);
	free(x->recheck);
	free(x->own);
	free(x->wbuf);
	free(x->value);
	free(x);
}

void xattr_stats(const struct xattr_ctx *x, unsigned long *allocated, unsigned long *shared,
		 double *claims_seconds)
{
	*allocated = x->allocated;
	*shared = x->shared_refs;
	*claims_seconds = x->claims_seconds;
}

/*
 * Finds security.selinux among the entries starting at first, values relative to vbase,
 * everything inside [area, area+size). Returns 1 found, 0 absent, -1 corrupt.
 * *others counts the other entries.
 */
int xattr_find_label(const char *area, size_t size, const char *first, const char *vbase,
		     const char **val, size_t *len, unsigned *others, bool *inum)
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
		if (e.e_value_inum)
			*inum = true;
		if (e.e_name_index == XATTR_SEC_INDEX && e.e_name_len == XATTR_NAME_LEN &&
		    !memcmp(name, XATTR_NAME, XATTR_NAME_LEN) && e.e_value_inum == 0) {
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

/* ---- the label blocks held in memory (deferred writes) ---- */

static char *cache_data(const struct xattr_ctx *x, const struct ea_cached *e)
{
	return x->cache->data + (size_t)(e - x->cache->e) * x->fs->blocksize;
}

static struct ea_cached *cache_find(const struct xattr_ctx *x, blk64_t blk)
{
	const struct ea_cache *c = x->cache;
	if (!c)
		return NULL;
	for (size_t b = (size_t)((blk * 0x9e3779b97f4a7c15ull) >> 32) & c->mask;;
	     b = (b + 1) & c->mask) {
		if (!c->idx[b])
			return NULL;
		if (c->e[c->idx[b] - 1].blk == blk)
			return &c->e[c->idx[b] - 1];
	}
}

/* Writes a held block to the image (checksummed by the library), as it stands. */
static errcode_t cache_write_one(struct xattr_ctx *x, struct ea_cached *e)
{
	errcode_t rc = ext2fs_write_ext_attr3(x->fs, e->blk, cache_data(x, e), 0);
	if (!rc)
		e->dirty = false;
	return rc;
}

/* Every dirty block written, in the order they came; with empty, the cache emptied after. */
static errcode_t cache_write_all(struct xattr_ctx *x, bool empty)
{
	struct ea_cache *c = x->cache;
	errcode_t rc = 0;
	if (!c)
		return 0;
	for (size_t i = 0; i < c->n && !rc; i++)
		if (c->e[i].live && c->e[i].dirty)
			rc = cache_write_one(x, &c->e[i]);
	if (!rc && empty) {
		memset(c->idx, 0, (c->mask + 1) * sizeof(*c->idx));
		c->n = 0;
		/* the last block read stays readable */
		if (x->block != x->own) {
			memcpy(x->own, x->block, x->fs->blocksize);
			x->block = x->own;
		}
	}
	return rc;
}

/* Holds buf as block blk's contents, to be written later. */
static errcode_t cache_put(struct xattr_ctx *x, blk64_t blk, const char *buf)
{
	struct ea_cache *c = x->cache;
	struct ea_cached *e = cache_find(x, blk);
	errcode_t rc;

	if (!e) {
		if (c->n == c->cap && (rc = cache_write_all(x, true)))
			return rc;
		size_t b = (size_t)((blk * 0x9e3779b97f4a7c15ull) >> 32) & c->mask;
		while (c->idx[b])
			b = (b + 1) & c->mask;
		e = &c->e[c->n++];
		e->blk = blk;
		c->idx[b] = (uint32_t)c->n;
	}
	e->live = e->dirty = true;
	if (buf != cache_data(x, e))
		memcpy(cache_data(x, e), buf, x->fs->blocksize);
	return 0;
}

/*
 * The image itself is about to be read or changed at blk by someone else (the library), or blk
 * is released: a newer version held here is written first, as a write in place would have left
 * it, and no longer held (it may change behind our back).
 */
errcode_t xattr_cache_release(struct xattr_ctx *x, blk64_t blk)
{
	struct ea_cached *e = cache_find(x, blk);
	errcode_t rc = 0;
	if (!e || !e->live)
		return 0;
	if (e->dirty)
		rc = cache_write_one(x, e);
	e->live = false;
	if (x->block_nr == blk)
		x->block_nr = 0;
	return rc;
}

/* Writes an EA block: to the image, or (deferred) to the block held in memory. */
errcode_t xattr_write_block(struct xattr_ctx *x, ext2_ino_t ino, blk64_t blk, char *buf)
{
	if (x->cache)
		return cache_put(x, blk, buf);
	return ext2fs_write_ext_attr3(x->fs, blk, buf, ino);
}

errcode_t xattr_write_back(struct xattr_ctx *x)
{
	return cache_write_all(x, false);
}

/* Reads the inode's EA block into x->block. */
errcode_t xattr_read_block(struct xattr_ctx *x, ext2_ino_t ino, blk64_t blk)
{
	errcode_t rc;

	if (blk < x->fs->super->s_first_data_block || blk >= ext2fs_blocks_count(x->fs->super))
		return EXT2_ET_BAD_EA_BLOCK_NUM;
	if (blk == x->block_nr)
		return 0;
	x->block_nr = 0;
	/* a block held in memory is used there: a change to it is made in place */
	struct ea_cached *e = cache_find(x, blk);
	if (e && e->live) {
		x->block = cache_data(x, e);
	} else {
		x->block = x->own;
		if ((rc = ext2fs_read_ext_attr3(x->fs, blk, x->block, ino)))
			return rc;
	}
	if (((struct ext2_ext_attr_header *)x->block)->h_magic != EXT2_EXT_ATTR_MAGIC)
		return EXT2_ET_BAD_EA_HEADER;
	x->block_nr = blk;
	return 0;
}

/*
 * The checks the kernel makes before it uses an attribute area (ext4's check_xattrs): every
 * name inside the area and free of NULs, the list ended by 4 zero bytes, every value inside the
 * area and after that end, EA inode numbers possible. first: the first entry; vbase: what
 * e_value_offs counts from; end: the end of the area. 0 or an errcode_t saying what is wrong.
 */
static errcode_t check_entries(const struct xattr_ctx *x, const char *first, const char *vbase,
			       const char *end)
{
	struct ext2_super_block *sb = x->fs->super;
	struct ext2_ext_attr_entry e;
	const char *p = first;
	uint32_t w;

	for (;;) {
		if (sizeof(w) > (size_t)(end - p))
			return EXT2_ET_EA_BAD_NAME_LEN; /* no end marker */
		memcpy(&w, p, sizeof(w));
		if (!w)
			break;
		if (sizeof(e) > (size_t)(end - p))
			return EXT2_ET_EA_BAD_NAME_LEN;
		memcpy(&e, p, sizeof(e));
		if (EXT2_EXT_ATTR_LEN(e.e_name_len) >= (size_t)(end - p) ||
		    memchr(p + sizeof(e), 0, e.e_name_len))
			return EXT2_ET_EA_BAD_NAME_LEN;
		p += EXT2_EXT_ATTR_LEN(e.e_name_len);
	}
	const char *names_end = p + sizeof(w);
	for (p = first; p + sizeof(w) < names_end; p += EXT2_EXT_ATTR_LEN(e.e_name_len)) {
		memcpy(&e, p, sizeof(e));
		if (e.e_value_inum) {
			if (!ext2fs_has_feature_ea_inode(sb) || e.e_value_inum < EXT2_FIRST_INO(sb) ||
			    e.e_value_inum > sb->s_inodes_count)
				return EXT2_ET_EA_INODE_CORRUPTED;
		} else if (e.e_value_size) {
			if (e.e_value_offs > end - vbase || vbase + e.e_value_offs < names_end)
				return EXT2_ET_EA_BAD_VALUE_OFFSET;
			const char *v = vbase + e.e_value_offs;
			if (e.e_value_size > (size_t)(end - v) ||
			    EXT2_EXT_ATTR_SIZE((size_t)e.e_value_size) > (size_t)(end - v))
				return EXT2_ET_EA_BAD_VALUE_SIZE;
		}
	}
	return 0;
}

/* ---- the blocks labels share, and those reconcile checks ---- */

static size_t recheck_slot(const blk64_t *k, size_t mask, blk64_t blk)
{
	size_t b = (size_t)((blk * 0x9e3779b97f4a7c15ull) >> 32) & mask;
	while (k[b] && k[b] != blk)
		b = (b + 1) & mask;
	return b;
}

/* A block of the image whose count reconcile checks although it is not (or no longer) the
 * one a label shares: a full block takes no reference, but a count one too high that an
 * interrupted run left on it must not stay. */
static errcode_t recheck_add(struct xattr_ctx *x, blk64_t blk)
{
	if (x->recheck && x->recheck[recheck_slot(x->recheck, x->maskrecheck, blk)] == blk)
		return 0;
	if (!x->recheck || (x->nrecheck + 1) * 2 > x->maskrecheck + 1) {
		size_t nm = x->recheck ? x->maskrecheck * 2 + 1 : 255;
		blk64_t *nk = calloc(nm + 1, sizeof(*nk));
		if (!nk)
			return ENOMEM;
		for (size_t i = 0; x->recheck && i <= x->maskrecheck; i++)
			if (x->recheck[i])
				nk[recheck_slot(nk, nm, x->recheck[i])] = x->recheck[i];
		free(x->recheck);
		x->recheck = nk;
		x->maskrecheck = nm;
	}
	x->recheck[recheck_slot(x->recheck, x->maskrecheck, blk)] = blk;
	x->nrecheck++;
	return 0;
}

struct xattr_shared *xattr_shared_find(struct xattr_ctx *x, const char *v, size_t len)
{
	for (size_t i = 0; i < x->nsh; i++)
		if (x->sh[i].len == len && !memcmp(x->sh[i].value, v, len))
			return &x->sh[i];
	return NULL;
}

/* (a block of the image that leaves sh still has its count made right: recheck) */
errcode_t xattr_shared_forget(struct xattr_ctx *x, blk64_t blk)
{
	for (size_t i = 0; i < x->nsh; i++)
		if (x->sh[i].blk == blk) {
			bool found = x->sh[i].found;
			free(x->sh[i].value);
			x->sh[i] = x->sh[--x->nsh];
			return found ? recheck_add(x, blk) : 0;
		}
	return 0;
}

errcode_t xattr_shared_remember(struct xattr_ctx *x, const char *v, size_t len, blk64_t blk)
{
	struct xattr_shared *s = xattr_shared_find(x, v, len);
	if (s) {
		errcode_t rc = s->found ? recheck_add(x, s->blk) : 0;
		if (rc)
			return rc;
		s->blk = blk;
		s->refs = 1;
		s->found = false;
		return 0;
	}
	if (x->nsh == x->capsh) {
		size_t c = x->capsh ? x->capsh * 2 : 16;
		struct xattr_shared *n = realloc(x->sh, c * sizeof(*n));
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
	s->refs = 1;
	s->found = false;
	x->nsh++;
	return 0;
}

/* A label-only block on the image (ours from an earlier, perhaps interrupted, run, or the
 * kernel's) is shared further, as a block we had just made would be. */
static errcode_t remember_found(struct xattr_ctx *x, blk64_t blk, const char *v, size_t len)
{
	const struct ext2_ext_attr_header *h = (const struct ext2_ext_attr_header *)x->block;
	if (!(x->fs->flags & EXT2_FLAG_RW) || h->h_blocks != 1)
		return 0;
	if (h->h_refcount >= EXT2_EXT_ATTR_REFCOUNT_MAX)
		return recheck_add(x, blk);
	struct xattr_shared *s = xattr_shared_find(x, v, len);
	if (s && s->blk == blk)
		s->refs = h->h_refcount;
	/* another block for the same label takes over only from a full one, as a new block
	 * would in the run that made them */
	if (s && (s->blk == blk || s->refs < EXT2_EXT_ATTR_REFCOUNT_MAX))
		return 0;
	errcode_t rc = xattr_shared_remember(x, v, len, blk);
	if (!rc && (s = xattr_shared_find(x, v, len))) {
		s->refs = h->h_refcount;
		s->found = true;
	}
	return rc;
}

/* The label and the count of other attributes of an inode; 0 or an errcode_t. */
errcode_t xattr_inspect(struct xattr_ctx *x, ext2_ino_t ino, struct ext2_inode_large *inode,
			const char **val, size_t *len, unsigned *others, bool *inum)
{
	unsigned o1 = 0, o2 = 0;
	errcode_t rc;

	*inum = false;
	size_t isize = EXT2_INODE_SIZE(x->fs->super);

	*val = NULL;
	*len = 0;
	/* as the kernel's iget: an i_extra_isize past the inode, or not a multiple of 4 */
	if (isize > EXT2_GOOD_OLD_INODE_SIZE && ((inode->i_extra_isize & 3) ||
	    EXT2_GOOD_OLD_INODE_SIZE + (size_t)inode->i_extra_isize > isize))
		return EXT2_ET_INODE_CORRUPTED;
	if (isize > EXT2_GOOD_OLD_INODE_SIZE && inode->i_extra_isize >= 4 &&
	    EXT2_GOOD_OLD_INODE_SIZE + inode->i_extra_isize + 4u <= isize) {
		const char *base = (const char *)inode;
		const char *area = base + EXT2_GOOD_OLD_INODE_SIZE + inode->i_extra_isize;
		size_t size = isize - EXT2_GOOD_OLD_INODE_SIZE - inode->i_extra_isize;
		uint32_t magic;
		memcpy(&magic, area, sizeof(magic));
		if (magic == EXT2_EXT_ATTR_MAGIC) {
			if ((rc = check_entries(x, area + 4, area + 4, area + size)))
				return rc; /* corrupt in-inode attributes */
			if (xattr_find_label(area, size, area + 4, area + 4, val, len, &o1,
					     inum) < 0)
				return EXT2_ET_EA_BAD_NAME_LEN;
		}
	}
	blk64_t blk = ext2fs_file_acl_block(x->fs, (struct ext2_inode *)inode);
	if (blk) {
		if ((rc = xattr_read_block(x, ino, blk)))
			return rc;
		if ((rc = check_entries(x, x->block + sizeof(struct ext2_ext_attr_header), x->block,
					x->block + x->fs->blocksize)))
			return rc;
		const char *v = NULL;
		size_t l = 0;
		if (xattr_find_label(x->block, x->fs->blocksize,
				     x->block + sizeof(struct ext2_ext_attr_header), x->block,
				     &v, &l, &o2, inum) < 0)
			return EXT2_ET_BAD_EA_HEADER;
		if (v && !*val) {
			*val = v;
			*len = l;
		} else if (v) {
			o2++;
		}
		if (v && !o2 && (rc = remember_found(x, blk, v, l)))
			return rc;
	}
	*others = o1 + o2;
	return 0;
}

errcode_t xattr_get_label(struct xattr_ctx *x, ext2_ino_t ino, struct ext2_inode_large *inode,
			  const char **val, size_t *len)
{
	unsigned others;
	bool inum;
	errcode_t rc = xattr_inspect(x, ino, inode, val, len, &others, &inum);
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

/* Other digests than selinux's 20 bytes are not ours to read. */
errcode_t xattr_get_digest(struct xattr_ctx *x, ext2_ino_t ino, unsigned char *out, size_t *len)
{
	return xattr_get_value(x, ino, XATTR_DIGEST_NAME, out, XATTR_DIGEST_MAX, len);
}

errcode_t xattr_get_value(struct xattr_ctx *x, ext2_ino_t ino, const char *name,
			  unsigned char *out, size_t max, size_t *len)
{
	struct ext2_xattr_handle *h;
	void *v = NULL;
	size_t l = 0;
	errcode_t rc;

	*len = 0;
	x->block_nr = 0;
	if (x->cache) {
		/* the library reads the block from the image */
		struct ext2_inode inode;
		blk64_t b;
		if ((rc = ext2fs_read_inode(x->fs, ino, &inode)))
			return rc;
		if ((b = ext2fs_file_acl_block(x->fs, &inode)) && (rc = xattr_cache_release(x, b)))
			return rc;
	}
	if ((rc = ext2fs_xattrs_open(x->fs, ino, &h)))
		return rc;
	rc = ext2fs_xattrs_read(h);
	if (!rc) {
		rc = ext2fs_xattr_get(h, name, &v, &l);
		if (rc == EXT2_ET_EA_KEY_NOT_FOUND)
			rc = 0;
		else if (!rc && l <= max) {
			memcpy(out, v, l);
			*len = l;
		}
	}
	ext2fs_free_mem(&v);
	ext2fs_xattrs_close(&h);
	return rc;
}
