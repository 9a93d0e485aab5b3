/*
 * --as-device: only what a device's own walks of its /data would do, following Android 14 and 15:
 * init's `restorecon --recursive --skip-ce /data` at every boot, vold's restorecon of a user's CE
 * directories at unlock, installd's restorecon_app_data_lazy of each package directory and its
 * restorecon of each profile directory. android/'s walks.c holds their rules
 * (android_walk_visit, android_walk_below), and digests.c asks it where they write digests.
 *
 * The engine calls dev_classify for each entry: which of these walks reach it (handed down from
 * the directory it is in, on a stack of its own kept here), whether one compares the directory's
 * digest and finds it equal (read here). Where no walk labels an entry, it keeps its label; one
 * with no label at all (never right) gets the one a full label gives it. installd's
 * user.restorecon_in_progress is read here too.
 */
#include <stdlib.h>

#include "internal.h"

struct digest_ask {
	struct run *r;
	const struct label_file *f;
};

static bool digest_matches(void *arg)
{
	struct digest_ask *a = arg;
	return dig_matches(a->r, a->f);
}

void dev_classify(struct run *r, const struct label_file *f,
		  struct android_walk *d)
{
	struct digest_ask ask = { r, f };
	/* (a check's shadow of the walks compares digests too) */
	bool digests = (r->o->digests || r->o->device_shadow) && !r->o->ignore_digests;
	struct android_walk_at at = {
		.path = f->path,
		.len = f->pathlen,
		.is_dir = S_ISDIR(f->mode),
		.root = !r->ndev, /* the walk's root: /data */
		.from = r->ndev ? r->dev[r->ndev - 1] : 0,
		.build = r->o->android_build,
		.pkgs = appdata_packages(r->o->appdata),
		.digest_matches = digests ? digest_matches : NULL,
		.arg = &ask,
	};
	android_walk_visit(&at, d);
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

unsigned dev_below(const struct label_file *f, const struct android_walk *d, bool differs)
{
	return android_walk_below(d, f->path, f->pathlen, differs);
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

void dev_report(struct run *r, const struct label_file *f, const struct android_walk *d,
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
	if (!(d->reach & ANDROID_WALK_LAZY) || differs < 0)
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
