/*
 * The benchmarks' timer: runs a command and writes its wall, user and system time in seconds,
 * to the microsecond, to a file (/usr/bin/time gives hundredths, too coarse for a relabel that
 * takes a few of them). The command's output and exit status pass through.
 *
 *   timeit FILE CMD [ARG...]      FILE gets "WALL USER SYSTEM"
 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double secs(const struct timeval *t)
{
	return (double)t->tv_sec + t->tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	struct rusage ru;
	int status;

	if (argc < 3) {
		fprintf(stderr, "usage: timeit FILE CMD [ARG...]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t pid = fork();
	if (pid < 0) {
		perror("timeit: fork");
		return 2;
	}
	if (!pid) {
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("timeit: wait4");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	FILE *f = fopen(argv[1], "w");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	fprintf(f, "%.6f %.6f %.6f\n",
		(double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
		secs(&ru.ru_utime), secs(&ru.ru_stime));
	if (fclose(f)) {
		perror(argv[1]);
		return 2;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
