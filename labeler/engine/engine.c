/* label_source: the walk that looks every file of a target up and writes (or checks) its label. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static struct link *link_slot(struct run *r, uint64_t dev, uint64_t ino)
{
	if (r->nlinks * 2 >= r->linkmask) {
		size_t nm = r->linkmask ? r->linkmask * 2 + 1 : 1023;
		struct link *nl = calloc(nm + 1, sizeof(*nl));
		if (!nl)
			return NULL;
		for (size_t i = 0; r->links && i <= r->linkmask; i++)
			if (r->links[i].used) {
				size_t b = ((r->links[i].ino ^ r->links[i].dev * 31) * 2654435761u) & nm;
				while (nl[b].used)
					b = (b + 1) & nm;
				nl[b] = r->links[i];
			}
		free(r->links);
		r->links = nl;
		r->linkmask = nm;
	}
	size_t b = ((ino ^ dev * 31) * 2654435761u) & r->linkmask;
	while (r->links[b].used && (r->links[b].ino != ino || r->links[b].dev != dev))
		b = (b + 1) & r->linkmask;
	return &r->links[b];
}

bool label_excluded(const struct label_opts *o, const char *path, size_t len)
{
	for (size_t i = 0; i < o->nexcludes; i++) {
		size_t el = strlen(o->excludes[i]);
		if (len >= el && !memcmp(path, o->excludes[i], el) &&
		    (len == el || path[el] == '/' || (el == 1 && o->excludes[i][0] == '/')))
			return true;
	}
	return false;
}

/* The label a file wants: file_contexts' answer, or for app data Android's. */
struct want {
	const char *ctx;                 /* NULL: none; the file is left as it is */
	const struct fc_spec *spec;      /* the deciding spec */
	const struct seapp_answer *seapp; /* the deciding seapp_contexts line, if any */
};

/* Something at this entry is not right (see digests.c). */
static void mark_wrong(struct run *r)
{
	r->entry_wrong = true;
	if (r->o->digests)
		dig_wrong(r);
}

/* Where a label comes from, for messages: "file:line" of the spec, and of the seapp line. */
static const char *where(const struct want *w, char *buf, size_t n)
{
	if (!w->seapp)
		return rpt_spec_where(w->spec, buf, n);
	snprintf(buf, n, "%s:%u, %s:%u", w->spec ? w->spec->file : "?", w->spec ? w->spec->line : 0,
		 w->seapp->file, w->seapp->line);
	return buf;
}

/* Hard links: the first path that gets a label decides, as in setfiles (a path with no label,
 * or <<none>>, leaves the file to its other names). false when another name decided already
 * (a conflict is reported); -1 in *fatal when out of memory. */
static bool first_name(struct run *r, const struct label_file *f, const struct want *w,
		       int *fatal)
{
	char w1[1024], w2[1024];
	struct link *l = link_slot(r, f->dev, f->ino);
	if (!l) {
		*fatal = -1;
		return false;
	}
	if (l->used) {
		if (strcmp(l->ctx, w->ctx)) {
			r->st->conflicts++;
			rpt_clear(r);
			fprintf(stderr, "fclabel %s: hard link conflict: inode %llu is %s (%s, %s) and %s "
				"(%s, %s); keeping the first\n", r->o->cmd, (unsigned long long)f->ino,
				qname(l->path), l->ctx, rpt_spec_where(l->spec, w1, sizeof(w1)),
				qname(f->path), w->ctx,
				where(w, w2, sizeof(w2)));
			rpt_event(r, "conflict", f->path, l->ctx, w->ctx, w->spec, l->path);
		}
		r->st->links++; /* another name of a file labeled already */
		return false;
	}
	l->used = true;
	l->dev = f->dev;
	l->ino = f->ino;
	l->spec = w->spec;
	l->path = strdup(f->path);
	l->ctx = strdup(w->ctx);
	r->nlinks++;
	if (!l->path || !l->ctx)
		*fatal = -1;
	return !*fatal;
}

/* The file's current label (*cur NULL when it has none); false after a warning. */
static bool current_label(struct run *r, const struct label_file *f, const char **cur,
			  size_t *len)
{
	char why[1024];
	if (r->src->get(r->src->arg, f, cur, len, why, sizeof(why)) == 0)
		return true;
	rpt_warn(r, f->path, why);
	r->st->errors++;
	mark_wrong(r);
	return false;
}

/* Writes the label; false after a warning (counted as an error). */
static bool write_label(struct run *r, const struct label_file *f, const char *cur,
			const struct want *w)
{
	char w1[8192], why[1024];
	int rc = r->src->set(r->src->arg, f, w->ctx, why, sizeof(why));
	if (rc == LSET_OK)
		return true;
	if (label_stops(r, f, rc, why))
		return false;
	if (rc == LSET_LEFT) {
		/* damage found there (a count no write may trust): as the walk reports damage */
		rpt_walk_warn(r, f->path, why);
		mark_wrong(r);
		return false;
	}
	snprintf(w1, sizeof(w1), "cannot write %s: %s; left as it is", w->ctx, why);
	/* a full target: the first few are named, the total follows at the end */
	if (rc != LSET_NOSPACE || ++r->st->nospace <= 10)
		rpt_warn(r, f->path, w1);
	else
		r->st->warnings++;
	r->st->errors++;
	mark_wrong(r);
	rpt_event(r, "error", f->path, cur, w->ctx, w->spec, why);
	return false;
}

/* Whether a stored value is the label ctx: stored with its NUL, as setfiles does; a stored
 * value without one is the same label. */
bool label_same(const char *cur, size_t curlen, const char *ctx)
{
	size_t want = strlen(ctx);
	return cur && (curlen == want + 1 || curlen == want) && !memcmp(cur, ctx, want) &&
	       (curlen == want || cur[want] == 0);
}

/* Whether two labels differ only in their level: user, role and type the same. */
static bool level_only(const char *cur, size_t curlen, const char *want)
{
	size_t i = 0, colons = 0;
	while (i < curlen && cur[i] && want[i] && cur[i] == want[i] && colons < 3)
		colons += cur[i++] == ':';
	return colons == 3 && !label_same(cur, curlen, want);
}

/* relabel: whether the directory may be left out, as no change of the policy (nor of a
 * package's seapp answer) can reach below it, and with --digests the last run left it right. */
static bool prunable(struct run *r, const struct label_file *f)
{
	const struct label_opts *o = r->o;
	if (!o->diff || r->collect_only)
		return false;
	if (o->appdata && (appdata_holds_pkgdirs(f->path, f->pathlen) ||
			   appdata_pkg_changed(o->appdata, f->path, f->pathlen)))
		return false;
	if (fc_diff_reaches(o->diff, f->path))
		return false;
	return !o->digests || (r->entry_verified = dig_verified(r, f));
}

/* Counts the file, and decides whether its subtree is walked (1: no change can reach it). */
static int enter(struct run *r, const struct label_file *f)
{
	int descend = 0;
	r->st->scanned++;
	if (S_ISDIR(f->mode)) {
		if (prunable(r, f)) {
			descend = 1;
			r->st->dirs_skipped++;
		} else {
			r->st->dirs++;
		}
	}
	rpt_progress(r);
	return descend;
}

static bool valid_type(struct run *r, const struct label_file *f)
{
	char w[256];
	switch (f->mode & S_IFMT) {
	case S_IFREG: case S_IFDIR: case S_IFLNK: case S_IFCHR:
	case S_IFBLK: case S_IFIFO: case S_IFSOCK:
		return true;
	}
	snprintf(w, sizeof(w), "inode %llu has an invalid file type (mode 0%o); left as it is",
		 (unsigned long long)f->ino, f->mode);
	rpt_walk_warn(r, f->path, w);
	mark_wrong(r);
	return false;
}

/* A file a device leaves as it is, named with -v and in the report. */
static void left_alone(struct run *r, const struct label_file *f, const char *kind,
		       const char *why)
{
	if (r->o->verbose && !r->collect_only) {
		rpt_clear(r);
		printf("left as it is: %s (%s)\n", qname(f->path), why);
	}
	rpt_event(r, kind, f->path, NULL, NULL, NULL, why);
}

/* App data: w->ctx becomes the label Android gives it, or NULL when a device leaves the file
 * (and, at its package directory, the package's files) as it is. Returns -1 when out of memory. */
static int app_label(struct run *r, const struct label_file *f, const struct fc_result *res,
		     struct want *w, int *descend)
{
	struct ad_answer a;
	char why[512];
	int rc = appdata_label(r->o->appdata, f->path, f->pathlen, res->context, r->want,
			       sizeof(r->want), &a);
	if (rc == ENOMEM)
		return -1;
	if (rc) {
		snprintf(why, sizeof(why), "cannot make its app data label: %s", strerror(rc));
		rpt_warn(r, f->path, why);
		r->st->errors++;
		mark_wrong(r);
		w->ctx = NULL;
		return 0;
	}
	switch (a.kind) {
	case AD_NOT_APP:
		return 0;
	case AD_LABEL:
		w->ctx = r->want;
		w->seapp = a.ans && a.ans->found ? a.ans : NULL;
		return 0;
	case AD_UNKNOWN:
	case AD_FAILED:
		break;
	}
	/* as a device: the package's files are left as they are (and are not known to be right) */
	w->ctx = NULL;
	mark_wrong(r);
	if (!a.pkgdir)
		return 0;
	*descend = 1;
	if (!r->collect_only) {
		if (a.kind == AD_UNKNOWN)
			r->st->unknown_pkgs++;
		else
			r->st->seapp_failed++;
	}
	if (a.kind == AD_UNKNOWN)
		left_alone(r, f, "unknown-package", "its package is not in packages.list: its files "
			   "are left as they are");
	else {
		snprintf(why, sizeof(why), "Android's seapp lookup fails for package %s: %s; its files "
			 "are left as they are", a.pkg->name, a.why ? a.why : "?");
		left_alone(r, f, "seapp-failed", why);
	}
	return 0;
}

/* Why a lookup failed: PCRE2 giving up on a spec (catastrophic backtracking) names the spec. */
static void lookup_failed(char *why, size_t n, int rc, const struct fc_result *res)
{
	char e[128];
	if (rc == EIO && res->spec)
		snprintf(why, n, "lookup failed: PCRE2 gave up matching %s:%u (%.200s): %s; left as it "
			 "is", res->spec->file, res->spec->line, res->spec->regex,
			 fc_match_error(res->match_error, e, sizeof(e)));
	else
		snprintf(why, n, "lookup failed: %s; left as it is", strerror(rc));
}

/* The label the file wants (w->ctx NULL: none). Returns -1 when out of memory. */
static int wanted(struct run *r, const struct label_file *f, struct want *w, int *descend)
{
	struct fc_result res;
	char why[1024];
	int rc = f->res ? f->res_rc : fc_lookup(r->set, f->path, f->mode, &res);
	if (f->res)
		res = *f->res;
	if (rc) {
		lookup_failed(why, sizeof(why), rc, &res);
		rpt_warn(r, f->path, why);
		r->st->errors++;
		mark_wrong(r);
		rpt_event(r, "error", f->path, NULL, NULL, rc == EIO ? res.spec : NULL, why);
		return 0;
	}
	*w = (struct want){ res.status == FC_LABEL ? res.context : NULL, res.spec, NULL };
	if (w->ctx && r->o->appdata)
		return app_label(r, f, &res, w, descend);
	if (!w->ctx) {
		if (!r->collect_only) {
			r->st->nolabel++;
			r->st->nomatch += res.status == FC_NOMATCH;
		}
		/* a device leaves it as it is: "no match, but not an error" */
		if (r->o->appdata)
			left_alone(r, f, "no-match", res.status == FC_NONE ? "<<none>>" :
				   "no file_contexts line matches it");
	}
	return 0;
}

/* Labels (checks) one file: -1 when out of memory. */
static int label_one(struct run *r, const struct label_file *f, int *descend)
{
	const struct label_opts *o = r->o;
	struct label_stats *st = r->st;
	struct want w = { 0 };
	char w1[1024];
	int fatal = 0;

	const char *cur = NULL;
	size_t curlen = 0;
	bool have = false;

	if (wanted(r, f, &w, descend) < 0)
		return -1;
	if (!w.ctx)
		return 0;
	if (r->dev_keep || r->dev_lazy) {
		/* --as-device: what the device does depends on the label the file has */
		if (!current_label(r, f, &cur, &curlen))
			return 0;
		have = true;
		if (r->dev_keep && cur) {
			if (!r->collect_only)
				st->kept++;
			return 0;
		}
		r->entry_differs = !label_same(cur, curlen, w.ctx);
	}
	if (!S_ISDIR(f->mode) && f->nlink > 1 && !first_name(r, f, &w, &fatal))
		return fatal;
	if (r->collect_only)
		return 0;
	if (!have && !current_label(r, f, &cur, &curlen))
		return 0;
	if (label_same(cur, curlen, w.ctx)) {
		st->unchanged++;
		return 0;
	}
	if (o->diff && !S_ISDIR(f->mode) && f->nlink > 1) {
		/* Another name of this inode may sit in a subtree this walk skips, and come first
		 * in walk order: then it decides. Only a full walk can tell. */
		r->need_full = true;
		return 0;
	}
	if (o->mode == LM_CHECK) {
		st->changed++;
		if (r->shadow_keep && cur && level_only(cur, curlen, w.ctx))
			st->device_levels++;
		rpt_clear(r);
		if (o->list)
			fprintf(o->list, "%s\thas %s\twants %s\t%s\n", qname(f->path), cur ? cur : "(none)",
				w.ctx, where(&w, w1, sizeof(w1)));
		rpt_event(r, "differs", f->path, cur, w.ctx, w.spec, NULL);
		return 0;
	}
	if (o->mode == LM_LABEL && !write_label(r, f, cur, &w))
		return 0;
	st->changed++;
	if (o->verbose) {
		rpt_clear(r);
		printf("%s %s: %s -> %s (%s)\n", o->mode == LM_DRYRUN ? "would relabel" : "relabeled",
		       qname(f->path), cur ? cur : "(none)", w.ctx, where(&w, w1, sizeof(w1)));
	}
	rpt_event(r, o->mode == LM_DRYRUN ? "would-change" : "changed", f->path, cur, w.ctx, w.spec,
	      w.seapp ? w.seapp->file : NULL);
	return 0;
}

/* A directory that would be entered but is encrypted: its names are ciphertext, and a label
 * made from one would be wrong. Returns 1: not entered. */
static int encrypted_dir(struct run *r, const struct label_file *f)
{
	if (!r->collect_only) {
		r->st->encrypted++;
		left_alone(r, f, "encrypted", "an encrypted directory: its own label is written, "
			   "what is below it is left to the device");
	}
	mark_wrong(r);
	if (r->o->digests && !r->collect_only)
		dig_not_entered(r, f, false, false);
	return 1;
}

/* --as-device: one entry as the device's own walks treat it (device.c says which reach it). */
static int visit_as_device(struct run *r, const struct label_file *f)
{
	bool digests = r->o->digests && !r->collect_only;
	struct android_walk d;
	int descend = 0;

	r->st->scanned++;
	rpt_progress(r);
	if (!valid_type(r, f))
		return 1;
	dev_classify(r, f, &d);
	r->dev_keep = !d.labels;
	r->dev_lazy = d.reach & ANDROID_WALK_LAZY;
	r->dev_walked = d.boot;
	r->dev_vold_walked = d.vold;
	r->entry_differs = -1;
	int rc = label_one(r, f, &descend);
	r->dev_keep = r->dev_lazy = false;
	if (rc < 0)
		return -1;
	if (!S_ISDIR(f->mode))
		return 1;
	bool in_progress = (d.reach & ANDROID_WALK_LAZY) && dev_in_progress(r, f);
	dev_report(r, f, &d, r->entry_differs, in_progress);
	unsigned below = descend ? 0 : dev_below(f, &d, r->entry_differs > 0 || in_progress);
	if (below && f->encrypted)
		return encrypted_dir(r, f);
	if (!below) {
		/* what is below is right as far as the device knows, but for what was found at f */
		if (digests && !d.matched)
			dig_not_entered(r, f, !r->entry_wrong, false);
		return 1;
	}
	if (dev_push(r, below) < 0 || (digests && dig_enter(r, f) < 0))
		return -1;
	r->st->dirs++;
	return 0;
}

/* A damaged entry the walk reports (and leaves alone): a warning, and an error for the exit
 * status, since the image needs e2fsck and some of its files may not have the label they want. */
void rpt_walk_warn(void *arg, const char *path, const char *msg)
{
	struct run *r = arg;
	rpt_warn(arg, path, msg);
	r->st->errors++;
	if (r->o->digests)
		dig_wrong(r); /* what lies there is not known to be right */
	rpt_event(r, "error", path, NULL, NULL, NULL, msg);
}

volatile sig_atomic_t label_stop_signal;

/* The target's word between two files: whether the walk goes on; what it made durable is
 * counted on disk. */
static bool target_between(struct run *r)
{
	bool durable = false;
	int how = r->src->between ? r->src->between(r->src->arg, &durable, r->stop_why,
						     sizeof(r->stop_why)) : 0;
	if (durable) {
		r->st->written = r->st->changed;
		r->st->digests_on_disk = r->st->digests_written;
	}
	if (how)
		r->stop = how;
	return !how;
}

/* check of a device's /data without --as-device: which of the device's walks would set the
 * entry's label (device.c), so that the differences they would leave are counted
 * (device_levels); the check itself is the full one. */
static void shadow_classify(struct run *r, const struct label_file *f,
			    struct android_walk *d)
{
	dev_classify(r, f, d);
	r->shadow_keep = !d->labels;
	r->dev_lazy = d->reach & ANDROID_WALK_LAZY; /* (label_one: whether its label is wanted) */
	r->entry_differs = -1;
}

/* ... and what they hand to the entries of the directory f the check enters. */
static int shadow_enter(struct run *r, const struct label_file *f,
			const struct android_walk *d)
{
	bool redo = r->entry_differs > 0 ||
		    ((d->reach & ANDROID_WALK_LAZY) && dev_in_progress(r, f));
	unsigned below = dev_below(f, d, redo);
	return dev_push(r, below ? below : ANDROID_WALK_NONE);
}

/*
 * dump: the file and its label as the target stores it, handed to the caller, who sorts and
 * writes them (the engine prints nothing of it). A label that cannot be read is a warning and an
 * error, and the file is not handed on: a listing that said "-" there would be a wrong one, and
 * a file_contexts made from it would strip the label.
 */
static int dump_file(struct run *r, const struct label_file *f)
{
	const char *cur = NULL;
	size_t len = 0;
	char why[512];

	r->st->scanned++;
	if (r->src->get(r->src->arg, f, &cur, &len, why, sizeof(why))) {
		rpt_walk_warn(r, f->path, why);
		return 0;
	}
	if (r->o->dump(r->o->dump_arg, f, cur, len))
		return -1;
	if (S_ISDIR(f->mode) && f->encrypted) {
		r->st->encrypted++;
		return 1;
	}
	if (S_ISDIR(f->mode))
		r->st->dirs++;
	return 0;
}

/* One file, as the target's walk met it. */
static int visit_file(struct run *r, const struct label_file *f)
{
	const struct label_opts *o = r->o;

	/* SIGINT or SIGTERM, a target refused or read-only, or the target's own reason (an I/O
	 * error, a failed commit): the walk stops here */
	if (label_stop_signal || r->refused || r->read_only || r->stop || !target_between(r))
		return -1;

	if (o->mode == LM_DUMP)
		return dump_file(r, f);
	r->entry_wrong = false;
	r->entry_verified = false;
	if (o->nexcludes && label_excluded(o, f->path, f->pathlen)) {
		mark_wrong(r); /* what -e leaves out is not known to be right */
		return 1;
	}
	if (o->device)
		return visit_as_device(r, f);
	int descend = enter(r, f);
	bool pruned = descend;
	if (!valid_type(r, f))
		return 1;
	struct android_walk d;
	if (o->device_shadow)
		shadow_classify(r, f, &d);
	int rc = label_one(r, f, &descend);
	r->shadow_keep = r->dev_lazy = false;
	if (rc < 0)
		return -1;
	if (!S_ISDIR(f->mode))
		return descend;
	if (f->encrypted && !descend)
		return encrypted_dir(r, f);
	if (o->digests && !r->collect_only) {
		if (!descend && dig_enter(r, f) < 0)
			return -1;
		if (descend)
			dig_not_entered(r, f, pruned && !r->entry_wrong, r->entry_verified);
	}
	if (o->device_shadow && !descend && shadow_enter(r, f, &d) < 0)
		return -1;
	return descend;
}

void label_leave(struct label_run *run, const struct label_file *f)
{
	struct run *r = (struct run *)run;
	if (r->o->digests && !r->collect_only)
		dig_leave(r, f);
	if (r->o->device || r->o->device_shadow)
		dev_pop(r);
}

int label_visit(struct label_run *run, const struct label_file *f)
{
	return visit_file((struct run *)run, f);
}

bool label_writes_ahead(struct label_run *run)
{
	const struct run *r = (const struct run *)run;
	return r->o->mode == LM_LABEL && !r->collect_only && !r->o->diff && !r->o->appdata;
}

void label_walk_warn(struct label_run *run, const char *path, const char *msg)
{
	rpt_walk_warn(run, path, msg);
}

static long walk_any(struct run *r)
{
	return r->src->walk(r->src->arg, (struct label_run *)r);
}

static void free_links(struct run *r)
{
	for (size_t i = 0; r->links && i <= r->linkmask; i++) {
		free(r->links[i].path);
		free(r->links[i].ctx);
	}
	free(r->links);
	r->links = NULL;
	r->nlinks = r->linkmask = 0;
}

/* How the walk ended, once it has returned: a stop asked for by a signal, by the target (an
 * I/O error, a failed commit), a refusal or a read-only file system overrides what the walk made
 * of it (an error returned from a visit). */
static int stopped(struct run *r, long rc)
{
	rpt_clear(r);
	if (label_stop_signal)
		return LABEL_INTERRUPTED;
	if (r->stop)
		return r->stop == LSRC_IO ? LABEL_IO_FAILED : LABEL_FAILED;
	if (r->refused)
		return LABEL_REFUSED;
	if (r->read_only)
		return LABEL_READ_ONLY;
	if (rc) {
		snprintf(r->stop_why, sizeof(r->stop_why), "%s: the walk stopped: %s", r->src->name,
			 r->src->strerror ? r->src->strerror(rc) : strerror((int)rc));
		return LABEL_FAILED;
	}
	return 0;
}

/* The target's word at the end: what writing takes then; every label written is on disk when it
 * says so (or, with nothing to say, as each was written: a live tree). */
static int target_finish(struct run *r, int rc)
{
	bool durable = !r->src->finish;
	int how = rc == 0 ? LSRC_DONE : rc == LABEL_IO_FAILED ? LSRC_IO : rc == LABEL_FAILED ?
		  LSRC_FAILED : LSRC_STOPPED;
	char why[sizeof(r->stop_why)];
	int f = r->src->finish ? r->src->finish(r->src->arg, how, r->st, &durable, why, sizeof(why))
			       : 0;
	if (durable) {
		r->st->written = r->st->changed;
		r->st->digests_on_disk = r->st->digests_written;
	}
	if (!f || rc == LABEL_IO_FAILED || rc == LABEL_FAILED)
		return rc;
	snprintf(r->stop_why, sizeof(r->stop_why), "%s", why);
	return f == LSRC_IO ? LABEL_IO_FAILED : LABEL_FAILED;
}

/* What stopped the walk, said once at the end. */
static void say_stop(struct run *r, int rc)
{
	const char *cmd = r->o->cmd, *name = r->src->name;
	struct label_stats *st = r->st;
	if (rc == LABEL_INTERRUPTED) {
		st->interrupted = true;
		return;
	}
	if (rc == LABEL_IO_FAILED)
		fprintf(stderr, "fclabel %s: %s; stopped\n", cmd, r->stop_why);
	else if (rc == LABEL_READ_ONLY)
		fprintf(stderr, "fclabel %s: %s: %s is on a read-only file system; stopped at the first "
			"write\n", cmd, name, qname(r->read_only_at));
	else if (rc == LABEL_REFUSED)
		fprintf(stderr, "fclabel %s: %s: refusing to write to it: %s; stopped (run e2fsck "
			"-f first; fclabel-label(1) says what is checked)\n", cmd, name, r->stop_why);
	else if (rc == LABEL_FAILED)
		fprintf(stderr, "fclabel %s: %s\n", cmd, r->stop_why);
	if (rc)
		st->errors++;
}

int label_source(const struct label_src *src, const fc_set *set, const struct label_opts *o,
		 struct label_stats *st)
{
	struct run r = { .src = src, .set = set, .o = o, .st = st };
	struct label_opts full; /* relabel's second walk, whole: r.o until the end (say_stop) */
	int rc;

	memset(st, 0, sizeof(*st));
	r.start = rpt_now();
	r.tty = o->progress && isatty(STDERR_FILENO);
	r.total = src->total;
	if (o->strict && o->mode == LM_LABEL) {
		/* first pass: conflicts are an error before anything is written */
		r.collect_only = true;
		long wrc = walk_any(&r);
		rpt_clear(&r);
		unsigned long conflicts = st->conflicts;
		free_links(&r);
		if (wrc || conflicts) {
			if (!wrc)
				fprintf(stderr, "fclabel %s: %lu hard link conflict(s) and --strict: "
					"nothing written\n", o->cmd, conflicts);
			st->conflicts = conflicts;
			st->aborted = wrc ? "walk failed" : "hard link conflicts under --strict";
			return -1;
		}
		memset(st, 0, sizeof(*st));
		r.collect_only = false;
		r.ndev = 0;
		r.start = rpt_now();
	}
	rc = stopped(&r, walk_any(&r));
	if (!rc && r.need_full) {
		struct label_stats first = *st;
		full = *o;
		full.diff = NULL;
		fprintf(stderr, "fclabel %s: a hard-linked file's label changes and its other names may "
			"be in skipped directories: walking every directory\n", o->cmd);
		free_links(&r);
		memset(st, 0, sizeof(*st));
		r.o = &full;
		r.need_full = false;
		rc = stopped(&r, walk_any(&r));
		st->changed += first.changed;
		st->unchanged -= st->unchanged >= first.changed ? first.changed : 0;
		st->dirs_skipped = 0;
	}
	rc = target_finish(&r, rc);
	if (st->nospace)
		fprintf(stderr, "fclabel %s: %s: %lu file(s) could not be labeled: the %s has no "
			"free %s for their labels (%s)\n", o->cmd, src->name, st->nospace,
			src->what ? src->what : "target", src->unit ? src->unit : "space",
			st->nospace > 10 ? "the first 10 are named above" : "named above");
	free(r.ds);
	free(r.dev);
	free_links(&r);
	st->seconds = rpt_now() - r.start;
	st->total = r.total;
	say_stop(&r, rc);
	return rc ? -1 : 0;
}
