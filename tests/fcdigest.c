/*
 * tests/fcdigest: fcontexts' directory digests for the differential test t_digest.sh, in the
 * format of tests/oracle -d.
 *
 *   tests/fcdigest [-b] [-0] [-v] [-t] FC[,FC...]  < records
 *
 * Records and loading as in tests/oracle: "MODE PATH" (MODE octal, ignored), ending with "\n" or
 * NUL under -0; one file is read with FC.homedirs and FC.local (not under -b) and FC.subs and
 * FC.subs_dist; several comma-separated files as their concatenation. One line per record: the 40
 * hex digits of fc_digest(), "<<nodigest>>" for ENOENT, "<<error>>" otherwise (a relative path
 * included); exit status 1 if any record printed "<<error>>".
 *   -v  after each line, the specs hashed ("  FILE:LINE REGEX [TYPE] CONTEXT")
 *   -t  first, four threads compute every digest at once on the fresh set (racing to build its
 *       index); exit status 3 if any answer differs from the single-threaded one
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fcontexts.h"

#define NTHREADS 4
#define ANSWER_LEN (2 * FC_DIGEST_LEN + 1)

struct job {
	const fc_set *set;
	char **dirs;
	size_t n;
	char (*answers)[ANSWER_LEN];
	pthread_barrier_t *start;
};

static void usage(void)
{
	fprintf(stderr, "usage: fcdigest [-b] [-0] [-v] [-t] FC[,FC...] < records\n");
	exit(2);
}

static void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size);
	if (!p) {
		perror("fcdigest");
		exit(2);
	}
	return p;
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p) {
		perror("fcdigest");
		exit(2);
	}
	return p;
}

/* The record's line, without its newline: hex digits, "<<nodigest>>" or "<<error>>". */
static void answer(const fc_set *set, const char *dir, char out[ANSWER_LEN])
{
	unsigned char d[FC_DIGEST_LEN];
	int rc = fc_digest(set, dir, d);

	if (rc) {
		strcpy(out, rc == ENOENT ? "<<nodigest>>" : "<<error>>");
		return;
	}
	for (int i = 0; i < FC_DIGEST_LEN; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

static void *worker(void *arg)
{
	struct job *j = arg;

	pthread_barrier_wait(j->start);
	for (size_t i = 0; i < j->n; i++)
		answer(j->set, j->dirs[i], j->answers[i]);
	return NULL;
}

/* Digests of every record from NTHREADS threads at once; the number that differ from one
 * thread's answers. */
static size_t race(const fc_set *set, char **dirs, size_t n)
{
	struct job jobs[NTHREADS];
	pthread_t tid[NTHREADS];
	pthread_barrier_t start;
	char one[ANSWER_LEN];
	size_t bad = 0;

	pthread_barrier_init(&start, NULL, NTHREADS);
	for (int t = 0; t < NTHREADS; t++) {
		jobs[t] = (struct job){ set, dirs, n, NULL, &start };
		jobs[t].answers = xrealloc(NULL, (n + 1) * ANSWER_LEN);
		if (pthread_create(&tid[t], NULL, worker, &jobs[t])) {
			perror("fcdigest: pthread_create");
			exit(2);
		}
	}
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(tid[t], NULL);
	for (size_t i = 0; i < n; i++) {
		answer(set, dirs[i], one);
		for (int t = 0; t < NTHREADS; t++)
			if (strcmp(one, jobs[t].answers[i]) && bad++ < 5)
				fprintf(stderr, "fcdigest: thread %d: %s for %s, alone: %s\n",
					t, jobs[t].answers[i], dirs[i], one);
	}
	for (int t = 0; t < NTHREADS; t++)
		free(jobs[t].answers);
	pthread_barrier_destroy(&start);
	return bad;
}

static int show_spec(const struct fc_spec *s, void *arg)
{
	(void)arg;
	printf("  %s:%u %s %s%s%s\n", s->file, s->line, s->regex, s->type ? s->type : "",
	       s->type ? " " : "", s->context);
	return 0;
}

/* The comma-separated list as an array of names (modifies list). */
static size_t split_files(char *list, const char ***out)
{
	size_t n = 1;
	const char **v;

	for (const char *c = list; *c; c++)
		n += *c == ',';
	v = xrealloc(NULL, n * sizeof(*v));
	n = 0;
	for (char *f = strtok(list, ","); f; f = strtok(NULL, ","))
		v[n++] = f;
	*out = v;
	return n;
}

/* The PATH of every record on stdin. */
static size_t read_dirs(int delim, char ***out)
{
	char **dirs = NULL, *line = NULL;
	size_t n = 0, cap = 0;
	ssize_t len;

	while ((len = getdelim(&line, &cap, delim, stdin)) >= 0) {
		char *sp;

		if (len > 0 && line[len - 1] == delim)
			line[--len] = '\0';
		sp = strchr(line, ' ');
		if (!sp) {
			fprintf(stderr, "fcdigest: record without a space: %s\n", line);
			exit(2);
		}
		dirs = xrealloc(dirs, (n + 1) * sizeof(*dirs));
		dirs[n++] = xstrdup(sp + 1);
	}
	free(line);
	*out = dirs;
	return n;
}

int main(int argc, char **argv)
{
	int delim = '\n', verbose = 0, threads = 0, opt, bad = 0;
	unsigned flags = 0;
	const char **files;
	char **dirs, one[ANSWER_LEN];
	size_t nfiles, n;
	fc_set *set;
	struct fc_error err;

	while ((opt = getopt(argc, argv, "b0vt")) != -1) {
		switch (opt) {
		case 'b': flags |= FC_BASE_ONLY; break;
		case '0': delim = '\0'; break;
		case 'v': verbose = 1; break;
		case 't': threads = 1; break;
		default: usage();
		}
	}
	if (optind != argc - 1)
		usage();
	nfiles = split_files(argv[optind], &files);
	if (fc_load(&set, files, nfiles, flags, &err)) {
		fprintf(stderr, "fcdigest: %s:%u: %s\n", err.file, err.line, err.msg);
		return 2;
	}
	n = read_dirs(delim, &dirs);
	if (threads && race(set, dirs, n))
		bad = 3;
	for (size_t i = 0; i < n; i++) {
		answer(set, dirs[i], one);
		puts(one);
		bad |= !strcmp(one, "<<error>>");
		if (verbose && fc_digest_explain(set, dirs[i], show_spec, NULL))
			bad = 1;
		free(dirs[i]);
	}
	free(dirs);
	free(files);
	fc_free(set);
	if (fflush(stdout) != 0) {
		perror("fcdigest: stdout");
		return 2;
	}
	return bad;
}
