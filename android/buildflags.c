/*
 * A partition's etc/build_flags.json: the values of the build flags (RELEASE_...) the build was
 * made with, which AOSP's build installs in system, system_ext, product and vendor since Android
 * 14. Android 14's make writes {"flags": [{"name": N, "value": "true", "set": ..., ...}, ...]};
 * the release-config tool of Android 15 writes each flag as Go's encoding/json writes its
 * FlagArtifact, {"flag_declaration": {"name": N, ..., "value": {the default}}, "value": {"Val":
 * {"BoolValue": true}}, "traces": [...]}. Only what tells one flag's value is read: a small
 * scanner, not a JSON library (nesting is bounded, strings are compared as they are written).
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

#define MAX_DEPTH 32

struct json {
	const char *p, *end;
	bool bad;
};

static void ws(struct json *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static bool eat(struct json *j, char ch)
{
	ws(j);
	if (j->p < j->end && *j->p == ch) {
		j->p++;
		return true;
	}
	return false;
}

static bool peek(struct json *j, char ch)
{
	ws(j);
	return j->p < j->end && *j->p == ch;
}

/* A string: its bytes as written (escapes not decoded) in *s, *n. */
static bool string(struct json *j, const char **s, size_t *n)
{
	if (!eat(j, '"'))
		return !(j->bad = true);
	const char *start = j->p;
	while (j->p < j->end && *j->p != '"') {
		if (*j->p == '\\' && j->p + 1 < j->end)
			j->p++;
		j->p++;
	}
	if (j->p >= j->end)
		return !(j->bad = true);
	*s = start;
	*n = (size_t)(j->p - start);
	j->p++;
	return true;
}

static bool literal(struct json *j, const char *lit)
{
	size_t n = strlen(lit);
	ws(j);
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n))
		return false;
	j->p += n;
	return true;
}

static void skip(struct json *j, int depth);

/* Calls each(j, key, keylen, arg) at each member's value, which each must consume (or skip). */
static void members(struct json *j, int depth,
		    void (*each)(struct json *, const char *, size_t, void *, int), void *arg)
{
	if (!eat(j, '{') || depth > MAX_DEPTH) {
		j->bad = true;
		return;
	}
	if (eat(j, '}'))
		return;
	do {
		const char *k;
		size_t kn;
		if (!string(j, &k, &kn) || !eat(j, ':')) {
			j->bad = true;
			return;
		}
		each(j, k, kn, arg, depth + 1);
		if (j->bad)
			return;
	} while (eat(j, ','));
	if (!eat(j, '}'))
		j->bad = true;
}

static void skip_member(struct json *j, const char *k, size_t kn, void *arg, int depth)
{
	(void)k;
	(void)kn;
	(void)arg;
	skip(j, depth);
}

static void skip(struct json *j, int depth)
{
	const char *s;
	size_t n;

	if (depth > MAX_DEPTH) {
		j->bad = true;
		return;
	}
	if (peek(j, '{')) {
		members(j, depth, skip_member, NULL);
	} else if (eat(j, '[')) {
		if (eat(j, ']'))
			return;
		do
			skip(j, depth + 1);
		while (!j->bad && eat(j, ','));
		if (!j->bad && !eat(j, ']'))
			j->bad = true;
	} else if (peek(j, '"')) {
		string(j, &s, &n);
	} else if (!literal(j, "true") && !literal(j, "false") && !literal(j, "null")) {
		/* a number */
		const char *start = j->p;
		while (j->p < j->end && strchr("+-0123456789.eE", *j->p))
			j->p++;
		if (j->p == start)
			j->bad = true;
	}
}

static bool is(const char *k, size_t kn, const char *lit)
{
	return kn == strlen(lit) && !memcmp(k, lit, kn);
}

/* One flag: its name and, when its value is a boolean one, the value. */
struct flag {
	const char *name;
	size_t name_len;
	int value; /* -1 not seen, 0, 1 */
};

static void decl_member(struct json *j, const char *k, size_t kn, void *arg, int depth)
{
	struct flag *f = arg;
	if (is(k, kn, "name") && peek(j, '"'))
		string(j, &f->name, &f->name_len);
	else
		skip(j, depth);
}

/* {"Val": {"BoolValue": B}}: inner is true inside "Val" */
static void val_member(struct json *j, const char *k, size_t kn, void *arg, int depth)
{
	struct flag *f = arg;
	if (is(k, kn, "Val") && peek(j, '{'))
		members(j, depth, val_member, f);
	else if (is(k, kn, "BoolValue") && literal(j, "true"))
		f->value = 1;
	else if (is(k, kn, "BoolValue") && literal(j, "false"))
		f->value = 0;
	else
		skip(j, depth);
}

static void flag_member(struct json *j, const char *k, size_t kn, void *arg, int depth)
{
	struct flag *f = arg;
	const char *s;
	size_t n;

	if (is(k, kn, "name") && peek(j, '"')) {
		string(j, &f->name, &f->name_len);
	} else if (is(k, kn, "flag_declaration") && peek(j, '{')) {
		members(j, depth, decl_member, f);
	} else if (is(k, kn, "value") && peek(j, '"')) {
		/* make's summary: the flag's make value, "true" or "" */
		if (string(j, &s, &n))
			f->value = is(s, n, "true");
	} else if (is(k, kn, "value") && peek(j, '{')) {
		f->value = 0; /* a value with no BoolValue: not set, false */
		members(j, depth, val_member, f);
	} else if (is(k, kn, "value") && literal(j, "true")) {
		f->value = 1;
	} else if (is(k, kn, "value") && literal(j, "false")) {
		f->value = 0;
	} else {
		skip(j, depth);
	}
}

struct want {
	const char *name;
	int value; /* -1: not listed */
};

static void top_member(struct json *j, const char *k, size_t kn, void *arg, int depth)
{
	struct want *w = arg;
	if (!is(k, kn, "flags") || !peek(j, '[')) {
		skip(j, depth);
		return;
	}
	eat(j, '[');
	if (eat(j, ']'))
		return;
	do {
		struct flag f = { NULL, 0, -1 };
		members(j, depth + 1, flag_member, &f);
		if (!j->bad && f.name && is(f.name, f.name_len, w->name) && f.value >= 0)
			w->value = f.value;
	} while (!j->bad && eat(j, ','));
	if (!j->bad && !eat(j, ']'))
		j->bad = true;
}

int seapp_build_flag(const char *json, size_t len, const char *name, bool *value)
{
	struct json j = { json, json + len, false };
	struct want w = { name, -1 };

	members(&j, 0, top_member, &w);
	ws(&j);
	if (j.bad || j.p != j.end)
		return EINVAL;
	if (w.value < 0)
		return ENOENT;
	*value = w.value == 1;
	return 0;
}
