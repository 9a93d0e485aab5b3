/*
 * --policy: checks that a binary SELinux policy defines every context a file_contexts set gives,
 * as setfiles -c and AOSP's checkfc do, before anything is written. libsepol reads the policy
 * (sepol_policydb_read) and judges each context (sepol_context_check: user, role, type and, on an
 * MLS policy, the level or range, and that they go together).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sepol/context.h>
#include <sepol/context_record.h>
#include <sepol/debug.h>
#include <sepol/handle.h>
#include <sepol/policydb.h>
#include <sepol/policydb/policydb.h>
#include <sepol/user_record.h>
#include <sepol/users.h>

#include "policy.h"

/* libsepol's messages are caught here rather than printed: the first since the last reset,
 * usually the most specific ("type bogus_t is not defined"). */
struct msgs {
	char first[512];
};

static void on_msg(void *arg, sepol_handle_t *h, const char *fmt, ...)
{
	struct msgs *m = arg;
	va_list ap;
	size_t n;

	(void)h;
	if (m->first[0])
		return;
	va_start(ap, fmt);
	vsnprintf(m->first, sizeof(m->first), fmt, ap);
	va_end(ap);
	n = strlen(m->first);
	while (n && (m->first[n - 1] == '\n' || m->first[n - 1] == ' '))
		m->first[--n] = 0;
}

/* Reads the policy; on failure says why, naming the file. */
static int read_policy(const char *cmd, const char *path, sepol_handle_t *h, struct msgs *m,
		       sepol_policydb_t **out)
{
	sepol_policy_file_t *pf = NULL;
	sepol_policydb_t *db = NULL;
	struct stat st;
	FILE *fp;
	int rc = -1;

	fp = fopen(path, "re");
	if (!fp) {
		fprintf(stderr, "fclabel %s: --policy %s: %m\n", cmd, path);
		return -1;
	}
	if (fstat(fileno(fp), &st) == 0 && (S_ISDIR(st.st_mode) || !st.st_size)) {
		fprintf(stderr, "fclabel %s: --policy %s: %s\n", cmd, path,
			S_ISDIR(st.st_mode) ? strerror(EISDIR) : "an empty file, not a binary policy");
		goto out;
	}
	if (sepol_policy_file_create(&pf) || sepol_policydb_create(&db)) {
		fprintf(stderr, "fclabel %s: --policy %s: %s\n", cmd, path, strerror(ENOMEM));
		goto out;
	}
	sepol_policy_file_set_fp(pf, fp);
	sepol_policy_file_set_handle(pf, h);
	m->first[0] = 0;
	if (sepol_policydb_read(db, pf) < 0) {
		fprintf(stderr, "fclabel %s: --policy %s: not a binary SELinux policy libsepol can read "
			"(%s)\n", cmd, path, m->first[0] ? m->first : "truncated or damaged");
		goto out;
	}
	if (db->p.policy_type != POLICY_KERN) {
		fprintf(stderr, "fclabel %s: --policy %s: a policy module, not a kernel policy (give "
			"the policy that semodule, secilc or checkpolicy built)\n", cmd, path);
		goto out;
	}
	*out = db;
	db = NULL;
	rc = 0;
out:
	if (db)
		sepol_policydb_free(db);
	if (pf)
		sepol_policy_file_free(pf);
	fclose(fp);
	return rc;
}

/* One distinct context and libsepol's verdict on it. */
struct verdict {
	const char *context; /* NULL: empty slot */
	char *why;           /* NULL: valid */
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* libsepol only says "invalid security context" when user, role, type and level each exist but
 * do not go together: find which rule fails, in words. */
static void why_not_together(sepol_handle_t *h, const sepol_policydb_t *db, struct msgs *m,
			     const sepol_context_t *con, char *buf, size_t size)
{
	const char *user = sepol_context_get_user(con), *role = sepol_context_get_role(con);
	const char *type = sepol_context_get_type(con), *mls = sepol_context_get_mls(con);
	const bool object = !strcmp(role, "object_r");
	sepol_user_key_t *key = NULL;
	sepol_user_t *u = NULL;
	const char *high = mls ? strchr(mls, '-') : NULL;
	int contains = 1, dom = 1;

	/* "LOW-HIGH" contains HIGH only when HIGH dominates LOW */
	if (high && sepol_mls_contains(h, db, mls, high + 1, &dom) < 0)
		dom = 1;
	snprintf(buf, size, "user, role, type and level do not go together");
	if (sepol_user_key_create(h, user, &key) < 0 || sepol_user_query(h, db, key, &u) < 0 || !u)
		goto out;
	if (!object && !sepol_user_has_role(u, role))
		snprintf(buf, size, "user %s may not have role %s", user, role);
	else if (!dom)
		snprintf(buf, size, "in range %s the high level does not dominate the low one", mls);
	else if (!object && mls && sepol_user_get_mlsrange(u) &&
		 sepol_mls_contains(h, db, sepol_user_get_mlsrange(u), mls, &contains) == 0 &&
		 !contains)
		snprintf(buf, size, "%s is outside user %s's range %s", mls, user,
			 sepol_user_get_mlsrange(u));
	else if (!object)
		snprintf(buf, size, "role %s may not have type %s", role, type);
out:
	m->first[0] = 0;
	sepol_user_free(u);
	sepol_user_key_free(key);
}

/* libsepol's reason into *why (malloc'd), or NULL when the context is valid; "" when it gave
 * none. 0, or ENOMEM. */
static int judge(sepol_handle_t *h, const sepol_policydb_t *db, struct msgs *m, const char *ctx,
		 char **why_not)
{
	sepol_context_t *con = NULL;
	const char *why;
	char buf[512];
	int bad;

	m->first[0] = 0;
	bad = sepol_context_from_string(h, ctx, &con) < 0 || sepol_context_check(h, db, con) < 0;
	why = m->first;
	if (bad && con && !strncmp(why, "invalid security context", 24)) {
		why_not_together(h, db, m, con, buf, sizeof(buf));
		why = buf;
	}
	sepol_context_free(con);
	*why_not = NULL;
	if (!bad)
		return 0;
	if (!strncmp(why, "malformed context", 17) || !strncmp(why, "could not parse", 15))
		why = "not USER:ROLE:TYPE[:LEVEL]";
	return (*why_not = strdup(why)) ? 0 : ENOMEM;
}

/* Why name is not a type (an attribute, or nothing) of the policy, or NULL when it is one. */
static const char *not_a_type(const sepol_policydb_t *db, const char *name)
{
	/* (libsepol's shared library exports no lookup by name: the names, in value order) */
	const policydb_t *p = &db->p;
	for (uint32_t i = 0; i < p->p_types.nprim; i++) {
		if (!p->p_type_val_to_name[i] || strcmp(p->p_type_val_to_name[i], name))
			continue;
		const type_datum_t *t = p->type_val_to_struct ? p->type_val_to_struct[i] : NULL;
		return t && t->flavor == TYPE_ATTRIB ? "is an attribute, not a type" : NULL;
	}
	return "is not defined";
}

/* seapp_contexts against the policy, as AOSP's checkseapp checks them: every domain= and type=
 * a type, every level= a level. The number of bad lines (each printed). */
static size_t check_seapp(const char *cmd, const char *path, sepol_handle_t *h,
			  const sepol_policydb_t *db, struct msgs *m, const seapp_set *sa)
{
	size_t nbad = 0;
	for (size_t i = 0; sa && i < seapp_count(sa); i++) {
		struct seapp_where w;
		const char *why = NULL, *what = NULL, *val = NULL;
		seapp_rule_at(sa, i, &w);
		if (w.domain && (why = not_a_type(db, w.domain))) {
			what = "domain";
			val = w.domain;
		} else if (w.type && (why = not_a_type(db, w.type))) {
			what = "type";
			val = w.type;
		} else if (w.level && (m->first[0] = 0, sepol_mls_check(h, db, w.level) < 0)) {
			what = "level";
			val = w.level;
			why = "is not valid";
		}
		if (!why)
			continue;
		if (++nbad <= POLICY_MAX_REPORTED)
			fprintf(stderr, "fclabel %s: %s:%u: %s %s %s in policy %s\n", cmd, w.file,
				w.line, what, val, why, path);
	}
	if (nbad > POLICY_MAX_REPORTED)
		fprintf(stderr, "fclabel %s: ... and %zu more\n", cmd, nbad - POLICY_MAX_REPORTED);
	if (nbad)
		fprintf(stderr, "fclabel %s: %zu seapp_contexts line(s) name what policy %s does "
			"not define; nothing was done\n", cmd, nbad, path);
	m->first[0] = 0;
	return nbad;
}

int policy_check(const char *cmd, const char *path, const fc_set *set, const seapp_set *sa)
{
	size_t n = fc_count(set), size = 16, nbad = 0;
	struct msgs m = { "" };
	struct verdict *tab = NULL;
	sepol_policydb_t *db = NULL;
	sepol_handle_t *h;
	int status = EXIT_USAGE;

	h = sepol_handle_create();
	if (!h) {
		fprintf(stderr, "fclabel %s: --policy %s: %s\n", cmd, path, strerror(ENOMEM));
		return EXIT_USAGE;
	}
	sepol_msg_set_callback(h, on_msg, &m);
	if (read_policy(cmd, path, h, &m, &db))
		goto out;
	while (size < n * 2)
		size <<= 1;
	tab = calloc(size, sizeof(*tab));
	if (!tab) {
		fprintf(stderr, "fclabel %s: --policy %s: %s\n", cmd, path, strerror(ENOMEM));
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct fc_spec *s = fc_spec_at(set, i);
		struct verdict *v;
		size_t b;

		if (!strcmp(s->context, "<<none>>"))
			continue;
		for (b = hash_str(s->context) & (size - 1); tab[b].context; b = (b + 1) & (size - 1))
			if (!strcmp(tab[b].context, s->context))
				break;
		v = &tab[b];
		if (!v->context) {
			v->context = s->context;
			if (judge(h, db, &m, s->context, &v->why)) {
				fprintf(stderr, "fclabel %s: --policy %s: %s\n", cmd, path,
					strerror(ENOMEM));
				goto out;
			}
		}
		if (!v->why)
			continue;
		if (++nbad <= POLICY_MAX_REPORTED)
			fprintf(stderr, "fclabel %s: %s:%u: context %s is not valid in policy %s%s%s%s\n",
				cmd, s->file, s->line, s->context, path, v->why[0] ? " (" : "",
				v->why, v->why[0] ? ")" : "");
	}
	if (nbad > POLICY_MAX_REPORTED)
		fprintf(stderr, "fclabel %s: ... and %zu more\n", cmd, nbad - POLICY_MAX_REPORTED);
	if (nbad)
		fprintf(stderr, "fclabel %s: %zu of %zu file_contexts specs have a context that policy "
			"%s does not define; nothing was done\n", cmd, nbad, n, path);
	nbad += check_seapp(cmd, path, h, db, &m, sa);
	status = nbad ? EXIT_DIFFERS : EXIT_OK;
out:
	if (tab)
		for (size_t i = 0; i < size; i++)
			free(tab[i].why);
	free(tab);
	if (db)
		sepol_policydb_free(db);
	sepol_handle_destroy(h);
	return status;
}
