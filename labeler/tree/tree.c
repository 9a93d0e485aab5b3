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
 *
 * That walk, one entry at a time, is the one for --digests, --seapp and relabel. Otherwise the
 * walk is treepool.c's (threads; labels of what is not a directory read by name relative to the
 * directory's descriptor, never through a symlink, and written only through a descriptor checked
 * to be the inode looked at), with the same result.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <stdint.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "internal.h"

static int tree_get(void *arg, const struct label_file *f, const char **val, size_t *len,
		    char *why, size_t n)
{
	struct tree *t = arg;
	const struct handle *h = f->h;
	if (h->ahead)
		return ahead_get(h->ahead, val, len, why, n);
	int e = tree_read_label(h, t->proc, &t->val, &t->valcap, len);
	if (e == ENODATA) {
		*val = NULL;
		*len = 0;
		return 0;
	}
	if (e) {
		tree_label_error(why, n, h->opath, e);
		return -1;
	}
	*val = t->val;
	return 0;
}

static int tree_set(void *arg, const struct label_file *f, const char *ctx, char *why, size_t n)
{
	struct tree *t = arg;
	const struct handle *h = f->h;
	int e = h->ahead ? ahead_set(t, h->ahead, ctx) : tree_write_label(h, t->proc, ctx);
	if (!e)
		return LSET_OK;
	snprintf(why, n, "%s%s", h->ahead && e == ESTALE ? "it was replaced during the walk"
							 : strerror(e),
		 h->opath && e == ENOENT ? " (through /proc/self/fd: is /proc mounted?)" : "");
	return e == ENOSPC || e == EDQUOT ? LSET_NOSPACE : e == EROFS ? LSET_READONLY : LSET_ERROR;
}

#define DIGEST_XATTR "security.sehash"

static int tree_get_xattr(void *arg, const struct label_file *f, const char *name,
			  unsigned char *out, size_t max, size_t *len, char *why, size_t n)
{
	const struct handle *h = f->h;
	ssize_t l = fgetxattr(h->fd, name, out, max);
	(void)arg;
	*len = 0;
	if (l >= 0) {
		*len = (size_t)l;
		return 0;
	}
	if (errno == ENODATA || errno == ERANGE) /* a longer value is not one we read */
		return 0;
	snprintf(why, n, "cannot read %s: %s", name, strerror(errno));
	return -1;
}

static int tree_get_digest(void *arg, const struct label_file *f, unsigned char *out, size_t *len,
			   char *why, size_t n)
{
	return tree_get_xattr(arg, f, DIGEST_XATTR, out, 64, len, why, n);
}

static int tree_set_digest(void *arg, const struct label_file *f, const unsigned char *d,
			   size_t len, char *why, size_t n)
{
	const struct handle *h = f->h;
	(void)arg;
	if (fsetxattr(h->fd, DIGEST_XATTR, d, len, 0) == 0)
		return 0;
	snprintf(why, n, "cannot write %s: %s", DIGEST_XATTR, strerror(errno));
	return errno == EROFS ? LSET_READONLY : -1;
}

static void free_frames(struct tree *t)
{
	for (size_t i = 0; i < t->depth; i++)
		close(t->stack[i].fd);
	for (size_t i = 0; i < t->cap; i++)
		free(t->stack[i].ents);
	free(t->stack);
	t->stack = NULL;
	t->depth = t->cap = 0;
}

/* Lists the directory open as fd (sb: its stat, path[0..pathlen): its path) into a new frame,
 * which owns fd from now on; 0 or ENOMEM. A directory that cannot be read is a warning, and
 * what was read before the error is still walked. */
static int push_dir(struct tree *t, struct label_run *run, int fd, const struct stat *sb,
		    size_t pathlen)
{
	if (t->depth == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 64;
		struct frame *ns = realloc(t->stack, nc * sizeof(*ns));
		if (!ns) {
			close(fd);
			return ENOMEM;
		}
		memset(ns + t->cap, 0, (nc - t->cap) * sizeof(*ns));
		t->stack = ns;
		t->cap = nc;
	}
	struct frame *f = &t->stack[t->depth];
	f->fd = fd;
	f->dev = sb->st_dev;
	f->ino = sb->st_ino;
	f->pathlen = pathlen;
	int e = tree_read_dir(f);
	if (e == ENOMEM) {
		close(f->fd);
		return ENOMEM;
	}
	t->depth++;
	if (e) {
		t->path[f->pathlen] = 0;
		snprintf(t->msg, sizeof(t->msg), "cannot read the directory: %s; what is below it is "
			 "left as it is", strerror(e));
		label_walk_warn(run, t->path, t->msg);
	}
	return 0;
}

/* A directory's entries are all walked: the engine's label_leave, with its path back. */
static void leave_dir(struct tree *t, struct label_run *run, const struct frame *f)
{
	struct handle h = { .fd = f->fd, .opath = false, .ahead = NULL };
	t->path[f->pathlen] = 0;
	t->pathlen = f->pathlen;
	struct label_file lf = { t->path, t->pathlen, S_IFDIR, 1, f->dev, f->ino, &h, false, NULL,
				 0, 0, 0 };
	label_leave(run, &lf);
}

/* Whether directory sb is one the walk is inside already (a bind mount loop). */
static bool on_stack(const struct tree *t, const struct stat *sb)
{
	for (size_t i = 0; i < t->depth; i++)
		if (t->stack[i].dev == sb->st_dev && t->stack[i].ino == sb->st_ino)
			return true;
	return false;
}

/* The top frame's next entry, opened into h (and stat'ed into sb) with its path in t->path:
 * 1 to visit it, 0 to go on (left out, gone, or a warning said why), or -ENOMEM. */
static int open_next(struct tree *t, struct label_run *run, struct handle *h, struct stat *sb)
{
	const struct label_opts *o = t->o;
	struct frame *f = &t->stack[t->depth - 1];
	unsigned char type = (unsigned char)f->ents[f->pos];
	const char *name = f->ents + f->pos + 1;
	size_t nl = strlen(name);
	int e = 0;

	f->pos += nl + 2;
	if (tree_path_set(t, f->pathlen, name, nl))
		return -ENOMEM;
	if (o->nexcludes && label_excluded(o, t->path, t->pathlen))
		return 0;
	if (type == DT_DIR || type == DT_UNKNOWN) {
		/* a mount point is known without opening it (that would trigger an automount) */
		if (fstatat(f->fd, name, sb, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT))
			e = errno;
		else if (S_ISDIR(sb->st_mode) && sb->st_dev != t->rootdev && !o->cross_mounts) {
			tree_other_fs(t);
			return 0;
		} else
			type = IFTODT(sb->st_mode);
	}
	if (!e)
		e = tree_open_entry(f->fd, name, type, h, sb);
	if (e == ENOENT)
		return 0; /* removed since the listing */
	if (e == ENOMEM)
		return -ENOMEM;
	if (e) {
		snprintf(t->msg, sizeof(t->msg), "cannot open it: %s; left as it is", strerror(e));
		label_walk_warn(run, t->path, t->msg);
		return 0;
	}
	if (sb->st_dev != t->rootdev && !o->cross_mounts) {
		close(h->fd);
		tree_other_fs(t);
		return 0;
	}
	if (S_ISDIR(sb->st_mode) && on_stack(t, sb)) {
		close(h->fd);
		label_walk_warn(run, t->path, "a directory that contains itself (a bind mount loop); "
				"not entered");
		return 0;
	}
	return 1;
}

/* A directory reached through an O_PATH descriptor (it was not one at the listing, or of an
 * unknown type there): a descriptor to read it with, or -1 after a warning. */
static int dir_fd(struct tree *t, struct label_run *run, struct handle *h)
{
	if (!h->opath)
		return h->fd;
	int dfd = openat(h->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int oe = errno;
	close(h->fd);
	if (dfd < 0) {
		snprintf(t->msg, sizeof(t->msg), "cannot open the directory: %s; what is below it is "
			 "left as it is", strerror(oe));
		label_walk_warn(run, t->path, t->msg);
	}
	return dfd;
}

/* The root: its path is the mount point (or "/"); *fd is open on it when it is to be entered. */
static long visit_root(struct tree *t, struct label_run *run, int *fd, struct stat *sb)
{
	size_t ml = strlen(t->o->mountpoint);
	struct handle h = { .opath = false, .ahead = NULL };
	long rc;

	if (ml) {
		memcpy(t->path, t->o->mountpoint, ml + 1);
		t->pathlen = ml;
	} else {
		strcpy(t->path, "/");
		t->pathlen = 1;
	}
	*fd = -1;
	h.fd = open(t->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (h.fd < 0 || fstat(h.fd, sb)) {
		rc = errno;
		if (h.fd >= 0)
			close(h.fd);
		return rc;
	}
	t->rootdev = sb->st_dev;
	struct label_file lf = { t->path, t->pathlen, sb->st_mode, sb->st_nlink, sb->st_dev,
				 sb->st_ino, &h, tree_encrypted(&h), NULL, 0, sb->st_uid,
				 sb->st_gid };
	int r = label_visit(run, &lf);
	if (r != 0) {
		close(h.fd);
		return r < 0 ? ENOMEM : 0;
	}
	*fd = h.fd;
	return 0;
}

static long tree_walk(void *arg, struct label_run *run)
{
	struct tree *t = arg;
	struct stat sb;
	struct handle h;
	int fd;
	long rc;

	t->mounts = 0;
	free(t->first_mount);
	t->first_mount = NULL;
	if ((rc = visit_root(t, run, &fd, &sb)) || fd < 0)
		return rc;
	if (t->threads)
		return tree_walk_threads(t, run, fd, &sb);
	if ((rc = push_dir(t, run, fd, &sb, t->pathlen)))
		return rc;
	while (t->depth) {
		struct frame *f = &t->stack[t->depth - 1];
		if (f->pos >= f->size) {
			leave_dir(t, run, f);
			close(f->fd);
			t->depth--;
			continue;
		}
		int r = open_next(t, run, &h, &sb);
		if (r < 0) {
			rc = -r;
			break;
		}
		if (!r)
			continue;
		struct label_file lf = { t->path, t->pathlen, sb.st_mode, sb.st_nlink, sb.st_dev,
					 sb.st_ino, &h, S_ISDIR(sb.st_mode) && tree_encrypted(&h),
					 NULL, 0, sb.st_uid, sb.st_gid };
		r = label_visit(run, &lf);
		if (r < 0) {
			close(h.fd);
			rc = ENOMEM;
			break;
		}
		if (!S_ISDIR(sb.st_mode) || r == 1) {
			close(h.fd);
			continue;
		}
		if ((fd = dir_fd(t, run, &h)) < 0) {
			lf.h = NULL;
			label_leave(run, &lf);
		} else if ((rc = push_dir(t, run, fd, &sb, t->pathlen))) {
			break;
		}
	}
	free_frames(t);
	return rc;
}

bool dir_is_labeled(const char *dir)
{
	char b[8];
	return getxattr(dir, SELINUX_XATTR, b, 0) > 0;
}

/* A file system whose contents do not outlive a boot, where restorecon writes no digest. */
static bool volatile_fs(const char *dir)
{
	struct statfs sf;
	/* f_type is an int on 32-bit targets: the magic numbers are 32 bits */
	return !statfs(dir, &sf) && ((uint32_t)sf.f_type == TMPFS_MAGIC ||
				     (uint32_t)sf.f_type == RAMFS_MAGIC ||
				     (uint32_t)sf.f_type == SYSFS_MAGIC);
}

/* How many threads walk the tree (treepool.c): --threads, by default one per CPU (up to 8). 0:
 * the walk above, one entry at a time, when the engine's order matters beyond what it is handed
 * in order: directory digests (written as the walk leaves each directory), app data,
 * relabel's pruning (which decide whether a directory is entered) and a check's shadow of the
 * device's walks (which reads the digests of the directories it is handed). */
static unsigned tree_threads(const struct label_opts *o)
{
	long n = o->threads;
	if (o->digests || o->appdata || o->diff || o->device_shadow)
		return 0;
	if (!n) {
		n = sysconf(_SC_NPROCESSORS_ONLN);
		n = n < 1 ? 1 : n > 8 ? 8 : n;
	}
	return (unsigned)n;
}

int label_dir(const char *dir, const fc_set *set, const struct label_opts *o,
	      struct label_stats *st)
{
	struct label_opts own = *o;
	struct tree t = { .root = dir, .o = &own, .set = set, .valcap = 256, .pathcap = 4096 };
	struct label_src src = { .name = dir, .what = "file system", .unit = "space", .arg = &t,
				 .walk = tree_walk, .get = tree_get, .set = tree_set,
				 .get_digest = tree_get_digest,
				 .set_digest = tree_set_digest, .get_xattr = tree_get_xattr };
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
	if (own.digests && volatile_fs(dir)) {
		/* as restorecon: what is gone at the next boot needs no digest */
		fprintf(stderr, "fclabel %s: note: %s is on a tmpfs, ramfs or sysfs: no digests "
			"(restorecon keeps none there)\n", o->cmd, dir);
		own.digests = false;
	}
	if (access("/proc/self/fd", F_OK))
		/* tree.h: how a symlink's (a device node's ...) own inode is reached */
		fprintf(stderr, "fclabel %s: note: /proc is not mounted: the labels of symlinks, "
			"device nodes, FIFOs and sockets are read and written through /proc/self/fd, "
			"so those are left as they are and counted as errors; mount /proc to label "
			"them\n", o->cmd);
	t.threads = tree_threads(&own);
	char *m1, *m2;
	if (t.threads > 1 && tree_mounted_twice(dir, own.cross_mounts, &m1, &m2)) {
		/* twice.c: what is met twice is then met in walk order, as -T 1 meets it */
		t.threads = 1;
		if (own.verbose)
			fprintf(stderr, "fclabel %s: note: %s and %s show the same files: walked by "
				"one thread, so that what is met twice is labeled in walk order\n",
				o->cmd, m1 ? qname(m1) : "?", m2 ? qname(m2) : "?");
		free(m1);
		free(m2);
	}
	tree_fast_init();
	if (!statvfs(dir, &vfs) && vfs.f_files >= vfs.f_ffree)
		src.total = vfs.f_files - vfs.f_ffree;
	rc = label_source(&src, set, &own, st);
	if (t.mounts)
		fprintf(stderr, "fclabel %s: %s: %lu mount point(s) not crossed (%s%s; "
			"--cross-mounts enters them)\n", o->cmd, qname(dir), t.mounts,
			t.first_mount ? qname(t.first_mount) : "", t.mounts > 1 ? ", ..." : "");
out:
	free(t.first_mount);
	free(t.val);
	free(t.path);
	return rc;
}
