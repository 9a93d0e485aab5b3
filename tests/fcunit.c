/*
 * Unit tests of the fcontexts library API: what the command line does not reach.
 * usage: fcunit DIR   (a scratch directory). Prints "ok"/"FAIL" lines; exit 1 on any failure.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdbool.h>

#include "fcontexts.h"

/* Private to the library (fcontexts/internal.h): whether a regex may be compiled lazily. */
bool fc_regex_surely_compiles(const char *re);

#include "unit.h"


static const char *dir;

static const char *write_file(const char *name, const char *text)
{
	static char path[8][4096];
	static int slot;
	char *p = path[slot++ % 8];
	FILE *f;

	snprintf(p, 4096, "%s/%s", dir, name);
	f = fopen(p, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(p);
		exit(2);
	}
	return p;
}

static const char *ctx(const fc_set *set, const char *path, mode_t mode)
{
	struct fc_result r;
	if (fc_lookup(set, path, mode, &r))
		return "<<error>>";
	return r.status == FC_LABEL ? r.context : r.status == FC_NONE ? "<<none>>" : "<<nomatch>>";
}

/* ---- several threads look up at once: same answers as one thread ---- */

struct job {
	const fc_set *set;
	char **paths;
	size_t n;
	const char **answers;
	int mismatches;
};

static void *worker(void *arg)
{
	struct job *j = arg;
	for (int round = 0; round < 20; round++)
		for (size_t i = 0; i < j->n; i++)
			if (strcmp(ctx(j->set, j->paths[i], S_IFREG), j->answers[i]) != 0)
				j->mismatches++;
	return NULL;
}

static void test_threads(void)
{
	const char *fc = write_file("threads_fc",
				    "/.*\tu:r:default_t:s0\n"
				    "/usr(/.*)?\tu:r:usr_t:s0\n"
				    "/usr/(.*/)?bin(/.*)?\tu:r:bin_t:s0\n"
				    "/usr/lib/[^/]+\\.so(\\.[0-9]+)*\t--\tu:r:lib_t:s0\n"
				    "/etc/[a-z]+\\.conf\tu:r:conf_t:s0\n"
				    "/etc/passwd\tu:r:passwd_t:s0\n");
	fc_set *set;
	struct fc_error err;
	enum { N = 4000, T = 4 };
	static char buf[N][64];
	char *paths[N];
	const char *answers[N];
	static const char *const shapes[] = { "/usr/lib/lib%d.so.1", "/usr/local/bin/x%d",
					      "/etc/f%d.conf", "/etc/passwd", "/opt/%d",
					      "/usr/share/%d/bin/y" };

	if (fc_load(&set, &fc, 1, 0, &err)) {
		CHECK(0, "threads: load: %s", err.msg);
		return;
	}
	for (int i = 0; i < N; i++) {
		snprintf(buf[i], sizeof(buf[i]), shapes[i % 6], i);
		paths[i] = buf[i];
	}
	/* reference answers, from one thread, before any other thread touches the set */
	for (int i = 0; i < N; i++)
		answers[i] = ctx(set, paths[i], S_IFREG);
	/* the threads share a second, cold set: its lazily built parts are built under contention */
	fc_set *cold;
	if (fc_load(&cold, &fc, 1, 0, &err)) {
		CHECK(0, "threads: load again");
		return;
	}
	pthread_t th[T];
	struct job jobs[T];
	for (int t = 0; t < T; t++) {
		jobs[t] = (struct job){ cold, paths, N, answers, 0 };
		pthread_create(&th[t], NULL, worker, &jobs[t]);
	}
	int mism = 0;
	for (int t = 0; t < T; t++) {
		pthread_join(th[t], NULL);
		mism += jobs[t].mismatches;
	}
	CHECK(mism == 0, "threads: %d threads x 20 rounds x %d lookups agree (%d mismatches)", T, N,
	      mism);
	CHECK(!strcmp(answers[0], "u:r:lib_t:s0") && !strcmp(answers[1], "u:r:bin_t:s0") &&
		      !strcmp(answers[3], "u:r:passwd_t:s0"),
	      "threads: reference answers are the expected ones (%s %s %s)", answers[0], answers[1],
	      answers[3]);
	fc_free(cold);
	fc_free(set);
}

/* ---- FC_NO_DUPS: what setfiles refuses ---- */

static void test_dups(void)
{
	const char *fc = write_file("dups_fc", "/a\tu:r:a_t:s0\n/b -d u:r:b_t:s0\n/b -- u:r:c_t:s0\n"
					       "/c(/.*)?\tu:r:c_t:s0\n/c(/.*)? -d u:r:d_t:s0\n");
	fc_set *set = NULL;
	struct fc_error err;
	int rc = fc_load(&set, &fc, 1, FC_NO_DUPS, &err);
	CHECK(rc == EINVAL && set == NULL, "dups: refused with FC_NO_DUPS (rc %d)", rc);
	CHECK(err.line == 5 && strstr(err.msg, "also specified at") && strstr(err.msg, ":4"),
	      "dups: names both lines (line %u: %s)", err.line, err.msg);
	rc = fc_load(&set, &fc, 1, 0, &err);
	CHECK(rc == 0, "dups: accepted without FC_NO_DUPS (as a plain selabel_open)");
	if (!rc)
		fc_free(set);
	const char *ok = write_file("nodups_fc", "/b -d u:r:b_t:s0\n/b -- u:r:c_t:s0\n");
	rc = fc_load(&set, &ok, 1, FC_NO_DUPS, &err);
	CHECK(rc == 0, "dups: the same regex with different types is no duplicate");
	if (!rc)
		fc_free(set);
}

/* ---- fc_explain: every matching spec in the order tried ---- */

static int collect(const struct fc_spec *s, void *arg)
{
	char *out = arg;
	char one[32];
	snprintf(one, sizeof(one), "%u ", s->line);
	strcat(out, one);
	return 0;
}

static void test_explain(void)
{
	const char *fc = write_file("explain_fc", "/.*\tu:r:a_t:s0\n/x(/.*)?\tu:r:b_t:s0\n"
						  "/x/y\tu:r:c_t:s0\n/x/.*\t-d\tu:r:d_t:s0\n"
						  "/x/y\t--\tu:r:e_t:s0\n");
	fc_set *set;
	struct fc_error err;
	char order[256] = "";

	if (fc_load(&set, &fc, 1, 0, &err)) {
		CHECK(0, "explain: load: %s", err.msg);
		return;
	}
	fc_explain(set, "/x/y", S_IFREG, collect, order);
	/* plain specs first (later line first), then regex specs from the last */
	CHECK(!strcmp(order, "5 3 2 1 "), "explain: order is plain then regex, last first (%s)",
	      order);
	struct fc_result r;
	fc_lookup(set, "/x/y", S_IFREG, &r);
	CHECK(r.spec && r.spec->line == 5 && !strcmp(r.spec->file, fc) && r.spec->type &&
		      !strcmp(r.spec->type, "--"),
	      "explain: the lookup's deciding spec is the first explained (line %u)",
	      r.spec ? r.spec->line : 0);
	CHECK(fc_count(set) == 5 && fc_spec_at(set, 1)->line == 2 && fc_spec_at(set, 5) == NULL,
	      "explain: fc_count and fc_spec_at");
	CHECK(fc_lookup(set, "", 0, &r) == EINVAL, "lookup: an empty path is EINVAL");
	CHECK(!strcmp(ctx(set, "relative/x", 0), "<<nomatch>>"),
	      "lookup: a relative path is looked up as libselinux does: '/.*' misses it (%s)",
	      ctx(set, "relative/x", 0));
	fc_free(set);
}

/* ---- a failed load changes nothing and says where ---- */

static void test_all_or_nothing(void)
{
	const char *good = write_file("good_fc", "/a u:r:a_t:s0\n");
	const char *bad = write_file("bad_fc", "/a u:r:a_t:s0\n\n/b -q u:r:b_t:s0\n");
	const char *both[] = { good, bad };
	fc_set *set = (fc_set *)0x1;
	struct fc_error err;
	int rc = fc_load(&set, both, 2, 0, &err);
	CHECK(rc == EINVAL && set == (fc_set *)0x1, "load: a bad second file fails the whole load");
	CHECK(!strcmp(err.file, bad) && err.line == 3 && err.column == 4,
	      "load: the error names %s:%u:%u", err.file, err.line, err.column);
}

/* ---- from memory: the answers of the same files read from disk, and nothing kept of the
 * caller's buffers ---- */

static void test_bufs(void)
{
	static const char plat[] = "/system(/.*)?\tu:object_r:system_file:s0\n"
				   "/vendor(/.*)?\tu:object_r:vendor_file:s0\n"
				   "/system/bin/sh\t--\tu:object_r:shell_exec:s0\n";
	static const char vend[] = "# vendor\n/vendor/bin/hw(/.*)?\tu:object_r:hal_exec:s0\n"
				   "/(vendor|system/vendor)/lib(/.*)?\tu:object_r:vendor_lib:s0\n";
	const char *files[] = { write_file("buf_plat", plat), write_file("buf_vendor", vend) };
	const char *paths[] = { "/system/bin/sh", "/system/x", "/vendor/bin/hw/a", "/vendor/lib/l",
				"/system/vendor/lib/y", "/data/z", "/vendor" };
	char *copy[2] = { strdup(plat), strdup(vend) };
	struct fc_buf bufs[2] = { { "img:/plat", copy[0], strlen(plat) },
				  { "img:/vendor", copy[1], strlen(vend) } };
	fc_set *a = NULL, *b = NULL;
	struct fc_error err;
	int ra = fc_load(&a, files, 2, FC_NO_DUPS, &err);
	int rb = fc_load_bufs(&b, bufs, 2, FC_NO_DUPS, &err);

	CHECK(!ra && !rb, "load_bufs: loads (%d, %d: %s)", ra, rb, err.msg);
	if (ra || rb)
		return;
	memset(copy[0], 'x', strlen(plat)); /* the set keeps copies */
	memset(copy[1], 'x', strlen(vend));
	free(copy[0]);
	free(copy[1]);
	int same = 0;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		for (mode_t m = 0; m <= S_IFREG; m += S_IFREG)
			same += !strcmp(ctx(a, paths[i], m), ctx(b, paths[i], m));
	CHECK(same == 14, "load_bufs: the answers of the same files read from disk (%d of 14)", same);
	struct fc_result r;
	CHECK(!fc_lookup(b, "/vendor/bin/hw/a", 0, &r) && r.spec && !strcmp(r.spec->file, "img:/vendor") &&
	      r.spec->line == 2, "load_bufs: a spec names its buffer and line (%s:%u)",
	      r.spec ? r.spec->file : "-", r.spec ? r.spec->line : 0);
	fc_free(a);
	fc_free(b);

	/* a bad line: the buffer's name, line and column; a duplicate across buffers with FC_NO_DUPS */
	struct fc_buf bad[2] = { { "img:/plat", plat, strlen(plat) },
				 { "img:/bad", "/a u:r:a_t:s0\n/b -q u:r:b_t:s0\n", 30 } };
	b = (fc_set *)0x1;
	rb = fc_load_bufs(&b, bad, 2, 0, &err);
	CHECK(rb == EINVAL && b == (fc_set *)0x1 && !strcmp(err.file, "img:/bad") && err.line == 2 &&
	      err.column == 4, "load_bufs: a bad line is named %s:%u:%u", err.file, err.line, err.column);
	struct fc_buf dup[2] = { { "img:/plat", plat, strlen(plat) },
				 { "img:/dup", "/system/bin/sh -- u:r:x_t:s0\n", 29 } };
	rb = fc_load_bufs(&b, dup, 2, FC_NO_DUPS, &err);
	CHECK(rb == EINVAL && !strcmp(err.file, "img:/dup") && err.line == 1,
	      "load_bufs: FC_NO_DUPS across buffers (%s:%u: %s)", err.file, err.line, err.msg);
	rb = fc_load_bufs(&b, dup, 2, 0, &err);
	CHECK(!rb, "load_bufs: without FC_NO_DUPS the duplicate loads");
	if (!rb)
		fc_free(b);
	struct fc_buf empty = { "img:/empty", "", 0 };
	rb = fc_load_bufs(&b, &empty, 1, 0, &err);
	CHECK(!rb && fc_count(b) == 0, "load_bufs: an empty buffer is an empty set");
	if (!rb)
		fc_free(b);
}

/* ---- long paths: no PATH_MAX limit ---- */

static void test_long_path(void)
{
	const char *fc = write_file("long_fc", "/.*\tu:r:a_t:s0\n/d(/.*)?/leaf\tu:r:leaf_t:s0\n");
	fc_set *set;
	struct fc_error err;
	size_t n = 3 * 4096 + 100;
	char *p = malloc(n + 16);

	if (fc_load(&set, &fc, 1, 0, &err)) {
		CHECK(0, "long: load");
		return;
	}
	size_t len = 0;
	memcpy(p, "/d", 2);
	for (len = 2; len < n; len += 2)
		memcpy(p + len, "/x", 2);
	strcpy(p + len, "/leaf");
	CHECK(!strcmp(ctx(set, p, S_IFREG), "u:r:leaf_t:s0"), "long: a %zu-byte path is looked up whole",
	      strlen(p));
	free(p);
	fc_free(set);
}

/*
 * A regex the loader leaves uncompiled until a lookup needs it must be one PCRE2 compiles:
 * otherwise its error would surface at a lookup, not at the load. Random regexes built from
 * the pieces PCRE2's syntax turns on, each checked against PCRE2 itself.
 */
static void test_lazy_compile(void)
{
	static const char *const piece[] = {
		"a", "b", "/", "-", ".", "*", "+", "?", "|", "(", ")", "[", "]", "^", "$", "{", "}",
		",", "0", "1", "2", "9", "\\", "\\d", "\\w", "\\.", "\\b", "\\x", "\\Q",
		":", "=", "(?", "[:alpha:]", "{2}", "{1,3}", "{3,1}", "{,2}", "{99999}", "*?", "++",
		"[a-z]", "[z-a]", "[^]", "[]a]", "[\\d-z]", "[a-\\d]", "[%--]", "(*", " ", "\\",
	};
	const size_t npiece = sizeof(piece) / sizeof(piece[0]);
	unsigned long seed = 12345, sure = 0, wrong = 0, n = 200000;
	char re[256], pat[260], first_wrong[256] = "";

	for (unsigned long k = 0; k < n; k++) {
		size_t len = 0;
		seed = seed * 6364136223846793005ul + 1442695040888963407ul;
		unsigned parts = 1 + (unsigned)(seed >> 60);
		re[0] = 0;
		for (unsigned j = 0; j < parts; j++) {
			seed = seed * 6364136223846793005ul + 1442695040888963407ul;
			const char *pc = piece[(seed >> 33) % npiece];
			size_t pl = strlen(pc);
			if (len + pl >= sizeof(re))
				break;
			memcpy(re + len, pc, pl + 1);
			len += pl;
		}
		if (!fc_regex_surely_compiles(re))
			continue;
		sure++;
		int ecode;
		PCRE2_SIZE eoff;
		snprintf(pat, sizeof(pat), "^%s$", re);
		pcre2_code *code = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED, PCRE2_DOTALL,
						 &ecode, &eoff, NULL);
		if (!code) {
			if (!wrong++)
				snprintf(first_wrong, sizeof(first_wrong), "%s", re);
		}
		pcre2_code_free(code);
	}
	CHECK(!wrong, "lazy compile: %lu of %lu random regexes left for later, %lu of them do not "
	      "compile%s%s", sure, n, wrong, wrong ? ", first: " : "", first_wrong);
	CHECK(sure > n / 20, "lazy compile: the random regexes include some the loader defers (%lu)",
	      sure);
	/* and the shapes real policies use are deferred */
	static const char *const common[] = {
		"/usr/lib/.*\\.so(\\.[^/]*)*", "/dev/tty[0-9]*", "/home/[^/]+/\\.ssh(/.*)?",
		"/var/run/(.*\\.)?pid", "/etc/ssh/ssh_host.*_key", "/dev/[shmxv]d[^/]*",
		"/proc/[0-9]{1,5}",
	};
	for (size_t i = 0; i < sizeof(common) / sizeof(common[0]); i++)
		CHECK(fc_regex_surely_compiles(common[i]), "lazy compile: '%s' is deferred", common[i]);
	static const char *const bad[] = { "a**", "(a", "a)", "[a", "[z-a]", "*a", "a{2,1}",
					   "(?<n>a)", "\\", "[[:alpha:]]", "a{2}{3}" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(!fc_regex_surely_compiles(bad[i]), "lazy compile: '%s' is compiled at load",
		      bad[i]);
}

static int first_spec(const struct fc_spec *spec, void *arg)
{
	*(const struct fc_spec **)arg = spec;
	return 1;
}

/*
 * Regexes a lookup matches without PCRE2 ("P(/.*)?", "P.*", "(/.*)?") and those it indexes
 * under several prefixes ("/(a|b/c)/x..."): the lookup's deciding spec must be the first that
 * fc_explain (PCRE2 on every spec, no index) finds, for keys at each edge: the bare prefix, a
 * final newline, a '/' after it, another byte after it, a newline inside.
 */
static void test_fast_forms(void)
{
	const char *fc = write_file("forms_fc",
				    "(/.*)?\tu:r:root_t:s0\n"
				    "/a/b(/.*)?\tu:r:sub_t:s0\n"
				    "/a/b\\.c(/.*)?\tu:r:esc_t:s0\n"
				    "/x.*\tu:r:any_t:s0\n"
				    "/x/y\\.*\tu:r:dots_t:s0\n"
				    "/(v|s/v)/bin(/.*)?\tu:r:alt_t:s0\n"
				    "/(v|s/v)/bin/sh\t--\tu:r:altf_t:s0\n"
				    "/(p|q|p/q)/lib\\.so.*\tu:r:altl_t:s0\n");
	static const char *const stems[] = { "", "/a/b", "/a/b.c", "/a/b\\.c", "/x", "/x/y",
					      "/x/y.", "/v/bin", "/s/v/bin", "/v/bin/sh", "/p/lib.so",
					      "/q/lib.so", "/p/q/lib.so", "/s/v" };
	static const char *const tails[] = { "", "\n", "/", "/z", "z", "\nz", "/\n", ".", ".." };
	fc_set *set;
	struct fc_error err;
	unsigned tried = 0, bad = 0;
	char path[64], first_bad[64] = "";

	if (fc_load(&set, &fc, 1, 0, &err)) {
		CHECK(0, "forms: load: %s", err.msg);
		return;
	}
	for (size_t i = 0; i < sizeof(stems) / sizeof(stems[0]); i++)
		for (size_t j = 0; j < sizeof(tails) / sizeof(tails[0]); j++)
			for (int m = 0; m < 2; m++) {
				snprintf(path, sizeof(path), "%s%s", stems[i], tails[j]);
				if (!path[0])
					continue;
				mode_t mode = m ? S_IFREG : S_IFDIR;
				const struct fc_spec *want = NULL;
				struct fc_result r;
				fc_explain(set, path, mode, first_spec, &want);
				fc_lookup(set, path, mode, &r);
				tried++;
				if (r.spec != want && !bad++)
					snprintf(first_bad, sizeof(first_bad), "%s", path);
			}
	CHECK(!bad, "forms: %u lookups decided by the spec fc_explain finds first (%u differ%s%s)",
	      tried, bad, bad ? ", first: " : "", first_bad);
	fc_free(set);
}

/* ---- fc_diff_reaches for a spec that reaches every directory (its regex begins ".*" or "/.*":
 * answered without a match) against PCRE2's partial match of the directory's key, as a spec is
 * compiled ("^" regex "$", PCRE2_DOTALL): the same answer ---- */

/* whether regex can match a path that starts with key (PCRE2 partial match, soft) */
static int oracle_reaches(const char *regex, const char *key)
{
	char pat[256];
	int ec, rc;
	PCRE2_SIZE eo;

	snprintf(pat, sizeof(pat), "^%s$", regex);
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED, PCRE2_DOTALL, &ec,
				       &eo, NULL);
	pcre2_match_data *md = re ? pcre2_match_data_create_from_pattern(re, NULL) : NULL;
	uint32_t opts = 0;
	if (!md || pcre2_pattern_info(re, PCRE2_INFO_ALLOPTIONS, &opts) || !(opts & PCRE2_ANCHORED))
		rc = 1;
	else
		rc = pcre2_match(re, (PCRE2_SPTR)key, PCRE2_ZERO_TERMINATED, 0, PCRE2_PARTIAL_SOFT,
				 md, NULL) != PCRE2_ERROR_NOMATCH;
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	return rc;
}

static void test_reach_any_dir(void)
{
	static const char *const regexes[] = {
		"/.*\\.nomatch", ".*x", "/.*?y", "/.*", ".*", "/.*+z", "/.*(a|b)/c", "/.*\\n",
		"/.*[^/]", "/.*/", "/.*\\.so(\\.[0-9]+)*",
		/* and some that do not reach every directory, asked of PCRE2 */
		"/u.*", "/a/.*x", "/\\..*", "/usr(/.*)?",
	};
	static const char *const dirs[] = {
		"/", "/usr", "/usr/lib", "/a\nb", "/a\nb/c", "/x\n", "/.nomatch", "/a b/c.d",
	};
	/* which of them reach below every directory without a look (fc_diff_reaches_all): those
	 * that begin with .*, but ".*+" (possessive: it takes the rest, and "z" never matches) */
	static const bool all[] = { 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0 };
	_Static_assert(sizeof(all) / sizeof(*all) == sizeof(regexes) / sizeof(*regexes),
		       "a want for each regex");
	char oldpath[4096];
	const char *old = oldpath;
	unsigned tried = 0, bad = 0, all_wrong = 0;
	char first_bad[256] = "", first_all[128] = "";

	/* (write_file's paths are reused after 8 calls) */
	snprintf(oldpath, sizeof(oldpath), "%s",
		 write_file("reach_old", "/a u:r:a_t:s0\n/b/c -- u:r:b_t:s0\n"));
	for (size_t i = 0; i < sizeof(regexes) / sizeof(*regexes); i++) {
		char text[256];
		snprintf(text, sizeof(text), "/a u:r:a_t:s0\n/b/c -- u:r:b_t:s0\n%s u:r:c_t:s0\n",
			 regexes[i]);
		const char *new = write_file("reach_new", text);
		fc_set *a = NULL, *b = NULL;
		struct fc_diff *d = NULL;
		struct fc_error err;
		if (fc_load(&a, &old, 1, 0, &err) || fc_load(&b, &new, 1, 0, &err) ||
		    fc_diff(a, b, &d, &err)) {
			CHECK(0, "reach: load and diff %s: %s", regexes[i], err.msg);
			fc_free(a);
			fc_free(b);
			continue;
		}
		if (fc_diff_reaches_all(d) != all[i] && !all_wrong++)
			snprintf(first_all, sizeof(first_all), "%s: %d", regexes[i], !all[i]);
		for (size_t k = 0; k < sizeof(dirs) / sizeof(*dirs); k++) {
			char key[64];
			snprintf(key, sizeof(key), "%s%s", dirs[k], strcmp(dirs[k], "/") ? "/" : "");
			int want = oracle_reaches(regexes[i], key), got = fc_diff_reaches(d, dirs[k]);
			tried++;
			if (!got != !want && !bad++) {
				char shown[64]; /* (a newline in a name shown as \n: one line) */
				size_t n = 0;
				for (const char *p = dirs[k]; *p && n + 3 < sizeof(shown); p++)
					if (*p == '\n')
						shown[n++] = '\\', shown[n++] = 'n';
					else
						shown[n++] = *p;
				shown[n] = 0;
				snprintf(first_bad, sizeof(first_bad), "%s below \"%s\": %d, PCRE2 %d",
					 regexes[i], shown, got, want);
			}
		}
		fc_diff_free(d);
		fc_free(a);
		fc_free(b);
	}
	CHECK(!all_wrong, "reach: fc_diff_reaches_all true for the 10 specs that begin with .* "
	      "(not .*+), false for the other 5 (%u differ%s%s)", all_wrong,
	      all_wrong ? ", first: " : "", first_all);
	CHECK(!bad, "reach: %u directories asked of %u added specs, PCRE2's answers (%u differ%s%s)",
	      tried, (unsigned)(sizeof(regexes) / sizeof(*regexes)), bad, bad ? ", first: " : "",
	      first_bad);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: fcunit DIR\n");
		return 2;
	}
	dir = argv[1];
	test_threads();
	test_dups();
	test_explain();
	test_all_or_nothing();
	test_bufs();
	test_long_path();
	test_lazy_compile();
	test_fast_forms();
	test_reach_any_dir();
	return failures ? 1 : 0;
}
