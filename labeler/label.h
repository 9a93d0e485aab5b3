/* labeler/: walking an ext4 image with libext2fs and reading/writing security.selinux. */
#ifndef LABEL_H
#define LABEL_H

#include <ext2fs/ext2_fs.h>
#include <ext2fs/ext2fs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fcontexts.h"
#include "android.h"

/* ---- image.c ---- */
#include "imgfmt.h"

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
};
enum { LOCK_WAIT, LOCK_NONE, LOCK_NONBLOCK };
/* Opens an ext4/3/2 image (raw, Android sparse, or a block device); on failure prints why
 * (naming the image) and returns non-zero. Refuses what must not be written: mounted, errors,
 * needs recovery. */
int img_open(struct image *img, const char *name, unsigned flags, const struct img_params *p,
	     const char *cmd);
/* After a failed run: a sparse image's original is kept as it was; in place, what was held
 * since the last commit is dropped. */
void img_abandon(struct image *img);
/* (image.c) What img_open took besides the file system (the journal, the inode tables). */
void img_release(struct image *img);
/* ---- inplace.c ---- */
/* The image's jbd2 journal, opened below the overlay (*j NULL: it has none). 0, or why not
 * (EXT2_ET_UNSUPP_FEATURE: a journal fclabel does not write, or on another device). */
errcode_t img_journal_load(ext2_filsys fs, struct imgfmt_journal **j, char *why, size_t n);
/* Before writing: a journal that needs recovery is replayed, as a mount would (*reopen: the
 * file system must be opened again); one that cannot be, or that holds transactions its
 * superblock does not ask to replay, refuses the image. -1 after saying why. */
int img_recover(struct image *img, const char *cmd, bool *reopen);
/* In place: the overlay set to write through the journal, or in crash order. -1 after saying
 * why. */
int img_begin_writes(struct image *img, bool sync, const char *cmd, bool verbose);
/* ---- repair.c ---- */
/* An image written in crash order that was not cleanly closed: what an interrupted write
 * leaves (leaked attribute blocks, free counts, reference counts, quota usage) made right, or
 * the image refused when more is wrong. -1 after saying why. */
int img_repair(struct image *img, const char *cmd);
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

/* ---- mmp.c: multiple mount protection ---- */
enum { MMP_NONE, MMP_CLEAN, MMP_HELD, MMP_DAMAGED };
/* What the image's MMP block says: no mmp feature, clean (nobody holds it; its time noted in
 * img->mmp_time), held by another node (mounted there, or e2fsck's mark: who, in why) or not a
 * valid MMP block (why). */
int mmp_look(struct image *img, char *why, size_t n);
/* For imgfmt_set_before_write (arg: the image, written in place): claims the image under MMP as
 * e2fsck does (this waits twice the update interval and a second), so that no other node mounts
 * it while it is written; ext2fs_close2 releases it (a clean sequence). */
errcode_t mmp_claim(void *arg, char *why, size_t n);

/* ---- xattr.c ---- */
struct xattr_ctx;
/* deferred: the image is written as a copy that replaces it only when complete (the order of
 * the writes is free): label blocks are held in memory and each written once, by
 * xattr_write_back, which must then come before the image is closed. */
struct xattr_ctx *xattr_new(ext2_filsys fs, bool deferred);
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
/* security.sehash: the value (up to 64 bytes; *len 0 when absent), and writing one. The inode
 * is read afresh: pass it to xattr_get_label again after a write. */
errcode_t xattr_get_digest(struct xattr_ctx *x, ext2_ino_t ino, unsigned char *out, size_t *len);
errcode_t xattr_set_digest(struct xattr_ctx *x, ext2_ino_t ino, const unsigned char *digest,
			   size_t len);
/* Any attribute's value by its full name (*len 0 when absent, or longer than max). */
errcode_t xattr_get_value(struct xattr_ctx *x, ext2_ino_t ino, const char *name,
			  unsigned char *out, size_t max, size_t *len);
/* xattr_set_label's and xattr_set_digest's own refusals (not errno values, nor libext2fs's
 * codes); xattr_strerror says why. XATTR_E_CLAIMS refuses the image (every later allocation
 * too): its block bitmap cannot be trusted (claims.c). */
#define XATTR_E_CLAIMS ((errcode_t)-10)
#define XATTR_E_INLINE_SYMLINK ((errcode_t)-11)
#define XATTR_E_EA_INODE ((errcode_t)-12)
#define XATTR_E_TOO_BIG ((errcode_t)-14)
const char *xattr_strerror(const struct xattr_ctx *x, errcode_t rc);
/* In place (the image's overlay holds the writes): ordered (no journal) holds back what must
 * reach the disk after the inodes; a commit is due once limit blocks are held. */
void xattr_set_inplace(struct xattr_ctx *x, bool ordered, size_t limit);
bool xattr_commit_due(const struct xattr_ctx *x);
/* Whether writes are held, waiting for a commit. */
bool xattr_held(const struct xattr_ctx *x);
/* Between two files: what is held made durable together (quota usage included). After a
 * failure none follows; xattr_commit_failed says so, and xattr_inodes_on_disk whether the
 * labels of the failed one reached the disk even so (in order: the inodes came before). */
errcode_t xattr_commit(struct xattr_ctx *x);
bool xattr_commit_failed(const struct xattr_ctx *x);
bool xattr_inodes_on_disk(const struct xattr_ctx *x);
/* At the end: the quota usage changes of the labels written (quota.c) made in the quota files,
 * and in place the last commit: 0, or an errcode_t with why (why empty: not the quota's). */
errcode_t xattr_finish(struct xattr_ctx *x, char *why, size_t n);
/* How many EA blocks this run allocated and how many references it added to shared ones, and
 * how long the look at the image's block claims took (claims.c). */
void xattr_stats(const struct xattr_ctx *x, unsigned long *allocated, unsigned long *shared,
		 double *claims_seconds);
/* The image's orphans (orphans.c), read once: they hold references like any inode in use. */
struct orphans;
errcode_t xattr_orphans(struct xattr_ctx *x, const struct orphans **o);
/* After a labeling walk: the reference counts of the label-only blocks made right (the
 * orphans' references counted). */
errcode_t xattr_reconcile(struct xattr_ctx *x, unsigned long *fixed);
/* The label blocks held in memory written to the image (before it is closed, and before
 * anything else reads attribute blocks from it). 0 or an errcode_t. */
errcode_t xattr_write_back(struct xattr_ctx *x);

/* ---- orphans.c ---- */
/* The orphans of an image copied from a mounted file system (the orphan list, the orphan file):
 * open but deleted inodes that hold their blocks and attribute-block references until a mount
 * releases them (struct orphans: above). */
/* Reads them (at most s_inodes_count, whatever the image says): 0, or an errcode_t. */
errcode_t orphans_read(ext2_filsys fs, struct orphans **out);
void orphans_free(struct orphans *o);
/* Whether an inode holds its blocks and its attribute block's reference: its links count is not
 * 0, or it is an orphan (o may be NULL: none). */
bool inode_holds_blocks(const struct orphans *o, ext2_ino_t ino, const struct ext2_inode *in);

/* ---- claims.c ---- */
/* Called for every inode of the inode tables that may be in use (inode as on disk, isize bytes);
 * a negative return stops the scan (EXT2_ET_CANCEL_REQUESTED). */
typedef int (*itable_fn)(ext2_filsys fs, ext2_ino_t ino, const struct ext2_inode *inode,
			 void *arg);
errcode_t itable_each(ext2_filsys fs, itable_fn fn, void *arg);
/* Every block the file system's metadata and its inodes (those in use, and the orphans) claim,
 * as e2fsck's pass 1 finds them, against each other and the block bitmap: the first block
 * claimed twice (cross, naming inode and block; "" when none: the scan stops there) and the
 * first claimed block the bitmap calls free (free). With shared_blocks, files may share data
 * blocks. Claims outside the file system and damaged tree nodes are e2fsck's to drop, and not
 * counted. 0; CLAIMS_E_INTERRUPTED at SIGINT or SIGTERM (label_stop_signal); or an errcode_t
 * when a block could not be read. */
struct claims_result {
	char cross[256];
	char free[256];
	bool keep;                   /* in: keep every claim in claimed (freed by the caller) */
	ext2fs_block_bitmap claimed;
};
#define CLAIMS_E_INTERRUPTED ((errcode_t)-13) /* (not an errno value, nor libext2fs's) */
errcode_t claims_scan(ext2_filsys fs, const struct orphans *orphans, struct claims_result *res);

/* ---- quota.c ---- */
struct quota;
/* The image's quota files (NULL when it has no quota feature, or out of memory). */
struct quota *quota_new(ext2_filsys fs);
void quota_free(struct quota *q);
/* bytes more (or less) space used by the inode's owner, group and project: added up, 0 or ENOMEM. */
int quota_charge(struct quota *q, const struct ext2_inode_large *inode, int64_t bytes);
/* Whether the quota files may be written, before the first write: each quota inode reserved or
 * in use, a regular file, a v2 quota file of its type whose tree is readable. 0, or an
 * errcode_t with why (naming the quota type and the inode). */
errcode_t quota_check(struct quota *q, char *why, size_t n);
/* The changes made in the quota files (existing entries only): all of them, only what was
 * charged, or only what was given back. 0, or an errcode_t with why. */
enum { QC_ALL, QC_UP, QC_DOWN };
errcode_t quota_commit(struct quota *q, int which, char *why, size_t n);
/* Repair: usage (a struct quota whose charges are what each owner's inodes use, added up with
 * quota_charge) made the usage of every entry of q's files; *fixed entries changed. 0, or an
 * errcode_t with why (an owner with no entry is one). */
errcode_t quota_repair(struct quota *q, struct quota *usage, unsigned long *fixed, char *why,
		       size_t n);

/* ---- walk.c ---- */
struct walk_entry {
	ext2_ino_t ino;
	ext2_ino_t parent;
	const char *path;          /* mount point prefixed, NUL-terminated */
	size_t pathlen;
	struct ext2_inode_large *inode;
};
/* Called for every entry, root first, depth first in directory order. Return 0 to go on, 1 to
 * skip a directory's subtree, -1 to stop. Every directory fn says to enter is left, with leave()
 * (path and inode number; inode NULL), once its entries are walked or could not be read. */
typedef int (*walk_fn)(const struct walk_entry *e, void *arg);
/* Returns 0, or an errcode_t when the walk could not go on; problems with single entries
 * (bad inode numbers, loops, unreadable directories) go to warn() and are counted. */
struct walk_stats {
	unsigned long warnings;
};
errcode_t walk_image(ext2_filsys fs, const char *mountpoint, walk_fn fn, walk_fn leave, void *arg,
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
	FILE *json;                /* the report's events array, open (the caller writes the rest of
				    * the report), or NULL */
	unsigned long *json_events; /* with json: how many events the array holds (counted on) */
	bool verify;               /* relabel --verify's check: only what is wrong is reported,
				    * each as the verify's own event ("verify-differs") */
	FILE *list;                /* check: differing files go here */
	const struct fc_diff *diff; /* relabel: enter only directories a change can reach */
	bool cross_mounts;         /* a live tree: enter file systems mounted below it too */
	unsigned threads;          /* a live tree: threads walking it (0: as many as CPUs) */
	struct appdata *appdata;   /* --seapp: app data labels, and Android's rules of what a device
				    * leaves alone (no file_contexts match, unknown packages) */
	bool digests;              /* --digests: security.sehash on the directories restorecon
				    * checks (with appdata: those Android's boot-time walk of /data
				    * visits; else every directory) */
	const fc_set *oldset;      /* relabel --digests: a subtree no change reaches is taken as
				    * right when its root has the digest this policy gives */
	bool device;               /* --as-device: only what a device's own walks of its /data
				    * would do (device.c); with appdata and digests */
	bool ignore_digests;       /* --ignore-digests: those walks do not stop at a matching
				    * digest */
	bool device_shadow;        /* check of a device's /data without --as-device: count the
				    * differences in level the device's walks keep
				    * (device_levels) */
	unsigned android_build;    /* SEAPP_BUILD_*: how the device's libselinux was built */
	const struct policy_file *policy_files; /* --android-root: the files the policy is from,
						 * for the JSON report */
	size_t npolicy_files;
};
struct label_stats {
	unsigned long scanned, changed, unchanged, nolabel, conflicts, errors, warnings;
	unsigned long nomatch;             /* of nolabel: no spec matched (not <<none>>) */
	unsigned long links;               /* second (and later) names of a hard-linked file */
	unsigned long ea_allocated, ea_shared;
	unsigned long nospace;             /* files left unlabeled: no free block for the label */
	unsigned long dirs, dirs_skipped;  /* directories entered, and left out by the diff */
	unsigned long unknown_pkgs;        /* app data of packages packages.list does not know */
	unsigned long seapp_failed;        /* app data whose seapp lookup fails on a device too */
	unsigned long encrypted;           /* encrypted directories: labeled, not entered */
	unsigned long digests_written;     /* (would be) written; check: missing or stale */
	unsigned long digests_unchanged;   /* right already */
	unsigned long digests_withheld;    /* not written: some label below is not right */
	/* --as-device */
	unsigned long dirs_digest_skipped; /* directories whose digest matches: not walked */
	unsigned long pkgs_right, pkgs_wrong; /* package directories whose own label is right (not
					       * entered), and wrong (relabeled whole) */
	unsigned long kept;                /* labels left as they are: no device walk sets them */
	unsigned long pkgs_in_progress;    /* of pkgs_wrong, those marked restorecon_in_progress */
	unsigned long device_levels;       /* check, device_shadow: differences only in the level
					    * (MLS range) on files no device walk labels */
	unsigned long total;               /* about how many files there are (progress) */
	unsigned long written;             /* labels on disk (in place: as of the last commit; a
					    * copy: all or none, as the image is replaced or not) */
	unsigned long digests_on_disk;     /* likewise, digests */
	double claims_seconds;             /* the look at the image's block claims (claims.c) */
	bool interrupted;                  /* stopped by SIGINT or SIGTERM */
	const char *aborted;               /* --strict's first pass stopped the run: why (the
					    * report's "aborted") */
	double seconds;
};
/* Set by the SIGINT/SIGTERM handler (the signal's number): walks stop at the next file. */
#include <signal.h>
extern volatile sig_atomic_t label_stop_signal;
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
	bool encrypted;            /* a directory with the encrypt flag: its names are ciphertext */
	const struct fc_result *res; /* the lookup of path and mode, made by the walk (NULL: the
				      * engine looks it up), and what fc_lookup returned */
	int res_rc;
};
/* LSET_READONLY: the file system is read-only (EROFS): the walk stops there, one error. */
enum { LSET_OK, LSET_ERROR, LSET_NOSPACE, LSET_READONLY };
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
	/* A directory's security.sehash (*len 0 when absent, at most 64 bytes), and writing it:
	 * 0, or non-zero with why (LSET_READONLY: a read-only file system). */
	int (*get_digest)(void *arg, const struct label_file *f, unsigned char *out, size_t *len,
			  char *why, size_t n);
	int (*set_digest)(void *arg, const struct label_file *f, const unsigned char *d, size_t len,
			  char *why, size_t n);
	/* Another attribute, name (*len 0 when absent; at most max bytes, a longer value is read
	 * as absent): 0, or non-zero with why. */
	int (*get_xattr)(void *arg, const struct label_file *f, const char *name,
			 unsigned char *out, size_t max, size_t *len, char *why, size_t n);
};
int label_source(const struct label_src *src, const fc_set *set, const struct label_opts *o,
		 struct label_stats *st);
int label_visit(struct label_run *run, const struct label_file *f);
/* Once a directory label_visit said to enter is done with (its entries walked, or it could not
 * be read): f as visited, with the path and a handle on it (h NULL when it could not be
 * opened). */
void label_leave(struct label_run *run, const struct label_file *f);
/* Whether this walk's engine writes, when asked, every file whose label is not what its lookup
 * says, except hard-linked files (which the first name decides): then a walk may write such
 * labels ahead of label_visit, and hand the outcome to src->set. */
bool label_writes_ahead(struct label_run *run);
/* Whether a stored value (len bytes) is the label ctx (stored with its NUL or without). */
bool label_same(const char *cur, size_t len, const char *ctx);
/* A file the walk could not handle: a warning, counted as an error. */
void label_walk_warn(struct label_run *run, const char *path, const char *msg);
/* Whether -e leaves path out. */
bool label_excluded(const struct label_opts *o, const char *path, size_t len);

/* ---- report.c ---- */
/* The JSON report's schema (fclabel-report(5), man/fclabel-report.schema.json). */
#define REPORT_SCHEMA "fclabel-report/1"
/* A JSON string; file names are bytes: valid UTF-8 (RFC 3629: no surrogates, overlong forms or
 * code points past U+10FFFF) passes, any other byte 0xXX becomes the
 * lone surrogate \udcXX (Python's "surrogateescape" reads it back as that byte). */
void rpt_json_str(FILE *f, const char *s);
/* A file name for text output: as it is, or, when it holds a control character, a double quote,
 * a backslash or bytes that are not UTF-8, in double quotes with C escapes (\n \t \" \\ \ooo), as
 * git writes names with core.quotePath (valid UTF-8 stays as it is). The result stays valid
 * until the fourth call after. */
const char *qname(const char *s);
/* The report's file (--json FILE): '-' is standard output; a regular file (or a new one) is
 * written as a temporary file beside it, renamed over it by rpt_file_close, and the report that
 * was there is removed when it is opened; anything else (a FIFO, a name under /dev or /proc:
 * /dev/stdout) is opened to append, and written as the run goes. rpt_file_open: 0, or -1
 * after saying why. rpt_file_close (sync: fsync before the rename): 0, or -1 with errno (the
 * temporary file removed). rpt_file_drop: the temporary file removed. */
struct rpt_file {
	FILE *f;
	char *path; /* where the report goes (a symlink's target) */
	char *tmp;  /* the temporary file, NULL when written as it is */
};
int rpt_file_open(struct rpt_file *r, const char *name, const char *cmd);
int rpt_file_close(struct rpt_file *r, bool sync);
void rpt_file_drop(struct rpt_file *r);
/* What the command (cmd: "label") says on standard error, kept for a failed run's report:
 * rpt_capture_start makes stderr a stream that writes through and keeps the lines that begin
 * "fclabel CMD: ", warnings and notes aside, without that prefix; rpt_captured() gives them,
 * one a line (at most 4 KiB); rpt_capture_stop puts stderr back. */
void rpt_capture_start(const char *cmd);
const char *rpt_captured(void);
void rpt_capture_stop(void);

/* ---- androidroot.c: the device's own policy (--android-root, --partition) ---- */
/* A file the policy was taken from: for -v and the JSON report. */
struct policy_file {
	const char *kind; /* "file_contexts" or "seapp_contexts" */
	const char *part; /* "plat", "system_ext", "product", "vendor", "odm", or "legacy" */
	const char *path; /* the path the device reads it by */
	char *from;       /* where it was read: a file, or IMAGE:/PATH */
};
struct policy_files {
	struct policy_file *v;
	size_t n;
};
void policy_files_free(struct policy_files *pf);
/* (report.c) The JSON report's   "policy_files": [...],\n when there are any. */
void policy_files_json(FILE *f, const struct policy_file *v, size_t n);
struct aroot_args;
/*
 * Finds the device's file_contexts, and with sa its seapp_contexts, as its libselinux does
 * (seapp_find_policy), in the partitions a describes, and loads them (flags: FC_NO_DUPS) from
 * memory. Images are opened read-only (lock: LOCK_*) and closed before it returns. Says on stderr
 * which file it took for what (with a->quiet, only when verbose), with verbose also where the
 * partitions are. EXIT_OK (*set, *sa, *pf filled), or EXIT_USAGE after saying why, naming what
 * is missing or bad, a partition not mounted or a recovery's own files.
 */
int aroot_load(const char *cmd, const struct aroot_args *a, unsigned flags, int lock,
	       bool verbose, fc_set **set, seapp_set **sa, struct policy_files *pf);
/* A boolean build flag (RELEASE_...) as the device's system partition lists it in its
 * /system/etc/build_flags.json: 1, or 0 when false or not listed (*from: the file, malloc'd);
 * -1 when there is no such file or it is not JSON (*from NULL). */
int aroot_build_flag(const char *cmd, const struct aroot_args *a, int lock, const char *name,
		     char **from);
/* ---- devdata.c ---- */
/* Whether the /data at target (mounted at mp) carries Android's digests: a 20-byte
 * security.sehash on its root or a top directory (named in where). 1, 0, or -1 after saying why
 * the target could not be read. An image is opened read-only (ip: its lock) and closed. */
int data_digested(const char *target, bool tree, const struct img_params *ip, const char *cmd,
		  const char *mp, char *where, size_t n);
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
errcode_t img_identify(const char *path, struct img_identity *id);
/* The same, from an open file system. */
void ident_read(ext2_filsys fs, struct img_identity *id);
void ident_free(struct img_identity *id);
/* The mount point a run takes: given is -a's ("" the root, NULL none), force
 * --force-mount-point. EXIT_OK with *mp the image's own when there is no -a (NULL: the root, as
 * without identification), or EXIT_USAGE after saying why (-a contradicts the image, or it
 * says two things and there is no -a). */
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
/* ---- tree.c ---- */
/* Labels (or checks) the live tree at dir with openat/fstatat, never following a symlink. */
int label_dir(const char *dir, const fc_set *set, const struct label_opts *o,
	      struct label_stats *st);
/* Whether the directory itself carries a label. */
bool dir_is_labeled(const char *dir);

#endif
