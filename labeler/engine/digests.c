/*
 * --digests: security.sehash, the 20 bytes restorecon keeps on a directory so that it can skip
 * it next time (fc_digest: libselinux's selabel_hash_all_partial_matches). A device that finds a
 * directory's digest equal to the one it computes skips the directory and everything below it,
 * so a digest is a promise that every label there is right: we write one only on a directory
 * whose own label and every label below it ended up right in this run.
 *
 * Which directories: without Android's rules (no --seapp) every directory, as restorecon -D
 * does; with them, those Android's boot-time `restorecon --recursive --skip-ce /data` visits and
 * digests: /data and what init descends into from it, app package directories and the other
 * places init stops at included, nothing below them; and those vold's walk of a user's CE
 * directories at unlock visits and digests: /data/system_ce/N, /data/vendor_ce/N,
 * /data/misc_ce/N and every directory below them, but for what is below
 * /data/misc_ce/N/sdksandbox (android_walk_digests, in android/'s walks.c).
 *
 * The engine keeps a stack of the directories being walked; a problem anywhere (a label that
 * could not be written, a package packages.list does not know, an encrypted directory not
 * entered, a path left out with -e, damage) spoils the directory it is in and, as the walk
 * leaves them, every directory above it. A digest has three states, in check as in label:
 * right; withheld (spoiled as above: label writes none, and that is what a device does too);
 * missing or stale (a fault: label would write it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Where a directory stands (its parent is the top of the stack): whether init's walk reaches it,
 * enters it, and digests it (android_walk_digests says, for Android's rules). */
static void place(const struct run *r, const struct label_file *f, struct dstate *d)
{
	const struct dstate *up = r->nds ? &r->ds[r->nds - 1] : NULL;
	struct android_digests w;
	d->pathlen = f->pathlen;
	d->right = true;
	if (!r->o->appdata) {
		d->visited = d->descends = d->eligible = true;
		return;
	}
	android_walk_digests(f->path, f->pathlen, up && up->visited && up->descends,
			     r->o->android_build, &w);
	d->visited = w.init_visits;
	d->descends = w.init_enters;
	/* --as-device: only where init's boot walk goes in this run (not where a matching digest
	 * stopped it, nor where installd walks), or vold's */
	d->eligible = w.init_digests && (!r->o->device || r->dev_walked);
	if (!d->eligible && w.vold_digests)
		d->eligible = !r->o->device || r->dev_vold_walked;
}

void dig_wrong(struct run *r)
{
	if (r->nds)
		r->ds[r->nds - 1].right = false;
}

static void hex(const unsigned char *d, size_t n, char *out)
{
	for (size_t i = 0; i < n && i < 64; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
	out[2 * (n < 64 ? n : 64)] = 0;
}

/* The stored digest: 0, or non-zero after a warning. */
static int stored(struct run *r, const struct label_file *f,
		  unsigned char *cur, size_t *len)
{
	char why[512];
	if (!f->h)
		return -1;
	if (!r->src->get_digest(r->src->arg, f, cur, len, why, sizeof(why)))
		return 0;
	rpt_warn(r, f->path, why);
	r->st->errors++;
	return -1;
}

static int put(struct run *r, const struct label_file *f,
	       const unsigned char *d)
{
	char why[512];
	int rc = r->src->set_digest(r->src->arg, f, d, FC_DIGEST_LEN, why, sizeof(why));
	if (rc == LSET_OK)
		return 0;
	if (label_stops(r, f, rc, why))
		return -1;
	rpt_warn(r, f->path, why);
	r->st->errors++;
	return -1;
}

/* relabel: whether no digest can change (the two policies have the same specs, in the same
 * order): a digest the old policy gave is then the one the new gives. */
static bool same_policy(const struct run *r)
{
	const struct fc_diff *d = r->o->diff;
	return r->o->oldset && d && !fc_diff_count(d) && !fc_diff_everything(d);
}

/* The digest of an eligible directory: checked, or written when right. verified: it has the
 * digest the old policy gives (relabel). */
static void settle(struct run *r, const struct label_file *f,
		   bool right, bool verified)
{
	const struct label_opts *o = r->o;
	unsigned char want[FC_DIGEST_LEN], cur[64];
	char hw[2 * FC_DIGEST_LEN + 1], hc[129];
	size_t curlen = 0;

	if (right && verified && same_policy(r)) {
		r->st->digests_unchanged++; /* known without working it out again */
		return;
	}
	int rc = fc_digest(r->set, f->path, want);

	if (rc == ENOENT)
		return; /* no spec reaches it: restorecon keeps no digest */
	if (rc) {
		char why[128];
		snprintf(why, sizeof(why), "cannot compute its digest: %s", strerror(rc));
		rpt_warn(r, f->path, why);
		r->st->errors++;
		return;
	}
	if (o->mode != LM_CHECK && !right) {
		r->st->digests_withheld++;
		return;
	}
	if (stored(r, f, cur, &curlen))
		return;
	hex(want, FC_DIGEST_LEN, hw);
	if (curlen == FC_DIGEST_LEN && !memcmp(cur, want, FC_DIGEST_LEN)) {
		r->st->digests_unchanged++;
		return;
	}
	hex(cur, curlen, hc);
	const char *has = curlen ? hc : NULL;
	if (o->mode == LM_CHECK && !right) {
		/* label would withhold it too (a label at or below it is the device's to fix: an
		 * unknown package, an encrypted directory, damage): not a fault of the image */
		r->st->digests_withheld++;
		if (o->list && o->verbose) {
			rpt_clear(r);
			fprintf(o->list, "%s	digest withheld	(a label at or below it is left to the "
				"device)\n", qname(f->path));
		}
		rpt_event(r, "digest-withheld", f->path, has, hw, NULL,
			  "a label at or below it is left to the device");
		return;
	}
	if (o->mode == LM_CHECK) {
		r->st->digests_written++;
		rpt_clear(r);
		if (o->list)
			fprintf(o->list, "%s\tdigest %s\twants %s\n", qname(f->path),
				has ? "stale" : "missing",
				hw);
		rpt_event(r, has ? "digest-stale" : "digest-missing", f->path, has, hw, NULL, NULL);
		return;
	}
	if (o->mode == LM_LABEL && put(r, f, want))
		return;
	r->st->digests_written++;
	if (o->verbose) {
		rpt_clear(r);
		printf("%s digest %s: %s -> %s\n", o->mode == LM_DRYRUN ? "would write" : "wrote",
		       qname(f->path), has ? has : "(none)", hw);
	}
	rpt_event(r, o->mode == LM_DRYRUN ? "digest-would-change" : "digest-changed", f->path, has, hw,
	      NULL, NULL);
}

int dig_enter(struct run *r, const struct label_file *f)
{
	if (r->nds == r->capds) {
		size_t c = r->capds ? r->capds * 2 : 64;
		struct dstate *n = realloc(r->ds, c * sizeof(*n));
		if (!n)
			return -1;
		r->ds = n;
		r->capds = c;
	}
	struct dstate d;
	place(r, f, &d);
	d.right = !r->entry_wrong;
	d.verified = dig_verified(r, f);
	r->ds[r->nds++] = d;
	return 0;
}

void dig_leave(struct run *r, const struct label_file *f)
{
	if (!r->nds)
		return;
	struct dstate d = r->ds[--r->nds];
	if (!f->h && r->src)
		d.right = false; /* it could not be opened: nothing below it was walked */
	if (!d.right)
		dig_wrong(r);
	if (d.eligible)
		settle(r, f, d.right, d.verified);
}

void dig_not_entered(struct run *r, const struct label_file *f,
		     bool right, bool verified)
{
	struct dstate d;
	place(r, f, &d);
	if (!right)
		dig_wrong(r);
	if (d.eligible)
		settle(r, f, right, verified);
}

/* Whether the last run left every label at and below the directory right: its digest is the one
 * the old policy gives; a directory that carries none stands with the nearest one above it. */
bool dig_verified(struct run *r, const struct label_file *f)
{
	unsigned char was[FC_DIGEST_LEN], cur[64];
	size_t curlen = 0;
	struct dstate d;

	if (!r->o->oldset)
		return false;
	place(r, f, &d);
	if (!d.eligible)
		return r->nds && r->ds[r->nds - 1].verified;
	if (fc_digest(r->o->oldset, f->path, was))
		return false;
	return !stored(r, f, cur, &curlen) && curlen == FC_DIGEST_LEN &&
	       !memcmp(cur, was, FC_DIGEST_LEN);
}

/* Android's check_context_match_for_dir: the stored digest is the one this policy gives (a
 * directory no spec reaches has none to match). */
bool dig_matches(struct run *r, const struct label_file *f)
{
	unsigned char want[FC_DIGEST_LEN], cur[64];
	size_t curlen = 0;

	return !fc_digest(r->set, f->path, want) && !stored(r, f, cur, &curlen) &&
	       curlen == FC_DIGEST_LEN && !memcmp(cur, want, FC_DIGEST_LEN);
}
