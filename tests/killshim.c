/* Test helper (LD_PRELOAD): SIGKILLs the process right after its KILL_AFTER_WRITES-th pwrite, so
 * a test can stop fclabel at every boundary between two writes, deterministically
 * (KILL_SIGNAL=N sends signal N instead: SIGINT or SIGTERM, which fclabel catches). Once.
 * KILL_RENAME_FROM and KILL_RENAME_TO: rename the one over the other instead, as another program
 * replacing the image during the run would (t_target); at that write, or with
 * KILL_RENAME_ON=exchange just before the first renameat2 (as the result is put in place).
 * KILL_OVERWRITE_FROM and KILL_OVERWRITE_TO: copy the one's bytes into the other in place (the
 * same inode) instead, as another machine writing the image would (t_mmp).
 * KILL_NO_EXCHANGE=1: renameat2 fails with EINVAL, as on a file system without RENAME_EXCHANGE. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>
static long n = -1;
static int fired;
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static void overwrite(const char *from, const char *to) {
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY);
	char buf[65536];
	ssize_t r;
	off_t o = 0;
	while (in >= 0 && out >= 0 && (r = read(in, buf, sizeof(buf))) > 0 &&
	       real_pwrite(out, buf, (size_t)r, o) == r)
		o += r;
	if (out >= 0) { fsync(out); close(out); }
	if (in >= 0) close(in);
}
static void event(void) {
	const char *from = getenv("KILL_RENAME_FROM"), *to = getenv("KILL_RENAME_TO");
	const char *ofrom = getenv("KILL_OVERWRITE_FROM"), *oto = getenv("KILL_OVERWRITE_TO");
	fired = 1;
	if (from && to) { rename(from, to); return; }
	if (ofrom && oto) { overwrite(ofrom, oto); return; }
	const char *s = getenv("KILL_SIGNAL"); kill(getpid(), s ? atoi(s) : SIGKILL);
}
static int on_exchange(void) {
	const char *e = getenv("KILL_RENAME_ON");
	return e && !strcmp(e, "exchange");
}
static void tick(void) {
	if (fired || on_exchange()) return;
	if (n < 0) { const char *e = getenv("KILL_AFTER_WRITES"); n = e ? atol(e) : 0x7fffffff; if (!n) n = 0x7fffffff; }
	if (--n == 0) event();
}
ssize_t pwrite64(int fd, const void *b, size_t c, off_t o) {
	if (!real_pwrite) real_pwrite = dlsym(RTLD_NEXT, "pwrite64");
	ssize_t r = real_pwrite(fd, b, c, o); tick(); return r;
}
ssize_t pwrite(int fd, const void *b, size_t c, off_t o) { return pwrite64(fd, b, c, o); }
int renameat2(int ofd, const char *from, int nfd, const char *to, unsigned flags) {
	static int (*real)(int, const char *, int, const char *, unsigned);
	if (!fired && on_exchange()) event();
	const char *e = getenv("KILL_NO_EXCHANGE");
	if (e && *e == '1') { errno = EINVAL; return -1; }
	if (!real) real = dlsym(RTLD_NEXT, "renameat2");
	return real(ofd, from, nfd, to, flags);
}
