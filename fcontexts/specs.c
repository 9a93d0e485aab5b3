/*
 * Building a set's spec list: the one place where the text and the compiled readers (parse.c,
 * binfile.c) add specs, keep file buffers and names, and report errors. Both call down into
 * this file; neither calls the other.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define FC_MAX_FILE (1u << 30)

void fc_seterr(struct fc_error *err, const char *file, unsigned line, unsigned col,
	       const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
	err->line = line;
	err->column = col;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

static int push(void ***v, size_t *n, void *p)
{
	void **nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!nv)
		return ENOMEM;
	nv[(*n)++] = p;
	*v = nv;
	return 0;
}

int fc_keep_name(struct fc_set *set, const char *path, unsigned *fileno_)
{
	char *name = strdup(path);
	if (!name || push((void ***)&set->names, &set->nnames, name)) {
		free(name);
		return ENOMEM;
	}
	*fileno_ = (unsigned)(set->nnames - 1);
	return 0;
}

/* The set owns buf from now on, even on failure. */
int fc_keep_buf(struct fc_set *set, char *buf)
{
	if (push((void ***)&set->bufs, &set->nbufs, buf))
		return free(buf), ENOMEM;
	return 0;
}

int fc_read_file(const char *path, bool optional, char **out, size_t *len, struct fc_error *err)
{
	struct stat st;
	char *buf;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		int e = errno;
		if (!(optional && e == ENOENT))
			fc_seterr(err, path, 0, 0, "cannot open: %s", strerror(e));
		return e;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		int e = S_ISDIR(st.st_mode) ? EISDIR : errno ? errno : EINVAL;
		fc_seterr(err, path, 0, 0, "not a regular file");
		close(fd);
		return e;
	}
	if ((unsigned long long)st.st_size > FC_MAX_FILE) {
		fc_seterr(err, path, 0, 0, "file is %lld bytes, larger than the 1 GiB limit",
			  (long long)st.st_size);
		close(fd);
		return EFBIG;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int e = r < 0 ? errno : EIO;
			fc_seterr(err, path, 0, 0, "read failed: %s", r < 0 ? strerror(e) : "file shrank");
			free(buf);
			close(fd);
			return e;
		}
		got += (size_t)r;
	}
	close(fd);
	buf[got] = 0;
	*out = buf;
	*len = got;
	return 0;
}

/* Appends a spec whose regex, mode and context are set: the derived fields are filled in here,
 * for the text and the compiled forms alike. */
int fc_push_spec(struct fc_set *set, struct spec *s)
{
	s->tclass = (uint8_t)fc_mode_class(s->pub.mode);
	s->none = strcmp(s->pub.context, "<<none>>") == 0;
	s->next_same = -1;
	if (set->nspecs % 256 == 0) {
		struct spec *nv = realloc(set->specs, (set->nspecs + 256) * sizeof(*nv));
		if (!nv)
			return ENOMEM;
		set->specs = nv;
	}
	s->pub.index = (unsigned)set->nspecs;
	set->specs[set->nspecs++] = *s;
	return 0;
}

