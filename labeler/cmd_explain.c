/* fclabel explain: every spec that matches a path, in the order a lookup tries them. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "fclabel.h"

static const char usage_text[] =
	"fclabel explain -S FC[,FC...] [--base-only] [-m MODE] PATH...\n"
	"\n"
	"  -S, --file-contexts FC[,FC...]  file_contexts files, in order (repeatable)\n"
	"      --base-only        with one file: skip FILE.homedirs and FILE.local\n"
	"  -m, --mode MODE        file mode: octal or one of f d l c b p s (default 0: any type)\n"
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

int cmd_explain(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "file-contexts", required_argument, NULL, 'S' },
		{ "base-only", no_argument, NULL, 'B' },
		{ "mode", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct policy_opts po = { 0 };
	int c, status = EXIT_OK;

	while ((c = getopt_long(argc, argv, "S:m:h", opts, NULL)) != -1) {
		if (!policy_opt(c, optarg, &po, "explain", usage_text))
			die_usage("explain", usage_text);
	}
	if (!po.files.n || optind >= argc) {
		fprintf(stderr, "fclabel explain: %s\n",
			!po.files.n ? "-S FILE_CONTEXTS is required" : "give at least one PATH");
		die_usage("explain", usage_text);
	}
	fc_set *set = load_policy("explain", &po.files, po.flags);
	fcfiles_free(&po.files);
	mode_t mode = po.mode;
	if (!set)
		return EXIT_USAGE;
	for (int i = optind; i < argc; i++) {
		struct shown sh = { 0 };
		struct fc_result r;
		if (argv[i][0] != '/') {
			fprintf(stderr, "fclabel explain: '%s': not an absolute path\n", argv[i]);
			status = EXIT_DIFFERS;
			continue;
		}
		printf("%s (mode 0%o):\n", argv[i], (unsigned)mode);
		int rc = fc_explain(set, argv[i], mode, show, &sh);
		if (!rc)
			rc = fc_lookup(set, argv[i], mode, &r);
		if (rc) {
			fprintf(stderr, "fclabel explain: '%s': %s\n", argv[i], strerror(rc));
			status = EXIT_DIFFERS;
			continue;
		}
		if (!sh.n)
			printf("  no spec matches: no label\n");
		else if (r.status == FC_NONE)
			printf("  => <<none>>: the file is left unlabeled\n");
		else
			printf("  => %s\n", r.context);
		/* the index and the plain scan must agree; say so loudly if they ever do not */
		if (sh.n && r.spec == NULL) {
			fprintf(stderr, "fclabel explain: internal disagreement on '%s'\n", argv[i]);
			status = EXIT_USAGE;
		}
	}
	fc_free(set);
	return status;
}
