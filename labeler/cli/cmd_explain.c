/* fclabel explain: every spec that matches a path, in the order a lookup tries them. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char usage_text[] =
	"fclabel explain -S FC[,FC...] [--base-only] [-m MODE] [--seapp SEAPP[,...] --packages LIST]\n"
	"                PATH...\n"
	"       fclabel explain --android-root ROOT [--partition NAME=PATH]... [--packages LIST]\n"
	"                [-m MODE] [-v] PATH...\n"
	"\n"
	"  -S, --file-contexts FC[,FC...]  file_contexts files, in order (repeatable)\n"
	"      --android-root ROOT  instead of -S: the device's own file_contexts, and its\n"
	"                         seapp_contexts with --packages, found in ROOT as the device\n"
	"                         finds them: a mounted root, extracted partitions or NAME.img\n"
	"                         images\n"
	"      --partition NAME=PATH  where partition NAME (system, system_ext, product, vendor,\n"
	"                         odm) is: a directory, an image, or none (repeatable)\n"
	"  -v, --verbose          say which files the policy was read from\n"
	"      --base-only        with one file: skip FILE.homedirs and FILE.local\n"
	"  -m, --mode MODE        file mode: octal or one of f d l c b p s (default 0: any type)\n"
	"      --seapp SEAPP[,...]  Android app data: also the seapp_contexts line that decides\n"
	"                         the type and level, and the packages.list entry used\n"
	"      --packages LIST    the packages.list (required with --seapp)\n"
	"  -h, --help             show this help";

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

int cmd_explain(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "file-contexts", required_argument, NULL, 'S' },
		{ "base-only", no_argument, NULL, 'B' },
		{ "mode", required_argument, NULL, 'm' },
		{ "seapp", required_argument, NULL, 'A' },
		{ "packages", required_argument, NULL, 'K' },
		{ "android-root", required_argument, NULL, OPT_ANDROID_ROOT },
		{ "partition", required_argument, NULL, OPT_PARTITION },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct policy_opts po = { 0 };
	struct app_rules ar = { 0 };
	int c, status = EXIT_OK;
	bool verbose = false;
	fc_set *set = NULL;

	while ((c = getopt_long(argc, argv, "S:m:vh", opts, NULL)) != -1) {
		if (c == 'v')
			verbose = true;
		else if (!policy_opt(c, optarg, &po, "explain", usage_text))
			die_usage("explain", usage_text);
	}
	if (optind >= argc) {
		fprintf(stderr, "fclabel explain: give at least one PATH\n");
		die_usage("explain", usage_text);
	}
	mode_t mode = po.mode;
	if (policy_opts_load("explain", usage_text, &po, verbose, &set, &ar) != EXIT_OK) {
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
