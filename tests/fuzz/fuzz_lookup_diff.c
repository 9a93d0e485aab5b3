/*
 * fuzz_lookup_diff: fcontexts against libselinux 3.4 (the reference, as tests/oracle.c drives
 * it: selabel_open(SELABEL_CTX_FILE) with SELABEL_OPT_PATH, never SELABEL_OPT_VALIDATE).
 *
 * Input: one flags byte (1: base only, i.e. FC_BASE_ONLY / SELABEL_OPT_BASEONLY), then sections
 * separated by the bytes ff fe:
 *   0 FILE (at most 32 lines)   1 queries, one a line: a mode letter then the path
 *   2 FILE.subs   3 FILE.subs_dist   4 FILE.homedirs   5 FILE.local
 * Mode letters: f regular, d directory, l symlink, c char, b block, p fifo, s socket, x 0170000,
 * anything else 0 (then the letter is not part of the path). A path that does not start with
 * '/' gets one (libselinux is only asked about absolute paths); a byte 01 in it is a newline
 * ('$' matches before a final one). Every spec's regex is asked
 * too, as a path, with modes 0, regular file and directory.
 *
 * Aborts when the two disagree on any answer (a context, or no label), or on whether the
 * files load at all, except for what is known and accepted (tests/t_load_errors.sh,
 * ../shared/docs/file_contexts-semantics.md): fcontexts rejects at load a regex PCRE2 rejects
 * (3.4 only fails lookups that reach it) and a NUL byte in a line (3.4 reads up to it).
 * fcontexts' EIO (PCRE2 gave up while matching) is 3.4's ENOENT.
 *
 * Substitution files are written with a final newline, and inputs with a substitution line of
 * more than 1000 bytes are skipped: libselinux 3.4's selabel_subs_init() reads a line that ends
 * in its SRC (a last line without a newline, or a 1022-byte piece of a longer line) past the
 * string's end, taking stale bytes of an earlier line (or uninitialized stack) as its DST.
 * fcontexts reads such a line as having no DST, and skips it.
 *
 * Compiled files (a section that starts with the .bin magic 0xf97cff8a, in either byte order)
 * are skipped: 3.4 loads their serialized PCRE2 code as it is (pcre2_serialize_decode does not
 * validate it), so fuzzed ones crash libselinux itself; and it reads 3.8's big-endian version 6
 * as text, which fcontexts reads. fuzz_parse fuzzes fcontexts' reader of them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <selinux/label.h>
#include <selinux/selinux.h>

#include "fcontexts.h"
#include "fuzzutil.c"

#define FZ_MAX_INPUT 2048
#define MAX_LINES 32
#define MAX_QUERIES 16
#define MAX_AUTO 16

static int quiet_log(int type, const char *fmt, ...)
{
	(void)type;
	(void)fmt;
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	union selinux_callback cb;
	(void)argc;
	(void)argv;
	cb.func_log = quiet_log;
	selinux_set_callback(SELINUX_CB_LOG, cb);
	return 0;
}

static mode_t mode_of(char c, bool *used)
{
	*used = true;
	switch (c) {
	case 'f': return S_IFREG;
	case 'd': return S_IFDIR;
	case 'l': return S_IFLNK;
	case 'c': return S_IFCHR;
	case 'b': return S_IFBLK;
	case 'p': return S_IFIFO;
	case 's': return S_IFSOCK;
	case 'x': return 0170000;
	case '0': return 0;
	}
	*used = false;
	return 0;
}

static const char *input_text; /* for the report */
static size_t input_len;

static void report(const char *what, const char *path, mode_t mode, const char *ours,
		   const char *theirs)
{
	fprintf(stderr, "fuzz_lookup_diff: %s\n  path '%s' mode 0%o: fcontexts '%s', libselinux "
		"3.4 '%s'\n--- file_contexts ---\n%.*s\n---\n", what, path, (unsigned)mode,
		ours ? ours : "(n/a)", theirs ? theirs : "(n/a)", (int)input_len, input_text);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool inited;
	struct fz_section sec[6];
	char fpath[512], *qblock = NULL, *qv[MAX_QUERIES];
	struct fc_error err;
	fc_set *set = NULL;
	struct selabel_handle *h;
	int rc;

	if (!inited) {
		LLVMFuzzerInitialize(NULL, NULL);
		inited = true;
	}
	if (size < 1 || size > FZ_MAX_INPUT)
		return 0;
	bool baseonly = data[0] & 1;
	size_t n = fz_split(data + 1, size - 1, sec, 6);
	size_t lines = 0;
	for (size_t i = 0; i < sec[0].n; i++)
		lines += sec[0].p[i] == '\n';
	if (lines > MAX_LINES)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((i == 0 || i >= 4) && sec[i].n >= 4 && (!memcmp(sec[i].p, "\x8a\xff\x7c\xf9", 4) ||
							  !memcmp(sec[i].p, "\xf9\x7c\xff\x8a", 4)))
			return 0;
	input_text = (const char *)sec[0].p;
	input_len = sec[0].n;

	fz_path(fpath, sizeof(fpath), "file_contexts");
	fz_put("file_contexts", &sec[0], true);
	for (size_t i = 2; i < 4; i++) {
		/* substitution files end with a newline, and have no line over 1000 bytes */
		char name[64], path[512];
		snprintf(name, sizeof(name), "file_contexts.%s", i == 2 ? "subs" : "subs_dist");
		fz_path(path, sizeof(path), name);
		if (n <= i) {
			fz_put(name, &sec[i], false);
			continue;
		}
		for (size_t k = 0, len = 0; k < sec[i].n; k++) {
			len = sec[i].p[k] == '\n' ? 0 : len + 1;
			if (len > 1000)
				return 0;
		}
		char *text = malloc(sec[i].n + 1);
		if (!text)
			abort();
		memcpy(text, sec[i].p, sec[i].n);
		size_t tl = sec[i].n;
		if (!tl || text[tl - 1] != '\n')
			text[tl++] = '\n';
		fz_write(path, text, tl);
		free(text);
	}
	fz_put("file_contexts.homedirs", &sec[4], n > 4);
	fz_put("file_contexts.local", &sec[5], n > 5);

	const char *files[1] = { fpath };
	rc = fc_load(&set, files, 1, baseonly ? FC_BASE_ONLY : 0, &err);

	struct selinux_opt opts[2] = {
		{ SELABEL_OPT_PATH, fpath },
		{ SELABEL_OPT_BASEONLY, baseonly ? (const char *)1 : NULL },
	};
	h = selabel_open(SELABEL_CTX_FILE, opts, 2);

	if (rc) {
		bool known = strstr(err.msg, "bad regex") || strstr(err.msg, "NUL byte");
		if (rc == ENOMEM) {
			known = true;
		}
		if (h && !known) {
			fprintf(stderr, "fuzz_lookup_diff: fcontexts: %s:%u:%u: %s\n", err.file, err.line,
				err.column, err.msg);
			selabel_close(h);
			report("fcontexts rejects what libselinux 3.4 accepts", "", 0, NULL, NULL);
		}
		if (h)
			selabel_close(h);
		return 0;
	}
	if (!h) {
		int e = errno;
		fc_free(set);
		if (e == ENOMEM)
			return 0;
		fprintf(stderr, "fuzz_lookup_diff: selabel_open: %s\n", strerror(e));
		report("libselinux 3.4 rejects what fcontexts accepts", "", 0, NULL, NULL);
	}

	/* the queries */
	struct query {
		const char *path;
		mode_t mode;
	} q[MAX_QUERIES + 3 * MAX_AUTO];
	size_t nq = 0, nl = n > 1 ? fz_lines(&sec[1], &qblock, qv, MAX_QUERIES, 200) : 0;
	char *paths[MAX_QUERIES + MAX_AUTO] = { 0 };
	size_t np = 0;
	for (size_t i = 0; i < nl; i++) {
		bool used;
		mode_t m = mode_of(qv[i][0], &used);
		const char *p = qv[i] + (used && qv[i][0] ? 1 : 0);
		char *full = malloc(strlen(p) + 2);
		if (!full)
			abort();
		sprintf(full, "%s%s", p[0] == '/' ? "" : "/", p);
		for (char *c = full; *c; c++)
			if (*c == '\x01')
				*c = '\n';
		paths[np++] = full;
		q[nq].path = full;
		q[nq++].mode = m;
	}
	for (size_t i = 0; i < fc_count(set) && i < MAX_AUTO; i++) {
		const char *re = fc_spec_at(set, i)->regex;
		char *full = malloc(strlen(re) + 2);
		if (!full)
			abort();
		sprintf(full, "%s%s", re[0] == '/' ? "" : "/", re);
		paths[np++] = full;
		q[nq].path = full;
		q[nq++].mode = 0;
		q[nq].path = full;
		q[nq++].mode = S_IFREG;
		q[nq].path = full;
		q[nq++].mode = S_IFDIR;
	}

	for (size_t i = 0; i < nq; i++) {
		struct fc_result res;
		const char *ours, *theirs;
		char *con = NULL;

		rc = fc_lookup(set, q[i].path, q[i].mode, &res);
		if (rc == EIO)
			ours = "<<none>>";
		else if (rc)
			report("fc_lookup failed", q[i].path, q[i].mode, strerror(rc), NULL);
		else
			ours = res.status == FC_LABEL ? res.context : "<<none>>";

		errno = 0;
		if (selabel_lookup_raw(h, &con, q[i].path, (int)q[i].mode) == 0)
			theirs = con;
		else if (errno == ENOENT)
			theirs = "<<none>>";
		else if (errno == ENOMEM)
			continue;
		else
			theirs = "<<error>>";
		if (strcmp(ours, theirs)) {
			char where[700] = "";
			if (res.spec && !rc)
				snprintf(where, sizeof(where), " (fcontexts: line %u '%s')", res.spec->line,
					 res.spec->regex);
			fprintf(stderr, "fuzz_lookup_diff: answers differ%s\n", where);
			report("fcontexts and libselinux 3.4 disagree", q[i].path, q[i].mode, ours,
			       theirs);
		}
		freecon(con);
	}
	for (size_t i = 0; i < np; i++)
		free(paths[i]);
	free(qblock);
	selabel_close(h);
	fc_free(set);
	return 0;
}
