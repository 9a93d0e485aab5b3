/*
 * The EROFS reader (labeler/erofs/) on its own, for t_erofs: a file's bytes, or one of its
 * attributes, as fclabel reads them, to compare with the tree the image was built from.
 *
 *     erofscat IMAGE PATH            the regular file's bytes on stdout
 *     erofscat -x NAME IMAGE PATH    the attribute's value on stdout (exit 3 when absent)
 *     erofscat -i IMAGE PATH         where its inode is: "nid OFFSET ISIZE XSIZE LAYOUT SIZE"
 *                                    (for a test to change what follows it)
 *     erofscat -d DIR IMAGE < PATHS  each path's bytes compared with DIR/PATH's: the paths
 *                                    that differ or cannot be read on stdout, exit 1 if any
 *
 * Exit 1 (with why on stderr) when it cannot be read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/internal.h"

/* DIR/path read whole into a malloc'd buffer, or NULL. */
static char *slurp(const char *dir, const char *path, size_t *len)
{
	char name[8192];
	snprintf(name, sizeof(name), "%s%s", dir, path);
	FILE *f = fopen(name, "rb");
	char *b = NULL;
	size_t cap = 0;
	*len = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (*len == cap && !(b = realloc(b, cap = cap * 2 + 65536)))
			break;
		size_t r = fread(b + *len, 1, cap - *len, f);
		if (!r)
			break;
		*len += r;
	}
	fclose(f);
	return b;
}

static int compare_all(struct erofs_img *img, const char *dir)
{
	char path[4096], why[600];
	int rc = 0;
	while (fgets(path, sizeof(path), stdin)) {
		path[strcspn(path, "\n")] = 0;
		char *a, *b;
		size_t la, lb;
		if (erofs_read_file(img, path, &a, &la, (size_t)1 << 30, why, sizeof(why))) {
			printf("%s: %s\n", path, why);
			rc = 1;
			continue;
		}
		b = slurp(dir, path, &lb);
		if (!b || la != lb || memcmp(a, b, la)) {
			printf("%s: differs (%zu bytes read, %zu in %s)\n", path, la, lb, dir);
			rc = 1;
		}
		free(a);
		free(b);
	}
	return rc;
}

int main(int argc, char **argv)
{
	const char *xname = NULL, *dir = NULL;
	bool where = false;
	char why[600];
	struct erofs_img *img;

	if (argc == 4 && !strcmp(argv[1], "-d")) {
		dir = argv[2];
		if (erofs_open(argv[3], &img, why, sizeof(why))) {
			fprintf(stderr, "erofscat: %s\n", why);
			return 1;
		}
		int rc = compare_all(img, dir);
		erofs_close(img);
		return rc;
	}
	if (argc > 1 && !strcmp(argv[1], "-i")) {
		where = true;
		argv++;
		argc--;
	} else if (argc > 2 && !strcmp(argv[1], "-x")) {
		xname = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: erofscat [-x NAME | -i] IMAGE PATH | -d DIR IMAGE < PATHS\n");
		return 2;
	}
	if (erofs_open(argv[1], &img, why, sizeof(why))) {
		fprintf(stderr, "erofscat: %s\n", why);
		return 1;
	}
	int rc = 0;
	if (where) {
		struct erofs_inode ino;
		if (erofs_lookup(img, argv[2], &ino, why, sizeof(why))) {
			fprintf(stderr, "erofscat: %s: %s\n", argv[2], why);
			rc = 1;
		} else {
			printf("%llu %llu %u %u %u %llu\n", (unsigned long long)ino.nid,
			       (unsigned long long)ino.off, ino.isize, ino.xsize, ino.layout,
			       (unsigned long long)ino.size);
		}
	} else if (xname) {
		struct erofs_inode ino;
		const unsigned char *v;
		size_t len;
		if (erofs_lookup(img, argv[2], &ino, why, sizeof(why)) ||
		    erofs_xattr_get(img, &ino, xname, &v, &len, why, sizeof(why))) {
			fprintf(stderr, "erofscat: %s: %s\n", argv[2], why);
			rc = 1;
		} else if (!v) {
			rc = 3;
		} else {
			fwrite(v, 1, len, stdout);
		}
	} else {
		char *buf;
		size_t len;
		if (erofs_read_file(img, argv[2], &buf, &len, (size_t)1 << 30, why, sizeof(why))) {
			fprintf(stderr, "erofscat: %s: %s\n", argv[2], why);
			rc = 1;
		} else {
			fwrite(buf, 1, len, stdout);
			free(buf);
		}
	}
	erofs_close(img);
	return rc;
}
