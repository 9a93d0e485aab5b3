/*
 * Reading a directory (erofs_fs.h, struct erofs_dirent, 12 bytes: nid 0 (64 bits), nameoff 8
 * (16 bits), file_type 10). Its data is a run of blocks, each beginning with its dirents, the
 * first one's nameoff saying how many there are (nameoff / 12); entry i's name runs from its
 * nameoff to the next one's, the last one's to the end of the block or its first NUL. The last
 * block may be shorter (the directory's size), and may be inline after the inode
 * (FLAT_INLINE). "." and ".." are not given. A compressed directory (mkfs.erofs --zD) is
 * decompressed whole when it is opened, its blocks then read from that copy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void erofs_dir_open(struct erofs_dir *d, const struct erofs_inode *dir)
{
	memset(d, 0, sizeof(*d));
	d->dir = *dir;
}

void erofs_dir_close(struct erofs_dir *d)
{
	free(d->zbuf);
	d->zbuf = NULL;
}

/* A compressed directory (at most this large) decompressed into d->zbuf. */
#define ZDIR_MAX (64u << 20)
static int unpack(const struct erofs_img *img, struct erofs_dir *d, char *w, size_t n)
{
	if (d->dir.size > ZDIR_MAX) {
		snprintf(w, n, "a compressed directory of %llu bytes",
			 (unsigned long long)d->dir.size);
		return -1;
	}
	if (!(d->zbuf = malloc((size_t)d->dir.size))) {
		snprintf(w, n, "out of memory");
		return -1;
	}
	if (erofs_zread(img, &d->dir, d->zbuf, w, n)) {
		erofs_dir_close(d);
		return -1;
	}
	return 0;
}

/* The bytes of the directory block at d->boff: d->blk, d->blen. 0, or -1 with why. */
static int block_at(const struct erofs_img *img, struct erofs_dir *d, char *w, size_t n)
{
	if (d->dir.layout != EROFS_COMPRESSED_FULL && d->dir.layout != EROFS_COMPRESSED_COMPACT)
		return erofs_data_at(img, &d->dir, d->boff, &d->blk, &d->blen, w, n);
	if (!d->zbuf && unpack(img, d, w, n))
		return -1;
	uint64_t bs = (uint64_t)1 << img->blkbits, room = bs - (d->boff & (bs - 1));
	d->blk = d->zbuf + d->boff;
	d->blen = (size_t)(room < d->dir.size - d->boff ? room : d->dir.size - d->boff);
	return 0;
}

/* Loads the directory block at d->boff: 1, 0 at the end, -1 when it is damaged (why). */
static int load_block(const struct erofs_img *img, struct erofs_dir *d, char *why, size_t n)
{
	char w[256] = "";
	if (d->boff >= d->dir.size)
		return 0;
	if (block_at(img, d, w, sizeof(w)) || !d->blk || d->blen < 12) {
		snprintf(why, n, "cannot read directory (nid %llu) at byte %llu: %s",
			 (unsigned long long)d->dir.nid, (unsigned long long)d->boff,
			 *w ? w : !d->blk ? "a hole" : "a block too short for an entry");
		return -1;
	}
	unsigned first = erofs_le16(d->blk + 8);
	if (first < 12 || first % 12 || first > d->blen) {
		snprintf(why, n, "corrupt directory (nid %llu) block at byte %llu: first name "
			 "offset %u", (unsigned long long)d->dir.nid, (unsigned long long)d->boff,
			 first);
		return -1;
	}
	d->count = first / 12;
	d->idx = 0;
	return 1;
}

int erofs_dir_next(const struct erofs_img *img, struct erofs_dir *d, uint64_t *nid,
		   const char **name, size_t *nl, char *why, size_t n)
{
	for (;;) {
		if (!d->blk || d->idx >= d->count) {
			if (d->blk)
				d->boff += d->blen;
			int r = load_block(img, d, why, n);
			if (r <= 0)
				return r;
		}
		const unsigned char *e = d->blk + 12 * (size_t)d->idx;
		size_t off = erofs_le16(e + 8), end;
		end = d->idx + 1 < d->count ? erofs_le16(e + 20) : d->blen;
		if (off < 12 * (size_t)d->count || end < off || end > d->blen) {
			snprintf(why, n, "corrupt directory (nid %llu): entry %u's name at %zu..%zu "
				 "of a %zu-byte block", (unsigned long long)d->dir.nid, d->idx, off,
				 end, d->blen);
			return -1;
		}
		if (d->idx + 1 == d->count) /* the last name ends at the block's end or a NUL */
			end = off + strnlen((const char *)d->blk + off, end - off);
		d->idx++;
		*nid = erofs_le64(e);
		*name = (const char *)d->blk + off;
		*nl = end - off;
		if ((*nl == 1 && **name == '.') || (*nl == 2 && !memcmp(*name, "..", 2)))
			continue;
		return 1;
	}
}

int erofs_lookup(const struct erofs_img *img, const char *path, struct erofs_inode *ino,
		 char *why, size_t n)
{
	unsigned hops = 0;
	if (erofs_inode_read(img, img->root_nid, ino, why, n))
		return -1;
	while (*path) {
		const char *c = path, *e;
		uint64_t nid;
		const char *name;
		size_t nl, cl;
		int r;
		while (*c == '/')
			c++;
		if (!*c)
			break;
		e = strchr(c, '/');
		cl = e ? (size_t)(e - c) : strlen(c);
		path = c + cl;
		if ((ino->mode & 0170000) != 0040000) {
			snprintf(why, n, "%.*s: below a file that is not a directory", (int)cl, c);
			return -1;
		}
		struct erofs_dir d;
		erofs_dir_open(&d, ino);
		while ((r = erofs_dir_next(img, &d, &nid, &name, &nl, why, n)) > 0)
			if (nl == cl && !memcmp(name, c, cl))
				break;
		erofs_dir_close(&d);
		if (r < 0)
			return -1;
		if (!r) {
			snprintf(why, n, "%.*s: no such file", (int)cl, c);
			return -1;
		}
		if (++hops > 4096 || erofs_inode_read(img, nid, ino, why, n))
			return -1;
	}
	return 0;
}
