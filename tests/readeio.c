/* Test helper (LD_PRELOAD): pread and read fail with EIO when the bytes they read hold byte
 * offset READ_EIO_AT, as a disk with one bad sector there would (libext2fs reads again with
 * read() where pread fails): a test can tell a read the run needs from one that only reads
 * ahead past it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

static int bad(off_t o, size_t c)
{
	const char *at = getenv("READ_EIO_AT");
	return at && o >= 0 && o <= (off_t)atoll(at) && (off_t)atoll(at) < o + (off_t)c;
}

ssize_t pread64(int fd, void *b, size_t c, off_t o)
{
	static ssize_t (*real)(int, void *, size_t, off_t);
	if (!real)
		real = (ssize_t (*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread64");
	if (bad(o, c)) {
		errno = EIO;
		return -1;
	}
	return real(fd, b, c, o);
}

ssize_t read(int fd, void *b, size_t c)
{
	static ssize_t (*real)(int, void *, size_t);
	if (!real)
		real = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	if (bad(lseek(fd, 0, SEEK_CUR), c)) {
		errno = EIO;
		return -1;
	}
	return real(fd, b, c);
}

ssize_t pread(int fd, void *b, size_t c, off_t o)
{
	return pread64(fd, b, c, o);
}
