/*
 * Reading file_contexts and substitution files the way libselinux 3.4 does (label_file.h
 * process_line, label_support.c read_spec_entries, label_file.c selabel_subs_init), but refusing
 * with a file:line reason what it would only trip over later (NUL bytes, giant lines).
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

#define FC_MAX_LINE (1u << 20)
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

/* C-locale isspace, as libselinux's isspace() sees ASCII. */
static bool sp(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
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

/* The set owns buf from now on, even on failure. */
int fc_keep_buf(struct fc_set *set, char *buf)
{
	if (push((void ***)&set->bufs, &set->nbufs, buf))
		return free(buf), ENOMEM;
	return 0;
}

/* Reads a whole file. ENOENT is returned silently when optional. */
static int slurp(const char *path, bool optional, char **out, size_t *len, struct fc_error *err)
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

static mode_t type_mode(const char *t)
{
	if (t[0] != '-' || !t[1] || t[2])
		return (mode_t)-1;
	switch (t[1]) {
	case '-': return S_IFREG;
	case 'd': return S_IFDIR;
	case 'c': return S_IFCHR;
	case 'b': return S_IFBLK;
	case 's': return S_IFSOCK;
	case 'l': return S_IFLNK;
	case 'p': return S_IFIFO;
	default: return (mode_t)-1;
	}
}

/* Splits one line (NUL-terminated, no '\n') into up to three fields, in place. */
static int parse_line(struct fc_set *set, const char *path, unsigned fileno_, char *line,
		      unsigned lineno, struct fc_error *err)
{
	char *f[3];
	unsigned col[3];
	int items = 0;
	char *p = line;

	while (sp((unsigned char)*p))
		p++;
	if (*p == '#' || *p == 0)
		return 0;
	while (items < 3 && *p) {
		char *start;
		while (sp((unsigned char)*p))
			p++;
		if (!*p)
			break;
		start = p;
		while (*p && !sp((unsigned char)*p)) {
			if ((unsigned char)*p >= 0x80) {
				fc_seterr(err, path, lineno, (unsigned)(p - line) + 1,
					  "non-ASCII byte 0x%02x", (unsigned char)*p);
				return EINVAL;
			}
			p++;
		}
		col[items] = (unsigned)(start - line) + 1;
		f[items++] = start;
		if (*p)
			*p++ = 0;
	}
	if (items == 1) {
		fc_seterr(err, path, lineno, col[0], "missing fields: a line is REGEX [TYPE] CONTEXT");
		return EINVAL;
	}
	struct spec s = {0};
	s.pub.file = set->names[fileno_];
	s.pub.line = lineno;
	s.pub.regex = f[0];
	s.col = col[0];
	if (items == 2) {
		s.pub.context = f[1];
	} else {
		mode_t m = type_mode(f[1]);
		if (m == (mode_t)-1) {
			fc_seterr(err, path, lineno, col[1],
				  "bad file type '%.40s' (want one of -- -d -c -b -s -l -p)", f[1]);
			return EINVAL;
		}
		s.pub.type = f[1];
		s.pub.mode = m;
		s.pub.context = f[2];
	}
	return fc_push_spec(set, &s);
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

int fc_parse_file(struct fc_set *set, const char *path, bool optional, struct fc_error *err)
{
	char *buf, *name;
	size_t len;
	unsigned lineno = 0;
	int rc = slurp(path, optional, &buf, &len, err);

	if (rc)
		return rc;
	name = strdup(path);
	if (!name || push((void ***)&set->bufs, &set->nbufs, buf)) {
		free(buf);
		free(name);
		return ENOMEM;
	}
	if (push((void ***)&set->names, &set->nnames, name)) {
		free(name);
		return ENOMEM;
	}
	if (fc_bin_magic(buf, len))
		return fc_parse_bin(set, (unsigned)(set->nnames - 1), buf, len, err);
	for (char *line = buf; line < buf + len;) {
		char *nl = memchr(line, '\n', (size_t)(buf + len - line));
		char *end = nl ? nl : buf + len;
		char *nul;
		lineno++;
		if ((size_t)(end - line) > FC_MAX_LINE) {
			fc_seterr(err, path, lineno, 0, "line is %zu bytes long, over the %u-byte limit",
				  (size_t)(end - line), FC_MAX_LINE);
			return EINVAL;
		}
		nul = memchr(line, 0, (size_t)(end - line));
		if (nul) {
			fc_seterr(err, path, lineno, (unsigned)(nul - line) + 1, "NUL byte in line");
			return EINVAL;
		}
		*end = 0;
		rc = parse_line(set, path, (unsigned)(set->nnames - 1), line, lineno, err);
		if (rc)
			return rc;
		line = end + 1;
	}
	return 0;
}

/*
 * SRC DST lines; libselinux reads them with fgets into a 1024-byte buffer, so a longer line is
 * read as several; we do the same to give the same answers.
 */
int fc_parse_subs(struct fc_set *set, const char *path, struct sublist *list, bool optional,
		  struct fc_error *err)
{
	char *buf;
	size_t len;
	int rc = slurp(path, optional, &buf, &len, err);

	if (rc)
		return rc;
	if (push((void ***)&set->bufs, &set->nbufs, buf))
		return free(buf), ENOMEM;
	/* A NUL byte is refused, as in file_contexts: 3.4 reads a SRC that ends at one on past
	 * it, taking the bytes after the NUL as DST. */
	const char *nul = memchr(buf, 0, len);
	if (nul) {
		unsigned line = 1;
		const char *bol = buf;
		for (const char *c = buf; c < nul; c++)
			if (*c == '\n')
				line++, bol = c + 1;
		fc_seterr(err, path, line, (unsigned)(nul - bol) + 1, "NUL byte in line");
		return EINVAL;
	}
	/* Each piece is NUL-terminated in a private copy so the file buffer's bytes stay as read. */
	for (size_t off = 0; off < len;) {
		size_t n = 0;
		char piece[1024];
		while (off + n < len && n < 1022) {
			if (buf[off + n++] == '\n')
				break;
		}
		memcpy(piece, buf + off, n);
		piece[n] = 0;
		off += n;

		char *src = piece, *p, *dst;
		while (*src && sp((unsigned char)*src))
			src++;
		if (*src == '#')
			continue;
		for (p = src; *p && !sp((unsigned char)*p); p++)
			;
		if (!*p)
			continue; /* no DST on this piece */
		*p++ = 0;
		if (!*src)
			continue;
		for (dst = p; *dst && sp((unsigned char)*dst); dst++)
			;
		for (p = dst; *p && !sp((unsigned char)*p); p++)
			;
		*p = 0;
		if (!*dst)
			continue;
		struct subst *nv = realloc(list->v, (list->n + 1) * sizeof(*nv));
		if (!nv)
			return ENOMEM;
		list->v = nv;
		struct subst *s = &list->v[list->n];
		s->src = strdup(src);
		s->dst = strdup(dst);
		if (!s->src || !s->dst) {
			free(s->src);
			free(s->dst);
			return ENOMEM;
		}
		s->slen = strlen(src);
		s->dlen = strlen(dst);
		list->n++;
	}
	return 0;
}
