/*
 * fuzz_seapp: the android library (android.h): seapp_contexts and packages.list parsers, the TYPE
 * lookup, app data paths, the label made from an answer, and the device's walks of a path.
 *
 * Input: sections separated by ff fe (fuzzutil.c):
 *   0 a platform seapp_contexts   1 a vendor one (absent: none)   2 packages.list
 *   3 queries, one a line: "PATH" (an app data path), or "@UID SEINFO NAME" (a direct lookup)
 *   4 a file_contexts context the answers are applied to
 *
 * Besides memory errors it aborts when the library contradicts itself:
 *  - a failed load must say why, and name a line of a file that was given;
 *  - a lookup that fails must say why; one that answers must answer the same twice;
 *  - seapp_path_classify must give a package inside the path, ending at pkgdir_len;
 *  - seapp_apply's label must keep the context's user and role, and carry the answer's type;
 *  - a device's walk must be asked a digest only of a directory it reaches, label only what a
 *    walk reaches, and hand nothing down but ANDROID_WALK_NONE below it;
 *  - every rule, in precedence order, must name its file, line and text.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "android.h"
#include "fuzzutil.c"

#define FZ_MAX_INPUT (64 * 1024)
#define MAX_QUERIES 32

static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_seapp: %s (%s)\n", what, detail ? detail : "");
	abort();
}

static void check_answer(const struct seapp_answer *a, const char *ctx)
{
	char out[1024];
	int rc = seapp_apply(ctx, a, out, sizeof(out));
	if (rc || !a->found)
		return;
	/* user and role stay; the type is the answer's */
	const char *c1 = strchr(ctx, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (!c2 || strncmp(out, ctx, (size_t)(c2 - ctx + 1)))
		fail("seapp_apply changed the user or role", out);
	size_t tl = strlen(a->type);
	if (strncmp(out + (c2 - ctx) + 1, a->type, tl) ||
	    (out[(c2 - ctx) + 1 + tl] != ':' && out[(c2 - ctx) + 1 + tl]))
		fail("seapp_apply's type is not the answer's", out);
}

static bool digest_says(void *arg)
{
	unsigned *asked = arg;
	return ++*asked & 1;
}

/* The device's walks at q, reached by each of a few hand-downs. */
static void walk_path(const pkg_list *l, const char *q, size_t len)
{
	static const unsigned froms[] = { 0, ANDROID_WALK_INIT, ANDROID_WALK_VOLD,
					  ANDROID_WALK_INIT | ANDROID_WALK_VOLD, ANDROID_WALK_PASS,
					  ANDROID_WALK_SANDBOX, ANDROID_WALK_TREE, ANDROID_WALK_NONE };
	struct android_digests dg;
	android_walk_digests(q, len, true, 0, &dg);
	android_walk_digests(q, len, false, SEAPP_BUILD_DATA_DATA_IGNORE, &dg);
	for (size_t i = 0; i < sizeof(froms) / sizeof(froms[0]) * 2 + 2; i++) {
		unsigned asked = 0;
		struct android_walk w;
		struct android_walk_at at = { .path = q, .len = len, .is_dir = i & 1,
					      .root = i >= 2 * 8, .from = froms[(i / 2) % 8],
					      .pkgs = l, .digest_matches = digest_says, .arg = &asked };
		android_walk_visit(&at, &w);
		if (asked != w.digest || (w.digest && !at.is_dir) || (w.matched && !w.digest))
			fail("android_walk_visit: a digest asked where none is compared", q);
		if ((w.labels && (!w.reach || (w.reach & ANDROID_WALK_NONE))) ||
		    ((at.from & ANDROID_WALK_NONE) && !at.root && w.reach != ANDROID_WALK_NONE))
			fail("android_walk_visit: labeled where no walk reaches", q);
		unsigned b0 = android_walk_below(&w, q, len, false);
		unsigned b1 = android_walk_below(&w, q, len, true);
		if ((w.reach & ANDROID_WALK_NONE) && (b0 != ANDROID_WALK_NONE || b1 != b0))
			fail("android_walk_below: a walk goes on below none", q);
	}
}

static void query_path(const seapp_set *s, const pkg_list *l, const char *q, const char *ctx)
{
	struct seapp_path sp;
	size_t len = strlen(q);
	seapp_path_classify(q, len, &sp);
	(void)seapp_init_walk(q, len, true, 0);
	(void)seapp_init_walk(q, len, true, SEAPP_BUILD_DATA_DATA_IGNORE);
	(void)seapp_vold_walk(q, len, true);
	(void)seapp_init_walk(q, len, false, 0);
	walk_path(l, q, len);
	if (!sp.has_pkg)
		return;
	if (sp.pkg < q || sp.pkg + sp.pkg_len > q + len || sp.pkg + sp.pkg_len != q + sp.pkgdir_len ||
	    !sp.pkg_len || sp.user > 1000)
		fail("seapp_path_classify: the package is not where it says", q);
	const struct pkg_entry *e = pkglist_find(l, sp.pkg, sp.pkg_len);
	if (!e)
		return;
	struct seapp_answer a, b;
	int rc = seapp_lookup_pkg(s, e, sp.user, &a);
	if (rc && !a.why)
		fail("a failed lookup says nothing", q);
	if (!rc) {
		if (seapp_lookup_pkg(s, e, sp.user, &b) || !seapp_answer_equal(&a, &b))
			fail("two lookups disagree", q);
		check_answer(&a, ctx);
	}
}

static void query_direct(const seapp_set *s, char *q, const char *ctx)
{
	char *sp1 = strchr(q, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp2)
		return;
	*sp1 = *sp2 = 0;
	uint32_t uid = (uint32_t)strtoul(q + 1, NULL, 10);
	const char *seinfo = strcmp(sp1 + 1, "-") ? sp1 + 1 : NULL, *name = sp2 + 1;
	struct seapp_answer a;
	int rc = seapp_lookup_type(s, uid, seinfo, name, strlen(name), &a);
	if (rc && !a.why)
		fail("a failed lookup says nothing", name);
	if (!rc)
		check_answer(&a, ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_section sec[5] = { 0 };
	struct seapp_error err;
	seapp_set *s = NULL;
	pkg_list *l = NULL;

	if (size > FZ_MAX_INPUT)
		return 0;
	bool flag;
	/* the whole input as a build_flags.json (the scanner must stay within it) */
	(void)seapp_build_flag((const char *)data, size, "RELEASE_SELINUX_DATA_DATA_IGNORE", &flag);
	size_t n = fz_split(data, size, sec, 5);
	struct seapp_buf bufs[2] = {
		{ "plat_seapp_contexts", (const char *)sec[0].p, sec[0].n },
		{ "vendor_seapp_contexts", (const char *)sec[1].p, sec[1].n },
	};
	memset(&err, 0, sizeof(err));
	if (seapp_parse(&s, bufs, n > 1 ? 2 : 1, &err)) {
		if (!err.msg[0] || (strcmp(err.file, "plat_seapp_contexts") &&
				    strcmp(err.file, "vendor_seapp_contexts")))
			fail("a refused seapp_contexts names no file or reason", err.msg);
		return 0;
	}
	memset(&err, 0, sizeof(err));
	if (n > 2 && pkglist_parse(&l, "packages.list", (const char *)sec[2].p, sec[2].n, &err)) {
		if (!err.msg[0] || !err.line)
			fail("a refused packages.list names no line or reason", err.msg);
		seapp_free(s);
		return 0;
	}
	if (!l && pkglist_parse(&l, "packages.list", "", 0, &err))
		fail("an empty packages.list is refused", err.msg);
	char *block, *ctxblock = NULL, *q[MAX_QUERIES], *cv[1];
	const char *ctx = "u:object_r:system_data_file:s0";
	if (n > 4 && fz_lines(&sec[4], &ctxblock, cv, 1, 256) == 1)
		ctx = cv[0];
	size_t nq = n > 3 ? fz_lines(&sec[3], &block, q, MAX_QUERIES, 4096) : 0;
	for (size_t i = 0; i < nq; i++) {
		if (q[i][0] == '@')
			query_direct(s, q[i], ctx);
		else
			query_path(s, l, q[i], ctx);
	}
	if (n > 3)
		free(block);
	free(ctxblock);
	/* the rules in precedence order can be listed */
	for (size_t i = 0; i < seapp_count(s); i++) {
		struct seapp_where w;
		seapp_rule_at(s, i, &w);
		if (!w.file || !w.text || !w.line)
			fail("a rule without its origin", NULL);
	}
	seapp_free(s);
	pkglist_free(l);
	return 0;
}
