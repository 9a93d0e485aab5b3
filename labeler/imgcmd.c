/* The options and flow that fclabel label and fclabel check share. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "fclabel.h"
#include "label.h"

const char label_usage[] =
	"fclabel label IMAGE -S FC[,FC...] [-a MOUNTPOINT] [-n] [-e PATH]... [-v] [--json FILE]\n"
	"                    [--strict] [--force] [--base-only]\n"
	"\n"
	"  -S, --file-contexts FC[,FC...]  file_contexts files, in order (repeatable)\n"
	"  -a, --mount-point DIR  the path the image is mounted at (e.g. /system)\n"
	"  -n, --dry-run          change nothing; count (and with -v list) what would change\n"
	"  -e, --exclude PATH     leave PATH and everything below it alone (repeatable)\n"
	"  -v, --verbose          print each change\n"
	"      --json FILE        write a JSON report of every change to FILE ('-': stdout)\n"
	"      --strict           a hard link whose paths want different labels is an error,\n"
	"                         found before anything is written\n"
	"      --force            write even if the superblock reports errors or needs recovery\n"
	"      --base-only        with one FC: skip FC.homedirs and FC.local\n"
	"  -h, --help             show this help";

const char check_usage[] =
	"fclabel check IMAGE -S FC[,FC...] [-a MOUNTPOINT] [-e PATH]... [--json FILE] [--base-only]\n"
	"\n"
	"  -S, --file-contexts FC[,FC...]  file_contexts files, in order (repeatable)\n"
	"  -a, --mount-point DIR  the path the image is mounted at (e.g. /system)\n"
	"  -e, --exclude PATH     leave PATH and everything below it out (repeatable)\n"
	"      --json FILE        write a JSON report to FILE ('-': stdout) instead of the list\n"
	"      --base-only        with one FC: skip FC.homedirs and FC.local\n"
	"  -h, --help             show this help";

/* "/a//b/" -> "/a/b"; NULL when not absolute. */
static char *clean_path(const char *p)
{
	size_t n = strlen(p), k = 0;
	char *o;

	if (p[0] != '/' || !(o = malloc(n + 1)))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '/' && k && o[k - 1] == '/')
			continue;
		o[k++] = p[i];
	}
	if (k > 1 && o[k - 1] == '/')
		k--;
	o[k] = 0;
	return o;
}

int image_command(int argc, char **argv, int mode)
{
	static const struct option opts[] = {
		{ "file-contexts", required_argument, NULL, 'S' },
		{ "mount-point", required_argument, NULL, 'a' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "exclude", required_argument, NULL, 'e' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "json", required_argument, NULL, 'j' },
		{ "strict", no_argument, NULL, 's' },
		{ "force", no_argument, NULL, 'f' },
		{ "base-only", no_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const bool check = mode == LM_CHECK;
	const char *cmd = check ? "check" : "label", *usage = check ? check_usage : label_usage;
	const char *shortopts = check ? "S:a:e:h" : "S:a:ne:vh";
	struct fcfiles files = { 0 };
	struct label_opts o = { .mode = (enum label_mode)mode, .cmd = cmd, .mountpoint = "", .progress = true };
	struct label_stats st;
	struct image img;
	const char *json = NULL;
	char *mp = NULL;
	unsigned flags = 0, imgflags = 0;
	int c, status = EXIT_USAGE;
	fc_set *set = NULL;

	while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
		switch (c) {
		case 'S':
			if (fcfiles_add(&files, optarg))
				goto out;
			break;
		case 'a':
			free(mp);
			mp = clean_path(optarg);
			if (!mp) {
				fprintf(stderr, "fclabel %s: -a '%s': not an absolute path\n", cmd, optarg);
				goto out;
			}
			if (!strcmp(mp, "/"))
				mp[0] = 0;
			break;
		case 'n': o.mode = LM_DRYRUN; break;
		case 'e': {
			char *p = clean_path(optarg), **nv;
			if (!p) {
				fprintf(stderr, "fclabel %s: -e '%s': not an absolute path\n", cmd, optarg);
				goto out;
			}
			nv = realloc(o.excludes, (o.nexcludes + 1) * sizeof(*nv));
			if (!nv) {
				free(p);
				goto out;
			}
			o.excludes = nv;
			o.excludes[o.nexcludes++] = p;
			break;
		}
		case 'v': o.verbose = true; break;
		case 'j': json = optarg; break;
		case 's':
			if (check)
				die_usage(cmd, usage);
			o.strict = true;
			break;
		case 'f':
			if (check)
				die_usage(cmd, usage);
			imgflags |= IMG_FORCE;
			break;
		case 'B': flags |= FC_BASE_ONLY; break;
		case 'h': printf("usage: %s\n", usage); status = EXIT_OK; goto out;
		default: die_usage(cmd, usage);
		}
	}
	if (optind + 1 != argc || !files.n) {
		fprintf(stderr, "fclabel %s: %s\n", cmd,
			!files.n ? "-S FILE_CONTEXTS is required" : "give exactly one IMAGE");
		die_usage(cmd, usage);
	}
	if (mp)
		o.mountpoint = mp;
	/* a policy with duplicate specs is refused, as setfiles refuses it */
	set = load_policy(cmd, &files, flags | FC_NO_DUPS);
	if (!set)
		goto out;
	if (json) {
		o.json = strcmp(json, "-") ? fopen(json, "w") : stdout;
		if (!o.json) {
			fprintf(stderr, "fclabel %s: --json %s: %m\n", cmd, json);
			goto out;
		}
	}
	if (check && !json)
		o.list = stdout;
	if (img_open(&img, argv[optind], o.mode == LM_LABEL ? IMG_RW | imgflags : 0, cmd))
		goto out;
	int rc = label_tree(&img, set, &o, &st);
	if (img_close(&img, cmd))
		rc = -1;
	FILE *sum = (json && !strcmp(json, "-")) || check ? stderr : stdout;
	fprintf(sum, "fclabel %s: %s: scanned %lu, %s %lu, unchanged %lu, no label %lu, "
		"conflicts %lu, errors %lu, warnings %lu, %.2f s\n", cmd, argv[optind], st.scanned,
		check ? "differ" : o.mode == LM_DRYRUN ? "would change" : "changed", st.changed,
		st.unchanged, st.nolabel, st.conflicts, st.errors, st.warnings, st.seconds);
	if (rc)
		status = EXIT_USAGE;
	else if (check)
		status = st.changed || st.errors ? EXIT_DIFFERS : EXIT_OK;
	else
		status = st.errors ? EXIT_DIFFERS : EXIT_OK;
out:
	if (o.json && o.json != stdout && fclose(o.json) != 0) {
		fprintf(stderr, "fclabel %s: --json %s: %m\n", cmd, json);
		status = EXIT_USAGE;
	}
	for (size_t i = 0; i < o.nexcludes; i++)
		free(o.excludes[i]);
	free(o.excludes);
	free(mp);
	fcfiles_free(&files);
	if (set)
		fc_free(set);
	return status;
}

