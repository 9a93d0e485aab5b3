/* fclabel diff: what changed between two policy versions, and which paths each change reaches. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "fclabel.h"
#include "label.h"

static const char usage_text[] =
	"fclabel diff OLD_FC[,OLD_FC...] NEW_FC[,NEW_FC...] [--json] [--base-only]\n"
	"\n"
	"      --json             print the changes as JSON\n"
	"      --base-only        with one file a side: skip FILE.homedirs and FILE.local\n"
	"  -h, --help             show this help";

static const char *kind_name[] = { "added", "removed", "context", "retyped", "moved" };

/* (file names and regexes are bytes: the report's writer escapes what is not UTF-8) */
static void jstr(const char *s)
{
	rpt_json_str(stdout, s);
}

/* "any path", or the literal prefix every path it can match starts with */
static void reach(const fc_set *set, const struct fc_spec *s, bool json)
{
	size_t len;
	const char *p = fc_spec_prefix(set, s, &len);
	char *q = p ? strndup(p, len) : NULL;

	if (json) {
		if (!p)
			printf("null");
		else
			jstr(len ? q : "");
	} else if (!p) {
		printf("nothing (3.4's stem rule makes it unreachable)");
	} else if (!len) {
		printf("any path");
	} else {
		printf("%s...", q);
	}
	free(q);
}

static void spec_text(const struct fc_spec *s)
{
	printf("%s%s%s %s", s->regex, s->type ? " " : "", s->type ? s->type : "", s->context);
}

static void jspec(const char *key, const struct fc_spec *s)
{
	printf(", \"%s\": {\"file\": ", key);
	jstr(s->file);
	printf(", \"line\": %u, \"regex\": ", s->line);
	jstr(s->regex);
	printf(", \"type\": ");
	if (s->type)
		jstr(s->type);
	else
		printf("null");
	printf(", \"context\": ");
	jstr(s->context);
	putchar('}');
}

int cmd_diff(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "base-only", no_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct fcfiles a = { 0 }, b = { 0 };
	bool json = false;
	unsigned flags = 0;
	int c, status = EXIT_USAGE;
	fc_set *old = NULL, *new = NULL;
	struct fc_diff *d = NULL;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'B': flags |= FC_BASE_ONLY; break;
		case 'h': printf("usage: %s\n", usage_text); return EXIT_OK;
		default: die_usage("diff", usage_text);
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "fclabel diff: give OLD and NEW file_contexts\n");
		die_usage("diff", usage_text);
	}
	if (fcfiles_add(&a, argv[optind]) || fcfiles_add(&b, argv[optind + 1]))
		goto out;
	if (!(old = load_policy("diff", &a, flags)) || !(new = load_policy("diff", &b, flags)))
		goto out;
	int rc = fc_diff(old, new, &d);
	if (rc) {
		fprintf(stderr, "fclabel diff: %s\n", strerror(rc));
		goto out;
	}
	size_t n = fc_diff_count(d);
	unsigned long count[5] = { 0 };
	if (json)
		printf("{\n  \"changes\": [");
	for (size_t i = 0; i < n; i++) {
		const struct fc_change *ch = fc_diff_at(d, i);
		const struct fc_spec *s = ch->new ? ch->new : ch->old;
		const fc_set *owner = ch->new ? new : old;
		count[ch->kind]++;
		if (json) {
			printf("%s\n    {\"kind\": \"%s\"", i ? "," : "", kind_name[ch->kind]);
			if (ch->old)
				jspec("old", ch->old);
			if (ch->new)
				jspec("new", ch->new);
			printf(", \"reaches\": ");
			reach(owner, s, true);
			putchar('}');
			continue;
		}
		printf("%-8s ", kind_name[ch->kind]);
		if (ch->old && ch->new)
			printf("%s:%u -> %s:%u  ", ch->old->file, ch->old->line, ch->new->file,
			       ch->new->line);
		else
			printf("%s:%u  ", s->file, s->line);
		if (ch->kind == FC_CONTEXT)
			printf("%s%s%s %s -> %s", s->regex, s->type ? " " : "", s->type ? s->type : "",
			       ch->old->context, ch->new->context);
		else if (ch->kind == FC_RETYPED)
			printf("%s %s -> %s %s", s->regex, ch->old->type ? ch->old->type : "(any type)",
			       ch->new->type ? ch->new->type : "(any type)", s->context);
		else
			spec_text(s);
		printf("\n         reaches: ");
		reach(owner, s, false);
		putchar('\n');
	}
	if (json) {
		printf("\n  ],\n  \"prunable\": %s", fc_diff_everything(d) ? "false" : "true");
		for (int k = 0; k < 5; k++)
			printf(",\n  \"%s\": %lu", kind_name[k], count[k]);
		printf("\n}\n");
	} else {
		printf("%zu change(s): %lu added, %lu removed, %lu new context, %lu retyped, %lu moved\n",
		       n, count[0], count[1], count[2], count[3], count[4]);
		if (fc_diff_everything(d))
			printf("note: the substitution files differ (or the diff is too large): a relabel "
			       "must visit every file\n");
	}
	status = n ? EXIT_DIFFERS : EXIT_OK;
out:
	fc_diff_free(d);
	if (old)
		fc_free(old);
	if (new)
		fc_free(new);
	fcfiles_free(&a);
	fcfiles_free(&b);
	return status;
}
