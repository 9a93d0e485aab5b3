/* Test helper (LD_PRELOAD): SIGKILLs the process right after its KILL_AFTER_WRITES-th pwrite, so
 * a test can stop fclabel at every boundary between two writes, deterministically
 * (KILL_SIGNAL=N sends signal N instead: SIGINT or SIGTERM, which fclabel catches).
 *
 * KILL_ALL_WRITES=1 counts every call that changes a file's bytes, not only pwrite: write,
 * pwritev and fallocate too (libext2fs writes the superblock with lseek and write, and zeroes a
 * new block with fallocate), on descriptors above 2 that name a regular file or a block device
 * (so not the standard output or error). KILL_COUNT_FILE=PATH writes the number of counted
 * writes there at exit (a run with no kill counts them); KILL_LOG=PATH appends one line per
 * counted write: "N CALL FD OFFSET LENGTH" (the offset -1 when the file position could not be
 * read), to say which block the write that a kill came after was.
 *
 * Instead of a signal, at that write: KILL_RENAME_FROM and KILL_RENAME_TO rename the one over the
 * other, as another program replacing the image during the run would (t_target), or with
 * KILL_RENAME_ON=exchange just before the first renameat2 (as the result is put in place);
 * KILL_OVERWRITE_FROM and KILL_OVERWRITE_TO copy the one's bytes into the other in place (the
 * same inode), as another machine writing the image would (t_mmp). KILL_NO_EXCHANGE=1: renameat2
 * fails with EINVAL, as on a file system without RENAME_EXCHANGE. Whatever it is happens once. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static long n, counted;
static int all = -1, inited;

/* (read once: after the kill has been sent, n stays below 0 and nothing more is sent) */
static void init(void)
{
	if (!inited) {
		inited = 1;
		const char *e = getenv("KILL_AFTER_WRITES");
		n = e ? atol(e) : 0x7fffffff;
		if (!n)
			n = 0x7fffffff;
		e = getenv("KILL_ALL_WRITES");
		all = e && *e && strcmp(e, "0");
	}
}

/* what a counted write is: a descriptor of a regular file or a block device, not 0, 1 or 2 */
static int counts(int fd)
{
	struct stat st;
	if (fd <= 2)
		return 0;
	if (fstat(fd, &st))
		return 0;
	return S_ISREG(st.st_mode) || S_ISBLK(st.st_mode);
}

static void note(const char *call, int fd, long long off, long long len)
{
	const char *p = getenv("KILL_LOG");
	if (!p)
		return;
	int lfd = open(p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (lfd < 0)
		return;
	char buf[160];
	int k = snprintf(buf, sizeof buf, "%ld %s %d %lld %lld\n", counted, call, fd, off, len);
	/* (the raw system call: not this file's write) */
	if (k > 0)
		syscall(SYS_write, lfd, buf, (size_t)k);
	close(lfd);
}

static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static int fired;

static void overwrite(const char *from, const char *to)
{
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY);
	char buf[65536];
	ssize_t r;
	off_t o = 0;
	if (!real_pwrite)
		real_pwrite = (ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite64");
	while (in >= 0 && out >= 0 && (r = read(in, buf, sizeof(buf))) > 0 &&
	       real_pwrite(out, buf, (size_t)r, o) == r)
		o += r;
	if (out >= 0) {
		fsync(out);
		close(out);
	}
	if (in >= 0)
		close(in);
}

static void event(void)
{
	const char *from = getenv("KILL_RENAME_FROM"), *to = getenv("KILL_RENAME_TO");
	const char *ofrom = getenv("KILL_OVERWRITE_FROM"), *oto = getenv("KILL_OVERWRITE_TO");
	fired = 1;
	if (from && to) {
		rename(from, to);
		return;
	}
	if (ofrom && oto) {
		overwrite(ofrom, oto);
		return;
	}
	const char *s = getenv("KILL_SIGNAL");
	kill(getpid(), s ? atoi(s) : SIGKILL);
}

static int on_exchange(void)
{
	const char *e = getenv("KILL_RENAME_ON");
	return e && !strcmp(e, "exchange");
}

static void tick(const char *call, int fd, long long off, long long len)
{
	init();
	counted++;
	note(call, fd, off, len);
	if (!fired && !on_exchange() && --n == 0)
		event();
}

int renameat2(int ofd, const char *from, int nfd, const char *to, unsigned flags)
{
	static int (*real)(int, const char *, int, const char *, unsigned);
	if (!fired && on_exchange())
		event();
	const char *e = getenv("KILL_NO_EXCHANGE");
	if (e && *e == '1') {
		errno = EINVAL;
		return -1;
	}
	if (!real)
		real = (int (*)(int, const char *, int, const char *, unsigned))dlsym(RTLD_NEXT, "renameat2");
	return real(ofd, from, nfd, to, flags);
}

__attribute__((destructor)) static void report(void)
{
	const char *p = getenv("KILL_COUNT_FILE");
	if (!p)
		return;
	int fd = open(p, O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	char buf[32];
	int k = snprintf(buf, sizeof buf, "%ld\n", counted);
	if (k > 0)
		syscall(SYS_write, fd, buf, (size_t)k);
	close(fd);
}

#define REAL(ret, name, ...)                                                                        \
	static ret (*real)(__VA_ARGS__);                                                            \
	if (!real)                                                                                  \
		real = (ret (*)(__VA_ARGS__))dlsym(RTLD_NEXT, name)

ssize_t pwrite64(int fd, const void *b, size_t c, off_t o)
{
	REAL(ssize_t, "pwrite64", int, const void *, size_t, off_t);
	init();
	int mine = all ? counts(fd) : 1;
	ssize_t r = real(fd, b, c, o);
	if (mine)
		tick("pwrite", fd, (long long)o, (long long)c);
	return r;
}
ssize_t pwrite(int fd, const void *b, size_t c, off_t o) { return pwrite64(fd, b, c, o); }

ssize_t write(int fd, const void *b, size_t c)
{
	REAL(ssize_t, "write", int, const void *, size_t);
	init();
	if (!all || !counts(fd))
		return real(fd, b, c);
	long long off = (long long)lseek(fd, 0, SEEK_CUR);
	ssize_t r = real(fd, b, c);
	tick("write", fd, off, (long long)c);
	return r;
}

ssize_t pwritev64(int fd, const struct iovec *v, int cnt, off_t o)
{
	REAL(ssize_t, "pwritev64", int, const struct iovec *, int, off_t);
	init();
	int mine = all && counts(fd);
	ssize_t r = real(fd, v, cnt, o);
	if (mine)
		tick("pwritev", fd, (long long)o, (long long)r);
	return r;
}
ssize_t pwritev(int fd, const struct iovec *v, int cnt, off_t o) { return pwritev64(fd, v, cnt, o); }

ssize_t pwritev64v2(int fd, const struct iovec *v, int cnt, off_t o, int fl)
{
	REAL(ssize_t, "pwritev64v2", int, const struct iovec *, int, off_t, int);
	init();
	int mine = all && counts(fd);
	ssize_t r = real(fd, v, cnt, o, fl);
	if (mine)
		tick("pwritev2", fd, (long long)o, (long long)r);
	return r;
}
ssize_t pwritev2(int fd, const struct iovec *v, int cnt, off_t o, int fl)
{
	return pwritev64v2(fd, v, cnt, o, fl);
}

int fallocate64(int fd, int mode, off_t o, off_t len)
{
	REAL(int, "fallocate64", int, int, off_t, off_t);
	init();
	int mine = all && counts(fd);
	int r = real(fd, mode, o, len);
	if (mine)
		tick("fallocate", fd, (long long)o, (long long)len);
	return r;
}
int fallocate(int fd, int mode, off_t o, off_t len) { return fallocate64(fd, mode, o, len); }
