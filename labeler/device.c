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
 *    entered).
 *  - installd, at unlock, for each package directory (CE and DE, each user, and each SDK's
 *    directory below /data/misc_{ce,de}/N/sdksandbox/PKG): the directory is relabeled, and what
 *    is below it only when the directory's own label was not the one seapp_contexts gives.
 *
 * The engine calls dev_classify for each entry: which of these walks reach it (handed down from
 * the directory it is in, on a stack of its own kept here), whether one compares the directory's
 * digest and finds it equal. Where no walk labels an entry, it keeps its label; one with no label
 * at all (never right) gets the one a full label gives it.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

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

/* Whether a walk starts below the directory: a package directory, an SDK's directory, a CE user
 * directory. */
static bool holds_starts(const char *path, size_t len)
{
	if (is(path, len, "/data") || appdata_holds_pkgdirs(path, len))
		return true;
	for (size_t i = 0; i < sizeof(ce_tops) / sizeof(ce_tops[0]); i++)
		if (is(path, len, ce_tops[i]))
			return true;
	return false;
}

void dev_classify(struct run *r, const struct label_file *f, const struct walk_entry *e,
		  struct dev_entry *d)
{
	bool dir = LINUX_S_ISDIR(f->mode);
	unsigned up = r->ndev ? r->dev[r->ndev - 1] : 0;

	memset(d, 0, sizeof(*d));
	d->init = seapp_init_walk(f->path, f->pathlen, dir);
	if (!r->ndev) {
		d->role = DEV_INIT; /* the walk's root: /data */
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
		}
	}
	/* init compares the digest of every directory it reaches but /data/misc/profiles/cur/N;
	 * vold of every one */
	if (dir && r->o->digests && !r->o->ignore_digests &&
	    ((d->role & DEV_VOLD) || ((d->role & DEV_INIT) && (d->init & SEAPP_INIT_DIGESTS))))
		d->matched = dig_matches(r, f, e);
	d->boot = !d->matched && (d->role & DEV_INIT) && (d->init & SEAPP_INIT_LABELS);
	d->labels = d->boot || (!d->matched && (d->role & DEV_VOLD)) ||
		    (d->role & (DEV_LAZY | DEV_TREE));
}

unsigned dev_below(const struct label_file *f, const struct dev_entry *d, bool differs)
{
	unsigned b = 0;

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
		int differs)
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
	if (!differs) {
		r->st->pkgs_right++;
		rpt_event(r, "package-right", f->path, NULL, NULL, NULL, NULL);
		return;
	}
	r->st->pkgs_wrong++;
	if (r->o->verbose) {
		rpt_clear(r);
		printf("%s what is below it: %s (its own label was wrong)\n",
		       r->o->mode == LM_CHECK ? "checking" : r->o->mode == LM_DRYRUN ? "would relabel"
										 : "relabeling",
		       qname(f->path));
	}
	rpt_event(r, "package-wrong", f->path, NULL, NULL, NULL, NULL);
}
