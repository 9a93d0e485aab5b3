/*
 * Helpers the fuzz harnesses share, #included by each (static functions, one translation unit
 * per harness): a private scratch directory, writing files, splitting an input into sections.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Sections of an input are separated by these two bytes (never valid in a file_contexts
 * field, which must be ASCII). */
/* each harness uses some of these */
#define FZ_FN static __attribute__((unused))

#define FZ_SEP "\xff\xfe"
#define FZ_SEPLEN 2

static char fz_dir[256];

FZ_FN void fz_cleanup(void)
{
	char cmd[300];
	if (fz_dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fz_dir);
		if (system(cmd) != 0)
			fz_dir[0] = 0;
	}
}

/* Removes base/fclabel-fuzz.PID directories left by harness processes that are gone (a crash
 * skips atexit). */
static void fz_sweep(const char *base)
{
	DIR *d = opendir(base);
	struct dirent *e;
	char path[512];

	if (!d)
		return;
	while ((e = readdir(d))) {
		char *end;
		if (strncmp(e->d_name, "fclabel-fuzz.", 13))
			continue;
		long pid = strtol(e->d_name + 13, &end, 10);
		if (*end || pid <= 0 || (pid != getpid() && (kill((pid_t)pid, 0) == 0 || errno != ESRCH)))
			continue;
		snprintf(path, sizeof(path), "rm -rf '%s/%s'", base, e->d_name);
		if (system(path) != 0)
			break;
	}
	closedir(d);
}

/* A private directory, on tmpfs when there is one: files are written on every run. */
FZ_FN const char *fz_tmpdir(void)
{
	if (fz_dir[0])
		return fz_dir;
	const char *base = getenv("FUZZ_TMPDIR");
	if (!base || !*base) {
		struct stat st;
		base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0
			       ? "/dev/shm"
			       : getenv("TMPDIR");
	}
	if (!base || !*base)
		base = "/tmp";
	fz_sweep(base);
	snprintf(fz_dir, sizeof(fz_dir), "%s/fclabel-fuzz.%ld", base, (long)getpid());
	if (mkdir(fz_dir, 0700) < 0) {
		perror("fuzz: mkdir");
		abort();
	}
	atexit(fz_cleanup);
	return fz_dir;
}

/* dir/name into buf. */
FZ_FN const char *fz_path(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", fz_tmpdir(), name);
	return buf;
}

/* Writes data to path (replacing it). Aborts when that fails: the harness, not the input. */
FZ_FN void fz_write(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	const char *p = data;
	if (fd < 0) {
		fprintf(stderr, "fuzz: %s: %s\n", path, strerror(errno));
		abort();
	}
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			fprintf(stderr, "fuzz: writing %s: %s\n", path, strerror(errno));
			abort();
		}
		p += w;
		len -= (size_t)w;
	}
	close(fd);
}

/* Reads a whole file into a malloc'd buffer (NUL-terminated); NULL when it cannot. */
FZ_FN char *fz_read(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf;
	size_t got = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !(buf = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return NULL;
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	buf[got] = 0;
	*len = got;
	return buf;
}

struct fz_section {
	const uint8_t *p;
	size_t n;
};

/* Splits data at FZ_SEP into at most max sections (the last one takes the rest); returns how
 * many there are (at least 1). */
FZ_FN size_t fz_split(const uint8_t *data, size_t size, struct fz_section *sec, size_t max)
{
	size_t k = 0, start = 0;
	for (size_t i = 0; i + FZ_SEPLEN <= size && k + 1 < max; i++) {
		if (!memcmp(data + i, FZ_SEP, FZ_SEPLEN)) {
			sec[k].p = data + start;
			sec[k].n = i - start;
			k++;
			start = i + FZ_SEPLEN;
			i += FZ_SEPLEN - 1;
		}
	}
	sec[k].p = data + start;
	sec[k].n = size - start;
	return k + 1;
}

/* Writes the section to dir/name, or removes that file when the section is absent. */
FZ_FN void fz_put(const char *name, const struct fz_section *sec, bool present)
{
	char path[512];
	fz_path(path, sizeof(path), name);
	if (present)
		fz_write(path, sec->p, sec->n);
	else if (unlink(path) < 0 && errno != ENOENT)
		abort();
}

/* Lines of a section as NUL-terminated strings in one malloc'd block: returns the count, at
 * most max; v[i] point into *block. */
FZ_FN size_t fz_lines(const struct fz_section *sec, char **block, char **v, size_t max,
		       size_t maxlen)
{
	size_t n = 0;
	char *b = malloc(sec->n + 1);
	if (!b)
		abort();
	memcpy(b, sec->p, sec->n);
	b[sec->n] = 0;
	*block = b;
	for (char *line = b; n < max && line < b + sec->n;) {
		char *nl = memchr(line, '\n', (size_t)(b + sec->n - line));
		char *end = nl ? nl : b + sec->n;
		*end = 0;
		if (strlen(line) <= maxlen)
			v[n++] = line;
		line = end + 1;
	}
	return n;
}
