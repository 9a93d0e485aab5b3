/* The run of label, check and relabel on IMAGE|DIR: what run.c, runargs.c and runreport.c share,
 * and the options the three commands' tables (cmd_label.c, cmd_check.c, cmd_relabel.c) share. */
#ifndef LABELER_CLI_RUN_H
#define LABELER_CLI_RUN_H

#include "internal.h"

enum run_kind { RUN_LABEL, RUN_CHECK, RUN_RELABEL };

/* label, check and relabel: the command's table is run by the shared flow (run.c). */
/* "fclabel CMD: TARGET: partition 2 ("root") (bytes A to B)": where a run works, said once. */
void part_say(const char *cmd, const char *target, const struct img_part *w);
int run_target(int argc, char **argv, const struct command *self, const struct cli_spec *spec,
	       enum run_kind kind);

/* The options' ids, beyond the policy's (POPT_*: -S, relabel's --to, --seapp, --packages,
 * --android-root, --partition, --base-only). */
enum {
	RO_MOUNT_POINT = POPT_END_, RO_FORCE_MOUNT_POINT, RO_DRY_RUN, RO_EXCLUDE, RO_VERBOSE,
	RO_JSON, RO_STRICT, RO_FORCE, RO_POLICY, RO_FROM, RO_THREADS, RO_PLAN, RO_VERIFY,
	RO_UNDO, RO_OUTPUT, RO_NO_SYNC, RO_CROSS_MOUNTS, RO_ATOMIC, RO_IN_PLACE,
	RO_NO_CRASH_SAFETY, RO_FROM_SEAPP, RO_DIGESTS, RO_LOCK, RO_AS_DEVICE, RO_IGNORE_DIGESTS,
	RO_FULL_LABEL, RO_DATA_DATA_IGNORE, RO_PART, RO_END_,
};

/* The options whose help two or three of the commands share, typed here once. */
#define RUN_OPT_MOUNT_POINT                                                                        \
	OPT_ARG('a', "mount-point", RO_MOUNT_POINT, "DIR",                                         \
		"the path the image is mounted at (e.g. /system; default: the one the image "     \
		"names, else /)")
#define RUN_OPT_FORCE_MOUNT_POINT                                                                  \
	OPT_FLAG(0, "force-mount-point", RO_FORCE_MOUNT_POINT,                                     \
		 "-a even where the image says it is mounted elsewhere")
#define RUN_OPT_PART                                                                               \
	OPT_ARG(0, "part", RO_PART, "N|NAME",                                                      \
		"a GPT or MBR disk image: work on partition N (or the GPT partition NAME); "      \
		"default: the only one holding an ext2/3/4 file system")
#define RUN_OPT_EXCLUDE                                                                            \
	OPT_ARG('e', "exclude", RO_EXCLUDE, "PATH",                                                \
		"leave PATH and everything below it alone (repeatable)")
#define RUN_OPT_VERBOSE OPT_FLAG('v', "verbose", RO_VERBOSE, "print each change")
#define RUN_OPT_DRY_RUN                                                                            \
	OPT_FLAG('n', "dry-run", RO_DRY_RUN,                                                       \
		 "change nothing; count (and with -v list) what would change")
#define RUN_OPT_JSON                                                                               \
	OPT_ARG(0, "json", RO_JSON, "FILE",                                                        \
		"write a JSON report of every change to FILE ('-': stdout)")
#define RUN_OPT_FORCE                                                                              \
	OPT_FLAG(0, "force", RO_FORCE,                                                             \
		 "write even if the superblock reports errors or needs recovery")
#define RUN_OPT_ANDROID_ROOT                                                                       \
	OPT_ARG(0, "android-root", POPT_ANDROID_ROOT, "ROOT",                                      \
		"instead of -S: the device's own file_contexts, and its seapp_contexts for -a /data " \
		"or with --packages, found in ROOT as the device finds them: a mounted root, "        \
		"extracted partitions or NAME.img images")
#define RUN_OPT_BASE_ONLY                                                                          \
	OPT_FLAG(0, "base-only", POPT_BASE_ONLY, "with one FC: skip FC.homedirs and FC.local")
#define RUN_OPT_UNDO                                                                               \
	OPT_ARG('z', "undo", RO_UNDO, "FILE",                                                      \
		"record an undo file that e2undo replays (raw images, devices)")
#define RUN_OPT_OUTPUT                                                                             \
	OPT_ARG('o', "output", RO_OUTPUT, "OUT", "write the result to OUT instead of over the image")
#define RUN_OPT_NO_SYNC                                                                            \
	OPT_FLAG(0, "no-sync", RO_NO_SYNC,                                                         \
		 "do not wait for the result to reach the disk (faster; safe against a killed "    \
		 "run, not against a power cut)")
#define RUN_OPT_ATOMIC                                                                             \
	OPT_FLAG(0, "atomic", RO_ATOMIC,                                                           \
		 "raw image: label a copy beside it and rename it over the image when complete "   \
		 "(default with 128-byte inodes)")
#define RUN_OPT_IN_PLACE                                                                           \
	OPT_FLAG(0, "in-place", RO_IN_PLACE, "raw image: write in place, even with 128-byte inodes")
#define RUN_OPT_NO_CRASH_SAFETY                                                                    \
	OPT_FLAG(0, "no-crash-safety", RO_NO_CRASH_SAFETY,                                         \
		 "in place: write straight to the image, with no journal transaction or crash "    \
		 "order (a killed run can leave it inconsistent; for pipelines that rebuild on "   \
		 "failure)")
#define RUN_OPT_POLICY                                                                             \
	OPT_ARG(0, "policy", RO_POLICY, "SEPOLICY",                                                \
		"first check every context against this binary SELinux policy (libsepol); stop "  \
		"if one is not valid")
#define RUN_OPT_CROSS_MOUNTS                                                                       \
	OPT_FLAG(0, "cross-mounts", RO_CROSS_MOUNTS,                                               \
		 "DIR: also enter the file systems mounted below it")
#define RUN_OPT_THREADS                                                                            \
	OPT_ARG('T', "threads", RO_THREADS, "N",                                                   \
		"DIR: walk it with N threads (default: one per CPU, up to 8; one with --seapp or " \
		"--digests); the result is the same")
#define RUN_OPT_PACKAGES                                                                           \
	OPT_ARG(0, "packages", POPT_PACKAGES, "FILE",                                              \
		"the packages.list to use (default: the image's /data/system/packages.list)")
#define RUN_OPT_DIGESTS                                                                            \
	OPT_FLAG(0, "digests", RO_DIGESTS,                                                         \
		 "write security.sehash on the directories restorecon checks")
#define RUN_OPT_IGNORE_DIGESTS                                                                     \
	OPT_FLAG(0, "ignore-digests", RO_IGNORE_DIGESTS,                                           \
		 "with --as-device: walk below matching digests too")
#define RUN_OPT_DATA_DATA_IGNORE                                                                   \
	OPT_OPTARG("data-data-ignore", RO_DATA_DATA_IGNORE, "[=yes|no]",                           \
		   "-a /data: the device's libselinux is built with "                              \
		   "release_selinux_data_data_ignore (its boot walk labels /data/data, not what "  \
		   "is in it); default: what --android-root's /system/etc/build_flags.json says, " \
		   "else no")
#define RUN_OPT_LOCK                                                                               \
	OPT_OPTARG("lock", RO_LOCK, "[=yes|no|nonblock]",                                          \
		   "take a BSD lock on the image (exclusive to write, shared to read): wait for "  \
		   "it (yes, the default), refuse a held one (nonblock), or take none (no)")

/* ---- what the run flow's files share ---- */

/* Where a run stopped, for the report's summary.failure (fclabel-report(5)). */
enum stage { STAGE_NONE, STAGE_ARGUMENTS, STAGE_POLICY, STAGE_MOUNT_POINT, STAGE_TARGET,
	     STAGE_WALK, STAGE_WRITE };

/* What became of the target, for the summary and the report. */
enum outcome {
	OUT_WRITTEN,   /* every change is on disk */
	OUT_NOTHING,   /* the run failed or was interrupted, and nothing was written */
	OUT_PARTIAL,   /* ... in place: what was written before stays */
	OUT_CHECKED,   /* check: nothing written, by design */
	OUT_DRY_RUN,
};

/* One run of label, check or relabel: its options, then what it loaded and opened. */
struct run {
	const struct command *self; /* its entry in main's table: its name, what it needs */
	const struct cli_spec *spec; /* its options */
	const char *cmd;             /* its name */
	bool check, relabel, tree, from_none, verify;
	const char *target, *json;
	struct img_params ip;
	struct run_policy_opts po; /* what to label with ... */
	struct run_policy pol;     /* ... loaded */
	struct label_opts o;
	char *mp;
	unsigned imgflags;
	struct image img;
	bool img_open;
	bool erofs;              /* the image is EROFS (its magic): read-only, checked only */
	struct erofs_img *ero;   /* ... opened */
	struct rpt_file rpt; /* --json FILE */
	bool json_head;    /* the report's first fields are written */
	bool json_events;  /* ... and its events array opened */
	unsigned long events; /* the events in it */
	int stage;         /* what failed (STAGE_*), 0 when nothing did */
	char said[4200];   /* ... and what was said about it (rpt_captured) */
	struct label_stats st; /* the walk's counts (zero when there was none) */
	char *output;      /* -o naming a folder: the path inside it */
	bool full_label;   /* --full-label: a device's /data labeled all the same */
	char digested_at[1024]; /* check: a device's /data, where its digests were found */
	struct img_identity id; /* what the image says of itself (identify.c) */
	bool force_mp;     /* --force-mount-point */
};

/* runargs.c: the options, and whether they go together; 0, 1 for --help, or -1 after saying
 * why not (the usage's first line said too). */
int run_options(struct run *c, int argc, char **argv);
/* ... and whether the target takes them (a directory, an image; -o): -1 after saying why. */
int run_check_target(struct run *c);
int run_resolve_output(struct run *c);
/* Bad options: the usage's first line; -1. */
int run_usage_error(const struct run *c);

/* runreport.c: the summary on stderr, and the report (--json FILE). */
void run_summary(const struct run *c, const struct label_stats *st, enum outcome out);
/* --json FILE, once the options name it: the report of whatever ends the run goes there. -1
 * after saying why it cannot be. */
int run_report_open(struct run *c);
/* The report's first fields: what it is, and of what. */
void run_report_head(struct run *c);
/* The report's last fields, and the report put in place: the exit status (status, or
 * EXIT_USAGE when the report could not be written). */
int run_report_close(struct run *c, int status, enum outcome out);

#endif
