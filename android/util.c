/* Errors and file reading shared by the seapp_contexts and packages.list readers. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

void seapp_seterr(struct seapp_error *err, const char *file, unsigned line, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
	err->line = line;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

static int read_all(int fd, const char *path, char *buf, size_t size, struct seapp_error *err)
{
	size_t got = 0;

	while (got < size) {
		ssize_t r = read(fd, buf + got, size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int e = r < 0 ? errno : EIO;
			seapp_seterr(err, path, 0, "read failed: %s",
				     r < 0 ? strerror(e) : "file shrank while read");
			return e;
		}
		got += (size_t)r;
	}
	return 0;
}

int seapp_slurp(const char *path, char **out, size_t *len, struct seapp_error *err)
{
	struct stat st;
	char *buf;
	int rc, fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		rc = errno;
		seapp_seterr(err, path, 0, "cannot open: %s", strerror(rc));
		return rc;
	}
	if (fstat(fd, &st) < 0) {
		rc = errno;
		seapp_seterr(err, path, 0, "cannot stat: %s", strerror(rc));
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		seapp_seterr(err, path, 0, "not a regular file");
		close(fd);
		return rc;
	}
	if ((unsigned long long)st.st_size > SEAPP_MAX_FILE) {
		seapp_seterr(err, path, 0, "file is %lld bytes, over the %u MiB limit",
			     (long long)st.st_size, SEAPP_MAX_FILE >> 20);
		close(fd);
		return EFBIG;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		seapp_seterr(err, path, 0, "out of memory");
		close(fd);
		return ENOMEM;
	}
	rc = read_all(fd, path, buf, (size_t)st.st_size, err);
	close(fd);
	if (rc) {
		free(buf);
		return rc;
	}
	buf[st.st_size] = 0;
	*out = buf;
	*len = (size_t)st.st_size;
	return 0;
}
