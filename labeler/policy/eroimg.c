/*
 * An EROFS image as fclabel is given one: a raw file or a block device, or an Android sparse
 * image (as AOSP ships system.img). The EROFS reader reads a whole image mapped, and a sparse
 * image's chunks are not laid out as the file system's blocks, so a sparse one is expanded into
 * memory first (imgfmt: DONT_CARE chunks stay holes), then read as any other. The EROFS reader
 * reads through no io_manager, so neither do these looks count as the run's I/O for
 * FCLABEL_FAULT (imgfmt_fault_hold): its Nth failure stays the ext4 path's Nth.
 */
#include <string.h>

#include "imgfmt.h"
#include "internal.h"

static bool is_sparse(const char *path)
{
	enum img_format f;
	char why[200];
	imgfmt_fault_hold(true);
	bool r = !imgfmt_detect(path, &f, why, sizeof(why)) && f == IMGFMT_SPARSE;
	imgfmt_fault_hold(false);
	return r;
}

int eroimg_probe(const char *path)
{
	unsigned char m[4];
	if (!is_sparse(path))
		return erofs_probe(path);
	/* (a sparse image that cannot be read is not called EROFS: its open as ext4 says why) */
	imgfmt_fault_hold(true);
	errcode_t rc = imgfmt_sparse_read(path, 1024, m, sizeof(m));
	imgfmt_fault_hold(false);
	return !rc && erofs_is_magic(m);
}

int eroimg_open(const char *path, struct erofs_img **img, bool *sparse, char *why, size_t n)
{
	int fd;
	bool sp = is_sparse(path);
	*img = NULL;
	if (sparse)
		*sparse = sp;
	if (!sp)
		return erofs_open(path, img, why, n);
	imgfmt_fault_hold(true);
	errcode_t rc = imgfmt_sparse_expand(path, &fd);
	imgfmt_fault_hold(false);
	if (rc) {
		const char *e = imgfmt_error();
		snprintf(why, n, "%s: cannot read the Android sparse image: %s", path,
			 e ? e : strerror((int)rc));
		return -1;
	}
	return erofs_open_fd(path, fd, img, why, n);
}
