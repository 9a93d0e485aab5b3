/* Test helper (LD_PRELOAD) for t_tree: a symlink swapped in during the walk, deterministically.
 * The first time the process opens an entry named in SWAP_NAMES (NAME=TARGET,...) relative to a
 * directory descriptor, that entry is renamed to NAME.orig and a symlink NAME -> TARGET takes
 * its place, just before the real openat (or openat2, through syscall(2)) runs: what a race
 * between listing a directory and opening its entries would do. Each swap is recorded in
 * SWAP_LOG. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static char done[16][256];
static int ndone;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER; /* fclabel's walk has threads */

static void swap_locked(int dfd, const char *name);

static void maybe_swap(int dfd, const char *name)
{
	pthread_mutex_lock(&mu);
	swap_locked(dfd, name);
	pthread_mutex_unlock(&mu);
}

static void swap_locked(int dfd, const char *name)
{
	const char *list = getenv("SWAP_NAMES");
	if (!list || !name || strchr(name, '/'))
		return;
	for (int i = 0; i < ndone; i++)
		if (!strcmp(done[i], name))
			return;
	size_t nl = strlen(name);
	for (const char *p = list; *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len > nl + 1 && !memcmp(p, name, nl) && p[nl] == '=' && ndone < 16) {
			char target[4096], orig[512];
			snprintf(target, sizeof(target), "%.*s", (int)(len - nl - 1), p + nl + 1);
			snprintf(orig, sizeof(orig), "%s.orig", name);
			snprintf(done[ndone++], sizeof(done[0]), "%s", name);
			int rc = renameat(dfd, name, dfd, orig);
			rc = rc ? rc : symlinkat(target, dfd, name);
			const char *log = getenv("SWAP_LOG");
			FILE *f = log ? fopen(log, "a") : NULL;
			if (f) {
				fprintf(f, "%s %s -> %s\n", rc ? "FAILED" : "swapped", name, target);
				fclose(f);
			}
			return;
		}
		p += len + (end ? 1 : 0);
	}
}

static int real_openat(const char *sym, int dfd, const char *name, int flags, mode_t mode)
{
	int (*real)(int, const char *, int, ...) = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, sym);
	return real(dfd, name, flags, mode);
}

int openat(int dfd, const char *name, int flags, ...)
{
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (dfd != AT_FDCWD)
		maybe_swap(dfd, name);
	return real_openat("openat", dfd, name, flags, mode);
}

int openat64(int dfd, const char *name, int flags, ...)
{
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (dfd != AT_FDCWD)
		maybe_swap(dfd, name);
	return real_openat("openat64", dfd, name, flags, mode);
}

/* openat2 has no libc wrapper here: fclabel calls it through syscall(2) */
long syscall(long nr, ...)
{
	long a[6];
	va_list ap;
	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_openat2 && (int)a[0] != AT_FDCWD)
		maybe_swap((int)a[0], (const char *)a[1]);
	long (*real)(long, ...) = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
