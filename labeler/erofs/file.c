/*
 * A file's bytes, whatever its data layout: uncompressed (inode.c: flat, inline, chunked) or
 * compressed (zdata.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "internal.h"

/* ino's bytes, whole, into a NUL-terminated malloc'd *buf: 0, or -1 with why. */
static int read_whole(struct erofs_img *img, const struct erofs_inode *ino, char **buf,
		      size_t *len, size_t max, char *why, size_t n)
{
	char w[300];
	if (!S_ISREG(ino->mode) && !S_ISLNK(ino->mode)) {
		snprintf(why, n, "not a regular file (mode 0%o)", ino->mode);
		return -1;
	}
	if (ino->size > max) {
		snprintf(why, n, "%llu bytes, more than the %zu it may have",
			 (unsigned long long)ino->size, max);
		return -1;
	}
	char *b = malloc((size_t)ino->size + 1);
	if (!b) {
		snprintf(why, n, "out of memory");
		return -1;
	}
	bool z = ino->layout == EROFS_COMPRESSED_FULL || ino->layout == EROFS_COMPRESSED_COMPACT;
	if (z ? erofs_zread(img, ino, (unsigned char *)b, w, sizeof(w))
	      : erofs_pread(img, ino, 0, b, (size_t)ino->size, w, sizeof(w))) {
		snprintf(why, n, "nid %llu: %s", (unsigned long long)ino->nid, w);
		free(b);
		return -1;
	}
	b[ino->size] = 0;
	*buf = b;
	*len = (size_t)ino->size;
	return 0;
}

/* A regular file's whole data (what erofs_read_file and erofs_read_nid found). */
static int read_regular(struct erofs_img *img, const struct erofs_inode *ino, char **buf,
			size_t *len, size_t max, char *why, size_t n)
{
	if (!S_ISREG(ino->mode)) {
		snprintf(why, n, "not a regular file (mode 0%o)", ino->mode);
		return -1;
	}
	return read_whole(img, ino, buf, len, max, why, n);
}

int erofs_read_file(struct erofs_img *img, const char *path, char **buf, size_t *len, size_t max,
		    char *why, size_t n)
{
	struct erofs_inode ino;
	*buf = NULL;
	*len = 0;
	if (erofs_lookup(img, path, &ino, why, n))
		return -1;
	return read_regular(img, &ino, buf, len, max, why, n);
}

uint64_t erofs_root_nid(const struct erofs_img *img)
{
	return img->root_nid;
}

/* fn(name, nlen, nid, arg) for each entry of directory dir, until it returns true: 0 (*found:
 * whether one did), ENOTDIR, or EUCLEAN with why. */
static int scan_dir(struct erofs_img *img, uint64_t dir,
		    bool (*fn)(const char *name, size_t nlen, uint64_t nid, void *arg), void *arg,
		    bool *found, char *why, size_t n)
{
	struct erofs_inode ino;
	struct erofs_dir d;
	const char *en;
	size_t el;
	uint64_t nid;
	int r;
	*found = false;
	if (erofs_inode_read(img, dir, &ino, why, n))
		return EUCLEAN;
	if (!S_ISDIR(ino.mode))
		return ENOTDIR;
	erofs_dir_open(&d, &ino);
	while ((r = erofs_dir_next(img, &d, &nid, &en, &el, why, n)) > 0)
		if ((*found = fn(en, el, nid, arg)))
			break;
	erofs_dir_close(&d);
	return r < 0 ? EUCLEAN : 0;
}

struct wanted {
	const char *name;
	size_t nlen;
	uint64_t nid;
};

static bool is_wanted(const char *name, size_t nlen, uint64_t nid, void *arg)
{
	struct wanted *w = arg;
	if (nlen != w->nlen || memcmp(name, w->name, nlen))
		return false;
	w->nid = nid;
	return true;
}

int erofs_find(struct erofs_img *img, uint64_t dir, const char *name, size_t nlen,
	       uint64_t *nid, unsigned *mode, char *why, size_t n)
{
	struct wanted w = { name, nlen, 0 };
	struct erofs_inode ino;
	bool found;
	int r = scan_dir(img, dir, is_wanted, &w, &found, why, n);
	if (r)
		return r;
	if (!found)
		return ENOENT;
	if (erofs_inode_read(img, w.nid, &ino, why, n))
		return EUCLEAN;
	*nid = w.nid;
	*mode = ino.mode;
	return 0;
}

int erofs_readlink(struct erofs_img *img, uint64_t nid, char *buf, size_t cap, char *why,
		   size_t n)
{
	struct erofs_inode ino;
	char *b;
	size_t len;
	if (erofs_inode_read(img, nid, &ino, why, n))
		return EUCLEAN;
	if (!S_ISLNK(ino.mode))
		return EINVAL;
	if (ino.size >= cap)
		return ENAMETOOLONG;
	if (read_whole(img, &ino, &b, &len, cap - 1, why, n))
		return EUCLEAN;
	memcpy(buf, b, len + 1);
	free(b);
	return 0;
}

int erofs_read_nid(struct erofs_img *img, uint64_t nid, char **buf, size_t *len, size_t max,
		   char *why, size_t n)
{
	struct erofs_inode ino;
	*buf = NULL;
	*len = 0;
	if (erofs_inode_read(img, nid, &ino, why, n))
		return -1;
	return read_regular(img, &ino, buf, len, max, why, n);
}

struct lister {
	bool (*fn)(const char *name, size_t nlen, void *arg);
	void *arg;
};

static bool list_one(const char *name, size_t nlen, uint64_t nid, void *arg)
{
	struct lister *l = arg;
	(void)nid;
	return l->fn(name, nlen, l->arg);
}

int erofs_list(struct erofs_img *img, uint64_t dir, bool (*fn)(const char *name, size_t nlen,
							     void *arg),
	       void *arg, char *why, size_t n)
{
	struct lister l = { fn, arg };
	bool found;
	return scan_dir(img, dir, list_one, &l, &found, why, n);
}
