/*
 * fcontexts: load SELinux file_contexts and answer lookups exactly as libselinux 3.4's
 * selabel_lookup_raw() does, compiled for speed.
 *
 * Library rules: every call returns 0 or a positive errno value; nothing prints or exits.
 * A loaded set is immutable and may be looked up from several threads at once.
 */
#ifndef FCONTEXTS_H
#define FCONTEXTS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fc_set fc_set;

/* fc_load flags */
enum {
	/* With one file: do not read FILE.homedirs and FILE.local (subs still apply). */
	FC_BASE_ONLY = 1 << 0,
	/* Refuse two specs with the same regex and overlapping types, as setfiles does. */
	FC_NO_DUPS = 1 << 1,
	/* With one file: do not apply FILE.subs and FILE.subs_dist. */
	FC_NO_SUBS = 1 << 2,
	/* The set is only compared, as fc_diff's old side: no lookup index is built (most of a
	 * load's time), and its regexes are not checked at load (fc_diff checks those of the
	 * specs that changed: the others are the new set's). fc_lookup, fc_explain, fc_digest
	 * and fc_digest_explain answer EINVAL on it, fc_spec_prefix NULL. */
	FC_COMPARE_ONLY = 1 << 3,
};

/* Where and why a load failed. */
struct fc_error {
	char file[512];    /* the file at fault, "" when none */
	unsigned line;     /* 1-based, 0 when not about a line */
	unsigned column;   /* 1-based byte column within the line, 0 when unknown */
	char msg[512];     /* the reason, one line, no file or line prefix */
};

/*
 * Load file_contexts files in order. With exactly one file, and unless flags say otherwise,
 * behave like selabel_open(SELABEL_CTX_FILE) with SELABEL_OPT_PATH: also read FILE.homedirs and
 * FILE.local when they exist, apply FILE.subs and FILE.subs_dist. Several files are read as their
 * concatenation with no extras. All or nothing: on error *out is untouched and err says why.
 * Regexes are checked with PCRE2 at load (libselinux 3.4 only fails at lookup).
 */
int fc_load(fc_set **out, const char *const *files, size_t nfiles, unsigned flags,
	    struct fc_error *err);

/* What loading worked around, or NULL: lines "FILE:[LINE:] REASON; OTHER is used instead" for
 * each FILE (or FILE.bin) that failed to load while the other of the pair loaded, as libselinux
 * falls back to the older of the two. Owned by the set. */
const char *fc_load_warning(const fc_set *set);

/* Add substitution files explicitly (SRC DST lines): local ones first, then dist. */
struct fc_load_opts {
	unsigned flags;
	const char *subs;      /* like FILE.subs; NULL for none */
	const char *subs_dist; /* like FILE.subs_dist; NULL for none */
};
int fc_load_opts(fc_set **out, const char *const *files, size_t nfiles,
		 const struct fc_load_opts *opts, struct fc_error *err);

/* One file_contexts file held in memory (read out of an image, say). */
struct fc_buf {
	const char *name;  /* for messages and fc_spec.file, e.g. "vendor.img:/etc/selinux/..." */
	const void *data;  /* text, or compiled (sefcontext_compile's form, by its magic number) */
	size_t len;
};
/*
 * Load file_contexts held in memory, in order, as fc_load reads several files: each buffer as it
 * is, and nothing beside it (no NAME.bin, .homedirs, .local, .subs or .subs_dist: there is no
 * file to look beside). flags: FC_NO_DUPS, FC_COMPARE_ONLY; the others do not apply. The set copies what it keeps:
 * the buffers may be freed once it returns. Errors name the buffer's name, line and column.
 */
int fc_load_bufs(fc_set **out, const struct fc_buf *bufs, size_t nbufs, unsigned flags,
		 struct fc_error *err);

void fc_free(fc_set *set);

enum fc_status {
	FC_LABEL = 0,   /* a context was found */
	FC_NONE = 1,    /* the deciding spec says <<none>>: leave unlabeled */
	FC_NOMATCH = 2, /* no spec matched */
};

/* The spec that decided a lookup. Pointers stay valid while the set lives. */
struct fc_spec {
	const char *file;    /* as given to fc_load (or FILE.homedirs ...) */
	unsigned line;       /* 1-based */
	const char *regex;   /* as written */
	const char *type;    /* "--", "-d", ... or NULL */
	const char *context; /* as written, "<<none>>" included */
	mode_t mode;         /* S_IFxxx of the type, 0 when untyped */
	unsigned index;      /* position in load order */
};

struct fc_result {
	enum fc_status status;
	const char *context;       /* the context for FC_LABEL, else NULL */
	const struct fc_spec *spec; /* the deciding spec, NULL for FC_NOMATCH; on EIO the spec whose
				     * match PCRE2 gave up on */
	int match_error;           /* on EIO: PCRE2's error code (fc_match_error says what it is) */
};

/*
 * Look up a path with the file's mode (only S_IFMT bits count; 0 lets typed specs match any
 * file). Returns 0 and fills res, EINVAL for an empty path, ENOMEM, or EIO when PCRE2 gave up
 * while matching (a match or depth limit: catastrophic backtracking), with the spec in res->spec
 * and the reason in res->match_error (libselinux 3.4 answers no label then too).
 */
int fc_lookup(const fc_set *set, const char *path, mode_t mode, struct fc_result *res);
/* What a PCRE2 match error code means, in buf (n bytes): "match limit exceeded", ... */
const char *fc_match_error(int code, char *buf, size_t n);

/* The number of specs, and spec i in load order. */
size_t fc_count(const fc_set *set);
const struct fc_spec *fc_spec_at(const fc_set *set, size_t i);

/* Every spec that matches path and mode, in the order a lookup tries them (the first one
 * decides). Calls fn for each; stops early when fn returns non-zero. */
int fc_explain(const fc_set *set, const char *path, mode_t mode,
	       int (*fn)(const struct fc_spec *spec, void *arg), void *arg);

/* ---- what changed between two sets ---- */

enum fc_change_kind {
	FC_ADDED,    /* only in the new set */
	FC_REMOVED,  /* only in the old set */
	FC_CONTEXT,  /* same regex and type, another context */
	FC_RETYPED,  /* same regex and context, another type */
	FC_MOVED,    /* the same spec, in another place relative to others */
};

struct fc_change {
	enum fc_change_kind kind;
	const struct fc_spec *old; /* NULL for FC_ADDED */
	const struct fc_spec *new; /* NULL for FC_REMOVED */
};

struct fc_diff;
/* Compares two sets with a longest-common-subsequence diff of their spec lists, keyed by regex,
 * type and context. Both sets must outlive the diff. Either may be FC_COMPARE_ONLY: its
 * changed specs' regexes are then checked here (EINVAL, err naming the file, line and column,
 * as a load would; err may be NULL). */
int fc_diff(const fc_set *old, const fc_set *new, struct fc_diff **out, struct fc_error *err);
void fc_diff_free(struct fc_diff *d);
size_t fc_diff_count(const struct fc_diff *d);
const struct fc_change *fc_diff_at(const struct fc_diff *d, size_t i);
/* True when no pruning is possible (substitutions differ, or the diff was too large). */
bool fc_diff_everything(const struct fc_diff *d);
/* True when fc_diff_reaches answers 1 for every directory: fc_diff_everything, or a changed spec
 * whose regex begins with .* (a path it matches may be below any directory). */
bool fc_diff_reaches_all(const struct fc_diff *d);
/* 1 when a path strictly below the directory dir (a clean absolute path) may get another label
 * from the new set than from the old one; 0 when none can. */
int fc_diff_reaches(const struct fc_diff *d, const char *dir);
/* The literal prefix every path a spec matches starts with ("" when it has none), NULL for a
 * spec that can match nothing. */
const char *fc_spec_prefix(const fc_set *set, const struct fc_spec *spec, size_t *len);

/* ---- the directory digest restorecon keeps (security.sehash) ---- */

#define FC_DIGEST_LEN 20

/*
 * libselinux 3.4's selabel_hash_all_partial_matches(dir), the value `restorecon -D` and Android's
 * restorecon store in security.sehash: SHA-1 over every spec, of any type, that matches dir or
 * may match a path below it (PCRE2 partial matching), in lookup order (plain specs, then regex
 * specs, each from the last line up), each as its regex and a NUL, its type as a host mode_t (0
 * when untyped; 4 bytes on x86_64 as on 64-bit Android, but 32-bit Android hashes 2) and its
 * context and a NUL. The list ends before the first such spec whose context is <<none>>. dir is
 * cleaned and substituted as fc_lookup does. Returns 0 and fills out; ENOENT when the list is
 * empty (libselinux: no digest, restorecon stores none); EINVAL when dir is NULL, empty or
 * relative; ENOMEM; EIO when PCRE2 failed on a spec that the list reaches (libselinux then hashes
 * the specs before it; store no digest). Thread-safe like fc_lookup: the first call on a set
 * builds an index (milliseconds), and regexes get their JIT code as keys first reach them.
 */
int fc_digest(const fc_set *set, const char *dir, unsigned char out[FC_DIGEST_LEN]);

/* The specs fc_digest(set, dir) hashes, in its order: calls fn for each; stops early when fn
 * returns non-zero. Same returns as fc_digest, but 0 when the list is empty. */
int fc_digest_explain(const fc_set *set, const char *dir,
		      int (*fn)(const struct fc_spec *spec, void *arg), void *arg);

#ifdef __cplusplus
}
#endif
#endif
