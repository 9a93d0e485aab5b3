/*
 * Reading file_contexts and substitution files the way libselinux 3.4 does (label_file.h
 * process_line, label_support.c read_spec_entries, label_file.c selabel_subs_init), but refusing
 * with a file:line reason what it would only trip over later (NUL bytes, giant lines).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

#define FC_MAX_LINE (1u << 20)

/* C-locale isspace, as libselinux's isspace() sees ASCII. */
static bool sp(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
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

/* Where a field's scan stops: 1 at the end or a space (sp), 2 at a byte refused. One lookup a
 * byte: the fields are most of a policy's bytes, read at every load. */
static const unsigned char field_stop[256] = {
	[0] = 1, [' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\v'] = 1, ['\f'] = 1, ['\r'] = 1,
	[0x80 ... 0xff] = 2,
};

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
		while (!field_stop[(unsigned char)*p])
			p++;
		if (field_stop[(unsigned char)*p] == 2) {
			fc_seterr(err, path, lineno, (unsigned)(p - line) + 1, "non-ASCII byte 0x%02x",
				  (unsigned char)*p);
			return EINVAL;
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
	struct spec s = fc_blank_spec;
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

/* Text file_contexts in buf (owned by the set, NUL-terminated at len), file fileno_. */
int fc_parse_text(struct fc_set *set, unsigned fileno_, char *buf, size_t len,
		  struct fc_error *err)
{
	const char *path = set->names[fileno_];
	unsigned lineno = 0;
	size_t lines = 1;
	int rc;

	/* at most a spec per line: room for them at once */
	for (const char *c = buf; (c = memchr(c, '\n', (size_t)(buf + len - c))); c++)
		lines++;
	if ((rc = fc_reserve(set, lines)))
		return rc;
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
		rc = parse_line(set, path, fileno_, line, lineno, err);
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
	int rc = fc_read_file(set, path, optional, &buf, &len, NULL, err);

	if (rc)
		return rc;
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
