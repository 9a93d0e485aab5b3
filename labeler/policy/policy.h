/* labeler/policy/: the policy a run labels with: file_contexts (-S), the device's own
 * (--android-root), seapp_contexts and packages.list, and their checks (--policy). */
#ifndef LABELER_POLICY_H
#define LABELER_POLICY_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "fcontexts.h"
#include "android.h"
#include "engine/engine.h"

/* Exit codes shared by every subcommand. */
enum {
	EXIT_OK = 0,
	EXIT_DIFFERS = 1,  /* the answer is "some input was bad" or "labels differ" */
	EXIT_USAGE = 2,    /* bad options, unloadable policy, unusable image */
};

/* ---- eroimg.c: an EROFS image, raw or in Android's sparse format (expanded into memory) ---- */
struct erofs_img;
/* Whether path holds an EROFS image: 1, 0, -1 when it cannot be read (errno). */
int eroimg_probe(const char *path);
/* Opens it (erofs_open), *sparse saying whether it was sparse (sparse may be NULL): 0, or -1
 * with why (naming it). */
int eroimg_open(const char *path, struct erofs_img **img, bool *sparse, char *why, size_t n);

/* ---- load.c: file_contexts, seapp_contexts and packages.list, loaded or said why not ---- */

/* Accumulates -S arguments: each may be a comma-separated list. */
struct fcfiles {
	char **v;
	size_t n;
};
/* 0, or ENOMEM. */
int fcfiles_add(struct fcfiles *f, const char *arg);
void fcfiles_free(struct fcfiles *f);

/* Loads the set or prints why not ("fclabel CMD: FILE:LINE: reason") and returns NULL. */
fc_set *load_policy(const char *cmd, const struct fcfiles *f, unsigned flags);
/* What a load returned (rc, set, err): the set (its warnings printed), or NULL after printing
 * why, as load_policy does. */
fc_set *fc_loaded(const char *cmd, int rc, fc_set *set, const struct fc_error *err);

/* Loads seapp_contexts files (in the device's order), or prints why not ("fclabel CMD: FILE:LINE:
 * reason") and returns NULL. Says how many neverallow lines of a source file it skipped. */
seapp_set *load_seapp(const char *cmd, const struct fcfiles *f);
/* The same for what seapp_load or seapp_parse returned. */
seapp_set *seapp_loaded(const char *cmd, int rc, seapp_set *set, const struct seapp_error *err);
/* packages.list: parsed from buf (len bytes; name for messages), or read from the file name when
 * buf is NULL; NULL after saying why. */
pkg_list *load_packages(const char *cmd, const char *name, const char *buf, size_t len);

/* ---- androidroot.c (devtree.c, devcheck.c): the device's own policy ---- */

/* --android-root ROOT and --partition NAME=PATH: where the device's own policy is read from. */
#define AROOT_PARTS 5 /* system, system_ext, product, vendor, odm */
struct aroot_args {
	const char *root;              /* --android-root, or NULL */
	const char *part[AROOT_PARTS]; /* --partition, by partition; "none": the device has none */
	bool quiet;                    /* the files taken named only with -v (lookup, explain) */
	/* diff's old side: its options ("--old-root", "--old-partition") and what its lines call
	 * the policy ("old policy"); NULL: --android-root, --partition, "policy" */
	const char *root_opt, *part_opt, *policy;
};
/* Whether either option was given. */
bool aroot_given(const struct aroot_args *a);
/* --partition NAME=PATH (or, named opt, another option of that form): false after saying why. */
bool aroot_partition(struct aroot_args *a, const char *cmd, const char *arg);
bool aroot_partition_opt(struct aroot_args *a, const char *cmd, const char *opt, const char *arg);

/*
 * Finds the device's file_contexts, and with sa its seapp_contexts, as its libselinux does
 * (seapp_find_policy), in the partitions a describes, and loads them (flags: FC_NO_DUPS) from
 * memory. Images are opened read-only (lock: LOCK_*) and closed before it returns. Says on stderr
 * which file it took for what (with a->quiet, only when verbose), with verbose also where the
 * partitions are. EXIT_OK (*set, *sa, *pf filled), or EXIT_USAGE after saying why, naming what
 * is missing or bad, a partition not mounted or a recovery's own files.
 */
int aroot_load(const char *cmd, const struct aroot_args *a, unsigned flags, int lock,
	       bool verbose, fc_set **set, seapp_set **sa, struct policy_origins *pf);
/* A boolean build flag (RELEASE_...) as the device's system partition lists it in its
 * /system/etc/build_flags.json: 1, or 0 when false or not listed (*from: the file, malloc'd);
 * -1 when there is no such file or it is not JSON (*from NULL). */
int aroot_build_flag(const char *cmd, const struct aroot_args *a, int lock, const char *name,
		     char **from);

/* ---- options.c: what a command's options name, loaded ---- */

/* The policy lookup and explain answer from: -S, or --android-root with --partition; --seapp
 * with --packages; --base-only (flags: FC_BASE_ONLY). */
struct policy_opts {
	struct fcfiles files;
	unsigned flags;
	struct fcfiles seapp;   /* --seapp: Android's app data rules */
	const char *packages;   /* --packages */
	struct aroot_args aroot; /* --android-root, --partition */
};
void policy_opts_free(struct policy_opts *p);

/* --seapp with --packages (lookup, explain): app data labels for paths. */
struct app_rules {
	seapp_set *sa;
	pkg_list *pkgs;
	struct appdata *ad;
};
/* Loads them when asked for (r->ad stays NULL when not): EXIT_OK, or EXIT_USAGE after saying
 * why. */
int app_rules_load(const char *cmd, const struct policy_opts *p, const fc_set *set,
		   struct app_rules *r);
void app_rules_free(struct app_rules *r);
/* lookup and explain: the -S files or the device's policy (--android-root, with its
 * seapp_contexts when --packages is given), and the app data rules when asked for. The options
 * go together (the caller checked: -S or --android-root, and not both). EXIT_OK, or EXIT_USAGE
 * after saying why. */
int policy_opts_load(const char *cmd, const struct policy_opts *p, bool verbose, fc_set **set,
		     struct app_rules *r);

/* What label, check and relabel are told to label with. */
struct run_policy_opts {
	struct policy_opts now;     /* -S (relabel: --to) or --android-root; --seapp, --packages,
				     * --base-only */
	struct fcfiles from;        /* relabel --from: what the target was labeled with */
	struct fcfiles from_seapp;  /* relabel --from-seapp */
	const char *sepolicy;       /* --policy: the contexts checked against it */
	int ddi;                    /* --data-data-ignore: 1, 0, or -1 when not given */
	bool old_lookups;           /* relabel: the old policy is looked up too (its digests), not
				     * only compared */
};
void run_policy_opts_free(struct run_policy_opts *o);
/* ... and what they load. */
struct run_policy {
	fc_set *set;                /* the policy, duplicates refused (as setfiles refuses them) */
	seapp_set *sa;              /* its seapp_contexts: --seapp, or the device's */
	pkg_list *pkgs;             /* --packages (else the caller's: the target's own) */
	struct policy_origins pf;   /* --android-root: the files the policy was read from */
	unsigned android_build;     /* SEAPP_BUILD_*: how the device's libselinux is built */
	fc_set *oldset;             /* relabel --from (set itself when the files are the same) */
	seapp_set *old_sa;          /* --from-seapp */
	struct fc_diff *diff;       /* relabel: what changed from oldset to set */
};
/* With --android-root, whether the device's seapp_contexts are wanted: for /data (mountpoint:
 * "" for "/"), or with --packages. */
bool run_policy_device_seapp(const struct run_policy_opts *o, const char *mountpoint);
/* Loads everything a run labels with, before its target is opened: the policy, its
 * seapp_contexts, --policy's check of them, relabel's old policy and what changed, --packages.
 * verbose: which files were taken, and how the device's libselinux is built. EXIT_OK, or the
 * exit status after saying why (what was loaded stays in rp, for run_policy_free). */
int run_policy_load(const char *cmd, const struct run_policy_opts *o, const char *mountpoint,
		    int lock, bool verbose, struct run_policy *rp);
void run_policy_free(struct run_policy *rp);

/* ---- policy.c: --policy ---- */

/* How many invalid specs are printed one per line before the rest are only counted. */
#define POLICY_MAX_REPORTED 20

/*
 * Reads the binary policy at path (a kernel policy as checkpolicy, secilc or semodule write it:
 * refpolicy's policy.33, Android's sepolicy) with libsepol and checks the context of every spec
 * of set, each distinct context once, as setfiles -c and AOSP's checkfc do; "<<none>>" passes.
 * Prints each spec whose context the policy rejects, "fclabel CMD: FILE:LINE: context CTX is not
 * valid in policy PATH (why)", the first POLICY_MAX_REPORTED of them, then how many in all.
 * Returns EXIT_OK, EXIT_DIFFERS when some context is invalid, or EXIT_USAGE (after saying why,
 * naming the file) when the policy cannot be read.
 * With sa, its seapp_contexts too, as AOSP's checkseapp checks them: each domain= and type= a
 * type of the policy (not an attribute), each level= a level ("FILE:LINE: type X is not defined
 * in policy PATH").
 */
int policy_check(const char *cmd, const char *path, const fc_set *set, const seapp_set *sa);


#endif
