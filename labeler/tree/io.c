/*
 * The I/O of one entry of a live tree, shared by tree.c's walk and treepool.c's threads: open an
 * entry without following a symlink, read a directory's names, read and write security.selinux
 * through the descriptor (or /proc/self/fd/N for an O_PATH one), the encrypt flag. tree.c's
 * opening comment says why each is done so. Nothing here walks: it calls neither tree.c nor
 * treepool.c, which both call it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "internal.h"

int tree_path_set(struct tree *t, size_t at, const char *name, size_t n)
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
int tree_read_dir(struct frame *f)
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

static const char *proc_path(char *buf, int fd)
{
	snprintf(buf, TREE_PROC_LEN, "/proc/self/fd/%d", fd);
	return buf;
}

static ssize_t get_raw(const struct handle *h, char *proc, void *buf, size_t n)
{
	return h->opath ? getxattr(proc_path(proc, h->fd), SELINUX_XATTR, buf, n)
			: fgetxattr(h->fd, SELINUX_XATTR, buf, n);
}

int tree_read_label(const struct handle *h, char *proc, char **val, size_t *cap, size_t *len)
{
	if (*cap < 256) {
		char *p = realloc(*val, 256);
		if (!p)
			return ENOMEM;
		*val = p;
		*cap = 256;
	}
	for (;;) {
		/* room for a NUL after the value: the engine prints it */
		ssize_t l = get_raw(h, proc, *val, *cap - 1);
		if (l >= 0) {
			(*val)[l] = 0;
			*len = (size_t)l;
			return 0;
		}
		if (errno != ERANGE)
			return errno;
		l = get_raw(h, proc, NULL, 0);
		size_t c = l > 0 && (size_t)l + 1 > *cap ? (size_t)l + 1 : *cap * 2;
		char *p = realloc(*val, c);
		if (!p)
			return ENOMEM;
		*val = p;
		*cap = c;
	}
}

void tree_label_error(char *why, size_t n, bool opath, int e)
{
	snprintf(why, n, "cannot read its label%s: %s; left as it is",
		 opath && e == ENOENT ? " through /proc/self/fd (is /proc mounted?)" : "",
		 strerror(e));
}

static int set_raw(const struct handle *h, char *proc, const char *ctx, int flags)
{
	size_t l = strlen(ctx) + 1;
	int rc = h->opath ? setxattr(proc_path(proc, h->fd), SELINUX_XATTR, ctx, l, flags)
			  : fsetxattr(h->fd, SELINUX_XATTR, ctx, l, flags);
	return rc ? errno : 0;
}

int tree_write_label(const struct handle *h, char *proc, const char *ctx)
{
	return set_raw(h, proc, ctx, 0);
}

int tree_create_label(const struct handle *h, char *proc, const char *ctx)
{
	return set_raw(h, proc, ctx, XATTR_CREATE);
}

/* getxattrat(2), Linux 6.13: the label of name in dfd, the symlink's own for a symlink */
#ifndef SYS_getxattrat
#define SYS_getxattrat 464
#endif
struct xattr_args_at {
	uint64_t value;
	uint32_t size, flags;
};

static ssize_t getxattrat_raw(int dfd, const char *name, void *buf, size_t n)
{
	struct xattr_args_at args = { (uintptr_t)buf, (uint32_t)n, 0 };
	return syscall(SYS_getxattrat, dfd, name, AT_SYMLINK_NOFOLLOW, SELINUX_XATTR, &args,
		       sizeof(args));
}

int tree_read_label_at(int dfd, const char *name, char **val, size_t *cap, size_t *len)
{
	if (*cap < 256) {
		char *p = realloc(*val, 256);
		if (!p)
			return ENOMEM;
		*val = p;
		*cap = 256;
	}
	for (;;) {
		ssize_t l = getxattrat_raw(dfd, name, *val, *cap - 1);
		if (l >= 0) {
			(*val)[l] = 0;
			*len = (size_t)l;
			return 0;
		}
		if (errno != ERANGE)
			return errno;
		l = getxattrat_raw(dfd, name, NULL, 0);
		size_t c = l > 0 && (size_t)l + 1 > *cap ? (size_t)l + 1 : *cap * 2;
		char *p = realloc(*val, c);
		if (!p)
			return ENOMEM;
		*val = p;
		*cap = c;
	}
}

/* Opens the entry name of the directory dfd without following a symlink, as described above,
 * and fstat()s the descriptor. Returns 0, or an errno. */
int tree_open_entry(int dfd, const char *name, unsigned char type, struct handle *h,
		    struct stat *sb)
{
	int fd = -1;
	h->opath = false;
	h->ahead = NULL;
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

/*
 * A directory entry in two calls instead of four: openat2 with RESOLVE_NO_XDEV opens it only
 * when no mount point is crossed (what fstatat told before opening), and statx of the
 * descriptor gives its stat and its encrypt flag (what fstat and FS_IOC_GETFLAGS gave). Only
 * where openat2 does not trigger an automount it refuses (Linux 6.17: before, it mounted, then
 * refused), and never with FCLABEL_PLAIN_IO set (the tests compare both ways). A kernel without
 * either call (openat2: Linux 5.6, statx: 4.11), or a seccomp filter refusing it, turns it off
 * for the rest of the walk.
 */
static bool no_openat2, no_statx;

void tree_fast_init(void)
{
	struct utsname u;
	unsigned maj = 0, min = 0;
	const char *e = getenv("FCLABEL_PLAIN_IO");
	bool plain = e && *e && strcmp(e, "0");
	if (uname(&u) || sscanf(u.release, "%u.%u", &maj, &min) != 2)
		maj = 0;
	__atomic_store_n(&no_openat2, plain || maj < 6 || (maj == 6 && min < 17), __ATOMIC_RELAXED);
	__atomic_store_n(&no_statx, plain, __ATOMIC_RELAXED);
}

/* The kernel (or a filter) does not have this call: off for the rest of the walk. */
static bool missing(int e, bool *off)
{
	if (e != ENOSYS && e != EPERM)
		return false;
	__atomic_store_n(off, true, __ATOMIC_RELAXED);
	return true;
}

/* statx of fd into sb; *encrypted when statx knows that flag here, else by ioctl. */
static int stat_dir(int fd, struct stat *sb, bool *encrypted)
{
	struct statx x;
	if (__atomic_load_n(&no_statx, __ATOMIC_RELAXED) ||
	    statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &x)) {
		if (!__atomic_load_n(&no_statx, __ATOMIC_RELAXED) && !missing(errno, &no_statx))
			return errno;
		if (fstat(fd, sb))
			return errno;
		struct handle h = { .fd = fd, .opath = false, .ahead = NULL };
		*encrypted = tree_encrypted(&h);
		return 0;
	}
	memset(sb, 0, sizeof(*sb));
	sb->st_dev = makedev(x.stx_dev_major, x.stx_dev_minor);
	sb->st_ino = x.stx_ino;
	sb->st_mode = x.stx_mode;
	sb->st_nlink = x.stx_nlink;
	sb->st_uid = x.stx_uid;
	sb->st_gid = x.stx_gid;
	sb->st_rdev = makedev(x.stx_rdev_major, x.stx_rdev_minor);
	sb->st_size = (off_t)x.stx_size;
	sb->st_blksize = x.stx_blksize;
	sb->st_blocks = (blkcnt_t)x.stx_blocks;
	sb->st_atim = (struct timespec){ x.stx_atime.tv_sec, x.stx_atime.tv_nsec };
	sb->st_mtim = (struct timespec){ x.stx_mtime.tv_sec, x.stx_mtime.tv_nsec };
	sb->st_ctim = (struct timespec){ x.stx_ctime.tv_sec, x.stx_ctime.tv_nsec };
	if (x.stx_attributes_mask & STATX_ATTR_ENCRYPTED) {
		*encrypted = (x.stx_attributes & STATX_ATTR_ENCRYPTED) != 0;
	} else {
		struct handle h = { .fd = fd, .opath = false, .ahead = NULL };
		*encrypted = tree_encrypted(&h);
	}
	return 0;
}

int tree_open_dir_fast(int dfd, const char *name, struct handle *h, struct stat *sb,
		       bool *encrypted)
{
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
				.resolve = RESOLVE_NO_XDEV };
	if (__atomic_load_n(&no_openat2, __ATOMIC_RELAXED))
		return -1;
	int fd = (int)syscall(SYS_openat2, dfd, name, &how, sizeof(how));
	if (fd < 0) {
		missing(errno, &no_openat2);
		return -1;
	}
	if (stat_dir(fd, sb, encrypted)) {
		close(fd);
		return -1;
	}
	h->fd = fd;
	h->opath = false;
	h->ahead = NULL;
	return 0;
}

/* Another file system mounted here: as setfiles does, neither labeled nor entered. */
void tree_other_fs(struct tree *t)
{
	if (!t->mounts++)
		t->first_mount = strdup(t->path);
	if (t->o->verbose)
		printf("not crossing into the file system mounted at %s\n", qname(t->path));
}

/* Whether a directory carries the encrypt flag (file-based encryption: its entries' names are
 * ciphertext without the key). */
bool tree_encrypted(const struct handle *h)
{
	int flags = 0;
	return !h->opath && ioctl(h->fd, FS_IOC_GETFLAGS, &flags) == 0 && (flags & FS_ENCRYPT_FL);
}
