/* labeler/ext4/: an ext2/3/4 image, read and written with libext2fs. */
#ifndef LABELER_EXT4_H
#define LABELER_EXT4_H

#include <ext2fs/ext2_fs.h>
#include <ext2fs/ext2fs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fcontexts.h"
#include "imgfmt.h"
#include "engine/engine.h"

/* ---- image.c ---- */

/* The partition of a disk image the run works on (part.c): set, or the whole image. */
struct img_part {
	bool set;
	int number;
	char name[80];              /* its GPT name, "" when none */
	uint64_t offset, size;      /* bytes */
	bool erofs;                 /* it holds EROFS (labeler/erofs/ reads it), not ext2/3/4 */
};
struct image {
	ext2_filsys fs;
	const char *name;
	bool rw, no_sync, replaced; /* replaced: written as a copy renamed over it */
	bool mounted;               /* (read-only) the image is mounted: what is read may be stale */
	enum img_format fmt;
	int lockfd;                 /* holds the BSD lock on the image, -1 when none */
	/* written in place (inplace.c): through its journal, or in crash order */
	int ov_mode;                /* IMGFMT_OV_JOURNAL, IMGFMT_OV_ORDERED; 0: not in place */
	struct imgfmt_journal *journal;
	size_t commit_limit;        /* blocks held before a commit is due */
	uint64_t *itab;             /* the inode tables' first blocks, sorted */
	size_t nitab;
	ext2fs_block_bitmap records; /* the bitmaps', descriptors' and superblocks' blocks */
	struct imgfmt_overlay_stats ovst; /* what the writes in place took */
	bool repair;                /* not cleanly closed, written in crash order: repair.c first */
	bool abandoned;             /* in place, after a failure: closed as the last commit left it */
	bool keep_marker;           /* ... which failed part of the way: the superblock keeps saying
				     * so (needs_recovery, or not clean), for the next run */
	dev_t dev;                  /* the file opened (img_still_target) */
	ino_t ino;
	bool lost;                  /* img_close found the path naming another file (or none) */
	bool mmp_started;           /* in place: MMP claimed (mmp.c), to be made clean at close */
	uint64_t mmp_time;          /* the MMP block's time when it was opened (clean) */
	struct img_part part;       /* the partition of a disk image it is (part.set), or none */
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
	int lock;           /* --lock: LOCK_WAIT (default), LOCK_NONE, LOCK_NONBLOCK */
	bool unsafe;        /* --no-crash-safety: in place, written straight, in libext2fs's order */
	const char *part;   /* --part N|NAME: which partition of a disk image (NULL: the only one) */
	bool root;          /* -a /: a Discoverable Partitions root is preferred */
	const char *prefer; /* with no part: the GPT partition of this name, when there is one
			     * (--partition vendor=DISK takes DISK's "vendor") */
	struct img_part where; /* (img_choose_part) the partition chosen */
};
enum { LOCK_WAIT, LOCK_NONE, LOCK_NONBLOCK };
/* Opens an ext4/3/2 image (raw, Android sparse, or a block device); on failure prints why
 * (naming the image) and returns non-zero. Refuses what must not be written: mounted, errors,
 * needs recovery. */
int img_open(struct image *img, const char *name, unsigned flags, const struct img_params *p,
	     const char *cmd);
/* A disk image (GPT or MBR, raw or sparse): the partition p->part names, or with none the only
 * one holding an ext2/3/4 file system, into p->where (left unset for an image with no table,
 * read whole as before). 0, or -1 after saying why not (several candidates, none, one past the
 * disk's end or smaller than its file system): a refused image. */
int img_choose_part(const char *cmd, const char *name, struct img_params *p);
/* Which of the k GPT names gpt[] (exactly) the disk image at name has partitions of, into
 * has[] (its table read once): how many, 0 (none, or no table: a file system), or -1 when its
 * table cannot be read (said by img_choose_part). */
int img_parts_named(const char *name, const char *const *gpt, size_t k, bool *has);
/* After a failed run: a sparse image's original is kept as it was; in place, what was held
 * since the last commit is dropped. */
void img_abandon(struct image *img);
/* Whether the image's path still names the file that was opened (device and inode), not another
 * one moved there (or nothing) during the run: 1, or 0 with why ("IMAGE was replaced by another
 * file during the run") in why. img_open and img_close ask it; ask it before each write. */
int img_still_target(const struct image *img, char *why, size_t n);
/* Whether the root directory carries a label: an image that was never labeled has none. */
bool image_is_labeled(struct image *img);
/* A regular file of the image (path inside it, from its root), at most max bytes, into a
 * NUL-terminated malloc'd *buf. Returns 0 or an errcode_t. */
errcode_t img_read_file(struct image *img, const char *path, char **buf, size_t *len,
			size_t max);
/* The same for the regular file at inode ino. */
errcode_t img_read_ino(struct image *img, ext2_ino_t ino, char **buf, size_t *len, size_t max);
/* Flushes and closes; returns 0, or -1 after printing why (the result was not written: a copy
 * left the image as it was; in place, what was written before the failure may be there). */
int img_close(struct image *img, const char *cmd);
/* Whether the image is written whole or not at all (a copy renamed over it, a sparse image):
 * after a failure it is as it was. */
bool img_whole_or_nothing(const struct image *img);

/* ---- identify.c: what an image says it is ---- */
struct img_identity {
	bool read;                    /* the image could be read: what follows is known */
	char volume[EXT2_LABEL_LEN + 1]; /* s_volume_name */
	char last_mounted[65];        /* s_last_mounted */
	/* the mount point ("/": the root) each names, or NULL */
	const char *by_volume, *by_last, *by_shape;
	char shape_why[200];          /* "it holds A and B, as a vendor image does" */
	const char *mountpoint;       /* what they name together: NULL when nothing, or conflict */
	bool conflict;                /* its volume name and its shape name different ones */
	char why[480];                /* the mount point's reasons (or the two that disagree) */
	struct ident_name {
		char *name;
		unsigned mode;
	} *top;                       /* the root's entries (not lost+found), the first 64 */
	size_t ntop;
	bool taken;                   /* (ident_choose) the run takes its mount point from it */
	const char *forced;           /* (ident_choose) ... or -a's, against it */
};
/* What the image at path says of itself, read-only (no lock, nothing written or printed):
 * 0, or an errcode_t when it cannot be read (id->read false; img_open will say why). */
errcode_t img_identify(const char *path, const struct img_part *part, struct img_identity *id);
/* The same, from an open file system. */
void ident_read(ext2_filsys fs, struct img_identity *id);
/* (prescan.c) A run that will write the image at path starts looking at its block claims on a
 * thread of its own (a raw image in a plain file, whole: anything else is scanned before the
 * first write, as always); img_prescan_end stops it and lets it go, at the end of the run. */
void img_prescan_start(const char *path, const struct img_part *part);
void img_prescan_end(void);
/* ... of any tree (an EROFS image): a name's mode in directory *dir (n bytes; *dir then its
 * inode; 0 when absent), from root; the root's entries (ident_top_add each); its volume name
 * and where it was last mounted ("" or NULL: none). */
struct ident_tree {
	void *arg;
	uint64_t root;
	unsigned (*lookup)(void *arg, uint64_t *dir, const char *name, size_t n);
	void (*list_top)(void *arg, struct img_identity *id);
	const char *volume, *last_mounted;
};
void ident_read_tree(const struct ident_tree *t, struct img_identity *id);
bool ident_top_add(struct img_identity *id, const char *name, size_t len, unsigned mode);
void ident_free(struct img_identity *id);
/* The mount point a run takes: given is -a's ("" the root, NULL none), force
 * --force-mount-point. 0 with *mp the image's own when there is no -a (NULL: the root, as
 * without identification), or -1 after saying why (-a contradicts the image, or it says two
 * things and there is no -a: the user's slip, a usage error for the command). */
int ident_choose(const char *cmd, const char *target, struct img_identity *id, const char *given,
		 bool force, const char **mp);
/* The summary's line when the mount point came from the image, or -a overrode it:
 * "fclabel CMD: IMAGE: VERB as /vendor (why)". */
void ident_say(FILE *f, const char *cmd, const char *target, const struct img_identity *id,
	       const char *verb);
/* Why the image is not userdata when it says so (into buf), else NULL: for hints that only fit
 * a /data image (--packages). */
const char *ident_not_userdata(const struct img_identity *id, char *buf, size_t n);
/* After a walk of an image that says nothing of where it is mounted: when no spec matched most
 * of the files (nomatch of scanned), says so (naming the mount points at which the specs label
 * most of its top-level names) and returns true: the run is not a success. mp: the mount point
 * used ("" the root). */
bool ident_most_unlabeled(const char *cmd, const char *target, const struct img_identity *id,
			  const fc_set *set, const char *mp, unsigned long scanned,
			  unsigned long nomatch);
/* ---- source.c ---- */
/* Labels (or checks) every file of the open image, through the engine (label_source). Returns
 * 0 when the walk completed. */
int ext4_label(struct image *img, const fc_set *set, const struct label_opts *o,
	       struct label_stats *st);

#endif
