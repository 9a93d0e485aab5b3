/*
 * The live-tree walk with threads. A directory is a unit of work: the thread that takes it
 * lists it and, for each entry, looks at it as the one-thread walk (tree.c) does, never through
 * a symlink (a directory opened relative to its parent's descriptor, its mode from fstat of
 * that descriptor, its label read through it; anything else stat'ed and its label read by name
 * relative to the directory's descriptor, see by_name), looks its path up and, when the engine
 * would write that label anyway (label_writes_ahead: labeling, and not a hard-linked file),
 * writes it, always through a descriptor of the inode looked at. What it found is kept as a
 * record per entry; its subdirectories become units for any thread, taken depth first. A long
 * directory is several units, parts of PART entries each: the thread that lists it hands the
 * next part to any thread before it starts on the first, and so on, so that both threads work
 * in it at once (a single /usr/share/man/man1 is a tenth of a system's files).
 *
 * The engine sees none of that order: the calling thread hands it the records in the one-thread
 * walk's order (depth first, each directory in getdents order), so every count, message, JSON
 * event and hard-link decision is the same with any number of threads. A hard-linked file is
 * written by the engine, when its first name says so, through a descriptor opened again from
 * its directory's and checked to be the inode listed. The calling thread takes units too while
 * it waits. Memory and descriptors stay bounded: threads start no new unit while too many
 * records wait for the engine, and a subdirectory waiting for its turn keeps its descriptor only
 * while few do (else it is opened again from its parent's, which stays open until the engine
 * leaves the parent, and checked to be the directory listed). A directory's listing is read
 * whole, as the one-thread walk reads it (tree_read_dir).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

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

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 16;
	while (c < need)
		c *= 2;
	void *n = realloc(*p, c * size);
	if (!n)
		return ENOMEM;
	*p = n;
	*cap = c;
	return 0;
}

/* n bytes (and a NUL) into u's arena: the offset, or UINT32_MAX when out of memory. */
static uint32_t keep(struct unit *u, const char *s, size_t n)
{
	if (u->alen + n + 1 > UINT32_MAX || grow((void **)&u->arena, &u->acap, u->alen + n + 1, 1))
		return UINT32_MAX;
	uint32_t at = (uint32_t)u->alen;
	memcpy(u->arena + at, s, n);
	u->arena[at + n] = 0;
	u->alen += n + 1;
	return at;
}

/* A new record of kind at entry name (or of the unit itself); NULL when out of memory. */
static struct ahead *record(struct unit *u, int kind, const char *name, size_t nl,
			    const char *msg)
{
	if (grow((void **)&u->recs, &u->caprec, u->nrec + 1, sizeof(*u->recs)))
		return NULL;
	struct ahead *a = &u->recs[u->nrec];
	memset(a, 0, sizeof(*a));
	a->kind = (unsigned char)kind;
	a->u = u;
	if ((a->name = keep(u, name, nl)) == UINT32_MAX)
		return NULL;
	a->nlen = (uint32_t)nl;
	if (msg && (a->val = keep(u, msg, strlen(msg))) == UINT32_MAX)
		return NULL;
	a->vlen = msg ? (uint32_t)strlen(msg) : 0;
	u->nrec++;
	return a;
}

/* The walk cannot go on (out of memory): the engine is told where it stops. */
static void fatal(struct unit *u, int e)
{
	u->nrec = 0;
	u->alen = 0;
	struct ahead *a = record(u, R_FATAL, "", 0, NULL);
	if (a)
		a->err = e;
	else if (u->caprec) { /* the record array exists: reuse its first slot */
		memset(&u->recs[0], 0, sizeof(u->recs[0]));
		u->recs[0].kind = R_FATAL;
		u->recs[0].err = e;
		u->recs[0].u = u;
		u->nrec = 1;
	}
}

/* A warning record: 0, or ENOMEM. */
static int warn(struct unit *u, int kind, const char *name, size_t nl, const char *fmt, int e)
{
	char msg[256];
	snprintf(msg, sizeof(msg), fmt, strerror(e));
	return record(u, kind, name, nl, msg) ? 0 : ENOMEM;
}

static void free_dir(struct pool *p, struct dir *d)
{
	if (d->fd >= 0) {
		close(d->fd);
		__atomic_fetch_sub(&p->fds, 1, __ATOMIC_RELAXED);
	}
	free(d->ents);
	free(d->path);
	free(d);
}

static void free_unit(struct unit *u)
{
	free(u->recs);
	free(u->arena);
	free(u);
}

/* A unit of d: a spare of the worker's, or a new one; NULL when out of memory. */
static struct unit *get_unit(struct worker *w, struct dir *d)
{
	struct unit *u = w->units;
	if (u) {
		w->units = u->next;
		w->nunits--;
		*u = (struct unit){ 0 };
	} else if (!(u = calloc(1, sizeof(*u)))) {
		return NULL;
	}
	u->d = d;
	return u;
}

/* The directory at path (its name the last namelen bytes) and its first part, to list it. */
static struct unit *new_dir(struct worker *w, struct dir *parent, const char *path,
			    size_t pathlen, size_t namelen)
{
	struct dir *d = w->dirs;
	struct unit *u;
	if (d) {
		w->dirs = d->parent;
		w->ndirs--;
		*d = (struct dir){ .path = d->path, .pathcap = d->pathcap };
	} else if (!(d = calloc(1, sizeof(*d)))) {
		return NULL;
	}
	d->fd = -1;
	if (grow((void **)&d->path, &d->pathcap, pathlen + 1, 1) || !(u = get_unit(w, d))) {
		free(d->path);
		free(d);
		return NULL;
	}
	memcpy(d->path, path, pathlen);
	d->path[pathlen] = 0;
	d->pathlen = pathlen;
	d->namelen = namelen;
	d->parent = parent;
	u->lists = true;
	return u;
}

/* Under the lock: spares for the worker from the pool's, when it has few. */
static void take_spares(struct pool *p, struct worker *w)
{
	for (unsigned n = 0; w->nunits < SPARE_BATCH / 4 && p->spare_units && n < SPARE_BATCH; n++) {
		struct unit *u = p->spare_units;
		p->spare_units = u->next;
		u->next = w->units;
		w->units = u;
		w->nunits++;
	}
	for (unsigned n = 0; w->ndirs < SPARE_BATCH / 4 && p->spare_dirs && n < SPARE_BATCH; n++) {
		struct dir *d = p->spare_dirs;
		p->spare_dirs = d->parent;
		d->parent = w->dirs;
		w->dirs = d;
		w->ndirs++;
	}
}

/* Whether directory sb is d or one above it (a bind mount loop). */
static bool on_chain(const struct dir *d, const struct stat *sb)
{
	for (; d; d = d->parent)
		if (d->dev == sb->st_dev && d->ino == sb->st_ino)
			return true;
	return false;
}

/* The path of entry name of d into w->path: its length, or 0 when out of memory. */
static size_t entry_path(struct worker *w, const struct dir *d, const char *name, size_t nl)
{
	size_t at = d->pathlen == 1 && d->path[0] == '/' ? 0 : d->pathlen;
	if (grow((void **)&w->path, &w->pathcap, at + nl + 2, 1))
		return 0;
	memcpy(w->path, d->path, at);
	w->path[at] = '/';
	memcpy(w->path + at + 1, name, nl + 1);
	return at + 1 + nl;
}

/* The subdirectory a record leads to, open on fd (a descriptor of it, or -1 with why e). */
static int add_child(struct worker *w, struct unit *u, struct ahead *a, size_t pathlen,
		     int fd, int e)
{
	struct pool *p = w->p;
	struct unit *c = new_dir(w, u->d, w->path, pathlen, a->nlen);
	if (!c || grow((void **)&w->kids, &w->capkids, w->nkids + 1, sizeof(*w->kids))) {
		if (c) {
			free_dir(p, c->d);
			free_unit(c);
		}
		if (fd >= 0)
			close(fd);
		return ENOMEM;
	}
	c->d->dev = (dev_t)a->dev;
	c->d->ino = (ino_t)a->ino;
	a->child = c;
	if (fd < 0) {
		/* as the one-thread walk: the directory is visited, then not listed */
		if (warn(c, R_WARN_SELF, "", 0, "cannot open the directory: %s; what is below it "
			 "is left as it is", e))
			fatal(c, ENOMEM);
		c->state = U_DONE;
		return 0;
	}
	if (__atomic_fetch_add(&p->fds, 1, __ATOMIC_RELAXED) < p->maxfds) {
		c->d->fd = fd;
	} else {
		__atomic_fetch_sub(&p->fds, 1, __ATOMIC_RELAXED);
		close(fd);
	}
	w->kids[w->nkids++] = c;
	return 0;
}

/* Whether the engine will want a's label written, unless it is there already. */
static bool wants_write(const struct worker *w, const struct ahead *a)
{
	return w->p->writes_ahead && !a->lrc && a->res.status == FC_LABEL &&
	       (S_ISDIR(a->mode) || a->nlink <= 1);
}

/* The label read (len bytes in w->val, or e: ENODATA for none, an errno) into the record. */
static int keep_label(struct worker *w, struct unit *u, struct ahead *a, int e, size_t len)
{
	if (e == ENODATA) {
		a->label = L_NONE;
	} else if (e) {
		a->label = L_ERROR;
		a->err = e;
	} else {
		uint32_t at = keep(u, w->val, len);
		if (at == UINT32_MAX)
			return ENOMEM;
		a->label = L_VALUE;
		a->val = at;
		a->vlen = (uint32_t)len;
	}
	return 0;
}

static bool needs_write(const struct worker *w, const struct unit *u, const struct ahead *a)
{
	return wants_write(w, a) && a->label != L_ERROR &&
	       !(a->label == L_VALUE && label_same(u->arena + a->val, a->vlen, a->res.context));
}

/*
 * The label of the entry open as h into the record, and written when the engine would write
 * it. After a write, the next entry is opened first (w->open_first): on a tree being labeled for
 * the first time the label is then written with XATTR_CREATE, which fails when there is one
 * already (read then), and tells that there was none without reading it.
 */
static int read_and_write(struct worker *w, struct unit *u, struct ahead *a, const struct handle *h)
{
	size_t len = 0;
	int e;
	if (w->open_first && wants_write(w, a) &&
	    !tree_create_label(h, w->proc, a->res.context)) {
		a->label = L_NONE;
		a->wrote = WA_OK;
		return 0;
	}
	e = tree_read_label(h, w->proc, &w->val, &w->valcap, &len);
	if (keep_label(w, u, a, e, len))
		return ENOMEM;
	w->open_first = needs_write(w, u, a);
	if (w->open_first) {
		a->werr = tree_write_label(h, w->proc, a->res.context);
		a->wrote = a->werr ? WA_FAILED : WA_OK;
	}
	return 0;
}

/* What is not a directory, stat'ed and its label read by name relative to the directory
 * (fstatat, getxattrat, neither through a symlink): no descriptor at all when nothing is to be
 * written. A write goes through a descriptor opened then and checked to be the inode stat'ed;
 * one that is not (replaced since) is handled afresh from that descriptor: *h open on it, 1.
 * Returns 0 when done, 1 for that, 2 when getxattrat is not there (Linux < 6.13), or an errno. */
static int by_name(struct worker *w, struct unit *u, const char *name, size_t nl,
		   const struct stat *sb, struct handle *h, struct stat *sb2)
{
	struct ahead *a = record(u, R_ENTRY, name, nl, NULL);
	size_t len = 0;
	if (!a)
		return ENOMEM;
	a->mode = sb->st_mode;
	a->nlink = sb->st_nlink;
	a->uid = sb->st_uid;
	a->gid = sb->st_gid;
	a->dev = sb->st_dev;
	a->ino = sb->st_ino;
	/* (dump walks with no policy: nothing to look up) */
	a->lrc = w->p->t->set ? fc_lookup(w->p->t->set, w->path, sb->st_mode, &a->res) : 0;
	int e = tree_read_label_at(u->d->fd, name, &w->val, &w->valcap, &len);
	if (e == ENOSYS || e == ENOENT) {
		u->nrec--; /* ENOENT: removed since the listing */
		return e == ENOSYS ? 2 : 0;
	}
	if (keep_label(w, u, a, e, len))
		return ENOMEM;
	w->open_first = needs_write(w, u, a);
	if (!w->open_first)
		return 0;
	e = tree_open_entry(u->d->fd, name, IFTODT(sb->st_mode), h, sb2);
	if (e == ENOENT) {
		u->nrec--;
		return 0;
	}
	if (e) {
		a->werr = e;
		a->wrote = WA_FAILED;
		return 0;
	}
	if (sb2->st_dev != sb->st_dev || sb2->st_ino != sb->st_ino ||
	    (sb2->st_mode & S_IFMT) != (sb->st_mode & S_IFMT)) {
		u->nrec--;
		return 1;
	}
	a->opath = h->opath; /* for the message of a failed write */
	a->werr = tree_write_label(h, w->proc, a->res.context);
	a->wrote = a->werr ? WA_FAILED : WA_OK;
	close(h->fd);
	return 0;
}

/* One entry of u, as tree.c's open_next and the engine's visit would have it. */
static int prep_entry(struct worker *w, struct unit *u, const char *name, unsigned char type)
{
	struct pool *p = w->p;
	const struct label_opts *o = p->o;
	int dfd = u->d->fd;
	size_t nl = strlen(name), pl = entry_path(w, u->d, name, nl);
	struct stat sb;
	struct handle h;
	int e = 0;
	bool opened = false, enc_known = false, enc = false;

	if (!pl)
		return ENOMEM;
	if (o->nexcludes && label_excluded(o, w->path, pl))
		return 0;
	/* a directory at the listing: two calls where they are there (io.c), else as below */
	if (type == DT_DIR && !tree_open_dir_fast(dfd, name, &h, &sb, &enc))
		opened = enc_known = true;
	if (opened) {
		/* opened and stat'ed */
	} else if (type == DT_DIR || type == DT_UNKNOWN ||
		   (!w->open_first && !__atomic_load_n(&p->no_xattrat, __ATOMIC_RELAXED))) {
		/* a mount point is known without opening it (that would trigger an automount) */
		if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT))
			e = errno;
		else if (sb.st_dev != p->t->rootdev && !o->cross_mounts)
			return record(u, R_MOUNT, name, nl, NULL) ? 0 : ENOMEM;
		else
			type = IFTODT(sb.st_mode);
		if (!e && type != DT_DIR && !__atomic_load_n(&p->no_xattrat, __ATOMIC_RELAXED)) {
			struct stat sb2;
			int r = by_name(w, u, name, nl, &sb, &h, &sb2);
			if (r == 0 || r > 2)
				return r;
			if (r == 2)
				__atomic_store_n(&p->no_xattrat, true, __ATOMIC_RELAXED);
			if (r == 1) {
				sb = sb2;
				opened = true;
			}
		}
	}
	if (!e && !opened)
		e = tree_open_entry(dfd, name, type, &h, &sb);
	if (e == ENOENT)
		return 0; /* removed since the listing */
	if (e == ENOMEM)
		return ENOMEM;
	if (e)
		return warn(u, R_WARN, name, nl, "cannot open it: %s; left as it is", e);
	if (sb.st_dev != p->t->rootdev && !o->cross_mounts) {
		close(h.fd);
		return record(u, R_MOUNT, name, nl, NULL) ? 0 : ENOMEM;
	}
	if (S_ISDIR(sb.st_mode) && on_chain(u->d, &sb)) {
		close(h.fd);
		return record(u, R_WARN, name, nl, "a directory that contains itself (a bind mount "
			      "loop); not entered") ? 0 : ENOMEM;
	}
	struct ahead *a = record(u, R_ENTRY, name, nl, NULL);
	if (!a) {
		close(h.fd);
		return ENOMEM;
	}
	size_t i = (size_t)(a - u->recs);
	a->mode = sb.st_mode;
	a->nlink = sb.st_nlink;
	a->uid = sb.st_uid;
	a->gid = sb.st_gid;
	a->dev = sb.st_dev;
	a->ino = sb.st_ino;
	a->opath = h.opath;
	a->encrypted = S_ISDIR(sb.st_mode) && (enc_known ? enc : tree_encrypted(&h));
	a->lrc = p->t->set ? fc_lookup(p->t->set, w->path, sb.st_mode, &a->res) : 0;
	if (read_and_write(w, u, a, &h)) {
		close(h.fd);
		return ENOMEM;
	}
	a = &u->recs[i];
	if (!S_ISDIR(sb.st_mode) || a->encrypted) {
		/* the engine does not enter an encrypted directory */
		close(h.fd);
		return 0;
	}
	int fd = h.fd;
	e = 0;
	if (h.opath) {
		/* not a directory at the listing (or of no known type): one to read */
		fd = openat(h.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		e = errno;
		close(h.fd);
	}
	return add_child(w, u, a, pl, fd, e);
}

/* The directory's descriptor, when it was not kept: opened again from its parent's, and
 * checked; false after a warning in u (its first part). */
static bool open_dir(struct pool *p, struct unit *u)
{
	struct dir *d = u->d;
	struct stat sb;
	const char *name = d->path + d->pathlen - d->namelen;
	int fd = openat(d->parent->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int e = errno;
	if (fd >= 0 && (fstat(fd, &sb) || sb.st_dev != d->dev || sb.st_ino != d->ino)) {
		e = ESTALE;
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		if (warn(u, R_WARN_SELF, "", 0, e == ESTALE ? "it was replaced during the walk; "
			 "what is below it is left as it is" : "cannot open the directory: %s; what "
			 "is below it is left as it is", e))
			fatal(u, ENOMEM);
		return false;
	}
	d->fd = fd;
	__atomic_fetch_add(&p->fds, 1, __ATOMIC_RELAXED);
	return true;
}

/* A unit whose records failed half way: its subdirectories are dropped, the walk stops there. */
static void unit_failed(struct worker *w, struct unit *u, int e)
{
	for (size_t i = 0; i < u->nrec; i++)
		if (u->recs[i].child) {
			free_dir(w->p, u->recs[i].child->d);
			free_unit(u->recs[i].child);
		}
	w->nkids = 0;
	fatal(u, e);
}

/* Records for the entries of ents from pos to end; the subdirectories go on the pending
 * stack, the first on top. Room for n records and bytes of names is made first. */
static void run_part(struct worker *w, struct unit *u, const char *ents, size_t pos, size_t end,
		     size_t n)
{
	struct pool *p = w->p;
	int e;
	w->nkids = 0;
	/* the names, and a label of about 48 bytes each */
	if (grow((void **)&u->recs, &u->caprec, n, sizeof(*u->recs)) ||
	    grow((void **)&u->arena, &u->acap, end - pos + n * 48, 1)) {
		unit_failed(w, u, ENOMEM);
		return;
	}
	while (pos < end) {
		unsigned char type = (unsigned char)ents[pos];
		const char *name = ents + pos + 1;
		pos += strlen(name) + 2;
		if ((e = prep_entry(w, u, name, type))) {
			unit_failed(w, u, e);
			return;
		}
	}
	if (!w->nkids)
		return;
	pthread_mutex_lock(&p->mu);
	if (grow((void **)&p->pending, &p->cappending, p->npending + w->nkids, sizeof(*p->pending))) {
		pthread_mutex_unlock(&p->mu);
		unit_failed(w, u, ENOMEM);
		return;
	}
	for (size_t i = w->nkids; i-- > 0;)
		p->pending[p->npending++] = w->kids[i];
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
}

/* Where the part that starts at pos in ents (size bytes) ends: after PART entries at most; their
 * number in *n. */
static size_t part_end(const char *ents, size_t size, size_t pos, size_t *n)
{
	for (*n = 0; pos < size && *n < PART; ++*n)
		pos += strlen(ents + pos + 1) + 2;
	return pos;
}

/* The part after u, from pos on: on the pending stack for any thread (below the subdirectories
 * u finds, which the engine needs first). 0 or ENOMEM. */
static int hand_on(struct worker *w, struct unit *u, size_t pos)
{
	struct pool *p = w->p;
	struct unit *n = get_unit(w, u->d);
	if (!n)
		return ENOMEM;
	n->pos = pos;
	pthread_mutex_lock(&p->mu);
	if (grow((void **)&p->pending, &p->cappending, p->npending + 1, sizeof(*p->pending))) {
		pthread_mutex_unlock(&p->mu);
		free_unit(n);
		return ENOMEM;
	}
	u->next = n;
	p->pending[p->npending++] = n;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	return 0;
}

/* The listing of u's directory (its first part): into the worker's buffer, or, when it has more
 * than one part, the directory's. *ents then points to it; false after a warning or when out of
 * memory (in u's records). */
static bool list_dir(struct worker *w, struct unit *u, const char **ents, size_t *size)
{
	struct dir *d = u->d;
	if (d->fd < 0 && !open_dir(w->p, u))
		return false;
	w->f.fd = d->fd;
	int e = tree_read_dir(&w->f);
	if (e == ENOMEM) {
		fatal(u, ENOMEM);
		return false;
	}
	if (e && warn(u, R_WARN_SELF, "", 0, "cannot read the directory: %s; what is below it "
		      "is left as it is", e)) {
		fatal(u, ENOMEM);
		return false;
	}
	*ents = w->f.ents;
	*size = w->f.size;
	return true;
}

/* Runs a unit: lists the directory when it is the first part, hands the next part on, and makes
 * the records of its own. */
static void run_unit(struct worker *w, struct unit *u)
{
	struct dir *d = u->d;
	const char *ents = d->ents;
	size_t size = d->size, n;
	if (u->lists && !list_dir(w, u, &ents, &size))
		return;
	size_t end = part_end(ents, size, u->pos, &n);
	if (end < size && u->lists) {
		/* more than one part: the listing is the directory's now */
		d->ents = w->f.ents;
		d->size = w->f.size;
		w->f.ents = NULL;
		w->f.cap = w->f.size = 0;
	}
	if (end < size && hand_on(w, u, end)) {
		fatal(u, ENOMEM);
		return;
	}
	run_part(w, u, ents, u->pos, end, n);
}

/* Under the lock: runs u (taken from the stack) and marks it done. */
static void take(struct worker *w, struct unit *u)
{
	struct pool *p = w->p;
	u->state = U_RUNNING;
	u->counted = true;
	p->live++;
	take_spares(p, w);
	pthread_mutex_unlock(&p->mu);
	run_unit(w, u);
	pthread_mutex_lock(&p->mu);
	u->state = U_DONE;
	p->buffered += u->nrec;
	pthread_cond_broadcast(&p->done);
}

static bool may_start(const struct pool *p)
{
	return p->npending && p->live < MAX_LIVE && p->buffered < MAX_BUFFERED;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct pool *p = w->p;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->stop && !may_start(p))
			pthread_cond_wait(&p->work, &p->mu);
		if (p->stop)
			break;
		take(w, p->pending[--p->npending]);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* Under the lock: removes u from the pending stack (it is there). */
static void unpend(struct pool *p, struct unit *u)
{
	size_t i = p->npending;
	while (i-- > 0 && p->pending[i] != u)
		;
	memmove(p->pending + i, p->pending + i + 1, (p->npending - i - 1) * sizeof(*p->pending));
	p->npending--;
}

/* The engine's next unit, done: taken by this thread when no other has; while another runs it,
 * this one runs others. */
static void need(struct worker *w, struct unit *u)
{
	struct pool *p = w->p;
	pthread_mutex_lock(&p->mu);
	while (u->state != U_DONE) {
		if (u->state == U_PENDING) {
			unpend(p, u);
			take(w, u);
		} else if (may_start(p)) {
			take(w, p->pending[--p->npending]);
		} else {
			pthread_cond_wait(&p->done, &p->mu);
		}
	}
	pthread_mutex_unlock(&p->mu);
}

/* The engine is done with u (and, last, its directory): spares. Their records are freed (kept,
 * each spare would hold the most it ever held: twice the memory, for a few sleeps less). */
static void release(struct pool *p, struct unit *u, bool last)
{
	struct dir *d = u->d;
	unsigned long nrec = u->counted ? u->nrec : 0;
	bool counted = u->counted;
	free(u->recs);
	free(u->arena);
	*u = (struct unit){ 0 };
	if (last && d->fd >= 0) {
		close(d->fd);
		__atomic_fetch_sub(&p->fds, 1, __ATOMIC_RELAXED);
	}
	if (last) {
		free(d->ents);
		d->ents = NULL;
	}
	pthread_mutex_lock(&p->mu);
	p->live -= counted;
	p->buffered -= nrec;
	u->next = p->spare_units;
	p->spare_units = u;
	if (last) {
		d->parent = p->spare_dirs;
		p->spare_dirs = d;
	}
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
}

/* The spares of a list (linked by next, or by a directory's parent), freed. */
static void free_spares(struct unit *u, struct dir *d)
{
	while (u) {
		struct unit *n = u->next;
		free_unit(u);
		u = n;
	}
	while (d) {
		struct dir *n = d->parent;
		free(d->path);
		free(d);
		d = n;
	}
}

/* Frees u, the parts after it and every unit below them that the engine will not walk, and
 * the directories they list when u is a first part: those not yet taken are never run; those
 * running are waited for, and all are found before any is freed (a unit running may open its
 * directory from its parent's descriptor). wait false: no thread runs any more. */
static void discard(struct worker *w, struct unit *u, bool wait)
{
	struct pool *p = w->p;
	struct unit **all = NULL;
	size_t n = 0, cap = 0;
	if (grow((void **)&all, &cap, 1, sizeof(*all)))
		return; /* (out of memory: left, not freed) */
	all[n++] = u;
	for (size_t i = 0; i < n; i++) {
		struct unit *x = all[i];
		if (wait) {
			pthread_mutex_lock(&p->mu);
			if (x->state == U_PENDING)
				unpend(p, x);
			while (x->state == U_RUNNING)
				pthread_cond_wait(&p->done, &p->mu);
			if (x->counted) {
				p->live--;
				p->buffered -= x->nrec;
				x->counted = false;
			}
			pthread_mutex_unlock(&p->mu);
		}
		if (x->state != U_DONE)
			continue;
		for (size_t j = 0; j < x->nrec; j++)
			if (x->recs[j].child && !grow((void **)&all, &cap, n + 1, sizeof(*all)))
				all[n++] = x->recs[j].child;
		if (x->next && !grow((void **)&all, &cap, n + 1, sizeof(*all)))
			all[n++] = x->next;
	}
	for (size_t i = 0; i < n; i++) {
		if (all[i]->lists)
			free_dir(p, all[i]->d);
		free_unit(all[i]);
	}
	free(all);
}

int ahead_get(const struct ahead *a, const char **val, size_t *len, char *why, size_t n)
{
	*val = NULL;
	*len = 0;
	if (a->label == L_ERROR) {
		tree_label_error(why, n, a->opath, a->err);
		return -1;
	}
	if (a->label == L_VALUE) {
		*val = a->u->arena + a->val;
		*len = a->vlen;
	}
	return 0;
}

int ahead_set(struct tree *t, const struct ahead *a, const char *ctx)
{
	if (a->wrote != WA_NOT)
		return a->wrote == WA_FAILED ? a->werr : strcmp(ctx, a->res.context) ? EINVAL : 0;
	/* not written ahead (a hard link): through its directory's descriptor, the inode listed */
	struct handle h;
	struct stat sb;
	int e = tree_open_entry(a->u->d->fd, a->u->arena + a->name, IFTODT(a->mode), &h, &sb);
	if (e)
		return e;
	if (sb.st_dev != a->dev || sb.st_ino != a->ino)
		e = ESTALE;
	else
		e = tree_write_label(&h, t->proc, ctx);
	close(h.fd);
	return e;
}

/* The engine leaves d: its path and descriptor back. */
static void leave(struct tree *t, struct label_run *run, const struct dir *d)
{
	struct handle h = { .fd = d->fd, .opath = false, .ahead = NULL };
	t->path[d->pathlen] = 0;
	t->pathlen = d->pathlen;
	struct label_file lf = { t->path, t->pathlen, S_IFDIR, 1, d->dev, d->ino,
				 d->fd >= 0 ? &h : NULL, false, NULL, 0, 0, 0 };
	label_leave(run, &lf);
}

struct cursor {
	struct unit *u;
	size_t pos;
};

/* Hands the engine one record of the unit on top; 0, 1 to enter child, or an errno. */
static long hand(struct tree *t, struct label_run *run, struct ahead *a)
{
	const struct unit *u = a->u;
	const char *name = u->arena + a->name;
	size_t at = u->d->pathlen;
	if (a->kind == R_FATAL)
		return a->err;
	if (a->kind == R_WARN_SELF) {
		t->path[at] = 0;
		t->pathlen = at;
	} else if (tree_path_set(t, at, name, a->nlen)) {
		return ENOMEM;
	}
	if (a->kind == R_WARN || a->kind == R_WARN_SELF) {
		label_walk_warn(run, t->path, u->arena + a->val);
		return 0;
	}
	if (a->kind == R_MOUNT) {
		tree_other_fs(t);
		return 0;
	}
	struct handle h = { .fd = -1, .opath = a->opath, .ahead = a };
	struct label_file lf = { t->path, t->pathlen, a->mode, a->nlink, a->dev, a->ino, &h,
				 a->encrypted, &a->res, a->lrc, a->uid, a->gid };
	int r = label_visit(run, &lf);
	if (r < 0)
		return ENOMEM;
	if (!S_ISDIR(a->mode) || r == 1)
		return 0;
	if (!a->child) {
		lf.h = NULL;
		label_leave(run, &lf);
		return 0;
	}
	return -1;
}

static void worker_free(struct worker *w)
{
	free_spares(w->units, w->dirs);
	free(w->path);
	free(w->val);
	free(w->f.ents);
	free(w->kids);
}

long tree_walk_threads(struct tree *t, struct label_run *run, int rootfd, const struct stat *sb)
{
	struct pool p = { .t = t, .o = t->o, .writes_ahead = label_writes_ahead(run),
			  .mu = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER,
			  .done = PTHREAD_COND_INITIALIZER, .maxfds = 64 };
	struct rlimit rl;
	unsigned nw = t->threads - 1, started = 0;
	struct worker *ws = calloc(t->threads, sizeof(*ws));
	struct cursor *cur = NULL;
	size_t depth = 0, cap = 0;
	long rc = 0;
	pthread_t *th = calloc(nw ? nw : 1, sizeof(*th));
	struct unit *root = ws ? new_dir(&ws[0], NULL, t->path, t->pathlen, 0) : NULL;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY)
		p.maxfds = rl.rlim_cur / 4 < 4096 ? rl.rlim_cur / 4 : 4096;
	if (!ws || !th || !root || grow((void **)&cur, &cap, 64, sizeof(*cur)) ||
	    grow((void **)&p.pending, &p.cappending, 64, sizeof(*p.pending))) {
		close(rootfd);
		if (root) {
			free_dir(&p, root->d);
			free_unit(root);
		}
		free(ws);
		free(th);
		free(cur);
		free(p.pending);
		return ENOMEM;
	}
	root->d->fd = rootfd;
	p.pending[p.npending++] = root;
	p.fds = 1;
	root->d->dev = sb->st_dev;
	root->d->ino = sb->st_ino;
	for (unsigned i = 0; i < t->threads; i++)
		ws[i].p = &p;
	for (; started < nw; started++)
		if (pthread_create(&th[started], NULL, worker_main, &ws[started + 1]))
			break; /* fewer threads: the walk is the same */
	cur[depth++] = (struct cursor){ root, 0 };
	while (depth) {
		struct cursor *c = &cur[depth - 1];
		struct unit *u = c->u;
		need(&ws[0], u);
		if (c->pos >= u->nrec) {
			/* the next part of the directory, or the directory is left */
			struct unit *n = u->next;
			if (!n)
				leave(t, run, u->d);
			release(&p, u, !n);
			*c = (struct cursor){ n, 0 };
			depth -= !n;
			continue;
		}
		struct ahead *a = &u->recs[c->pos++];
		rc = hand(t, run, a);
		if (rc == -1) {
			rc = grow((void **)&cur, &cap, depth + 1, sizeof(*cur));
			if (!rc)
				cur[depth++] = (struct cursor){ a->child, 0 };
			a->child = rc ? a->child : NULL;
		} else if (!rc && a->child) {
			/* not entered after all (the engine skips it): nothing below it is done */
			discard(&ws[0], a->child, true);
			a->child = NULL;
		}
		if (rc)
			break;
	}
	pthread_mutex_lock(&p.mu);
	p.stop = true;
	pthread_cond_broadcast(&p.work);
	pthread_mutex_unlock(&p.mu);
	for (unsigned i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	/* a walk that stopped: what the engine has not seen */
	while (depth--) {
		struct unit *u = cur[depth].u;
		for (size_t i = 0; i < u->nrec; i++)
			if (u->recs[i].child)
				discard(&ws[0], u->recs[i].child, false);
		if (u->next)
			discard(&ws[0], u->next, false);
		free_dir(&p, u->d);
		free_unit(u);
	}
	for (unsigned i = 0; i < t->threads; i++)
		worker_free(&ws[i]);
	free_spares(p.spare_units, p.spare_dirs);
	free(p.pending);
	free(ws);
	free(th);
	free(cur);
	return rc;
}
