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

#include "pool.h"

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
		if (pool_warn(u, R_WARN_SELF, "", 0, e == ESTALE ? "it was replaced during the walk; "
			 "what is below it is left as it is" : "cannot open the directory: %s; what "
			 "is below it is left as it is", e))
			pool_fatal(u, ENOMEM);
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
			pool_free_dir(w->p, u->recs[i].child->d);
			pool_free_unit(u->recs[i].child);
		}
	w->nkids = 0;
	pool_fatal(u, e);
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
	if (pool_grow((void **)&u->recs, &u->caprec, n, sizeof(*u->recs)) ||
	    pool_grow((void **)&u->arena, &u->acap, end - pos + n * 48, 1)) {
		unit_failed(w, u, ENOMEM);
		return;
	}
	while (pos < end) {
		unsigned char type = (unsigned char)ents[pos];
		const char *name = ents + pos + 1;
		pos += strlen(name) + 2;
		if ((e = pool_prep_entry(w, u, name, type))) {
			unit_failed(w, u, e);
			return;
		}
	}
	if (!w->nkids)
		return;
	pthread_mutex_lock(&p->mu);
	if (pool_grow((void **)&p->pending, &p->cappending, p->npending + w->nkids, sizeof(*p->pending))) {
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
	struct unit *n = pool_get_unit(w, u->d);
	if (!n)
		return ENOMEM;
	n->pos = pos;
	pthread_mutex_lock(&p->mu);
	if (pool_grow((void **)&p->pending, &p->cappending, p->npending + 1, sizeof(*p->pending))) {
		pthread_mutex_unlock(&p->mu);
		pool_free_unit(n);
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
		pool_fatal(u, ENOMEM);
		return false;
	}
	if (e && pool_warn(u, R_WARN_SELF, "", 0, "cannot read the directory: %s; what is below it "
		      "is left as it is", e)) {
		pool_fatal(u, ENOMEM);
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
		pool_fatal(u, ENOMEM);
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
		pool_free_unit(u);
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
	if (pool_grow((void **)&all, &cap, 1, sizeof(*all)))
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
			if (x->recs[j].child && !pool_grow((void **)&all, &cap, n + 1, sizeof(*all)))
				all[n++] = x->recs[j].child;
		if (x->next && !pool_grow((void **)&all, &cap, n + 1, sizeof(*all)))
			all[n++] = x->next;
	}
	for (size_t i = 0; i < n; i++) {
		if (all[i]->lists)
			pool_free_dir(p, all[i]->d);
		pool_free_unit(all[i]);
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
	struct unit *root = ws ? pool_new_dir(&ws[0], NULL, t->path, t->pathlen, 0) : NULL;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY)
		p.maxfds = rl.rlim_cur / 4 < 4096 ? rl.rlim_cur / 4 : 4096;
	if (!ws || !th || !root || pool_grow((void **)&cur, &cap, 64, sizeof(*cur)) ||
	    pool_grow((void **)&p.pending, &p.cappending, 64, sizeof(*p.pending))) {
		close(rootfd);
		if (root) {
			pool_free_dir(&p, root->d);
			pool_free_unit(root);
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
			rc = pool_grow((void **)&cur, &cap, depth + 1, sizeof(*cur));
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
		pool_free_dir(&p, u->d);
		pool_free_unit(u);
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
