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

#define SEC_INDEX 6 /* "security." */
#define NAME "selinux"
#define NAME_LEN 7
#define DIGEST_NAME "security.sehash"
#define DIGEST_MAX 64

struct shared {
	char *value; /* label with its NUL */
	size_t len;
	blk64_t blk;
	unsigned refs; /* its h_refcount when last seen */
	bool found;    /* on the image before this run: its count may be wrong (reconcile) */
};

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

struct xattr_ctx {
	ext2_filsys fs;
	struct ea_cache *cache; /* deferred writes; NULL: every write goes to the image at once */
	char *block;        /* last EA block read: own, or the one held in the cache */
	char *own;
	blk64_t block_nr;
	char *wbuf;
	char *value;        /* copy of the value returned by xattr_get_label */
	size_t value_cap;
	struct shared *sh;  /* label -> a block holding only it */
	size_t nsh, capsh;
	blk64_t *recheck;   /* set (open addressing, 0 empty): label-only blocks of the image out
			     * of sh (full when found, or when they became full) whose counts
			     * reconcile makes right too */
	size_t nrecheck, maskrecheck;
	unsigned long allocated, shared_refs;
	size_t isize;
	char *ibuf;         /* an inode as on disk (isize bytes), for the library's writes */
	bool scanned;       /* the image's block claims were looked at (claims.c) */
	double claims_seconds; /* ... in this long */
	struct claims_result claims;
	struct orphans *orphans; /* read with the claims (xattr_orphans) */
	char why[512];      /* a refusal that is not the claims' (the quota files) */
	const char *refusal; /* why the image is refused (XATTR_E_CLAIMS) */
	bool no_alloc;      /* while set, no block may be taken (an inline-data symlink) */
	struct quota *quota; /* quota usage to keep right (NULL: no quota feature) */
	/* in place (the overlay holds the writes: imgfmt/overlay.c) */
	bool inplace;
	bool ordered;       /* no journal: what must come after the inodes waits (releases) */
	size_t commit_limit; /* blocks held before a commit is due */
	struct release *rel; /* ordered: references dropped and blocks freed, after the inodes */
	size_t nrel, caprel;
	bool applying;      /* the releases are being made: not held back again */
	void (*old_stats)(ext2_filsys, blk64_t, int);
	errcode_t quota_rc; /* the quota files could not be updated: why, once */
	errcode_t commit_failed; /* in place: a commit failed, none follows */
	bool inodes_on_disk; /* ordered: the last commit got as far as the inodes */
	char quota_why[512];
};

/* Something that must reach the disk after the inodes that no longer use it (ordered). */
struct release {
	blk64_t blk;
	bool put; /* a reference dropped (put_block); else the block freed (the library's) */
};

/* At most this much of the label blocks waits in memory: past it, all are written and the
 * cache starts again (a walk meets a few hundred labels; an image whose files each have a
 * block of their own, relabeled, may dirty one per file). */
#define CACHE_BYTES (8u << 20)

/*
 * Before the first write, the image's block claims are looked at (claims.c): a block claimed
 * twice refuses the image, since a write to one owner changes the other (a file's block map in
 * an inode table); a claimed block the bitmap calls free refuses it from the first block taken
 * on, since the bitmap would hand it out. A refusal stands for the rest of the run.
 */
static errcode_t may_write(struct xattr_ctx *x)
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
		rc = claims_scan(x->fs, orphans, &x->claims);
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
static errcode_t may_allocate(struct xattr_ctx *x)
{
	errcode_t rc = may_write(x);
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
	errcode_t rc = x ? may_allocate(x) : 0;
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
static int find_label(const char *area, size_t size, const char *first, const char *vbase,
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
static errcode_t cache_release(struct xattr_ctx *x, blk64_t blk)
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
static errcode_t write_block(struct xattr_ctx *x, ext2_ino_t ino, blk64_t blk, char *buf)
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
static errcode_t read_block(struct xattr_ctx *x, ext2_ino_t ino, blk64_t blk)
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

static struct shared *shared_find(struct xattr_ctx *x, const char *v, size_t len);
static errcode_t shared_remember(struct xattr_ctx *x, const char *v, size_t len, blk64_t blk);

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

/* A label-only block on the image (ours from an earlier, perhaps interrupted, run, or the
 * kernel's) is shared further, as a block we had just made would be. */
static errcode_t remember_found(struct xattr_ctx *x, blk64_t blk, const char *v, size_t len)
{
	const struct ext2_ext_attr_header *h = (const struct ext2_ext_attr_header *)x->block;
	if (!(x->fs->flags & EXT2_FLAG_RW) || h->h_blocks != 1)
		return 0;
	if (h->h_refcount >= EXT2_EXT_ATTR_REFCOUNT_MAX)
		return recheck_add(x, blk);
	struct shared *s = shared_find(x, v, len);
	if (s && s->blk == blk)
		s->refs = h->h_refcount;
	/* another block for the same label takes over only from a full one, as a new block
	 * would in the run that made them */
	if (s && (s->blk == blk || s->refs < EXT2_EXT_ATTR_REFCOUNT_MAX))
		return 0;
	errcode_t rc = shared_remember(x, v, len, blk);
	if (!rc && (s = shared_find(x, v, len))) {
		s->refs = h->h_refcount;
		s->found = true;
	}
	return rc;
}

/* The label and the count of other attributes of an inode; 0 or an errcode_t. */
static errcode_t inspect(struct xattr_ctx *x, ext2_ino_t ino, struct ext2_inode_large *inode,
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
			if (find_label(area, size, area + 4, area + 4, val, len, &o1, inum) < 0)
				return EXT2_ET_EA_BAD_NAME_LEN;
		}
	}
	blk64_t blk = ext2fs_file_acl_block(x->fs, (struct ext2_inode *)inode);
	if (blk) {
		if ((rc = read_block(x, ino, blk)))
			return rc;
		if ((rc = check_entries(x, x->block + sizeof(struct ext2_ext_attr_header), x->block,
					x->block + x->fs->blocksize)))
			return rc;
		const char *v = NULL;
		size_t l = 0;
		if (find_label(x->block, x->fs->blocksize,
			       x->block + sizeof(struct ext2_ext_attr_header), x->block, &v, &l,
			       &o2, inum) < 0)
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
	errcode_t rc = inspect(x, ino, inode, val, len, &others, &inum);
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

static struct shared *shared_find(struct xattr_ctx *x, const char *v, size_t len)
{
	for (size_t i = 0; i < x->nsh; i++)
		if (x->sh[i].len == len && !memcmp(x->sh[i].value, v, len))
			return &x->sh[i];
	return NULL;
}

/* (a block of the image that leaves sh still has its count made right: recheck) */
static errcode_t shared_forget(struct xattr_ctx *x, blk64_t blk)
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

static errcode_t shared_remember(struct xattr_ctx *x, const char *v, size_t len, blk64_t blk)
{
	struct shared *s = shared_find(x, v, len);
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
	s->refs = 1;
	s->found = false;
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
		bool inum = false;
		/* still what we think it is, and room for one more reference */
		if (find_label(x->block, x->fs->blocksize, x->block + sizeof(*h), x->block, &cv,
			       &cl, &others, &inum) == 1 && !others && cl == len && !memcmp(cv, v, len) &&
		    h->h_refcount < EXT2_EXT_ATTR_REFCOUNT_MAX && h->h_blocks == 1) {
			h->h_refcount++;
			rc = write_block(x, ino, s->blk, x->block);
			if (rc) {
				x->block_nr = 0;
				return rc;
			}
			x->shared_refs++;
			s->refs = h->h_refcount;
			*out = s->blk;
			return 0;
		}
		if ((rc = shared_forget(x, s->blk)))
			return rc;
	}
	blk64_t goal = ext2fs_find_inode_goal(x->fs, ino, (struct ext2_inode *)inode, 0), blk;
	rc = ext2fs_new_block2(x->fs, goal, NULL, &blk);
	if (rc)
		return rc;
	build_block(x, v, len);
	/* the block is written before any inode points to it */
	rc = write_block(x, ino, blk, x->wbuf);
	if (rc)
		return rc;
	ext2fs_block_alloc_stats2(x->fs, blk, +1);
	if ((rc = persist_alloc(x, blk)))
		return rc;
	x->allocated++;
	x->block_nr = 0;
	*out = blk;
	return shared_remember(x, v, len, blk);
}

static errcode_t hold_release(struct xattr_ctx *x, blk64_t blk, bool put)
{
	if (x->nrel == x->caprel) {
		size_t c = x->caprel ? x->caprel * 2 : 64;
		struct release *n = realloc(x->rel, c * sizeof(*n));
		if (!n)
			return ENOMEM;
		x->rel = n;
		x->caprel = c;
	}
	x->rel[x->nrel++] = (struct release){ blk, put };
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
	errcode_t rc = read_block(x, ino, blk);
	if (rc)
		return rc;
	struct ext2_ext_attr_header *h = (struct ext2_ext_attr_header *)x->block;
	if (h->h_refcount <= 1) {
		if ((rc = shared_forget(x, blk)))
			return rc;
		x->block_nr = 0;
		/* what it last held is left on the image, as in place */
		if ((rc = cache_release(x, blk)))
			return rc;
		ext2fs_block_alloc_stats2(x->fs, blk, -1);
		return persist_alloc(x, blk);
	}
	h->h_refcount--;
	rc = write_block(x, ino, blk, x->block);
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
	errcode_t rc = may_allocate(x);
	if (rc)
		return rc;
	memcpy(x->wbuf, x->block, fs->blocksize);
	((struct ext2_ext_attr_header *)x->wbuf)->h_refcount = 1;
	blk64_t goal = ext2fs_find_inode_goal(fs, ino, (struct ext2_inode *)in, 0);
	if ((rc = ext2fs_new_block2(fs, goal, NULL, &nb)))
		return rc;
	if ((rc = write_block(x, ino, nb, x->wbuf)))
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
		if ((rc = read_block(x, ino, before)))
			goto out;
		if ((((struct ext2_ext_attr_header *)x->block)->h_refcount > 1 || x->ordered) &&
		    (rc = copy_block(x, ino, in, &before)))
			goto out;
		x->block_nr = 0;
		if ((rc = cache_release(x, before)))
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
	errcode_t rc = inspect(x, ino, inode, &cur, &curlen, others, &inum);
	if (rc)
		return rc;
	/* values in EA inodes: a rewrite would change what e2fsck checks of them; left alone */
	if (inum)
		return XATTR_E_EA_INODE;
	if ((rc = may_write(x)) || (rc = ensure_feature(x)))
		return rc;
	return 0;
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
		return ext2fs_write_inode_full(x->fs, ino, (struct ext2_inode *)inode, (int)x->isize);
	return set_by_library(x, ino, "security.selinux", ctx, len);
}

/* Other digests than selinux's 20 bytes are not ours to read. */
errcode_t xattr_get_digest(struct xattr_ctx *x, ext2_ino_t ino, unsigned char *out, size_t *len)
{
	return xattr_get_value(x, ino, DIGEST_NAME, out, DIGEST_MAX, len);
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
		if ((b = ext2fs_file_acl_block(x->fs, &inode)) && (rc = cache_release(x, b)))
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

errcode_t xattr_set_digest(struct xattr_ctx *x, ext2_ino_t ino, const unsigned char *digest,
			   size_t len)
{
	struct ext2_inode_large *in = (struct ext2_inode_large *)x->ibuf;
	unsigned others;
	errcode_t rc = ext2fs_read_inode_full(x->fs, ino, (struct ext2_inode *)in, (int)x->isize);
	if (!rc)
		rc = writable(x, ino, in, &others);
	return rc ? rc : set_by_library(x, ino, DIGEST_NAME, digest, len);
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
		if (!refs[i] || read_block(x, 0, blks[i]))
			continue;
		struct ext2_ext_attr_header *h = (struct ext2_ext_attr_header *)x->block;
		if (h->h_refcount == refs[i])
			continue;
		h->h_refcount = refs[i];
		if ((rc = write_block(x, 0, blks[i], x->block))) {
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

