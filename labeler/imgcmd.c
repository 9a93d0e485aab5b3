/* The options and flow that fclabel label, check and relabel share. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fclabel.h"
#include "label.h"
#include "policy.h"

const char label_usage[] =
	"fclabel label IMAGE|DIR -S FC[,FC...] [-a MOUNTPOINT] [-n] [-e PATH]... [-v] [--json FILE]\n"
	"                    [--strict] [--force] [--base-only] [-z UNDO_FILE] [-o OUT] [--no-sync]\n"
	"                    [--atomic|--in-place] [--policy SEPOLICY] [--cross-mounts]\n"
	"\n"
	"  IMAGE is an ext2/3/4 image or block device; DIR a mounted tree, labeled in place\n"
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
	"  -z, --undo FILE        record an undo file that e2undo replays (raw images, devices)\n"
	"  -o, --output OUT       write the result to OUT instead of over the image\n"
	"      --no-sync          do not wait for the result to reach the disk (faster; safe\n"
	"                         against a killed run, not against a power cut)\n"
	"      --atomic           raw image: label a copy beside it and rename it over the\n"
	"                         image when complete (default with 128-byte inodes)\n"
	"      --in-place         raw image: write in place, even with 128-byte inodes\n"
	"      --policy SEPOLICY  first check every context against this binary SELinux\n"
	"                         policy (libsepol); stop if one is not valid\n"
	"      --cross-mounts     DIR: also enter the file systems mounted below it\n"
	"  -h, --help             show this help";

const char check_usage[] =
	"fclabel check IMAGE|DIR -S FC[,FC...] [-a MOUNTPOINT] [-e PATH]... [--json FILE] [--base-only]\n"
	"                    [--policy SEPOLICY] [--cross-mounts]\n"
	"\n"
	"  -S, --file-contexts FC[,FC...]  file_contexts files, in order (repeatable)\n"
	"  -a, --mount-point DIR  the path the image is mounted at (e.g. /system)\n"
	"  -e, --exclude PATH     leave PATH and everything below it out (repeatable)\n"
	"      --json FILE        write a JSON report to FILE ('-': stdout) instead of the list\n"
	"      --base-only        with one FC: skip FC.homedirs and FC.local\n"
	"      --policy SEPOLICY  first check every context against this binary SELinux\n"
	"                         policy (libsepol); stop if one is not valid\n"
	"      --cross-mounts     DIR: also enter the file systems mounted below it\n"
	"  -h, --help             show this help";

const char relabel_usage[] =
	"fclabel relabel IMAGE|DIR --from OLD_FC[,...]|none --to NEW_FC[,...] [-a MOUNTPOINT]\n"
	"                      [-e PATH]... [-v] [--plan] [--verify] [--json FILE] [--force]\n"
	"                      [--base-only] [-z UNDO_FILE] [-o OUT] [--no-sync]\n"
	"                      [--atomic|--in-place] [--policy SEPOLICY] [--cross-mounts]\n"
	"\n"
	"  --from OLD_FC[,...]    the file_contexts the image was labeled with ('none': label all)\n"
	"  --to NEW_FC[,...]      the file_contexts to label it with now\n"
	"  -a, --mount-point DIR  the path the image is mounted at (e.g. /system)\n"
	"  -e, --exclude PATH     leave PATH and everything below it alone (repeatable)\n"
	"  -v, --verbose          print each change\n"
	"      --plan             change nothing; list each file that would change, its old and\n"
	"                         new label and the deciding spec\n"
	"      --verify           after relabeling, check every file and fail on any difference\n"
	"      --json FILE        write a JSON report of every change to FILE ('-': stdout)\n"
	"      --force            write even if the superblock reports errors or needs recovery\n"
	"      --base-only        with one FC: skip FC.homedirs and FC.local\n"
	"  -z, --undo FILE        record an undo file that e2undo replays (raw images, devices)\n"
	"  -o, --output OUT       write the result to OUT instead of over the image\n"
	"      --no-sync          do not wait for the result to reach the disk (faster; safe\n"
	"                         against a killed run, not against a power cut)\n"
	"      --atomic           raw image: label a copy beside it and rename it over the\n"
	"                         image when complete (default with 128-byte inodes)\n"
	"      --in-place         raw image: write in place, even with 128-byte inodes\n"
	"      --policy SEPOLICY  first check every context against this binary SELinux\n"
	"                         policy (libsepol); stop if one is not valid\n"
	"      --cross-mounts     DIR: also enter the file systems mounted below it\n"
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
		{ "policy", required_argument, NULL, 'p' },
		{ "from", required_argument, NULL, 'O' },
		{ "to", required_argument, NULL, 'T' },
		{ "plan", no_argument, NULL, 'P' },
		{ "verify", no_argument, NULL, 'V' },
		{ "undo", required_argument, NULL, 'z' },
		{ "output", required_argument, NULL, 'o' },
		{ "no-sync", no_argument, NULL, 'Y' },
		{ "cross-mounts", no_argument, NULL, 'X' },
		{ "atomic", no_argument, NULL, 'R' },
		{ "in-place", no_argument, NULL, 'I' },
		{ 0 }
	};
	const bool check = mode == LM_CHECK, relabel = mode == LM_RELABEL;
	const char *cmd = check ? "check" : relabel ? "relabel" : "label";
	const char *usage = check ? check_usage : relabel ? relabel_usage : label_usage;
	const char *shortopts = check ? "S:a:e:h" : relabel ? "a:e:vz:o:h" : "S:a:ne:vz:o:h";
	/* the long options each command takes, beyond the shared ones */
	const char *own = check ? "" : relabel ? "OTPVfzoYRI" : "sfzoYRI";
	struct img_params ip = { 0 };
	struct fcfiles files = { 0 }, from = { 0 };
	bool from_none = false, verify = false;
	fc_set *oldset = NULL;
	struct fc_diff *diff = NULL;
	struct label_opts o = { .mode = relabel ? LM_LABEL : (enum label_mode)mode, .cmd = cmd,
				.mountpoint = "", .progress = true };
	struct label_stats st;
	struct image img;
	const char *json = NULL, *sepolicy = NULL;
	char *mp = NULL;
	unsigned flags = 0, imgflags = 0;
	int c, status = EXIT_USAGE;
	bool tree = false;
	fc_set *set = NULL;

	while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
		if (strchr("OTPVsfzoYRI", c) && !strchr(own, c))
			die_usage(cmd, usage);
		switch (c) {
		case 'O':
			if (!strcmp(optarg, "none"))
				from_none = true;
			else if (fcfiles_add(&from, optarg))
				goto out;
			break;
		case 'T':
			if (fcfiles_add(&files, optarg))
				goto out;
			break;
		case 'P': o.mode = LM_DRYRUN; o.verbose = true; break;
		case 'V': verify = true; break;
		case 'z': ip.undo = optarg; break;
		case 'o': ip.output = optarg; break;
		case 'Y': ip.no_sync = true; break;
		case 'R': ip.replace = REPLACE_ALWAYS; break;
		case 'I': ip.replace = REPLACE_NEVER; break;
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
		case 'p': sepolicy = optarg; break;
		case 's': o.strict = true; break;
		case 'X': o.cross_mounts = true; break;
		case 'f': imgflags |= IMG_FORCE; break;
		case 'B': flags |= FC_BASE_ONLY; break;
		case 'h': printf("usage: %s\n", usage); status = EXIT_OK; goto out;
		default: die_usage(cmd, usage);
		}
	}
	if (optind + 1 != argc || !files.n || (relabel && !from.n && !from_none)) {
		fprintf(stderr, "fclabel %s: %s\n", cmd,
			relabel && !files.n ? "--to FILE_CONTEXTS is required"
			: relabel && !from.n && !from_none ? "--from FILE_CONTEXTS (or none) is required"
			: !files.n ? "-S FILE_CONTEXTS is required" : "give exactly one IMAGE");
		die_usage(cmd, usage);
	}
	if (mp)
		o.mountpoint = mp;
	/* a directory: the live tree below it (tree.c) */
	struct stat sb;
	tree = !stat(argv[optind], &sb) && S_ISDIR(sb.st_mode);
	if (tree && (ip.undo || ip.output || ip.no_sync || ip.replace || (imgflags & IMG_FORCE))) {
		fprintf(stderr, "fclabel %s: %s is a directory: %s applies to images only\n", cmd,
			argv[optind], ip.undo ? "-z" : ip.output ? "-o" : ip.no_sync ? "--no-sync"
			: ip.replace == REPLACE_ALWAYS ? "--atomic" : ip.replace ? "--in-place"
			: "--force");
		goto out;
	}
	if (!tree && o.cross_mounts) {
		fprintf(stderr, "fclabel %s: %s is not a directory: --cross-mounts applies to "
			"directories only\n", cmd, argv[optind]);
		goto out;
	}
	/* a policy with duplicate specs is refused, as setfiles refuses it */
	set = load_policy(cmd, &files, flags | FC_NO_DUPS);
	if (!set)
		goto out;
	/* --policy: every context checked before the image (or a report) is opened */
	if (sepolicy && (status = policy_check(cmd, sepolicy, set)) != EXIT_OK)
		goto out;
	status = EXIT_USAGE;
	if (from.n) {
		int drc;
		if (!(oldset = load_policy(cmd, &from, flags)))
			goto out;
		if ((drc = fc_diff(oldset, set, &diff))) {
			fprintf(stderr, "fclabel %s: comparing the policies: %s\n", cmd, strerror(drc));
			goto out;
		}
		o.diff = diff;
	}
	if (json) {
		o.json = strcmp(json, "-") ? fopen(json, "w") : stdout;
		if (!o.json) {
			fprintf(stderr, "fclabel %s: --json %s: %m\n", cmd, json);
			goto out;
		}
	}
	if (check && !json)
		o.list = stdout;
	if (!tree &&
	    img_open(&img, argv[optind], o.mode == LM_LABEL ? IMG_RW | imgflags : 0, &ip, cmd))
		goto out;
	if (o.diff && !(tree ? dir_is_labeled(argv[optind]) : image_is_labeled(&img))) {
		fprintf(stderr, "fclabel %s: %s has no labels: labeling every file\n", cmd,
			argv[optind]);
		o.diff = NULL;
	}
	int rc = tree ? label_dir(argv[optind], set, &o, &st) : label_tree(&img, set, &o, &st);
	if (!rc && verify) {
		/* the full check, on what was just written */
		struct label_opts vo = o;
		struct label_stats vst;
		vo.mode = LM_CHECK;
		vo.diff = NULL;
		vo.json = NULL;
		vo.list = stderr;
		vo.cmd = "relabel --verify";
		if ((tree ? label_dir(argv[optind], set, &vo, &vst) : label_tree(&img, set, &vo, &vst)) ||
		    vst.changed || vst.errors) {
			fprintf(stderr, "fclabel %s: --verify: %lu file(s) differ from a full label\n",
				cmd, vst.changed);
			st.errors += vst.changed + vst.errors;
		} else {
			fprintf(stderr, "fclabel %s: --verify: all %lu files have the label %s wants\n",
				cmd, vst.scanned, "the new policy");
		}
	}
	if (rc && !tree)
		img_abandon(&img);
	if (!tree && img_close(&img, cmd))
		rc = -1;
	FILE *sum = (json && !strcmp(json, "-")) || check ? stderr : stdout;
	fprintf(sum, "fclabel %s: %s: scanned %lu, %s %lu, unchanged %lu, no label %lu, "
		"conflicts %lu, errors %lu, warnings %lu, %.2f s\n", cmd, argv[optind], st.scanned,
		check ? "differ" : o.mode == LM_DRYRUN ? "would change" : "changed", st.changed,
		st.unchanged, st.nolabel, st.conflicts, st.errors, st.warnings, st.seconds);
	if (relabel)
		fprintf(sum, "fclabel %s: directories entered %lu, skipped (no change can reach them) "
			"%lu%s\n", cmd, st.dirs, st.dirs_skipped,
			o.diff ? "" : " (a full label: no old policy, or no labels on the image)");
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
	fcfiles_free(&from);
	fc_diff_free(diff);
	if (oldset)
		fc_free(oldset);
	if (set)
		fc_free(set);
	return status;
}

