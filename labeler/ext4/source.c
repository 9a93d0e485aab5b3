/*
 * The ext4 image as a target of the engine (struct label_src, engine.h), as a live tree is one:
 * its walk (walk.c), its labels, digests and other attributes (xattr.c, xattr_write.c), and what
 * writing it takes between two files (a commit of what is held in place, while the path still
 * names the file opened) and at the end (the reference counts made right, the label blocks held
 * for a copy written, quota, the last commit). The engine never learns it is an image.
 */
#include <errno.h>
#include <et/com_err.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct ext4_src {
	struct image *img;
	struct xattr_ctx *x;
	const struct label_opts *o;
	struct label_run *run;
	struct refs refs;          /* the attribute blocks whose counts are not their users */
	struct walk_stats ws;
	bool failed;               /* a commit failed, or the target was lost: none follows */
};

/* ---- the walk ---- */

static struct label_file file_of(const struct walk_entry *e)
{
	struct label_file f = { .path = e->path, .pathlen = e->pathlen, .ino = e->ino,
				.h = (void *)e };
	if (e->inode) {
		f.mode = e->inode->i_mode;
		f.nlink = e->inode->i_links_count;
		f.encrypted = (e->inode->i_flags & EXT4_ENCRYPT_FL) != 0;
		f.uid = inode_uid(*e->inode);
		f.gid = inode_gid(*e->inode);
	} else {
		f.mode = LINUX_S_IFDIR; /* (a directory being left) */
		f.nlink = 1;
	}
	return f;
}

static int visit(const struct walk_entry *e, void *arg)
{
	struct ext4_src *s = arg;
	struct label_file f = file_of(e);
	return label_visit(s->run, &f);
}

static int leave(const struct walk_entry *e, void *arg)
{
	struct ext4_src *s = arg;
	struct label_file f = file_of(e);
	label_leave(s->run, &f);
	return 0;
}

static void warn(void *arg, const char *path, const char *msg)
{
	label_walk_warn(((struct ext4_src *)arg)->run, path, msg);
}

/* The walk's error: libext2fs's codes, our own negative ones, an errno. */
static const char *src_strerror(long rc)
{
	return ext4_strerror((errcode_t)rc);
}

static long src_walk(void *arg, struct label_run *run)
{
	struct ext4_src *s = arg;
	s->run = run;
	return walk_image(s->img->fs, s->o->mountpoint, visit, leave, s, &s->ws, warn);
}

/* ---- attributes ---- */

static const struct walk_entry *entry(const struct label_file *f)
{
	return f->h;
}

static int src_get(void *arg, const struct label_file *f, const char **val, size_t *len, char *why,
	       size_t n)
{
	struct ext4_src *s = arg;
	const struct walk_entry *e = entry(f);
	errcode_t rc = xattr_get_label(s->x, e->ino, e->inode, val, len);
	if (rc)
		snprintf(why, n, "cannot read its attributes (inode %u): %s; left as it is", e->ino,
			 error_message(rc));
	return rc != 0;
}

/* A write's error as the engine takes it: a refusal of the whole image stops the walk. */
static int set_result(struct ext4_src *s, errcode_t rc, char *why, size_t n)
{
	snprintf(why, n, "%s", xattr_strerror(s->x, rc));
	if (rc == XATTR_E_CLAIMS)
		return LSET_REFUSED;
	if (rc == CLAIMS_E_INTERRUPTED)
		return LSET_INTERRUPTED;
	return rc == EXT2_ET_BLOCK_ALLOC_FAIL ? LSET_NOSPACE : LSET_ERROR;
}

static int commit(struct ext4_src *s, bool *durable, char *why, size_t n);

static int src_set(void *arg, const struct label_file *f, const char *ctx, char *why, size_t n)
{
	struct ext4_src *s = arg;
	const struct walk_entry *e = entry(f);
	blk64_t b = ext2fs_file_acl_block(s->img->fs, (struct ext2_inode *)e->inode);
	if (b && !s->refs.counted) {
		/* the count reads the blocks from the image: those held in memory first (and, in
		 * place, no reference waits to be dropped) */
		bool durable;
		char w[256];
		if (commit(s, &durable, w, sizeof(w)) || xattr_write_back(s->x))
			s->refs.counted = -1;
		else
			refs_count(&s->refs, s->img->fs, s->x);
	}
	if (b && refs_suspect(&s->refs, e->ino, b, why, n))
		return LSET_LEFT;
	errcode_t rc = xattr_set_label(s->x, e->ino, e->inode, ctx);
	return rc ? set_result(s, rc, why, n) : LSET_OK;
}

static int src_get_digest(void *arg, const struct label_file *f, unsigned char *out, size_t *len,
		      char *why, size_t n)
{
	struct ext4_src *s = arg;
	errcode_t rc = xattr_get_digest(s->x, (ext2_ino_t)f->ino, out, len);
	if (rc)
		snprintf(why, n, "cannot read security.sehash (inode %llu): %s",
			 (unsigned long long)f->ino, error_message(rc));
	return rc != 0;
}

static int src_set_digest(void *arg, const struct label_file *f, const unsigned char *d, size_t len,
		      char *why, size_t n)
{
	struct ext4_src *s = arg;
	errcode_t rc = xattr_set_digest(s->x, (ext2_ino_t)f->ino, d, len);
	if (!rc)
		return LSET_OK;
	int r = set_result(s, rc, why, n);
	if (r == LSET_ERROR || r == LSET_NOSPACE) {
		char w[512];
		snprintf(w, sizeof(w), "%s", why);
		snprintf(why, n, "cannot write security.sehash (inode %llu): %s",
			 (unsigned long long)f->ino, w);
	}
	return r;
}

static int src_get_xattr(void *arg, const struct label_file *f, const char *name, unsigned char *out,
		     size_t max, size_t *len, char *why, size_t n)
{
	struct ext4_src *s = arg;
	errcode_t rc = xattr_get_value(s->x, (ext2_ino_t)f->ino, name, out, max, len);
	if (rc)
		snprintf(why, n, "cannot read %s (inode %llu): %s", name,
			 (unsigned long long)f->ino, error_message(rc));
	return rc != 0;
}

/* ---- between two files, and at the end ---- */

/* What is held in place made durable, while the path still names the file opened: 0, or
 * LSRC_FAILED with why. *durable: the labels so far are on disk (in crash order, the inodes of a
 * commit that failed after them too). */
static int commit(struct ext4_src *s, bool *durable, char *why, size_t n)
{
	*durable = false;
	if (s->failed)
		return LSRC_FAILED;
	if (!xattr_held(s->x))
		return 0;
	if (!img_whole_or_nothing(s->img) && !img_still_target(s->img, why, n)) {
		size_t l = strlen(why);
		snprintf(why + l, n - l, "; what was written before went to the file that was "
			 "opened; the rest is not written");
		s->failed = true;
		return LSRC_FAILED;
	}
	errcode_t rc = xattr_commit(s->x);
	if (rc) {
		*durable = xattr_inodes_on_disk(s->x);
		snprintf(why, n, "%s: writing the labels failed: %s", s->img->name,
			 imgfmt_io_error() ? imgfmt_io_error() : error_message(rc));
		s->failed = true;
		return imgfmt_io_error() ? LSRC_IO : LSRC_FAILED;
	}
	*durable = true;
	return 0;
}

static int src_between(void *arg, bool *durable, char *why, size_t n)
{
	struct ext4_src *s = arg;
	*durable = false;
	/* an I/O error of the image: the walk stops at it, not at each file it spoils */
	if (imgfmt_io_error()) {
		snprintf(why, n, "%s", imgfmt_io_error());
		return LSRC_IO;
	}
	if (!xattr_commit_due(s->x))
		return 0;
	return commit(s, durable, why, n);
}

static int src_finish(void *arg, int how, struct label_stats *st, bool *durable, char *why, size_t n)
{
	struct ext4_src *s = arg;
	struct image *img = s->img;
	int rc = 0;
	char w[512] = "";

	*durable = false;
	*why = 0;
	if (how == LSRC_DONE && s->o->mode == LM_LABEL) {
		/* the counts are made right from inodes on disk: ordered writes put them there */
		bool d;
		unsigned long fixed = 0;
		errcode_t e;
		if ((rc = commit(s, &d, why, n))) {
			*durable = d;
		} else if ((e = xattr_reconcile(s->x, &fixed))) {
			snprintf(why, n, "%s: the walk stopped: %s", img->name, error_message(e));
			rc = LSRC_FAILED;
		} else if (fixed) {
			fprintf(stderr, "fclabel %s: %s: corrected the reference counts of %lu shared "
				"label block(s), left wrong by an interrupted run\n", s->o->cmd,
				img->name, fixed);
		}
	}
	errcode_t e = xattr_write_back(s->x);
	if (e && !rc) {
		snprintf(why, n, "%s: the walk stopped: %s", img->name, error_message(e));
		rc = LSRC_FAILED;
	}
	if (imgfmt_io_error())
		how = rc = LSRC_IO;
	/* a walk stopped between two files (a signal, a refusal) leaves what it did whole: in
	 * place that is committed too; after an I/O error, only what the last commit made */
	if (!rc && how != LSRC_IO && how != LSRC_FAILED) {
		if ((e = xattr_finish(s->x, w, sizeof(w)))) {
			if (*w)
				fprintf(stderr, "fclabel %s: %s: %s\n", s->o->cmd, img->name, w);
			snprintf(why, n, "%s: %s", img->name, *w ? w : error_message(e));
			rc = imgfmt_io_error() ? LSRC_IO : LSRC_FAILED;
		} else {
			*durable = true;
		}
	}
	if (imgfmt_io_error()) {
		snprintf(why, n, "%s", imgfmt_io_error());
		rc = LSRC_IO;
	}
	/* a commit that failed part of the way may have left steps of it on disk */
	if (rc == LSRC_IO || how == LSRC_IO || s->failed || xattr_commit_failed(s->x))
		img->keep_marker = true;
	xattr_stats(s->x, &st->ea_allocated, &st->ea_shared, &st->claims_seconds);
	return rc;
}

int ext4_label(struct image *img, const fc_set *set, const struct label_opts *o,
	       struct label_stats *st)
{
	ext2_filsys fs = img->fs;
	struct ext4_src s = { .img = img, .o = o };
	struct label_src src = {
		.name = img->name, .what = "image", .unit = "block", .arg = &s,
		.total = fs->super->s_inodes_count - fs->super->s_free_inodes_count,
		.walk = src_walk, .strerror = src_strerror, .get = src_get, .set = src_set, .get_digest = src_get_digest,
		.set_digest = src_set_digest, .get_xattr = src_get_xattr, .between = src_between,
		.finish = src_finish,
	};
	/* a copy that replaces the image only when complete: the writes' order is free */
	if (!(s.x = xattr_new(fs, img_whole_or_nothing(img)))) {
		fprintf(stderr, "fclabel %s: out of memory\n", o->cmd);
		return -1;
	}
	if (img->ov_mode)
		xattr_set_inplace(s.x, img->ov_mode == IMGFMT_OV_ORDERED, img->commit_limit);
	int rc = label_source(&src, set, o, st);
	refs_free(&s.refs);
	xattr_free(s.x);
	return rc;
}
