/*
 * --android-root ROOT and --partition NAME=PATH: the device's own file_contexts and seapp_contexts,
 * found as its libselinux finds them (seapp_find_policy says which paths, in which order) in the
 * tree the device would see: what is mounted at "/", "/system", "/system_ext", "/product",
 * "/vendor" and "/odm". A partition is a directory (a recovery's mount, an extracted image) or an
 * ext4 image (raw, Android sparse, a block device), opened read-only with a shared lock and
 * never written. Paths are walked as the device's kernel walks them: symlinks are followed inside
 * that tree ("/product" -> "/system/product", "/odm/etc" -> "/vendor/odm/etc"), never into the
 * machine fclabel runs on. The files are read into memory: a recovery may have no writable /tmp.
 * The tree must be the device's: a partition's mount point that is an empty directory (not
 * mounted) is refused unless --partition NAME=none or the device's fstab says it has none, and
 * so are a recovery's own copies at its root unless --partition system=ROOT names them.
 *
 * This file: the options, and the policy read from the tree; devtree.c: the tree, and paths
 * resolved in it; devcheck.c: whether it is the device's.
 */
#include <errno.h>
#include <et/com_err.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

bool aroot_given(const struct aroot_args *a)
{
	for (int i = 0; i < AROOT_PARTS; i++)
		if (a->part[i])
			return true;
	return a->root != NULL;
}

bool aroot_partition_opt(struct aroot_args *a, const char *cmd, const char *opt, const char *arg)
{
	const char *eq = strchr(arg, '=');
	for (int i = 0; eq && eq[1] && i < AROOT_PARTS; i++)
		if ((size_t)(eq - arg) == strlen(dt_part_names[i]) &&
		    !strncmp(arg, dt_part_names[i], (size_t)(eq - arg))) {
			a->part[i] = eq + 1;
			return true;
		}
	fprintf(stderr, "fclabel %s: %s '%s': want NAME=PATH (or NAME=none) with NAME one of "
		"system, system_ext, product, vendor, odm\n", cmd, opt, arg);
	return false;
}

bool aroot_partition(struct aroot_args *a, const char *cmd, const char *arg)
{
	return aroot_partition_opt(a, cmd, "--partition", arg);
}

void policy_origins_free(struct policy_origins *pf)
{
	for (size_t i = 0; i < pf->n; i++)
		free(pf->v[i].from);
	free(pf->v);
	pf->v = NULL;
	pf->n = 0;
}

/* Reads the files of one kind, noting each in pf; -1 after saying why. */
static int read_kind(struct ns *ns, const struct seapp_policy_file *v, size_t n, const char *kind,
		     bool say, char **data, size_t *lens, struct policy_origins *pf)
{
	for (size_t i = 0; i < n; i++) {
		struct policy_origin *f = &pf->v[pf->n];
		if (dt_read(ns, v[i].path, &data[i], &lens[i], &f->from)) {
			free(f->from);
			return -1;
		}
		f->kind = kind;
		f->part = v[i].part;
		f->path = v[i].path;
		pf->n++;
		if (say)
			fprintf(stderr, "fclabel %s: %s: %s %s: %s, read from %s\n", ns->cmd,
				ns->policy, v[i].part, kind, v[i].path, qname(f->from));
	}
	return 0;
}

/* The tree from the options, and which files the device takes in it; -1 after saying why. */
static int find_files(struct ns *ns, const struct aroot_args *a, int lock, bool want_seapp,
		      bool verbose, struct seapp_policy *pol)
{
	struct walk *w;
	int rc, bad;

	if (dt_build(ns, a, lock))
		return -1;
	rc = seapp_find_policy(dt_exists, ns, want_seapp, pol);
	if (rc && rc != ENOENT) {
		fprintf(stderr, "fclabel %s: looking for %s in the device's tree: %s\n", ns->cmd,
			pol->failed ? pol->failed : "its policy",
			rc == EIO && ns->err ? error_message(ns->err) : strerror(rc));
		return -1;
	}
	/* the recovery's own files, then a partition not mounted: each more telling than what is
	 * missing because of it */
	if (!(w = malloc(sizeof(*w)))) {
		fprintf(stderr, "fclabel %s: out of memory\n", ns->cmd);
		return -1;
	}
	bad = dt_ramdisk_check(ns, w, pol) ||
	      dt_mounts_check(ns, w, pol->nfc && pol->layout == SEAPP_LAYOUT_LEGACY);
	free(w);
	if (bad)
		return -1;
	if (rc == ENOENT) {
		dt_refuse(ns, pol);
		return -1;
	}
	if (verbose) {
		fprintf(stderr, "fclabel %s: %s: the device's tree: ", ns->cmd, ns->policy);
		dt_describe(ns, stderr);
		fprintf(stderr, "; %s\n", pol->layout == SEAPP_LAYOUT_TREBLE
			? "plat_file_contexts in /system/etc/selinux: Treble (Android 8 or later)"
			: pol->layout == SEAPP_LAYOUT_ROOTFS
			? "plat_file_contexts in the root file system (an Android 8 or later ramdisk)"
			: "one file_contexts: before Treble (Android 7 or earlier)");
	}
	return 0;
}

/* The sets, from the files read (pf->v[i].from names the i-th); EXIT_OK or EXIT_USAGE after
 * saying why. */
static int load_sets(const char *cmd, const struct seapp_policy *pol, char **data,
		     const size_t *lens, const struct policy_origins *pf, unsigned flags, fc_set **set,
		     seapp_set **sa)
{
	struct fc_buf fb[SEAPP_POLICY_PARTS];
	struct seapp_buf sb[SEAPP_POLICY_PARTS];
	struct fc_error err;
	struct seapp_error serr = { 0 };
	int rc;

	for (size_t i = 0; i < pol->nfc; i++)
		fb[i] = (struct fc_buf){ pf->v[i].from, data[i], lens[i] };
	rc = fc_load_bufs(set, fb, pol->nfc, flags & FC_NO_DUPS, &err);
	if (!(*set = fc_loaded(cmd, rc, rc ? NULL : *set, &err)))
		return EXIT_USAGE;
	if (!sa)
		return EXIT_OK;
	for (size_t i = 0, k = pol->nfc; i < pol->nseapp; i++, k++)
		sb[i] = (struct seapp_buf){ pf->v[k].from, data[k], lens[k] };
	rc = seapp_parse(sa, sb, pol->nseapp, &serr);
	if (!(*sa = seapp_loaded(cmd, rc, rc ? NULL : *sa, &serr))) {
		fc_free(*set);
		*set = NULL;
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int aroot_load(const char *cmd, const struct aroot_args *a, unsigned flags, int lock,
	       bool verbose, fc_set **set, seapp_set **sa, struct policy_origins *pf)
{
	struct ns ns = { .cmd = cmd, .ropt = a->root_opt ? a->root_opt : "--android-root",
			 .popt = a->part_opt ? a->part_opt : "--partition",
			 .policy = a->policy ? a->policy : "policy" };
	struct seapp_policy pol;
	bool say = verbose || !a->quiet;
	char *data[2 * SEAPP_POLICY_PARTS] = { 0 };
	size_t lens[2 * SEAPP_POLICY_PARTS] = { 0 };
	int status = EXIT_USAGE;

	*set = NULL;
	if (sa)
		*sa = NULL;
	memset(pf, 0, sizeof(*pf));
	if (find_files(&ns, a, lock, sa != NULL, verbose, &pol))
		goto out;
	if (!(pf->v = calloc(pol.nfc + pol.nseapp, sizeof(*pf->v)))) {
		fprintf(stderr, "fclabel %s: out of memory\n", cmd);
		goto out;
	}
	if (read_kind(&ns, pol.fc, pol.nfc, "file_contexts", say, data, lens, pf) ||
	    read_kind(&ns, pol.seapp, pol.nseapp, "seapp_contexts", say, data + pol.nfc,
		      lens + pol.nfc, pf))
		goto out;
	/* every file is read: the images are closed before anything else is opened */
	dt_close(&ns);
	status = load_sets(cmd, &pol, data, lens, pf, flags, set, sa);
out:
	dt_close(&ns);
	for (size_t i = 0; i < sizeof(data) / sizeof(data[0]); i++)
		free(data[i]);
	if (status != EXIT_OK)
		policy_origins_free(pf);
	return status;
}

int aroot_build_flag(const char *cmd, const struct aroot_args *a, int lock, const char *name,
		     char **from)
{
	static const char path[] = "/system/etc/build_flags.json";
	struct ns ns = { .cmd = cmd, .ropt = a->root_opt ? a->root_opt : "--android-root",
			 .popt = a->part_opt ? a->part_opt : "--partition", .policy = "policy" };
	char *buf = NULL;
	size_t len = 0;
	bool v = false;
	int rc = -1;

	*from = NULL;
	if (dt_build(&ns, a, lock))
		goto out;
	/* the summary is made since Android 14: without it, no build flag to read */
	if (dt_exists(&ns, path) != 1 || dt_read(&ns, path, &buf, &len, from))
		goto out;
	int e = seapp_build_flag(buf, len, name, &v);
	if (e == EINVAL)
		fprintf(stderr, "fclabel %s: %s: not the JSON a build writes; %s not read "
			"from it\n", cmd, qname(*from), name);
	rc = e == EINVAL ? -1 : e == 0 && v;
out:
	dt_close(&ns);
	free(buf);
	if (rc < 0) {
		free(*from);
		*from = NULL;
	}
	return rc;
}
