/*
 * Unit tests of the labeling engine (labeler/engine/) through a fake target, as SQLite's test
 * VFS stands in for a file system: a struct label_src backed by a tree held in memory, described
 * by a table (path, mode, inode number, current label, current security.sehash, one other
 * attribute), which records every call the engine makes of it (visits, leaves, set, set_digest)
 * and fails a chosen one. No image is built and no file is touched, so each case can say exactly
 * which files the engine wrote and which it did not look at:
 *
 *   1. plain label: wrong labels set, right ones not, <<none>> and no match left alone; dry run
 *      and check set nothing and count the differences; -e leaves a subtree out;
 *   2. hard links: the first name that gets a label decides (setfiles' rule, first_name in
 *      engine.c), the other names are counted and not written, a conflict is counted, --strict
 *      writes nothing; a name with no label leaves the file to its other names;
 *   3. digests: security.sehash written on every directory a spec reaches once all at and below
 *      it is right, a right one left, none where no spec reaches; check counts them;
 *   4. relabel: subtrees no change of the policy reaches are not entered (and with --digests
 *      only when their digest is the old policy's); a hard-linked file whose label changes makes
 *      a full walk;
 *   5. --as-device on /data: an entry no device walk labels keeps its label, a package
 *      directory gets installd's label (and what is below it when its own was wrong or it
 *      carries user.restorecon_in_progress), a right one is not entered, a matching digest
 *      skips its subtree (--ignore-digests walks it), vold's walk of a user's CE directories,
 *      digests only where init's and vold's walks go, an unknown package left alone;
 *   6. faults: a set() that fails is counted and reported and the rest is written; a refusal
 *      and an I/O error of the target stop the walk, and finish() and the run's outcome say so.
 *
 * usage: engineunit. Prints "ok"/"FAIL" lines; exit 1 on any failure.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/engine.h"

#include "unit.h"


/* CHECK of two counts, saying both */
#define CHECK_N(got, want, what)                                                                   \
	CHECK((unsigned long)(got) == (unsigned long)(want), "%s: %lu (want %lu)", what,         \
	      (unsigned long)(got), (unsigned long)(want))

/* ---- the fake target ---- */

#define TDIR S_IFDIR
#define TREG S_IFREG

/* What a directory's security.sehash holds at the start. */
enum { DG_NONE, DG_NEW /* the digest the policy gives */, DG_OLD /* relabel's old policy's */,
       DG_JUNK /* 20 bytes no policy gives */ };

/* One name of the tree, root first; a directory's entries follow it in the order walked. */
struct fnode {
	const char *path;
	unsigned mode;
	unsigned ino;             /* names sharing a number are one file (0: a file of its own) */
	const char *label;        /* security.selinux (NULL: none) */
	int digest;               /* security.sehash (DG_*) */
	const char *xname, *xval; /* another attribute and its value */
};

/* A file, with what its names share. */
struct finode {
	uint64_t ino;
	char label[256];
	bool labeled;
	unsigned char dig[64];
	size_t diglen;
	const char *xname, *xval;
};

#define LOGMAX 512

struct fake {
	const struct fnode *t;
	size_t n;
	struct finode in[64];
	size_t inode_of[64];
	unsigned long nlink[64];
	char *log[LOGMAX]; /* "visit P", "leave P", "set P CTX", "digest P" */
	size_t nlog;
	unsigned sets, digests, betweens;
	/* a fault: the Nth call (1-based; 0: none) of set, set_digest or between fails with rc */
	unsigned fail_set, fail_digest, fail_between;
	int fail_rc;
	int finish_how; /* -1: finish was not called */
};

static void logf_(struct fake *k, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s || k->nlog == LOGMAX) {
		fprintf(stderr, "engineunit: the fake's log is full\n");
		exit(2);
	}
	k->log[k->nlog++] = s;
}

/* How many records start with prefix. */
static unsigned logged(const struct fake *k, const char *prefix)
{
	unsigned c = 0;
	for (size_t i = 0; i < k->nlog; i++)
		c += !strncmp(k->log[i], prefix, strlen(prefix));
	return c;
}

/* Whether the record is there exactly. */
static bool has(const struct fake *k, const char *rec)
{
	for (size_t i = 0; i < k->nlog; i++)
		if (!strcmp(k->log[i], rec))
			return true;
	return false;
}

static const char *label_of(const struct fake *k, const char *path)
{
	for (size_t i = 0; i < k->n; i++)
		if (!strcmp(k->t[i].path, path)) {
			const struct finode *in = &k->in[k->inode_of[i]];
			return in->labeled ? in->label : "(none)";
		}
	return "(no such path)";
}

/* The digest path holds now: DG_* as the sets say, or -1 for another value. */
static int digest_of(const struct fake *k, const char *path, const fc_set *set,
		     const fc_set *oldset)
{
	unsigned char d[FC_DIGEST_LEN];
	for (size_t i = 0; i < k->n; i++) {
		if (strcmp(k->t[i].path, path))
			continue;
		const struct finode *in = &k->in[k->inode_of[i]];
		if (!in->diglen)
			return DG_NONE;
		if (in->diglen == FC_DIGEST_LEN && !fc_digest(set, path, d) &&
		    !memcmp(d, in->dig, FC_DIGEST_LEN))
			return DG_NEW;
		if (oldset && in->diglen == FC_DIGEST_LEN && !fc_digest(oldset, path, d) &&
		    !memcmp(d, in->dig, FC_DIGEST_LEN))
			return DG_OLD;
		return -1;
	}
	return -2;
}

static void fake_free(struct fake *k)
{
	for (size_t i = 0; i < k->nlog; i++)
		free(k->log[i]);
	k->nlog = 0;
}

/* The tree of the table t, its digests made with set (DG_NEW) and oldset (DG_OLD). */
static void fake_init(struct fake *k, const struct fnode *t, size_t n, const fc_set *set,
		      const fc_set *oldset)
{
	memset(k, 0, sizeof(*k));
	k->t = t;
	k->n = n;
	k->finish_how = -1;
	if (n > 64) {
		fprintf(stderr, "engineunit: a table of over 64 names\n");
		exit(2);
	}
	size_t ni = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t ino = t[i].ino ? t[i].ino : 1000 + i;
		size_t j = 0;
		while (j < ni && k->in[j].ino != ino)
			j++;
		k->inode_of[i] = j;
		if (j < ni)
			continue; /* another name of a file met already */
		struct finode *in = &k->in[ni++];
		in->ino = ino;
		if (t[i].label) {
			snprintf(in->label, sizeof(in->label), "%s", t[i].label);
			in->labeled = true;
		}
		in->xname = t[i].xname;
		in->xval = t[i].xval;
		if (t[i].digest == DG_JUNK) {
			memset(in->dig, 0xaa, FC_DIGEST_LEN);
			in->diglen = FC_DIGEST_LEN;
		} else if (t[i].digest != DG_NONE) {
			const fc_set *s = t[i].digest == DG_NEW ? set : oldset;
			if (fc_digest(s, t[i].path, in->dig)) {
				fprintf(stderr, "engineunit: no digest for %s\n", t[i].path);
				exit(2);
			}
			in->diglen = FC_DIGEST_LEN;
		}
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			k->nlink[i] += k->inode_of[j] == k->inode_of[i];
}

/* Whether c is an entry of the directory p. */
static bool entry_of(const char *p, const char *c)
{
	size_t pl = strcmp(p, "/") ? strlen(p) : 0;
	return !strncmp(c, p, pl) && c[pl] == '/' && c[pl + 1] && !strchr(c + pl + 1, '/');
}

static struct label_file file_of(struct fake *k, size_t i)
{
	const struct fnode *e = &k->t[i];
	return (struct label_file){ .path = e->path, .pathlen = strlen(e->path), .mode = e->mode,
				    .nlink = k->nlink[i], .dev = 1,
				    .ino = k->in[k->inode_of[i]].ino, .h = (void *)&k->t[i],
				    .uid = 100 + (unsigned)i, .gid = 200 + (unsigned)i };
}

static size_t index_of(struct fake *k, const struct label_file *f)
{
	return (size_t)((const struct fnode *)f->h - k->t);
}

/* Depth first, as the real walks: label_visit says whether to enter (0), skip (1) or stop. */
static long walk_from(struct fake *k, struct label_run *run, size_t i)
{
	struct label_file f = file_of(k, i);
	logf_(k, "visit %s", f.path);
	int r = label_visit(run, &f);
	if (r < 0)
		return ENOMEM; /* (as the tree's walk: the engine says why it stopped) */
	if (r || !S_ISDIR(f.mode))
		return 0;
	for (size_t j = i + 1; j < k->n; j++)
		if (entry_of(k->t[i].path, k->t[j].path)) {
			long rc = walk_from(k, run, j);
			if (rc)
				return rc;
		}
	logf_(k, "leave %s", f.path);
	label_leave(run, &f);
	return 0;
}

static long fake_walk(void *arg, struct label_run *run)
{
	return walk_from(arg, run, 0);
}

static int fake_get(void *arg, const struct label_file *f, const char **val, size_t *len,
		    char *why, size_t n)
{
	struct fake *k = arg;
	const struct finode *in = &k->in[k->inode_of[index_of(k, f)]];
	*val = in->labeled ? in->label : NULL;
	*len = in->labeled ? strlen(in->label) + 1 : 0; /* (stored with its NUL, as setfiles) */
	return 0;
}

static int fake_set(void *arg, const struct label_file *f, const char *ctx, char *why, size_t n)
{
	struct fake *k = arg;
	struct finode *in = &k->in[k->inode_of[index_of(k, f)]];
	if (++k->sets == k->fail_set) {
		snprintf(why, n, "injected fault");
		logf_(k, "failed set %s", f->path);
		return k->fail_rc;
	}
	logf_(k, "set %s %s", f->path, ctx);
	snprintf(in->label, sizeof(in->label), "%s", ctx);
	in->labeled = true;
	return LSET_OK;
}

static int fake_get_digest(void *arg, const struct label_file *f, unsigned char *out, size_t *len,
			   char *why, size_t n)
{
	struct fake *k = arg;
	const struct finode *in = &k->in[k->inode_of[index_of(k, f)]];
	memcpy(out, in->dig, in->diglen);
	*len = in->diglen;
	return 0;
}

static int fake_set_digest(void *arg, const struct label_file *f, const unsigned char *d,
			   size_t len, char *why, size_t n)
{
	struct fake *k = arg;
	struct finode *in = &k->in[k->inode_of[index_of(k, f)]];
	if (++k->digests == k->fail_digest) {
		snprintf(why, n, "injected fault");
		logf_(k, "failed digest %s", f->path);
		return k->fail_rc;
	}
	logf_(k, "digest %s", f->path);
	memcpy(in->dig, d, len);
	in->diglen = len;
	return LSET_OK;
}

static int fake_get_xattr(void *arg, const struct label_file *f, const char *name,
			  unsigned char *out, size_t max, size_t *len, char *why, size_t n)
{
	struct fake *k = arg;
	const struct finode *in = &k->in[k->inode_of[index_of(k, f)]];
	*len = 0;
	if (in->xname && !strcmp(in->xname, name) && strlen(in->xval) <= max) {
		*len = strlen(in->xval);
		memcpy(out, in->xval, *len);
	}
	return 0;
}

static int fake_between(void *arg, bool *durable, char *why, size_t n)
{
	struct fake *k = arg;
	*durable = false;
	if (++k->betweens == k->fail_between) {
		snprintf(why, n, "fake: injected I/O error");
		return k->fail_rc;
	}
	*durable = true; /* (every write is at once) */
	return 0;
}

static int fake_finish(void *arg, int how, struct label_stats *st, bool *durable, char *why,
		       size_t n)
{
	struct fake *k = arg;
	k->finish_how = how;
	*durable = how != LSRC_IO;
	return 0;
}

static int run(struct fake *k, const fc_set *set, const struct label_opts *o,
	       struct label_stats *st)
{
	struct label_src src = {
		.name = "fake", .what = "fake tree", .unit = "slot", .arg = k, .total = k->n,
		.walk = fake_walk, .get = fake_get, .set = fake_set, .get_digest = fake_get_digest,
		.set_digest = fake_set_digest, .get_xattr = fake_get_xattr,
		.between = fake_between, .finish = fake_finish,
	};
	return label_source(&src, set, o, st);
}

/* ---- policies ---- */

static fc_set *fc_text(const char *name, const char *text)
{
	struct fc_buf b = { name, text, strlen(text) };
	struct fc_error err;
	fc_set *s = NULL;
	if (fc_load_bufs(&s, &b, 1, 0, &err)) {
		fprintf(stderr, "engineunit: %s:%u: %s\n", err.file, err.line, err.msg);
		exit(2);
	}
	return s;
}

#define ROOT_T "system_u:object_r:root_t:s0"
#define ETC_T "system_u:object_r:etc_t:s0"
#define SHADOW_T "system_u:object_r:shadow_t:s0"
#define BIN_T "system_u:object_r:bin_t:s0"
#define VAR_T "system_u:object_r:var_t:s0"
#define LOG_T "system_u:object_r:var_log_t:s0"
#define OLDLOG_T "system_u:object_r:log_t:s0"
#define WRONG_T "system_u:object_r:unlabeled_t:s0"

static const char *const fc_new_text =
	"/\t\t-d\t" ROOT_T "\n"
	"/etc(/.*)?\t\t" ETC_T "\n"
	"/etc/shadow\t--\t" SHADOW_T "\n"
	"/bin(/.*)?\t\t" BIN_T "\n"
	"/tmp/.*\t\t<<none>>\n"
	"/var(/.*)?\t\t" VAR_T "\n"
	"/var/log(/.*)?\t\t" LOG_T "\n";
/* relabel's old policy: /var/log had another type */
static const char *const fc_old_text =
	"/\t\t-d\t" ROOT_T "\n"
	"/etc(/.*)?\t\t" ETC_T "\n"
	"/etc/shadow\t--\t" SHADOW_T "\n"
	"/bin(/.*)?\t\t" BIN_T "\n"
	"/tmp/.*\t\t<<none>>\n"
	"/var(/.*)?\t\t" VAR_T "\n"
	"/var/log(/.*)?\t\t" OLDLOG_T "\n";

static fc_set *fc_new, *fc_old;

static struct label_opts opts(enum label_mode mode)
{
	return (struct label_opts){ .mode = mode, .cmd = mode == LM_CHECK ? "check" : "label",
				    .mountpoint = "" };
}

/* ---- 1. plain label ---- */

static const struct fnode plain[] = {
	{ "/", TDIR, 0, ROOT_T, 0, 0, 0 },
	{ "/etc", TDIR, 0, ETC_T, 0, 0, 0 },
	{ "/etc/passwd", TREG, 0, WRONG_T, 0, 0, 0 },
	{ "/etc/shadow", TREG, 0, SHADOW_T, 0, 0, 0 },
	{ "/etc/group", TREG, 0, NULL, 0, 0, 0 },
	{ "/bin", TDIR, 0, ETC_T, 0, 0, 0 },
	{ "/bin/sh", TREG, 0, BIN_T, 0, 0, 0 },
	{ "/tmp", TDIR, 0, WRONG_T, 0, 0, 0 },
	{ "/tmp/x", TREG, 0, WRONG_T, 0, 0, 0 },
};
#define N(t) (sizeof(t) / sizeof((t)[0]))

static void test_plain(void)
{
	struct fake k;
	struct label_stats st;
	struct label_opts o = opts(LM_LABEL);

	fake_init(&k, plain, N(plain), fc_new, NULL);
	CHECK(run(&k, fc_new, &o, &st) == 0, "plain: label succeeds");
	CHECK_N(logged(&k, "visit "), N(plain), "plain: every name visited");
	CHECK_N(logged(&k, "set "), 3, "plain: three labels written");
	CHECK(has(&k, "set /etc/passwd " ETC_T), "plain: a wrong label is set");
	CHECK(has(&k, "set /etc/group " ETC_T), "plain: a file with no label gets one");
	CHECK(has(&k, "set /bin " BIN_T), "plain: a wrong directory label is set");
	CHECK(!logged(&k, "set /etc/shadow") && !logged(&k, "set /bin/sh") &&
		      !logged(&k, "set / "), "plain: right labels are not written");
	CHECK(!logged(&k, "set /tmp"), "plain: no match and <<none>> are left as they are");
	CHECK(!strcmp(label_of(&k, "/tmp/x"), WRONG_T), "plain: <<none>> keeps its label");
	CHECK_N(st.scanned, 9, "plain: scanned");
	CHECK_N(st.changed, 3, "plain: changed");
	CHECK_N(st.unchanged, 4, "plain: unchanged");
	CHECK_N(st.nolabel, 2, "plain: nolabel (/tmp, /tmp/x)");
	CHECK_N(st.nomatch, 1, "plain: nomatch (/tmp)");
	CHECK_N(st.dirs, 4, "plain: dirs");
	CHECK_N(st.errors, 0, "plain: errors");
	CHECK_N(st.written, 3, "plain: written (the fake says all is durable)");
	CHECK(k.finish_how == LSRC_DONE, "plain: finish told the walk is done");
	CHECK_N(logged(&k, "leave "), 4, "plain: every directory left");
	fake_free(&k);

	/* a second run finds nothing to do */
	struct fake k2 = k;
	k2.nlog = 0;
	k2.finish_how = -1;
	CHECK(run(&k2, fc_new, &o, &st) == 0 && !logged(&k2, "set ") && st.changed == 0 &&
		      st.unchanged == 7, "plain: a second run writes nothing (unchanged %lu)",
	      st.unchanged);
	fake_free(&k2);

	/* dry run and check: nothing written, the same differences counted */
	static const enum label_mode modes[] = { LM_DRYRUN, LM_CHECK };
	for (size_t m = 0; m < 2; m++) {
		const char *name = m ? "check" : "dry run";
		char *list = NULL;
		size_t listlen = 0;
		FILE *lf = open_memstream(&list, &listlen);
		o = opts(modes[m]);
		o.list = lf;
		fake_init(&k, plain, N(plain), fc_new, NULL);
		CHECK(run(&k, fc_new, &o, &st) == 0, "%s: succeeds", name);
		fclose(lf);
		CHECK_N(logged(&k, "set "), 0,
			m ? "check: labels written" : "dry run: labels written");
		CHECK_N(st.changed, 3, m ? "check: differences" : "dry run: would change");
		CHECK(!strcmp(label_of(&k, "/etc/passwd"), WRONG_T), "%s: /etc/passwd as it was",
		      name);
		size_t lines = 0;
		for (size_t i = 0; i < listlen; i++)
			lines += list[i] == '\n';
		CHECK_N(lines, m ? 3 : 0, m ? "check: lines listed" : "dry run: lines listed");
		CHECK(!m || strstr(list, "/etc/passwd\thas " WRONG_T "\twants " ETC_T "\tetc:2"),
		      "%s: the list names the file, both labels and the spec", name);
		free(list);
		fake_free(&k);
	}

	/* -e /etc: not entered, not written */
	char *ex[] = { "/etc" };
	o = opts(LM_LABEL);
	o.excludes = ex;
	o.nexcludes = 1;
	fake_init(&k, plain, N(plain), fc_new, NULL);
	CHECK(run(&k, fc_new, &o, &st) == 0, "exclude: succeeds");
	CHECK(!logged(&k, "set /etc") && !logged(&k, "visit /etc/"),
	      "exclude: nothing below -e is visited or written");
	CHECK_N(st.changed, 1, "exclude: changed (/bin)");
	fake_free(&k);
}

/* ---- 2. hard links ---- */

static const struct fnode links[] = {
	{ "/", TDIR, 0, ROOT_T, 0, 0, 0 },
	{ "/bin", TDIR, 0, BIN_T, 0, 0, 0 },
	{ "/bin/both", TREG, 100, WRONG_T, 0, 0, 0 },  /* first name: bin_t decides */
	{ "/bin/same1", TREG, 101, WRONG_T, 0, 0, 0 },
	{ "/bin/right", TREG, 102, BIN_T, 0, 0, 0 },   /* right; its other name wants etc_t */
	{ "/etc", TDIR, 0, ETC_T, 0, 0, 0 },
	{ "/etc/both", TREG, 100, WRONG_T, 0, 0, 0 },  /* wants etc_t: a conflict */
	{ "/etc/right", TREG, 102, BIN_T, 0, 0, 0 },
	{ "/tmp", TDIR, 0, NULL, 0, 0, 0 },
	{ "/tmp/none", TREG, 103, WRONG_T, 0, 0, 0 },  /* <<none>>: leaves it to its other name */
	{ "/var", TDIR, 0, VAR_T, 0, 0, 0 },
	{ "/var/none", TREG, 103, WRONG_T, 0, 0, 0 },
	{ "/var/same2", TREG, 101, WRONG_T, 0, 0, 0 }, /* same file as /bin/same1, wants var_t */
};

static void test_links(void)
{
	struct fake k;
	struct label_stats st;
	struct label_opts o = opts(LM_LABEL);

	fake_init(&k, links, N(links), fc_new, NULL);
	CHECK(run(&k, fc_new, &o, &st) == 0, "links: label succeeds");
	CHECK(has(&k, "set /bin/both " BIN_T) && !logged(&k, "set /etc/both"),
	      "links: the first name decides, the second is not written");
	CHECK(!strcmp(label_of(&k, "/etc/both"), BIN_T),
	      "links: the file has the first name's label");
	CHECK(has(&k, "set /bin/same1 " BIN_T) && !logged(&k, "set /var/same2"),
	      "links: a file with two names is written once");
	CHECK(!logged(&k, "set /bin/right") && !logged(&k, "set /etc/right"),
	      "links: a right first name leaves the file as it is, whatever the second wants");
	CHECK(!logged(&k, "set /tmp/none") && has(&k, "set /var/none " VAR_T),
	      "links: a name with <<none>> leaves the file to its other names");
	CHECK_N(logged(&k, "set "), 3, "links: labels written");
	CHECK_N(st.links, 3, "links: other names counted");
	CHECK_N(st.conflicts, 3, "links: conflicts (both, right, same2)");
	CHECK_N(st.changed, 3, "links: changed");
	fake_free(&k);

	/* --strict: the conflicts stop the run before any write */
	o.strict = true;
	fake_init(&k, links, N(links), fc_new, NULL);
	CHECK(run(&k, fc_new, &o, &st) != 0, "links --strict: the run fails");
	CHECK_N(logged(&k, "set "), 0, "links --strict: labels written");
	CHECK_N(st.conflicts, 3, "links --strict: conflicts");
	CHECK(st.aborted && strstr(st.aborted, "hard link"),
	      "links --strict: aborted says why (%s)", st.aborted ? st.aborted : "NULL");
	fake_free(&k);
}

/* ---- 3. digests ---- */

static const struct fnode digs[] = {
	{ "/", TDIR, 0, ROOT_T, DG_NONE, 0, 0 },
	{ "/bin", TDIR, 0, BIN_T, DG_NEW, 0, 0 },  /* right: left */
	{ "/bin/sh", TREG, 0, BIN_T, 0, 0, 0 },
	{ "/etc", TDIR, 0, ETC_T, DG_JUNK, 0, 0 }, /* stale */
	{ "/etc/passwd", TREG, 0, WRONG_T, 0, 0, 0 },
	{ "/tmp", TDIR, 0, WRONG_T, DG_NONE, 0, 0 }, /* no spec reaches it: no digest */
	{ "/tmp/x", TREG, 0, WRONG_T, 0, 0, 0 },
	{ "/var", TDIR, 0, VAR_T, DG_NONE, 0, 0 },
	{ "/var/log", TDIR, 0, LOG_T, DG_NONE, 0, 0 },
	{ "/var/log/messages", TREG, 0, WRONG_T, 0, 0, 0 },
};

static void test_digests(void)
{
	struct fake k;
	struct label_stats st;
	struct label_opts o = opts(LM_LABEL);
	unsigned char d[FC_DIGEST_LEN];

	CHECK(fc_digest(fc_new, "/tmp", d) == ENOENT, "digests: no spec reaches /tmp (premise)");
	o.digests = true;
	fake_init(&k, digs, N(digs), fc_new, NULL);
	CHECK(run(&k, fc_new, &o, &st) == 0, "digests: label succeeds");
	CHECK_N(logged(&k, "digest "), 4, "digests: written");
	CHECK(has(&k, "digest /") && has(&k, "digest /etc") && has(&k, "digest /var") &&
		      has(&k, "digest /var/log"), "digests: on /, /etc (stale), /var, /var/log");
	CHECK(!logged(&k, "digest /bin") && !logged(&k, "digest /tmp"),
	      "digests: not on /bin (right) nor /tmp (no spec reaches it)");
	CHECK(has(&k, "visit /bin/sh"), "digests: a right digest does not stop a label's walk");
	CHECK(digest_of(&k, "/etc", fc_new, NULL) == DG_NEW && digest_of(&k, "/", fc_new, NULL) ==
		      DG_NEW, "digests: what is written is fc_digest's");
	/* a directory's digest is written once all below it is done: after its last entry */
	size_t at_dig = 0, at_msg = 0;
	for (size_t i = 0; i < k.nlog; i++) {
		if (!strcmp(k.log[i], "digest /var"))
			at_dig = i;
		if (!strcmp(k.log[i], "set /var/log/messages " LOG_T))
			at_msg = i;
	}
	CHECK(at_msg && at_dig > at_msg, "digests: /var's digest after the labels below it");
	CHECK_N(st.digests_written, 4, "digests: digests_written");
	CHECK_N(st.digests_unchanged, 1, "digests: digests_unchanged (/bin)");
	CHECK_N(st.digests_withheld, 0, "digests: digests_withheld");
	fake_free(&k);

	/* check: nothing written; missing and stale counted */
	o.mode = LM_CHECK;
	o.cmd = "check";
	fake_init(&k, digs, N(digs), fc_new, NULL);
	CHECK(run(&k, fc_new, &o, &st) == 0, "digests check: succeeds");
	CHECK_N(logged(&k, "digest ") + logged(&k, "set "), 0, "digests check: writes");
	CHECK_N(st.digests_written, 4, "digests check: missing or stale");
	CHECK_N(st.digests_unchanged, 1, "digests check: right");
	fake_free(&k);

	/* -e /var/log: what it leaves out is not known to be right: /var and / get none */
	char *ex[] = { "/var/log" };
	o = opts(LM_LABEL);
	o.digests = true;
	o.excludes = ex;
	o.nexcludes = 1;
	fake_init(&k, digs, N(digs), fc_new, NULL);
	CHECK(run(&k, fc_new, &o, &st) == 0, "digests -e: succeeds");
	CHECK(has(&k, "digest /etc") && !logged(&k, "digest /var") && !has(&k, "digest /"),
	      "digests -e: /etc written, /var and / withheld");
	CHECK_N(st.digests_withheld, 2, "digests -e: withheld");
	fake_free(&k);
}

/* ---- 4. relabel ---- */

static const struct fnode rel[] = {
	{ "/", TDIR, 0, ROOT_T, DG_OLD, 0, 0 },
	{ "/bin", TDIR, 0, BIN_T, DG_NONE, 0, 0 },
	{ "/bin/sh", TREG, 0, WRONG_T, 0, 0, 0 },   /* wrong, but no change reaches it */
	{ "/etc", TDIR, 0, ETC_T, DG_OLD, 0, 0 },
	{ "/etc/passwd", TREG, 0, WRONG_T, 0, 0, 0 },
	{ "/var", TDIR, 0, VAR_T, DG_OLD, 0, 0 },
	{ "/var/log", TDIR, 0, OLDLOG_T, DG_OLD, 0, 0 },
	{ "/var/log/messages", TREG, 0, OLDLOG_T, 0, 0, 0 },
	{ "/var/spool", TDIR, 0, VAR_T, DG_OLD, 0, 0 },
	{ "/var/spool/x", TREG, 0, WRONG_T, 0, 0, 0 },
};

static void test_relabel(void)
{
	struct fake k;
	struct label_stats st;
	struct label_opts o = opts(LM_LABEL);
	struct fc_diff *diff = NULL;

	CHECK(fc_diff(fc_old, fc_new, &diff, NULL) == 0 && fc_diff_count(diff) == 1,
	      "relabel: one change between the policies (premise)");
	o.cmd = "relabel";
	o.diff = diff;
	fake_init(&k, rel, N(rel), fc_new, fc_old);
	CHECK(run(&k, fc_new, &o, &st) == 0, "relabel: succeeds");
	CHECK(has(&k, "visit /bin") && has(&k, "visit /etc") && !logged(&k, "visit /bin/") &&
		      !logged(&k, "visit /etc/") && !logged(&k, "visit /var/spool/"),
	      "relabel: directories no change reaches are visited, not entered");
	CHECK(has(&k, "visit /var/log/messages"), "relabel: what a change reaches is walked");
	CHECK(has(&k, "set /var/log " LOG_T) && has(&k, "set /var/log/messages " LOG_T),
	      "relabel: the changed labels are written");
	CHECK_N(logged(&k, "set "), 2, "relabel: labels written (nothing in pruned subtrees)");
	CHECK_N(st.dirs_skipped, 3, "relabel: dirs_skipped (/bin, /etc, /var/spool)");
	CHECK_N(st.dirs, 3, "relabel: dirs entered (/, /var, /var/log)");
	fake_free(&k);

	/* --digests: a subtree is left only when its digest says the last run left it right */
	o.digests = true;
	o.oldset = fc_old;
	fake_init(&k, rel, N(rel), fc_new, fc_old);
	CHECK(run(&k, fc_new, &o, &st) == 0, "relabel --digests: succeeds");
	CHECK(has(&k, "set /bin/sh " BIN_T), "relabel --digests: /bin (no digest) is walked");
	CHECK(!logged(&k, "visit /etc/") && !logged(&k, "visit /var/spool/"),
	      "relabel --digests: /etc and /var/spool (the old digest) are not entered");
	CHECK_N(st.dirs_skipped, 2, "relabel --digests: dirs_skipped");
	CHECK(has(&k, "digest /var/log") && has(&k, "digest /var") && has(&k, "digest /") &&
		      has(&k, "digest /bin"), "relabel --digests: digests where the policy changed "
	      "them or none was");
	CHECK(!logged(&k, "digest /etc") && !logged(&k, "digest /var/spool"),
	      "relabel --digests: a pruned directory's digest, the same in both, is left");
	CHECK(digest_of(&k, "/var/log", fc_new, fc_old) == DG_NEW,
	      "relabel --digests: /var/log has the new policy's digest");
	fake_free(&k);

	/* a hard-linked file whose label changes: its other name may be in a pruned subtree */
	static const struct fnode hl[] = {
		{ "/", TDIR, 0, ROOT_T, 0, 0, 0 },
		{ "/etc", TDIR, 0, ETC_T, 0, 0, 0 },
		{ "/etc/x", TREG, 7, OLDLOG_T, 0, 0, 0 },
		{ "/var", TDIR, 0, VAR_T, 0, 0, 0 },
		{ "/var/log", TDIR, 0, OLDLOG_T, 0, 0, 0 },
		{ "/var/log/x", TREG, 7, OLDLOG_T, 0, 0, 0 },
	};
	o = opts(LM_LABEL);
	o.cmd = "relabel";
	o.diff = diff;
	fake_init(&k, hl, N(hl), fc_new, fc_old);
	CHECK(run(&k, fc_new, &o, &st) == 0, "relabel links: succeeds");
	CHECK(has(&k, "visit /etc/x"), "relabel links: a second, full walk enters /etc");
	CHECK(has(&k, "set /etc/x " ETC_T) && !logged(&k, "set /var/log/x"),
	      "relabel links: the first name in a full walk decides");
	CHECK_N(logged(&k, "visit /var/log/x"), 2, "relabel links: walked twice");
	CHECK_N(st.dirs_skipped, 0, "relabel links: nothing left out in the end");
	fake_free(&k);
	fc_diff_free(diff);
}

/* ---- 5. --as-device ---- */

#define D_ROOT "u:object_r:system_data_root_file:s0"
#define D_DATA "u:object_r:system_data_file:s0"
#define D_TMP "u:object_r:shell_data_file:s0"
#define D_UDIR "u:object_r:system_userdir_file:s0"
#define D_APP "u:object_r:app_data_file:s0:c512,c768"
#define D_PRIV "u:object_r:privapp_data_file:s0:c512,c768"
#define D_WRONG "u:object_r:unlabeled:s0"

static const char *const data_fc_text =
	"/data(/.*)?\t\t" D_DATA "\n"
	"/data\t\t\t" D_ROOT "\n"
	"/data/local/tmp(/.*)?\t" D_TMP "\n"
	"/data/user\t\t" D_UDIR "\n";
static const char *const seapp_text =
	"user=_app isPrivApp=true domain=priv_app type=privapp_data_file levelFrom=user\n"
	"user=_app domain=untrusted_app type=app_data_file levelFrom=user\n";
static const char *const packages_text =
	"com.example.app 10170 0 /data/user/0/com.example.app default:targetSdkVersion=34 none\n"
	"com.right.app 10171 0 /data/user/0/com.right.app default:targetSdkVersion=34 none\n"
	"com.inprog.app 10172 0 /data/user/0/com.inprog.app default:targetSdkVersion=34 none\n"
	"com.priv.app 10173 0 /data/user/0/com.priv.app default:privapp:targetSdkVersion=34 none\n";

static const struct fnode dev[] = {
	{ "/data", TDIR, 0, D_ROOT, DG_NONE, 0, 0 },
	{ "/data/app", TDIR, 0, D_WRONG, DG_NEW, 0, 0 },             /* its digest matches */
	{ "/data/app/f", TREG, 0, D_WRONG, 0, 0, 0 },
	{ "/data/local", TDIR, 0, D_WRONG, DG_NONE, 0, 0 },          /* init labels it */
	{ "/data/local/tmp", TDIR, 0, D_TMP, DG_NONE, 0, 0 },
	{ "/data/local/tmp/f", TREG, 0, D_WRONG, 0, 0, 0 },
	/* its digest matches, but installd's profile walks start below it: passed through */
	{ "/data/misc", TDIR, 0, D_WRONG, DG_NEW, 0, 0 },
	{ "/data/misc/f", TREG, 0, D_WRONG, 0, 0, 0 },               /* no walk labels it */
	{ "/data/misc/bare", TREG, 0, NULL, 0, 0, 0 },               /* ... but it has no label */
	/* init labels and digests it, does not enter it: vold walks its user directories */
	{ "/data/system_ce", TDIR, 0, D_DATA, DG_NONE, 0, 0 },
	{ "/data/system_ce/0", TDIR, 0, D_WRONG, DG_NONE, 0, 0 },
	{ "/data/system_ce/0/f", TREG, 0, D_WRONG, 0, 0, 0 },
	{ "/data/system_ce/0/sub", TDIR, 0, D_DATA, DG_NONE, 0, 0 },
	{ "/data/user", TDIR, 0, D_UDIR, DG_NONE, 0, 0 },
	{ "/data/user/0", TDIR, 0, D_DATA, DG_NONE, 0, 0 },          /* labeled, not entered */
	/* a package directory labeled wrong: relabeled whole */
	{ "/data/user/0/com.example.app", TDIR, 0, D_DATA, 0, 0, 0 },
	{ "/data/user/0/com.example.app/f", TREG, 0, D_DATA, 0, 0, 0 },
	{ "/data/user/0/com.right.app", TDIR, 0, D_APP, 0, 0, 0 },   /* right: not entered */
	{ "/data/user/0/com.right.app/f", TREG, 0, D_WRONG, 0, 0, 0 },
	{ "/data/user/0/com.inprog.app", TDIR, 0, D_APP, 0, "user.restorecon_in_progress", "\1" },
	{ "/data/user/0/com.inprog.app/f", TREG, 0, D_WRONG, 0, 0, 0 },
	{ "/data/user/0/com.priv.app", TDIR, 0, D_WRONG, 0, 0, 0 },
};

struct android_in {
	seapp_set *sa;
	pkg_list *pkgs;
	struct appdata *ad;
};

static void android_load(struct android_in *a, const char *packages, const fc_set *set)
{
	struct seapp_buf b = { "plat_seapp_contexts", seapp_text, strlen(seapp_text) };
	struct seapp_error err;
	if (seapp_parse(&a->sa, &b, 1, &err) ||
	    pkglist_parse(&a->pkgs, "packages.list", packages, strlen(packages), &err) ||
	    !(a->ad = appdata_new(a->sa, NULL, a->pkgs, set))) {
		fprintf(stderr, "engineunit: %s:%u: %s\n", err.file, err.line, err.msg);
		exit(2);
	}
}

static void android_free(struct android_in *a)
{
	appdata_free(a->ad);
	pkglist_free(a->pkgs);
	seapp_free(a->sa);
}

/* --as-device, as the command line makes it: /data, app data, digests on */
static struct label_opts device_opts(struct android_in *a)
{
	struct label_opts o = opts(LM_LABEL);
	o.mountpoint = "/data";
	o.appdata = a->ad;
	o.device = true;
	o.digests = true;
	return o;
}

static void test_device(const fc_set *data_fc)
{
	struct fake k;
	struct label_stats st;
	struct android_in a;

	android_load(&a, packages_text, data_fc);
	struct label_opts o = device_opts(&a);

	fake_init(&k, dev, N(dev), data_fc, NULL);
	CHECK(run(&k, data_fc, &o, &st) == 0, "device: label succeeds");
	CHECK(has(&k, "set /data/local " D_DATA) && has(&k, "set /data/local/tmp/f " D_TMP),
	      "device: init's boot walk labels what it reaches");
	CHECK(!logged(&k, "visit /data/app/") && !logged(&k, "set /data/app"),
	      "device: a directory whose digest matches is skipped whole, its own label unread");
	CHECK(!logged(&k, "set /data/misc ") && has(&k, "visit /data/misc/f"),
	      "device: /data/misc's digest matches: its label left, passed through to below it");
	CHECK(!logged(&k, "set /data/misc/f") && !strcmp(label_of(&k, "/data/misc/f"), D_WRONG),
	      "device: an entry no device walk labels keeps its label");
	CHECK(has(&k, "set /data/misc/bare " D_DATA),
	      "device: ... unless it has none (then a full label's)");
	CHECK(has(&k, "set /data/user/0/com.example.app " D_APP) &&
		      has(&k, "set /data/user/0/com.example.app/f " D_APP),
	      "device: a package directory labeled wrong gets installd's label, and all below");
	CHECK(has(&k, "set /data/user/0/com.priv.app " D_PRIV),
	      "device: a privileged app's directory gets its seapp type");
	CHECK(has(&k, "visit /data/user/0/com.right.app") &&
		      !logged(&k, "visit /data/user/0/com.right.app/"),
	      "device: below a right package directory nothing is looked at");
	CHECK(has(&k, "set /data/user/0/com.inprog.app/f " D_APP) &&
		      !logged(&k, "set /data/user/0/com.inprog.app "),
	      "device: user.restorecon_in_progress: what is below a right directory is relabeled");
	CHECK(has(&k, "set /data/system_ce/0 " D_DATA) &&
		      has(&k, "set /data/system_ce/0/f " D_DATA),
	      "device: vold's walk of a user's CE directory labels what is below it");
	CHECK_N(logged(&k, "set "), 9, "device: labels written");
	CHECK_N(st.kept, 3, "device: kept (/data/app, /data/misc, /data/misc/f)");
	CHECK_N(st.pkgs_right, 1, "device: pkgs_right");
	CHECK_N(st.pkgs_wrong, 3, "device: pkgs_wrong (example, inprog, priv)");
	CHECK_N(st.pkgs_in_progress, 1, "device: pkgs_in_progress");
	CHECK_N(st.dirs_digest_skipped, 2, "device: dirs_digest_skipped (/data/app, /data/misc)");
	/* init's walk digests /data, /data/local, /data/local/tmp, /data/user and /data/user/0
	 * (app data: labeled and digested, not entered) */
	CHECK(has(&k, "digest /data") && has(&k, "digest /data/local") &&
		      has(&k, "digest /data/local/tmp") && has(&k, "digest /data/user") &&
		      has(&k, "digest /data/user/0"), "device: digests where init's walk goes");
	CHECK(!logged(&k, "digest /data/user/0/") && !logged(&k, "digest /data/misc") &&
		      !logged(&k, "digest /data/app"),
	      "device: none on package directories, nor where a matching digest stopped init");
	CHECK(has(&k, "digest /data/system_ce") && has(&k, "digest /data/system_ce/0") &&
		      has(&k, "digest /data/system_ce/0/sub"),
	      "device: digests on the CE top (init) and every directory vold walks");
	CHECK_N(logged(&k, "digest "), 8, "device: digests written");
	fake_free(&k);

	/* a second run: /data's digest matches; only installd's lazy checks go on below it */
	struct fake k2 = k;
	k2.nlog = 0;
	CHECK(run(&k2, data_fc, &o, &st) == 0, "device again: succeeds");
	CHECK(!logged(&k2, "set ") && !logged(&k2, "digest "), "device again: nothing written");
	CHECK(!logged(&k2, "visit /data/local/"), "device again: init's walk stopped at /data");
	CHECK(!logged(&k2, "visit /data/system_ce/0/"), "device again: vold's walk stopped at "
	      "/data/system_ce/0");
	CHECK_N(st.dirs_digest_skipped, 2,
		"device again: dirs_digest_skipped (/data, /data/system_ce/0)");
	fake_free(&k2);

	/* --ignore-digests: the walks do not stop at a matching digest */
	o.ignore_digests = true;
	fake_init(&k, dev, N(dev), data_fc, NULL);
	CHECK(run(&k, data_fc, &o, &st) == 0, "device --ignore-digests: succeeds");
	CHECK(has(&k, "set /data/misc " D_DATA) && has(&k, "set /data/misc/f " D_DATA),
	      "device --ignore-digests: the subtree is walked and labeled");
	CHECK_N(st.dirs_digest_skipped, 0, "device --ignore-digests: dirs_digest_skipped");
	fake_free(&k);

	/* an unknown package: left as it is, and no digest above it promises what it holds */
	static const struct fnode unk[] = {
		{ "/data", TDIR, 0, D_ROOT, DG_NONE, 0, 0 },
		{ "/data/user", TDIR, 0, D_UDIR, DG_NONE, 0, 0 },
		{ "/data/user/0", TDIR, 0, D_DATA, DG_NONE, 0, 0 },
		{ "/data/user/0/com.unknown", TDIR, 0, D_WRONG, 0, 0, 0 },
		{ "/data/user/0/com.unknown/f", TREG, 0, D_WRONG, 0, 0, 0 },
	};
	o = device_opts(&a);
	fake_init(&k, unk, N(unk), data_fc, NULL);
	CHECK(run(&k, data_fc, &o, &st) == 0, "device unknown: succeeds");
	CHECK(!logged(&k, "set ") && !logged(&k, "visit /data/user/0/com.unknown/"),
	      "device unknown: nothing written, its directory not entered");
	CHECK_N(st.unknown_pkgs, 1, "device unknown: unknown_pkgs");
	CHECK(!logged(&k, "digest "), "device unknown: every digest above it withheld");
	CHECK_N(st.digests_withheld, 3, "device unknown: digests_withheld");
	fake_free(&k);

	android_free(&a);
}

/* ---- 6. faults ---- */

static void test_faults(void)
{
	struct fake k;
	struct label_stats st;
	struct label_opts o = opts(LM_LABEL);
	char *json = NULL;
	size_t jsonlen = 0;

	/* the second write fails: counted, reported, the rest written; digests above it withheld */
	FILE *jf = open_memstream(&json, &jsonlen);
	o.json = jf;
	o.digests = true;
	fake_init(&k, digs, N(digs), fc_new, NULL);
	k.fail_set = 2; /* /etc/passwd, /var/log/messages: the second */
	k.fail_rc = LSET_ERROR;
	int rc = run(&k, fc_new, &o, &st);
	fclose(jf);
	CHECK(has(&k, "failed set /var/log/messages"),
	      "fault: the injected write is the one meant");
	CHECK(rc == 0 && k.finish_how == LSRC_DONE,
	      "fault: a failed write does not stop the walk (rc %d, finish %d)", rc, k.finish_how);
	CHECK_N(st.errors, 1, "fault: errors");
	CHECK_N(st.changed, 1, "fault: changed (the one written)");
	CHECK(!strcmp(label_of(&k, "/var/log/messages"), WRONG_T), "fault: the file is as it was");
	CHECK(json && strstr(json, "{\"event\": \"error\", \"path\": \"/var/log/messages\", "
			     "\"has\": \"" WRONG_T "\", \"wants\": \"" LOG_T "\""),
	      "fault: the report has the error event");
	CHECK(has(&k, "digest /etc") && !logged(&k, "digest /var") && !has(&k, "digest /"),
	      "fault: no digest above the file left wrong");
	CHECK_N(st.digests_withheld, 3, "fault: digests_withheld (/var/log, /var, /)");
	free(json);
	fake_free(&k);

	/* a full target: counted as nospace, each an error */
	o = opts(LM_LABEL);
	fake_init(&k, plain, N(plain), fc_new, NULL);
	k.fail_set = 1;
	k.fail_rc = LSET_NOSPACE;
	CHECK(run(&k, fc_new, &o, &st) == 0 && st.nospace == 1 && st.errors == 1 &&
		      st.changed == 2, "fault nospace: nospace %lu errors %lu changed %lu",
	      st.nospace, st.errors, st.changed);
	fake_free(&k);

	/* the target refuses every write: the walk stops at once, the run fails */
	fake_init(&k, plain, N(plain), fc_new, NULL);
	k.fail_set = 1;
	k.fail_rc = LSET_REFUSED;
	rc = run(&k, fc_new, &o, &st);
	CHECK(rc != 0, "refused: the run fails");
	CHECK(k.finish_how == LSRC_STOPPED, "refused: finish told it stopped (%d)", k.finish_how);
	CHECK_N(logged(&k, "set "), 0, "refused: labels written");
	CHECK(!logged(&k, "visit /etc/group"), "refused: nothing visited after the refusal");
	CHECK_N(st.errors, 1, "refused: errors (one, for the stop)");
	fake_free(&k);

	/* an I/O error the target finds between two files: the walk stops there */
	fake_init(&k, plain, N(plain), fc_new, NULL);
	k.fail_between = 4; /* before the fourth file, /etc/shadow */
	k.fail_rc = LSRC_IO;
	rc = run(&k, fc_new, &o, &st);
	CHECK(rc != 0 && k.finish_how == LSRC_IO, "io: the run fails, finish told (%d)",
	      k.finish_how);
	CHECK(has(&k, "set /etc/passwd " ETC_T) && !logged(&k, "set /etc/group") &&
		      !logged(&k, "set /bin"), "io: written before it, not after");
	CHECK_N(st.changed, 1, "io: changed");
	CHECK_N(st.written, 0, "io: written (finish said not durable)");
	CHECK_N(st.errors, 1, "io: errors");
	fake_free(&k);

	/* a digest that cannot be written: an error, the labels stand */
	o.digests = true;
	fake_init(&k, digs, N(digs), fc_new, NULL);
	k.fail_digest = 1;
	k.fail_rc = LSET_ERROR;
	rc = run(&k, fc_new, &o, &st);
	CHECK(rc == 0 && st.errors == 1 && st.digests_written == 3 && st.changed == 2,
	      "digest fault: errors %lu digests %lu changed %lu", st.errors, st.digests_written,
	      st.changed);
	fake_free(&k);
}

/* ---- dump: any target's files and labels, through the engine, with no policy ---- */

struct dumped {
	char line[64][300];
	size_t n;
};

static int dump_cb(void *arg, const struct label_file *f, const char *label, size_t len)
{
	struct dumped *d = arg;
	if (d->n == 64)
		return -1;
	snprintf(d->line[d->n++], sizeof(d->line[0]), "%s %o %u %u %.*s", f->path, f->mode, f->uid,
		 f->gid, label ? (int)len : 1, label ? label : "-");
	return 0;
}

static void test_dump(void)
{
	struct fake k;
	struct label_stats st;
	static struct dumped d;
	struct label_opts o = opts(LM_DUMP);
	char want[300];

	o.cmd = "dump";
	o.dump = dump_cb;
	o.dump_arg = &d;
	fake_init(&k, plain, N(plain), fc_new, NULL);
	CHECK(run(&k, NULL, &o, &st) == 0, "dump: the walk succeeds with no policy");
	CHECK_N(d.n, N(plain), "dump: every name handed on");
	CHECK(!logged(&k, "set ") && !logged(&k, "digest "), "dump: nothing written");
	snprintf(want, sizeof(want), "/etc/passwd %o 102 202 %s", TREG, WRONG_T);
	CHECK(!strcmp(d.line[2], want), "dump: path, mode, owner and label as the target has them");
	snprintf(want, sizeof(want), "/etc/group %o 104 204 -", TREG);
	CHECK(!strcmp(d.line[4], want), "dump: no label: NULL");
	CHECK_N(st.scanned, N(plain), "dump: scanned");
	CHECK_N(st.changed + st.errors, 0, "dump: nothing changed, no error");
	fake_free(&k);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	fc_new = fc_text("etc", fc_new_text);
	fc_old = fc_text("old", fc_old_text);
	fc_set *data_fc = fc_text("data", data_fc_text);

	test_plain();
	test_links();
	test_digests();
	test_relabel();
	test_device(data_fc);
	test_faults();
	test_dump();

	fc_free(fc_new);
	fc_free(fc_old);
	fc_free(data_fc);
	printf("%d checks, %d failed\n", checks, failures);
	return failures != 0;
}
