/* The threaded live-tree walk's own types (treepool.c: the pool and its threads; poolentry.c:
 * what a thread does at one entry of a directory). Private to those two files. */
#ifndef TREE_POOL_H
#define TREE_POOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "internal.h"

enum { R_ENTRY, R_WARN, R_WARN_SELF, R_MOUNT, R_FATAL };
enum { L_VALUE, L_NONE, L_ERROR };
enum { WA_NOT, WA_OK, WA_FAILED };
enum { U_PENDING, U_RUNNING, U_DONE };

/* Threads start no new unit past these: records waiting for the engine, units started and not
 * yet left. */
#define MAX_BUFFERED 65536
#define MAX_LIVE 1024
/* Entries of a directory in one unit: a few milliseconds of work, against a few microseconds
 * a unit costs. */
#define PART 256
/* Spare units and directories a thread takes from the pool's at once. */
#define SPARE_BATCH 64

struct unit;

/* What a thread found at one entry (or a warning in its place), for the engine. */
struct ahead {
	unsigned char kind, label, wrote;
	bool opath, encrypted;
	int err;             /* L_ERROR's errno, R_FATAL's */
	int werr;            /* WA_FAILED's errno */
	uint32_t name, nlen; /* in the unit's arena: the entry's name */
	uint32_t val, vlen;  /* ... its label (a NUL after it), or the warning */
	unsigned mode;
	unsigned long nlink;
	unsigned uid, gid;
	uint64_t dev, ino;
	int lrc;             /* fc_lookup's return */
	struct fc_result res;
	struct unit *u;      /* the part of a directory it is in */
	struct unit *child;  /* a directory to enter (its first part) */
};

/* A directory: its path and descriptor, and a listing of more than one part. */
struct dir {
	struct dir *parent;      /* (a spare's: the next spare) */
	char *path;
	size_t pathlen, namelen; /* its name ends the path */
	size_t pathcap;
	int fd;                  /* -1: not open (opened from the parent's when listed) */
	dev_t dev;
	ino_t ino;
	char *ents;              /* tree_read_dir's listing, shared by the parts */
	size_t size;
};

/* A unit of work: a part of a directory's listing and, once a thread ran it, its records. The
 * first part lists the directory. */
struct unit {
	struct dir *d;
	struct unit *next;       /* the next part, made when this one runs; final once done (a
				  * spare's: the next spare) */
	size_t pos;              /* where the part starts in d->ents */
	bool lists;              /* the first part */
	int state;
	bool counted;            /* in the pool's live and buffered counts */
	struct ahead *recs;
	size_t nrec, caprec;
	char *arena;
	size_t alen, acap;
};

struct pool {
	struct tree *t;
	const struct label_opts *o;
	bool writes_ahead;
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	struct unit **pending; /* a stack: the first subdirectory on top */
	size_t npending, cappending;
	unsigned long live, buffered;
	unsigned long fds, maxfds; /* descriptors of units waiting their turn */
	bool no_xattrat;           /* getxattrat(2) is not there: labels read through descriptors */
	bool stop;
	/* what the engine is done with, for reuse: freed, a unit one thread made and another
	 * frees takes the maker's malloc arena lock, and both threads slept on it */
	struct unit *spare_units;
	struct dir *spare_dirs;
};

/* One thread's buffers. */
struct worker {
	struct pool *p;
	char *path, *val;
	size_t pathcap, valcap;
	char proc[TREE_PROC_LEN];
	struct frame f;
	struct unit **kids;
	size_t nkids, capkids;
	bool open_first; /* the last entry's label was written: open the next before reading */
	struct unit *units; /* spares taken from the pool's */
	struct dir *dirs;
	unsigned nunits, ndirs;
};

/* *p grown to hold need items of size bytes (*cap items now): 0, or ENOMEM. */
int pool_grow(void **p, size_t *cap, size_t need, size_t size);

/* The walk cannot go on (out of memory): the engine is told where it stops. */
void pool_fatal(struct unit *u, int e);

/* A warning record: 0, or ENOMEM. */
int pool_warn(struct unit *u, int kind, const char *name, size_t nl, const char *fmt, int e);

/* One entry of u, as tree.c's open_next and the engine's visit would have it. */
int pool_prep_entry(struct worker *w, struct unit *u, const char *name, unsigned char type);

/* A directory, or a unit, the walk no longer needs: freed (a directory's descriptor closed). */
void pool_free_dir(struct pool *p, struct dir *d);
void pool_free_unit(struct unit *u);

/* A unit of d: a spare of the worker's, or a new one; NULL when out of memory. */
struct unit *pool_get_unit(struct worker *w, struct dir *d);

/* The directory at path (its name the last namelen bytes) and its first part, to list it. */
struct unit *pool_new_dir(struct worker *w, struct dir *parent, const char *path,
			  size_t pathlen, size_t namelen);

#endif
