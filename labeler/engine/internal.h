/* Private to the engine (engine.c, report.c, digests.c): the state of one walk. */
#ifndef LABELER_ENGINE_INTERNAL_H
#define LABELER_ENGINE_INTERNAL_H

#include <sys/stat.h>

#include "engine.h"

/* Hard links: the first labeled path's answer for every multiply-linked inode. */
struct link {
	uint64_t dev, ino;
	bool used;
	const struct fc_spec *spec; /* the deciding spec (a label) */
	char *ctx;                  /* the label it gave */
	char *path;
};

struct run {
	const struct label_src *src; /* the target: a live tree (tree/), an image (ext4/) */
	const fc_set *set;
	const struct label_opts *o;
	struct label_stats *st;
	struct link *links;
	size_t nlinks, linkmask;
	double start, next_progress;
	unsigned long total;
	bool tty, progress_shown;
	bool collect_only; /* --strict's first pass: find conflicts, write nothing */
	bool need_full;    /* relabel met a hard link whose label changes: walk everything */
	struct dstate *ds;       /* --digests: the directories being walked, outermost first */
	size_t nds, capds;
	bool entry_wrong;        /* something at the entry being visited is not right */
	bool entry_verified;     /* relabel --digests: the entry's subtree was left right (prunable) */
	bool refused;            /* the target refuses every write (LSET_REFUSED): the walk stops */
	int stop;                /* the target stopped the walk (LSRC_IO, LSRC_FAILED) */
	char stop_why[1024];     /* ... and why (or why it refused) */
	unsigned long json_events; /* the report's events, when the caller counts none */
	bool read_only;          /* a live tree's file system is read-only: the walk stops */
	char read_only_at[512];  /* where that was found */
	char want[4096];         /* an app data label being made */
	/* --as-device (device.c) */
	unsigned char *dev;      /* what each directory being walked hands its entries
				  * (ANDROID_WALK_*) */
	size_t ndev, capdev;
	bool dev_keep;           /* the entry keeps the label it has (it is labeled only if it has
				  * none) */
	bool dev_lazy;           /* the entry's label decides whether what is below is walked */
	bool dev_walked;         /* init's boot walk labels (and digests) the entry in this run */
	bool dev_vold_walked;    /* ... vold's unlock walk does */
	bool shadow_keep;        /* check with device_shadow: no device walk sets the entry's
				  * label */
	int entry_differs;       /* dev_lazy: its label was not the one wanted (1), was (0), or
				  * was not compared (-1) */
};

/* A directory being walked, for --digests (digests.c). */
struct dstate {
	size_t pathlen;
	bool visited;  /* Android's boot-time walk of /data reaches it (always, without --seapp) */
	bool descends; /* ... and enters it */
	bool eligible; /* a digest belongs on it */
	bool right;    /* every label at and below it is right so far */
	bool verified; /* relabel: the last run left it right (dig_verified) */
};

/* engine.c: a damaged entry the walk reports (and leaves alone): a warning, and an error (the
 * digests above it are not known right). */
void rpt_walk_warn(void *arg, const char *path, const char *msg);
/* How a walk stopped (stopped() in engine.c): by SIGINT/SIGTERM, at an I/O error of the target,
 * at a failure it said (a commit), at a refusal (every write), at a read-only file system. */
enum { LABEL_INTERRUPTED = 1, LABEL_IO_FAILED, LABEL_FAILED, LABEL_REFUSED, LABEL_READ_ONLY };

/* report.c */
/* A write to path failed with EROFS: the walk stops (one error, not one per file). */
void label_read_only(struct run *r, const char *path);
/* Whether what a write gave (LSET_*) stops the walk: a read-only file system, a refusal of
 * every write (why, kept for the end), SIGINT or SIGTERM met while the target got ready. */
bool label_stops(struct run *r, const struct label_file *f, int rc, const char *why);
double rpt_now(void);
void rpt_clear(struct run *r);
void rpt_progress(struct run *r);
void rpt_warn(void *arg, const char *path, const char *msg);
/* A JSON event: kind, path, and what else is given. */
void rpt_event(struct run *r, const char *kind, const char *path, const char *has, const char *wants,
	   const struct fc_spec *spec, const char *extra);
const char *rpt_spec_where(const struct fc_spec *s, char *buf, size_t n);

/* digests.c */
/* Something at the current entry is not right: the directory it is in (and, as the walk leaves
 * them, those above) get no digest. */
void dig_wrong(struct run *r);
/* The walk enters the directory f (a visit said so): -1 when out of memory. */
int dig_enter(struct run *r, const struct label_file *f);
/* ... and leaves it: its digest is written (checked) when it has one. */
void dig_leave(struct run *r, const struct label_file *f);
/* A directory not entered (encrypted, an unknown package, a subtree no change reaches). */
void dig_not_entered(struct run *r, const struct label_file *f,
		     bool right, bool verified);
bool dig_verified(struct run *r, const struct label_file *f);
/* --as-device: whether the directory's security.sehash is the digest the policy gives it. */
bool dig_matches(struct run *r, const struct label_file *f);

/* device.c: --as-device, which of the device's walks reach an entry (android/'s walks.c says;
 * ANDROID_WALK_* on the stack r->dev) */
/* The walks that reach the entry f, from those its directory hands down. */
void dev_classify(struct run *r, const struct label_file *f,
		  struct android_walk *d);
/* After f (a directory) was labeled (differs: dev_lazy found its label wrong): the walks that go
 * on below it; 0: it is not entered. */
unsigned dev_below(const struct label_file *f, const struct android_walk *d, bool differs);
/* The walk enters f with what dev_below said (-1: out of memory), and leaves it. */
int dev_push(struct run *r, unsigned below);
void dev_pop(struct run *r);
/* Whether the package directory f carries installd's user.restorecon_in_progress. */
bool dev_in_progress(struct run *r, const struct label_file *f);
/* Says (-v, --json) what the device's walks decided at f and counts it. */
void dev_report(struct run *r, const struct label_file *f, const struct android_walk *d,
		int differs, bool in_progress);

#endif
