/* The options of label, check and relabel (each command's table says which it takes), and
 * whether they go together and with the target. Nothing is opened here. */
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "run.h"

int run_usage_error(const struct run *c)
{
	usage_hint(c->spec);
	return -1;
}

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

/* -a and -e: a clean absolute path, or NULL after saying why. */
static char *path_arg(const struct run *c, int opt, const char *arg)
{
	char *p = clean_path(arg);
	if (!p)
		fprintf(stderr, "fclabel %s: -%c '%s': not an absolute path\n", c->cmd, opt, arg);
	return p;
}

static int add_exclude(struct run *c, const char *arg)
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

static int mount_point(struct run *c, const char *arg)
{
	free(c->mp);
	if (!(c->mp = path_arg(c, 'a', arg)))
		return -1;
	if (!strcmp(c->mp, "/"))
		c->mp[0] = 0;
	return 0;
}

/* The options with a value to read: 0, or -1 after saying why it is bad (the usage follows). */
static int value_option(struct run *c, int id, const char *arg)
{
	char *end;
	unsigned long n;

	switch (id) {
	case RO_LOCK:
		if (!arg || !strcmp(arg, "yes"))
			c->ip.lock = LOCK_WAIT;
		else if (!strcmp(arg, "no"))
			c->ip.lock = LOCK_NONE;
		else if (!strcmp(arg, "nonblock"))
			c->ip.lock = LOCK_NONBLOCK;
		else {
			fprintf(stderr, "fclabel %s: --lock=%s: want yes, no or nonblock\n", c->cmd, arg);
			return -1;
		}
		return 0;
	case RO_DATA_DATA_IGNORE:
		if (!arg || !strcmp(arg, "yes"))
			c->po.ddi = 1;
		else if (!strcmp(arg, "no"))
			c->po.ddi = 0;
		else {
			fprintf(stderr, "fclabel %s: --data-data-ignore=%s: want yes or no\n",
				c->cmd, arg);
			return -1;
		}
		return 0;
	case RO_THREADS:
		n = strtoul(arg, &end, 10);
		if (!*arg || *end || n < 1 || n > 256) {
			fprintf(stderr, "fclabel %s: --threads '%s': want a number from 1 to 256\n",
				c->cmd, arg);
			return -1;
		}
		c->o.threads = (unsigned)n;
		return 0;
	}
	return 0;
}

/* One option (id, its argument arg); -1 to stop with EXIT_USAGE (after saying why, and for a
 * value that is not one of those an option takes, the usage), 1 for --help. */
static int take_option(struct run *c, int id, const char *arg)
{
	/* (a bad --partition is said, and needs no usage) */
	int r = policy_arg(&c->po.now, c->cmd, id, arg);
	if (r)
		return r > 0 ? 0 : -1;
	switch (id) {
	case RO_FROM:
		if (!strcmp(arg, "none"))
			c->from_none = true;
		else if (fcfiles_add(&c->po.from, arg))
			return -1;
		break;
	case RO_FROM_SEAPP:
		if (fcfiles_add(&c->po.from_seapp, arg))
			return -1;
		break;
	case RO_LOCK: case RO_DATA_DATA_IGNORE: case RO_THREADS:
		return value_option(c, id, arg) ? run_usage_error(c) : 0;
	case RO_DIGESTS: c->o.digests = true; break;
	case RO_FULL_LABEL: c->full_label = true; break;
	case RO_AS_DEVICE: c->o.device = true; break;
	case RO_IGNORE_DIGESTS: c->o.ignore_digests = true; break;
	case RO_PLAN: c->o.mode = LM_DRYRUN; c->o.verbose = true; break;
	case RO_VERIFY: c->verify = true; break;
	case RO_UNDO: c->ip.undo = arg; break;
	case RO_OUTPUT: c->ip.output = arg; break;
	case RO_PART: c->ip.part = arg; break;
	case RO_NO_SYNC: c->ip.no_sync = true; break;
	case RO_ATOMIC: c->ip.replace = REPLACE_ALWAYS; break;
	case RO_IN_PLACE: c->ip.replace = REPLACE_NEVER; break;
	case RO_NO_CRASH_SAFETY: c->ip.unsafe = true; break;
	case RO_MOUNT_POINT: return mount_point(c, arg);
	case RO_FORCE_MOUNT_POINT: c->force_mp = true; break;
	case RO_DRY_RUN: c->o.mode = LM_DRYRUN; break;
	case RO_EXCLUDE: return add_exclude(c, arg);
	case RO_VERBOSE: c->o.verbose = true; break;
	case RO_JSON: c->json = arg; break;
	case RO_POLICY: c->po.sepolicy = arg; break;
	case RO_STRICT: c->o.strict = true; break;
	case RO_CROSS_MOUNTS: c->o.cross_mounts = true; break;
	case RO_FORCE: c->imgflags |= IMG_FORCE; break;
	case CLI_HELP: cli_help(c->spec); return 1;
	default: return run_usage_error(c);
	}
	return 0;
}

/* --as-device: a device's /data, with its seapp_contexts; it implies --digests. */
static int device_options(struct run *c)
{
	const char *why = NULL;

	if (c->o.ignore_digests && !c->o.device)
		why = "--ignore-digests goes with --as-device";
	else if (c->o.device && strcmp(c->o.mountpoint, ANDROID_DATA))
		why = "--as-device follows a device's own walks of its /data: give -a /data";
	else if (c->o.device && !c->po.now.seapp.n && !aroot_given(&c->po.now.aroot))
		why = "--as-device labels app data as the device does: give the device's "
		      "seapp_contexts (--seapp SEAPP[,SEAPP...], or --android-root ROOT)";
	else if (c->o.device && c->full_label)
		why = "--as-device and --full-label: give one (the device's walks, or a full "
		      "label)";
	if (why) {
		fprintf(stderr, "fclabel %s: %s\n", c->cmd, why);
		return run_usage_error(c);
	}
	if (c->o.device)
		c->o.digests = true;
	return 0;
}

/* What the options say of the policy: -S or --android-root, not both; what goes with --seapp. */
static int policy_options(struct run *c)
{
	const struct policy_opts *now = &c->po.now;
	bool aroot = aroot_given(&now->aroot);

	if (aroot && (now->files.n || now->seapp.n)) {
		fprintf(stderr, "fclabel %s: --android-root takes the file_contexts and seapp_contexts "
			"from the device: %s cannot go with it\n", c->cmd,
			now->files.n ? (c->relabel ? "--to" : "-S") : "--seapp");
		return run_usage_error(c);
	}
	if (!now->seapp.n && !aroot && (now->packages || c->po.from_seapp.n)) {
		fprintf(stderr, "fclabel %s: %s goes with --seapp\n", c->cmd,
			now->packages ? "--packages" : "--from-seapp");
		return run_usage_error(c);
	}
	if (aroot && c->po.from_seapp.n && !run_policy_device_seapp(&c->po, c->o.mountpoint)) {
		fprintf(stderr, "fclabel %s: --from-seapp goes with app data rules: with "
			"--android-root, -a /data or --packages\n", c->cmd);
		return run_usage_error(c);
	}
	return 0;
}

int run_options(struct run *c, int argc, char **argv)
{
	struct cli_parser p;
	struct stat sb;
	int id, r;

	c->po.ddi = -1;
	cli_start(&p, c->spec);
	while ((id = cli_next(&p, argc, argv)) != -1)
		if ((r = id == '?' ? run_usage_error(c) : take_option(c, id, optarg)))
			return r;
	const struct policy_opts *now = &c->po.now;
	bool aroot = aroot_given(&now->aroot);
	if (optind + 1 != argc || (!now->files.n && !aroot) ||
	    (c->relabel && !c->po.from.n && !c->from_none)) {
		fprintf(stderr, "fclabel %s: %s\n", c->cmd,
			c->relabel && !now->files.n && !aroot
				? "--to FILE_CONTEXTS (or --android-root ROOT) is required"
			: c->relabel && !c->po.from.n && !c->from_none
				? "--from FILE_CONTEXTS (or none) is required"
			: !now->files.n && !aroot ? "-S FILE_CONTEXTS (or --android-root ROOT) is required"
			: "give exactly one IMAGE");
		return run_usage_error(c);
	}
	c->target = argv[optind];
	c->tree = !stat(c->target, &sb) && S_ISDIR(sb.st_mode); /* a directory: a live tree */
	if (c->mp)
		c->o.mountpoint = c->mp;
	if ((r = policy_options(c)))
		return r;
	return device_options(c);
}

/*
 * A directory other than / is labeled as the path it has on the system it belongs to, which
 * only the caller knows: -a names it. Without -a, `fclabel label /etc` would label /etc as the
 * root of a system (root_t, and /etc/rc2.d as /rc2.d), which on a running system breaks it.
 */
static int check_tree_root(struct run *c)
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
int run_check_target(struct run *c)
{
	const struct img_params *ip = &c->ip;

	if (c->tree && (ip->undo || ip->output || ip->no_sync || ip->replace || ip->unsafe ||
			ip->part || (c->imgflags & IMG_FORCE))) {
		fprintf(stderr, "fclabel %s: %s is a directory: %s applies to images only\n", c->cmd,
			c->target, ip->part ? "--part" : ip->undo ? "-z" : ip->output ? "-o"
			: ip->no_sync ? "--no-sync"
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

/* -o naming a folder: the result goes into it, under the image's own name. An output that
 * exists must be a regular file (a rename would replace a folder's entry or a device node);
 * one that is the image itself is the image labeled as a copy renamed over it. Nothing is
 * done yet when this refuses. */
int run_resolve_output(struct run *c)
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
