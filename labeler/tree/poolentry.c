/*
 * The threaded live-tree walk (treepool.c), at one entry: what a thread finds there, as tree.c's
 * one-thread walk and the engine's visit would find it, kept as a record for the engine; the label
 * looked up and, when the engine would write it anyway, written through a descriptor of the inode
 * looked at. The records' arena and the warnings the engine is to print are here too.
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

int pool_grow(void **p, size_t *cap, size_t need, size_t size)
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

void pool_free_dir(struct pool *p, struct dir *d)
{
	if (d->fd >= 0) {
		close(d->fd);
		__atomic_fetch_sub(&p->fds, 1, __ATOMIC_RELAXED);
	}
	free(d->ents);
	free(d->path);
	free(d);
}

void pool_free_unit(struct unit *u)
{
	free(u->recs);
	free(u->arena);
	free(u);
}

/* A unit of d: a spare of the worker's, or a new one; NULL when out of memory. */
struct unit *pool_get_unit(struct worker *w, struct dir *d)
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
struct unit *pool_new_dir(struct worker *w, struct dir *parent, const char *path,
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
	if (pool_grow((void **)&d->path, &d->pathcap, pathlen + 1, 1) || !(u = pool_get_unit(w, d))) {
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

/* n bytes (and a NUL) into u's arena: the offset, or UINT32_MAX when out of memory. */
static uint32_t keep(struct unit *u, const char *s, size_t n)
{
	if (u->alen + n + 1 > UINT32_MAX || pool_grow((void **)&u->arena, &u->acap, u->alen + n + 1, 1))
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
	if (pool_grow((void **)&u->recs, &u->caprec, u->nrec + 1, sizeof(*u->recs)))
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
void pool_fatal(struct unit *u, int e)
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
int pool_warn(struct unit *u, int kind, const char *name, size_t nl, const char *fmt, int e)
{
	char msg[256];
	snprintf(msg, sizeof(msg), fmt, strerror(e));
	return record(u, kind, name, nl, msg) ? 0 : ENOMEM;
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
	if (pool_grow((void **)&w->path, &w->pathcap, at + nl + 2, 1))
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
	struct unit *c = pool_new_dir(w, u->d, w->path, pathlen, a->nlen);
	if (!c || pool_grow((void **)&w->kids, &w->capkids, w->nkids + 1, sizeof(*w->kids))) {
		if (c) {
			pool_free_dir(p, c->d);
			pool_free_unit(c);
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
		if (pool_warn(c, R_WARN_SELF, "", 0, "cannot open the directory: %s; what is below it "
			 "is left as it is", e))
			pool_fatal(c, ENOMEM);
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
int pool_prep_entry(struct worker *w, struct unit *u, const char *name, unsigned char type)
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
		return pool_warn(u, R_WARN, name, nl, "cannot open it: %s; left as it is", e);
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
