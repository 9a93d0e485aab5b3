/*
 * labeler/engine/: the walk every target shares (a live tree, an ext4 image): what each file
 * should be labeled, hard links, digests, the device's walks, the report. A target reaches it
 * through struct label_src.
 */
#ifndef LABELER_ENGINE_H
#define LABELER_ENGINE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fcontexts.h"
#include "android.h"

/* A file the policy was taken from: for -v and the JSON report. */
struct policy_origin {
	const char *kind; /* "file_contexts" or "seapp_contexts" */
	const char *part; /* "plat", "system_ext", "product", "vendor", "odm", or "legacy" */
	const char *path; /* the path the device reads it by */
	char *from;       /* where it was read: a file, or IMAGE:/PATH */
};
struct policy_origins {
	struct policy_origin *v;
	size_t n;
};
void policy_origins_free(struct policy_origins *pf);
/* (report.c) The JSON report's   "policy_files": [...],\n when there are any. */
void policy_origins_json(FILE *f, const struct policy_origin *v, size_t n);
/* ---- engine.c ---- */
/* LM_DUMP: no policy, nothing written; each file is handed to label_opts.dump with its label. */
enum label_mode { LM_LABEL, LM_DRYRUN, LM_CHECK, LM_RELABEL /* only to image_command */, LM_DUMP };
struct label_file;
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
	const struct policy_origin *policy_files; /* --android-root: the files the policy is from,
						 * for the JSON report */
	size_t npolicy_files;
	/* LM_DUMP: called for every file the walk meets (root first, every name of a hard-linked
	 * file), with its label as stored (NULL when it has none; len bytes, a trailing NUL
	 * included when stored with one). Non-zero stops the walk (out of memory). Encrypted
	 * directories are listed, not entered: their names are ciphertext, no path. */
	int (*dump)(void *arg, const struct label_file *f, const char *label, size_t len);
	void *dump_arg;
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
extern volatile sig_atomic_t label_stop_signal;

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
	unsigned uid, gid;         /* the owner (for dump; every walk fills them) */
};
/* What a write gave: LSET_ERROR and LSET_NOSPACE (nothing left on it: a free block or space)
 * leave the file as it was, and count as errors; LSET_READONLY (a read-only file system) and
 * LSET_REFUSED (the target refuses every write: why says why) stop the walk, one error;
 * LSET_LEFT leaves it as it is after damage found there (a warning and an error, as a damaged
 * entry the walk meets); LSET_INTERRUPTED: SIGINT or SIGTERM came while the target got ready. */
enum { LSET_OK, LSET_ERROR, LSET_NOSPACE, LSET_READONLY, LSET_REFUSED, LSET_LEFT,
       LSET_INTERRUPTED };
/* How a walk ended, and what between() and finish() say: done; stopped between two files,
 * whole (a signal, a refusal); an I/O error of the target; a failure (a commit, the target
 * replaced). */
enum { LSRC_DONE, LSRC_STOPPED, LSRC_IO, LSRC_FAILED };
/*
 * A target of the engine: a live tree (tree/), an image (ext4/). The engine asks it, never the
 * format: it walks, reads and writes labels, digests and other attributes, and says what a
 * write takes besides (between two files, and at the end).
 */
struct label_src {
	const char *name;          /* the directory or image, for messages */
	const char *what, *unit;   /* "file system" and "space", "image" and "block": what a full
				    * target has no free ... of */
	unsigned long total;       /* about how many files: progress only */
	void *arg;
	/* Calls label_visit for every file, root first, depth first; its return value says
	 * whether to enter a directory (0), skip it (1) or stop (-1). Returns 0, or an error
	 * code that strerror below says (an errno when it is NULL). */
	long (*walk)(void *arg, struct label_run *run);
	const char *(*strerror)(long rc);
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
	/* Before each file (NULL: nothing to do): whether the walk may go on (0), or how it must
	 * stop (LSRC_IO, LSRC_FAILED) with why; *durable: the labels written so far are on disk
	 * (what the target held was made durable). */
	int (*between)(void *arg, bool *durable, char *why, size_t n);
	/* After the walk, how it ended (LSRC_*): what writing takes at the end, and the target's
	 * counts in st (NULL: nothing to do). 0, or LSRC_IO or LSRC_FAILED with why; *durable: every
	 * label written is on disk. */
	int (*finish)(void *arg, int how, struct label_stats *st, bool *durable, char *why,
		      size_t n);
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
/* The report's frame, around the events the walk writes (rpt_head, then "events": [ ... ],
 * then rpt_tail): the whole of fclabel-report/1 is written here, by one JSON writer. */
struct rpt_run {
	const char *cmd;     /* "label", "check", "relabel" */
	const char *mode;    /* "label", "check", "dry-run" */
	const char *target;  /* NULL: not given (the arguments were bad) */
	bool tree;           /* a live tree, not an image */
	int part_number;     /* a partition of a disk image (0: none): its number, */
	const char *part_name; /* ... GPT name ("" when none) and bytes */
	unsigned long long part_offset, part_size;
	const struct policy_origin *policy;
	size_t npolicy;
};
void rpt_head(FILE *j, const struct rpt_run *h);
/* How the run ended. */
struct rpt_end {
	bool events_open;    /* rpt_events_open was called: the list is closed here */
	bool labels_written; /* the labels and digests the counts say were written are on disk */
	bool device;         /* --as-device: its counts */
	const char *stage;   /* the stage that failed ("arguments", "policy", ...), or NULL */
	const char *message; /* ... what it said */
	const char *result;  /* "written", "not-written", "partly-written", "checked", "dry-run" */
	bool interrupted;
	int exit_status;
};
void rpt_events_open(FILE *j);
void rpt_tail(FILE *j, const struct label_stats *st, const struct rpt_end *e);
int rpt_file_close(struct rpt_file *r, bool sync);
void rpt_file_drop(struct rpt_file *r);
/* What the command (cmd: "label") says on standard error, kept for a failed run's report:
 * rpt_capture_start makes stderr a stream that writes through and keeps the lines that begin
 * "fclabel CMD: ", warnings and notes aside, without that prefix; rpt_captured() gives them,
 * one a line (at most 4 KiB); rpt_capture_stop puts stderr back. */
void rpt_capture_start(const char *cmd);
const char *rpt_captured(void);
void rpt_capture_stop(void);

#endif
