/*
 * make bench-tree's floor: what the kernel allows for a walk of a live tree that does no more
 * than fclabel label must. The same syscalls per entry as labeler/treepool.c in each case
 * (getdents64 of each directory; everything relative to the directory's descriptor, never through
 * a symlink; a directory opened with openat2 and statx where they work; see entry()), no lookups and no bookkeeping, in any order, with -j threads taking
 * directories from one shared stack. Linux 6.13 or later (getxattrat).
 *
 *   treefloor stat DIR [-j N]            stat and read the label of every entry
 *   treefloor write DIR LABEL [-j N]     ... and write LABEL (with its NUL) on every entry
 *
 * Prints "ENTRIES SECONDS". Mount points below DIR are not entered (nor written), as fclabel.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#define XATTR "security.selinux"

static const char *label;
static size_t labellen;
static dev_t rootdev;

/* directories to list: their descriptors, on a stack shared by the threads */
static int *stack;
static size_t depth, cap;
static unsigned busy; /* threads listing a directory: more may come */
static unsigned long entries, failures;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void push(int fd)
{
	pthread_mutex_lock(&mu);
	if (depth == cap) {
		cap = cap ? cap * 2 : 1024;
		if (!(stack = realloc(stack, cap * sizeof(*stack)))) {
			fprintf(stderr, "treefloor: out of memory\n");
			exit(1);
		}
	}
	stack[depth++] = fd;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
}

static ssize_t getxattrat_raw(int dfd, const char *name, void *buf, size_t n)
{
	struct { uint64_t value; uint32_t size, flags; } args = { (uintptr_t)buf, (uint32_t)n, 0 };
	return syscall(464 /* getxattrat */, dfd, name, AT_SYMLINK_NOFOLLOW, XATTR, &args,
		       sizeof(args));
}

/*
 * One entry, as labeler/treepool.c handles it. A directory: an fstatat that sees a mount point
 * without triggering an automount, then opened O_RDONLY, fstat, its encrypt flag, its label
 * through the descriptor; pushed, to be listed. Anything else: reading only (stat), fstatat and
 * getxattrat by name, no descriptor; writing (a tree labeled for the first time), opened
 * (O_RDONLY|O_NONBLOCK a regular file, O_PATH anything else and its label through
 * /proc/self/fd/N), fstat, the label written with XATTR_CREATE (again without it when there
 * was one), closed.
 */
/* A directory as fclabel opens one where the kernel allows it (labeler/tree/io.c): openat2
 * refusing to cross a mount point (no fstatat first), statx with the encrypt flag (no fstat, no
 * FS_IOC_GETFLAGS). -1 when that did not work: then the plain calls. */
static int open_dir(int dfd, const char *name, bool *encrypted)
{
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
				.resolve = RESOLVE_NO_XDEV };
	struct statx x;
	int fd = (int)syscall(SYS_openat2, dfd, name, &how, sizeof(how));
	if (fd < 0)
		return -1;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &x) || !S_ISDIR(x.stx_mode) ||
	    makedev(x.stx_dev_major, x.stx_dev_minor) != rootdev ||
	    !(x.stx_attributes_mask & STATX_ATTR_ENCRYPTED)) {
		close(fd);
		return -1;
	}
	*encrypted = x.stx_attributes & STATX_ATTR_ENCRYPTED;
	return fd;
}

static unsigned long entry(int dfd, const char *name, unsigned char type)
{
	char val[256], proc[32];
	struct stat sb;
	int fd = -1, flags = 0;
	bool opath = false, encrypted;
	if (type == DT_DIR && (fd = open_dir(dfd, name, &encrypted)) >= 0) {
		bool bad = label ? fsetxattr(fd, XATTR, label, labellen, XATTR_CREATE) &&
					   (errno != EEXIST ||
					    fsetxattr(fd, XATTR, label, labellen, 0))
				 : fgetxattr(fd, XATTR, val, sizeof(val)) < 0 && errno != ENODATA;
		if (encrypted)
			close(fd);
		else
			push(fd);
		return bad;
	}
	if (type == DT_DIR || type == DT_UNKNOWN || !label) {
		if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT))
			return 1;
		if (sb.st_dev != rootdev)
			return 0;
		type = IFTODT(sb.st_mode);
		if (type != DT_DIR && !label)
			return getxattrat_raw(dfd, name, val, sizeof(val)) < 0 && errno != ENODATA;
	}
	if (type == DT_DIR)
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	else if (type == DT_REG)
		fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		opath = true;
	}
	if (fd < 0 || fstat(fd, &sb)) {
		if (fd >= 0)
			close(fd);
		return 1;
	}
	if (sb.st_dev != rootdev) {
		close(fd);
		return 0;
	}
	unsigned long bad = 0;
	if (opath)
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	else if (S_ISDIR(sb.st_mode) && ioctl(fd, FS_IOC_GETFLAGS, &flags))
		flags = 0;
	if (label) {
		int rc = opath ? setxattr(proc, XATTR, label, labellen, XATTR_CREATE)
			       : fsetxattr(fd, XATTR, label, labellen, XATTR_CREATE);
		if (rc && errno == EEXIST)
			rc = opath ? setxattr(proc, XATTR, label, labellen, 0)
				   : fsetxattr(fd, XATTR, label, labellen, 0);
		bad += rc != 0;
	} else if ((opath ? getxattr(proc, XATTR, val, sizeof(val))
			  : fgetxattr(fd, XATTR, val, sizeof(val))) < 0 && errno != ENODATA) {
		bad++;
	}
	if (S_ISDIR(sb.st_mode) && !opath && !(flags & FS_ENCRYPT_FL))
		push(fd);
	else
		close(fd);
	return bad;
}

static void list(int dfd)
{
	char buf[32768];
	unsigned long n = 0, bad = 0;
	ssize_t got;
	while ((got = getdents64(dfd, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < got;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			off += d->d_reclen;
			const char *nm = d->d_name;
			if (nm[0] == '.' && (!nm[1] || (nm[1] == '.' && !nm[2])))
				continue;
			n++;
			bad += entry(dfd, nm, d->d_type);
		}
	}
	if (got < 0)
		bad++;
	close(dfd);
	pthread_mutex_lock(&mu);
	entries += n;
	failures += bad;
	pthread_mutex_unlock(&mu);
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	for (;;) {
		while (!depth && busy)
			pthread_cond_wait(&cv, &mu);
		if (!depth)
			break;
		int fd = stack[--depth];
		busy++;
		pthread_mutex_unlock(&mu);
		list(fd);
		pthread_mutex_lock(&mu);
		if (!--busy && !depth)
			pthread_cond_broadcast(&cv);
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void usage(void)
{
	fprintf(stderr, "usage: treefloor stat DIR [-j N]\n       treefloor write DIR LABEL [-j N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int nthreads = 1, a = 3;
	struct rlimit rl;

	if (argc < 3 || (strcmp(argv[1], "stat") && strcmp(argv[1], "write")))
		usage();
	if (!strcmp(argv[1], "write")) {
		if (argc < 4)
			usage();
		label = argv[3];
		labellen = strlen(label) + 1;
		a = 4;
	}
	for (; a < argc; a++) {
		if (!strcmp(argv[a], "-j") && a + 1 < argc && (nthreads = atoi(argv[a + 1])) > 0 &&
		    nthreads <= 256)
			a++;
		else
			usage();
	}
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	double t0 = now();
	struct stat sb;
	int root = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0 || fstat(root, &sb)) {
		fprintf(stderr, "treefloor: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	rootdev = sb.st_dev;
	char val[256];
	if (fgetxattr(root, XATTR, val, sizeof(val)) < 0 && errno != ENODATA)
		failures++;
	if (label && fsetxattr(root, XATTR, label, labellen, 0))
		failures++;
	entries = 1;
	push(root);
	pthread_t th[256];
	for (int i = 1; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, worker, NULL)) {
			fprintf(stderr, "treefloor: cannot start a thread\n");
			return 1;
		}
	worker(NULL);
	for (int i = 1; i < nthreads; i++)
		pthread_join(th[i], NULL);
	printf("%lu %.3f\n", entries, now() - t0);
	if (failures)
		fprintf(stderr, "treefloor: %lu entries could not be read or written\n", failures);
	return failures ? 1 : 0;
}
