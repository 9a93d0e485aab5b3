/*
 * --android-root ROOT and --partition NAME=PATH: the device's own file_contexts and seapp_contexts,
 * found as its libselinux finds them (seapp_find_policy says which paths, in which order) in the
 * tree the device would see: what is mounted at "/", "/system", "/system_ext", "/product",
 * "/vendor" and "/odm". A partition is a directory (a recovery's mount, an extracted image) or an
 * ext4 image (raw, Android sparse, a block device), opened read-only with a shared lock and
 * never written. Paths are walked as the device's kernel walks them: symlinks are followed inside
 * that tree ("/product" -> "/system/product", "/odm/etc" -> "/vendor/odm/etc"), never into the
 * machine fclabel runs on. The files are read into memory: a recovery may have no writable /tmp.
 * The tree must be the device's: a partition's mount point that is an empty directory (not
 * mounted) is refused unless --partition NAME=none or the device's fstab says it has none, and
 * so are a recovery's own copies at its root unless --partition system=ROOT names them.
 */
#include <dirent.h>
#include <errno.h>
#include <et/com_err.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"
#include "ext4/ext4.h"

#define AROOT_MAX_FILE (256u << 20)
#define AROOT_MAX_LINKS 40
#define AROOT_PATH_MAX 4096

static const char *const part_names[AROOT_PARTS] = { "system", "system_ext", "product", "vendor",
						     "odm" };
enum { P_SYSTEM, P_SYSTEM_EXT, P_PRODUCT, P_VENDOR, P_ODM };

bool aroot_given(const struct aroot_args *a)
{
	for (int i = 0; i < AROOT_PARTS; i++)
		if (a->part[i])
			return true;
	return a->root != NULL;
}

bool aroot_partition_opt(struct aroot_args *a, const char *cmd, const char *opt, const char *arg)
{
	const char *eq = strchr(arg, '=');
	for (int i = 0; eq && eq[1] && i < AROOT_PARTS; i++)
		if ((size_t)(eq - arg) == strlen(part_names[i]) &&
		    !strncmp(arg, part_names[i], (size_t)(eq - arg))) {
			a->part[i] = eq + 1;
			return true;
		}
	fprintf(stderr, "fclabel %s: %s '%s': want NAME=PATH (or NAME=none) with NAME one of "
		"system, system_ext, product, vendor, odm\n", cmd, opt, arg);
	return false;
}

bool aroot_partition(struct aroot_args *a, const char *cmd, const char *arg)
{
	return aroot_partition_opt(a, cmd, "--partition", arg);
}

/* --partition NAME=none: the device has no such partition (a file named none is ./none) */
static bool part_none(const struct aroot_args *a, int i)
{
	return a->part[i] && !strcmp(a->part[i], "none");
}

/* Where a partition, or ROOT, is read from. */
struct src {
	char *label;    /* its path, as messages name it */
	bool image;
	bool empty;     /* a directory with nothing in it: a mount point with nothing mounted */
	int fd;         /* a directory: an O_PATH descriptor */
	struct image img;
	bool open;
};

/* The device's tree: what is mounted at "/" and at "/NAME". */
struct ns {
	const char *cmd;
	const char *ropt, *popt;      /* the options' names: --android-root, --partition */
	const char *policy;           /* what lines call the policy: "policy" */
	struct src rootdir;           /* ROOT (a directory) */
	struct src part[AROOT_PARTS];
	bool none[AROOT_PARTS];       /* --partition NAME=none: nothing mounted at /NAME */
	struct src *root;             /* at "/": the system partition when it is system-as-root,
				       * else ROOT, else none */
	bool sar;
	char *sysguess;               /* ROOT/system_root (or ROOT/mnt/system), not empty: where a
				       * recovery mounts the device's system, when not given */
	errcode_t err;                /* the last lookup's error, when not an errno */
};

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir);
	char *p = NULL;
	if (asprintf(&p, "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", name) < 0) {
		fputs("fclabel: out of memory\n", stderr);
		exit(EXIT_USAGE);
	}
	return p;
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p) {
		fputs("fclabel: out of memory\n", stderr);
		exit(EXIT_USAGE);
	}
	return p;
}

static bool dir_empty(const char *path)
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

/* Opens path (taken over: freed with the source) as a directory or an image; -1 after saying
 * why, naming it after what ("--partition vendor=" or "--android-root"). */
static int src_open(struct ns *ns, struct src *s, char *path, const char *what, int lock)
{
	struct stat st;
	struct img_params p = { .lock = lock };
	const char *sep = what[strlen(what) - 1] == '=' ? "" : " ";

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
		s->empty = dir_empty(path);
		s->open = true;
		return 0;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		fprintf(stderr, "fclabel %s: %s%s%s: not a directory, an image or a block device\n",
			ns->cmd, what, sep, qname(path));
		return -1;
	}
	s->image = true;
	if (img_open(&s->img, path, 0, &p, ns->cmd))
		return -1;
	s->open = true;
	return 0;
}

static void src_close(struct ns *ns, struct src *s)
{
	if (s->open && s->image)
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

	snprintf(name, sizeof(name), "%s.img", part_names[i]);
	img = join(ns->rootdir.label, name);
	dir = join(ns->rootdir.label, part_names[i]);
	bool has_img = !stat(img, &si) && (S_ISREG(si.st_mode) || S_ISBLK(si.st_mode));
	bool has_dir = !lstat(dir, &sd) && S_ISDIR(sd.st_mode);
	if (has_img && has_dir && !dir_empty(dir)) {
		fprintf(stderr, "fclabel %s: %s: both %s and %s are there: say which is the %s "
			"partition with %s %s=PATH\n", ns->cmd, ns->ropt, qname(img), qname(dir),
			part_names[i], ns->popt, part_names[i]);
		free(img);
		free(dir);
		return -1;
	}
	snprintf(what, sizeof(what), "%s: partition", ns->ropt);
	if (has_img) {
		free(dir);
		return src_open(ns, &ns->part[i], img, what, lock);
	}
	free(img);
	if (has_dir)
		return src_open(ns, &ns->part[i], dir, what, lock);
	free(dir);
	return 0;
}

/* ---- walking the device's tree ---- */

enum kind { K_NONE, K_DIR, K_FILE, K_LINK, K_OTHER };

/* One directory of the walk: its source, and the path inside that source (inner[0..in_len),
 * from in_start) or its inode. */
struct level {
	struct src *src;
	ext2_ino_t ino;
	size_t in_start, in_len;
};

struct walk {
	struct level lv[AROOT_PATH_MAX / 2];
	size_t depth;
	char inner[AROOT_PATH_MAX * 2]; /* the levels' paths inside their sources, one after another */
	char link[AROOT_PATH_MAX];
};

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

/* Looks name up in level l: its kind, and (an image) its inode, (a symlink) its target in
 * w->link. 0 (K_NONE when it is not there), or an errno / errcode_t. */
static errcode_t lookup(struct walk *w, const struct level *l, const char *name, size_t nlen,
			enum kind *kind, ext2_ino_t *ino)
{
	*kind = K_NONE;
	if (!l->src->image)
		return lookup_dir(w, l, name, nlen, kind);
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

/* The source mounted at "/name", if any. */
static struct src *mount_at(struct ns *ns, const char *name, size_t nlen)
{
	for (int i = 0; i < AROOT_PARTS; i++)
		if (ns->part[i].open && !(i == P_SYSTEM && ns->sar) &&
		    strlen(part_names[i]) == nlen && !strncmp(part_names[i], name, nlen))
			return &ns->part[i];
	return NULL;
}

/*
 * The device's path in this tree, resolved as its kernel would: components from "/", a mount's
 * root at "/NAME", symlinks followed (an absolute target from "/", at most AROOT_MAX_LINKS), ".."
 * back up. *kind is what is there (K_NONE: nothing, or a file in the middle of the path); w's
 * top level is it. 0, or an errno / errcode_t.
 */
static errcode_t resolve_in(struct ns *ns, struct src *top_src, struct walk *w, const char *path,
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
	w->lv[0] = (struct level){ top_src, top_src && top_src->image ? EXT2_ROOT_INO : 0, 0, 0 };
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
			if ((rc = push(w, m, m->image ? EXT2_ROOT_INO : 0, true, name, nlen)))
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
static errcode_t resolve(struct ns *ns, struct walk *w, const char *path, enum kind *kind)
{
	return resolve_in(ns, ns->root, w, path, kind);
}

/* Where a resolved file was read from, as messages name it: a path, or IMAGE:/PATH. */
static char *from_name(const struct walk *w, const struct level *l)
{
	char *s = NULL;
	const char *lab = l->src->label;
	int inl = (int)l->in_len;
	const char *in = w->inner + l->in_start;
	int r = l->src->image ? asprintf(&s, "%s:%.*s", lab, inl ? inl : 1, inl ? in : "/")
		: asprintf(&s, "%s%.*s", strcmp(lab, "/") ? lab : "", inl, in);
	if (r < 0) {
		fputs("fclabel: out of memory\n", stderr);
		exit(EXIT_USAGE);
	}
	return s;
}

static int exists(void *arg, const char *path)
{
	struct ns *ns = arg;
	struct walk *w = malloc(sizeof(*w));
	enum kind k;
	errcode_t rc;

	if (!w)
		return -ENOMEM;
	rc = resolve(ns, w, path, &k);
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

/* Reads the device's file at path (resolved from top: the device's "/") into *buf (*len bytes);
 * *from says where it was. 0, or -1 after saying why. */
static int read_file_in(struct ns *ns, struct src *top, const char *path, char **buf, size_t *len,
			char **from)
{
	struct walk *w = malloc(sizeof(*w));
	enum kind k = K_NONE;
	errcode_t rc = w ? resolve_in(ns, top, w, path, &k) : ENOMEM;

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
	*from = from_name(w, &l);
	free(w);
	if (k != K_FILE) {
		fprintf(stderr, "fclabel %s: %s (%s): not a regular file\n", ns->cmd, qname(*from),
			path);
		return -1;
	}
	if (l.src->image) {
		errcode_t e = img_read_ino(&l.src->img, l.ino, buf, len, AROOT_MAX_FILE);
		if (e)
			fprintf(stderr, "fclabel %s: %s: cannot read it: %s\n", ns->cmd, qname(*from),
				error_message(e));
		return e ? -1 : 0;
	}
	int fd = openat(l.src->fd, r, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
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
		fprintf(stderr, "fclabel %s: %s: cannot read it: %s\n", ns->cmd, qname(*from),
			strerror(e));
		free(*buf);
		*buf = NULL;
		return -1;
	}
	(*buf)[got] = 0;
	*len = got;
	return 0;
}

static int read_device_file(struct ns *ns, const char *path, char **buf, size_t *len, char **from)
{
	return read_file_in(ns, ns->root, path, buf, len, from);
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
		char *p = join(ns->rootdir.label, at[i]);
		if (!dir_empty(p))
			return p;
		free(p);
	}
	return NULL;
}

static int ns_build(struct ns *ns, const struct aroot_args *a, int lock)
{
	if (a->root) {
		struct stat st;
		int bad = stat(a->root, &st) < 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
		if (bad) {
			fprintf(stderr, "fclabel %s: %s %s: %s\n", ns->cmd, ns->ropt, qname(a->root),
				strerror(bad));
			return -1;
		}
		if (src_open(ns, &ns->rootdir, xstrdup(a->root), ns->ropt, lock))
			return -1;
		if (!a->part[P_SYSTEM])
			ns->sysguess = guess_system(ns);
	}
	for (int i = 0; i < AROOT_PARTS; i++) {
		char what[64];
		snprintf(what, sizeof(what), "%s %s=", ns->popt, part_names[i]);
		if ((ns->none[i] = part_none(a, i)))
			continue;
		if (a->part[i] ? src_open(ns, &ns->part[i], xstrdup(a->part[i]), what, lock)
			       : a->root ? find_in_root(ns, i, lock) : 0)
			return -1;
	}
	/* system-as-root: the system partition's root holds system/etc; the device mounts it at "/" */
	struct src *sys = &ns->part[P_SYSTEM];
	if (sys->open && sys->image) {
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

static void ns_close(struct ns *ns)
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
	return s->img.fmt == IMGFMT_RAW ? "raw image" : s->img.fmt == IMGFMT_SPARSE
		? "Android sparse image" : "block device";
}

/* "/ = ROOT (directory), /system = ROOT/system.img (raw image), ..." */
static void describe(const struct ns *ns, FILE *f)
{
	const char *sep = "";
	if (ns->root) {
		fprintf(f, "/ = %s (%s%s)", qname(ns->root->label), src_kind(ns->root),
			ns->sar ? ", the system partition: system-as-root" : "");
		sep = ", ";
	}
	for (int i = 0; i < AROOT_PARTS; i++) {
		const struct src *s = &ns->part[i];
		if (ns->none[i])
			fprintf(f, "%s/%s = none (%s %s=none)", sep, part_names[i], ns->popt,
				part_names[i]);
		else if (!s->open || (i == P_SYSTEM && ns->sar))
			continue;
		else
			fprintf(f, "%s/%s = %s (%s)", sep, part_names[i], qname(s->label),
				src_kind(s));
		sep = ", ";
	}
	if (!*sep)
		fputs("nothing", f);
}

/* ---- is it the device's tree? (a partition not mounted, a recovery's own files) ---- */

/* fn(name, nlen, arg) for each entry of a directory but "." and "..", until it returns true */
typedef bool (*entry_fn)(const char *name, size_t nlen, void *arg);

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

/* The entries of the directory at level l (of w): 0, or an errno / errcode_t. */
static errcode_t list_level(const struct walk *w, const struct level *l, entry_fn fn, void *arg)
{
	struct entries it = { fn, arg };
	char rb[AROOT_PATH_MAX * 2];

	if (!l->src)
		return 0; /* "/" with no root: only the mounts */
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

static bool not_empty(const char *name, size_t nlen, void *arg)
{
	(void)name, (void)nlen;
	*(bool *)arg = false;
	return true;
}

/* What the device's fstabs say is mounted: fstab_read. */
struct fstab {
	bool any;                    /* one was read that lists the system or the vendor partition */
	bool listed[AROOT_PARTS];
	char *from[AROOT_PARTS];     /* the first that lists each */
	char read[512];              /* those read, for messages */
};

#define FSTAB_MAX 16

struct fstab_names {
	char *v[FSTAB_MAX];
	size_t n;
};

static bool fstab_name(const char *name, size_t nlen, void *arg)
{
	struct fstab_names *fn = arg;
	if (nlen <= 6 || strncmp(name, "fstab.", 6) || fn->n == FSTAB_MAX)
		return false;
	if (!(fn->v[fn->n++] = strndup(name, nlen))) {
		fputs("fclabel: out of memory\n", stderr);
		exit(EXIT_USAGE);
	}
	return false;
}

/* The partitions an fstab mounts: by its mount points' last component ("/vendor/odm" is odm;
 * "/" is the system, as Android 9's system-as-root fstabs have it). */
static void fstab_parse(const char *buf, bool listed[AROOT_PARTS])
{
	for (const char *p = buf; *p;) {
		const char *end = p + strcspn(p, "\n");
		p += strspn(p, " \t");
		if (*p != '#' && p < end) {
			p += strcspn(p, " \t\n");          /* the device */
			p += strspn(p, " \t");
			size_t n = strcspn(p, " \t\n");    /* the mount point */
			const char *last = p;
			for (size_t k = 0; k < n; k++)
				if (p[k] == '/')
					last = p + k + 1;
			size_t ln = n - (size_t)(last - p);
			for (int i = 0; i < AROOT_PARTS && n && *p == '/'; i++)
				if ((n == 1 && i == P_SYSTEM) || (ln == strlen(part_names[i]) &&
								  !strncmp(last, part_names[i], ln)))
					listed[i] = true;
		}
		p = *end ? end + 1 : end;
	}
}

/* The fstab.* files of the device's directory dir (in the tree from top), into fs; -1 after
 * saying why one could not be read. */
static int fstab_dir(struct ns *ns, struct src *top, struct walk *w, const char *dir,
		     struct fstab *fs)
{
	struct fstab_names names = { 0 };
	enum kind k;
	int status = 0;

	/* a directory that cannot be listed holds no fstab that can be read */
	if (!resolve_in(ns, top, w, dir, &k) && k == K_DIR)
		list_level(w, &w->lv[w->depth - 1], fstab_name, &names);
	for (size_t i = 0; i < names.n && !status; i++) {
		char *path = join(dir, names.v[i]), *buf = NULL, *from = NULL;
		bool listed[AROOT_PARTS] = { 0 };
		size_t len;
		if (!resolve_in(ns, top, w, path, &k) && k == K_FILE &&
		    !(status = read_file_in(ns, top, path, &buf, &len, &from)))
			fstab_parse(buf, listed);
		if (listed[P_SYSTEM] || listed[P_VENDOR]) {
			size_t at = strlen(fs->read);
			snprintf(fs->read + at, sizeof(fs->read) - at, "%s%s", at ? ", " : "",
				 qname(from));
			fs->any = true;
			for (int p = 0; p < AROOT_PARTS; p++) {
				if (listed[p] && !fs->from[p])
					fs->from[p] = xstrdup(from);
				fs->listed[p] |= listed[p];
			}
		}
		free(buf);
		free(from);
		free(path);
	}
	for (size_t i = 0; i < names.n; i++)
		free(names.v[i]);
	return status;
}

/*
 * The device's fstabs: /vendor/etc/fstab.* (Android 10 and later list every partition there,
 * the first-stage ones too), the first-stage ramdisk's /first_stage_ramdisk/fstab.* and /fstab.*
 * (in ROOT too when "/" is the system). One that lists neither the system nor the vendor
 * partition does not count: before Android 10 those were mounted from the device tree's fstab,
 * and what the file leaves out says nothing. -1 after saying why one could not be read.
 */
static int fstab_read(struct ns *ns, struct walk *w, struct fstab *fs)
{
	static const char *const dirs[] = { "/vendor/etc", "/first_stage_ramdisk", "/" };

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (fstab_dir(ns, ns->root, w, dirs[i], fs) ||
		    (i && ns->rootdir.open && ns->root != &ns->rootdir &&
		     fstab_dir(ns, &ns->rootdir, w, dirs[i], fs)))
			return -1;
	return 0;
}

static void fstab_free(struct fstab *fs)
{
	for (int i = 0; i < AROOT_PARTS; i++)
		free(fs->from[i]);
}

/*
 * A partition whose mount point is an empty directory (a recovery that did not mount it, an
 * extracted ramdisk) would silently drop out of the policy: its files are the device's and
 * missing here. Refused, unless --partition NAME=none says the device has no such partition, or
 * the device's fstab does not mount it (said). Before Treble (one /file_contexts) only /system
 * matters. -1 after saying why.
 */
static int mounts_check(struct ns *ns, struct walk *w, bool legacy)
{
	char *where[AROOT_PARTS] = { 0 };
	struct fstab fs = { 0 };
	int nempty = 0, refused = 0, none_ok = 0, status = 0;

	for (int i = 0; i < AROOT_PARTS && !status; i++) {
		char path[32];
		enum kind k;
		bool empty = true;
		errcode_t rc;
		if (ns->none[i] || (i == P_SYSTEM && ns->sar) || (legacy && i != P_SYSTEM))
			continue;
		snprintf(path, sizeof(path), "/%s", part_names[i]);
		if (!(rc = resolve(ns, w, path, &k)) && k == K_DIR)
			rc = list_level(w, &w->lv[w->depth - 1], not_empty, &empty);
		if (rc && rc != ELOOP) {
			fprintf(stderr, "fclabel %s: looking at %s in the device's tree: %s\n", ns->cmd,
				path, error_message(rc));
			status = -1;
		} else if (!rc && k == K_DIR && empty && w->lv[w->depth - 1].src) {
			where[i] = from_name(w, &w->lv[w->depth - 1]);
			nempty++;
		}
	}
	if (!status && nempty)
		status = fstab_read(ns, w, &fs);
	for (int i = 0; i < AROOT_PARTS && !status; i++) {
		char at[AROOT_PATH_MAX + 64]; /* "/NAME (where it is)", or "/NAME" when it is there */
		if (!where[i])
			continue;
		bool here = where[i][0] == '/' && !strcmp(where[i] + 1, part_names[i]);
		snprintf(at, sizeof(at), "/%s%s%s%s", part_names[i], here ? "" : " (",
			 here ? "" : qname(where[i]), here ? "" : ")");
		if (fs.any && !fs.listed[i]) {
			fprintf(stderr, "fclabel %s: %s is an empty directory, and the device's fstab "
				"(%s) mounts nothing there: no %s partition\n", ns->cmd, at, fs.read,
				part_names[i]);
			continue;
		}
		fprintf(stderr, "fclabel %s: %s is an empty directory: the %s partition is not "
			"mounted there", ns->cmd, at, part_names[i]);
		if (fs.listed[i])
			fprintf(stderr, ", and the device mounts it (%s)", qname(fs.from[i]));
		else
			none_ok++;
		if (i == P_SYSTEM && ns->sysguess)
			fprintf(stderr, "; the device's system is probably at %s: give %s system=%s",
				qname(ns->sysguess), ns->popt, qname(ns->sysguess));
		fprintf(stderr, "; without its files the device's policy would be taken in part\n");
		refused++;
	}
	if (!status && refused) {
		fprintf(stderr, "fclabel %s: nothing was done (%s NAME=PATH says where a partition is",
			ns->cmd, ns->popt);
		if (none_ok)
			fprintf(stderr, "; %s NAME=none, that the device has no such partition",
				ns->popt);
		fputs(")\n", stderr);
		status = -1;
	}
	for (int i = 0; i < AROOT_PARTS; i++)
		free(where[i]);
	fstab_free(&fs);
	return status;
}

/* Whether ROOT is a recovery's root, and why (into why): /system/bin/recovery or /sbin/recovery
 * there, or the system found only in ROOT/system_root. */
static bool recovery_mark(const struct ns *ns, char *why, size_t n)
{
	static const char *const marks[] = { "system/bin/recovery", "sbin/recovery" };
	struct stat st;

	for (size_t i = 0; ns->rootdir.open && i < sizeof(marks) / sizeof(marks[0]); i++)
		if (!fstatat(ns->rootdir.fd, marks[i], &st, AT_SYMLINK_NOFOLLOW)) {
			snprintf(why, n, "/%s is there", marks[i]);
			return true;
		}
	if (ns->sysguess)
		snprintf(why, n, "the system is in %s", qname(ns->sysguess));
	return ns->sysguess != NULL;
}

/* --partition system=ROOT: the recovery's own files asked for. */
static bool system_is_root(const struct ns *ns)
{
	struct stat a, b;
	const struct src *s = &ns->part[P_SYSTEM];
	return s->open && !s->image && !fstat(s->fd, &a) && !fstat(ns->rootdir.fd, &b) &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/*
 * A recovery's ramdisk has its own plat_file_contexts, plat_seapp_contexts (and vendor_...) at
 * its root: the recovery's policy, built with it, not the device's. The device's libselinux
 * takes them only when /system/etc/selinux has none: a recovery with its system not mounted at
 * /system. Refused, naming where the system probably is, unless --partition system=ROOT.
 */
static int ramdisk_check(struct ns *ns, struct walk *w, const struct seapp_policy *pol)
{
	const struct seapp_policy_file *own = NULL;
	char why[AROOT_PATH_MAX + 64];
	enum kind k;

	if (ns->root != &ns->rootdir || !recovery_mark(ns, why, sizeof(why)) || system_is_root(ns))
		return 0;
	for (size_t i = 0; i < pol->nfc + pol->nseapp && !own; i++) {
		const struct seapp_policy_file *f = i < pol->nfc ? &pol->fc[i]
								  : &pol->seapp[i - pol->nfc];
		if (!resolve(ns, w, f->path, &k) && k != K_NONE &&
		    w->lv[w->depth - 1].src == &ns->rootdir)
			own = f;
	}
	if (!own)
		return 0;
	const char *part = !strcmp(own->part, "plat") || !strcmp(own->part, "legacy") ? "system"
										    : own->part;
	fprintf(stderr, "fclabel %s: %s is a recovery's root (%s), and its %s is the recovery's own, "
		"not the device's policy: ", ns->cmd, qname(ns->rootdir.label), why, own->path);
	if (!strcmp(part, "system") && ns->sysguess)
		fprintf(stderr, "the device's system is probably at %s: give %s system=%s\n",
			qname(ns->sysguess), ns->popt, qname(ns->sysguess));
	else
		fprintf(stderr, "mount the device's %s partition and give %s %s=PATH\n", part,
			ns->popt, part);
	if (!strcmp(own->part, "legacy"))
		fprintf(stderr, "fclabel %s: (before Treble the device's file_contexts is in its boot "
			"image's ramdisk: %s the unpacked ramdisk)\n", ns->cmd, ns->ropt);
	fprintf(stderr, "fclabel %s: nothing was done (%s system=%s takes the recovery's own files)\n",
		ns->cmd, ns->popt, qname(ns->rootdir.label));
	return -1;
}

/* An incomplete set: what is missing, what was looked for, and where. */
static void refuse(const struct ns *ns, const struct seapp_policy *pol)
{
	const char *kind = pol->missing_kind == SEAPP_FILE_CONTEXTS ? "file_contexts"
								    : "seapp_contexts";
	fprintf(stderr, "fclabel %s: no %s %s: ", ns->cmd, pol->missing, kind);
	if (!strcmp(pol->missing, "vendor"))
		fprintf(stderr, "plat_file_contexts is in /system/etc/selinux (a Treble device), and "
			"without the vendor's file_contexts its files would be labeled wrong; ");
	fputs("looked for", stderr);
	for (size_t i = 0; pol->looked && pol->looked[i]; i++)
		fprintf(stderr, "%s %s", i ? "," : "", pol->looked[i]);
	fprintf(stderr, "\nfclabel %s: in the device's tree: ", ns->cmd);
	describe(ns, stderr);
	char why[AROOT_PATH_MAX + 64];
	if (ns->root == &ns->rootdir && ns->sysguess && recovery_mark(ns, why, sizeof(why)))
		fprintf(stderr, "\nfclabel %s: %s is a recovery's root (%s): the device's system is "
			"probably at %s: give %s system=%s", ns->cmd, qname(ns->rootdir.label), why,
			qname(ns->sysguess), ns->popt, qname(ns->sysguess));
	fprintf(stderr, "\nfclabel %s: nothing was done (%s NAME=PATH says where a partition is)\n",
		ns->cmd, ns->popt);
}

void policy_origins_free(struct policy_origins *pf)
{
	for (size_t i = 0; i < pf->n; i++)
		free(pf->v[i].from);
	free(pf->v);
	pf->v = NULL;
	pf->n = 0;
}

/* Reads the files of one kind, noting each in pf; -1 after saying why. */
static int read_kind(struct ns *ns, const struct seapp_policy_file *v, size_t n, const char *kind,
		     bool say, char **data, size_t *lens, struct policy_origins *pf)
{
	for (size_t i = 0; i < n; i++) {
		struct policy_origin *f = &pf->v[pf->n];
		if (read_device_file(ns, v[i].path, &data[i], &lens[i], &f->from)) {
			free(f->from);
			return -1;
		}
		f->kind = kind;
		f->part = v[i].part;
		f->path = v[i].path;
		pf->n++;
		if (say)
			fprintf(stderr, "fclabel %s: %s: %s %s: %s, read from %s\n", ns->cmd,
				ns->policy, v[i].part, kind, v[i].path, qname(f->from));
	}
	return 0;
}

/* The tree from the options, and which files the device takes in it; -1 after saying why. */
static int find_files(struct ns *ns, const struct aroot_args *a, int lock, bool want_seapp,
		      bool verbose, struct seapp_policy *pol)
{
	struct walk *w;
	int rc, bad;

	if (ns_build(ns, a, lock))
		return -1;
	rc = seapp_find_policy(exists, ns, want_seapp, pol);
	if (rc && rc != ENOENT) {
		fprintf(stderr, "fclabel %s: looking for %s in the device's tree: %s\n", ns->cmd,
			pol->failed ? pol->failed : "its policy",
			rc == EIO && ns->err ? error_message(ns->err) : strerror(rc));
		return -1;
	}
	/* the recovery's own files, then a partition not mounted: each more telling than what is
	 * missing because of it */
	if (!(w = malloc(sizeof(*w)))) {
		fprintf(stderr, "fclabel %s: out of memory\n", ns->cmd);
		return -1;
	}
	bad = ramdisk_check(ns, w, pol) ||
	      mounts_check(ns, w, pol->nfc && pol->layout == SEAPP_LAYOUT_LEGACY);
	free(w);
	if (bad)
		return -1;
	if (rc == ENOENT) {
		refuse(ns, pol);
		return -1;
	}
	if (verbose) {
		fprintf(stderr, "fclabel %s: %s: the device's tree: ", ns->cmd, ns->policy);
		describe(ns, stderr);
		fprintf(stderr, "; %s\n", pol->layout == SEAPP_LAYOUT_TREBLE
			? "plat_file_contexts in /system/etc/selinux: Treble (Android 8 or later)"
			: pol->layout == SEAPP_LAYOUT_ROOTFS
			? "plat_file_contexts in the root file system (an Android 8 or later ramdisk)"
			: "one file_contexts: before Treble (Android 7 or earlier)");
	}
	return 0;
}

/* The sets, from the files read (pf->v[i].from names the i-th); EXIT_OK or EXIT_USAGE after
 * saying why. */
static int load_sets(const char *cmd, const struct seapp_policy *pol, char **data,
		     const size_t *lens, const struct policy_origins *pf, unsigned flags, fc_set **set,
		     seapp_set **sa)
{
	struct fc_buf fb[SEAPP_POLICY_PARTS];
	struct seapp_buf sb[SEAPP_POLICY_PARTS];
	struct fc_error err;
	struct seapp_error serr = { 0 };
	int rc;

	for (size_t i = 0; i < pol->nfc; i++)
		fb[i] = (struct fc_buf){ pf->v[i].from, data[i], lens[i] };
	rc = fc_load_bufs(set, fb, pol->nfc, flags & FC_NO_DUPS, &err);
	if (!(*set = fc_loaded(cmd, rc, rc ? NULL : *set, &err)))
		return EXIT_USAGE;
	if (!sa)
		return EXIT_OK;
	for (size_t i = 0, k = pol->nfc; i < pol->nseapp; i++, k++)
		sb[i] = (struct seapp_buf){ pf->v[k].from, data[k], lens[k] };
	rc = seapp_parse(sa, sb, pol->nseapp, &serr);
	if (!(*sa = seapp_loaded(cmd, rc, rc ? NULL : *sa, &serr))) {
		fc_free(*set);
		*set = NULL;
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int aroot_load(const char *cmd, const struct aroot_args *a, unsigned flags, int lock,
	       bool verbose, fc_set **set, seapp_set **sa, struct policy_origins *pf)
{
	struct ns ns = { .cmd = cmd, .ropt = a->root_opt ? a->root_opt : "--android-root",
			 .popt = a->part_opt ? a->part_opt : "--partition",
			 .policy = a->policy ? a->policy : "policy" };
	struct seapp_policy pol;
	bool say = verbose || !a->quiet;
	char *data[2 * SEAPP_POLICY_PARTS] = { 0 };
	size_t lens[2 * SEAPP_POLICY_PARTS] = { 0 };
	int status = EXIT_USAGE;

	*set = NULL;
	if (sa)
		*sa = NULL;
	memset(pf, 0, sizeof(*pf));
	if (find_files(&ns, a, lock, sa != NULL, verbose, &pol))
		goto out;
	if (!(pf->v = calloc(pol.nfc + pol.nseapp, sizeof(*pf->v)))) {
		fprintf(stderr, "fclabel %s: out of memory\n", cmd);
		goto out;
	}
	if (read_kind(&ns, pol.fc, pol.nfc, "file_contexts", say, data, lens, pf) ||
	    read_kind(&ns, pol.seapp, pol.nseapp, "seapp_contexts", say, data + pol.nfc,
		      lens + pol.nfc, pf))
		goto out;
	/* every file is read: the images are closed before anything else is opened */
	ns_close(&ns);
	status = load_sets(cmd, &pol, data, lens, pf, flags, set, sa);
out:
	ns_close(&ns);
	for (size_t i = 0; i < sizeof(data) / sizeof(data[0]); i++)
		free(data[i]);
	if (status != EXIT_OK)
		policy_origins_free(pf);
	return status;
}

int aroot_build_flag(const char *cmd, const struct aroot_args *a, int lock, const char *name,
		     char **from)
{
	static const char path[] = "/system/etc/build_flags.json";
	struct ns ns = { .cmd = cmd, .ropt = a->root_opt ? a->root_opt : "--android-root",
			 .popt = a->part_opt ? a->part_opt : "--partition", .policy = "policy" };
	char *buf = NULL;
	size_t len = 0;
	bool v = false;
	int rc = -1;

	*from = NULL;
	if (ns_build(&ns, a, lock))
		goto out;
	/* the summary is made since Android 14: without it, no build flag to read */
	if (exists(&ns, path) != 1 || read_device_file(&ns, path, &buf, &len, from))
		goto out;
	int e = seapp_build_flag(buf, len, name, &v);
	if (e == EINVAL)
		fprintf(stderr, "fclabel %s: %s: not the JSON a build writes; %s not read "
			"from it\n", cmd, qname(*from), name);
	rc = e == EINVAL ? -1 : e == 0 && v;
out:
	ns_close(&ns);
	free(buf);
	if (rc < 0) {
		free(*from);
		*from = NULL;
	}
	return rc;
}
