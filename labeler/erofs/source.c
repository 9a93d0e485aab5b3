/*
 * The EROFS image as a target of the engine (struct label_src, engine.h), as an ext4 image and
 * a live tree are: its walk (walk.c), its labels and other attributes (xattr.c). EROFS is
 * built once and never written in place, so a write is refused, naming the way an EROFS image
 * gets its labels: mkfs.erofs --file-contexts.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

#define LABEL_NAME "security.selinux"
#define DIGEST_NAME "security.sehash"
#define DIGEST_MAX 64

struct erofs_src {
	struct erofs_img *img;
	const struct label_opts *o;
	struct label_run *run;
};

static struct label_file file_of(const struct erofs_entry *e)
{
	struct label_file f = { .path = e->path, .pathlen = e->pathlen, .ino = e->nid,
				.h = (void *)e->ino };
	if (e->ino) {
		f.mode = e->ino->mode;
		f.nlink = e->ino->nlink;
		f.uid = e->ino->uid;
		f.gid = e->ino->gid;
	} else {
		f.mode = S_IFDIR; /* (a directory being left) */
		f.nlink = 1;
	}
	return f;
}

static int visit(const struct erofs_entry *e, void *arg)
{
	struct erofs_src *s = arg;
	struct label_file f = file_of(e);
	return label_visit(s->run, &f);
}

static int leave(const struct erofs_entry *e, void *arg)
{
	struct erofs_src *s = arg;
	struct label_file f = file_of(e);
	label_leave(s->run, &f);
	return 0;
}

static void warn(void *arg, const char *path, const char *msg)
{
	label_walk_warn(((struct erofs_src *)arg)->run, path, msg);
}

static long src_walk(void *arg, struct label_run *run)
{
	struct erofs_src *s = arg;
	s->run = run;
	return erofs_walk(s->img, s->o->mountpoint, visit, leave, s, warn);
}

/* An attribute of the file f, read where it lies: 0, or -1 with why. */
static int attr(struct erofs_src *s, const struct label_file *f, const char *name,
		const unsigned char **val, size_t *len, char *why, size_t n)
{
	char w[256];
	const struct erofs_inode *ino = f->h;
	if (!ino) {
		snprintf(why, n, "cannot read %s (nid %llu): no inode", name,
			 (unsigned long long)f->ino);
		return -1;
	}
	if (erofs_xattr_get(s->img, ino, name, val, len, w, sizeof(w))) {
		snprintf(why, n, "cannot read %s (nid %llu): corrupt EROFS attributes: %s", name,
			 (unsigned long long)f->ino, w);
		return -1;
	}
	return 0;
}

static int src_get(void *arg, const struct label_file *f, const char **val, size_t *len,
		   char *why, size_t n)
{
	const unsigned char *v;
	if (attr(arg, f, LABEL_NAME, &v, len, why, n))
		return 1;
	*val = (const char *)v;
	return 0;
}

static int src_set(void *arg, const struct label_file *f, const char *ctx, char *why, size_t n)
{
	struct erofs_src *s = arg;
	snprintf(why, n, "%s: %s", s->img->name, EROFS_REFUSAL);
	return LSET_REFUSED;
}

static int src_get_digest(void *arg, const struct label_file *f, unsigned char *out, size_t *len,
			  char *why, size_t n)
{
	const unsigned char *v;
	size_t l;
	*len = 0;
	if (attr(arg, f, DIGEST_NAME, &v, &l, why, n))
		return 1;
	if (v && l <= DIGEST_MAX) {
		memcpy(out, v, l);
		*len = l;
	}
	return 0;
}

static int src_set_digest(void *arg, const struct label_file *f, const unsigned char *d,
			  size_t len, char *why, size_t n)
{
	return src_set(arg, f, NULL, why, n);
}

static int src_get_xattr(void *arg, const struct label_file *f, const char *name,
			 unsigned char *out, size_t max, size_t *len, char *why, size_t n)
{
	const unsigned char *v;
	size_t l;
	*len = 0;
	if (attr(arg, f, name, &v, &l, why, n))
		return 1;
	if (v && l <= max) {
		memcpy(out, v, l);
		*len = l;
	}
	return 0;
}

int erofs_label(struct erofs_img *img, const fc_set *set, const struct label_opts *o,
		struct label_stats *st)
{
	struct erofs_src s = { .img = img, .o = o };
	struct label_src src = {
		.name = img->name, .what = "image", .unit = "block", .arg = &s,
		.total = img->inos, .walk = src_walk, .get = src_get, .set = src_set,
		.get_digest = src_get_digest, .set_digest = src_set_digest,
		.get_xattr = src_get_xattr,
	};
	return label_source(&src, set, o, st);
}

bool erofs_is_labeled(struct erofs_img *img)
{
	struct erofs_inode root;
	const unsigned char *v;
	size_t l;
	char why[256];
	return !erofs_inode_read(img, img->root_nid, &root, why, sizeof(why)) &&
	       !erofs_xattr_get(img, &root, LABEL_NAME, &v, &l, why, sizeof(why)) && v;
}

void erofs_volume_name(const struct erofs_img *img, char out[17])
{
	/* (struct erofs_super_block's volume_name: 16 bytes at 64, NUL-padded) */
	memcpy(out, img->base + EROFS_SB_OFFSET + 64, 16);
	out[16] = 0;
}
