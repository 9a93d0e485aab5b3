/* The policy's inputs loaded, or said why not ("fclabel CMD: FILE:LINE: reason"): file_contexts
 * (-S), seapp_contexts (--seapp), packages.list (--packages). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

int fcfiles_add(struct fcfiles *f, const char *arg)
{
	const char *p = arg;

	for (;;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		if (n) {
			char **nv = realloc(f->v, (f->n + 1) * sizeof(*nv));
			if (!nv)
				return ENOMEM;
			f->v = nv;
			if (!(f->v[f->n] = strndup(p, n)))
				return ENOMEM;
			f->n++;
		}
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

void fcfiles_free(struct fcfiles *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->v[i]);
	free(f->v);
	f->v = NULL;
	f->n = 0;
}

fc_set *fc_loaded(const char *cmd, int rc, fc_set *set, const struct fc_error *err)
{
	if (!rc) {
		/* a compiled FC.bin (or FC) that did not load, and the other one that did */
		const char *w = fc_load_warning(set);
		while (w && *w) {
			const char *nl = strchr(w, '\n');
			int len = nl ? (int)(nl - w) : (int)strlen(w);
			fprintf(stderr, "fclabel %s: warning: %.*s\n", cmd, len, w);
			w = nl ? nl + 1 : NULL;
		}
		return set;
	}
	fprintf(stderr, "fclabel %s: ", cmd);
	if (err->file[0]) {
		fprintf(stderr, "%s:", err->file);
		if (err->line)
			fprintf(stderr, "%u:", err->line);
		if (err->column)
			fprintf(stderr, "%u:", err->column);
		fputc(' ', stderr);
	}
	fprintf(stderr, "%s\n", err->msg[0] ? err->msg : strerror(rc));
	return NULL;
}

fc_set *load_policy(const char *cmd, const struct fcfiles *f, unsigned flags)
{
	struct fc_error err;
	fc_set *set = NULL;
	int rc = fc_load(&set, (const char *const *)f->v, f->n, flags, &err);
	return fc_loaded(cmd, rc, set, &err);
}

static void seapp_report(const char *cmd, const struct seapp_error *err, int rc)
{
	fprintf(stderr, "fclabel %s: ", cmd);
	if (err->file[0]) {
		fprintf(stderr, "%s:", err->file);
		if (err->line)
			fprintf(stderr, "%u:", err->line);
		fputc(' ', stderr);
	}
	fprintf(stderr, "%s\n", err->msg[0] ? err->msg : strerror(rc));
}

seapp_set *seapp_loaded(const char *cmd, int rc, seapp_set *set, const struct seapp_error *err)
{
	if (rc) {
		seapp_report(cmd, err, rc);
		return NULL;
	}
	size_t nv = seapp_neverallow_count(set);
	if (nv)
		fprintf(stderr, "fclabel %s: note: %zu neverallow line(s) of a source seapp_contexts "
			"skipped (the build's checkseapp checks and strips them; a device's files "
			"have none)\n", cmd, nv);
	return set;
}

seapp_set *load_seapp(const char *cmd, const struct fcfiles *f)
{
	struct seapp_error err = { 0 };
	seapp_set *set = NULL;
	int rc = seapp_load(&set, (const char *const *)f->v, f->n, &err);
	return seapp_loaded(cmd, rc, set, &err);
}

pkg_list *load_packages(const char *cmd, const char *name, const char *buf, size_t len)
{
	struct seapp_error err = { 0 };
	pkg_list *list = NULL;
	int rc = buf ? pkglist_parse(&list, name, buf, len, &err) : pkglist_load(&list, name, &err);
	if (rc) {
		seapp_report(cmd, &err, rc);
		return NULL;
	}
	return list;
}
