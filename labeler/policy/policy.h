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

/* Accumulates -S arguments: each may be a comma-separated list. */
struct fcfiles {
	char **v;
	size_t n;
};
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

/* --android-root ROOT and --partition NAME=PATH (androidroot.c): where the device's own policy
 * is read from. */
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

/* The options that lookup and explain share: -S, --base-only (as 'B'), -m and -h. Returns true
 * when c was one of them; a bad value ends the program with the usage. */
struct policy_opts {
	struct fcfiles files;
	unsigned flags;
	mode_t mode;
	struct fcfiles seapp;   /* --seapp (as 'A'): Android's app data rules */
	const char *packages;   /* --packages (as 'K') */
	struct aroot_args aroot; /* --android-root, --partition (OPT_ANDROID_ROOT, OPT_PARTITION) */
};
/* The long options without a letter. */
enum { OPT_ANDROID_ROOT = 0x100, OPT_PARTITION };
bool policy_opt(int c, const char *arg, struct policy_opts *p, const char *cmd, const char *usage);

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
 * seapp_contexts when --packages is given), and the app data rules when asked for. EXIT_OK, or
 * EXIT_USAGE after saying why (usage: when the options do not go together). */
int policy_opts_load(const char *cmd, const char *usage, const struct policy_opts *p,
		     bool verbose, fc_set **set, struct app_rules *r);
void policy_opts_free(struct policy_opts *p);

/* A file mode for lookups: octal digits, or one letter f d l c b p s. */
bool parse_mode(const char *s, mode_t *mode);

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


struct aroot_args;
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
#endif
