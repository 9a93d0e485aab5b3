/* Which kind of image a path holds: by its file type and content, never by its name. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

const char *imgfmt_name(enum img_format fmt)
{
	switch (fmt) {
	case IMGFMT_RAW: return "raw";
	case IMGFMT_SPARSE: return "Android sparse";
	case IMGFMT_BLOCKDEV: return "block device";
	}
	return "?";
}

errcode_t imgfmt_detect(const char *path, enum img_format *fmt, char *why, size_t whylen)
{
	struct stat st;
	uint32_t magic = 0;
	int fd;

	if (stat(path, &st) < 0) {
		snprintf(why, whylen, "%s", strerror(errno));
		return errno;
	}
	if (S_ISBLK(st.st_mode)) {
		*fmt = IMGFMT_BLOCKDEV;
		return 0;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "not a regular file or block device");
		return EINVAL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, whylen, "%s", strerror(errno));
		return errno;
	}
	errno = 0;
	bool got = ic_pread_all(fd, &magic, 4, 0);
	int e = errno;
	close(fd);
	if (!got && e) {
		/* (a file shorter than the magic is no sparse image: it fails later as a raw one) */
		snprintf(why, whylen, "cannot read it: %s", strerror(e));
		return e;
	}
	*fmt = got && magic == SPARSE_MAGIC ? IMGFMT_SPARSE : IMGFMT_RAW;
	return 0;
}
