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

#include "fcontexts.h"

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (cond) {                                                                        \
			printf("ok   ");                                                           \
		} else {                                                                           \
			printf("FAIL ");                                                           \
			failures++;                                                                \
		}                                                                                  \
		printf(__VA_ARGS__);                                                               \
		putchar('\n');                                                                     \
	} while (0)

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
	test_long_path();
	return failures ? 1 : 0;
}
