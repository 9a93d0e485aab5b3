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
#include <stdint.h>
#include <sys/xattr.h>
#include <unistd.h>

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
