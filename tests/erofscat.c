/*
 * The EROFS reader (labeler/erofs/) on its own, for t_erofs: a file's bytes, or one of its
 * attributes, as fclabel reads them, to compare with the tree the image was built from.
 *
 *     erofscat IMAGE PATH            the regular file's bytes on stdout
 *     erofscat -x NAME IMAGE PATH    the attribute's value on stdout (exit 3 when absent)
 *
 * Exit 1 (with why on stderr) when it cannot be read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/internal.h"

int main(int argc, char **argv)
{
	const char *xname = NULL;
	char why[600];
	struct erofs_img *img;

	if (argc > 2 && !strcmp(argv[1], "-x")) {
		xname = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: erofscat [-x NAME] IMAGE PATH\n");
		return 2;
	}
	if (erofs_open(argv[1], &img, why, sizeof(why))) {
		fprintf(stderr, "erofscat: %s\n", why);
		return 1;
	}
	int rc = 0;
	if (xname) {
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
