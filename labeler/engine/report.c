/* What the engine tells the user: warnings, the progress line, the JSON report. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

double rpt_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Length of the valid UTF-8 sequence at s, 0 if none: valid as a strict decoder (RFC 3629,
 * Python's) takes it, so that what the report writes raw every JSON parser reads. Refused: lead
 * bytes C0, C1 and F5-FF, overlong forms (E0 80-9F, F0 80-8F), UTF-16 surrogates (ED A0-BF) and
 * code points past U+10FFFF (F4 90-BF): such a sequence is bytes, each escaped.
 */
static int utf8_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf; /* the range of the second byte */
	int n;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (int i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* A JSON string; file names are bytes: valid UTF-8 (RFC 3629: no surrogates, overlong forms or
 * code points past U+10FFFF) passes, any other byte 0xXX becomes the
 * lone surrogate \udcXX (Python's "surrogateescape" reads it back as that byte). */
void rpt_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		int n;
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p++);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p++);
		else if (*p < 0x80)
			fputc(*p++, f);
		else if ((n = utf8_len(p)) > 0) {
			fwrite(p, 1, (size_t)n, f);
			p += n;
		} else
			fprintf(f, "\\udc%02x", *p++);
	}
	fputc('"', f);
}

void rpt_clear(struct run *r)
{
	if (r->progress_shown) {
		fputs("\r\033[K", stderr);
		r->progress_shown = false;
	}
}

void rpt_progress(struct run *r)
{
	if (!r->tty || (r->st->scanned & 255))
		return;
	double t = rpt_now();
	if (t < r->next_progress)
		return;
	r->next_progress = t + 0.25;
	double el = t - r->start, rate = el > 0 ? r->st->scanned / el : 0;
	unsigned long left = r->total > r->st->scanned ? r->total - r->st->scanned : 0;
	char line[160];
	int n = snprintf(line, sizeof(line), "fclabel %s: %lu of %lu files, %.0f/s, %lu changed, "
			 "about %.0f s left", r->o->cmd, r->st->scanned, r->total, rate,
			 r->st->changed, rate > 0 ? left / rate : 0.0);
	struct winsize ws;
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10 && n >= ws.ws_col)
		line[ws.ws_col - 1] = 0;
	fprintf(stderr, "\r%s\033[K", line);
	r->progress_shown = true;
}

void rpt_warn(void *arg, const char *path, const char *msg)
{
	struct run *r = arg;
	rpt_clear(r);
	fprintf(stderr, "fclabel %s: warning: %s: %s\n", r->o->cmd, qname(path), msg);
	r->st->warnings++;
}

/* relabel --verify's check: what it finds wrong, named as the verify's own ("verify-differs");
 * NULL for what is no fault (a digest withheld, a path no spec matches) */
static const char *verify_kind(const char *kind)
{
	static const char *const faults[][2] = {
		{ "differs", "verify-differs" },
		{ "digest-missing", "verify-digest-missing" },
		{ "digest-stale", "verify-digest-stale" },
		{ "error", "verify-error" },
	};
	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
		if (!strcmp(kind, faults[i][0]))
			return faults[i][1];
	return NULL;
}

void rpt_event(struct run *r, const char *kind, const char *path, const char *has,
	   const char *wants, const struct fc_spec *spec, const char *extra)
{
	if (!r->o->json || r->collect_only)
		return;
	if (r->o->verify && !(kind = verify_kind(kind)))
		return;
	/* (the count the caller keeps, with the other parts of its report; else the walk's own) */
	unsigned long *n = r->o->json_events ? r->o->json_events : &r->json_events;
	fprintf(r->o->json, "%s\n    {\"event\": ", (*n)++ ? "," : "");
	rpt_json_str(r->o->json, kind);
	fputs(", \"path\": ", r->o->json);
	rpt_json_str(r->o->json, path);
	if (has) {
		fputs(", \"has\": ", r->o->json);
		rpt_json_str(r->o->json, has);
	} else if (wants) {
		fputs(", \"has\": null", r->o->json); /* (none: a file never labeled) */
	}
	if (wants) {
		fputs(", \"wants\": ", r->o->json);
		rpt_json_str(r->o->json, wants);
	}
	if (spec) {
		fprintf(r->o->json, ", \"spec\": ");
		rpt_json_str(r->o->json, spec->file);
		fprintf(r->o->json, ", \"line\": %u", spec->line);
	}
	if (extra) {
		fputs(", \"detail\": ", r->o->json);
		rpt_json_str(r->o->json, extra);
	}
	fputc('}', r->o->json);
}

const char *rpt_spec_where(const struct fc_spec *s, char *buf, size_t n)
{
	if (!s)
		return "(no spec)";
	snprintf(buf, n, "%s:%u", s->file, s->line);
	return buf;
}


const char *qname(const char *s)
{
	static __thread char *buf[4];
	static __thread size_t cap[4];
	static __thread unsigned slot;
	const unsigned char *p;
	int n = 1;

	for (p = (const unsigned char *)s; *p; p += n) {
		n = 1;
		if (*p < 0x20 || *p == 0x7f || *p == '"' || *p == '\\')
			break;
		if (*p >= 0x80 && !(n = utf8_len(p)))
			break;
	}
	if (!*p)
		return s; /* nothing to quote */
	size_t need = strlen(s) * 4 + 3;
	unsigned k = slot++ % 4;
	if (need > cap[k]) {
		char *nb = realloc(buf[k], need);
		if (!nb)
			return s;
		buf[k] = nb;
		cap[k] = need;
	}
	char *o = buf[k];
	*o++ = '"';
	for (p = (const unsigned char *)s; *p;) {
		static const char esc[] = "\a\b\t\n\v\f\r";
		const char *e = *p ? strchr(esc, *p) : NULL;
		if (e) {
			*o++ = '\\';
			*o++ = "abtnvfr"[e - esc];
			p++;
		} else if (*p == '"' || *p == '\\') {
			*o++ = '\\';
			*o++ = (char)*p++;
		} else if (*p < 0x20 || *p == 0x7f || (*p >= 0x80 && !(n = utf8_len(p)))) {
			o += sprintf(o, "\\%03o", *p++);
		} else if (*p >= 0x80) {
			memcpy(o, p, (size_t)n);
			o += n;
			p += n;
		} else {
			*o++ = (char)*p++;
		}
	}
	*o++ = '"';
	*o = 0;
	return buf[k];
}

void policy_origins_json(FILE *f, const struct policy_origin *v, size_t n)
{
	if (!n)
		return;
	fputs("  \"policy_files\": [", f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s\n    {\"kind\": \"%s\", \"part\": \"%s\", \"path\": ", i ? "," : "",
			v[i].kind, v[i].part);
		rpt_json_str(f, v[i].path);
		fputs(", \"from\": ", f);
		rpt_json_str(f, v[i].from);
		fputc('}', f);
	}
	fputs("\n  ],\n", f);
}

/*
 * What fclabel says on standard error, for the report of a run that fails: stderr becomes a
 * stream that writes through to descriptor 2 unbuffered, as before, and keeps the lines that
 * begin with the command's prefix ("fclabel label: "), warnings and notes aside (the files they
 * name are events), without the prefix. Fixed buffers: nothing is allocated per line.
 */
static struct {
	FILE *orig;
	char prefix[32];
	char line[1024];
	size_t linelen;
	bool line_cut;
	int esc;       /* in a terminal's escape sequence (the progress line's ESC [ K): 1 after
			* ESC, 2 after ESC [ */
	char said[4096];
	size_t saidlen;
	bool said_cut;
} cap;

static void cap_line(void)
{
	size_t pl = strlen(cap.prefix);
	const char *l = cap.line + pl;
	size_t n = cap.linelen - pl;

	if (cap.linelen < pl || memcmp(cap.line, cap.prefix, pl) || !strncmp(l, "warning: ", 9) ||
	    !strncmp(l, "note: ", 6))
		return;
	/* (room kept for the mark of what did not fit: "\n...") */
	if (cap.said_cut || cap.saidlen + 1 + n + (cap.line_cut ? 3 : 0) + 6 > sizeof(cap.said)) {
		if (!cap.said_cut)
			strcpy(cap.said + cap.saidlen, cap.saidlen ? "\n..." : "...");
		cap.said_cut = true;
		return;
	}
	if (cap.saidlen)
		cap.said[cap.saidlen++] = '\n';
	memcpy(cap.said + cap.saidlen, l, n);
	cap.saidlen += n;
	if (cap.line_cut) {
		memcpy(cap.said + cap.saidlen, "...", 3);
		cap.saidlen += 3;
	}
	cap.said[cap.saidlen] = 0;
}

static ssize_t cap_write(void *cookie, const char *buf, size_t n)
{
	(void)cookie;
	for (size_t done = 0; done < n;) {
		ssize_t w = write(STDERR_FILENO, buf + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break; /* (lost, as it would be without the copy) */
		done += (size_t)w;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char b = (unsigned char)buf[i];
		if (cap.esc == 1) {
			cap.esc = b == '[' ? 2 : 0;
		} else if (cap.esc == 2) {
			if (b >= 0x40 && b <= 0x7e)
				cap.esc = 0;
		} else if (b == 0x1b) {
			cap.esc = 1;
		} else if (buf[i] == '\n') {
			cap_line();
			cap.linelen = 0;
			cap.line_cut = false;
		} else if (buf[i] == '\r') {
			cap.linelen = 0; /* (the progress line, written over) */
			cap.line_cut = false;
		} else if (cap.linelen < sizeof(cap.line) - 1) {
			cap.line[cap.linelen++] = buf[i];
		} else {
			cap.line_cut = true;
		}
	}
	return (ssize_t)n;
}

void rpt_capture_start(const char *cmd)
{
	static const cookie_io_functions_t io = { .write = cap_write };
	FILE *f;

	if (cap.orig || !(f = fopencookie(NULL, "w", io)))
		return; /* (the report then says only the stage) */
	setvbuf(f, NULL, _IONBF, 0);
	fflush(stderr);
	snprintf(cap.prefix, sizeof(cap.prefix), "fclabel %s: ", cmd);
	cap.orig = stderr;
	stderr = f;
}

const char *rpt_captured(void)
{
	return cap.said;
}

void rpt_capture_stop(void)
{
	if (!cap.orig)
		return;
	FILE *f = stderr;
	stderr = cap.orig;
	fclose(f);
	memset(&cap, 0, sizeof(cap));
}

/*
 * The report's file. A regular file (or a new one) is written as a temporary file beside it,
 * renamed over it once complete; the report that was there is removed at once, so that what
 * the path holds after a run is that run's report, whole, or nothing (not an older run's, even
 * when this one is killed). NULL, or what failed (errno says why).
 */
static const char *tmp_open(struct rpt_file *r, const char *name)
{
	struct stat st;
	char *real = NULL, *d;
	int fd;

	/* a symlink to the report: the file it names is replaced, the link stays */
	if (!lstat(name, &st) && S_ISLNK(st.st_mode))
		real = realpath(name, NULL);
	r->path = real ? real : strdup(name);
	d = r->path ? strdup(r->path) : NULL;
	if (!d || asprintf(&r->tmp, "%s/.fclabel-report-XXXXXX", dirname(d)) < 0) {
		free(d);
		r->tmp = NULL;
		errno = ENOMEM;
		return "out of memory";
	}
	free(d);
	if ((fd = mkstemp(r->tmp)) < 0) {
		free(r->tmp);
		r->tmp = NULL;
		return "cannot make a temporary file beside it";
	}
	mode_t um = umask(0);
	umask(um);
	/* (the mode the report has, or the one fopen would give a new one) */
	mode_t mode = !stat(r->path, &st) ? st.st_mode & 07777 : 0666 & ~um;
	if (fchmod(fd, mode) || !(r->f = fdopen(fd, "w"))) {
		int e = errno;
		close(fd);
		errno = e;
		return "cannot write it";
	}
	if (unlink(r->path) && errno != ENOENT)
		return "cannot remove the report that is there";
	return NULL;
}

int rpt_file_open(struct rpt_file *r, const char *name, const char *cmd)
{
	struct stat st;
	const char *why;

	memset(r, 0, sizeof(*r));
	if (!strcmp(name, "-")) {
		r->f = stdout;
		return 0;
	}
	/* (/dev/stdout and /proc/self/fd/N name a descriptor: renaming over them would not reach
	 * it, and opening them to write from the start would empty a file the shell appends to) */
	if (!strncmp(name, "/dev/", 5) || !strncmp(name, "/proc/", 6) ||
	    (!stat(name, &st) && !S_ISREG(st.st_mode))) {
		if ((r->f = fopen(name, "a")))
			return 0;
		why = "cannot write it";
	} else if (!(why = tmp_open(r, name))) {
		return 0;
	}
	fprintf(stderr, "fclabel %s: --json %s: %s: %s\n", cmd, qname(name), why, strerror(errno));
	rpt_file_drop(r);
	return -1;
}

void rpt_file_drop(struct rpt_file *r)
{
	if (r->f && r->f != stdout)
		fclose(r->f);
	if (r->tmp)
		unlink(r->tmp);
	free(r->tmp);
	free(r->path);
	memset(r, 0, sizeof(*r));
}

int rpt_file_close(struct rpt_file *r, bool sync)
{
	int err = 0;

	errno = 0;
	if (fflush(r->f) || ferror(r->f))
		err = errno ? errno : EIO;
	else if (sync && r->tmp && fsync(fileno(r->f)))
		err = errno;
	if (r->f != stdout && fclose(r->f) && !err)
		err = errno;
	r->f = NULL;
	if (!err && r->tmp && rename(r->tmp, r->path))
		err = errno;
	if (!err) {
		free(r->tmp);
		r->tmp = NULL;
	}
	rpt_file_drop(r);
	errno = err;
	return err ? -1 : 0;
}

/* What stops a walk, kept for the report's end (the summary and summary.failure say it). */
void label_read_only(struct run *r, const char *path)
{
	if (!r->read_only)
		snprintf(r->read_only_at, sizeof(r->read_only_at), "%s", path);
	r->read_only = true;
}

bool label_stops(struct run *r, const struct label_file *f, int rc, const char *why)
{
	switch (rc) {
	case LSET_READONLY:
		label_read_only(r, f->path);
		return true;
	case LSET_REFUSED:
		if (!r->refused)
			snprintf(r->stop_why, sizeof(r->stop_why), "%s", why);
		r->refused = true;
		return true;
	case LSET_INTERRUPTED: /* (the walk stops at the next file, at the signal) */
		return true;
	}
	return false;
}

/* ---- the report's frame (fclabel-report(5)) ---- */

/* Its first fields: what it is, and of what (a target not given, when the arguments were bad:
 * null). */
void rpt_head(FILE *j, const struct rpt_run *h)
{
	fprintf(j, "{\n  \"schema\": \"%s\",\n  \"command\": \"%s\",\n  \"mode\": \"%s\",\n"
		"  \"target\": ", REPORT_SCHEMA, h->cmd, h->mode);
	if (h->target)
		rpt_json_str(j, h->target);
	else
		fputs("null", j);
	fprintf(j, ",\n  \"target_kind\": %s,\n",
		!h->target ? "null" : h->tree ? "\"tree\"" : "\"image\"");
	if (h->part_number) {
		fprintf(j, "  \"partition\": {\"number\": %d, \"name\": ", h->part_number);
		rpt_json_str(j, h->part_name ? h->part_name : "");
		fprintf(j, ", \"offset\": %llu, \"size\": %llu},\n", h->part_offset, h->part_size);
	}
	policy_origins_json(j, h->policy, h->npolicy);
}

/* The events' list, which rpt_event fills as the walk goes. */
void rpt_events_open(FILE *j)
{
	fputs("  \"events\": [", j);
}

/* Its last fields: the counts, what became of the target, the exit status, what failed. */
void rpt_tail(FILE *j, const struct label_stats *st, const struct rpt_end *e)
{
	fputs(e->events_open ? "\n  ],\n" : "  \"events\": [],\n", j);
	if (st->aborted)
		fprintf(j, "  \"aborted\": \"%s\",\n", st->aborted);
	fprintf(j, "  \"summary\": {\n    \"scanned\": %lu, \"differ\": %lu, \"written\": %lu, "
		"\"unchanged\": %lu, \"hard_links\": %lu,\n    \"no_label\": %lu, \"conflicts\": "
		"%lu, \"errors\": %lu, \"warnings\": %lu, \"no_space\": %lu,\n    "
		"\"ea_blocks_allocated\": %lu, \"ea_block_shares\": %lu, \"dirs_entered\": %lu, "
		"\"dirs_skipped\": %lu,\n    \"encrypted_dirs\": %lu, \"unknown_packages\": %lu, "
		"\"seapp_failed\": %lu,\n    \"digests\": {\"right\": %lu, \"missing_or_stale\": %lu, "
		"\"written\": %lu, \"withheld\": %lu},\n    \"files_total\": %lu, \"seconds\": %.3f, "
		"\"claims_seconds\": %.3f,\n",
		st->scanned, st->changed, e->labels_written ? st->written : 0, st->unchanged,
		st->links, st->nolabel, st->conflicts, st->errors, st->warnings, st->nospace,
		st->ea_allocated, st->ea_shared, st->dirs, st->dirs_skipped, st->encrypted,
		st->unknown_pkgs, st->seapp_failed, st->digests_unchanged, st->digests_written,
		e->labels_written ? st->digests_on_disk : 0, st->digests_withheld, st->total,
		st->seconds, st->claims_seconds);
	if (e->device)
		fprintf(j, "    \"as_device\": {\"dirs_skipped_by_digest\": %lu, \"packages_right\": "
			"%lu, \"packages_wrong\": %lu, \"kept\": %lu},\n", st->dirs_digest_skipped,
			st->pkgs_right, st->pkgs_wrong, st->kept);
	if (e->stage) {
		fprintf(j, "    \"failure\": {\"stage\": \"%s\", \"message\": ", e->stage);
		rpt_json_str(j, e->message);
		fputs("},\n", j);
	}
	fprintf(j, "    \"result\": \"%s\", \"interrupted\": %s, \"exit_status\": %d\n  }\n}\n",
		e->result, e->interrupted ? "true" : "false", e->exit_status);
}
