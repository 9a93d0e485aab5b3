/* fclabel explain: every spec that matches a path, in the order a lookup tries them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const usage[] = {
	"fclabel explain -S FC[,FC...] [--base-only] [-m MODE] [--seapp SEAPP[,...] --packages LIST]",
	"                PATH...",
	"       fclabel explain --android-root ROOT [--partition NAME=PATH]... [--packages LIST]",
	"                [-m MODE] [-v] PATH...",
	NULL
};

enum { O_MODE = POPT_END_, O_VERBOSE };

static const struct cli_opt options[] = {
	OPT_FILE_CONTEXTS(POPT_FILES),
	OPT_ARG(0, "android-root", POPT_ANDROID_ROOT, "ROOT",
		"instead of -S: the device's own file_contexts, and its seapp_contexts with "
		"--packages, found in ROOT as the device finds them: a mounted root, extracted "
		"partitions or NAME.img images"),
	OPT_PARTITION(POPT_PARTITION),
	OPT_FLAG('v', "verbose", O_VERBOSE, "say which files the policy was read from"),
	OPT_FLAG(0, "base-only", POPT_BASE_ONLY, "with one file: skip FILE.homedirs and FILE.local"),
	OPT_ARG('m', "mode", O_MODE, "MODE",
		"file mode: octal or one of f d l c b p s (default 0: any type)"),
	OPT_ARG(0, "seapp", POPT_SEAPP, "SEAPP[,...]",
		"Android app data: also the seapp_contexts line that decides the type and level, "
		"and the packages.list entry used"),
	OPT_ARG(0, "packages", POPT_PACKAGES, "LIST", "the packages.list (required with --seapp)"),
	OPT_HELP,
	OPT_END
};

static const struct cli_spec spec = { "explain", usage, options };

struct shown {
	unsigned n;
};

static int show(const struct fc_spec *s, void *arg)
{
	struct shown *sh = arg;
	printf("  %s %s:%u\t%s%s%s\t%s\n", sh->n == 0 ? "decides" : "      -", s->file, s->line,
	       s->regex, s->type ? "\t" : "", s->type ? s->type : "", s->context);
	sh->n++;
	return 0;
}

/* App data: the package, its packages.list entry, the seapp_contexts line, the label. */
static bool app_explain(struct appdata *ad, const char *path, const struct fc_result *r)
{
	static char label[4096];
	struct ad_answer a;
	if (appdata_label(ad, path, strlen(path), r->context, label, sizeof(label), &a) ||
	    a.kind == AD_NOT_APP)
		return false;
	if (a.kind == AD_UNKNOWN) {
		printf("  app data: its package is not in packages.list: a device leaves it as it is\n"
		       "  => %s (as it is)\n", "<<unknown-package>>");
		return true;
	}
	const struct pkg_entry *p = a.pkg;
	printf("  app data: package %s, user %u: packages.list line %u (app id %u, seinfo %s); "
	       "uid %u%s\n", p->name, a.user, p->line, p->uid, p->seinfo, a.uid,
	       a.sandbox ? " (its SDK sandbox)" : "");
	if (a.kind == AD_FAILED) {
		printf("  seapp: the lookup fails (%s): a device leaves it as it is\n"
		       "  => <<seapp-failed>>\n", a.why ? a.why : "?");
		return true;
	}
	if (a.ans && a.ans->found)
		printf("  seapp %s:%u\t%s\n", a.ans->file, a.ans->line, a.ans->text);
	else if (a.pkgdir && !a.ans)
		printf("  seapp: none for an SDK sandbox's package directory: it keeps the label of "
		       "the sdksandbox directory it is made in\n");
	else
		printf("  seapp: no line with type= matches: the file_contexts label stands\n");
	printf("  => %s\n", label);
	return true;
}

/* The options: the policy's into po, -m's into *mode, -v's into *verbose. Returns only when they
 * are good, and the policy is to be loaded. */
static void options_of(int argc, char **argv, struct policy_opts *po, mode_t *mode, bool *verbose)
{
	struct cli_parser p;
	int c, r;

	cli_start(&p, &spec);
	while ((c = cli_next(&p, argc, argv)) != -1) {
		if ((r = policy_arg(po, "explain", c, optarg)) < 0)
			die_usage(&spec);
		else if (r > 0)
			continue;
		else if (c == O_VERBOSE)
			*verbose = true;
		else if (c == O_MODE && !parse_mode(optarg, mode)) {
			fprintf(stderr, "fclabel explain: bad mode '%s'\n", optarg);
			die_usage(&spec);
		} else if (c == CLI_HELP) {
			cli_help(&spec);
			policy_opts_free(po);
			exit(EXIT_OK);
		} else if (c != O_MODE) {
			die_usage(&spec);
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "fclabel explain: give at least one PATH\n");
		die_usage(&spec);
	}
	if (!policy_args_check(po, "explain"))
		die_usage(&spec);
}

int cmd_explain(int argc, char **argv, const struct command *self)
{
	struct policy_opts po = { 0 };
	struct app_rules ar = { 0 };
	int status = EXIT_OK;
	bool verbose = false;
	mode_t mode = 0;
	fc_set *set = NULL;

	options_of(argc, argv, &po, &mode, &verbose);
	if (policy_opts_load("explain", &po, verbose, &set, &ar) != EXIT_OK) {
		policy_opts_free(&po);
		app_rules_free(&ar);
		if (set)
			fc_free(set);
		return EXIT_USAGE;
	}
	policy_opts_free(&po);
	for (int i = optind; i < argc; i++) {
		struct shown sh = { 0 };
		struct fc_result r;
		if (argv[i][0] != '/') {
			fprintf(stderr, "fclabel explain: '%s': not an absolute path\n", argv[i]);
			status = EXIT_DIFFERS;
			continue;
		}
		if (mode)
			printf("%s (mode 0%o):\n", qname(argv[i]), (unsigned)mode);
		else /* (no -m: every spec matches whatever its file type) */
			printf("%s (mode 0: any file type):\n", qname(argv[i]));
		int rc = fc_explain(set, argv[i], mode, show, &sh);
		int lrc = fc_lookup(set, argv[i], mode, &r); /* on EIO it names the spec */
		if (!rc || lrc == EIO)
			rc = lrc;
		if (rc) {
			char e[128];
			if (rc == EIO && r.spec)
				fprintf(stderr, "fclabel explain: %s: PCRE2 gave up matching %s:%u "
					"(%.200s): %s\n", qname(argv[i]), r.spec->file, r.spec->line,
					r.spec->regex, fc_match_error(r.match_error, e, sizeof(e)));
			else
				fprintf(stderr, "fclabel explain: %s: %s\n", qname(argv[i]), strerror(rc));
			status = EXIT_DIFFERS;
			continue;
		}
		if (!sh.n)
			printf("  no spec matches: no label\n");
		else if (r.status == FC_NONE)
			printf("  => <<none>>: the file is left unlabeled\n");
		else if (!ar.ad || !app_explain(ar.ad, argv[i], &r))
			printf("  => %s\n", r.context);
		/* the index and the plain scan must agree; say so loudly if they ever do not */
		if (sh.n && r.spec == NULL) {
			fprintf(stderr, "fclabel explain: internal disagreement on '%s'\n", argv[i]);
			status = EXIT_USAGE;
		}
	}
	app_rules_free(&ar);
	fc_free(set);
	return status;
}
