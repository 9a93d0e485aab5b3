/*
 * Loading a set: which files (libselinux's choices: FILE or FILE.bin, FILE.homedirs, FILE.local,
 * FILE.subs, FILE.subs_dist), read by the text or the compiled reader, then indexed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* One file, text or compiled (by its magic number). ENOENT is silent when optional. */
int fc_parse_file(struct fc_set *set, const char *path, bool optional, struct fc_error *err)
{
	char *buf;
	size_t len;
	unsigned fileno_;
	int fd;
	int rc = fc_read_file(set, path, optional, &buf, &len, &fd, err);

	if (rc)
		return rc;
	if (fd >= 0) {
		/* the reader copies what the specs keep */
		if (!(rc = fc_keep_name(set, path, &fileno_)))
			rc = fc_parse_bin(set, fileno_, NULL, fd, len, err);
		close(fd);
		return rc;
	}
	if ((rc = fc_keep_name(set, path, &fileno_)))
		return rc;
	if (fc_bin_magic(buf, len))
		return fc_parse_bin(set, fileno_, buf, -1, len, err);
	return fc_parse_text(set, fileno_, buf, len, err);
}

/*
 * libselinux's open_file(): of PATH and PATH.bin, read the newer (modification time in whole
 * seconds, PATH.bin on a tie), or whichever exists. When the chosen file fails to load and the
 * other one exists, the other one is loaded, as libselinux does, and fc_load_warning says so.
 */
static int fc_parse_choose(struct fc_set *set, const char *path, bool optional, struct fc_error *err)
{
	size_t n = strlen(path);
	char *bin = malloc(n + 5);
	struct stat st, sb;
	struct fc_error local;
	int rc;

	if (!bin)
		return ENOMEM;
	if (!err) {
		memset(&local, 0, sizeof(local));
		err = &local;
	}
	memcpy(bin, path, n);
	memcpy(bin + n, ".bin", 5);
	bool has_text = stat(path, &st) == 0, has_bin = stat(bin, &sb) == 0;
	bool use_bin = has_bin && (!has_text || sb.st_mtime >= st.st_mtime);
	size_t before = set->nspecs;
	rc = fc_parse_file(set, use_bin ? bin : path, optional, err);
	/* As libselinux does: when the newer of the two cannot be loaded, the other one is (the
	 * specs already taken from the first are dropped; regexes are compiled later). */
	if (rc && rc != ENOMEM && has_bin && has_text) {
		struct fc_error e2;
		set->nspecs = before;
		if (!fc_parse_file(set, use_bin ? path : bin, optional, &e2)) {
			char where[32] = "", *w = NULL;
			if (err->line)
				snprintf(where, sizeof(where), "%u:", err->line);
			if (asprintf(&w, "%s%s%s:%s %s; %s is used instead, as libselinux does",
				     set->warning ? set->warning : "", set->warning ? "\n" : "",
				     err->file, where, err->msg, use_bin ? path : bin) >= 0) {
				free(set->warning);
				set->warning = w;
			}
			memset(err, 0, sizeof(*err));
			rc = 0;
		} else {
			set->nspecs = before;
		}
	}
	free(bin);
	return rc;
}

static char *with_suffix(const char *base, const char *suffix)
{
	size_t a = strlen(base), b = strlen(suffix);
	char *p = malloc(a + b + 1);
	if (p) {
		memcpy(p, base, a);
		memcpy(p + a, suffix, b + 1);
	}
	return p;
}

static int parse_extra(struct fc_set *set, const char *base, const char *suffix,
		       struct sublist *subs, struct fc_error *err)
{
	char *p = with_suffix(base, suffix);
	int rc;

	if (!p)
		return ENOMEM;
	rc = subs ? fc_parse_subs(set, p, subs, true, err) : fc_parse_choose(set, p, true, err);
	free(p);
	return rc == ENOENT ? 0 : rc;
}

/* setfiles refuses two specs with the same regex whose types overlap. */
static int check_dups(struct fc_set *set, size_t n, struct fc_error *err)
{
	size_t size = 16;
	int *h;

	while (size < n * 2)
		size <<= 1;
	h = malloc(size * sizeof(int));
	if (!h)
		return ENOMEM;
	memset(h, 0xff, size * sizeof(int));
	for (size_t i = 0; i < n; i++) {
		struct spec *s = &set->specs[i];
		size_t rl = strlen(s->pub.regex), b = fc_hash(s->pub.regex, rl) & (size_t)(size - 1);
		/* Same-regex specs share a probe sequence; every earlier one is in it. */
		for (; h[b] >= 0; b = (b + 1) & (size - 1)) {
			struct spec *o = &set->specs[h[b]];
			if (strcmp(o->pub.regex, s->pub.regex) != 0)
				continue;
			if (o->pub.mode && s->pub.mode && o->pub.mode != s->pub.mode)
				continue;
			fc_seterr(err, s->pub.file, s->pub.line, 0,
				  "'%.200s' is also specified at %s:%u (%s %s %s)", s->pub.regex,
				  o->pub.file, o->pub.line, o->pub.context,
				  strcmp(o->pub.context, s->pub.context) ? "and" : "twice, as",
				  s->pub.context);
			free(h);
			return EINVAL;
		}
		h[b] = (int)i;
	}
	free(h);
	return 0;
}

static int build_orders(struct fc_set *set)
{
	set->plain.order = malloc((set->plain.nspecs + 1) * sizeof(unsigned));
	set->regex.order = malloc((set->regex.nspecs + 1) * sizeof(unsigned));
	if (!set->plain.order || !set->regex.order)
		return ENOMEM;
	for (size_t i = 0; i < set->nspecs; i++) {
		const struct spec *s = &set->specs[i];
		struct tier *t = s->kind == SK_REGEX ? &set->regex : &set->plain;
		t->order[s->tier_pos] = (unsigned)i;
	}
	return 0;
}

static _Atomic uint64_t serials;

/* A new, empty set for a load of n files: 0, EINVAL (none: err says so) or ENOMEM. */
static int set_new(size_t n, unsigned flags, struct fc_set **set, struct fc_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
	if (!n) {
		fc_seterr(err, NULL, 0, 0, "no file_contexts file given");
		return EINVAL;
	}
	if (!(*set = calloc(1, sizeof(**set))))
		return ENOMEM;
	pthread_mutex_init(&(*set)->lock, NULL);
	(*set)->serial = atomic_fetch_add(&serials, 1) + 1;
	(*set)->compare_only = flags & FC_COMPARE_ONLY;
	return 0;
}

/* The index over what was read (rc: how the reading went); the set to *out, or freed. */
static int set_done(struct fc_set *set, int rc, fc_set **out, struct fc_error *err)
{
	fc_index_subs(&set->subs);
	fc_index_subs(&set->dist);
	if (!rc && !set->compare_only)
		rc = fc_build_index(set, err);
	if (!rc && !set->compare_only)
		rc = build_orders(set);
	/* the compiled files' threads, long ended by now: joined without a wait */
	fc_ahead_reap(set);
	if (rc) {
		if (rc == ENOMEM && err && !err->msg[0])
			fc_seterr(err, NULL, 0, 0, "out of memory");
		fc_free(set);
		return rc;
	}
	*out = set;
	return 0;
}

int fc_load_opts(fc_set **out, const char *const *files, size_t nfiles,
		 const struct fc_load_opts *opts, struct fc_error *err)
{
	struct fc_set *set;
	unsigned flags = opts ? opts->flags : 0;
	int rc = set_new(nfiles, flags, &set, err);

	if (rc)
		return rc;
	for (size_t i = 0; i < nfiles && !rc; i++)
		rc = nfiles == 1 ? fc_parse_choose(set, files[i], false, err)
				 : fc_parse_file(set, files[i], false, err);
	if (!rc && (flags & FC_NO_DUPS))
		rc = check_dups(set, set->nspecs, err);
	if (!rc && nfiles == 1 && !(flags & FC_BASE_ONLY)) {
		rc = parse_extra(set, files[0], ".homedirs", NULL, err);
		if (!rc)
			rc = parse_extra(set, files[0], ".local", NULL, err);
	}
	if (!rc && nfiles == 1 && !(flags & FC_NO_SUBS)) {
		rc = parse_extra(set, files[0], ".subs", &set->subs, err);
		if (!rc)
			rc = parse_extra(set, files[0], ".subs_dist", &set->dist, err);
	}
	if (!rc && opts && opts->subs)
		rc = fc_parse_subs(set, opts->subs, &set->subs, false, err);
	if (!rc && opts && opts->subs_dist)
		rc = fc_parse_subs(set, opts->subs_dist, &set->dist, false, err);
	return set_done(set, rc, out, err);
}

/* One file held in memory, text or compiled; the text reader works in place, on a copy. */
static int parse_mem(struct fc_set *set, const struct fc_buf *b, struct fc_error *err)
{
	const char *name = b->name ? b->name : "(memory)";
	unsigned fileno_;
	char *buf;
	int rc;

	if (b->len && !b->data) {
		fc_seterr(err, name, 0, 0, "no data");
		return EINVAL;
	}
	if (b->len > FC_MAX_FILE) {
		fc_seterr(err, name, 0, 0, "file is %zu bytes, larger than the 1 GiB limit", b->len);
		return EFBIG;
	}
	if ((rc = fc_keep_name(set, name, &fileno_)))
		return rc;
	if (fc_bin_magic(b->data, b->len))
		return fc_parse_bin(set, fileno_, b->data, -1, b->len, err);
	if (!(buf = fc_balloc(set, b->len + 1, 16)))
		return ENOMEM;
	if (b->len)
		memcpy(buf, b->data, b->len);
	buf[b->len] = 0;
	return fc_parse_text(set, fileno_, buf, b->len, err);
}

int fc_load_bufs(fc_set **out, const struct fc_buf *bufs, size_t nbufs, unsigned flags,
		 struct fc_error *err)
{
	struct fc_set *set;
	int rc = set_new(nbufs, flags, &set, err);

	if (rc)
		return rc;
	for (size_t i = 0; i < nbufs && !rc; i++)
		rc = parse_mem(set, &bufs[i], err);
	if (!rc && (flags & FC_NO_DUPS))
		rc = check_dups(set, set->nspecs, err);
	return set_done(set, rc, out, err);
}

int fc_load(fc_set **out, const char *const *files, size_t nfiles, unsigned flags,
	    struct fc_error *err)
{
	struct fc_load_opts o = { .flags = flags };
	return fc_load_opts(out, files, nfiles, &o, err);
}

static void free_subs(struct sublist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].src);
		free(l->v[i].dst);
	}
	free(l->v);
}

const char *fc_load_warning(const fc_set *set)
{
	return set ? set->warning : NULL;
}

void fc_free(fc_set *set)
{
	if (!set)
		return;
	fc_ahead_reap(set);
	free(set->warning);
	fc_free_index(set);
	for (size_t i = 0; i < set->nbufs; i++)
		free(set->bufs[i]);
	free(set->bufs);
	fc_arena_free(set);
	for (size_t i = 0; i < set->nnames; i++)
		free(set->names[i]);
	free(set->names);
	free_subs(&set->subs);
	free_subs(&set->dist);
	pthread_mutex_destroy(&set->lock);
	free(set);
}
