/*
 * A main() for the fuzz harnesses without libFuzzer: runs LLVMFuzzerTestOneInput once on each
 * file named (a directory: on each file in it, in name order). Used by tests/t_fuzz_regress.sh
 * with gcc and ASan/UBSan, to replay seeds and crash reproducers.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f) {
		perror(path);
		return 1;
	}
	do {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			uint8_t *nb = realloc(buf, cap);
			if (!nb) {
				perror("realloc");
				exit(2);
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	if (ferror(f)) {
		perror(path);
		fclose(f);
		free(buf);
		return 1;
	}
	fclose(f);
	fprintf(stderr, "run %s (%zu bytes)\n", path, len);
	/* a private copy of exactly len bytes, so ASan sees reads past the end */
	uint8_t *copy = malloc(len ? len : 1);
	if (!copy)
		exit(2);
	memcpy(copy, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(copy, len);
	free(copy);
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	int bad = 0;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			perror(argv[i]);
			bad = 1;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			bad |= run_file(argv[i]);
			continue;
		}
		DIR *d = opendir(argv[i]);
		struct dirent *e;
		char **names = NULL;
		size_t n = 0;
		if (!d) {
			perror(argv[i]);
			bad = 1;
			continue;
		}
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			names = realloc(names, (n + 1) * sizeof(*names));
			if (!names || !(names[n] = malloc(strlen(argv[i]) + strlen(e->d_name) + 2)))
				exit(2);
			sprintf(names[n++], "%s/%s", argv[i], e->d_name);
		}
		closedir(d);
		qsort(names, n, sizeof(*names), cmp);
		for (size_t k = 0; k < n; k++) {
			struct stat fs;
			if (stat(names[k], &fs) == 0 && S_ISREG(fs.st_mode))
				bad |= run_file(names[k]);
			free(names[k]);
		}
		free(names);
	}
	return bad;
}
