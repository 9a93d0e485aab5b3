/* fclabel lookup: what file_contexts says about paths. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char usage_text[] =
	"fclabel lookup -S FC[,FC...] [--base-only] [--policy SEPOLICY] [-m MODE] [-v]\n"
	"               [--seapp SEAPP[,...] --packages LIST] PATH...\n"
	"       fclabel lookup -S FC[,FC...] [--base-only] [--policy SEPOLICY] --batch [-0] [-v]\n"
	"               [--seapp SEAPP[,...] --packages LIST] < RECORDS\n"
	"       fclabel lookup --android-root ROOT [--partition NAME=PATH]... [--packages LIST]\n"
	"               [--policy SEPOLICY] [-m MODE] [-v] PATH... (or --batch [-0] < RECORDS)\n"
	"\n"
	"  -S, --file-contexts FC[,FC...]  file_contexts files, in order (repeatable)\n"
	"      --android-root ROOT  instead of -S: the device's own file_contexts, and its\n"
	"                         seapp_contexts with --packages, found in ROOT as the device\n"
	"                         finds them: a mounted root, extracted partitions or NAME.img\n"
	"                         images (-v: which files)\n"
	"      --partition NAME=PATH  where partition NAME (system, system_ext, product, vendor,\n"
	"                         odm) is: a directory, an image, or none (repeatable)\n"
	"      --base-only        with one file: skip FILE.homedirs and FILE.local\n"
	"  -m, --mode MODE        file mode: octal (0100644, 040755, 0) or one of f d l c b p s;\n"
	"                         default 0, which lets typed specs match any file\n"
	"  -v, --verbose          also print FILE:LINE of the deciding spec ('-' for none)\n"
	"      --batch            read \"MODE PATH\" records from standard input\n"
	"  -0, --null             with --batch: records end with NUL, not newline\n"
	"      --policy SEPOLICY  first check every context against this binary SELinux\n"
	"                         policy (libsepol); answer nothing if one is not valid\n"
	"      --seapp SEAPP[,...]  Android app data: the device's label for paths below\n"
	"                         /data/data/PKG, /data/user/N/PKG ... from these seapp_contexts\n"
	"      --packages LIST    ... and this packages.list (required with --seapp)\n"
	"  -h, --help             show this help";

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

int cmd_lookup(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "file-contexts", required_argument, NULL, 'S' },
		{ "base-only", no_argument, NULL, 'B' },
		{ "mode", required_argument, NULL, 'm' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "batch", no_argument, NULL, 'b' },
		{ "null", no_argument, NULL, '0' },
		{ "policy", required_argument, NULL, 'p' },
		{ "seapp", required_argument, NULL, 'A' },
		{ "packages", required_argument, NULL, 'K' },
		{ "android-root", required_argument, NULL, OPT_ANDROID_ROOT },
		{ "partition", required_argument, NULL, OPT_PARTITION },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct policy_opts po = { 0 };
	struct app_rules ar = { 0 };
	static struct out o;
	bool use_batch = false;
	const char *sepolicy = NULL;
	int delim = '\n', c;
	fc_set *set;
	static char obuf[1 << 16];

	while ((c = getopt_long(argc, argv, "S:m:v0h", opts, NULL)) != -1) {
		if (policy_opt(c, optarg, &po, "lookup", usage_text))
			continue;
		switch (c) {
		case 'v': o.verbose = true; break;
		case 'b': use_batch = true; break;
		case '0': delim = 0; break;
		case 'p': sepolicy = optarg; break;
		default: die_usage("lookup", usage_text);
		}
	}
	if (use_batch == (optind < argc)) {
		fprintf(stderr, "fclabel lookup: give PATHs or --batch, not %s\n",
			use_batch ? "both" : "neither");
		die_usage("lookup", usage_text);
	}
	if ((c = policy_opts_load("lookup", usage_text, &po, o.verbose, &set, &ar)) != EXIT_OK ||
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
			answer(&o, set, argv[i], po.mode, "");
	app_rules_free(&ar);
	fc_free(set);
	if (fflush(stdout) != 0) {
		perror("fclabel lookup: stdout");
		return EXIT_USAGE;
	}
	return o.errors ? EXIT_DIFFERS : EXIT_OK;
}
