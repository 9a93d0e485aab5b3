/*
 * A file's bytes, whatever its data layout: uncompressed (inode.c: flat, inline, chunked) or
 * compressed (zdata.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "internal.h"

int erofs_read_file(struct erofs_img *img, const char *path, char **buf, size_t *len, size_t max,
		    char *why, size_t n)
{
	struct erofs_inode ino;
	char w[300];
	*buf = NULL;
	*len = 0;
	if (erofs_lookup(img, path, &ino, w, sizeof(w))) {
		snprintf(why, n, "%s", w);
		return -1;
	}
	if (!S_ISREG(ino.mode)) {
		snprintf(why, n, "not a regular file (mode 0%o)", ino.mode);
		return -1;
	}
	if (ino.size > max) {
		snprintf(why, n, "%llu bytes, more than the %zu it may have",
			 (unsigned long long)ino.size, max);
		return -1;
	}
	char *b = malloc((size_t)ino.size + 1);
	if (!b) {
		snprintf(why, n, "out of memory");
		return -1;
	}
	bool z = ino.layout == EROFS_COMPRESSED_FULL || ino.layout == EROFS_COMPRESSED_COMPACT;
	if (z ? erofs_zread(img, &ino, (unsigned char *)b, w, sizeof(w))
	      : erofs_pread(img, &ino, 0, b, (size_t)ino.size, w, sizeof(w))) {
		snprintf(why, n, "nid %llu: %s", (unsigned long long)ino.nid, w);
		free(b);
		return -1;
	}
	b[ino.size] = 0;
	*buf = b;
	*len = (size_t)ino.size;
	return 0;
}
