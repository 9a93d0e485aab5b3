/* What the engine tells the user: warnings, the progress line, the JSON report. */
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"

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

void rpt_event(struct run *r, const char *kind, const char *path, const char *has,
	   const char *wants, const struct fc_spec *spec, const char *extra)
{
	if (!r->o->json || r->collect_only)
		return;
	fprintf(r->o->json, "%s\n    {\"event\": ", r->json_first ? "" : ",");
	r->json_first = false;
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
	int n;

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

void policy_files_json(FILE *f, const struct policy_file *v, size_t n)
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
