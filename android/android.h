/*
 * android: Android's rules for labeling its userdata (/data), offline, as one library (as
 * libselinux keeps them in src/android/). It reads seapp_contexts and packages.list, tells which
 * paths are app data and answers the TYPE lookup that Android's init and installd make for them
 * (libselinux's pkgdir_selabel_lookup and seapp_context_lookup), gives app data their labels
 * (appdata.c), says which of the device's walks of /data (init's at boot, vold's at unlock,
 * installd's) reach, label and digest a path (walks.c), and finds which policy files a device
 * loads (partitions.c), following the Android 15 code (which also reads Android 14's files).
 *
 * Library rules: every call that can fail returns 0 or a positive errno value; nothing prints or
 * exits; only seapp_load and pkglist_load read files (util.c), partitions.c asks a callback. A
 * loaded set or package list is immutable and may be used from several threads at once. It uses
 * fcontexts (file_contexts answers for app data) and nothing else.
 */
#ifndef ANDROID_H
#define ANDROID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fcontexts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where and why a load failed. */
struct seapp_error {
	char file[512]; /* the file at fault, "" when none */
	unsigned line;	/* 1-based physical line, 0 when not about a line */
	char msg[512];	/* the reason, one line, no file or line prefix */
};

/* ---- seapp_contexts ---- */

typedef struct seapp_set seapp_set;

/* One seapp_contexts file held in memory (for files read out of an image). name is used in
 * messages and seapp_answer.file, and its base name picks the partition. */
struct seapp_buf {
	const char *name;
	const char *data;
	size_t len;
};

/*
 * Load seapp_contexts files in the device's order (plat, system_ext, product, vendor, odm) and
 * sort their lines by Android's precedence. A file whose base name contains "vendor_", "nonplat_"
 * or "odm_" is a vendor file, any other a platform file: a platform line wins a tie with a vendor
 * line, and only lines on the same side can be duplicates.
 *
 * Android's parser, with errors where Android has undefined behaviour or silently does something
 * odd: an empty value, a line over 1022 bytes, a carriage return, a NUL or other control byte, a
 * '#' token after the first, a ':' in type= or domain=. Lines whose first token is "neverallow"
 * (source trees; the build strips them) are skipped and counted. isV2App=, a selector of
 * Android 8 and 9 (seinfo field "v2"; a specified one sorts before an unspecified one), is read
 * so that their files load. All or nothing: on error *out is
 * untouched and err names the file and physical line (for a duplicate, the later of the two lines;
 * msg names the other).
 */
int seapp_load(seapp_set **out, const char *const *files, size_t nfiles, struct seapp_error *err);
int seapp_parse(seapp_set **out, const struct seapp_buf *bufs, size_t nbufs,
		struct seapp_error *err);
void seapp_free(seapp_set *set);

/* True when a file of that name counts as vendor (vendor, odm) for seapp_load. */
bool seapp_name_is_vendor(const char *path);
/* The number of rules loaded, and of neverallow lines skipped. */
size_t seapp_count(const seapp_set *set);
size_t seapp_neverallow_count(const seapp_set *set);

/* A rule's origin. Pointers stay valid while the set lives. */
struct seapp_where {
	const char *file; /* as loaded */
	unsigned line;	  /* physical, 1-based */
	const char *text; /* the line as written, leading blanks left out */
	bool vendor;	  /* from a vendor or odm file */
	/* its outputs, NULL when the line has none (checked against a policy: --policy) */
	const char *domain, *type, *level;
};
/* The rule at position i (< seapp_count) in precedence order: the order lookups try them. */
void seapp_rule_at(const seapp_set *set, size_t i, struct seapp_where *w);

/* The answer of a TYPE lookup. Copyable: pointers refer to the set, which must outlive it. */
struct seapp_answer {
	bool found;	     /* a line with type= matched; false: the file_contexts label stands */
	const char *type;    /* the line's type= */
	const char *level;   /* the new range, or NULL to keep the file_contexts range; use
			      * seapp_answer_level(), which also covers levelFrom= */
	char level_from[40]; /* the range computed from levelFrom=, "" when the line has none */
	const char *file;    /* the deciding line: its file as loaded, physical line, text */
	unsigned line;
	const char *text;
	/* The app's seinfo says partition=system/system_ext/product and the deciding line is from a
	 * vendor file: Android 15 logs a warning (b/280547417) and uses the line anyway. */
	bool partition_warning;
	const char *why; /* on a non-zero return: the reason, a static string */
};

/*
 * Android's seapp_context_lookup for SEAPP_TYPE, as an app (isSystemServer=false): parse seinfo
 * (NULL: no seinfo, all flags false, target SDK 0), name the uid (uid / 100000 is the user,
 * uid % 100000 the app id), then take the first line in precedence order that matches and has a
 * type=. pkgname may be NULL (then name= lines never match); it need not be NUL-terminated.
 * Returns 0 (see ans->found), or, where Android's lookup fails and the file keeps its old label:
 *   EINVAL  seinfo refused: 256 bytes or longer, targetSdkVersion or partition without a value,
 *           or a negative target SDK;
 *   ENOENT  an app id below 10000 with no name (not in Android 14's AID table, not an OEM id);
 *   ERANGE  the app id after the range shift, or the user id, is 65536 or more.
 * ans->why says which.
 */
int seapp_lookup_type(const seapp_set *set, uint32_t uid, const char *seinfo, const char *pkgname,
		      size_t pkglen, struct seapp_answer *ans);

/* The range to set: levelFrom's, else level=, else NULL (keep the file_contexts range). */
const char *seapp_answer_level(const struct seapp_answer *ans);
/* Same outcome for a file: both not found, or the same type and the same range. */
bool seapp_answer_equal(const struct seapp_answer *a, const struct seapp_answer *b);

/*
 * The label Android writes: fc_context ("user:role:type[:range]", as file_contexts gave it) with
 * the answer's type and, when it has one, its range (added when fc_context had none); user and
 * role stay. When !ans->found, fc_context unchanged. EINVAL when fc_context is not a context
 * libselinux's context_new accepts (2 to 5 ':', no tab/CR/LF, no space before the range),
 * ERANGE when out (n bytes) is too small.
 */
int seapp_apply(const char *fc_context, const struct seapp_answer *ans, char *out, size_t n);

/* The user name Android's lookup uses for an app id below 10000 (Android 14's AID table, then
 * oem_N for 2900-2999 and 5000-5999), or NULL. buf (16 bytes) holds oem_N names. */
const char *seapp_aid_name(uint32_t appid, char buf[16]);

/* ---- packages.list ---- */

typedef struct pkg_list pkg_list;

struct pkg_entry {
	const char *name; /* field 1, NUL-terminated */
	size_t name_len;
	uint32_t uid;	      /* field 2: the app id (the uid of user 0) */
	bool debuggable;      /* field 3 != 0 */
	const char *data_dir; /* field 4 */
	const char *seinfo;   /* field 5, as written (e.g. "default:targetSdkVersion=34") */
	unsigned line;	      /* 1-based line it came from */
};

/*
 * Parse packages.list the way Android 14's packagelistparser reads it (at least six whitespace-
 * separated fields: name, uid <= UID_MAX, debuggable, data dir, seinfo, gids "none" or a comma
 * list of numbers <= GID_MAX; further fields ignored), but a malformed line (too few fields,
 * blank, a field that is not a number where one is due, bad gids, a NUL byte) is an error naming
 * name:line, where Android stops reading. When a package name repeats, the last line wins, as on
 * the device. parse copies buf; name is used in messages.
 */
int pkglist_parse(pkg_list **out, const char *name, const char *buf, size_t len,
		  struct seapp_error *err);
int pkglist_load(pkg_list **out, const char *path, struct seapp_error *err);
void pkglist_free(pkg_list *list);
/* Exact, case-sensitive lookup; NULL when absent. Allocates nothing. */
const struct pkg_entry *pkglist_find(const pkg_list *list, const char *name, size_t len);
/* Distinct package names. */
size_t pkglist_count(const pkg_list *list);

/*
 * The lookup init makes for a package directory of user `user` found in packages.list:
 * uid = entry->uid + user * 100000, the entry's seinfo and name. This is what Android means to
 * do; its code adds the user offset to its cached entry at every lookup, so on a device the
 * second and later lookups of a package in one walk use a wrong uid when user > 0.
 */
int seapp_lookup_pkg(const seapp_set *set, const struct pkg_entry *pkg, unsigned user,
		     struct seapp_answer *ans);

/* ---- paths (paths.c) ---- */

/* Where userdata is mounted (init's $ANDROID_DATA), and where the package manager keeps
 * packages.list there. */
#define ANDROID_DATA "/data"
#define ANDROID_PACKAGES_LIST_IN_DATA "system/packages.list"
#define ANDROID_PACKAGES_LIST ANDROID_DATA "/" ANDROID_PACKAGES_LIST_IN_DATA

/* What Android 14/15 libselinux makes of a path (absolute, no trailing '/', no "//"). */
struct seapp_path {
	bool app_data;	  /* is_app_data_path: init labels it but does not descend below it */
	bool has_pkg;	  /* extract_pkgname_and_userid found a package: seapp applies */
	bool sdk_sandbox; /* a /data/misc_{ce,de}/N/sdksandbox/PKG form (or under /mnt/expand) */
	unsigned user;	  /* N (0 for /data/data), at most 1000 */
	const char *pkg;  /* the package component, inside path */
	size_t pkg_len;
	size_t pkgdir_len; /* length of the path up to and including the package component: equal to
			    * the path's length for the package directory itself */
};

/* Classify path[0..len). Without has_pkg, the file_contexts label stands. */
void seapp_path_classify(const char *path, size_t len, struct seapp_path *out);

/* ---- app data labels (appdata.c) ---- */

/* A walk's labeler of app data: one package's answers kept while the walk is in its directories,
 * each package's lookups made once per uid. Not to be shared between threads. */
struct appdata;
/* old: relabel's --from-seapp (NULL: every package counts as changed). Keeps pointers to all. */
struct appdata *appdata_new(const seapp_set *seapp, const seapp_set *old, const pkg_list *pkgs,
			    const fc_set *set);
void appdata_free(struct appdata *ad);
enum ad_kind {
	AD_NOT_APP, /* not app data (or no package in the path): the file_contexts label */
	AD_LABEL,   /* app data: its label is in out */
	AD_UNKNOWN, /* a package packages.list does not know: left as it is, as a device does */
	AD_FAILED,  /* Android's lookup fails for it (why says how): left as it is */
};
struct ad_answer {
	enum ad_kind kind;
	const struct seapp_answer *ans; /* AD_LABEL from a seapp line (NULL: not from one) */
	const struct pkg_entry *pkg;    /* the packages.list entry */
	unsigned user;                  /* the user the path belongs to */
	uint32_t uid;                   /* the uid Android looks the package up with */
	bool pkgdir;                    /* the package directory itself */
	bool sandbox;                   /* labeled as its SDK sandbox's */
	const char *why;                /* AD_FAILED */
};
/* The label of path (len bytes) whose file_contexts label is fcctx: into out (n bytes) for
 * AD_LABEL. Returns 0, ENOMEM, or ERANGE when out is too small. */
int appdata_label(struct appdata *ad, const char *path, size_t len, const char *fcctx, char *out,
		  size_t n, struct ad_answer *a);
/* relabel: whether the package directory (or a file below it) at path may have another seapp
 * answer in the new set than in the old one. */
bool appdata_pkg_changed(struct appdata *ad, const char *path, size_t len);
/* Whether package directories may lie below the directory path. */
bool appdata_holds_pkgdirs(const char *path, size_t len);
/* The packages.list ad was made with (NULL without ad). */
const pkg_list *appdata_packages(const struct appdata *ad);

/* ---- the device's walks of /data (walks.c) ---- */

/* What init's "restorecon --recursive --skip-ce /data" does with an entry. */
enum {
	SEAPP_INIT_LABELS = 1 << 0,   /* labels it (file_contexts, then seapp when has_pkg) */
	SEAPP_INIT_DIGESTS = 1 << 1,  /* a directory whose security.sehash it computes and writes */
	SEAPP_INIT_DESCENDS = 1 << 2, /* a directory whose entries it visits */
};
/* How the device's libselinux was built (build, below): release_selinux_data_data_ignore, a
 * build flag of 2024 (RELEASE_SELINUX_DATA_DATA_IGNORE), makes /data/data itself app data. */
enum { SEAPP_BUILD_DATA_DATA_IGNORE = 1 << 0 };
/*
 * Flags for the entry at path[0..len): directories /data/misc/profiles/cur/X (one component) are
 * only descended into (vold labels them); app data directories and those starting
 * /data/system_ce, /data/misc_ce or /data/vendor_ce (a prefix test, no '/' needed) are labeled
 * and digested but not descended into (with SEAPP_BUILD_DATA_DATA_IGNORE in build, /data/data
 * too); other directories get all three; other files are labeled.
 */
unsigned seapp_init_walk(const char *path, size_t len, bool is_dir, unsigned build);
/*
 * The same flags for vold's walk when a user unlocks (restorecon --recursive, without --skip-ce,
 * of /data/system_ce/N, /data/vendor_ce/N and /data/misc_ce/N): 0 for an entry it does not
 * visit; within them it labels and digests every directory it visits and enters each but the
 * app data directories (/data/misc_ce/N/sdksandbox).
 */
unsigned seapp_vold_walk(const char *path, size_t len, bool is_dir);

/* The walks a device makes of its /data, as bits: those that reach an entry (android_walk.reach),
 * and those a directory hands down to its entries (android_walk_below). */
enum {
	ANDROID_WALK_INIT = 1,     /* init's boot walk of /data (restorecon -R --skip-ce) */
	ANDROID_WALK_VOLD = 2,     /* vold's walk of a user's CE directories at unlock */
	ANDROID_WALK_LAZY = 4,     /* installd's lazy check of a package directory (or an SDK's) */
	ANDROID_WALK_TREE = 8,     /* installd's walk below a package directory whose label was
				    * wrong: everything, app data rules throughout */
	ANDROID_WALK_PASS = 16,    /* no walk labels it: passed through to reach those below */
	ANDROID_WALK_SANDBOX = 32, /* an SDK sandbox package directory: its directories are LAZY */
	ANDROID_WALK_PROFILE = 64, /* installd's restorecon of /data/misc/profiles/cur/N/PKG */
	ANDROID_WALK_NONE = 128,   /* below what the walks do not enter (for a caller that walks
				    * everything and follows the device's walks alongside) */
};

/* Whether the directory's security.sehash is the digest the current policy gives it (Android's
 * check_context_match_for_dir). */
typedef bool (*android_digest_fn)(void *arg);

/* An entry met by a walk of a device's /data, depth first from /data. */
struct android_walk_at {
	const char *path;     /* absolute, clean, mount point included */
	size_t len;
	bool is_dir;
	bool root;            /* /data, where the walks start; else from says what reaches it */
	unsigned from;        /* what the directory it is in handed down (android_walk_below) */
	unsigned build;       /* SEAPP_BUILD_*: how the device's libselinux was built */
	const pkg_list *pkgs; /* packages.list, for installd's profile directories (NULL: none) */
	/* Asked only of a directory whose digest a walk that reaches it compares; NULL when no
	 * digest is looked at (the walks stop at none). */
	android_digest_fn digest_matches;
	void *arg;
};

/* What the device's walks do at an entry. */
struct android_walk {
	unsigned reach; /* ANDROID_WALK_*: the walks that reach it */
	unsigned init;  /* seapp_init_walk's flags for it */
	bool digest;    /* a directory whose digest a walk that reaches it compares (asked) */
	bool matched;   /* ... and is equal: that walk skips it and everything below it, its own
			 * label unread */
	bool boot;      /* init's boot walk labels it (and digests it where android_walk_digests
			 * says init_digests) */
	bool vold;      /* vold's unlock walk labels it (and digests it: vold_digests) */
	bool labels;    /* a walk labels it; else the device leaves the label it has */
};

/*
 * Which walks reach the entry at and what each does there. Where none labels it, a device keeps
 * the label it has: a labeler that does what the device does gives a label only to an entry
 * that has none (never right).
 */
void android_walk_visit(const struct android_walk_at *at, struct android_walk *w);
/*
 * After a walk labeled the directory path[0..len) that w is about: the walks that go on below
 * it, 0 when none enters it (nor passes through it to reach a walk's start). redo: installd
 * relabels the package directory whole, its own label having been wrong or it carrying
 * user.restorecon_in_progress (matters only for ANDROID_WALK_LAZY).
 */
unsigned android_walk_below(const struct android_walk *w, const char *path, size_t len,
			    bool redo);

/* Where the walks that write digests (init's at boot, vold's at unlock) write them, each walk
 * taken whole, as if no matching digest stopped it: where a labeler that spares the device
 * those walks writes digests too. */
struct android_digests {
	bool init_visits;  /* init's boot walk reaches the directory */
	bool init_enters;  /* ... and enters it */
	bool init_digests; /* ... and writes its security.sehash */
	bool vold_digests; /* vold's unlock walk writes its security.sehash */
};
/* For the directory path[0..len); parent_entered: init_enters of the directory it is in. */
void android_walk_digests(const char *path, size_t len, bool parent_entered, unsigned build,
			  struct android_digests *out);

/* ---- build flags (buildflags.c) ---- */

/*
 * A boolean build flag (RELEASE_...) in a partition's etc/build_flags.json, the summary AOSP's
 * build installs since Android 14: either form, {"flags": [{"name": N, "value": "true"}, ...]}
 * (Android 14's make) or {"flags": [{"flag_declaration": {"name": N, ...}, "value": {"Val":
 * {"BoolValue": true}}}, ...]} (the release-config tool of Android 15). 0 with *value set, ENOENT
 * when the file does not list the flag, EINVAL when it is not such JSON.
 */
int seapp_build_flag(const char *json, size_t len, const char *name, bool *value);

/* ---- the device's own policy files (partitions.c) ---- */

/*
 * Which file_contexts and seapp_contexts files a device's libselinux loads, in its order (Android
 * 14's find_existing_files, which reads the layouts of 8.1 and later; 8.0's and older ones are
 * read the same way): for each part, plat, system_ext, product, vendor, odm, the first of its
 * paths that exists, "/P/etc/selinux/P_file_contexts" then "/P_file_contexts" (the root file
 * system of a recovery or an 8.x ramdisk; plat's is "/system/etc/selinux/plat_file_contexts"),
 * and for vendor then "/vendor/etc/selinux/nonplat_file_contexts" and "/nonplat_file_contexts"
 * (Android 8.0's names; Android 14 no longer looks for them). The same for *_seapp_contexts.
 * APEX policy ("/dev/selinux/apex_*", made at boot) is not on any partition and is not asked for.
 * With no plat file: a device from before Treble (Android 4.4 to 7) loads one file,
 * "/file_contexts.bin" (7), else "/file_contexts", and "/seapp_contexts".
 */
enum seapp_layout {
	SEAPP_LAYOUT_TREBLE, /* plat file_contexts in /system/etc/selinux */
	SEAPP_LAYOUT_ROOTFS, /* plat file_contexts in the root file system */
	SEAPP_LAYOUT_LEGACY, /* one /file_contexts.bin or /file_contexts */
};
enum seapp_kind { SEAPP_FILE_CONTEXTS, SEAPP_SEAPP_CONTEXTS };

struct seapp_policy_file {
	const char *part; /* "plat", "system_ext", "product", "vendor", "odm", or "legacy" */
	const char *path; /* the device's path: "/system/etc/selinux/plat_file_contexts" */
};

#define SEAPP_POLICY_PARTS 5
struct seapp_policy {
	enum seapp_layout layout;
	struct seapp_policy_file fc[SEAPP_POLICY_PARTS], seapp[SEAPP_POLICY_PARTS];
	size_t nfc, nseapp;
	/* ENOENT: the part that is missing ("plat", "vendor"), of which kind, and every path looked
	 * for (NULL-terminated); another error: the path whose lookup failed */
	const char *missing;
	enum seapp_kind missing_kind;
	const char *const *looked;
	const char *failed;
};

/* Whether the device path exists: 1, 0, or a negative errno (the search stops with it). */
typedef int (*seapp_exists_fn)(void *arg, const char *path);

/*
 * Finds the files (seapp_contexts only when want_seapp) by asking exists(arg, PATH) for paths in
 * the order above; no other I/O. Returns 0, the callback's error, or ENOENT when the set is
 * incomplete: no plat file_contexts (nor a legacy one), plat file_contexts in /system/etc/selinux
 * (Treble) but no vendor file_contexts, or (want_seapp) no plat nor legacy seapp_contexts.
 */
int seapp_find_policy(seapp_exists_fn exists, void *arg, bool want_seapp,
		      struct seapp_policy *out);

#ifdef __cplusplus
}
#endif
#endif
