/* label_tree: the walk that looks every file up and writes (or checks) its label. */
#include <errno.h>
#include <et/com_err.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"

struct suspect {
	blk64_t blk; /* first: bsearch compares it */
	unsigned refcount;
	size_t users;
};

static int cmp_blk(const void *a, const void *b)
{
	blk64_t x = *(const blk64_t *)a, y = *(const blk64_t *)b;
	return x < y ? -1 : x > y;
}

/* The attribute blocks of the inodes in use (links count not 0, as e2fsck counts them), and of
 * the orphans, whose references a mount releases later. */
struct ea_list {
	blk64_t *blks;
	size_t n, cap;
	const struct orphans *orphans;
};

static int add_ea_block(ext2_filsys fs, ext2_ino_t ino, const struct ext2_inode *in, void *arg)
{
	struct ea_list *l = arg;
	blk64_t b = ext2fs_file_acl_block(fs, (struct ext2_inode *)in);
	if (!b || !inode_holds_blocks(l->orphans, ino, in))
		return 0;
	if (l->n == l->cap) {
		size_t c = l->cap ? l->cap * 2 : 1024;
		blk64_t *nbk = realloc(l->blks, c * sizeof(*nbk));
		if (!nbk)
			return -1;
		l->blks = nbk;
		l->cap = c;
	}
	l->blks[l->n++] = b;
	return 0;
}

/*
 * Counts the inodes in use that point to each attribute block, and keeps the blocks whose
 * h_refcount says otherwise. Dropping a reference trusts h_refcount: one too low frees (or
 * rewrites in place) a block other inodes still use, one too high leaks it. Done once, before
 * the first write to an inode that has a block (the inode tables read as itable_each reads
 * them: a relabel that writes a few thousand files spent most of its time here).
 */
static void count_ea_refs(struct run *r)
{
	ext2_filsys fs = r->img->fs;
	struct ea_list l = { 0 };
	struct suspect *sus = NULL;
	size_t nsus = 0;
	char *buf = malloc(fs->blocksize);

	r->refs = -1;
	if (!buf || xattr_orphans(r->x, &l.orphans) || itable_each(fs, add_ea_block, &l))
		goto out;
	blk64_t *blks = l.blks;
	size_t n = l.n;
	qsort(blks, n, sizeof(*blks), cmp_blk);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i; j < n && blks[j] == blks[i]; j++)
			;
		/* unreadable or not a block of attributes: the inodes using it report that */
		struct ext2_ext_attr_header *h = (struct ext2_ext_attr_header *)buf;
		if (io_channel_read_blk64(fs->io, blks[i], 1, buf) ||
		    ext2fs_le32_to_cpu(h->h_magic) != EXT2_EXT_ATTR_MAGIC ||
		    ext2fs_le32_to_cpu(h->h_refcount) == j - i)
			continue;
		struct suspect *ns = realloc(sus, (nsus + 1) * sizeof(*ns));
		if (!ns)
			goto out;
		sus = ns;
		sus[nsus++] = (struct suspect){ blks[i], ext2fs_le32_to_cpu(h->h_refcount), j - i };
	}
	r->suspect = sus;
	r->nsuspect = nsus;
	sus = NULL;
	r->refs = 1;
out:
	free(sus);
	free(l.blks);
	free(buf);
}

static int commit(struct run *r);

/* Whether the write to this inode may go ahead; when not, says why. */
static bool refs_trusted(struct run *r, const struct walk_entry *e, char *why, size_t n)
{
	blk64_t b = ext2fs_file_acl_block(r->img->fs, (struct ext2_inode *)e->inode);
	if (!b)
		return true;
	if (!r->refs) {
		/* the count reads the blocks from the image: those held in memory first (and, in
		 * place, no reference waits to be dropped) */
		if (commit(r) || xattr_write_back(r->x))
			r->refs = -1;
		else
			count_ea_refs(r);
	}
	const struct suspect *su;
	if (r->refs < 0 || !r->nsuspect ||
	    !(su = bsearch(&b, r->suspect, r->nsuspect, sizeof(*su), cmp_blk)))
		return true;
	snprintf(why, n, "inode %u: its attribute block %llu has h_refcount %u but %zu inodes use "
		 "it (run e2fsck); left as it is", e->ino, (unsigned long long)b, su->refcount,
		 su->users);
	return false;
}

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
static bool current_label(struct run *r, const struct label_file *f, const struct walk_entry *e,
			  const char **cur, size_t *len)
{
	char why[1024];
	errcode_t xrc = 0;
	if (r->src ? r->src->get(r->src->arg, f, cur, len, why, sizeof(why)) == 0
		   : (xrc = xattr_get_label(r->x, e->ino, e->inode, cur, len)) == 0)
		return true;
	if (xrc)
		snprintf(why, sizeof(why), "cannot read its attributes (inode %u): %s; left as it is",
			 e->ino, error_message(xrc));
	rpt_warn(r, f->path, why);
	r->st->errors++;
	mark_wrong(r);
	return false;
}

/* Writes the label; false after a warning (counted as an error). */
static bool write_label(struct run *r, const struct label_file *f, const struct walk_entry *e,
			const char *cur, const struct want *w)
{
	char w1[8192], w2[1024];
	const char *why = w2;
	int src = LSET_OK;
	errcode_t xrc;
	if (r->src) {
		src = r->src->set(r->src->arg, f, w->ctx, w2, sizeof(w2));
		if (src == LSET_READONLY) {
			label_read_only(r, f->path);
			return false;
		}
	} else if ((xrc = xattr_set_label(r->x, e->ino, e->inode, w->ctx))) {
		src = xrc == EXT2_ET_BLOCK_ALLOC_FAIL ? LSET_NOSPACE : LSET_ERROR;
		why = xattr_strerror(r->x, xrc);
		if (label_image_refused(r, xrc))
			return false;
	}
	if (src == LSET_OK)
		return true;
	snprintf(w1, sizeof(w1), "cannot write %s: %s; left as it is", w->ctx, why);
	/* a full image: the first few are named, the total follows at the end */
	if (src != LSET_NOSPACE || ++r->st->nospace <= 10)
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
static bool prunable(struct run *r, const struct label_file *f, const struct walk_entry *e)
{
	const struct label_opts *o = r->o;
	if (!o->diff || r->collect_only)
		return false;
	if (o->appdata && (appdata_holds_pkgdirs(f->path, f->pathlen) ||
			   appdata_pkg_changed(o->appdata, f->path, f->pathlen)))
		return false;
	if (fc_diff_reaches(o->diff, f->path))
		return false;
	return !o->digests || (r->entry_verified = dig_verified(r, f, e));
}

/* Counts the file, and decides whether its subtree is walked (1: no change can reach it). */
static int enter(struct run *r, const struct label_file *f, const struct walk_entry *e)
{
	int descend = 0;
	r->st->scanned++;
	if (LINUX_S_ISDIR(f->mode)) {
		if (prunable(r, f, e)) {
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
	switch (f->mode & LINUX_S_IFMT) {
	case LINUX_S_IFREG: case LINUX_S_IFDIR: case LINUX_S_IFLNK: case LINUX_S_IFCHR:
	case LINUX_S_IFBLK: case LINUX_S_IFIFO: case LINUX_S_IFSOCK:
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
static int label_one(struct run *r, const struct label_file *f, const struct walk_entry *e,
		     int *descend)
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
		if (!current_label(r, f, e, &cur, &curlen))
			return 0;
		have = true;
		if (r->dev_keep && cur) {
			if (!r->collect_only)
				st->kept++;
			return 0;
		}
		r->entry_differs = !label_same(cur, curlen, w.ctx);
	}
	if (!LINUX_S_ISDIR(f->mode) && f->nlink > 1 && !first_name(r, f, &w, &fatal))
		return fatal;
	if (r->collect_only)
		return 0;
	if (!have && !current_label(r, f, e, &cur, &curlen))
		return 0;
	if (label_same(cur, curlen, w.ctx)) {
		st->unchanged++;
		return 0;
	}
	if (o->diff && !LINUX_S_ISDIR(f->mode) && f->nlink > 1) {
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
	if (o->mode == LM_LABEL && e && !refs_trusted(r, e, w1, sizeof(w1))) {
		rpt_walk_warn(r, f->path, w1);
		mark_wrong(r);
		return 0;
	}
	if (o->mode == LM_LABEL && !write_label(r, f, e, cur, &w))
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
static int encrypted_dir(struct run *r, const struct label_file *f, const struct walk_entry *e)
{
	if (!r->collect_only) {
		r->st->encrypted++;
		left_alone(r, f, "encrypted", "an encrypted directory: its own label is written, "
			   "what is below it is left to the device");
	}
	mark_wrong(r);
	if (r->o->digests && !r->collect_only)
		dig_not_entered(r, f, e, false, false);
	return 1;
}

/* --as-device: one entry as the device's own walks treat it (device.c says which reach it). */
static int visit_as_device(struct run *r, const struct label_file *f, const struct walk_entry *e)
{
	bool digests = r->o->digests && !r->collect_only;
	struct android_walk d;
	int descend = 0;

	r->st->scanned++;
	rpt_progress(r);
	if (!valid_type(r, f))
		return 1;
	dev_classify(r, f, e, &d);
	r->dev_keep = !d.labels;
	r->dev_lazy = d.reach & ANDROID_WALK_LAZY;
	r->dev_walked = d.boot;
	r->dev_vold_walked = d.vold;
	r->entry_differs = -1;
	int rc = label_one(r, f, e, &descend);
	r->dev_keep = r->dev_lazy = false;
	if (rc < 0)
		return -1;
	if (!LINUX_S_ISDIR(f->mode))
		return 1;
	bool in_progress = (d.reach & ANDROID_WALK_LAZY) && dev_in_progress(r, f, e);
	dev_report(r, f, &d, r->entry_differs, in_progress);
	unsigned below = descend ? 0 : dev_below(f, &d, r->entry_differs > 0 || in_progress);
	if (below && f->encrypted)
		return encrypted_dir(r, f, e);
	if (!below) {
		/* what is below is right as far as the device knows, but for what was found at f */
		if (digests && !d.matched)
			dig_not_entered(r, f, e, !r->entry_wrong, false);
		return 1;
	}
	if (dev_push(r, below) < 0 || (digests && dig_enter(r, f, e) < 0))
		return -1;
	r->st->dirs++;
	return 0;
}

volatile sig_atomic_t label_stop_signal;

/* In place: what is held made durable; the counts of what is on disk follow. */
static int commit(struct run *r)
{
	/* in place, each commit goes to the file that was opened: only while the path names it */
	if (xattr_commit_due(r->x) || xattr_held(r->x)) {
		if (!img_whole_or_nothing(r->img) &&
		    !img_still_target(r->img, r->lost, sizeof(r->lost))) {
			r->commit_rc = LABEL_TARGET_LOST;
			return -1;
		}
	}
	if ((r->commit_rc = xattr_commit(r->x))) {
		/* (in order, the labels are on disk once the inodes are) */
		if (xattr_inodes_on_disk(r->x)) {
			r->st->written = r->st->changed;
			r->st->digests_on_disk = r->st->digests_written;
		}
		return -1;
	}
	r->st->written = r->st->changed;
	r->st->digests_on_disk = r->st->digests_written;
	return 0;
}

void label_read_only(struct run *r, const char *path)
{
	if (!r->read_only)
		snprintf(r->read_only_at, sizeof(r->read_only_at), "%s", path);
	r->read_only = true;
}

bool label_image_refused(struct run *r, errcode_t rc)
{
	/* the claims scan stopped at SIGINT or SIGTERM: the walk stops at the next file */
	if (rc == CLAIMS_E_INTERRUPTED)
		return true;
	if (rc != XATTR_E_CLAIMS)
		return false;
	r->refused = true;
	return true;
}

/* check of a device's /data without --as-device: which of the device's walks would set the
 * entry's label (device.c), so that the differences they would leave are counted
 * (device_levels); the check itself is the full one. */
static void shadow_classify(struct run *r, const struct label_file *f, const struct walk_entry *e,
			    struct android_walk *d)
{
	dev_classify(r, f, e, d);
	r->shadow_keep = !d->labels;
	r->dev_lazy = d->reach & ANDROID_WALK_LAZY; /* (label_one: whether its label is wanted) */
	r->entry_differs = -1;
}

/* ... and what they hand to the entries of the directory f the check enters. */
static int shadow_enter(struct run *r, const struct label_file *f, const struct walk_entry *e,
			const struct android_walk *d)
{
	bool redo = r->entry_differs > 0 ||
		    ((d->reach & ANDROID_WALK_LAZY) && dev_in_progress(r, f, e));
	unsigned below = dev_below(f, d, redo);
	return dev_push(r, below ? below : ANDROID_WALK_NONE);
}

/* One file, from either walk: e is the image's entry, NULL on a live tree (r->src). */
static int visit_file(struct run *r, const struct label_file *f, const struct walk_entry *e)
{
	const struct label_opts *o = r->o;

	/* SIGINT or SIGTERM, an I/O error of the image, or an image refused: the walk stops here */
	if (label_stop_signal || r->refused || r->read_only || (r->img && imgfmt_io_error()) ||
	    r->commit_rc)
		return -1;
	/* between two files: what is held in place made durable, once enough is */
	if (r->x && xattr_commit_due(r->x) && commit(r))
		return -1;

	r->entry_wrong = false;
	r->entry_verified = false;
	if (o->nexcludes && label_excluded(o, f->path, f->pathlen)) {
		mark_wrong(r); /* what -e leaves out is not known to be right */
		return 1;
	}
	if (o->device)
		return visit_as_device(r, f, e);
	int descend = enter(r, f, e);
	bool pruned = descend;
	if (!valid_type(r, f))
		return 1;
	struct android_walk d;
	if (o->device_shadow)
		shadow_classify(r, f, e, &d);
	int rc = label_one(r, f, e, &descend);
	r->shadow_keep = r->dev_lazy = false;
	if (rc < 0)
		return -1;
	if (!LINUX_S_ISDIR(f->mode))
		return descend;
	if (f->encrypted && !descend)
		return encrypted_dir(r, f, e);
	if (o->digests && !r->collect_only) {
		if (!descend && dig_enter(r, f, e) < 0)
			return -1;
		if (descend)
			dig_not_entered(r, f, e, pruned && !r->entry_wrong, r->entry_verified);
	}
	if (o->device_shadow && !descend && shadow_enter(r, f, e, &d) < 0)
		return -1;
	return descend;
}

static int visit(const struct walk_entry *e, void *arg)
{
	struct label_file f = { e->path, e->pathlen, e->inode->i_mode, e->inode->i_links_count,
				0, e->ino, NULL, (e->inode->i_flags & EXT4_ENCRYPT_FL) != 0,
				  NULL, 0 };
	return visit_file(arg, &f, e);
}

static int leave(const struct walk_entry *e, void *arg)
{
	struct run *r = arg;
	struct label_file f = { e->path, e->pathlen, LINUX_S_IFDIR, 1, 0, e->ino, NULL, false, NULL, 0 };
	if (r->o->digests && !r->collect_only)
		dig_leave(r, &f, e);
	if (r->o->device || r->o->device_shadow)
		dev_pop(r);
	return 0;
}

void label_leave(struct label_run *run, const struct label_file *f)
{
	struct run *r = (struct run *)run;
	if (r->o->digests && !r->collect_only)
		dig_leave(r, f, NULL);
	if (r->o->device || r->o->device_shadow)
		dev_pop(r);
}

int label_visit(struct label_run *run, const struct label_file *f)
{
	return visit_file((struct run *)run, f, NULL);
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

static errcode_t walk_any(struct run *r, struct walk_stats *ws)
{
	if (r->src)
		return r->src->walk(r->src->arg, (struct label_run *)r);
	return walk_image(r->img->fs, r->o->mountpoint, visit, leave, r, ws, rpt_walk_warn);
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

/* The walk's outcome, once it has returned: a stop asked for by a signal, or made by an I/O
 * error of the image, overrides what the walk made of it (an error returned from a visit). */
static errcode_t stopped(struct run *r, errcode_t rc)
{
	rpt_clear(r);
	if (label_stop_signal)
		return LABEL_INTERRUPTED;
	if (r->img && imgfmt_io_error())
		return LABEL_IO_FAILED;
	if (r->commit_rc)
		return r->commit_rc;
	if (r->refused)
		return LABEL_REFUSED;
	if (r->read_only)
		return LABEL_READ_ONLY;
	return rc;
}

/* An image (img), or a live tree (src). */
static int label_any(struct image *img, const struct label_src *src, const fc_set *set,
		     const struct label_opts *o, struct label_stats *st)
{
	struct run r = { .img = img, .src = src, .set = set, .o = o, .st = st };
	struct walk_stats ws = { 0 };
	const char *name = img ? img->name : src->name;
	errcode_t rc;

	memset(st, 0, sizeof(*st));
	r.start = rpt_now();
	r.tty = o->progress && isatty(STDERR_FILENO);
	r.total = src ? src->total
		      : img->fs->super->s_inodes_count - img->fs->super->s_free_inodes_count;
	/* a copy that replaces the image only when complete: the writes' order is free */
	if (img && !(r.x = xattr_new(img->fs, img->replaced || img->fmt == IMGFMT_SPARSE))) {
		fprintf(stderr, "fclabel %s: out of memory\n", o->cmd);
		return -1;
	}
	if (img && img->ov_mode)
		xattr_set_inplace(r.x, img->ov_mode == IMGFMT_OV_ORDERED, img->commit_limit);
	if (o->strict && o->mode == LM_LABEL) {
		/* first pass: conflicts are an error before anything is written */
		r.collect_only = true;
		rc = walk_any(&r, &ws);
		rpt_clear(&r);
		unsigned long conflicts = st->conflicts;
		free_links(&r);
		if (rc || conflicts) {
			if (!rc)
				fprintf(stderr, "fclabel %s: %lu hard link conflict(s) and --strict: "
					"nothing written\n", o->cmd, conflicts);
			st->conflicts = conflicts;
			xattr_free(r.x);
			st->aborted = rc ? "walk failed" : "hard link conflicts under --strict";
			return -1;
		}
		memset(st, 0, sizeof(*st));
		r.collect_only = false;
		r.ndev = 0;
		r.start = rpt_now();
	}
	rc = stopped(&r, walk_any(&r, &ws));
	if (!rc && r.need_full) {
		struct label_opts full = *o;
		struct label_stats first = *st;
		full.diff = NULL;
		fprintf(stderr, "fclabel %s: a hard-linked file's label changes and its other names may "
			"be in skipped directories: walking every directory\n", o->cmd);
		free_links(&r);
		memset(st, 0, sizeof(*st));
		r.o = &full;
		r.need_full = false;
		rc = stopped(&r, walk_any(&r, &ws));
		st->changed += first.changed;
		st->unchanged -= st->unchanged >= first.changed ? first.changed : 0;
		st->dirs_skipped = 0;
	}
	unsigned long fixed = 0;
	/* (the counts are made right from inodes on disk: ordered writes put them there first) */
	if (!rc && o->mode == LM_LABEL && img && commit(&r))
		rc = r.commit_rc;
	if (!rc && o->mode == LM_LABEL && img) {
		rc = xattr_reconcile(r.x, &fixed);
		if (fixed)
			fprintf(stderr, "fclabel %s: %s: corrected the reference counts of %lu shared "
				"label block(s), left wrong by an interrupted run\n", o->cmd,
				img->name, fixed);
	}
	errcode_t wrc;
	char qwhy[512];
	if (r.x && (wrc = xattr_write_back(r.x)) && !rc)
		rc = wrc;
	/* a walk stopped between two files (a signal, a refusal) leaves what it did whole: in
	 * place that is committed too; after an I/O error, only what the last commit made */
	if (img && imgfmt_io_error())
		rc = LABEL_IO_FAILED;
	bool whole = !rc || rc == LABEL_INTERRUPTED || rc == LABEL_REFUSED;
	if (r.x && whole && (wrc = xattr_finish(r.x, qwhy, sizeof(qwhy)))) {
		if (*qwhy)
			fprintf(stderr, "fclabel %s: %s: %s\n", o->cmd, name, qwhy);
		if (!rc)
			rc = wrc;
	} else if (r.x && whole) {
		st->written = st->changed;
		st->digests_on_disk = st->digests_written;
	}
	if (img && imgfmt_io_error())
		rc = LABEL_IO_FAILED;
	/* a commit that failed part of the way may have left steps of it on disk */
	if (img && (rc == LABEL_IO_FAILED || r.commit_rc || xattr_commit_failed(r.x)))
		img->keep_marker = true;
	if (!r.x) {
		st->written = st->changed; /* a live tree: each label is on disk once set */
		st->digests_on_disk = st->digests_written;
	}
	if (st->nospace)
		fprintf(stderr, "fclabel %s: %s: %lu file(s) could not be labeled: the %s has no "
			"free %s for their labels (%s)\n", o->cmd, name, st->nospace,
			img ? "image" : "file system", img ? "block" : "space",
			st->nospace > 10 ? "the first 10 are named above" : "named above");
	if (r.x)
		xattr_stats(r.x, &st->ea_allocated, &st->ea_shared, &st->claims_seconds);
	char refusal[512] = "";
	if (rc == LABEL_REFUSED) /* (the reason lives in r.x) */
		snprintf(refusal, sizeof(refusal), "%s", xattr_strerror(r.x, XATTR_E_CLAIMS));
	xattr_free(r.x);
	free(r.suspect);
	free(r.ds);
	free(r.dev);
	free_links(&r);
	st->seconds = rpt_now() - r.start;
	st->total = r.total;
	if (rc == LABEL_INTERRUPTED) {
		st->interrupted = true;
	} else if (rc == LABEL_IO_FAILED) {
		fprintf(stderr, "fclabel %s: %s; stopped\n", o->cmd, imgfmt_io_error());
		st->errors++;
	} else if (rc == LABEL_READ_ONLY) {
		fprintf(stderr, "fclabel %s: %s: %s is on a read-only file system; stopped at the first "
			"write\n", o->cmd, name, qname(r.read_only_at));
		st->errors++;
	} else if (rc == LABEL_TARGET_LOST) {
		fprintf(stderr, "fclabel %s: %s; what was written before went to the file that was "
			"opened; the rest is not written (stopped)\n", o->cmd, r.lost);
		st->errors++;
	} else if (rc == LABEL_REFUSED) {
		fprintf(stderr, "fclabel %s: %s: refusing to write to it: %s; stopped (run e2fsck "
			"-f first; fclabel-label(1) says what is checked)\n", o->cmd, name, refusal);
		st->errors++;
	} else if (rc) {
		fprintf(stderr, "fclabel %s: %s: the walk stopped: %s\n", o->cmd, name,
			error_message(rc));
		st->errors++;
	}
	return rc ? -1 : 0;
}

int label_tree(struct image *img, const fc_set *set, const struct label_opts *o,
	       struct label_stats *st)
{
	return label_any(img, NULL, set, o, st);
}

int label_source(const struct label_src *src, const fc_set *set, const struct label_opts *o,
		 struct label_stats *st)
{
	return label_any(NULL, src, set, o, st);
}
