/* fclabel lookup: what file_contexts says about paths. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "fclabel.h"
#include "policy.h"

static const char usage_text[] =
	"fclabel lookup -S FC[,FC...] [--base-only] [--policy SEPOLICY] [-m MODE] [-v] PATH...\n"
	"       fclabel lookup -S FC[,FC...] [--base-only] [--policy SEPOLICY] --batch [-0] [-v] < RECORDS\n"
	"\n"
	"  -S, --file-contexts FC[,FC...]  file_contexts files, in order (repeatable)\n"
	"      --base-only        with one file: skip FILE.homedirs and FILE.local\n"
	"  -m, --mode MODE        file mode: octal (0100644, 040755, 0) or one of f d l c b p s;\n"
	"                         default 0, which lets typed specs match any file\n"
	"  -v, --verbose          also print FILE:LINE of the deciding spec ('-' for none)\n"
	"      --batch            read \"MODE PATH\" records from standard input\n"
	"  -0, --null             with --batch: records end with NUL, not newline\n"
	"      --policy SEPOLICY  first check every context against this binary SELinux\n"
	"                         policy (libsepol); answer nothing if one is not valid\n"
	"  -h, --help             show this help";

struct out {
	bool verbose;
	int errors;
};

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
		fprintf(stderr, "fclabel lookup: %s'%s': %s\n", where, path, strerror(rc));
		puts("<<error>>");
		o->errors++;
		return;
	}
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
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct policy_opts po = { 0 };
	struct out o = { 0 };
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
	if (!po.files.n) {
		fprintf(stderr, "fclabel lookup: -S FILE_CONTEXTS is required\n");
		die_usage("lookup", usage_text);
	}
	if (use_batch == (optind < argc)) {
		fprintf(stderr, "fclabel lookup: give PATHs or --batch, not %s\n",
			use_batch ? "both" : "neither");
		die_usage("lookup", usage_text);
	}
	set = load_policy("lookup", &po.files, po.flags);
	fcfiles_free(&po.files);
	if (!set)
		return EXIT_USAGE;
	if (sepolicy && (c = policy_check("lookup", sepolicy, set)) != EXIT_OK) {
		fc_free(set);
		return c;
	}
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	if (use_batch)
		batch(&o, set, delim);
	else
		for (int i = optind; i < argc; i++)
			answer(&o, set, argv[i], po.mode, "");
	fc_free(set);
	if (fflush(stdout) != 0) {
		perror("fclabel lookup: stdout");
		return EXIT_USAGE;
	}
	return o.errors ? EXIT_DIFFERS : EXIT_OK;
}
