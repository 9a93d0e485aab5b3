/*
 * Lookup benchmark: the same queries through fcontexts or through libselinux's selabel_lookup_raw
 * (whichever libselinux.so.1 the loader finds: LD_LIBRARY_PATH selects a newer one).
 * usage: fcbench fclabel|selinux|floor FC[,FC...] QUERIES [REPEAT]
 *   QUERIES: NUL-separated "MODE PATH" records (octal MODE).
 * Prints: engine, load ms, lookups, seconds, lookups/s, and a digest of the answers so that two
 * engines can be shown to agree; then the load's CPU time, every thread's (load_cpu_ms).
 * The floor engine is what no engine can beat in this program: its "load" reads the files' bytes
 * (32 KiB reads, as fcontexts reads them, into one reused buffer) and parses nothing; its
 * "lookup" is a call that answers the same context for every path, so that its rate is the cost
 * of the timed loop itself (the query walk and the answers' digest).
 */
#include <errno.h>
#include <fcntl.h>
#include <selinux/label.h>
#include <selinux/selinux.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fcontexts.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The CPU time of this thread: on a loaded machine, a steadier measure than the wall clock's
 * (time spent waiting for a core is not in it). */
static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The CPU time of the whole process, every thread's (a load may read on a thread of its own). */
static double proc_cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The answers' digest, in the timed loop for both engines alike: eight bytes a step, as a byte
 * at a time (a multiply per byte) cost fclabel a quarter of its lookup time. */
static uint64_t mix(uint64_t h, const char *s)
{
	size_t n = strlen(s);
	uint64_t w;

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w ^ ((uint64_t)n << 56)) * 0xff51afd7ed558ccdull;
	return h ^ (h >> 32);
}

/* The floor's load: every byte of the files read, nothing kept. */
static int read_only(const char *const *files, size_t nf)
{
	static char chunk[32 << 10];
	unsigned sum = 0;

	for (size_t i = 0; i < nf; i++) {
		int fd = open(files[i], O_RDONLY | O_CLOEXEC);
		ssize_t n;
		if (fd < 0) {
			perror(files[i]);
			return 1;
		}
		while ((n = read(fd, chunk, sizeof(chunk))) > 0)
			sum += (unsigned char)chunk[n - 1]; /* touched, as a reader would */
		close(fd);
	}
	return sum == 0x7fffffff; /* never: keeps the reads */
}

/* The floor's lookup: not inlined, so that the loop pays a call as it does for the engines. */
__attribute__((noinline)) static const char *trivial_lookup(const char *path, mode_t mode)
{
	__asm__ volatile("" : : "r"(path), "r"(mode) : "memory");
	return "system_u:object_r:default_t:s0";
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: fcbench fclabel|selinux|floor FC[,FC...] QUERIES [REPEAT]\n");
		return 2;
	}
	int repeat = argc > 4 ? atoi(argv[4]) : 1;
	bool ours = !strcmp(argv[1], "fclabel"), floor = !strcmp(argv[1], "floor");

	/* queries */
	int fd = open(argv[3], O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(argv[3]);
		return 2;
	}
	char *buf = malloc(st.st_size + 1);
	if (read(fd, buf, st.st_size) != st.st_size) {
		perror("read");
		return 2;
	}
	buf[st.st_size] = 0;
	size_t nq = 0, cap = 1024;
	char **paths = malloc(cap * sizeof(char *));
	mode_t *modes = malloc(cap * sizeof(mode_t));
	for (char *p = buf; p < buf + st.st_size; p += strlen(p) + 1) {
		char *sp = strchr(p, ' ');
		if (!sp)
			continue;
		if (nq == cap) {
			cap *= 2;
			paths = realloc(paths, cap * sizeof(char *));
			modes = realloc(modes, cap * sizeof(mode_t));
		}
		modes[nq] = (mode_t)strtoul(p, NULL, 8);
		paths[nq++] = sp + 1;
	}

	/* files */
	char *list = strdup(argv[2]);
	const char *files[16];
	size_t nf = 0;
	for (char *t = strtok(list, ","); t && nf < 16; t = strtok(NULL, ","))
		files[nf++] = t;

	double t0 = now(), t1, p0 = proc_cpu_now();
	fc_set *set = NULL;
	struct selabel_handle *h = NULL;
	if (floor) {
		if (read_only(files, nf))
			return 1;
	} else if (ours) {
		struct fc_error err;
		if (fc_load(&set, files, nf, 0, &err)) {
			fprintf(stderr, "load: %s:%u: %s\n", err.file, err.line, err.msg);
			return 1;
		}
	} else {
		struct selinux_opt o[] = { { SELABEL_OPT_PATH, files[0] } };
		h = selabel_open(SELABEL_CTX_FILE, o, 1);
		if (!h) {
			perror("selabel_open");
			return 1;
		}
	}
	t1 = now();
	double load_ms = (t1 - t0) * 1000, load_cpu_ms = (proc_cpu_now() - p0) * 1000;

	uint64_t digest = 1469598103934665603ull;
	double c0 = cpu_now();
	t0 = now();
	for (int r = 0; r < repeat; r++)
		for (size_t i = 0; i < nq; i++) {
			const char *ans;
			char *ctx = NULL;
			if (floor) {
				ans = trivial_lookup(paths[i], modes[i]);
			} else if (ours) {
				struct fc_result res;
				if (fc_lookup(set, paths[i], modes[i], &res))
					ans = "<<error>>";
				else
					ans = res.status == FC_LABEL ? res.context : "<<none>>";
			} else {
				if (selabel_lookup_raw(h, &ctx, paths[i], modes[i]) == 0)
					ans = ctx;
				else
					ans = errno == ENOENT ? "<<none>>" : "<<error>>";
			}
			if (r == 0)
				digest = mix(digest, ans);
			freecon(ctx);
		}
	t1 = now();
	double cpu = cpu_now() - c0;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double secs = t1 - t0;
	printf("%s load_ms=%.1f lookups=%zu seconds=%.3f rate=%.0f digest=%016llx maxrss_kb=%ld "
	       "cpu_rate=%.0f load_cpu_ms=%.2f\n", argv[1], load_ms, nq * (size_t)repeat, secs,
	       nq * repeat / secs, (unsigned long long)digest, ru.ru_maxrss, nq * repeat / cpu,
	       load_cpu_ms);
	if (set)
		fc_free(set);
	if (h)
		selabel_close(h);
	return 0;
}
