/*
 * Walking every directory entry of an EROFS image from the root, depth first, in directory
 * order (EROFS sorts each directory block's names). An explicit stack, so that deep trees
 * cannot exhaust the C stack; one path buffer that grows and shrinks with the walk; each
 * directory entered once (a set of the nids entered), so a hostile image with a directory loop
 * cannot hang it.
 * Damaged entries (dir.c says what) are reported with warn() and left alone, as the ext4 walk
 * does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>

#include "internal.h"

struct frame {
	struct erofs_dir cur;
	size_t pathlen;
};

struct walker {
	const struct erofs_img *img;
	erofs_walk_fn fn, leave;
	void *arg;
	void (*warn)(void *arg, const char *path, const char *msg);
	struct frame *stack;
	size_t depth, cap;
	char *path;
	size_t plen, pcap;
	uint64_t *seen;           /* open addressing, 0 free (nids are stored + 1) */
	size_t nseen, seencap;
	char msg[512];
};

static void wwarn(struct walker *w, const char *msg)
{
	if (w->warn)
		w->warn(w->arg, w->path, msg);
}

/* Adds nid to the directories entered: 1, 0 when it was there, -1 out of memory. */
static int seen_add(struct walker *w, uint64_t nid)
{
	if (2 * (w->nseen + 1) > w->seencap) {
		size_t cap = w->seencap ? 2 * w->seencap : 1024;
		uint64_t *s = calloc(cap, sizeof(*s));
		if (!s)
			return -1;
		for (size_t i = 0; i < w->seencap; i++) {
			if (!w->seen[i])
				continue;
			size_t h = (size_t)(w->seen[i] * 0x9e3779b97f4a7c15ull) & (cap - 1);
			while (s[h])
				h = (h + 1) & (cap - 1);
			s[h] = w->seen[i];
		}
		free(w->seen);
		w->seen = s;
		w->seencap = cap;
	}
	uint64_t k = nid + 1;
	size_t h = (size_t)(k * 0x9e3779b97f4a7c15ull) & (w->seencap - 1);
	while (w->seen[h]) {
		if (w->seen[h] == k)
			return 0;
		h = (h + 1) & (w->seencap - 1);
	}
	w->seen[h] = k;
	w->nseen++;
	return 1;
}

/* The path of the entry name in the directory whose path is path[0..dlen). */
static int path_set(struct walker *w, size_t dlen, const char *name, size_t nl)
{
	size_t need = dlen + 1 + nl + 1;
	if (need > w->pcap) {
		size_t cap = need * 2;
		char *p = realloc(w->path, cap);
		if (!p)
			return -1;
		w->path = p;
		w->pcap = cap;
	}
	size_t at = dlen;
	if (!(dlen == 1 && w->path[0] == '/'))
		w->path[at++] = '/';
	memcpy(w->path + at, name, nl);
	w->plen = at + nl;
	w->path[w->plen] = 0;
	return 0;
}

static int push_dir(struct walker *w, const struct erofs_inode *dir)
{
	if (w->depth == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 64;
		struct frame *s = realloc(w->stack, cap * sizeof(*s));
		if (!s)
			return ENOMEM;
		w->stack = s;
		w->cap = cap;
	}
	struct frame *f = &w->stack[w->depth++];
	erofs_dir_open(&f->cur, dir);
	f->pathlen = w->plen;
	return 0;
}

/* The directory on top is done (or damaged): it is left. 0, or -1 to stop. */
static int pop_dir(struct walker *w)
{
	struct frame *f = &w->stack[--w->depth];
	erofs_dir_close(&f->cur);
	w->plen = f->pathlen;
	w->path[w->plen] = 0;
	struct erofs_entry e = { w->path, w->plen, NULL, f->cur.dir.nid };
	return w->leave && w->leave(&e, w->arg) < 0 ? -1 : 0;
}

/* One entry of the directory on top: visited, and entered when it is a directory the walk's
 * function wants entered. 0, 1 to stop, or an errno. */
static int visit_entry(struct walker *w, struct frame *f, uint64_t nid, const char *name,
		       size_t nl)
{
	struct erofs_inode ino;
	char why[256];
	if (path_set(w, f->pathlen, name, nl))
		return ENOMEM;
	if (!nl || nl > 255 || memchr(name, '/', nl) || memchr(name, 0, nl)) {
		wwarn(w, "a name that is empty, too long or holds '/' or NUL; left out");
		return 0;
	}
	if (erofs_inode_read(w->img, nid, &ino, why, sizeof(why))) {
		snprintf(w->msg, sizeof(w->msg), "%s; left out", why);
		wwarn(w, w->msg);
		return 0;
	}
	struct erofs_entry e = { w->path, w->plen, &ino, nid };
	int r = w->fn(&e, w->arg);
	if (r < 0)
		return 1;
	if (r || !S_ISDIR(ino.mode))
		return 0;
	int s = seen_add(w, nid);
	if (s < 0)
		return ENOMEM;
	if (!s) {
		wwarn(w, "a directory met twice (a loop in a corrupt image); not entered again");
		return 0;
	}
	return push_dir(w, &ino);
}

static int walk_root(struct walker *w, const char *mountpoint)
{
	struct erofs_inode root;
	char why[256];
	size_t ml = strlen(mountpoint);
	/* the root's path: the mount point, or "/" */
	if (path_set(w, 0, mountpoint, ml))
		return ENOMEM;
	memcpy(w->path, ml ? mountpoint : "/", ml ? ml + 1 : 2);
	w->plen = ml ? ml : 1;
	if (erofs_inode_read(w->img, w->img->root_nid, &root, why, sizeof(why)) ||
	    (!S_ISDIR(root.mode) && snprintf(why, sizeof(why), "the root inode (nid %llu) is "
					     "not a directory (mode 0%o)",
					     (unsigned long long)root.nid, root.mode))) {
		snprintf(w->msg, sizeof(w->msg), "%s; nothing walked", why);
		wwarn(w, w->msg);
		return 0;
	}
	struct erofs_entry e = { w->path, w->plen, &root, root.nid };
	int r = w->fn(&e, w->arg);
	if (r)
		return 0;
	if (seen_add(w, root.nid) < 0)
		return ENOMEM;
	return push_dir(w, &root);
}

int erofs_walk(const struct erofs_img *img, const char *mountpoint, erofs_walk_fn fn,
	       erofs_walk_fn leave, void *arg,
	       void (*warn)(void *arg, const char *path, const char *msg))
{
	struct walker w = { .img = img, .fn = fn, .leave = leave, .arg = arg, .warn = warn };
	int rc = walk_root(&w, mountpoint);
	while (!rc && w.depth) {
		struct frame *f = &w.stack[w.depth - 1];
		uint64_t nid;
		const char *name;
		size_t nl;
		char why[400];
		int r = erofs_dir_next(img, &f->cur, &nid, &name, &nl, why, sizeof(why));
		if (r < 0) {
			w.path[f->pathlen] = 0;
			snprintf(w.msg, sizeof(w.msg), "%s; left out", why);
			wwarn(&w, w.msg);
		}
		if (r <= 0) {
			if (pop_dir(&w))
				break;
			continue;
		}
		r = visit_entry(&w, f, nid, name, nl);
		if (r == 1)
			break;
		rc = r;
	}
	while (w.depth) /* (stopped early) */
		erofs_dir_close(&w.stack[--w.depth].cur);
	free(w.stack);
	free(w.path);
	free(w.seen);
	return rc;
}
