/*
 * Putting a lookup's answer into a file_contexts label the way pkgdir_selabel_lookup does with
 * libselinux's context_new, context_type_set, context_range_set and context_str.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* The components context_new splits a context into: three up to ':', the rest is the range. */
struct parts {
	const char *p[3];
	size_t n[3];
	const char *range; /* NULL when absent or empty (context_str then prints none) */
};

static int split_context(const char *s, struct parts *c)
{
	unsigned colons = 0;
	const char *tok = s;

	for (const char *p = s; *p; p++) {
		if (*p == '\n' || *p == '\t' || *p == '\r')
			return EINVAL;
		if (*p == ':')
			colons++;
		else if (*p == ' ' && colons < 3)
			return EINVAL;
	}
	if (colons < 2 || colons > 5)
		return EINVAL;
	for (int i = 0; i < 3; i++) {
		size_t n = strcspn(tok, ":");
		c->p[i] = tok;
		c->n[i] = n;
		tok += n + (tok[n] == ':');
	}
	c->range = *tok ? tok : NULL;
	return 0;
}

int seapp_apply(const char *fc_context, const struct seapp_answer *ans, char *out, size_t n)
{
	struct parts c;
	const char *type, *range;
	int len;

	if (split_context(fc_context, &c))
		return EINVAL;
	type = ans && ans->found ? ans->type : NULL;
	range = ans && ans->found && seapp_answer_level(ans) ? seapp_answer_level(ans) : c.range;
	len = snprintf(out, n, "%.*s:%.*s:%.*s%s%s", (int)c.n[0], c.p[0], (int)c.n[1], c.p[1],
		       type ? (int)strlen(type) : (int)c.n[2], type ? type : c.p[2],
		       range ? ":" : "", range ? range : "");
	if (len < 0 || (size_t)len >= n)
		return ERANGE;
	return 0;
}
