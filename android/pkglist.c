/*
 * packages.list, as Android 14's libpackagelistparser reads it: per line
 * sscanf("%ms %lu %d %ms %ms %ms %d %ld") and at least six fields. Android stops reading at the
 * first line it cannot parse (and a line of fewer than six fields, a blank line included, reads an
 * uninitialized pointer); we refuse the file and name the line. Where Android is loose about a
 * number (a sign, text after the digits that shifts the fields) we want the plain number.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define PKG_NFIELDS 6

struct pkg_list {
	char *buf;		   /* the copy the entries point into */
	struct pkg_entry *entries; /* in file order, repeated names included */
	size_t nentries;
	uint32_t *slots; /* open addressing: entry index + 1, 0 = empty */
	size_t mask;
	size_t distinct;
};

struct field {
	char *p;
	size_t n;
};

static uint64_t hash_name(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

static bool all_digits(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* Decimal digits only, at most max. */
static bool parse_num(const char *s, size_t n, unsigned long long max, unsigned long long *out)
{
	unsigned long long v = 0;

	if (!all_digits(s, n))
		return false;
	for (size_t i = 0; i < n; i++) {
		v = v * 10 + (unsigned)(s[i] - '0');
		if (v > max)
			return false;
	}
	*out = v;
	return true;
}

/* %d: an int, with an optional sign. */
static bool parse_int(const char *s, size_t n, int *out)
{
	unsigned long long v;
	bool neg = n && s[0] == '-';

	if (n && (s[0] == '-' || s[0] == '+')) {
		s++;
		n--;
	}
	if (!parse_num(s, n, neg ? (unsigned long long)INT_MAX + 1 : INT_MAX, &v))
		return false;
	*out = neg ? (int)(0 - v) : (int)v;
	return true;
}

/* strtoul(p, &end, 10) as parse_gids uses it (no leading space can occur inside a field). */
static const char *gid_strtoul(const char *p, const char *end, unsigned long long *v)
{
	const char *s = p;
	bool neg = false, over = false;

	*v = 0;
	if (s < end && (*s == '+' || *s == '-'))
		neg = *s++ == '-';
	if (s == end || *s < '0' || *s > '9')
		return p; /* no digits: no conversion, value 0 */
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (*v > (ULLONG_MAX - (unsigned)(*s - '0')) / 10)
			over = true;
		else
			*v = *v * 10 + (unsigned)(*s - '0');
	}
	if (over)
		*v = ULLONG_MAX;
	else if (neg)
		*v = 0 - *v;
	return s;
}

/* parse_gids: "none", or numbers <= GID_MAX separated by ','; an empty piece reads as 0. */
static bool gids_ok(const char *s, size_t n)
{
	const char *end = s + n;

	if (n == 4 && memcmp(s, "none", 4) == 0)
		return true;
	for (;;) {
		unsigned long long gid;
		const char *e = gid_strtoul(s, end, &gid);
		if (gid > UINT32_MAX)
			return false;
		if (e == end)
			return true;
		if (*e != ',')
			return false;
		s = e + 1;
	}
}

static size_t split_fields(char *s, size_t n, struct field *f)
{
	size_t nf = 0, i = 0;

	while (nf < PKG_NFIELDS) {
		while (i < n && c_isspace((unsigned char)s[i]))
			i++;
		if (i == n)
			break;
		f[nf].p = s + i;
		while (i < n && !c_isspace((unsigned char)s[i]))
			i++;
		f[nf].n = (size_t)(s + i - f[nf].p);
		nf++;
	}
	return nf;
}

static int bad(struct seapp_error *err, const char *name, unsigned line, const char *what,
	       const struct field *f)
{
	seapp_seterr(err, name, line, "%s '%.*s'", what, (int)(f->n > 100 ? 100 : f->n), f->p);
	return EINVAL;
}

static int parse_line(char *s, size_t n, const char *name, unsigned line, struct pkg_entry *e,
		      struct seapp_error *err)
{
	struct field f[PKG_NFIELDS] = { { 0 } };
	size_t nf;
	unsigned long long uid;
	int dbg;

	if (memchr(s, 0, n)) {
		seapp_seterr(err, name, line, "NUL byte in line");
		return EINVAL;
	}
	nf = split_fields(s, n, f);
	if (nf == 0) {
		seapp_seterr(err, name, line,
			     "blank line (Android's parser has undefined behaviour)");
		return EINVAL;
	}
	if (nf < PKG_NFIELDS) {
		seapp_seterr(err, name, line, "%zu fields, want at least 6 (name uid debuggable "
			     "data-dir seinfo gids)", nf);
		return EINVAL;
	}
	if (!parse_num(f[1].p, f[1].n, UINT32_MAX, &uid))
		return bad(err, name, line, "uid is not a number up to 4294967295:", &f[1]);
	if (!parse_int(f[2].p, f[2].n, &dbg))
		return bad(err, name, line, "debuggable is not a number:", &f[2]);
	if (!gids_ok(f[5].p, f[5].n))
		return bad(err, name, line, "gids are not 'none' or ','-separated numbers:", &f[5]);
	/* Each field ends at whitespace or at the end of the line: room for its NUL. */
	for (int i = 0; i < 5; i++)
		f[i].p[f[i].n] = 0;
	*e = (struct pkg_entry){ .name = f[0].p,
				 .name_len = f[0].n,
				 .uid = (uint32_t)uid,
				 .debuggable = dbg != 0,
				 .data_dir = f[3].p,
				 .seinfo = f[4].p,
				 .line = line };
	return 0;
}

/* Later lines replace earlier ones of the same name: on the device the last one wins. */
static void index_entry(struct pkg_list *l, uint32_t idx)
{
	const struct pkg_entry *e = &l->entries[idx];
	size_t i = hash_name(e->name, e->name_len) & l->mask;

	for (; l->slots[i]; i = (i + 1) & l->mask) {
		const struct pkg_entry *o = &l->entries[l->slots[i] - 1];
		if (o->name_len == e->name_len && memcmp(o->name, e->name, e->name_len) == 0)
			break;
	}
	if (!l->slots[i])
		l->distinct++;
	l->slots[i] = idx + 1;
}

static int build_index(struct pkg_list *l)
{
	size_t size = 16;

	while (size < 2 * l->nentries)
		size *= 2;
	l->slots = calloc(size, sizeof(*l->slots));
	if (!l->slots)
		return ENOMEM;
	l->mask = size - 1;
	for (size_t i = 0; i < l->nentries; i++)
		index_entry(l, (uint32_t)i);
	return 0;
}

static int push_entry(struct pkg_list *l, size_t *cap, const struct pkg_entry *e)
{
	if (l->nentries == *cap) {
		size_t ncap = *cap ? 2 * *cap : 256;
		struct pkg_entry *nv = realloc(l->entries, ncap * sizeof(*nv));
		if (!nv)
			return ENOMEM;
		l->entries = nv;
		*cap = ncap;
	}
	l->entries[l->nentries++] = *e;
	return 0;
}

static int parse_all(struct pkg_list *l, const char *name, size_t len, struct seapp_error *err)
{
	size_t cap = 0;
	unsigned line = 0;
	int rc;

	for (size_t off = 0; off < len;) {
		char *s = l->buf + off;
		char *nl = memchr(s, '\n', len - off);
		size_t n = nl ? (size_t)(nl - s) : len - off;
		struct pkg_entry e;

		if (++line == 0 || l->nentries >= UINT32_MAX - 1) {
			seapp_seterr(err, name, 0, "too many lines");
			return EFBIG;
		}
		rc = parse_line(s, n, name, line, &e, err);
		if (!rc)
			rc = push_entry(l, &cap, &e);
		if (rc)
			return rc;
		off += n + 1;
	}
	return build_index(l);
}

void pkglist_free(pkg_list *list)
{
	if (!list)
		return;
	free(list->buf);
	free(list->entries);
	free(list->slots);
	free(list);
}

/* Takes buf (len bytes and a NUL), even on failure. */
static int parse_owned(pkg_list **out, const char *name, char *buf, size_t len,
		       struct seapp_error *err)
{
	struct pkg_list *l = calloc(1, sizeof(*l));
	int rc;

	if (!l) {
		free(buf);
		seapp_seterr(err, name, 0, "out of memory");
		return ENOMEM;
	}
	l->buf = buf;
	rc = parse_all(l, name, len, err);
	if (rc) {
		if (rc == ENOMEM)
			seapp_seterr(err, name, 0, "out of memory");
		pkglist_free(l);
		return rc;
	}
	*out = l;
	return 0;
}

int pkglist_parse(pkg_list **out, const char *name, const char *buf, size_t len,
		  struct seapp_error *err)
{
	char *copy = malloc(len + 1);

	if (!copy) {
		seapp_seterr(err, name, 0, "out of memory");
		return ENOMEM;
	}
	if (len)
		memcpy(copy, buf, len);
	copy[len] = 0;
	return parse_owned(out, name, copy, len, err);
}

int pkglist_load(pkg_list **out, const char *path, struct seapp_error *err)
{
	char *buf;
	size_t len;
	int rc = seapp_slurp(path, &buf, &len, err);

	return rc ? rc : parse_owned(out, path, buf, len, err);
}

const struct pkg_entry *pkglist_find(const pkg_list *l, const char *name, size_t len)
{
	for (size_t i = hash_name(name, len) & l->mask; l->slots[i]; i = (i + 1) & l->mask) {
		const struct pkg_entry *e = &l->entries[l->slots[i] - 1];
		if (e->name_len == len && memcmp(e->name, name, len) == 0)
			return e;
	}
	return NULL;
}

size_t pkglist_count(const pkg_list *list)
{
	return list->distinct;
}
