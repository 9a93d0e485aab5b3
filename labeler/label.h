/* labeler/: walking an ext4 image with libext2fs and reading/writing security.selinux. */
#ifndef LABEL_H
#define LABEL_H

#include <ext2fs/ext2_fs.h>
#include <ext2fs/ext2fs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fcontexts.h"

/* ---- image.c ---- */
#include "imgfmt.h"

struct image {
	ext2_filsys fs;
	const char *name;
	bool rw, no_sync, replaced; /* replaced: written as a copy renamed over it */
	enum img_format fmt;
};
enum { IMG_RW = 1, IMG_FORCE = 2 };
/* How a raw image file is written: in place, or as a labeled copy renamed over it (AUTO: the
 * copy when its labels need blocks, i.e. 128-byte inodes, where writes in place cannot all be
 * ordered for a crash) */
enum { REPLACE_AUTO, REPLACE_ALWAYS, REPLACE_NEVER };
struct img_params {
	const char *undo;   /* -z: an undo file e2undo can replay (raw images, block devices) */
	const char *output; /* -o: where the result goes (default: over the image) */
	bool no_sync;       /* --no-sync: do not wait for the written data to reach the disk */
	int replace;        /* --atomic, --in-place */
};
/* Opens an ext4/3/2 image (raw, Android sparse, or a block device); on failure prints why
 * (naming the image) and returns non-zero. Refuses what must not be written: mounted, errors,
 * needs recovery. */
int img_open(struct image *img, const char *name, unsigned flags, const struct img_params *p,
	     const char *cmd);
/* After a failed run: a sparse image's original is kept as it was. */
void img_abandon(struct image *img);
/* Whether the root directory carries a label: an image that was never labeled has none. */
bool image_is_labeled(struct image *img);
/* Flushes and closes; returns 0 or prints why. */
int img_close(struct image *img, const char *cmd);

/* ---- xattr.c ---- */
struct xattr_ctx;
struct xattr_ctx *xattr_new(ext2_filsys fs);
void xattr_free(struct xattr_ctx *x);
/* The current security.selinux value of an inode. *len = 0 and *val = NULL when absent.
 * The value is valid until the next call. Returns 0 or an errcode_t. */
errcode_t xattr_get_label(struct xattr_ctx *x, ext2_ino_t ino, struct ext2_inode_large *inode,
			  const char **val, size_t *len);
/* Writes security.selinux = ctx plus its trailing NUL; inode is the inode as read (a full
 * EXT2_INODE_SIZE buffer), and is updated. Identical EA blocks holding only a label
 * are shared between inodes, as the kernel does. */
errcode_t xattr_set_label(struct xattr_ctx *x, ext2_ino_t ino, struct ext2_inode_large *inode,
			  const char *ctx);
/* How many EA blocks this run allocated and how many references it added to shared ones. */
void xattr_stats(const struct xattr_ctx *x, unsigned long *allocated, unsigned long *shared);
/* After a labeling walk: the reference counts of the label-only blocks made right. */
errcode_t xattr_reconcile(struct xattr_ctx *x, unsigned long *fixed);

/* ---- walk.c ---- */
struct walk_entry {
	ext2_ino_t ino;
	ext2_ino_t parent;
	const char *path;          /* mount point prefixed, NUL-terminated */
	size_t pathlen;
	struct ext2_inode_large *inode;
};
/* Called for every entry, root first, depth first in directory order. Return 0 to go on, 1 to
 * skip a directory's subtree, -1 to stop. */
typedef int (*walk_fn)(const struct walk_entry *e, void *arg);
/* Returns 0, or an errcode_t when the walk could not go on; problems with single entries
 * (bad inode numbers, loops, unreadable directories) go to warn() and are counted. */
struct walk_stats {
	unsigned long warnings;
};
errcode_t walk_image(ext2_filsys fs, const char *mountpoint, walk_fn fn, void *arg,
		     struct walk_stats *st, void (*warn)(void *arg, const char *path, const char *msg));

/* ---- engine.c ---- */
enum label_mode { LM_LABEL, LM_DRYRUN, LM_CHECK, LM_RELABEL /* only to image_command */ };
struct label_opts {
	enum label_mode mode;
	const char *cmd;
	const char *mountpoint;    /* "" or "/system" */
	char **excludes;           /* normalized absolute paths */
	size_t nexcludes;
	bool verbose;              /* print each change */
	bool strict;               /* a hard link conflict is an error before any write */
	bool progress;             /* a progress line on stderr (only when it is a terminal) */
	FILE *json;                /* report, or NULL */
	FILE *list;                /* check: differing files go here */
	const struct fc_diff *diff; /* relabel: enter only directories a change can reach */
	bool cross_mounts;         /* a live tree: enter file systems mounted below it too */
};
struct label_stats {
	unsigned long scanned, changed, unchanged, nolabel, conflicts, errors, warnings;
	unsigned long ea_allocated, ea_shared;
	unsigned long nospace;             /* files left unlabeled: no free block for the label */
	unsigned long dirs, dirs_skipped;  /* directories entered, and left out by the diff */
	double seconds;
};
/* Labels (or checks) every file of the open image. Returns 0 when the walk completed. */
int label_tree(struct image *img, const fc_set *set, const struct label_opts *o,
	       struct label_stats *st);

/* The same engine on a live directory tree (tree.c): one file as a walk sees it, and how labels
 * are read and written there. */
struct label_run; /* the engine's state during a walk */
struct label_file {
	const char *path;          /* mount point prefixed, NUL-terminated */
	size_t pathlen;
	unsigned mode;             /* type and permission bits */
	unsigned long nlink;
	uint64_t dev, ino;         /* the same pair, the same file (hard links) */
	void *h;                   /* the walk's handle on this very inode */
};
enum { LSET_OK, LSET_ERROR, LSET_NOSPACE };
struct label_src {
	const char *name;          /* the directory, for messages */
	unsigned long total;       /* about how many files: progress only */
	void *arg;
	/* Calls label_visit for every file, root first, depth first; its return value says
	 * whether to enter a directory (0), skip it (1) or stop (-1). Returns 0 or an errno. */
	long (*walk)(void *arg, struct label_run *run);
	/* The current label (*val NULL when there is none), valid until the next call; or
	 * non-zero, with why the label cannot be read in why. */
	int (*get)(void *arg, const struct label_file *f, const char **val, size_t *len,
		   char *why, size_t n);
	/* Writes ctx with its trailing NUL: LSET_OK, or LSET_ERROR / LSET_NOSPACE with a reason. */
	int (*set)(void *arg, const struct label_file *f, const char *ctx, char *why, size_t n);
};
int label_source(const struct label_src *src, const fc_set *set, const struct label_opts *o,
		 struct label_stats *st);
int label_visit(struct label_run *run, const struct label_file *f);
/* A file the walk could not handle: a warning, counted as an error. */
void label_walk_warn(struct label_run *run, const char *path, const char *msg);
/* Whether -e leaves path out. */
bool label_excluded(const struct label_opts *o, const char *path, size_t len);

/* ---- tree.c ---- */
/* Labels (or checks) the live tree at dir with openat/fstatat, never following a symlink. */
int label_dir(const char *dir, const fc_set *set, const struct label_opts *o,
	      struct label_stats *st);
/* Whether the directory itself carries a label. */
bool dir_is_labeled(const char *dir);

#endif
