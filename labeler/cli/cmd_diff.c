/* fclabel diff: what changed between two policy versions, and which paths each change reaches. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const usage[] = {
	"fclabel diff OLD_FC[,OLD_FC...] NEW_FC[,NEW_FC...] [--json] [--base-only]",
	"       fclabel diff OLD_FC[,...]|--old-root ROOT [--old-partition NAME=PATH]...",
	"                    NEW_FC[,...]|--android-root ROOT [--partition NAME=PATH]... [--json]",
	NULL
};

enum { O_JSON = POPT_END_, O_OLD_ROOT, O_OLD_PARTITION };

static const struct cli_opt options[] = {
	OPT_ARG(0, "android-root", POPT_ANDROID_ROOT, "ROOT",
		"instead of NEW_FC: the device's own file_contexts, found in ROOT as the device "
		"finds them (as fclabel label's)"),
	OPT_ARG(0, "partition", POPT_PARTITION, "NAME=PATH",
		"where the new side's partition NAME (system, system_ext, product, vendor, odm) "
		"is: a directory, an image, or none"),
	OPT_ARG(0, "old-root", O_OLD_ROOT, "ROOT",
		"instead of OLD_FC: the file_contexts a device in ROOT loads"),
	OPT_ARG(0, "old-partition", O_OLD_PARTITION, "NAME=PATH", "--partition for the old side"),
	OPT_FLAG(0, "json", O_JSON, "print the changes as JSON"),
	OPT_FLAG(0, "base-only", POPT_BASE_ONLY,
		 "with one file a side: skip FILE.homedirs and FILE.local"),
	OPT_HELP,
	OPT_END
};

static const struct cli_spec spec = { "diff", usage, options };

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

/* One side: its files, or (aroot given) the device's. NULL after saying why. */
static fc_set *load_side(const char *file, const struct aroot_args *aroot, unsigned flags)
{
	struct fcfiles f = { 0 };
	struct policy_origins pf;
	fc_set *set = NULL;

	if (aroot_given(aroot)) {
		aroot_load("diff", aroot, flags, LOCK_WAIT, false, &set, NULL, &pf);
		policy_origins_free(&pf);
		return set;
	}
	if (fcfiles_add(&f, file)) {
		fputs("fclabel diff: out of memory\n", stderr);
		return NULL;
	}
	set = load_policy("diff", &f, flags);
	fcfiles_free(&f);
	return set;
}

/* What diff is told: each side's device (a side without one is a file_contexts operand). */
struct diff_args {
	struct aroot_args dev_old, dev_new;
	bool json;
	unsigned flags;
	const char *old_fc, *new_fc;
};

/* The options and operands into a; returns only when they are good. */
static void diff_options(int argc, char **argv, struct diff_args *a)
{
	struct cli_parser p;
	int c;

	cli_start(&p, &spec);
	while ((c = cli_next(&p, argc, argv)) != -1) {
		switch (c) {
		case O_JSON: a->json = true; break;
		case POPT_BASE_ONLY: a->flags |= FC_BASE_ONLY; break;
		case POPT_ANDROID_ROOT: a->dev_new.root = optarg; break;
		case O_OLD_ROOT: a->dev_old.root = optarg; break;
		case POPT_PARTITION:
			if (!aroot_partition(&a->dev_new, "diff", optarg))
				die_usage(&spec);
			break;
		case O_OLD_PARTITION:
			if (!aroot_partition_opt(&a->dev_old, "diff", "--old-partition", optarg))
				die_usage(&spec);
			break;
		case CLI_HELP: cli_help(&spec); exit(EXIT_OK);
		default: die_usage(&spec);
		}
	}
	/* a side the device gives takes no operand: what is left is OLD, NEW, or the one not given */
	bool old_dev = aroot_given(&a->dev_old), new_dev = aroot_given(&a->dev_new);
	int want = !old_dev + !new_dev;
	if (argc - optind != want) {
		if (want == 2)
			fprintf(stderr, "fclabel diff: give OLD and NEW file_contexts\n");
		else if (want == 1)
			fprintf(stderr, "fclabel diff: give the %s file_contexts (the device gives the "
				"%s one)\n", old_dev ? "new" : "old", old_dev ? "old" : "new");
		else
			fprintf(stderr, "fclabel diff: both sides come from --old-root and "
				"--android-root: no file_contexts operand goes with them\n");
		die_usage(&spec);
	}
	a->old_fc = old_dev ? NULL : argv[optind];
	a->new_fc = new_dev ? NULL : argv[argc - 1];
}

/* One change, as text. */
static void print_change(const struct fc_change *ch, const fc_set *owner)
{
	const struct fc_spec *s = ch->new ? ch->new : ch->old;

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

/* One change, as an element of the JSON array (first: the array's first). */
static void json_change(const struct fc_change *ch, const fc_set *owner, bool first)
{
	printf("%s\n    {\"kind\": \"%s\"", first ? "" : ",", kind_name[ch->kind]);
	if (ch->old)
		jspec("old", ch->old);
	if (ch->new)
		jspec("new", ch->new);
	printf(", \"reaches\": ");
	reach(owner, ch->new ? ch->new : ch->old, true);
	putchar('}');
}

/* Every change of d, and the counts. */
static void print_diff(const struct fc_diff *d, const fc_set *old, const fc_set *new, bool json)
{
	size_t n = fc_diff_count(d);
	unsigned long count[5] = { 0 };

	if (json)
		printf("{\n  \"changes\": [");
	for (size_t i = 0; i < n; i++) {
		const struct fc_change *ch = fc_diff_at(d, i);
		const fc_set *owner = ch->new ? new : old;
		count[ch->kind]++;
		if (json)
			json_change(ch, owner, i == 0);
		else
			print_change(ch, owner);
	}
	if (json) {
		printf("\n  ],\n  \"prunable\": %s", fc_diff_reaches_all(d) ? "false" : "true");
		for (int k = 0; k < 5; k++)
			printf(",\n  \"%s\": %lu", kind_name[k], count[k]);
		printf("\n}\n");
	} else {
		printf("%zu change(s): %lu added, %lu removed, %lu new context, %lu retyped, %lu moved\n",
		       n, count[0], count[1], count[2], count[3], count[4]);
		if (fc_diff_everything(d))
			printf("note: the substitution files differ (or the diff is too large): a relabel "
			       "must visit every file\n");
		else if (fc_diff_reaches_all(d))
			printf("note: a change's regular expression begins with .*: a relabel must enter "
			       "every directory\n");
	}
}

int cmd_diff(int argc, char **argv, const struct command *self)
{
	/* the old side's lines and messages say which side they are about */
	struct diff_args a = { .dev_new = { .policy = "new policy" },
			       .dev_old = { .root_opt = "--old-root", .part_opt = "--old-partition",
					    .policy = "old policy" } };
	int status = EXIT_USAGE;
	fc_set *old = NULL, *new = NULL;
	struct fc_diff *d = NULL;

	(void)self;
	diff_options(argc, argv, &a);
	if (!(old = load_side(a.old_fc, &a.dev_old, a.flags)) ||
	    !(new = load_side(a.new_fc, &a.dev_new, a.flags)))
		goto out;
	int rc = fc_diff(old, new, &d, NULL);
	if (rc) {
		fprintf(stderr, "fclabel diff: %s\n", strerror(rc));
		goto out;
	}
	print_diff(d, old, new, a.json);
	status = fc_diff_count(d) ? EXIT_DIFFERS : EXIT_OK;
out:
	fc_diff_free(d);
	if (old)
		fc_free(old);
	if (new)
		fc_free(new);
	return status;
}
