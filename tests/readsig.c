/* Test helper (LD_PRELOAD): raises signal READ_SIGNAL (default SIGTERM) the first time the
 * process reads (pread) at byte offset READ_SIGNAL_AT, so a test can deliver SIGINT or SIGTERM
 * in the middle of a phase that only reads (the claims scan), at a block of its choosing.
 * READ_TRUNCATE_TO=SIZE instead truncates the file read to SIZE bytes there, as another program
 * would (what is mapped of it past SIZE then faults). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void tick(int fd, off_t o)
{
	static int done;
	const char *at = getenv("READ_SIGNAL_AT"), *s = getenv("READ_SIGNAL");
	const char *to = getenv("READ_TRUNCATE_TO");
	char proc[64];
	if (done || !at || (off_t)atoll(at) != o)
		return;
	done = 1;
	if (to) {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		if (truncate(proc, (off_t)atoll(to)))
			perror("readsig: truncate");
		return;
	}
	kill(getpid(), s ? atoi(s) : SIGTERM);
}

ssize_t pread64(int fd, void *b, size_t c, off_t o)
{
	static ssize_t (*real)(int, void *, size_t, off_t);
	if (!real)
		real = (ssize_t (*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread64");
	ssize_t r = real(fd, b, c, o);
	tick(fd, o);
	return r;
}

ssize_t pread(int fd, void *b, size_t c, off_t o)
{
	return pread64(fd, b, c, o);
}
