/*
 * The device's tree, as --android-root ROOT and --partition NAME=PATH describe it: what is
 * mounted at "/", "/system", "/system_ext", "/product", "/vendor" and "/odm". A partition is a
 * directory (a recovery's mount, an extracted image) or an ext4 image (raw, Android sparse, a
 * block device) or an EROFS image (Android's read-only partitions since Android 13), opened
 * read-only (ext4 with a shared lock) and never written. Paths are walked as the
 * device's kernel walks them: symlinks are followed inside that tree ("/product" ->
 * "/system/product", "/odm/etc" -> "/vendor/odm/etc"), never into the machine fclabel runs on.
 * The files are read into memory: a recovery may have no writable /tmp.
 */
#include <dirent.h>
#include <errno.h>
#include <et/com_err.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

const char *const dt_part_names[AROOT_PARTS] = { "system", "system_ext", "product", "vendor",
						 "odm" };

/* --partition NAME=none: the device has no such partition (a file named none is ./none) */
static bool part_none(const struct aroot_args *a, int i)
{
	return a->part[i] && !strcmp(a->part[i], "none");
}

int dt_oom(const char *cmd)
{
	fprintf(stderr, "fclabel %s: out of memory\n", cmd);
	return -1;
}

char *dt_join(const char *dir, const char *name)
{
	size_t n = strlen(dir);
	char *p = NULL;
	if (asprintf(&p, "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", name) < 0)
		return NULL;
	return p;
}

bool dt_dir_empty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	bool empty = true;
	while (d && empty && (e = readdir(d)))
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return d && empty;
}

/* Opens path (taken over: freed with the source; NULL: out of memory) as a directory or an
 * image; -1 after saying why, naming it after what ("--partition vendor=" or "--android-root").
 * A disk image's partition: the one named part (--part's N|NAME), else the GPT partition named
 * prefer when there is one, else its only one holding a file system. */
static int src_open(struct ns *ns, struct src *s, char *path, const char *what, int lock,
		    const char *part, const char *prefer)
{
	struct stat st;
	struct img_params p = { .lock = lock };
	const char *sep = what[strlen(what) - 1] == '=' ? "" : " ";

	if (!path)
		return dt_oom(ns->cmd);
	for (size_t n = strlen(path); n > 1 && path[n - 1] == '/'; n--)
		path[n - 1] = 0; /* "R/": messages name "R/vendor.img", not "R//vendor.img" */
	s->label = path;
	s->fd = -1;
	if (stat(path, &st) < 0) {
		fprintf(stderr, "fclabel %s: %s%s%s: %s\n", ns->cmd, what, sep, qname(path),
			strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		s->fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (s->fd < 0) {
			fprintf(stderr, "fclabel %s: %s%s%s: %s\n", ns->cmd, what, sep, qname(path),
				strerror(errno));
			return -1;
		}
		s->empty = dt_dir_empty(path);
		s->open = true;
		return 0;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		fprintf(stderr, "fclabel %s: %s%s%s: not a directory, an image or a block device\n",
			ns->cmd, what, sep, qname(path));
		return -1;
	}
	s->image = true;
	/* a disk image: the partition of the GPT name asked for (ROOT a disk), else of the name
	 * of the partition it is given as, else its only one holding a file system */
	p.part = part;
	p.prefer = prefer;
	if (img_choose_part(ns->cmd, path, &p))
		return -1;
	s->where = p.where;
	if (p.where.set ? p.where.erofs : eroimg_probe(path) == 1) {
		char why[600];
		if (p.where.set ? erofs_open_range(path, p.where.offset, p.where.size, &s->ero, why,
						   sizeof(why))
				: eroimg_open(path, &s->ero, &s->ero_sparse, why, sizeof(why))) {
			fprintf(stderr, "fclabel %s: %s%s%s\n", ns->cmd, what, sep, why);
			return -1;
		}
		s->open = true;
		return 0;
	}
	if (img_open(&s->img, path, 0, &p, ns->cmd))
		return -1;
	s->open = true;
	return 0;
}

static void src_close(struct ns *ns, struct src *s)
{
	if (s->open && s->ero)
		erofs_close(s->ero);
	else if (s->open && s->image)
		img_close(&s->img, ns->cmd);
	else if (s->open)
		close(s->fd);
	free(s->label);
	memset(s, 0, sizeof(*s));
}

/* A partition found in ROOT: ROOT/NAME.img, else ROOT/NAME (a directory, not a symlink: a symlink
 * is the device's own, followed inside its tree). Both: the image when the directory is empty (a
 * mount point), else refused. 0 when found or absent, -1 after saying why. */
static int find_in_root(struct ns *ns, int i, int lock)
{
	char name[32], what[64], *img, *dir;
	struct stat si, sd;

	snprintf(name, sizeof(name), "%s.img", dt_part_names[i]);
	img = dt_join(ns->rootdir.label, name);
	dir = dt_join(ns->rootdir.label, dt_part_names[i]);
	if (!img || !dir) {
		free(img);
		free(dir);
		return dt_oom(ns->cmd);
	}
	bool has_img = !stat(img, &si) && (S_ISREG(si.st_mode) || S_ISBLK(si.st_mode));
	bool has_dir = !lstat(dir, &sd) && S_ISDIR(sd.st_mode);
	if (has_img && has_dir && !dt_dir_empty(dir)) {
		fprintf(stderr, "fclabel %s: %s: both %s and %s are there: say which is the %s "
			"partition with %s %s=PATH\n", ns->cmd, ns->ropt, qname(img), qname(dir),
			dt_part_names[i], ns->popt, dt_part_names[i]);
		free(img);
		free(dir);
		return -1;
	}
	snprintf(what, sizeof(what), "%s: partition", ns->ropt);
	if (has_img) {
		free(dir);
		return src_open(ns, &ns->part[i], img, what, lock, NULL, dt_part_names[i]);
	}
	free(img);
	if (has_dir)
		return src_open(ns, &ns->part[i], dir, what, lock, NULL, NULL);
	free(dir);
	return 0;
}

/* A partition found in ROOT, a disk image (a device's whole flash, an emulator's
 * system-qemu.img): its GPT partition named NAME, else the one slot of NAME_a and NAME_b there
 * is (has: which of the three the disk holds). Both slots: refused (which one the device
 * boots is not written in the table fclabel reads). 0 when found or absent, -1 after saying
 * why. */
static int find_in_disk(struct ns *ns, const char *disk, int i, const bool has[3], int lock)
{
	char n[3][32], what[128];

	snprintf(n[0], sizeof(n[0]), "%s", dt_part_names[i]);
	snprintf(n[1], sizeof(n[1]), "%s_a", dt_part_names[i]);
	snprintf(n[2], sizeof(n[2]), "%s_b", dt_part_names[i]);
	if (!has[0] && has[1] && has[2]) {
		fprintf(stderr, "fclabel %s: %s %s: it holds both slots, %s and %s: say which is the "
			"device's with %s %s=PATH (an image of that slot)\n", ns->cmd, ns->ropt,
			qname(disk), n[1], n[2], ns->popt, dt_part_names[i]);
		return -1;
	}
	int k = has[0] ? 0 : has[1] ? 1 : has[2] ? 2 : -1;
	if (k < 0)
		return 0;
	snprintf(what, sizeof(what), "%s: partition %s", ns->ropt, n[k]);
	return src_open(ns, &ns->part[i], strdup(disk), what, lock, n[k], NULL);
}

/* Which of NAME, NAME_a and NAME_b the disk at path holds, for each partition NAME (its table
 * read once): as img_parts_named. */
static int disk_parts(const char *path, bool has[AROOT_PARTS][3])
{
	char names[AROOT_PARTS * 3][32];
	const char *v[AROOT_PARTS * 3];
	for (int i = 0; i < AROOT_PARTS; i++)
		for (int k = 0; k < 3; k++) {
			snprintf(names[i * 3 + k], sizeof(names[0]), "%s%s", dt_part_names[i],
				 k == 0 ? "" : k == 1 ? "_a" : "_b");
			v[i * 3 + k] = names[i * 3 + k];
		}
	bool flat[AROOT_PARTS * 3];
	int r = img_parts_named(path, v, AROOT_PARTS * 3, flat);
	for (int i = 0; i < AROOT_PARTS; i++)
		for (int k = 0; k < 3; k++)
			has[i][k] = flat[i * 3 + k];
	return r;
}

/* ---- walking the device's tree ---- */

/* A path inside a directory source, relative to its descriptor. */
static const char *rel(const char *inner, size_t len, char *buf)
{
	if (!len)
		return ".";
	memcpy(buf, inner + 1, len - 1);
	buf[len - 1] = 0;
	return buf;
}

/* lookup() in a directory source. */
static errcode_t lookup_dir(struct walk *w, const struct level *l, const char *name, size_t nlen,
			    enum kind *kind)
{
	char buf[AROOT_PATH_MAX * 2];
	size_t k = l->in_len;
	struct stat st;

	if (k + 1 + nlen >= sizeof(buf) / 2)
		return ENAMETOOLONG;
	memcpy(buf, w->inner + l->in_start, k);
	buf[k] = '/';
	memcpy(buf + k + 1, name, nlen);
	const char *r = rel(buf, k + 1 + nlen, buf + sizeof(buf) / 2);
	if (fstatat(l->src->fd, r, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : (errcode_t)errno;
	*kind = S_ISDIR(st.st_mode) ? K_DIR : S_ISREG(st.st_mode) ? K_FILE
		: S_ISLNK(st.st_mode) ? K_LINK : K_OTHER;
	if (*kind == K_LINK) {
		ssize_t n = readlinkat(l->src->fd, r, w->link, sizeof(w->link) - 1);
		if (n < 0)
			return (errcode_t)errno;
		w->link[n] = 0;
	}
	return 0;
}

/* The target of the symlink at inode ino of an image, into w->link. */
static errcode_t img_link(struct walk *w, ext2_filsys fs, ext2_ino_t ino,
			  struct ext2_inode_large *inode)
{
	size_t size = EXT2_I_SIZE(inode);
	errcode_t rc;

	if (size >= sizeof(w->link))
		return ENAMETOOLONG;
	if (ext2fs_is_fast_symlink((struct ext2_inode *)inode)) {
		memcpy(w->link, inode->i_block, size);
	} else if (inode->i_flags & EXT4_INLINE_DATA_FL) {
		char tmp[sizeof(w->link) + 64];
		size_t got = 0;
		if ((rc = ext2fs_inline_data_size(fs, ino, &got)))
			return rc;
		if (got > sizeof(tmp) || got < size)
			return EXT2_ET_INLINE_DATA_CANT_ITERATE;
		if ((rc = ext2fs_inline_data_get(fs, ino, (struct ext2_inode *)inode, tmp, &got)))
			return rc;
		memcpy(w->link, tmp, size);
	} else {
		ext2_file_t f;
		unsigned got = 0;
		if ((rc = ext2fs_file_open(fs, ino, 0, &f)))
			return rc;
		rc = ext2fs_file_read(f, w->link, (unsigned)size, &got);
		ext2fs_file_close(f);
		if (rc || got != size)
			return rc ? rc : EXT2_ET_SHORT_READ;
	}
	w->link[size] = 0;
	return 0;
}

/* lookup() in an EROFS image (nids kept in the levels' 32-bit inode numbers: a nid past
 * them, metadata beyond 128 GiB, is refused). */
static errcode_t lookup_erofs(struct walk *w, const struct level *l, const char *name,
			      size_t nlen, enum kind *kind, ext2_ino_t *ino)
{
	char why[400];
	uint64_t nid;
	unsigned m;
	int e = erofs_find(l->src->ero, l->ino, name, nlen, &nid, &m, why, sizeof(why));
	if (e == ENOENT || e == ENOTDIR)
		return 0;
	if (!e && nid > UINT32_MAX)
		e = EOVERFLOW;
	if (e)
		return (errcode_t)e;
	*ino = (ext2_ino_t)nid;
	*kind = S_ISDIR(m) ? K_DIR : S_ISREG(m) ? K_FILE : S_ISLNK(m) ? K_LINK : K_OTHER;
	if (*kind == K_LINK)
		return (errcode_t)erofs_readlink(l->src->ero, nid, w->link, sizeof(w->link), why,
						 sizeof(why));
	return 0;
}

/* Looks name up in level l: its kind, and (an image) its inode, (a symlink) its target in
 * w->link. 0 (K_NONE when it is not there), or an errno / errcode_t. */
static errcode_t lookup(struct walk *w, const struct level *l, const char *name, size_t nlen,
			enum kind *kind, ext2_ino_t *ino)
{
	*kind = K_NONE;
	if (!l->src->image)
		return lookup_dir(w, l, name, nlen, kind);
	if (l->src->ero)
		return lookup_erofs(w, l, name, nlen, kind, ino);
	ext2_filsys fs = l->src->img.fs;
	struct ext2_inode_large inode;
	errcode_t rc = ext2fs_lookup(fs, l->ino, name, (int)nlen, NULL, ino);
	if (rc == EXT2_ET_FILE_NOT_FOUND)
		return 0;
	if (rc || (rc = ext2fs_read_inode_full(fs, *ino, (struct ext2_inode *)&inode, sizeof(inode))))
		return rc;
	unsigned m = inode.i_mode;
	*kind = LINUX_S_ISDIR(m) ? K_DIR : LINUX_S_ISREG(m) ? K_FILE : LINUX_S_ISLNK(m) ? K_LINK
									 : K_OTHER;
	return *kind == K_LINK ? img_link(w, fs, *ino, &inode) : 0;
}

/* A level below the top: a directory entry of the same source, or the root of a mount. */
static errcode_t push(struct walk *w, struct src *src, ext2_ino_t ino, bool mount,
		      const char *name, size_t nlen)
{
	struct level *top = &w->lv[w->depth - 1];
	size_t end = top->in_start + top->in_len;

	if (w->depth >= sizeof(w->lv) / sizeof(w->lv[0]) || end + 1 + nlen >= sizeof(w->inner))
		return ENAMETOOLONG;
	struct level *l = &w->lv[w->depth++];
	*l = (struct level){ src, ino, end, 0 };
	if (!mount) {
		l->in_start = top->in_start;
		w->inner[end] = '/';
		memcpy(w->inner + end + 1, name, nlen);
		l->in_len = top->in_len + 1 + nlen;
	}
	return 0;
}

/* The root directory's inode of an image source (0 for a directory source). */
static ext2_ino_t root_ino(const struct src *s)
{
	return !s || !s->image ? 0 : s->ero ? (ext2_ino_t)erofs_root_nid(s->ero) : EXT2_ROOT_INO;
}

/* The source mounted at "/name", if any. */
static struct src *mount_at(struct ns *ns, const char *name, size_t nlen)
{
	for (int i = 0; i < AROOT_PARTS; i++)
		if (ns->part[i].open && !(i == P_SYSTEM && ns->sar) &&
		    strlen(dt_part_names[i]) == nlen && !strncmp(dt_part_names[i], name, nlen))
			return &ns->part[i];
	return NULL;
}

/*
 * The device's path in this tree, resolved as its kernel would: components from "/", a mount's
 * root at "/NAME", symlinks followed (an absolute target from "/", at most AROOT_MAX_LINKS), ".."
 * back up. *kind is what is there (K_NONE: nothing, or a file in the middle of the path); w's
 * top level is it. 0, or an errno / errcode_t.
 */
errcode_t dt_resolve_in(struct ns *ns, struct src *top_src, struct walk *w, const char *path,
			   enum kind *kind)
{
	char rest[AROOT_PATH_MAX * 2];
	unsigned links = 0;
	size_t rl = strlen(path);
	errcode_t rc;

	if (rl >= sizeof(rest))
		return ENAMETOOLONG;
	memcpy(rest, path, rl + 1);
	char *p = rest;
restart:
	/* "/": the root source's root, or (no root) a level that holds only the mounts */
	w->depth = 1;
	w->lv[0] = (struct level){ top_src, root_ino(top_src), 0, 0 };
	*kind = K_DIR;
	for (;;) {
		while (*p == '/')
			p++;
		if (!*p)
			return 0;
		char *name = p;
		while (*p && *p != '/')
			p++;
		size_t nlen = (size_t)(p - name);
		struct level *top = &w->lv[w->depth - 1];
		if (*kind != K_DIR) {
			*kind = K_NONE; /* ENOTDIR */
			return 0;
		}
		if (nlen == 1 && name[0] == '.')
			continue;
		if (nlen == 2 && name[0] == '.' && name[1] == '.') {
			w->depth -= w->depth > 1;
			continue;
		}
		struct src *m = w->depth == 1 ? mount_at(ns, name, nlen) : NULL;
		if (m) {
			if ((rc = push(w, m, root_ino(m), true, name, nlen)))
				return rc;
			continue;
		}
		ext2_ino_t ino = 0;
		if (!top->src) {
			*kind = K_NONE;
			return 0;
		}
		if ((rc = lookup(w, top, name, nlen, kind, &ino)))
			return rc;
		if (*kind == K_NONE)
			return 0;
		if (*kind != K_LINK) {
			if ((rc = push(w, top->src, ino, false, name, nlen)))
				return rc;
			continue;
		}
		/* the target, then what is left of the path */
		size_t tl = strlen(w->link), left = strlen(p);
		if (++links > AROOT_MAX_LINKS)
			return ELOOP;
		if (tl + 1 + left >= sizeof(rest))
			return ENAMETOOLONG;
		memmove(rest + tl + 1, p, left + 1);
		memcpy(rest, w->link, tl);
		rest[tl] = '/';
		p = rest;
		*kind = K_DIR;
		if (w->link[0] == '/')
			goto restart;
	}
}

/* The device's path resolved from its "/" */
errcode_t dt_resolve(struct ns *ns, struct walk *w, const char *path, enum kind *kind)
{
	return dt_resolve_in(ns, ns->root, w, path, kind);
}

char *dt_from_name(const struct walk *w, const struct level *l)
{
	char *s = NULL;
	const char *lab = l->src->label;
	int inl = (int)l->in_len;
	const char *in = w->inner + l->in_start;
	const struct img_part *wp = &l->src->where;
	char part[96] = "";
	/* (a partition of a disk image: "DISK#vendor:/etc/...", or "DISK#4:" when unnamed) */
	if (wp->set && *wp->name)
		snprintf(part, sizeof(part), "#%s", wp->name);
	else if (wp->set)
		snprintf(part, sizeof(part), "#%d", wp->number);
	int r = l->src->image ? asprintf(&s, "%s%s:%.*s", lab, part, inl ? inl : 1, inl ? in : "/")
		: asprintf(&s, "%s%.*s", strcmp(lab, "/") ? lab : "", inl, in);
	return r < 0 ? NULL : s;
}

int dt_exists(void *arg, const char *path)
{
	struct ns *ns = arg;
	struct walk *w = malloc(sizeof(*w));
	enum kind k;
	errcode_t rc;

	if (!w)
		return -ENOMEM;
	rc = dt_resolve(ns, w, path, &k);
	free(w);
	/* libselinux asks access(): a symlink loop is as good as nothing there */
	if (rc == ELOOP)
		return 0;
	if (rc) {
		ns->err = rc;
		return -EIO;
	}
	return k != K_NONE;
}

/* The regular file r of a directory source, into *buf (NUL-terminated, *len bytes): 0, or an
 * errno. */
static int read_dir_file(const struct src *src, const char *r, char **buf, size_t *len)
{
	int fd = openat(src->fd, r, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	int e = 0;
	size_t got = 0;
	if (fd < 0 || fstat(fd, &st) < 0)
		e = errno;
	else if (!S_ISREG(st.st_mode))
		e = EINVAL;
	else if ((unsigned long long)st.st_size > AROOT_MAX_FILE)
		e = EFBIG;
	else if (!(*buf = malloc((size_t)st.st_size + 1)))
		e = ENOMEM;
	while (!e && got < (size_t)st.st_size) {
		ssize_t n = read(fd, *buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			e = n < 0 ? errno : EIO;
		else
			got += (size_t)n;
	}
	if (fd >= 0)
		close(fd);
	if (e) {
		free(*buf);
		*buf = NULL;
		return e;
	}
	(*buf)[got] = 0;
	*len = got;
	return 0;
}

int dt_read_in(struct ns *ns, struct src *top, const char *path, char **buf, size_t *len,
	       char **from)
{
	struct walk *w = malloc(sizeof(*w));
	enum kind k = K_NONE;
	errcode_t rc = w ? dt_resolve_in(ns, top, w, path, &k) : ENOMEM;

	*buf = NULL;
	*from = NULL;
	if (rc || k == K_NONE) {
		fprintf(stderr, "fclabel %s: %s: %s\n", ns->cmd, path,
			rc ? error_message(rc) : "gone while being read");
		free(w);
		return -1;
	}
	struct level l = w->lv[w->depth - 1];
	char rb[AROOT_PATH_MAX * 2];
	const char *r = rel(w->inner + l.in_start, l.in_len, rb);
	*from = dt_from_name(w, &l);
	free(w);
	if (!*from)
		return dt_oom(ns->cmd);
	if (k != K_FILE) {
		fprintf(stderr, "fclabel %s: %s (%s): not a regular file\n", ns->cmd, qname(*from),
			path);
		return -1;
	}
	if (l.src->ero) {
		char why[400];
		int e = erofs_read_nid(l.src->ero, l.ino, buf, len, AROOT_MAX_FILE, why, sizeof(why));
		if (e)
			fprintf(stderr, "fclabel %s: %s: cannot read it: %s\n", ns->cmd, qname(*from),
				why);
		return e ? -1 : 0;
	}
	if (l.src->image) {
		errcode_t e = img_read_ino(&l.src->img, l.ino, buf, len, AROOT_MAX_FILE);
		if (e)
			fprintf(stderr, "fclabel %s: %s: cannot read it: %s\n", ns->cmd, qname(*from),
				error_message(e));
		return e ? -1 : 0;
	}
	int e = read_dir_file(l.src, r, buf, len);
	if (e)
		fprintf(stderr, "fclabel %s: %s: cannot read it: %s\n", ns->cmd, qname(*from),
			strerror(e));
	return e ? -1 : 0;
}

int dt_read(struct ns *ns, const char *path, char **buf, size_t *len, char **from)
{
	return dt_read_in(ns, ns->root, path, buf, len, from);
}

/* ---- the tree, from the options ---- */

/* Where a recovery mounts the device's system (ROOT/system_root, ROOT/mnt/system), when that
 * is a directory with something in it: for a refusal's advice. */
static char *guess_system(const struct ns *ns)
{
	static const char *const at[] = { "system_root", "mnt/system" };
	struct stat st;

	for (size_t i = 0; ns->rootdir.open && i < sizeof(at) / sizeof(at[0]); i++) {
		if (fstatat(ns->rootdir.fd, at[i], &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode))
			continue;
		char *p = dt_join(ns->rootdir.label, at[i]);
		if (p && !dt_dir_empty(p)) /* (out of memory: no advice) */
			return p;
		free(p);
	}
	return NULL;
}

int dt_build(struct ns *ns, const struct aroot_args *a, int lock)
{
	const char *disk = NULL;
	bool has[AROOT_PARTS][3];
	if (a->root) {
		struct stat st;
		int bad = stat(a->root, &st) < 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
		/* a disk image holding the device's partitions by their GPT names (system or vendor,
		 * or one of their slots, among them) */
		if (bad == ENOTDIR && (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) &&
		    disk_parts(a->root, has) > 0 &&
		    (has[P_SYSTEM][0] || has[P_SYSTEM][1] || has[P_VENDOR][0] || has[P_VENDOR][1]))
			disk = a->root;
		else if (bad) {
			fprintf(stderr, "fclabel %s: %s %s: %s\n", ns->cmd, ns->ropt, qname(a->root),
				strerror(bad));
			return -1;
		}
		if (!disk && src_open(ns, &ns->rootdir, strdup(a->root), ns->ropt, lock, NULL, NULL))
			return -1;
		if (!disk && !a->part[P_SYSTEM])
			ns->sysguess = guess_system(ns);
	}
	for (int i = 0; i < AROOT_PARTS; i++) {
		char what[64];
		snprintf(what, sizeof(what), "%s %s=", ns->popt, dt_part_names[i]);
		if ((ns->none[i] = part_none(a, i)))
			continue;
		if (a->part[i] ? src_open(ns, &ns->part[i], strdup(a->part[i]), what, lock, NULL,
					  dt_part_names[i])
			       : disk ? find_in_disk(ns, disk, i, has[i], lock)
			       : a->root ? find_in_root(ns, i, lock) : 0)
			return -1;
	}
	/* system-as-root: the system partition's root holds system/etc; the device mounts it at "/" */
	struct src *sys = &ns->part[P_SYSTEM];
	if (sys->open && sys->ero) {
		char why[400];
		uint64_t d1, d2;
		unsigned m1, m2;
		ns->sar = !erofs_find(sys->ero, erofs_root_nid(sys->ero), "system", 6, &d1, &m1, why,
				      sizeof(why)) && S_ISDIR(m1) &&
			  !erofs_find(sys->ero, d1, "etc", 3, &d2, &m2, why, sizeof(why)) &&
			  S_ISDIR(m2);
	} else if (sys->open && sys->image) {
		ext2_ino_t d1, d2;
		struct ext2_inode in1, in2;
		ext2_filsys fs = sys->img.fs;
		ns->sar = !ext2fs_lookup(fs, EXT2_ROOT_INO, "system", 6, NULL, &d1) &&
			  !ext2fs_read_inode(fs, d1, &in1) && LINUX_S_ISDIR(in1.i_mode) &&
			  !ext2fs_lookup(fs, d1, "etc", 3, NULL, &d2) &&
			  !ext2fs_read_inode(fs, d2, &in2) && LINUX_S_ISDIR(in2.i_mode);
	} else if (sys->open) {
		struct stat s1, s2;
		ns->sar = !fstatat(sys->fd, "system", &s1, AT_SYMLINK_NOFOLLOW) && S_ISDIR(s1.st_mode) &&
			  !fstatat(sys->fd, "system/etc", &s2, AT_SYMLINK_NOFOLLOW) &&
			  S_ISDIR(s2.st_mode);
	}
	ns->root = ns->sar ? sys : ns->rootdir.open ? &ns->rootdir : NULL;
	return 0;
}

void dt_close(struct ns *ns)
{
	src_close(ns, &ns->rootdir);
	for (int i = 0; i < AROOT_PARTS; i++)
		src_close(ns, &ns->part[i]);
	free(ns->sysguess);
	ns->sysguess = NULL;
}

/* What a source is, for messages. */
static const char *src_kind(const struct src *s)
{
	if (!s->image)
		return s->empty ? "an empty directory: not mounted?" : "directory";
	if (s->ero)
		return s->ero_sparse ? "EROFS image, Android sparse" : "EROFS image";
	return s->img.fmt == IMGFMT_RAW ? "raw image" : s->img.fmt == IMGFMT_SPARSE
		? "Android sparse image" : "block device";
}

/* " partition 4 (\"vendor\")" after a disk image's name */
static void where_say(const struct img_part *w, FILE *f)
{
	if (w->set)
		fprintf(f, " partition %d%s%s%s", w->number, *w->name ? " (\"" : "", w->name,
			*w->name ? "\")" : "");
}

/* "/ = ROOT (directory), /system = ROOT/system.img (raw image), ..." */
void dt_describe(const struct ns *ns, FILE *f)
{
	const char *sep = "";
	if (ns->root) {
		fprintf(f, "/ = %s", qname(ns->root->label));
		where_say(&ns->root->where, f);
		fprintf(f, " (%s%s)", src_kind(ns->root),
			ns->sar ? ", the system partition: system-as-root" : "");
		sep = ", ";
	}
	for (int i = 0; i < AROOT_PARTS; i++) {
		const struct src *s = &ns->part[i];
		if (ns->none[i])
			fprintf(f, "%s/%s = none (%s %s=none)", sep, dt_part_names[i], ns->popt,
				dt_part_names[i]);
		else if (!s->open || (i == P_SYSTEM && ns->sar))
			continue;
		else {
			fprintf(f, "%s/%s = %s", sep, dt_part_names[i], qname(s->label));
			where_say(&s->where, f);
			fprintf(f, " (%s)", src_kind(s));
		}
		sep = ", ";
	}
	if (!*sep)
		fputs("nothing", f);
}

/* ---- listing a directory of the tree ---- */

struct entries {
	entry_fn fn;
	void *arg;
};

static int img_entry(ext2_ino_t dir, int entry, struct ext2_dir_entry *d, int off, int bs,
		     char *buf, void *priv)
{
	struct entries *it = priv;
	size_t n = (size_t)ext2fs_dirent_name_len(d);
	(void)dir, (void)entry, (void)off, (void)bs, (void)buf;
	if ((n == 1 && d->name[0] == '.') || (n == 2 && d->name[0] == '.' && d->name[1] == '.'))
		return 0;
	return it->fn(d->name, n, it->arg) ? DIRENT_ABORT : 0;
}

errcode_t dt_list(const struct walk *w, const struct level *l, entry_fn fn, void *arg)
{
	struct entries it = { fn, arg };
	char rb[AROOT_PATH_MAX * 2];

	if (!l->src)
		return 0; /* "/" with no root: only the mounts */
	if (l->src->ero) {
		char why[400];
		return (errcode_t)erofs_list(l->src->ero, l->ino, fn, arg, why, sizeof(why));
	}
	if (l->src->image)
		return ext2fs_dir_iterate2(l->src->img.fs, l->ino, 0, NULL, img_entry, &it);
	const char *r = rel(w->inner + l->in_start, l->in_len, rb);
	int fd = openat(l->src->fd, r, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *e;
	if (!d) {
		errcode_t rc = (errcode_t)errno;
		if (fd >= 0)
			close(fd);
		return rc;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    fn(e->d_name, strlen(e->d_name), arg))
			break;
	closedir(d);
	return 0;
}

