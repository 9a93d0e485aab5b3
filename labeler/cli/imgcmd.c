/* The options and flow that fclabel label, check and relabel share. */
#include <errno.h>
#include <et/com_err.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define DDI_HELP                                                                                   \
	"      --data-data-ignore[=yes|no]  -a /data: the device's libselinux is built with\n"   \
	"                         release_selinux_data_data_ignore (its boot walk labels\n"      \
	"                         /data/data, not what is in it); default: what --android-root's\n"\
	"                         /system/etc/build_flags.json says, else no\n"

#define AROOT_HELP                                                                                 \
	"      --android-root ROOT  instead of -S: the device's own file_contexts, and its\n"   \
	"                         seapp_contexts for -a /data or with --packages, found in\n"    \
	"                         ROOT as the device finds them: a mounted root, extracted\n"    \
	"                         partitions or NAME.img images\n"                               \
	"      --partition NAME=PATH  where partition NAME (system, system_ext, product, vendor,\n"\
	"                         odm) is: a directory, an image, or none (repeatable)\n"

const char label_usage[] =
	"fclabel label IMAGE|DIR -S FC[,FC...]|--android-root ROOT [--partition NAME=PATH]...\n"
	"                    [-a MOUNTPOINT [--force-mount-point]] [-n] [-e PATH]... [-v] [--json FILE]\n"
	"                    [--strict] [--force] [--base-only] [-z UNDO_FILE] [-o OUT] [--no-sync]\n"
	"                    [--atomic|--in-place] [--no-crash-safety] [--policy SEPOLICY]\n"
	"                    [--cross-mounts]\n"
	"                    [--seapp SEAPP[,SEAPP...] [--packages FILE]] [--digests]\n"
	"                    [--as-device [--ignore-digests]|--full-label]\n"
	"                    [--data-data-ignore[=yes|no]] [--lock[=yes|no|nonblock]] [-T N]\n"
	"\n"
	"  IMAGE is an ext2/3/4 image or block device; DIR a mounted tree, labeled in place\n"
	"\n"
	"  -S, --file-contexts FC[,FC...]  file_contexts files, in order (repeatable)\n"
	AROOT_HELP
	"  -a, --mount-point DIR  the path the image is mounted at (e.g. /system; default: the one\n"
	"                         the image names, else /)\n"
	"      --force-mount-point  -a even where the image says it is mounted elsewhere\n"
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
	"      --no-crash-safety  in place: write straight to the image, with no journal\n"
	"                         transaction or crash order (a killed run can leave it\n"
	"                         inconsistent; for pipelines that rebuild on failure)\n"
	"      --policy SEPOLICY  first check every context against this binary SELinux\n"
	"                         policy (libsepol); stop if one is not valid\n"
	"      --cross-mounts     DIR: also enter the file systems mounted below it\n"
	"  -T, --threads N        DIR: walk it with N threads (default: one per CPU, up to 8;\n"
	"                         one with --seapp or --digests); the result is the same\n"
	"      --seapp SEAPP[,...]  Android userdata: app data labeled from these seapp_contexts\n"
	"                         (plat, system_ext, product, vendor, odm order) as a device does\n"
	"      --packages FILE    the packages.list to use (default: the image's\n"
	"                         /data/system/packages.list)\n"
	"      --digests          write security.sehash on the directories restorecon checks\n"
	"      --as-device        a device's /data (-a /data, --seapp): change only what its own\n"
	"                         walks would (init at boot, vold and installd at unlock), where\n"
	"                         they would: not below a matching digest, nor below a package\n"
	"                         directory whose label is right (implies --digests)\n"
	"      --ignore-digests   with --as-device: walk below matching digests too\n"
	"      --full-label       a device's /data (it carries Android's digests): label it all\n"
	"                         the same, stripping the levels the device keeps (without it,\n"
	"                         or --as-device, such a /data is refused)\n"
	DDI_HELP
	"      --lock[=yes|no|nonblock]  take a BSD lock on the image (exclusive to write,\n"
	"                         shared to read): wait for it (yes, the default), refuse a held\n"
	"                         one (nonblock), or take none (no)\n"
	"  -h, --help             show this help";

const char check_usage[] =
	"fclabel check IMAGE|DIR -S FC[,FC...]|--android-root ROOT [--partition NAME=PATH]...\n"
	"                    [-a MOUNTPOINT [--force-mount-point]] [-e PATH]... [--json FILE]\n"
	"                    [--base-only] [--policy SEPOLICY] [--cross-mounts] [-v]\n"
	"                    [--seapp SEAPP[,SEAPP...] [--packages FILE]] [--digests]\n"
	"                    [--as-device [--ignore-digests]] [--data-data-ignore[=yes|no]]\n"
	"                    [--lock[=yes|no|nonblock]] [-T N]\n"
	"\n"
	"  -S, --file-contexts FC[,FC...]  file_contexts files, in order (repeatable)\n"
	AROOT_HELP
	"  -a, --mount-point DIR  the path the image is mounted at (e.g. /system; default: the one\n"
	"                         the image names, else /)\n"
	"      --force-mount-point  -a even where the image says it is mounted elsewhere\n"
	"  -e, --exclude PATH     leave PATH and everything below it out (repeatable)\n"
	"      --json FILE        write a JSON report to FILE ('-': stdout) instead of the list\n"
	"      --base-only        with one FC: skip FC.homedirs and FC.local\n"
	"      --policy SEPOLICY  first check every context against this binary SELinux\n"
	"                         policy (libsepol); stop if one is not valid\n"
	"      --cross-mounts     DIR: also enter the file systems mounted below it\n"
	"  -T, --threads N        DIR: walk it with N threads (default: one per CPU, up to 8;\n"
	"                         one with --seapp or --digests); the result is the same\n"
	"  -v, --verbose          name what is left as it is (--seapp)\n"
	"      --seapp SEAPP[,...]  Android userdata: app data checked from these seapp_contexts\n"
	"                         (plat, system_ext, product, vendor, odm order) as a device does\n"
	"      --packages FILE    the packages.list to use (default: the image's\n"
	"                         /data/system/packages.list)\n"
	"      --digests          also list missing or stale security.sehash on the directories restorecon checks\n"
	"      --as-device        a device's /data (-a /data, --seapp): list only what its own\n"
	"                         walks would change (implies --digests); without it, on a /data\n"
	"                         that carries Android's digests, the summary counts the\n"
	"                         differences that are levels the device keeps\n"
	"      --ignore-digests   with --as-device: walk below matching digests too\n"
	DDI_HELP
	"      --lock[=yes|no|nonblock]  take a BSD lock on the image (exclusive to write,\n"
	"                         shared to read): wait for it (yes, the default), refuse a held\n"
	"                         one (nonblock), or take none (no)\n"
	"  -h, --help             show this help";

const char relabel_usage[] =
	"fclabel relabel IMAGE|DIR --from OLD_FC[,...]|none --to NEW_FC[,...]|--android-root ROOT\n"
	"                      [--partition NAME=PATH]... [-a MOUNTPOINT [--force-mount-point]]\n"
	"                      [-e PATH]... [-v] [--plan] [--verify] [--json FILE] [--force]\n"
	"                      [--base-only] [-z UNDO_FILE] [-o OUT] [--no-sync]\n"
	"                      [--atomic|--in-place] [--no-crash-safety] [--policy SEPOLICY]\n"
	"                      [--cross-mounts]\n"
	"                      [--seapp NEW_SEAPP[,...] [--from-seapp OLD_SEAPP[,...]]\n"
	"                      [--packages FILE]] [--digests] [--full-label]\n"
	"                      [--data-data-ignore[=yes|no]] [--lock[=yes|no|nonblock]]\n"
	"\n"
	"  --from OLD_FC[,...]    the file_contexts the image was labeled with ('none': label all)\n"
	"  --to NEW_FC[,...]      the file_contexts to label it with now\n"
	"      --android-root ROOT  instead of --to: the device's own file_contexts, and its\n"
	"                         seapp_contexts for -a /data or with --packages (the new\n"
	"                         ones), found in ROOT as the device finds them\n"
	"      --partition NAME=PATH  where partition NAME (system, system_ext, product, vendor,\n"
	"                         odm) is: a directory, an image, or none (repeatable)\n"
	"  -a, --mount-point DIR  the path the image is mounted at (e.g. /system; default: the one\n"
	"                         the image names, else /)\n"
	"      --force-mount-point  -a even where the image says it is mounted elsewhere\n"
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
	"      --no-crash-safety  in place: write straight to the image, with no journal\n"
	"                         transaction or crash order (a killed run can leave it\n"
	"                         inconsistent; for pipelines that rebuild on failure)\n"
	"      --policy SEPOLICY  first check every context against this binary SELinux\n"
	"                         policy (libsepol); stop if one is not valid\n"
	"      --cross-mounts     DIR: also enter the file systems mounted below it\n"
		"      --seapp SEAPP[,...]  Android userdata: app data labeled from these seapp_contexts\n"
	"                         (plat, system_ext, product, vendor, odm order): the new ones\n"
	"      --packages FILE    the packages.list to use (default: the image's\n"
	"                         /data/system/packages.list)\n"
	"      --digests          write security.sehash on the directories restorecon checks\n"
	"      --from-seapp OLD_SEAPP[,...]  the seapp_contexts the image was labeled with: only\n"
	"                         packages whose answer changed are walked whole (without it,\n"
	"                         every package is)\n"
	"      --full-label       a device's /data (it carries Android's digests): relabel it all\n"
	"                         the same, stripping the levels the device keeps where the\n"
	"                         change reaches (without it, such a /data is refused: see AS\n"
	"                         THE DEVICE in fclabel-label(1))\n"
	DDI_HELP
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

/* One run of label, check or relabel: its options, then what it loaded and opened. */
struct imgcmd {
	const char *cmd, *usage;
	bool check, relabel, tree, from_none, verify;
	const char *target, *json, *sepolicy;
	struct img_params ip;
	struct fcfiles files, from, seapp, from_seapp;
	const char *packages;      /* --packages */
	struct aroot_args aroot;   /* --android-root, --partition: the (new) policy is the device's */
	struct policy_origins pf;    /* ... read from these files */
	seapp_set *sa, *old_sa;
	pkg_list *pkgs;
	struct label_opts o;
	char *mp;
	unsigned flags, imgflags;
	fc_set *set, *oldset;
	struct fc_diff *diff;
	struct image img;
	bool img_open;
	struct rpt_file rpt; /* --json FILE */
	bool json_head;    /* the report's first fields are written */
	bool json_events;  /* ... and its events array opened */
	unsigned long events; /* the events in it */
	int stage;         /* what failed (STAGE_*), 0 when nothing did */
	char said[4200];   /* ... and what was said about it (rpt_captured) */
	struct label_stats st; /* the walk's counts (zero when there was none) */
	char *output;      /* -o naming a folder: the path inside it */
	bool full_label;   /* --full-label: a device's /data labeled all the same */
	int ddi;           /* --data-data-ignore: -1 not given, 0 or 1 */
	char digested_at[1024]; /* check: a device's /data, where its digests were found */
	struct img_identity id; /* what the image says of itself (identify.c) */
	bool force_mp;     /* --force-mount-point */
};

/* Where a run stopped, for the report's summary.failure (fclabel-report(5)). */
enum stage { STAGE_NONE, STAGE_ARGUMENTS, STAGE_POLICY, STAGE_MOUNT_POINT, STAGE_TARGET,
	     STAGE_WALK, STAGE_WRITE };
static const char *const stage_names[] = { "", "arguments", "policy", "mount-point", "target",
					   "walk", "write" };

/* What became of the target, for the summary and the report. */
enum outcome {
	OUT_WRITTEN,   /* every change is on disk */
	OUT_NOTHING,   /* the run failed or was interrupted, and nothing was written */
	OUT_PARTIAL,   /* ... in place: what was written before stays */
	OUT_CHECKED,   /* check: nothing written, by design */
	OUT_DRY_RUN,
};
static const char *const outcome_names[] = { "written", "not-written", "partly-written",
					     "checked", "dry-run" };

static const struct option image_opts[] = {
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
	{ "to", required_argument, NULL, 'U' },
	{ "threads", required_argument, NULL, 'T' },
	{ "plan", no_argument, NULL, 'P' },
	{ "verify", no_argument, NULL, 'V' },
	{ "undo", required_argument, NULL, 'z' },
	{ "output", required_argument, NULL, 'o' },
	{ "no-sync", no_argument, NULL, 'Y' },
	{ "cross-mounts", no_argument, NULL, 'X' },
	{ "atomic", no_argument, NULL, 'R' },
	{ "in-place", no_argument, NULL, 'I' },
	{ "no-crash-safety", no_argument, NULL, 'N' },
	{ "seapp", required_argument, NULL, 'A' },
	{ "from-seapp", required_argument, NULL, 'F' },
	{ "packages", required_argument, NULL, 'K' },
	{ "digests", no_argument, NULL, 'D' },
	{ "lock", optional_argument, NULL, 'L' },
	{ "as-device", no_argument, NULL, 'G' },
	{ "ignore-digests", no_argument, NULL, 'W' },
	{ "full-label", no_argument, NULL, 'Q' },
	{ "data-data-ignore", optional_argument, NULL, 'J' },
	{ "android-root", required_argument, NULL, OPT_ANDROID_ROOT },
	{ "partition", required_argument, NULL, OPT_PARTITION },
	{ "force-mount-point", no_argument, NULL, 'M' },
	{ 0 }
};

/* Bad options: the usage's first line; -1 (the run stops with EXIT_USAGE, and its report). */
static int usage_error(const struct imgcmd *c)
{
	usage_hint(c->cmd, c->usage);
	return -1;
}

/* -a and -e: a clean absolute path, or NULL after saying why. */
static char *path_arg(const struct imgcmd *c, int opt, const char *arg)
{
	char *p = clean_path(arg);
	if (!p)
		fprintf(stderr, "fclabel %s: -%c '%s': not an absolute path\n", c->cmd, opt, arg);
	return p;
}

static int add_exclude(struct imgcmd *c, const char *arg)
{
	char *p = path_arg(c, 'e', arg), **nv;
	if (!p)
		return -1;
	nv = realloc(c->o.excludes, (c->o.nexcludes + 1) * sizeof(*nv));
	if (!nv) {
		free(p);
		return -1;
	}
	c->o.excludes = nv;
	c->o.excludes[c->o.nexcludes++] = p;
	return 0;
}

/* One option; -1 to stop with EXIT_USAGE, 1 for --help. */
static int take_option(struct imgcmd *c, int opt, const char *arg)
{
	switch (opt) {
	case 'O':
		if (!strcmp(arg, "none"))
			c->from_none = true;
		else if (fcfiles_add(&c->from, arg))
			return -1;
		break;
	case 'S': case 'U':
		if (fcfiles_add(&c->files, arg))
			return -1;
		break;
	case 'A':
		if (fcfiles_add(&c->seapp, arg))
			return -1;
		break;
	case 'F':
		if (fcfiles_add(&c->from_seapp, arg))
			return -1;
		break;
	case 'K': c->packages = arg; break;
	case OPT_ANDROID_ROOT: c->aroot.root = arg; break;
	case OPT_PARTITION:
		if (!aroot_partition(&c->aroot, c->cmd, arg))
			return -1;
		break;
	case 'L':
		if (!arg || !strcmp(arg, "yes"))
			c->ip.lock = LOCK_WAIT;
		else if (!strcmp(arg, "no"))
			c->ip.lock = LOCK_NONE;
		else if (!strcmp(arg, "nonblock"))
			c->ip.lock = LOCK_NONBLOCK;
		else {
			fprintf(stderr, "fclabel %s: --lock=%s: want yes, no or nonblock\n", c->cmd, arg);
			return usage_error(c);
		}
		break;
	case 'D': c->o.digests = true; break;
	case 'Q': c->full_label = true; break;
	case 'J':
		if (!arg || !strcmp(arg, "yes"))
			c->ddi = 1;
		else if (!strcmp(arg, "no"))
			c->ddi = 0;
		else {
			fprintf(stderr, "fclabel %s: --data-data-ignore=%s: want yes or no\n",
				c->cmd, arg);
			die_usage(c->cmd, c->usage);
		}
		break;
	case 'G': c->o.device = true; break;
	case 'W': c->o.ignore_digests = true; break;
	case 'P': c->o.mode = LM_DRYRUN; c->o.verbose = true; break;
	case 'V': c->verify = true; break;
	case 'z': c->ip.undo = arg; break;
	case 'o': c->ip.output = arg; break;
	case 'Y': c->ip.no_sync = true; break;
	case 'R': c->ip.replace = REPLACE_ALWAYS; break;
	case 'I': c->ip.replace = REPLACE_NEVER; break;
	case 'N': c->ip.unsafe = true; break;
	case 'a':
		free(c->mp);
		if (!(c->mp = path_arg(c, 'a', arg)))
			return -1;
		if (!strcmp(c->mp, "/"))
			c->mp[0] = 0;
		break;
	case 'M': c->force_mp = true; break;
	case 'n': c->o.mode = LM_DRYRUN; break;
	case 'e': return add_exclude(c, arg);
	case 'v': c->o.verbose = true; break;
	case 'j': c->json = arg; break;
	case 'p': c->sepolicy = arg; break;
	case 's': c->o.strict = true; break;
	case 'X': c->o.cross_mounts = true; break;
	case 'T': {
		char *end;
		unsigned long n = strtoul(arg, &end, 10);
		if (!*arg || *end || n < 1 || n > 256) {
			fprintf(stderr, "fclabel %s: --threads '%s': want a number from 1 to 256\n",
				c->cmd, arg);
			return usage_error(c);
		}
		c->o.threads = (unsigned)n;
		break;
	}
	case 'f': c->imgflags |= IMG_FORCE; break;
	case 'B': c->flags |= FC_BASE_ONLY; break;
	case 'h': printf("usage: %s\n", c->usage); return 1;
	default: return usage_error(c);
	}
	return 0;
}

/* With --android-root, the device's seapp_contexts are wanted: for /data, or with --packages. */
static bool aroot_seapp(const struct imgcmd *c)
{
	return (c->mp && !strcmp(c->mp, ANDROID_DATA)) || c->packages;
}

/* --as-device: a device's /data, with its seapp_contexts; it implies --digests. */
static int device_options(struct imgcmd *c)
{
	const char *why = NULL;

	if (c->o.ignore_digests && !c->o.device)
		why = "--ignore-digests goes with --as-device";
	else if (c->o.device && strcmp(c->o.mountpoint, ANDROID_DATA))
		why = "--as-device follows a device's own walks of its /data: give -a /data";
	else if (c->o.device && !c->seapp.n && !aroot_given(&c->aroot))
		why = "--as-device labels app data as the device does: give the device's "
		      "seapp_contexts (--seapp SEAPP[,SEAPP...], or --android-root ROOT)";
	else if (c->o.device && c->full_label)
		why = "--as-device and --full-label: give one (the device's walks, or a full "
		      "label)";
	if (why) {
		fprintf(stderr, "fclabel %s: %s\n", c->cmd, why);
		return usage_error(c);
	}
	if (c->o.device)
		c->o.digests = true;
	return 0;
}

static int parse_options(struct imgcmd *c, int argc, char **argv)
{
	const char *shortopts = c->check ? "S:a:e:vT:h" : c->relabel ? "a:e:vz:o:h" : "S:a:ne:vz:o:T:h";
	/* the long options each command takes, beyond the shared ones */
	const char *own = c->check ? "TGW" : c->relabel ? "OUPVfzoYRIFNQ" : "sfzoYRITGWNQ";
	struct stat sb;
	int opt, r;

	c->ddi = -1;
	while ((opt = getopt_long(argc, argv, shortopts, image_opts, NULL)) != -1) {
		if (opt < 256 && strchr("OUPVsfzoYRIFTGWNQ", opt) && !strchr(own, opt)) {
			if (opt == 'G' || opt == 'W')
				fprintf(stderr, "fclabel %s: --%s is for label and check (a relabel is "
					"told what changed; --as-device finds it from the digests)\n",
					c->cmd, opt == 'G' ? "as-device" : "ignore-digests");
			return usage_error(c);
		}
		if ((r = take_option(c, opt, optarg)))
			return r;
	}
	bool aroot = aroot_given(&c->aroot);
	if (optind + 1 != argc || (!c->files.n && !aroot) ||
	    (c->relabel && !c->from.n && !c->from_none)) {
		fprintf(stderr, "fclabel %s: %s\n", c->cmd,
			c->relabel && !c->files.n && !aroot
				? "--to FILE_CONTEXTS (or --android-root ROOT) is required"
			: c->relabel && !c->from.n && !c->from_none
				? "--from FILE_CONTEXTS (or none) is required"
			: !c->files.n && !aroot ? "-S FILE_CONTEXTS (or --android-root ROOT) is required"
			: "give exactly one IMAGE");
		return usage_error(c);
	}
	c->target = argv[optind];
	c->tree = !stat(c->target, &sb) && S_ISDIR(sb.st_mode); /* a directory: a live tree */
	if (c->mp)
		c->o.mountpoint = c->mp;
	if (aroot && (c->files.n || c->seapp.n)) {
		fprintf(stderr, "fclabel %s: --android-root takes the file_contexts and seapp_contexts "
			"from the device: %s cannot go with it\n", c->cmd,
			c->files.n ? (c->relabel ? "--to" : "-S") : "--seapp");
		return usage_error(c);
	}
	if (!c->seapp.n && !aroot && (c->packages || c->from_seapp.n)) {
		fprintf(stderr, "fclabel %s: %s goes with --seapp\n", c->cmd,
			c->packages ? "--packages" : "--from-seapp");
		return usage_error(c);
	}
	if (aroot && c->from_seapp.n && !aroot_seapp(c)) {
		fprintf(stderr, "fclabel %s: --from-seapp goes with app data rules: with "
			"--android-root, -a /data or --packages\n", c->cmd);
		return usage_error(c);
	}
	return device_options(c);
}

/*
 * A directory other than / is labeled as the path it has on the system it belongs to, which
 * only the caller knows: -a names it. Without -a, `fclabel label /etc` would label /etc as the
 * root of a system (root_t, and /etc/rc2.d as /rc2.d), which on a running system breaks it.
 */
static int check_tree_root(struct imgcmd *c)
{
	char *real;
	if (c->mp)
		return 0;
	if ((real = realpath(c->target, NULL)) && !strcmp(real, "/")) {
		free(real);
		return 0;
	}
	const char *t = qname(c->target), *r = real ? qname(real) : t;
	fprintf(stderr, "fclabel %s: %s is a directory other than /: say which path it has, with "
		"-a:\n"
		"  fclabel %s %s -a %s ...   to label it where it is (as restorecon -R %s does)\n"
		"  fclabel %s %s -a / ...   when it is the root of a chroot or a mounted image (as "
		"setfiles -r %s does)\n", c->cmd, t, c->cmd, t, r, r, c->cmd, t, t);
	free(real);
	return -1;
}

/* A directory is the live tree below it (tree.c): the options for images do not apply. */
static int check_target(struct imgcmd *c)
{
	const struct img_params *ip = &c->ip;

	if (c->tree && (ip->undo || ip->output || ip->no_sync || ip->replace || ip->unsafe ||
			(c->imgflags & IMG_FORCE))) {
		fprintf(stderr, "fclabel %s: %s is a directory: %s applies to images only\n", c->cmd,
			c->target, ip->undo ? "-z" : ip->output ? "-o" : ip->no_sync ? "--no-sync"
			: ip->replace == REPLACE_ALWAYS ? "--atomic" : ip->replace ? "--in-place"
			: ip->unsafe ? "--no-crash-safety" : "--force");
		return -1;
	}
	if (!c->tree && (c->o.cross_mounts || c->o.threads)) {
		fprintf(stderr, "fclabel %s: %s is not a directory: %s applies to directories "
			"only\n", c->cmd, c->target, c->o.cross_mounts ? "--cross-mounts" : "--threads");
		return -1;
	}
	return c->tree ? check_tree_root(c) : 0;
}

static bool same_files(const struct fcfiles *a, const struct fcfiles *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]))
			return false;
	return true;
}

/* -o naming a folder: the result goes into it, under the image's own name. An output that
 * exists must be a regular file (a rename would replace a folder's entry or a device node);
 * one that is the image itself is the image labeled as a copy renamed over it. Nothing is
 * done yet when this refuses. */
static int resolve_output(struct imgcmd *c)
{
	struct stat so, si;
	const char *o = c->ip.output;

	if (!o)
		return 0;
	if (!stat(o, &so) && S_ISDIR(so.st_mode)) {
		char *t = strdup(c->target);
		if (!t || asprintf(&c->output, "%s/%s", o, basename(t)) < 0) {
			free(t);
			c->output = NULL;
			fprintf(stderr, "fclabel %s: out of memory\n", c->cmd);
			return -1;
		}
		free(t);
		c->ip.output = o = c->output;
		if (stat(o, &so))
			return 0;
	} else if (stat(o, &so)) {
		return 0; /* a new file (whether its folder can take it is checked at open) */
	}
	if (!S_ISREG(so.st_mode)) {
		fprintf(stderr, "fclabel %s: -o %s: it exists and is not a regular file; refusing to "
			"replace it\n", c->cmd, qname(o));
		return -1;
	}
	if (!stat(c->target, &si) && si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
		c->ip.output = NULL;
		if (c->ip.replace == REPLACE_AUTO)
			c->ip.replace = REPLACE_ALWAYS;
	}
	return 0;
}

static void on_stop(int sig)
{
	label_stop_signal = sig;
}

/* SIGINT and SIGTERM stop the walk at the next file; the summary and the report are completed,
 * a copy is discarded, then fclabel dies by the same signal (a second one kills at once). */
static void catch_stops(void)
{
	struct sigaction sa = { .sa_handler = on_stop, .sa_flags = SA_RESTART | SA_RESETHAND };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static int stop_by_signal(int status)
{
	int sig = label_stop_signal;
	if (!sig)
		return status;
	fflush(stdout);
	fflush(stderr);
	signal(sig, SIG_DFL);
	raise(sig);
	return status;
}

/* The mount points the specs cover: the first component of the literal stems that go below it,
 * those with the most specs first ("/system, /vendor, /data, ..."), into out. */
struct comp {
	char name[64];
	size_t specs;
};

static int by_specs(const void *a, const void *b)
{
	const struct comp *x = a, *y = b;
	return x->specs != y->specs ? (x->specs < y->specs ? 1 : -1) : strcmp(x->name, y->name);
}

static void covered(const fc_set *set, char *out, size_t n)
{
	enum { MOST = 256, SHOWN = 10 };
	struct comp *v = calloc(MOST, sizeof(*v));
	size_t nv = 0, k = 0;

	out[0] = 0;
	for (size_t i = 0; v && i < fc_count(set); i++) {
		size_t len, c = 1, j;
		const char *p = fc_spec_prefix(set, fc_spec_at(set, i), &len);
		if (!p || len < 2 || p[0] != '/')
			continue;
		while (c < len && p[c] != '/')
			c++;
		/* a directory: the stem goes on below it, or the regex does ("/data(/.*)?"); not a
		 * file of the root, nor a stem that may go on within its component ("/init\..*") */
		const char *re = fc_spec_at(set, i)->regex;
		bool dir = c < len || (!strncmp(re, p, len) && !strncmp(re + len, "(/", 2));
		if (!dir || c >= sizeof(v->name))
			continue;
		for (j = 0; j < nv && (strlen(v[j].name) != c || memcmp(v[j].name, p, c)); j++)
			;
		if (j == nv && nv < MOST)
			snprintf(v[nv++].name, sizeof(v->name), "%.*s", (int)c, p);
		if (j < nv)
			v[j].specs++;
	}
	if (v)
		qsort(v, nv, sizeof(*v), by_specs);
	for (size_t j = 0; j < nv && j < SHOWN && k < n; j++)
		k += (size_t)snprintf(out + k, n - k, "%s%s", j ? ", " : "", v[j].name);
	if (nv > SHOWN && k < n)
		snprintf(out + k, n - k, ", ...");
	free(v);
}

/*
 * No silent no-op: a mount point (the root of what is labeled) that no spec matches means a
 * wrong -a (a typo, the wrong partition) or the wrong policy: nothing in it would get a label.
 * EXIT_DIFFERS after saying which mount points the specs do cover.
 */
static int check_covered(struct imgcmd *c)
{
	const char *root = *c->o.mountpoint ? c->o.mountpoint : "/";
	struct fc_result res;
	if (fc_lookup(c->set, root, S_IFDIR, &res) || res.status != FC_NOMATCH)
		return EXIT_OK;
	char cover[1024];
	covered(c->set, cover, sizeof(cover));
	fprintf(stderr, "fclabel %s: no spec matches %s (%s's root, given by -a)%s%s; nothing done\n",
		c->cmd, root, qname(c->target), *cover ? "; the specs cover " : "", cover);
	return EXIT_DIFFERS;
}

#define DDI_FLAG "RELEASE_SELINUX_DATA_DATA_IGNORE"

/* How the device's libselinux walks /data/data: --data-data-ignore, else what its system
 * partition's build_flags.json says (--android-root), else as release builds do (it enters it). */
static void android_build(struct imgcmd *c)
{
	char *from = NULL;
	int v = c->ddi;

	if (v < 0 && aroot_given(&c->aroot) && aroot_seapp(c))
		v = aroot_build_flag(c->cmd, &c->aroot, c->ip.lock, DDI_FLAG, &from);
	if (v > 0)
		c->o.android_build |= SEAPP_BUILD_DATA_DATA_IGNORE;
	if (from && (v > 0 || c->o.verbose))
		fprintf(stderr, "fclabel %s: the device's boot walk %s /data/data (%s %s in %s)\n",
			c->cmd, v > 0 ? "labels, and does not enter," : "enters", DDI_FLAG,
			v > 0 ? "true" : "false or not listed", qname(from));
	free(from);
}

/* What an image says of itself (identify.c), before the mount point is used: a contradicting -a
 * is refused, and without -a the image's own is taken. A live tree says nothing: its path is
 * the one it has. */
static int identify(struct imgcmd *c)
{
	const char *mp;
	int status;

	if (c->tree && c->force_mp) {
		fprintf(stderr, "fclabel %s: %s is a directory: --force-mount-point applies to images "
			"only\n", c->cmd, qname(c->target));
		return EXIT_USAGE;
	}
	if (c->tree)
		return EXIT_OK;
	(void)img_identify(c->target, &c->id); /* (one that cannot be read: img_open says why) */
	status = ident_choose(c->cmd, c->target, &c->id, c->mp, c->force_mp, &mp);
	if (status != EXIT_OK || !mp)
		return status;
	free(c->mp);
	if (!(c->mp = strdup(mp))) {
		fprintf(stderr, "fclabel %s: out of memory\n", c->cmd);
		return EXIT_USAGE;
	}
	c->o.mountpoint = c->mp;
	return EXIT_OK;
}

/* The policy (and for relabel the old one and what changed); EXIT_OK or the exit status. */
static int load_policies(struct imgcmd *c)
{
	int status, drc;

	/* a policy with duplicate specs is refused, as setfiles refuses it */
	if (aroot_given(&c->aroot)) {
		if ((status = aroot_load(c->cmd, &c->aroot, c->flags | FC_NO_DUPS, c->ip.lock,
					 c->o.verbose, &c->set, aroot_seapp(c) ? &c->sa : NULL,
					 &c->pf)) != EXIT_OK)
			return status;
		c->o.policy_files = c->pf.v;
		c->o.npolicy_files = c->pf.n;
	} else if (!(c->set = load_policy(c->cmd, &c->files, c->flags | FC_NO_DUPS))) {
		return EXIT_USAGE;
	}
	android_build(c);
	/* Android's app data rules: every file they name is read before the image is opened */
	if (c->seapp.n && !(c->sa = load_seapp(c->cmd, &c->seapp)))
		return EXIT_USAGE;
	/* --policy: every context (and seapp_contexts' types, domains and levels) checked before
	 * the image (or a report) is opened */
	if (c->sepolicy && (status = policy_check(c->cmd, c->sepolicy, c->set, c->sa)) != EXIT_OK)
		return status;
	if (c->from_seapp.n && !(c->old_sa = load_seapp(c->cmd, &c->from_seapp)))
		return EXIT_USAGE;
	if (c->packages && !(c->pkgs = load_packages(c->cmd, c->packages, NULL, 0)))
		return EXIT_USAGE;
	if (!c->from.n)
		return EXIT_OK;
	/* --from naming the very files of --to (only seapp_contexts changed): one load serves both */
	if (same_files(&c->from, &c->files))
		c->oldset = c->set;
	else if (!(c->oldset = load_policy(c->cmd, &c->from, c->flags)))
		return EXIT_USAGE;
	if (c->o.digests)
		c->o.oldset = c->oldset;
	if ((drc = fc_diff(c->oldset, c->set, &c->diff))) {
		fprintf(stderr, "fclabel %s: comparing the policies: %s\n", c->cmd, strerror(drc));
		return EXIT_USAGE;
	}
	c->o.diff = c->diff;
	return EXIT_OK;
}

#define PACKAGES_LIST ANDROID_PACKAGES_LIST
#define PACKAGES_MAX (64u << 20)

/* packages.list from the image (or tree) itself: /data/system/packages.list below the mount
 * point. Nothing has been written when it fails. */
static int image_packages(struct imgcmd *c)
{
	const char *mp = c->o.mountpoint;
	size_t ml = strlen(mp);
	char *buf = NULL, name[4096], why[600];
	size_t len = 0;
	/* (--packages is no way out for an image that is not userdata: it would label a system
	 * image as app data) */
	const char *not_data = ident_not_userdata(&c->id, why, sizeof(why));

	if (strncmp(PACKAGES_LIST, mp, ml) || PACKAGES_LIST[ml] != '/') {
		fprintf(stderr, "fclabel %s: %s is mounted at %s, which does not hold %s%s%s: %s\n",
			c->cmd, qname(c->target), mp, PACKAGES_LIST, not_data ? "; " : "",
			not_data ? not_data : "", not_data ? "--seapp and --packages are for a /data "
			"image" : "give --packages FILE");
		return -1;
	}
	const char *rel = PACKAGES_LIST + ml;
	snprintf(name, sizeof(name), "%s:%s", c->target, rel);
	if (c->tree) {
		char full[4096];
		struct stat st;
		snprintf(full, sizeof(full), "%s%s", c->target, rel);
		int fd = open(full, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) &&
		    (unsigned long long)st.st_size <= PACKAGES_MAX &&
		    (buf = malloc((size_t)st.st_size + 1))) {
			ssize_t r = read(fd, buf, (size_t)st.st_size);
			len = r > 0 ? (size_t)r : 0;
			buf[len] = 0;
		}
		if (fd >= 0)
			close(fd);
		if (!buf) {
			fprintf(stderr, "fclabel %s: %s: cannot read it (%s): give --packages FILE\n",
				c->cmd, full, fd < 0 ? strerror(errno) : "not a regular file");
			return -1;
		}
	} else {
		errcode_t rc = img_read_file(&c->img, rel, &buf, &len, PACKAGES_MAX);
		if (rc) {
			fprintf(stderr, "fclabel %s: %s: cannot read %s in it (%s)%s%s: %s\n", c->cmd,
				qname(c->target), rel, error_message(rc), not_data ? "; " : "",
				not_data ? not_data : "", not_data ? "--seapp and --packages are for "
				"a /data image" : "give --packages FILE");
			return -1;
		}
	}
	c->pkgs = load_packages(c->cmd, name, buf, len);
	free(buf);
	return c->pkgs ? 0 : -1;
}

/* The report's first fields (fclabel-report(5)): what it is, and of what (a target not given,
 * when the arguments were bad: null). */
static void json_header(struct imgcmd *c)
{
	FILE *j = c->o.json;
	if (!j || c->json_head)
		return;
	c->json_head = true;
	fprintf(j, "{\n  \"schema\": \"%s\",\n  \"command\": \"%s\",\n  \"mode\": \"%s\",\n"
		"  \"target\": ", REPORT_SCHEMA, c->cmd,
		c->check ? "check" : c->o.mode == LM_DRYRUN ? "dry-run" : "label");
	if (c->target)
		rpt_json_str(j, c->target);
	else
		fputs("null", j);
	fprintf(j, ",\n  \"target_kind\": %s,\n",
		!c->target ? "null" : c->tree ? "\"tree\"" : "\"image\"");
	policy_origins_json(j, c->o.policy_files, c->o.npolicy_files);
}

/* --json FILE, once the options name it: the report of whatever ends the run goes there. */
static int open_report(struct imgcmd *c)
{
	if (!c->json)
		return 0;
	if (rpt_file_open(&c->rpt, c->json, c->cmd))
		return -1;
	c->o.json = c->rpt.f;
	c->o.json_events = &c->events;
	return 0;
}

/* The report's first fields, and the image (a live tree is opened by its walk). */
static int open_outputs(struct imgcmd *c)
{
	json_header(c);
	if (c->check && !c->json)
		c->o.list = stdout;
	if (!c->tree) {
		if (img_open(&c->img, c->target, c->o.mode == LM_LABEL ? IMG_RW | c->imgflags : 0,
			     &c->ip, c->cmd))
			return -1;
		c->img_open = true;
	}
	if (c->sa && !c->pkgs && image_packages(c))
		return -1;
	if (c->sa && !(c->o.appdata = appdata_new(c->sa, c->old_sa, c->pkgs, c->set))) {
		fprintf(stderr, "fclabel %s: out of memory\n", c->cmd);
		return -1;
	}
	if (c->o.diff && !(c->tree ? dir_is_labeled(c->target) : image_is_labeled(&c->img))) {
		fprintf(stderr, "fclabel %s: %s has no labels: labeling every file\n", c->cmd,
			c->target);
		c->o.diff = NULL;
	}
	return 0;
}

static int walk(struct imgcmd *c, const struct label_opts *o, struct label_stats *st)
{
	return c->tree ? label_dir(c->target, c->set, o, st) : ext4_label(&c->img, c->set, o, st);
}

/* relabel --verify: the full check, on what was just written (what it finds wrong: events of
 * its own in the report, after the relabel's) */
static void verify_all(struct imgcmd *c, struct label_stats *st)
{
	struct label_opts vo = c->o;
	struct label_stats vst;
	vo.mode = LM_CHECK;
	vo.diff = NULL;
	vo.verify = true;
	vo.list = stderr;
	vo.cmd = "relabel --verify";
	if (walk(c, &vo, &vst) || vst.changed || vst.errors || vst.digests_written) {
		fprintf(stderr, "fclabel %s: --verify: %lu file(s) differ from a full label%s%s\n",
			c->cmd, vst.changed, vst.digests_written ? ", and some digests are missing or "
			"stale" : "", vst.errors ? "; some files could not be checked (named above)"
			: "");
		st->errors += vst.changed + vst.errors + vst.digests_written;
	} else {
		fprintf(stderr, "fclabel %s: --verify: all %lu files have the label %s wants\n", c->cmd,
			vst.scanned, "the new policy");
	}
}

/* What the counts line calls the files whose labels were (or would be) changed. */
static const char *changed_word(const struct imgcmd *c, enum outcome out)
{
	if (c->check)
		return "differ";
	if (c->o.mode == LM_DRYRUN)
		return "would change";
	return out == OUT_NOTHING ? "to change (not written)" : "changed";
}

/* After a failed or interrupted run: what is on disk, and what to do. */
static void print_outcome(const struct imgcmd *c, const struct label_stats *st, enum outcome out,
			  FILE *sum)
{
	if (st->interrupted)
		fprintf(sum, "fclabel %s: %s: interrupted after %lu of about %lu files; ", c->cmd,
			qname(c->target), st->scanned, st->total > st->scanned ? st->total : st->scanned);
	else if (out == OUT_NOTHING || out == OUT_PARTIAL)
		fprintf(sum, "fclabel %s: %s: the run failed (see above); ", c->cmd, qname(c->target));
	else
		return;
	if (out == OUT_NOTHING)
		fprintf(sum, "nothing was written: %s is as it was; run again\n",
			c->tree ? "the tree" : c->ip.output ? "the output" : "the image");
	else if (out == OUT_PARTIAL && !c->tree && c->img.lost)
		fprintf(sum, "the %lu label(s) written went to the file that was opened, which %s "
			"no longer names\n", st->changed, qname(c->target));
	else if (out == OUT_PARTIAL)
		fprintf(sum, "the %lu label(s) written before it stay (each whole); run again to "
			"finish\n", st->written);
	else
		fprintf(sum, "the %s is incomplete; run again\n", c->check ? "check" : "dry run");
}

static void print_summary(const struct imgcmd *c, const struct label_stats *st, enum outcome out)
{
	FILE *sum = stderr; /* stdout carries data: the check list, -v, the report with --json - */
	fflush(stdout);     /* (its lines whole before the summary, when both go to one file) */
	char links[64] = "";
	if (st->links)
		snprintf(links, sizeof(links), ", hard links %lu", st->links);
	fprintf(sum, "fclabel %s: %s: scanned %lu, %s %lu, unchanged %lu%s, no label %lu, "
		"conflicts %lu, errors %lu, warnings %lu, %.2f s\n", c->cmd, qname(c->target), st->scanned,
		changed_word(c, out), st->changed, st->unchanged, links, st->nolabel, st->conflicts,
		st->errors, st->warnings, st->seconds);
	ident_say(sum, c->cmd, c->target, &c->id, c->check ? "checked" : c->o.mode == LM_DRYRUN ?
		  "dry run" : c->relabel ? "relabeled" : "labeled");
	if (c->relabel)
		fprintf(sum, "fclabel %s: directories entered %lu, skipped (no change can reach them) "
			"%lu%s\n", c->cmd, st->dirs, st->dirs_skipped,
			c->o.diff ? "" : " (a full label: no old policy, or no labels on the image)");
	if (c->o.appdata)
		fprintf(sum, "fclabel %s: app data: %zu package(s) in packages.list; left as they are, as "
			"a device leaves them: %lu with no file_contexts match, %lu package director"
			"%s not in packages.list, %lu whose seapp lookup fails, %lu encrypted "
			"director%s (not entered)\n", c->cmd, pkglist_count(c->pkgs), st->nolabel,
			st->unknown_pkgs, st->unknown_pkgs == 1 ? "y" : "ies", st->seapp_failed,
			st->encrypted, st->encrypted == 1 ? "y" : "ies");
	else if (st->encrypted)
		fprintf(sum, "fclabel %s: %lu encrypted director%s labeled but not entered (their "
			"names are ciphertext)\n", c->cmd, st->encrypted,
			st->encrypted == 1 ? "y" : "ies");
	if (c->o.device) {
		char marked[96] = "";
		if (st->pkgs_in_progress)
			snprintf(marked, sizeof(marked), "; %lu of them marked "
				 "user.restorecon_in_progress", st->pkgs_in_progress);
		fprintf(sum, "fclabel %s: as the device: %lu director%s skipped (digest matches), "
			"package directories %lu right (not entered), %lu wrong (%s whole%s), %lu "
			"label(s) kept (no device walk sets them)\n", c->cmd,
			st->dirs_digest_skipped,
			st->dirs_digest_skipped == 1 ? "y" : "ies", st->pkgs_right, st->pkgs_wrong,
			c->check ? "checked" : c->o.mode == LM_DRYRUN ? "would be relabeled" : "relabeled",
			marked, st->kept);
	}
	if (c->o.device_shadow)
		fprintf(sum, "fclabel %s: a device's /data (security.sehash on %s): %lu of the %lu "
			"difference(s) are levels the device keeps (no boot or unlock walk of its "
			"sets them); --as-device lists only what the device would change\n", c->cmd,
			qname(c->digested_at), st->device_levels, st->changed);
	if (c->o.digests && c->check)
		fprintf(sum, "fclabel %s: digests: %lu missing or stale, %lu right, %lu withheld (a "
			"label at or below them is left to the device: not a fault)\n", c->cmd,
			st->digests_written, st->digests_unchanged, st->digests_withheld);
	else if (c->o.digests)
		fprintf(sum, "fclabel %s: digests: %s %lu, unchanged %lu, withheld %lu (a label at or "
			"below them is left to the device, or not right)\n", c->cmd,
			c->o.mode == LM_DRYRUN ? "would write" : out == OUT_NOTHING ? "not written"
			: "written", st->digests_written, st->digests_unchanged, st->digests_withheld);
	print_outcome(c, st, out, sum);
}

/* What became of the target: rc is the walk's (and the close's) result. */
static enum outcome outcome_of(const struct imgcmd *c, const struct label_stats *st, int rc)
{
	if (c->check)
		return OUT_CHECKED;
	if (c->o.mode == LM_DRYRUN)
		return OUT_DRY_RUN;
	if (!rc && !st->interrupted)
		return OUT_WRITTEN;
	if (!c->tree && img_whole_or_nothing(&c->img))
		return OUT_NOTHING;
	return st->written || st->digests_on_disk ? OUT_PARTIAL : OUT_NOTHING;
}

static const char *signal_name(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
}

/* What failed (stage; none: the run went to its end) and what was said about it, for the
 * report. */
static void failed(struct imgcmd *c, int stage)
{
	c->stage = stage;
	snprintf(c->said, sizeof(c->said), "%s", rpt_captured());
}

/* Labels (checks) the opened target; the exit status. */
static int run(struct imgcmd *c, enum outcome *out)
{
	struct label_stats st;
	if (c->o.json) {
		fputs("  \"events\": [", c->o.json);
		c->json_events = true;
	}
	int rc = walk(c, &c->o, &st);
	c->st = st;
	if (!rc && c->verify && !st.interrupted)
		verify_all(c, &st);
	if ((rc || st.interrupted) && c->img_open)
		img_abandon(&c->img);
	if (rc || st.interrupted)
		failed(c, STAGE_WALK);
	if (st.interrupted) { /* (said in the summary's last line, which comes later) */
		size_t n = strlen(c->said);
		snprintf(c->said + n, sizeof(c->said) - n, "%sinterrupted by %s after %lu of about "
			 "%lu files", n ? "\n" : "", signal_name(label_stop_signal), st.scanned,
			 st.total > st.scanned ? st.total : st.scanned);
	}
	if (c->img_open) {
		c->img_open = false;
		if (img_close(&c->img, c->cmd) && !rc) {
			rc = -1;
			failed(c, STAGE_WRITE);
		}
	}
	*out = outcome_of(c, &st, rc);
	c->st = st;
	print_summary(c, &st, *out);
	if (st.interrupted)
		return 128 + label_stop_signal;
	if (rc)
		return EXIT_USAGE;
	bool unlabeled = !c->tree && ident_most_unlabeled(c->cmd, c->target, &c->id, c->set,
							   c->o.mountpoint, st.scanned, st.nomatch);
	if (c->check)
		return st.changed || st.errors || st.digests_written || unlabeled ? EXIT_DIFFERS
										   : EXIT_OK;
	return st.errors || unlabeled ? EXIT_DIFFERS : EXIT_OK;
}

/* The report's last fields (fclabel-report(5)): the counts, what became of the target and the
 * exit status, and what failed. The report is valid JSON whatever stopped the run, and put in
 * place (renamed over FILE) only once it is whole. */
static int json_close(struct imgcmd *c, int status, enum outcome out)
{
	FILE *j = c->o.json;
	const struct label_stats *st = &c->st;
	bool written = out == OUT_WRITTEN || out == OUT_PARTIAL;
	if (!j)
		return status;
	json_header(c);
	fputs(c->json_events ? "\n  ],\n" : "  \"events\": [],\n", j);
	if (st->aborted)
		fprintf(j, "  \"aborted\": \"%s\",\n", st->aborted);
	fprintf(j, "  \"summary\": {\n    \"scanned\": %lu, \"differ\": %lu, \"written\": %lu, "
		"\"unchanged\": %lu, \"hard_links\": %lu,\n    \"no_label\": %lu, \"conflicts\": "
		"%lu, \"errors\": %lu, \"warnings\": %lu, \"no_space\": %lu,\n    "
		"\"ea_blocks_allocated\": %lu, \"ea_block_shares\": %lu, \"dirs_entered\": %lu, "
		"\"dirs_skipped\": %lu,\n    \"encrypted_dirs\": %lu, \"unknown_packages\": %lu, "
		"\"seapp_failed\": %lu,\n    \"digests\": {\"right\": %lu, \"missing_or_stale\": %lu, "
		"\"written\": %lu, \"withheld\": %lu},\n    \"files_total\": %lu, \"seconds\": %.3f, "
		"\"claims_seconds\": %.3f,\n", 
		st->scanned, st->changed, written && c->o.mode == LM_LABEL ? st->written : 0,
		st->unchanged, st->links, st->nolabel, st->conflicts, st->errors, st->warnings,
		st->nospace, st->ea_allocated, st->ea_shared, st->dirs, st->dirs_skipped,
		st->encrypted, st->unknown_pkgs, st->seapp_failed, st->digests_unchanged,
		st->digests_written, written && c->o.mode == LM_LABEL ? st->digests_on_disk : 0,
		st->digests_withheld, st->total, st->seconds, st->claims_seconds);
	if (c->o.device)
		fprintf(j, "    \"as_device\": {\"dirs_skipped_by_digest\": %lu, \"packages_right\": %lu, "
			"\"packages_wrong\": %lu, \"kept\": %lu},\n", st->dirs_digest_skipped,
			st->pkgs_right, st->pkgs_wrong, st->kept);
	if (c->stage) {
		fprintf(j, "    \"failure\": {\"stage\": \"%s\", \"message\": ",
			stage_names[c->stage]);
		rpt_json_str(j, c->said);
		fputs("},\n", j);
	}
	fprintf(j, "    \"result\": \"%s\", \"interrupted\": %s, \"exit_status\": %d\n  }\n}\n",
		outcome_names[out], st->interrupted || label_stop_signal ? "true" : "false", status);
	c->o.json = NULL;
	if (rpt_file_close(&c->rpt, !c->ip.no_sync)) {
		fprintf(stderr, "fclabel %s: --json %s: writing the report failed: %s\n", c->cmd,
			qname(c->json), strerror(errno));
		status = status == EXIT_OK || status == EXIT_DIFFERS ? EXIT_USAGE : status;
	}
	return status;
}

static int finish(struct imgcmd *c, int status, enum outcome out)
{
	if (c->img_open)
		img_close(&c->img, c->cmd);
	status = json_close(c, status, out);
	rpt_capture_stop();
	for (size_t i = 0; i < c->o.nexcludes; i++)
		free(c->o.excludes[i]);
	free(c->o.excludes);
	free(c->mp);
	free(c->output);
	ident_free(&c->id);
	fcfiles_free(&c->files);
	fcfiles_free(&c->from);
	fcfiles_free(&c->seapp);
	fcfiles_free(&c->from_seapp);
	policy_origins_free(&c->pf);
	appdata_free(c->o.appdata);
	seapp_free(c->sa);
	seapp_free(c->old_sa);
	pkglist_free(c->pkgs);
	fc_diff_free(c->diff);
	if (c->oldset && c->oldset != c->set)
		fc_free(c->oldset);
	if (c->set)
		fc_free(c->set);
	return status;
}

/* A run that stops before its walk (at stage, with status, or by a signal): nothing is done,
 * and the report says what stopped it. */
static int stop_early(struct imgcmd *c, int stage, int status)
{
	int sig = label_stop_signal;
	if (sig && status == EXIT_OK) /* (the step went to its end: the signal came during it) */
		fprintf(stderr, "fclabel %s: interrupted by %s; nothing done\n", c->cmd,
			signal_name(sig));
	failed(c, stage);
	return stop_by_signal(finish(c, sig ? 128 + sig : status, OUT_NOTHING));
}

/*
 * A device's /data (it carries Android's digests): a full label or a relabel strips the levels
 * the device keeps (an app's /data/media/N/Android/data/PKG, vold's per-user directories), as
 * TWRP's "Fix contexts" does, so it is refused unless asked for (--full-label); --as-device does
 * what the device would. check counts what the device keeps instead. Nothing has been opened for
 * writing yet. EXIT_OK, or EXIT_USAGE after saying why.
 */
static int device_data(struct imgcmd *c)
{
	char where[sizeof(c->digested_at)];

	if (strcmp(c->o.mountpoint, ANDROID_DATA) || c->o.device || c->full_label)
		return EXIT_OK;
	int rc = data_digested(c->target, c->tree, &c->ip, c->cmd, c->o.mountpoint, where,
			       sizeof(where));
	if (rc <= 0)
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	if (c->check) {
		c->o.device_shadow = true;
		memcpy(c->digested_at, where, sizeof(where));
		return EXIT_OK;
	}
	fprintf(stderr, "fclabel %s: %s is a device's /data (security.sehash on %s): refusing a "
		"%s, which would strip the levels the device keeps; give %s, or --full-label to "
		"%s it all the same; nothing written\n", c->cmd, qname(c->target), qname(where),
		c->relabel ? "relabel" : "full label",
		c->relabel ? "fclabel label --as-device with the new policy" : "--as-device",
		c->relabel ? "relabel" : "label");
	fprintf(stderr, "fclabel %s: --as-device changes only what the device's next boot and "
		"unlock would change, and keeps those levels (fclabel-label(1), AS THE DEVICE)\n",
		c->cmd);
	return EXIT_USAGE;
}

int image_command(int argc, char **argv, int mode)
{
	struct imgcmd c = { .check = mode == LM_CHECK, .relabel = mode == LM_RELABEL };
	int r, status;

	c.cmd = c.check ? "check" : c.relabel ? "relabel" : "label";
	c.usage = c.check ? check_usage : c.relabel ? relabel_usage : label_usage;
	c.o = (struct label_opts){ .mode = c.relabel ? LM_LABEL : (enum label_mode)mode,
				   .cmd = c.cmd, .mountpoint = "", .progress = true };
	/* whatever ends the run once --json FILE is read, the report says it: what is said on
	 * stderr is kept for it, and SIGINT and SIGTERM end the run through finish() */
	rpt_capture_start(c.cmd);
	catch_stops();
	r = parse_options(&c, argc, argv);
	if (r > 0) /* --help: no run, no report */
		return finish(&c, EXIT_OK, OUT_NOTHING);
	if (open_report(&c))
		return finish(&c, EXIT_USAGE, OUT_NOTHING);
	if (r || check_target(&c) || resolve_output(&c))
		return stop_early(&c, STAGE_ARGUMENTS, EXIT_USAGE);
	if ((status = identify(&c)) != EXIT_OK || label_stop_signal)
		return stop_early(&c, STAGE_MOUNT_POINT, status);
	if ((status = load_policies(&c)) != EXIT_OK || label_stop_signal)
		return stop_early(&c, STAGE_POLICY, status);
	if ((status = check_covered(&c)) != EXIT_OK || label_stop_signal)
		return stop_early(&c, STAGE_MOUNT_POINT, status);
	if ((status = device_data(&c)) != EXIT_OK || label_stop_signal)
		return stop_early(&c, STAGE_TARGET, status);
	if ((status = open_outputs(&c) ? EXIT_USAGE : EXIT_OK) || label_stop_signal)
		return stop_early(&c, STAGE_TARGET, status);
	enum outcome out;
	status = run(&c, &out);
	/* (a signal that came after the walk, while the result was written, still ends the run
	 * by that signal, once everything is written and said) */
	if (label_stop_signal)
		status = 128 + label_stop_signal;
	return stop_by_signal(finish(&c, status, out));
}
