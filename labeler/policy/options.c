/*
 * What a command's options name, loaded: lookup's and explain's policy and app data rules
 * (policy_opts), and everything label, check and relabel label with (run_policy), before the
 * target is opened.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "ext4/ext4.h"

/* The app data rules once r->sa is loaded: packages.list, and what joins them. */
static int app_rules_finish(const char *cmd, const struct policy_opts *p, const fc_set *set,
			    struct app_rules *r)
{
	if (!(r->pkgs = load_packages(cmd, p->packages, NULL, 0)))
		return EXIT_USAGE;
	if (!(r->ad = appdata_new(r->sa, NULL, r->pkgs, set))) {
		fprintf(stderr, "fclabel %s: out of memory\n", cmd);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int app_rules_load(const char *cmd, const struct policy_opts *p, const fc_set *set,
		   struct app_rules *r)
{
	memset(r, 0, sizeof(*r));
	if (!p->seapp.n && !p->packages)
		return EXIT_OK;
	if (!p->seapp.n || !p->packages) {
		fprintf(stderr, "fclabel %s: --seapp and --packages go together\n", cmd);
		return EXIT_USAGE;
	}
	if (!(r->sa = load_seapp(cmd, &p->seapp)))
		return EXIT_USAGE;
	return app_rules_finish(cmd, p, set, r);
}

int policy_opts_load(const char *cmd, const struct policy_opts *p, bool verbose, fc_set **set,
		     struct app_rules *r)
{
	struct policy_origins pf;
	int status;

	*set = NULL;
	memset(r, 0, sizeof(*r));
	if (!aroot_given(&p->aroot)) {
		if (!(*set = load_policy(cmd, &p->files, p->flags)))
			return EXIT_USAGE;
		return app_rules_load(cmd, p, *set, r);
	}
	/* with --packages, the device's seapp_contexts too; the files taken named with -v (standard
	 * error is no summary here) */
	struct aroot_args ar = p->aroot;
	ar.quiet = true;
	status = aroot_load(cmd, &ar, p->flags, LOCK_WAIT, verbose, set, p->packages ? &r->sa : NULL,
			    &pf);
	policy_origins_free(&pf);
	if (status == EXIT_OK && p->packages)
		status = app_rules_finish(cmd, p, *set, r);
	return status;
}

void app_rules_free(struct app_rules *r)
{
	appdata_free(r->ad);
	seapp_free(r->sa);
	pkglist_free(r->pkgs);
	memset(r, 0, sizeof(*r));
}

void policy_opts_free(struct policy_opts *p)
{
	fcfiles_free(&p->files);
	fcfiles_free(&p->seapp);
}

/* ---- label, check and relabel ---- */

bool run_policy_device_seapp(const struct run_policy_opts *o, const char *mountpoint)
{
	return !strcmp(mountpoint, ANDROID_DATA) || o->now.packages;
}

#define DDI_FLAG "RELEASE_SELINUX_DATA_DATA_IGNORE"

/* How the device's libselinux walks /data/data: --data-data-ignore, else what its system
 * partition's build_flags.json says (--android-root), else as release builds do (it enters it). */
static void android_build(const char *cmd, const struct run_policy_opts *o, const char *mountpoint,
			  int lock, bool verbose, struct run_policy *rp)
{
	char *from = NULL;
	int v = o->ddi;

	if (v < 0 && aroot_given(&o->now.aroot) && run_policy_device_seapp(o, mountpoint))
		v = aroot_build_flag(cmd, &o->now.aroot, lock, DDI_FLAG, &from);
	if (v > 0)
		rp->android_build |= SEAPP_BUILD_DATA_DATA_IGNORE;
	if (from && (v > 0 || verbose))
		fprintf(stderr, "fclabel %s: the device's boot walk %s /data/data (%s %s in %s)\n",
			cmd, v > 0 ? "labels, and does not enter," : "enters", DDI_FLAG,
			v > 0 ? "true" : "false or not listed", qname(from));
	free(from);
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

/* relabel: the old policy, and what changed. Unless its digests are wanted (--digests), the
 * old policy is only compared: it gets no lookup index, most of a load's time (fc_diff checks
 * the regexes of its changed specs; the others are the new policy's, checked at its load). */
static int load_old(const char *cmd, const struct run_policy_opts *o, struct run_policy *rp)
{
	unsigned flags = o->now.flags | (o->old_lookups ? 0 : FC_COMPARE_ONLY);
	struct fc_error err = { 0 };
	int rc;

	/* --from naming the very files of --to (only seapp_contexts changed): one load serves both */
	if (same_files(&o->from, &o->now.files))
		rp->oldset = rp->set;
	else if (!(rp->oldset = load_policy(cmd, &o->from, flags)))
		return EXIT_USAGE;
	if ((rc = fc_diff(rp->oldset, rp->set, &rp->diff, &err))) {
		if (err.msg[0])
			fc_loaded(cmd, rc, NULL, &err);
		else
			fprintf(stderr, "fclabel %s: comparing the policies: %s\n", cmd, strerror(rc));
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int run_policy_load(const char *cmd, const struct run_policy_opts *o, const char *mountpoint,
		    int lock, bool verbose, struct run_policy *rp)
{
	const struct policy_opts *now = &o->now;
	int status;

	/* a policy with duplicate specs is refused, as setfiles refuses it */
	if (aroot_given(&now->aroot)) {
		if ((status = aroot_load(cmd, &now->aroot, now->flags | FC_NO_DUPS, lock, verbose,
					 &rp->set, run_policy_device_seapp(o, mountpoint) ? &rp->sa
					 : NULL, &rp->pf)) != EXIT_OK)
			return status;
	} else if (!(rp->set = load_policy(cmd, &now->files, now->flags | FC_NO_DUPS))) {
		return EXIT_USAGE;
	}
	android_build(cmd, o, mountpoint, lock, verbose, rp);
	/* Android's app data rules: every file they name is read before the image is opened */
	if (now->seapp.n && !(rp->sa = load_seapp(cmd, &now->seapp)))
		return EXIT_USAGE;
	/* --policy: every context (and seapp_contexts' types, domains and levels) checked before
	 * the image (or a report) is opened */
	if (o->sepolicy && (status = policy_check(cmd, o->sepolicy, rp->set, rp->sa)) != EXIT_OK)
		return status;
	if (o->from_seapp.n && !(rp->old_sa = load_seapp(cmd, &o->from_seapp)))
		return EXIT_USAGE;
	if (now->packages && !(rp->pkgs = load_packages(cmd, now->packages, NULL, 0)))
		return EXIT_USAGE;
	return o->from.n ? load_old(cmd, o, rp) : EXIT_OK;
}

void run_policy_free(struct run_policy *rp)
{
	policy_origins_free(&rp->pf);
	seapp_free(rp->sa);
	seapp_free(rp->old_sa);
	pkglist_free(rp->pkgs);
	fc_diff_free(rp->diff);
	if (rp->oldset && rp->oldset != rp->set)
		fc_free(rp->oldset);
	if (rp->set)
		fc_free(rp->set);
	memset(rp, 0, sizeof(*rp));
}

void run_policy_opts_free(struct run_policy_opts *o)
{
	policy_opts_free(&o->now);
	fcfiles_free(&o->from);
	fcfiles_free(&o->from_seapp);
}
