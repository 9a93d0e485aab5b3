/*
 * A live directory tree (a mounted file system, a recovery chroot): the same engine as for
 * images (engine.c: lookup, hard links, check, JSON, progress), walked with openat/fstat.
 *
 * Safety against a tree that changes during the walk: every directory is opened relative to the
 * descriptor of its parent with O_NOFOLLOW|O_DIRECTORY, and every file relative to its
 * directory's descriptor with O_NOFOLLOW; the mode that decides the label comes from fstat on
 * the opened descriptor, and the label is read and written through that same descriptor:
 * fgetxattr/fsetxattr for directories and regular files (opened O_RDONLY|O_NONBLOCK), and for
 * symlinks, devices, FIFOs and sockets (never opened for I/O) an O_PATH|O_NOFOLLOW descriptor
 * reached as /proc/self/fd/N, which names exactly that inode (a symlink's own inode, not its
 * target). A symlink swapped in for a file or a directory during the walk is labeled as the
 * symlink it is, and never followed. Directories whose device differs from the root's (mount
 * points) are not entered, nor labeled, unless --cross-mounts.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "label.h"

#define SELINUX_XATTR "security.selinux"

struct handle {
	int fd;
	bool opath; /* an O_PATH descriptor: reached through /proc/self/fd */
};

struct frame {
	int fd;
	dev_t dev;
	ino_t ino;
	size_t pathlen;
	char *ents; /* packed: d_type (1 byte), name, NUL */
	size_t size, cap, pos;
};

struct tree {
	const char *root;
	const struct label_opts *o;
	char *val;
	size_t valcap;
	char proc[48];
	char *path;
	size_t pathlen, pathcap;
	unsigned long mounts;  /* mount points not entered */
	char *first_mount;
};

static int path_set(struct tree *t, size_t at, const char *name, size_t n)
{
	if (at == 1 && t->path[0] == '/')
		at = 0; /* the root is "/": its children are "/name" */
	size_t need = at + 1 + n + 1;
	if (need > t->pathcap) {
		size_t cap = t->pathcap * 2;
		while (cap < need)
			cap *= 2;
		char *p = realloc(t->path, cap);
		if (!p)
			return ENOMEM;
		t->path = p;
		t->pathcap = cap;
	}
	t->path[at] = '/';
	memcpy(t->path + at + 1, name, n);
	t->pathlen = at + 1 + n;
	t->path[t->pathlen] = 0;
	return 0;
}

/* The whole listing of a directory, in the order getdents gives it (readdir's, fts's). */
static int read_dir(struct frame *f)
{
	char buf[32768];
	f->size = f->pos = 0;
	for (;;) {
		ssize_t n = getdents64(f->fd, buf, sizeof(buf));
		if (n < 0)
			return errno;
		if (n == 0)
			return 0;
		for (ssize_t off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			off += d->d_reclen;
			const char *nm = d->d_name;
			if (nm[0] == '.' && (!nm[1] || (nm[1] == '.' && !nm[2])))
				continue;
			size_t l = strlen(nm);
			if (f->size + l + 2 > f->cap) {
				size_t cap = f->cap ? f->cap * 2 : 4096;
				while (cap < f->size + l + 2)
					cap *= 2;
				char *p = realloc(f->ents, cap);
				if (!p)
					return ENOMEM;
				f->ents = p;
				f->cap = cap;
			}
			f->ents[f->size] = (char)d->d_type;
			memcpy(f->ents + f->size + 1, nm, l + 1);
			f->size += l + 2;
		}
	}
}

static const char *proc_path(struct tree *t, int fd)
{
	snprintf(t->proc, sizeof(t->proc), "/proc/self/fd/%d", fd);
	return t->proc;
}

static ssize_t get_raw(struct tree *t, const struct handle *h, void *buf, size_t n)
{
	return h->opath ? getxattr(proc_path(t, h->fd), SELINUX_XATTR, buf, n)
			: fgetxattr(h->fd, SELINUX_XATTR, buf, n);
}

static int tree_get(void *arg, const struct label_file *f, const char **val, size_t *len,
		    char *why, size_t n)
{
	struct tree *t = arg;
	const struct handle *h = f->h;
	for (;;) {
		/* room for a NUL after the value: the engine prints it */
		ssize_t l = get_raw(t, h, t->val, t->valcap - 1);
		if (l >= 0) {
			t->val[l] = 0;
			*val = t->val;
			*len = (size_t)l;
			return 0;
		}
		if (errno == ENODATA) {
			*val = NULL;
			*len = 0;
			return 0;
		}
		if (errno != ERANGE) {
			int e = errno;
			snprintf(why, n, "cannot read its label%s: %s; left as it is",
				 h->opath && e == ENOENT ? " through /proc/self/fd (is /proc mounted?)"
							 : "", strerror(e));
			return -1;
		}
		l = get_raw(t, h, NULL, 0);
		size_t cap = l > 0 && (size_t)l + 1 > t->valcap ? (size_t)l + 1 : t->valcap * 2;
		char *p = realloc(t->val, cap);
		if (!p) {
			snprintf(why, n, "cannot read its label: %s", strerror(ENOMEM));
			return -1;
		}
		t->val = p;
		t->valcap = cap;
	}
}

static int tree_set(void *arg, const struct label_file *f, const char *ctx, char *why, size_t n)
{
	struct tree *t = arg;
	const struct handle *h = f->h;
	size_t l = strlen(ctx) + 1;
	int rc = h->opath ? setxattr(proc_path(t, h->fd), SELINUX_XATTR, ctx, l, 0)
			  : fsetxattr(h->fd, SELINUX_XATTR, ctx, l, 0);
	if (!rc)
		return LSET_OK;
	snprintf(why, n, "%s", strerror(errno));
	return errno == ENOSPC || errno == EDQUOT ? LSET_NOSPACE : LSET_ERROR;
}

/*
 * Opens the entry name of the directory dfd without following a symlink, as described above,
 * and fstat()s the descriptor. Returns 0, or an errno.
 */
static int open_entry(int dfd, const char *name, unsigned char type, struct handle *h,
		      struct stat *sb)
{
	int fd = -1;
	h->opath = false;
	if (type == DT_DIR)
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	else if (type == DT_REG)
		fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		/* other types, unknown ones (DT_UNKNOWN), and whatever could not be opened so:
		 * a symlink swapped in (ELOOP), a directory that is no longer one, no read
		 * permission, a lease */
		if (type == DT_DIR || type == DT_REG) {
			if (errno == ENOENT || errno == ENOMEM || errno == EMFILE || errno == ENFILE)
				return errno;
		}
		fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return errno;
		h->opath = true;
	}
	if (fstat(fd, sb)) {
		int e = errno;
		close(fd);
		return e;
	}
	h->fd = fd;
	return 0;
}

/* Another file system mounted here: as setfiles does, neither labeled nor entered. */
static void other_fs(struct tree *t)
{
	if (!t->mounts++)
		t->first_mount = strdup(t->path);
	if (t->o->verbose)
		printf("not crossing into the file system mounted at %s\n", t->path);
}

static void free_frames(struct frame *stack, size_t depth, size_t cap)
{
	for (size_t i = 0; i < depth; i++)
		close(stack[i].fd);
	for (size_t i = 0; i < cap; i++)
		free(stack[i].ents);
	free(stack);
}

static long tree_walk(void *arg, struct label_run *run)
{
	struct tree *t = arg;
	const struct label_opts *o = t->o;
	struct frame *stack = NULL;
	size_t depth = 0, cap = 0;
	struct stat sb;
	struct handle h;
	char msg[512];
	long rc = 0;

	t->mounts = 0;
	free(t->first_mount);
	t->first_mount = NULL;
	size_t ml = strlen(o->mountpoint);
	if (ml) {
		memcpy(t->path, o->mountpoint, ml + 1);
		t->pathlen = ml;
	} else {
		strcpy(t->path, "/");
		t->pathlen = 1;
	}
	h.opath = false;
	h.fd = open(t->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (h.fd < 0 || fstat(h.fd, &sb)) {
		rc = errno;
		if (h.fd >= 0)
			close(h.fd);
		return rc;
	}
	const dev_t rootdev = sb.st_dev;
	struct label_file lf = { t->path, t->pathlen, sb.st_mode, sb.st_nlink, sb.st_dev,
				 sb.st_ino, &h };
	int r = label_visit(run, &lf);
	if (r != 0) {
		close(h.fd);
		return r < 0 ? ENOMEM : 0;
	}
	int push = h.fd;
	size_t push_len = t->pathlen;
	for (;;) {
		if (push >= 0) {
			if (depth == cap) {
				size_t nc = cap ? cap * 2 : 64;
				struct frame *ns = realloc(stack, nc * sizeof(*ns));
				if (!ns) {
					close(push);
					rc = ENOMEM;
					break;
				}
				memset(ns + cap, 0, (nc - cap) * sizeof(*ns));
				stack = ns;
				cap = nc;
			}
			struct frame *f = &stack[depth];
			f->fd = push;
			f->dev = sb.st_dev;
			f->ino = sb.st_ino;
			f->pathlen = push_len;
			push = -1;
			int e = read_dir(f);
			if (e == ENOMEM) {
				close(f->fd);
				rc = ENOMEM;
				break;
			}
			depth++;
			if (e) {
				t->path[f->pathlen] = 0;
				snprintf(msg, sizeof(msg), "cannot read the directory: %s; what is "
					 "below it is left as it is", strerror(e));
				label_walk_warn(run, t->path, msg);
				/* the entries read before the error are still walked */
			}
		}
		if (!depth)
			break;
		struct frame *f = &stack[depth - 1];
		if (f->pos >= f->size) {
			close(f->fd);
			depth--;
			continue;
		}
		unsigned char type = (unsigned char)f->ents[f->pos];
		const char *name = f->ents + f->pos + 1;
		size_t nl = strlen(name);
		f->pos += nl + 2;
		if ((rc = path_set(t, f->pathlen, name, nl)))
			break;
		if (o->nexcludes && label_excluded(o, t->path, t->pathlen))
			continue;
		int e = 0;
		if (type == DT_DIR || type == DT_UNKNOWN) {
			/* a mount point is known without opening it (that would trigger an
			 * automount) */
			if (fstatat(f->fd, name, &sb, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT))
				e = errno;
			else if (S_ISDIR(sb.st_mode) && sb.st_dev != rootdev && !o->cross_mounts) {
				other_fs(t);
				continue;
			} else
				type = IFTODT(sb.st_mode);
		}
		if (!e)
			e = open_entry(f->fd, name, type, &h, &sb);
		if (e == ENOENT)
			continue; /* removed since the listing */
		if (e == ENOMEM) {
			rc = e;
			break;
		}
		if (e) {
			snprintf(msg, sizeof(msg), "cannot open it: %s; left as it is", strerror(e));
			label_walk_warn(run, t->path, msg);
			continue;
		}
		bool isdir = S_ISDIR(sb.st_mode);
		if (sb.st_dev != rootdev && !o->cross_mounts) {
			close(h.fd);
			other_fs(t);
			continue;
		}
		if (isdir) {
			size_t i;
			for (i = 0; i < depth; i++)
				if (stack[i].dev == sb.st_dev && stack[i].ino == sb.st_ino)
					break;
			if (i < depth) {
				close(h.fd);
				snprintf(msg, sizeof(msg), "a directory that contains itself (a bind "
					 "mount loop); not entered");
				label_walk_warn(run, t->path, msg);
				continue;
			}
		}
		lf = (struct label_file){ t->path, t->pathlen, sb.st_mode, sb.st_nlink, sb.st_dev,
					  sb.st_ino, &h };
		r = label_visit(run, &lf);
		if (r < 0) {
			close(h.fd);
			rc = ENOMEM;
			break;
		}
		if (!isdir || r == 1) {
			close(h.fd);
			continue;
		}
		if (h.opath) {
			/* a directory that was not one at the listing (or of an unknown type
			 * there): open it to read it */
			int dfd = openat(h.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			int oe = errno;
			close(h.fd);
			if (dfd < 0) {
				snprintf(msg, sizeof(msg), "cannot open the directory: %s; what is "
					 "below it is left as it is", strerror(oe));
				label_walk_warn(run, t->path, msg);
				continue;
			}
			h.fd = dfd;
		}
		push = h.fd;
		push_len = t->pathlen;
	}
	free_frames(stack, depth, cap);
	return rc;
}

bool dir_is_labeled(const char *dir)
{
	char b[8];
	return getxattr(dir, SELINUX_XATTR, b, 0) > 0;
}

int label_dir(const char *dir, const fc_set *set, const struct label_opts *o,
	      struct label_stats *st)
{
	struct tree t = { .root = dir, .o = o, .valcap = 256, .pathcap = 4096 };
	struct label_src src = { .name = dir, .arg = &t, .walk = tree_walk, .get = tree_get,
				 .set = tree_set };
	struct statvfs vfs;
	struct rlimit rl;
	char b[8];
	int rc = -1;

	memset(st, 0, sizeof(*st));
	/* one descriptor per level of the walk: as many as the hard limit allows */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (strlen(o->mountpoint) + 2 > t.pathcap)
		t.pathcap = strlen(o->mountpoint) + 2;
	if (!(t.val = malloc(t.valcap)) || !(t.path = malloc(t.pathcap))) {
		fprintf(stderr, "fclabel %s: out of memory\n", o->cmd);
		goto out;
	}
	if (getxattr(dir, SELINUX_XATTR, b, 0) < 0 && errno != ENODATA) {
		fprintf(stderr, "fclabel %s: %s: cannot read security.selinux there: %s\n", o->cmd,
			dir, errno == ENOTSUP ? "the file system does not support it"
					      : strerror(errno));
		goto out;
	}
	if (!statvfs(dir, &vfs) && vfs.f_files >= vfs.f_ffree)
		src.total = vfs.f_files - vfs.f_ffree;
	rc = label_source(&src, set, o, st);
	if (t.mounts)
		fprintf(stderr, "fclabel %s: %s: %lu mount point(s) not crossed (%s%s; "
			"--cross-mounts enters them)\n", o->cmd, dir, t.mounts,
			t.first_mount ? t.first_mount : "", t.mounts > 1 ? ", ..." : "");
out:
	free(t.first_mount);
	free(t.val);
	free(t.path);
	return rc;
}
