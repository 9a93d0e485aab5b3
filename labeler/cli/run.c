/*
 * The run of label, check and relabel on IMAGE|DIR, one flow for the three (each command's file
 * holds its options and calls run_target): the options (runargs.c), what the image says of
 * itself, the policy (policy/), the target opened as the command's entry in main's table says,
 * the walk (engine/), the summary and the report (runreport.c). Whatever ends it, the report
 * says what and where.
 */
#include <errno.h>
#include <et/com_err.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"

static int stop_by_signal(int status)
{
	int sig = label_stop_signal;
	if (!sig)
		return status;
	fflush(stdout);
	fflush(stderr);
	signal(sig, SIG_DFL);
	raise(sig);
	return status;
}

/* The mount points the specs cover: the first component of the literal stems that go below it,
 * those with the most specs first ("/system, /vendor, /data, ..."), into out. */
struct comp {
	char name[64];
	size_t specs;
};

static int by_specs(const void *a, const void *b)
{
	const struct comp *x = a, *y = b;
	return x->specs != y->specs ? (x->specs < y->specs ? 1 : -1) : strcmp(x->name, y->name);
}

static void covered(const fc_set *set, char *out, size_t n)
{
	enum { MOST = 256, SHOWN = 10 };
	struct comp *v = calloc(MOST, sizeof(*v));
	size_t nv = 0, k = 0;

	out[0] = 0;
	for (size_t i = 0; v && i < fc_count(set); i++) {
		size_t len, c = 1, j;
		const char *p = fc_spec_prefix(set, fc_spec_at(set, i), &len);
		if (!p || len < 2 || p[0] != '/')
			continue;
		while (c < len && p[c] != '/')
			c++;
		/* a directory: the stem goes on below it, or the regex does ("/data(/.*)?"); not a
		 * file of the root, nor a stem that may go on within its component ("/init\..*") */
		const char *re = fc_spec_at(set, i)->regex;
		bool dir = c < len || (!strncmp(re, p, len) && !strncmp(re + len, "(/", 2));
		if (!dir || c >= sizeof(v->name))
			continue;
		for (j = 0; j < nv && (strlen(v[j].name) != c || memcmp(v[j].name, p, c)); j++)
			;
		if (j == nv && nv < MOST)
			snprintf(v[nv++].name, sizeof(v->name), "%.*s", (int)c, p);
		if (j < nv)
			v[j].specs++;
	}
	if (v)
		qsort(v, nv, sizeof(*v), by_specs);
	for (size_t j = 0; j < nv && j < SHOWN && k < n; j++)
		k += (size_t)snprintf(out + k, n - k, "%s%s", j ? ", " : "", v[j].name);
	if (nv > SHOWN && k < n)
		snprintf(out + k, n - k, ", ...");
	free(v);
}

/*
 * No silent no-op: a mount point (the root of what is labeled) that no spec matches means a
 * wrong -a (a typo, the wrong partition) or the wrong policy: nothing in it would get a label.
 * EXIT_DIFFERS after saying which mount points the specs do cover.
 */
static int check_covered(struct run *c)
{
	const char *root = *c->o.mountpoint ? c->o.mountpoint : "/";
	struct fc_result res;
	if (fc_lookup(c->pol.set, root, S_IFDIR, &res) || res.status != FC_NOMATCH)
		return EXIT_OK;
	char cover[1024];
	covered(c->pol.set, cover, sizeof(cover));
	fprintf(stderr, "fclabel %s: no spec matches %s (%s's root, given by -a)%s%s; nothing done\n",
		c->cmd, root, qname(c->target), *cover ? "; the specs cover " : "", cover);
	return EXIT_DIFFERS;
}

/* A disk image: the partition the run works on (ext4/part.c), before anything reads it; and
 * where it lies, said once, so that the run's summary is read as that partition's. */
static int choose_part(struct run *c)
{
	const struct img_part *w = &c->ip.where;

	if (c->tree)
		return EXIT_OK;
	c->ip.root = c->mp && !*c->mp;
	if (img_choose_part(c->cmd, c->target, &c->ip))
		return EXIT_USAGE;
	if (w->set)
		part_say(c->cmd, c->target, w);
	return EXIT_OK;
}

void part_say(const char *cmd, const char *target, const struct img_part *w)
{
	fprintf(stderr, "fclabel %s: %s: partition %d%s%s%s (bytes %llu to %llu%s)\n", cmd,
		qname(target), w->number, *w->name ? " (\"" : "", w->name, *w->name ? "\")" : "",
		(unsigned long long)w->offset, (unsigned long long)(w->offset + w->size),
		w->erofs ? ", EROFS" : "");
}

/* What an image says of itself (identify.c), before the mount point is used: a contradicting -a
 * is refused, and without -a the image's own is taken. A live tree says nothing: its path is
 * the one it has. */
static int identify(struct run *c)
{
	const char *mp;

	if (c->tree && c->force_mp) {
		fprintf(stderr, "fclabel %s: %s is a directory: --force-mount-point applies to images "
			"only\n", c->cmd, qname(c->target));
		return EXIT_USAGE;
	}
	if (c->tree)
		return EXIT_OK;
	/* (one that cannot be read: the open says why) */
	if (c->erofs)
		(void)erofs_identify(c->target, &c->ip.where, &c->id);
	else
		(void)img_identify(c->target, &c->ip.where, &c->id);
	if (ident_choose(c->cmd, c->target, &c->id, c->mp, c->force_mp, &mp) < 0)
		return EXIT_USAGE;
	if (!mp)
		return EXIT_OK;
	free(c->mp);
	if (!(c->mp = strdup(mp))) {
		fprintf(stderr, "fclabel %s: out of memory\n", c->cmd);
		return EXIT_USAGE;
	}
	c->o.mountpoint = c->mp;
	return EXIT_OK;
}

#define PACKAGES_LIST ANDROID_PACKAGES_LIST
#define PACKAGES_MAX (64u << 20)

/* packages.list from the image (or tree) itself: /data/system/packages.list below the mount
 * point. Nothing has been written when it fails. */
static int image_packages(struct run *c)
{
	const char *mp = c->o.mountpoint;
	size_t ml = strlen(mp);
	char *buf = NULL, name[4096], why[600];
	size_t len = 0;
	/* (--packages is no way out for an image that is not userdata: it would label a system
	 * image as app data) */
	const char *not_data = ident_not_userdata(&c->id, why, sizeof(why));

	if (strncmp(PACKAGES_LIST, mp, ml) || PACKAGES_LIST[ml] != '/') {
		fprintf(stderr, "fclabel %s: %s is mounted at %s, which does not hold %s%s%s: %s\n",
			c->cmd, qname(c->target), mp, PACKAGES_LIST, not_data ? "; " : "",
			not_data ? not_data : "", not_data ? "--seapp and --packages are for a /data "
			"image" : "give --packages FILE");
		return -1;
	}
	const char *rel = PACKAGES_LIST + ml;
	snprintf(name, sizeof(name), "%s:%s", c->target, rel);
	if (c->erofs) {
		char ewhy[400];
		if (erofs_read_file(c->ero, rel, &buf, &len, PACKAGES_MAX, ewhy, sizeof(ewhy))) {
			fprintf(stderr, "fclabel %s: %s: cannot read %s in it (%s): give --packages "
				"FILE\n", c->cmd, qname(c->target), rel, ewhy);
			return -1;
		}
	} else if (c->tree) {
		char full[4096];
		struct stat st;
		snprintf(full, sizeof(full), "%s%s", c->target, rel);
		int fd = open(full, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) &&
		    (unsigned long long)st.st_size <= PACKAGES_MAX &&
		    (buf = malloc((size_t)st.st_size + 1))) {
			ssize_t r = read(fd, buf, (size_t)st.st_size);
			len = r > 0 ? (size_t)r : 0;
			buf[len] = 0;
		}
		if (fd >= 0)
			close(fd);
		if (!buf) {
			fprintf(stderr, "fclabel %s: %s: cannot read it (%s): give --packages FILE\n",
				c->cmd, full, fd < 0 ? strerror(errno) : "not a regular file");
			return -1;
		}
	} else {
		errcode_t rc = img_read_file(&c->img, rel, &buf, &len, PACKAGES_MAX);
		if (rc) {
			fprintf(stderr, "fclabel %s: %s: cannot read %s in it (%s)%s%s: %s\n", c->cmd,
				qname(c->target), rel, error_message(rc), not_data ? "; " : "",
				not_data ? not_data : "", not_data ? "--seapp and --packages are for "
				"a /data image" : "give --packages FILE");
			return -1;
		}
	}
	c->pol.pkgs = load_packages(c->cmd, name, buf, len);
	free(buf);
	return c->pol.pkgs ? 0 : -1;
}

/* The report's first fields, and the image (a live tree is opened by its walk). */
static int open_outputs(struct run *c)
{
	run_report_head(c);
	if (c->check && !c->json)
		c->o.list = stdout;
	if (c->erofs) {
		char why[600];
		if (erofs_open_where(c->target, &c->ip.where, &c->ero, why, sizeof(why))) {
			fprintf(stderr, "fclabel %s: %s\n", c->cmd, why);
			return -1;
		}
	} else if (!c->tree) {
		bool rw = (c->self->needs & CMD_TARGET_RW) && c->o.mode == LM_LABEL;
		if (img_open(&c->img, c->target, rw ? IMG_RW | c->imgflags : 0, &c->ip, c->cmd))
			return -1;
		c->img_open = true;
	}
	if (c->pol.sa && !c->pol.pkgs && image_packages(c))
		return -1;
	if (c->pol.sa &&
	    !(c->o.appdata = appdata_new(c->pol.sa, c->pol.old_sa, c->pol.pkgs, c->pol.set))) {
		fprintf(stderr, "fclabel %s: out of memory\n", c->cmd);
		return -1;
	}
	if (c->o.diff && !(c->tree ? dir_is_labeled(c->target) : c->erofs ? erofs_is_labeled(c->ero)
			   : image_is_labeled(&c->img))) {
		fprintf(stderr, "fclabel %s: %s has no labels: labeling every file\n", c->cmd,
			c->target);
		c->o.diff = NULL;
	}
	return 0;
}

static int walk(struct run *c, const struct label_opts *o, struct label_stats *st)
{
	return c->tree ? label_dir(c->target, c->pol.set, o, st)
	       : c->erofs ? erofs_label(c->ero, c->pol.set, o, st)
			  : ext4_label(&c->img, c->pol.set, o, st);
}

/* relabel --verify: the full check, on what was just written (what it finds wrong: events of
 * its own in the report, after the relabel's) */
static void verify_all(struct run *c, struct label_stats *st)
{
	struct label_opts vo = c->o;
	struct label_stats vst;
	vo.mode = LM_CHECK;
	vo.diff = NULL;
	vo.verify = true;
	vo.list = stderr;
	vo.cmd = "relabel --verify";
	if (walk(c, &vo, &vst) || vst.changed || vst.errors || vst.digests_written) {
		fprintf(stderr, "fclabel %s: --verify: %lu file(s) differ from a full label%s%s\n",
			c->cmd, vst.changed, vst.digests_written ? ", and some digests are missing or "
			"stale" : "", vst.errors ? "; some files could not be checked (named above)"
			: "");
		st->errors += vst.changed + vst.errors + vst.digests_written;
	} else {
		fprintf(stderr, "fclabel %s: --verify: all %lu files have the label %s wants\n", c->cmd,
			vst.scanned, "the new policy");
	}
}

/* What became of the target: rc is the walk's (and the close's) result. */
static enum outcome outcome_of(const struct run *c, const struct label_stats *st, int rc)
{
	if (c->check)
		return OUT_CHECKED;
	if (c->o.mode == LM_DRYRUN)
		return OUT_DRY_RUN;
	if (!rc && !st->interrupted)
		return OUT_WRITTEN;
	if (c->erofs || (!c->tree && img_whole_or_nothing(&c->img)))
		return OUT_NOTHING;
	return st->written || st->digests_on_disk ? OUT_PARTIAL : OUT_NOTHING;
}

static const char *signal_name(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
}

/* What failed (stage; none: the run went to its end) and what was said about it, for the
 * report. */
static void failed(struct run *c, int stage)
{
	c->stage = stage;
	snprintf(c->said, sizeof(c->said), "%s", rpt_captured());
}

/* Labels (checks) the opened target; the exit status. */
static int run(struct run *c, enum outcome *out)
{
	struct label_stats st;
	if (c->o.json) {
		rpt_events_open(c->o.json);
		c->json_events = true;
	}
	int rc = walk(c, &c->o, &st);
	c->st = st;
	if (!rc && c->verify && !st.interrupted)
		verify_all(c, &st);
	if ((rc || st.interrupted) && c->img_open)
		img_abandon(&c->img);
	if (rc || st.interrupted)
		failed(c, STAGE_WALK);
	if (st.interrupted) { /* (said in the summary's last line, which comes later) */
		size_t n = strlen(c->said);
		snprintf(c->said + n, sizeof(c->said) - n, "%sinterrupted by %s after %lu of about "
			 "%lu files", n ? "\n" : "", signal_name(label_stop_signal), st.scanned,
			 st.total > st.scanned ? st.total : st.scanned);
	}
	if (c->img_open) {
		c->img_open = false;
		if (img_close(&c->img, c->cmd) && !rc) {
			rc = -1;
			failed(c, STAGE_WRITE);
		}
	}
	*out = outcome_of(c, &st, rc);
	c->st = st;
	run_summary(c, &st, *out);
	if (st.interrupted)
		return 128 + label_stop_signal;
	if (rc)
		return EXIT_USAGE;
	bool unlabeled = !c->tree && ident_most_unlabeled(c->cmd, c->target, &c->id, c->pol.set,
							   c->o.mountpoint, st.scanned, st.nomatch);
	if (c->check)
		return st.changed || st.errors || st.digests_written || unlabeled ? EXIT_DIFFERS
										   : EXIT_OK;
	return st.errors || unlabeled ? EXIT_DIFFERS : EXIT_OK;
}

static int finish(struct run *c, int status, enum outcome out)
{
	img_prescan_end();
	if (c->img_open)
		img_close(&c->img, c->cmd);
	erofs_close(c->ero);
	c->ero = NULL;
	status = run_report_close(c, status, out);
	rpt_capture_stop();
	for (size_t i = 0; i < c->o.nexcludes; i++)
		free(c->o.excludes[i]);
	free(c->o.excludes);
	free(c->mp);
	free(c->output);
	ident_free(&c->id);
	appdata_free(c->o.appdata);
	run_policy_opts_free(&c->po);
	run_policy_free(&c->pol);
	return status;
}

/* A run that stops before its walk (at stage, with status, or by a signal): nothing is done,
 * and the report says what stopped it. */
static int stop_early(struct run *c, int stage, int status)
{
	int sig = label_stop_signal;
	if (sig && status == EXIT_OK) /* (the step went to its end: the signal came during it) */
		fprintf(stderr, "fclabel %s: interrupted by %s; nothing done\n", c->cmd,
			signal_name(sig));
	failed(c, stage);
	return stop_by_signal(finish(c, sig ? 128 + sig : status, OUT_NOTHING));
}

/*
 * A device's /data (it carries Android's digests): a full label or a relabel strips the levels
 * the device keeps (an app's /data/media/N/Android/data/PKG, vold's per-user directories), as
 * TWRP's "Fix contexts" does, so it is refused unless asked for (--full-label); --as-device does
 * what the device would. check counts what the device keeps instead. Nothing has been opened for
 * writing yet. EXIT_OK, or EXIT_USAGE after saying why.
 */
static int device_data(struct run *c)
{
	char where[sizeof(c->digested_at)];

	if (strcmp(c->o.mountpoint, ANDROID_DATA) || c->o.device || c->full_label || c->erofs)
		return EXIT_OK;
	int rc = data_digested(c->target, c->tree, &c->ip, c->cmd, c->o.mountpoint, where,
			       sizeof(where));
	if (rc <= 0)
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	if (c->check) {
		c->o.device_shadow = true;
		memcpy(c->digested_at, where, sizeof(where));
		return EXIT_OK;
	}
	fprintf(stderr, "fclabel %s: %s is a device's /data (security.sehash on %s): refusing a "
		"%s, which would strip the levels the device keeps; give %s, or --full-label to "
		"%s it all the same; nothing written\n", c->cmd, qname(c->target), qname(where),
		c->relabel ? "relabel" : "full label",
		c->relabel ? "fclabel label --as-device with the new policy" : "--as-device",
		c->relabel ? "relabel" : "label");
	fprintf(stderr, "fclabel %s: --as-device changes only what the device's next boot and "
		"unlock would change, and keeps those levels (fclabel-label(1), AS THE DEVICE)\n",
		c->cmd);
	return EXIT_USAGE;
}

/*
 * An EROFS image (its magic at byte 1024) is read-only by design: mkfs.erofs writes it whole
 * and the kernel never changes it, so its labels come from `mkfs.erofs --file-contexts` when
 * it is built. check and dry runs read it; label and relabel are refused before anything is
 * opened for writing: EXIT_USAGE, the image untouched.
 */
static int erofs_target(struct run *c)
{
	int r;
	if (c->tree)
		return EXIT_OK;
	if (c->ip.where.set ? !c->ip.where.erofs : (r = eroimg_probe(c->target)) <= 0)
		return EXIT_OK; /* (one that cannot be read: the open says why) */
	c->erofs = true;
	if (c->check || c->o.mode == LM_DRYRUN)
		return EXIT_OK;
	fprintf(stderr, "fclabel %s: %s: %s; nothing written\n", c->cmd, qname(c->target),
		EROFS_REFUSAL);
	return EXIT_USAGE;
}

/* The policy (and for relabel the old one and what changed); EXIT_OK or the exit status. */
static int load_policies(struct run *c)
{
	c->po.old_lookups = c->o.digests;
	int status = run_policy_load(c->cmd, &c->po, c->o.mountpoint, c->ip.lock, c->o.verbose,
				     &c->pol);
	c->o.policy_files = c->pol.pf.v;
	c->o.npolicy_files = c->pol.pf.n;
	c->o.android_build |= c->pol.android_build;
	if (c->o.digests)
		c->o.oldset = c->pol.oldset;
	c->o.diff = c->pol.diff;
	return status;
}

int run_target(int argc, char **argv, const struct command *self, const struct cli_spec *spec,
	       enum run_kind kind)
{
	struct run c = { .self = self, .spec = spec, .cmd = self->name, .check = kind == RUN_CHECK,
			 .relabel = kind == RUN_RELABEL };
	int r, status;

	c.o = (struct label_opts){ .mode = c.check ? LM_CHECK : LM_LABEL, .cmd = c.cmd,
				   .mountpoint = "", .progress = true };
	/* (main has started keeping what is said on stderr, and catching SIGINT and SIGTERM:
	 * CMD_REPORT) */
	r = run_options(&c, argc, argv);
	if (r > 0) /* --help: no run, no report */
		return finish(&c, EXIT_OK, OUT_NOTHING);
	if (run_report_open(&c))
		return finish(&c, EXIT_USAGE, OUT_NOTHING);
	if (r || run_check_target(&c) || run_resolve_output(&c))
		return stop_early(&c, STAGE_ARGUMENTS, EXIT_USAGE);
	if ((status = choose_part(&c)) != EXIT_OK || label_stop_signal)
		return stop_early(&c, STAGE_TARGET, status);
	if ((status = erofs_target(&c)) != EXIT_OK || label_stop_signal)
		return stop_early(&c, STAGE_TARGET, status);
	if ((status = identify(&c)) != EXIT_OK || label_stop_signal)
		return stop_early(&c, STAGE_MOUNT_POINT, status);
	/* (the block claims, looked at while the policies load: ext4/prescan.c) */
	if (!c.tree && !c.erofs && (c.self->needs & CMD_TARGET_RW) && c.o.mode == LM_LABEL)
		img_prescan_start(c.target, &c.ip.where);
	if ((status = load_policies(&c)) != EXIT_OK || label_stop_signal)
		return stop_early(&c, STAGE_POLICY, status);
	if ((status = check_covered(&c)) != EXIT_OK || label_stop_signal)
		return stop_early(&c, STAGE_MOUNT_POINT, status);
	if ((status = device_data(&c)) != EXIT_OK || label_stop_signal)
		return stop_early(&c, STAGE_TARGET, status);
	if ((status = open_outputs(&c) ? EXIT_USAGE : EXIT_OK) || label_stop_signal)
		return stop_early(&c, STAGE_TARGET, status);
	enum outcome out;
	status = run(&c, &out);
	/* (a signal that came after the walk, while the result was written, still ends the run
	 * by that signal, once everything is written and said) */
	if (label_stop_signal)
		status = 128 + label_stop_signal;
	return stop_by_signal(finish(&c, status, out));
}
