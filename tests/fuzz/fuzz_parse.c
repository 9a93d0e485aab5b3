/*
 * fuzz_parse: the file_contexts parser and everything a loaded set answers (fcontexts.h).
 *
 * Input: one flags byte, then sections separated by the bytes ff fe (fuzzutil.c):
 *   0 FILE   1 FILE.homedirs   2 FILE.local   3 FILE.subs (or the explicit subs file)
 *   4 FILE.subs_dist (or the explicit one)   5 a second policy G   6 query paths, one a line
 * A section that is absent is a file that does not exist. Flags: 1 FC_BASE_ONLY, 2 FC_NO_DUPS,
 * 4 FC_NO_SUBS, 8 sections 3 and 4 given through fc_load_opts instead of by name, 16 load FILE
 * and G as one concatenation, 32 G has FILE's substitution files too.
 *
 * Besides memory errors it aborts when the library contradicts itself:
 *  - a failed load must say why (fc_error.msg);
 *  - fc_lookup must answer with the first spec fc_explain lists (the index against the plain
 *    walk in libselinux 3.4's order);
 *  - the deciding spec's fc_spec_prefix must start the key (without substitutions);
 *  - fc_diff_reaches(FILE -> G, DIR) == 0 must mean that no path below DIR gets another label;
 *  - FILE loaded FC_COMPARE_ONLY (as relabel loads its old policy) must diff with G as the
 *    indexed load does: the same changes, the same fc_diff_reaches answers, and lookups on it
 *    refused (EINVAL).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fcontexts.h"
#include "fuzzutil.c"

#define FZ_MAX_INPUT (64 * 1024)
#define MAX_QUERIES 24

static const mode_t modes[] = { 0, S_IFREG, S_IFDIR, S_IFLNK, S_IFCHR, S_IFBLK, S_IFIFO, S_IFSOCK,
				0170000 };
#define NMODES (sizeof(modes) / sizeof(modes[0]))

static void fail(const char *what, const char *path, mode_t mode)
{
	fprintf(stderr, "fuzz_parse: %s (path '%s', mode 0%o)\n", what, path, (unsigned)mode);
	abort();
}

/* 3.4's key without substitutions: runs of '/' as one, one trailing '/' dropped. */
static size_t clean_key(const char *p, char *out)
{
	size_t n = 0;
	for (size_t i = 0; p[i]; i++) {
		if (p[i] == '/' && n && out[n - 1] == '/')
			continue;
		out[n++] = p[i];
	}
	if (n > 1 && out[n - 1] == '/')
		n--;
	out[n] = 0;
	return n;
}

struct explained {
	const struct fc_spec *first;
	size_t n;
	const fc_set *set;
	const char *key; /* NULL: substitutions may apply, do not check prefixes */
	size_t keylen;
	bool bad_prefix;
};

static int on_spec(const struct fc_spec *spec, void *arg)
{
	struct explained *e = arg;
	if (!e->first)
		e->first = spec;
	e->n++;
	if (e->key) {
		size_t plen;
		const char *p = fc_spec_prefix(e->set, spec, &plen);
		if (!p || plen > e->keylen || memcmp(p, e->key, plen))
			e->bad_prefix = true;
	}
	return e->n >= 64; /* enough */
}

/* The label a lookup gives, "" for none; NULL when the lookup failed. */
static const char *answer(const fc_set *set, const char *path, mode_t mode, int *rcp)
{
	struct fc_result res;
	int rc = fc_lookup(set, path, mode, &res);
	*rcp = rc;
	if (rc)
		return NULL;
	return res.status == FC_LABEL ? res.context : "";
}

static void check_lookup(const fc_set *set, const char *path, mode_t mode, bool subs)
{
	struct fc_result res;
	int rc = fc_lookup(set, path, mode, &res);
	char *key = malloc(strlen(path) + 1);
	size_t klen;

	if (!key)
		abort();
	klen = clean_key(path, key);
	if (!*path) {
		if (rc != EINVAL)
			fail("an empty path must be EINVAL", path, mode);
		free(key);
		return;
	}
	if (rc == EIO) {
		free(key);
		return; /* PCRE2 gave up (match limit): libselinux 3.4 answers no label too */
	}
	if (rc)
		fail("fc_lookup failed", path, mode);
	if ((res.status == FC_NOMATCH) != !res.spec ||
	    (res.status == FC_LABEL) != (res.context != NULL))
		fail("inconsistent fc_result", path, mode);
	if (res.spec && res.status == FC_LABEL && strcmp(res.context, res.spec->context))
		fail("fc_result.context is not the spec's", path, mode);

	struct explained e = { .set = set, .key = subs ? NULL : key, .keylen = klen };
	rc = fc_explain(set, path, mode, on_spec, &e);
	if (rc == EIO) {
		free(key);
		return;
	}
	if (rc)
		fail("fc_explain failed", path, mode);
	if (e.first != res.spec) {
		fprintf(stderr, "fuzz_parse: fc_lookup decided by %s:%u '%s', fc_explain's first is "
			"%s:%u '%s'\n", res.spec ? res.spec->file : "-", res.spec ? res.spec->line : 0,
			res.spec ? res.spec->regex : "(none)", e.first ? e.first->file : "-",
			e.first ? e.first->line : 0, e.first ? e.first->regex : "(none)");
		fail("fc_lookup and fc_explain disagree", path, mode);
	}
	if (e.bad_prefix)
		fail("a matching spec's fc_spec_prefix does not start the key", path, mode);
	free(key);
}

/* fc_diff_reaches(d, DIR) == 0 for an ancestor DIR of path: both sets label path alike. */
/* FILE loaded again FC_COMPARE_ONLY (opts and files as for the indexed load), diffed with gset:
 * as d (the indexed load's diff) in every answer. */
static void check_compare_only(const struct fc_diff *d, const char *const *files, size_t nfiles,
			       const struct fc_load_opts *opts, const fc_set *gset,
			       const char *const *queries, size_t nq)
{
	struct fc_load_opts copts = *opts;
	struct fc_error err;
	struct fc_result res;
	fc_set *cset = NULL;
	struct fc_diff *cd = NULL;

	copts.flags |= FC_COMPARE_ONLY;
	int rc = fc_load_opts(&cset, files, nfiles, &copts, &err);
	if (rc == ENOMEM)
		return;
	if (rc)
		fail("a compare-only load failed where the indexed one did not", err.msg, 0);
	if (fc_lookup(cset, "/", 0, &res) != EINVAL)
		fail("fc_lookup on a compare-only set did not answer EINVAL", "", 0);
	rc = fc_diff(cset, gset, &cd, &err);
	if (rc == ENOMEM) {
		fc_free(cset);
		return;
	}
	if (rc)
		fail("fc_diff of a compare-only set failed where the indexed one's did not", err.msg, 0);
	if (fc_diff_count(cd) != fc_diff_count(d) || fc_diff_everything(cd) != fc_diff_everything(d))
		fail("a compare-only set's diff counts other changes", "", 0);
	for (size_t i = 0; i < fc_diff_count(d); i++)
		if (fc_diff_at(cd, i)->kind != fc_diff_at(d, i)->kind)
			fail("a compare-only set's diff names another change", "", 0);
	for (size_t i = 0; i < nq; i++) {
		char *key = malloc(strlen(queries[i]) + 2);
		if (!key)
			abort();
		size_t klen = clean_key(queries[i], key);
		/* each directory above the key, "/" first, as check_reach asks */
		for (size_t k = 1; key[0] == '/' && k < klen; k++) {
			if (k > 1 && key[k] != '/')
				continue;
			size_t dl = k == 1 ? 1 : k;
			char save = key[dl];
			key[dl] = 0;
			if (fc_diff_reaches(cd, key) != fc_diff_reaches(d, key))
				fail("fc_diff_reaches differs for a compare-only set", key, 0);
			key[dl] = save;
		}
		free(key);
	}
	fc_diff_free(cd);
	fc_free(cset);
}

static void check_reach(const struct fc_diff *d, const fc_set *a, const fc_set *b,
		       const char *path)
{
	char *key = malloc(strlen(path) + 2), *dir;
	size_t klen;

	if (!key)
		abort();
	klen = clean_key(path, key);
	if (key[0] != '/' || klen < 2 || !(dir = malloc(klen + 1))) {
		free(key);
		return;
	}
	for (size_t i = 1; i <= klen; i++) {
		if (i < klen && key[i] != '/')
			continue;
		if (i == klen)
			break; /* the path itself is not below itself */
		/* DIR: "/" for i == 1 ... the parent of the key */
		size_t dl = i == 1 ? 1 : i;
		memcpy(dir, key, dl);
		dir[dl] = 0;
		int r = fc_diff_reaches(d, dir);
		if (r != 0 && r != 1)
			fail("fc_diff_reaches returned neither 0 nor 1", dir, 0);
		if (fc_diff_everything(d) && r != 1)
			fail("fc_diff_everything but fc_diff_reaches == 0", dir, 0);
		if (fc_diff_reaches_all(d) && r != 1)
			fail("fc_diff_reaches_all but fc_diff_reaches == 0", dir, 0);
		if (r)
			continue;
		for (size_t m = 0; m < NMODES; m++) {
			int ra, rb;
			const char *la = answer(a, key, modes[m], &ra), *lb = answer(b, key, modes[m], &rb);
			if (!la || !lb)
				continue;
			if (strcmp(la, lb)) {
				fprintf(stderr, "fuzz_parse: below '%s' (not reached): '%s' is '%s' in the "
					"old set, '%s' in the new one\n", dir, key, la, lb);
				fail("fc_diff_reaches missed a change", key, modes[m]);
			}
		}
	}
	free(dir);
	free(key);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_section sec[7];
	char fpath[512], gpath[512], s1[512], s2[512], *qblock = NULL;
	char *qv[MAX_QUERIES * 2];
	const char *queries[MAX_QUERIES * 2 + 8];
	size_t nq = 0;
	unsigned flags;
	fc_set *set = NULL, *gset = NULL;
	struct fc_error err;
	int rc;

	if (size < 1 || size > FZ_MAX_INPUT)
		return 0;
	flags = data[0];
	size_t n = fz_split(data + 1, size - 1, sec, 7);

	fz_path(fpath, sizeof(fpath), "fc");
	fz_path(gpath, sizeof(gpath), "g");
	fz_put("fc", &sec[0], true);
	fz_put("fc.homedirs", &sec[1], n > 1);
	fz_put("fc.local", &sec[2], n > 2);
	bool explicit_subs = flags & 8;
	fz_put("fc.subs", &sec[3], n > 3 && !explicit_subs);
	fz_put("fc.subs_dist", &sec[4], n > 4 && !explicit_subs);
	fz_put("s1", &sec[3], n > 3 && explicit_subs);
	fz_put("s2", &sec[4], n > 4 && explicit_subs);
	fz_put("g", &sec[5], n > 5);
	bool gsubs = (flags & 32) && !explicit_subs;
	fz_put("g.subs", &sec[3], n > 3 && gsubs);
	fz_put("g.subs_dist", &sec[4], n > 4 && gsubs);

	struct fc_load_opts opts = { .flags = flags & (FC_BASE_ONLY | FC_NO_DUPS | FC_NO_SUBS) };
	if (explicit_subs) {
		opts.subs = n > 3 ? fz_path(s1, sizeof(s1), "s1") : NULL;
		opts.subs_dist = n > 4 ? fz_path(s2, sizeof(s2), "s2") : NULL;
	}
	bool multi = (flags & 16) && n > 5;
	const char *files[2] = { fpath, gpath };
	rc = fc_load_opts(&set, files, multi ? 2 : 1, &opts, &err);
	if (rc) {
		if (!err.msg[0])
			fail("fc_load failed without saying why", "", 0);
		if (err.line && !err.file[0])
			fail("fc_load names a line but no file", err.msg, 0);
		return 0;
	}

	/* every spec, and the prefix each one requires */
	size_t count = fc_count(set);
	for (size_t i = 0; i < count; i++) {
		const struct fc_spec *s = fc_spec_at(set, i);
		size_t plen;
		if (!s || s->index != i || !s->regex || !s->context || !s->file || !s->line)
			fail("fc_spec_at gave a bad spec", "", 0);
		const char *p = fc_spec_prefix(set, s, &plen);
		if (p && strlen(p) < plen)
			fail("fc_spec_prefix length beyond its string", s->regex, 0);
	}
	if (fc_spec_at(set, count))
		fail("fc_spec_at past the end", "", 0);

	/* the queries: the section's lines, and every spec's regex read as a path */
	if (n > 6)
		nq = fz_lines(&sec[6], &qblock, qv, MAX_QUERIES, 4096);
	for (size_t i = 0; i < nq; i++)
		queries[i] = qv[i];
	for (size_t i = 0; i < count && nq < MAX_QUERIES * 2; i++)
		queries[nq++] = fc_spec_at(set, i)->regex;
	queries[nq++] = "/";
	queries[nq++] = "";

	/* substitutions change the key: prefixes are then not checked */
	bool subs = explicit_subs ? (n > 3) : (!(flags & FC_NO_SUBS) && !multi && n > 3);
	for (size_t i = 0; i < nq; i++)
		for (size_t m = 0; m < 3; m++)
			check_lookup(set, queries[i], modes[(i + m * 4) % NMODES], subs);

	/* the second policy, and what changed between them */
	if (n > 5 && !multi) {
		struct fc_load_opts gopts = opts;
		gopts.flags |= FC_BASE_ONLY; /* G's explicit subs are FILE's, if any */
		const char *gfiles[1] = { gpath };
		if (fc_load_opts(&gset, gfiles, 1, &gopts, &err) == 0) {
			struct fc_diff *d = NULL;
			rc = fc_diff(set, gset, &d, NULL);
			if (rc == 0) {
				size_t nc = fc_diff_count(d);
				for (size_t i = 0; i < nc; i++) {
					const struct fc_change *c = fc_diff_at(d, i);
					if (!c || (c->kind == FC_ADDED) != !c->old ||
					    (c->kind == FC_REMOVED) != !c->new)
						fail("fc_diff_at gave a bad change", "", 0);
				}
				if (fc_diff_at(d, nc))
					fail("fc_diff_at past the end", "", 0);
				for (size_t i = 0; i < nq; i++)
					check_reach(d, set, gset, queries[i]);
				check_compare_only(d, files, multi ? 2 : 1, &opts, gset, queries, nq);
				fc_diff_free(d);
			} else if (rc != ENOMEM) {
				fail("fc_diff failed", "", 0);
			}
			fc_free(gset);
		}
	}
	free(qblock);
	fc_free(set);
	return 0;
}
