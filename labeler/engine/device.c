/*
 * --as-device: only what a device's own walks of its /data would do, following Android 14 and 15
 * (libselinux's android_device.c, selinux_android_restorecon; installd's
 * restorecon_app_data_lazy; vold's restorecon of a user's CE directories at unlock):
 *
 *  - init, at every boot, `restorecon --recursive --skip-ce /data`: a directory whose
 *    security.sehash is the digest of the current policy is skipped with everything below it,
 *    its own label unread; any other is labeled and entered, except app data directories and
 *    /data/{system,misc,vendor}_ce (labeled, not entered) and /data/misc/profiles/cur/N (entered,
 *    not labeled: vold labels it). seapp_init_walk (seapp/paths.c) says which is which, and
 *    digests.c where init writes a digest.
 *  - vold, when a user unlocks, restorecon --recursive of /data/system_ce/N, /data/vendor_ce/N
 *    and /data/misc_ce/N: the same walk, without --skip-ce (app data directories still not
 *    entered), which digests every directory it walks (seapp_vold_walk, digests.c).
 *  - installd, at unlock, for each package directory (CE and DE, each user, and each SDK's
 *    directory below /data/misc_{ce,de}/N/sdksandbox/PKG): the directory is relabeled, and what
 *    is below it only when the directory's own label was not the one seapp_contexts gives, or
 *    when the directory carries user.restorecon_in_progress (Android 14's installd sets it
 *    while it relabels a package whole, and on finding it does so again, whatever the label).
 *    And for each package it prepares, restorecon (not recursive, digests not looked at) of
 *    /data/misc/profiles/cur/N/PKG: labeled from file_contexts, whatever the digests above say.
 *
 * The engine calls dev_classify for each entry: which of these walks reach it (handed down from
 * the directory it is in, on a stack of its own kept here), whether one compares the directory's
 * digest and finds it equal. Where no walk labels an entry, it keeps its label; one with no label
 * at all (never right) gets the one a full label gives it.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static bool starts(const char *path, size_t len, const char *lit)
{
	size_t n = strlen(lit);
	return len >= n && !memcmp(path, lit, n);
}

static bool is(const char *path, size_t len, const char *lit)
{
	return len == strlen(lit) && !memcmp(path, lit, len);
}

static const char *const ce_tops[] = { "/data/system_ce", "/data/vendor_ce", "/data/misc_ce" };

/* /data/system_ce/N, /data/vendor_ce/N, /data/misc_ce/N: where vold's walks at unlock start. */
static bool ce_user_dir(const char *path, size_t len)
{
	for (size_t i = 0; i < sizeof(ce_tops) / sizeof(ce_tops[0]); i++) {
		size_t n = strlen(ce_tops[i]);
		if (len > n + 1 && starts(path, len, ce_tops[i]) && path[n] == '/' &&
		    !memchr(path + n + 1, '/', len - n - 1))
			return true;
	}
	return false;
}

#define PROFILES_CUR "/data/misc/profiles/cur"

/* /data/misc/profiles/cur/N (N a user's number): where installd's profile directories are. */
static bool profiles_user(const char *path, size_t len)
{
	size_t n = strlen(PROFILES_CUR "/");
	if (len <= n || !starts(path, len, PROFILES_CUR "/"))
		return false;
	for (size_t i = n; i < len; i++)
		if (path[i] < '0' || path[i] > '9')
			return false;
	return true;
}

/* /data/misc/profiles/cur/N/PKG, PKG a package packages.list knows: installd labels it. */
static bool profile_dir(const struct run *r, const char *path, size_t len)
{
	const char *slash = len ? memrchr(path, '/', len) : NULL;
	if (!slash || !profiles_user(path, (size_t)(slash - path)))
		return false;
	size_t pl = len - (size_t)(slash + 1 - path);
	return pl && appdata_pkg_known(r->o->appdata, slash + 1, pl);
}

/* Whether a walk starts below the directory: a package directory, an SDK's directory, a CE user
 * directory, a profile directory. */
static bool holds_starts(const char *path, size_t len)
{
	if (is(path, len, "/data") || appdata_holds_pkgdirs(path, len))
		return true;
	for (size_t i = 0; i < sizeof(ce_tops) / sizeof(ce_tops[0]); i++)
		if (is(path, len, ce_tops[i]))
			return true;
	return is(path, len, "/data/misc") || is(path, len, "/data/misc/profiles") ||
	       is(path, len, PROFILES_CUR) || profiles_user(path, len);
}

void dev_classify(struct run *r, const struct label_file *f,
		  struct dev_entry *d)
{
	bool dir = S_ISDIR(f->mode);
	unsigned up = r->ndev ? r->dev[r->ndev - 1] : 0;

	memset(d, 0, sizeof(*d));
	d->init = seapp_init_walk(f->path, f->pathlen, dir, r->o->android_build);
	if (!r->ndev) {
		d->role = DEV_INIT; /* the walk's root: /data */
	} else if (up & DEV_NONE) {
		d->role = DEV_NONE; /* (a check's shadow of the walks) none reaches it */
		return;
	} else if (up & DEV_TREE) {
		d->role = DEV_TREE;
	} else {
		d->role = up & (DEV_INIT | DEV_VOLD);
		if (dir) {
			struct seapp_path sp;
			seapp_path_classify(f->path, f->pathlen, &sp);
			if (up & DEV_SANDBOX)
				d->role |= DEV_LAZY; /* an SDK's directory */
			else if (sp.has_pkg && sp.pkgdir_len == f->pathlen)
				d->role |= sp.sdk_sandbox ? DEV_SANDBOX : DEV_LAZY;
			if (ce_user_dir(f->path, f->pathlen))
				d->role |= DEV_VOLD;
			if (profile_dir(r, f->path, f->pathlen))
				d->role |= DEV_PROFILE;
		}
	}
	/* init compares the digest of every directory it reaches but /data/misc/profiles/cur/N;
	 * vold of every one */
	if (dir && (r->o->digests || r->o->device_shadow) && !r->o->ignore_digests &&
	    ((d->role & DEV_VOLD) || ((d->role & DEV_INIT) && (d->init & SEAPP_INIT_DIGESTS))))
		d->matched = dig_matches(r, f);
	d->boot = !d->matched && (d->role & DEV_INIT) && (d->init & SEAPP_INIT_LABELS);
	d->vold = !d->matched && (d->role & DEV_VOLD);
	d->labels = d->boot || d->vold || (d->role & (DEV_LAZY | DEV_TREE | DEV_PROFILE));
}

/* installd's mark (kXattrRestoreconInProgress): a bool, one byte, set while it relabels a
 * package directory whole; one found means that walk did not end. */
#define IN_PROGRESS_XATTR "user.restorecon_in_progress"

bool dev_in_progress(struct run *r, const struct label_file *f)
{
	unsigned char v[2];
	size_t len = 0;
	char why[512];

	if (!f->h || !r->src->get_xattr ||
	    r->src->get_xattr(r->src->arg, f, IN_PROGRESS_XATTR, v, sizeof(v), &len, why,
			      sizeof(why)))
		return false;
	/* installd reads exactly sizeof(bool) bytes, or takes it as not set */
	return len == 1 && v[0];
}

unsigned dev_below(const struct label_file *f, const struct dev_entry *d, bool differs)
{
	unsigned b = 0;

	if (d->role & DEV_NONE)
		return DEV_NONE;
	if ((d->role & DEV_TREE) || ((d->role & DEV_LAZY) && differs))
		return DEV_TREE; /* installd: everything below, app data rules throughout */
	if (d->role & DEV_LAZY)
		return 0; /* a package directory whose label is right: nothing below is looked at */
	if (!d->matched) {
		struct seapp_path sp;
		if ((d->role & DEV_INIT) && (d->init & SEAPP_INIT_DESCENDS))
			b |= DEV_INIT;
		seapp_path_classify(f->path, f->pathlen, &sp);
		if ((d->role & DEV_VOLD) && !sp.app_data)
			b |= DEV_VOLD;
	}
	b |= d->role & DEV_SANDBOX;
	if (!b && holds_starts(f->path, f->pathlen))
		b = DEV_PASS;
	return b;
}

int dev_push(struct run *r, unsigned below)
{
	if (r->ndev == r->capdev) {
		size_t c = r->capdev ? r->capdev * 2 : 64;
		unsigned char *n = realloc(r->dev, c);
		if (!n)
			return -1;
		r->dev = n;
		r->capdev = c;
	}
	r->dev[r->ndev++] = (unsigned char)below;
	return 0;
}

void dev_pop(struct run *r)
{
	if (r->ndev)
		r->ndev--;
}

void dev_report(struct run *r, const struct label_file *f, const struct dev_entry *d,
		int differs, bool in_progress)
{
	if (r->collect_only)
		return;
	if (d->matched) {
		r->st->dirs_digest_skipped++;
		if (r->o->verbose) {
			rpt_clear(r);
			printf("skipped, its digest matches: %s\n", qname(f->path));
		}
		rpt_event(r, "skipped-by-digest", f->path, NULL, NULL, NULL, NULL);
	}
	if (!(d->role & DEV_LAZY) || differs < 0)
		return;
	if (!differs && !in_progress) {
		r->st->pkgs_right++;
		rpt_event(r, "package-right", f->path, NULL, NULL, NULL, NULL);
		return;
	}
	r->st->pkgs_wrong++;
	if (in_progress)
		r->st->pkgs_in_progress++;
	if (r->o->verbose) {
		rpt_clear(r);
		printf("%s what is below it: %s (%s)\n",
		       r->o->mode == LM_CHECK ? "checking" : r->o->mode == LM_DRYRUN ? "would relabel"
										 : "relabeling",
		       qname(f->path), in_progress ? "it carries " IN_PROGRESS_XATTR
						   : "its own label was wrong");
	}
	rpt_event(r, "package-wrong", f->path, NULL, NULL, NULL, NULL);
}
