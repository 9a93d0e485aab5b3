/* fclabel lookup: what file_contexts says about paths. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const usage[] = {
	"fclabel lookup -S FC[,FC...] [--base-only] [--policy SEPOLICY] [-m MODE] [-v]",
	"               [--seapp SEAPP[,...] --packages LIST] PATH...",
	"       fclabel lookup -S FC[,FC...] [--base-only] [--policy SEPOLICY] --batch [-0] [-v]",
	"               [--seapp SEAPP[,...] --packages LIST] < RECORDS",
	"       fclabel lookup --android-root ROOT [--partition NAME=PATH]... [--packages LIST]",
	"               [--policy SEPOLICY] [-m MODE] [-v] PATH... (or --batch [-0] < RECORDS)",
	NULL
};

enum { O_MODE = POPT_END_, O_VERBOSE, O_BATCH, O_NULL, O_POLICY };

static const struct cli_opt options[] = {
	OPT_FILE_CONTEXTS(POPT_FILES),
	OPT_ARG(0, "android-root", POPT_ANDROID_ROOT, "ROOT",
		"instead of -S: the device's own file_contexts, and its seapp_contexts with "
		"--packages, found in ROOT as the device finds them: a mounted root, extracted "
		"partitions or NAME.img images (-v: which files)"),
	OPT_PARTITION(POPT_PARTITION),
	OPT_FLAG(0, "base-only", POPT_BASE_ONLY, "with one file: skip FILE.homedirs and FILE.local"),
	OPT_ARG('m', "mode", O_MODE, "MODE",
		"file mode: octal (0100644, 040755, 0) or one of f d l c b p s; default 0, which "
		"lets typed specs match any file"),
	OPT_FLAG('v', "verbose", O_VERBOSE,
		 "also print FILE:LINE of the deciding spec ('-' for none)"),
	OPT_FLAG(0, "batch", O_BATCH, "read \"MODE PATH\" records from standard input"),
	OPT_FLAG('0', "null", O_NULL, "with --batch: records end with NUL, not newline"),
	OPT_ARG(0, "policy", O_POLICY, "SEPOLICY",
		"first check every context against this binary SELinux policy (libsepol); answer "
		"nothing if one is not valid"),
	OPT_ARG(0, "seapp", POPT_SEAPP, "SEAPP[,...]",
		"Android app data: the device's label for paths below /data/data/PKG, /data/user/N/PKG "
		"... from these seapp_contexts"),
	OPT_ARG(0, "packages", POPT_PACKAGES, "LIST",
		"... and this packages.list (required with --seapp)"),
	OPT_HELP,
	OPT_END
};

static const struct cli_spec spec = { "lookup", usage, options };

struct out {
	bool verbose;
	int errors;
	struct appdata *ad;
	char label[4096];
};

/* App data: the device's label, or what it leaves alone; false when not app data. */
static bool app_answer(struct out *o, const char *path, const struct fc_result *r)
{
	struct ad_answer a;
	if (!o->ad || r->status != FC_LABEL ||
	    appdata_label(o->ad, path, strlen(path), r->context, o->label, sizeof(o->label), &a) ||
	    a.kind == AD_NOT_APP)
		return false;
	fputs(a.kind == AD_LABEL ? o->label : a.kind == AD_UNKNOWN ? "<<unknown-package>>"
								    : "<<seapp-failed>>", stdout);
	if (o->verbose) {
		printf("\t%s:%u", r->spec->file, r->spec->line);
		if (a.kind == AD_LABEL && a.ans && a.ans->found)
			printf("\t%s:%u", a.ans->file, a.ans->line);
		else
			fputs("\t-", stdout);
	}
	putchar('\n');
	return true;
}

static void answer(struct out *o, const fc_set *set, const char *path, mode_t mode,
		   const char *where)
{
	struct fc_result r;
	int rc;

	if (!path[0] || path[0] != '/') {
		fprintf(stderr, "fclabel lookup: %s'%s': not an absolute path\n", where, path);
		puts("<<error>>");
		o->errors++;
		return;
	}
	rc = fc_lookup(set, path, mode, &r);
	if (rc) {
		char e[128];
		if (rc == EIO && r.spec)
			fprintf(stderr, "fclabel lookup: %s%s: PCRE2 gave up matching %s:%u (%.200s): %s\n",
				where, qname(path), r.spec->file, r.spec->line, r.spec->regex,
				fc_match_error(r.match_error, e, sizeof(e)));
		else
			fprintf(stderr, "fclabel lookup: %s%s: %s\n", where, qname(path), strerror(rc));
		puts("<<error>>");
		o->errors++;
		return;
	}
	if (app_answer(o, path, &r))
		return;
	fputs(r.status == FC_LABEL ? r.context : "<<none>>", stdout);
	if (o->verbose) {
		if (r.spec)
			printf("\t%s:%u", r.spec->file, r.spec->line);
		else
			fputs("\t-", stdout);
	}
	putchar('\n');
}

static void batch(struct out *o, const fc_set *set, int delim)
{
	char *line = NULL, where[64];
	size_t cap = 0;
	ssize_t n;
	unsigned long rec = 0;

	while ((n = getdelim(&line, &cap, delim, stdin)) >= 0) {
		char *sp;
		mode_t mode;
		rec++;
		if (n > 0 && line[n - 1] == delim)
			line[--n] = 0;
		snprintf(where, sizeof(where), "record %lu: ", rec);
		sp = strchr(line, ' ');
		if (sp)
			*sp = 0;
		if (!sp || !parse_mode(line, &mode)) {
			fprintf(stderr, "fclabel lookup: %swant \"MODE PATH\" with an octal MODE\n",
				where);
			puts("<<error>>");
			o->errors++;
			continue;
		}
		answer(o, set, sp + 1, mode, where);
	}
	free(line);
}

int cmd_lookup(int argc, char **argv, const struct command *self)
{
	struct policy_opts po = { 0 };
	struct app_rules ar = { 0 };
	struct cli_parser p;
	static struct out o;
	bool use_batch = false;
	const char *sepolicy = NULL;
	int delim = '\n', c;
	mode_t mode = 0;
	fc_set *set;
	static char obuf[1 << 16];

	cli_start(&p, &spec);
	while ((c = cli_next(&p, argc, argv)) != -1) {
		int r = policy_arg(&po, "lookup", c, optarg);
		if (r < 0)
			die_usage(&spec);
		if (r > 0)
			continue;
		switch (c) {
		case O_MODE:
			if (!parse_mode(optarg, &mode)) {
				fprintf(stderr, "fclabel lookup: bad mode '%s'\n", optarg);
				die_usage(&spec);
			}
			break;
		case O_VERBOSE: o.verbose = true; break;
		case O_BATCH: use_batch = true; break;
		case O_NULL: delim = 0; break;
		case O_POLICY: sepolicy = optarg; break;
		case CLI_HELP:
			cli_help(&spec);
			policy_opts_free(&po);
			return EXIT_OK;
		default: die_usage(&spec);
		}
	}
	if (use_batch == (optind < argc)) {
		fprintf(stderr, "fclabel lookup: give PATHs or --batch, not %s\n",
			use_batch ? "both" : "neither");
		die_usage(&spec);
	}
	if (!policy_args_check(&po, "lookup"))
		die_usage(&spec);
	if ((c = policy_opts_load("lookup", &po, o.verbose, &set, &ar)) != EXIT_OK ||
	    (sepolicy && (c = policy_check("lookup", sepolicy, set, ar.sa)) != EXIT_OK)) {
		app_rules_free(&ar);
		policy_opts_free(&po);
		fc_free(set);
		return c;
	}
	policy_opts_free(&po);
	o.ad = ar.ad;
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	if (use_batch)
		batch(&o, set, delim);
	else
		for (int i = optind; i < argc; i++)
			answer(&o, set, argv[i], mode, "");
	app_rules_free(&ar);
	fc_free(set);
	if (fflush(stdout) != 0) {
		perror("fclabel lookup: stdout");
		return EXIT_USAGE;
	}
	return o.errors ? EXIT_DIFFERS : EXIT_OK;
}
