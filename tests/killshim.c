/* Test helper (LD_PRELOAD): SIGKILLs the process right after its KILL_AFTER_WRITES-th pwrite, so
 * a test can stop fclabel at every boundary between two writes, deterministically
 * (KILL_SIGNAL=N sends signal N instead: SIGINT or SIGTERM, which fclabel catches). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/uio.h>
static long n = -1; /* -1: not read yet; 0: fired (once) */
static void tick(void) {
	if (n < 0) { const char *e = getenv("KILL_AFTER_WRITES"); n = e ? atol(e) : 0x7fffffff; if (n <= 0) n = 0x7fffffff; }
	if (n > 0 && --n == 0) { const char *s = getenv("KILL_SIGNAL"); kill(getpid(), s ? atoi(s) : SIGKILL); }
}
ssize_t pwrite64(int fd, const void *b, size_t c, off_t o) {
	static ssize_t (*real)(int, const void *, size_t, off_t);
	if (!real) real = dlsym(RTLD_NEXT, "pwrite64");
	ssize_t r = real(fd, b, c, o); tick(); return r;
}
ssize_t pwrite(int fd, const void *b, size_t c, off_t o) { return pwrite64(fd, b, c, o); }
