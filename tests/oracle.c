/* tests/oracle: the reference answers for the differential tests, from libselinux itself.
 *
 *   tests/oracle [-b] [-0] [-d] FC[,FC...]  < records
 *
 * Each record on stdin is "MODE PATH": MODE an octal number, PATH everything after the first
 * space. Records end with "\n", or with NUL under -0 (then a path may contain "\n").
 * For each record one line goes to stdout: the raw context selabel_lookup_raw() gives, or
 * "<<none>>" when it fails with ENOENT (a <<none>> spec decided, or nothing matched), or
 * "<<error>>" for any other failure and for a path that is empty or does not start with '/'
 * (those are not passed to libselinux). Exit status 1 if any record printed "<<error>>".
 *
 * -d: digests instead of labels. PATH is a directory; MODE is read as above and then ignored
 * (restorecon hashes with mode 0), so that one query file serves both modes. The line is the 40
 * hex digits of selabel_hash_all_partial_matches(), the security.sehash value restorecon keeps,
 * or "<<nodigest>>" when it returns false (no spec, or a <<none>> one first, matches).
 *
 * One file: selabel_open(SELABEL_CTX_FILE) with SELABEL_OPT_PATH (so libselinux also reads
 * FC.homedirs and FC.local, and applies FC.subs and FC.subs_dist), plus SELABEL_OPT_BASEONLY
 * under -b. Never SELABEL_OPT_VALIDATE. Several comma-separated files: their concatenation
 * (a newline added after a file that lacks a final one) is written to a temporary file,
 * which is opened with SELABEL_OPT_BASEONLY.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <selinux/selinux.h>
#include <selinux/label.h>

static void die(const char *what)
{
	fprintf(stderr, "oracle: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void usage(void)
{
	fprintf(stderr, "usage: oracle [-b] [-0] [-d] FC[,FC...] < records\n");
	exit(2);
}

/* Concatenates the comma-separated files into a fresh temporary file; returns its name. */
static char *concat_files(const char *list)
{
	const char *tmpdir = getenv("TMPDIR");
	char *name, *files, *f, *save = NULL;
	int fd;
	FILE *out;

	if (!tmpdir || !*tmpdir)
		tmpdir = "/tmp";
	if (asprintf(&name, "%s/oracle-fc.XXXXXX", tmpdir) < 0)
		die("asprintf");
	fd = mkstemp(name);
	if (fd < 0)
		die(name);
	out = fdopen(fd, "w");
	if (!out)
		die("fdopen");
	files = strdup(list);
	if (!files)
		die("strdup");
	for (f = strtok_r(files, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
		FILE *in = fopen(f, "r");
		char buf[65536];
		size_t n, last = 0;
		int lastc = '\n';

		if (!in) {
			unlink(name);
			die(f);
		}
		while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
			if (fwrite(buf, 1, n, out) != n)
				die("write");
			last = n;
			lastc = (unsigned char)buf[n - 1];
		}
		if (ferror(in))
			die(f);
		fclose(in);
		if (last && lastc != '\n')
			putc('\n', out);
	}
	free(files);
	if (fclose(out) != 0)
		die(name);
	return name;
}

static void put_digest(struct selabel_handle *h, const char *dir)
{
	uint8_t d[20];

	if (!selabel_hash_all_partial_matches(h, dir, d)) {
		fputs("<<nodigest>>\n", stdout);
		return;
	}
	for (int i = 0; i < 20; i++)
		printf("%02x", d[i]);
	putc('\n', stdout);
}

/* The label line of one record; 1 when it is "<<error>>". */
static int put_label(struct selabel_handle *h, const char *path, int mode)
{
	char *ctx = NULL;
	int none;

	if (selabel_lookup_raw(h, &ctx, path, mode) == 0) {
		fputs(ctx, stdout);
		putc('\n', stdout);
		freecon(ctx);
		return 0;
	}
	none = errno == ENOENT;
	fputs(none ? "<<none>>\n" : "<<error>>\n", stdout);
	return !none;
}

int main(int argc, char **argv)
{
	int baseonly = 0, digests = 0, delim = '\n', opt, bad = 0;
	const char *spec;
	char *tmp = NULL, *line = NULL;
	size_t cap = 0;
	ssize_t len;
	struct selabel_handle *h;
	struct selinux_opt opts[2];
	static char outbuf[1 << 20];

	while ((opt = getopt(argc, argv, "b0d")) != -1) {
		switch (opt) {
		case 'b': baseonly = 1; break;
		case '0': delim = '\0'; break;
		case 'd': digests = 1; break;
		default: usage();
		}
	}
	if (optind != argc - 1)
		usage();
	spec = argv[optind];
	if (strchr(spec, ',')) {
		tmp = concat_files(spec);
		spec = tmp;
		baseonly = 1;
	}

	opts[0].type = SELABEL_OPT_PATH;
	opts[0].value = spec;
	opts[1].type = SELABEL_OPT_BASEONLY;
	opts[1].value = baseonly ? (const char *)1 : NULL;
	h = selabel_open(SELABEL_CTX_FILE, opts, 2);
	if (tmp) {
		unlink(tmp);
		free(tmp);
	}
	if (!h)
		die("selabel_open");

	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	while ((len = getdelim(&line, &cap, delim, stdin)) >= 0) {
		char *sp, *path, *end;
		unsigned long mode;

		if (len > 0 && line[len - 1] == delim)
			line[--len] = '\0';
		sp = strchr(line, ' ');
		if (!sp) {
			fprintf(stderr, "oracle: record without a space: %s\n", line);
			exit(2);
		}
		*sp = '\0';
		errno = 0;
		mode = strtoul(line, &end, 8);
		if (errno || end == line || *end) {
			fprintf(stderr, "oracle: bad mode: %s\n", line);
			exit(2);
		}
		path = sp + 1;
		if (path[0] != '/') {
			fputs("<<error>>\n", stdout);
			bad = 1;
			continue;
		}
		if (digests)
			put_digest(h, path);
		else if (put_label(h, path, (int)mode))
			bad = 1;
	}
	if (ferror(stdin))
		die("stdin");
	free(line);
	selabel_close(h);
	if (fflush(stdout) != 0)
		die("stdout");
	return bad;
}
