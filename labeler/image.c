/* Opening an ext2/3/4 image with libext2fs, refusing what must not be written. */
#include <et/com_err.h>
#include <stdio.h>
#include <string.h>

#include "label.h"

int img_open(struct image *img, const char *name, unsigned flags, const char *cmd)
{
	int mflags = 0;
	errcode_t rc;
	bool rw = flags & IMG_RW;

	memset(img, 0, sizeof(*img));
	img->name = name;
	rc = ext2fs_check_if_mounted(name, &mflags);
	if (rc) {
		fprintf(stderr, "fclabel %s: %s: cannot tell whether it is mounted: %s\n", cmd, name,
			error_message(rc));
		return -1;
	}
	if (rw && (mflags & EXT2_MF_MOUNTED)) {
		fprintf(stderr, "fclabel %s: %s is mounted%s; refusing to write to it (unmount it, or "
			"use 'fclabel check' to read it)\n", cmd, name,
			(mflags & EXT2_MF_READONLY) ? " read-only" : "");
		return -1;
	}
	if (rw && (mflags & EXT2_MF_BUSY)) {
		fprintf(stderr, "fclabel %s: %s is in use by the system; refusing to write to it\n",
			cmd, name);
		return -1;
	}
	rc = ext2fs_open2(name, NULL, EXT2_FLAG_64BITS | (rw ? EXT2_FLAG_RW | EXT2_FLAG_EXCLUSIVE : 0),
			  0, 0, unix_io_manager, &img->fs);
	if (rc) {
		fprintf(stderr, "fclabel %s: %s: cannot open as an ext2/3/4 file system: %s\n", cmd,
			name, error_message(rc));
		img->fs = NULL;
		return -1;
	}
	img->rw = rw;
	struct ext2_super_block *sb = img->fs->super;
	const char *why = NULL;
	if (sb->s_state & EXT2_ERROR_FS)
		why = "its superblock says the file system has errors (run e2fsck first)";
	else if (ext2fs_has_feature_journal_needs_recovery(sb))
		why = "its journal needs recovery (mount it once, or run e2fsck first)";
	else if (!(sb->s_state & EXT2_VALID_FS))
		why = "its superblock says it was not cleanly unmounted (run e2fsck first)";
	if (why) {
		if (!rw) {
			fprintf(stderr, "fclabel %s: warning: %s: %s\n", cmd, name, why);
		} else if (!(flags & IMG_FORCE)) {
			fprintf(stderr, "fclabel %s: %s: %s; refusing to write (--force to write anyway)\n",
				cmd, name, why);
			ext2fs_close_free(&img->fs);
			return -1;
		} else {
			fprintf(stderr, "fclabel %s: warning: %s: %s; writing anyway (--force)\n", cmd,
				name, why);
		}
	}
	if (rw) {
		rc = ext2fs_read_bitmaps(img->fs);
		if (rc) {
			fprintf(stderr, "fclabel %s: %s: cannot read the allocation bitmaps: %s\n", cmd,
				name, error_message(rc));
			ext2fs_close_free(&img->fs);
			return -1;
		}
	}
	return 0;
}

bool image_is_labeled(struct image *img)
{
	struct ext2_xattr_handle *h;
	void *val = NULL;
	size_t len = 0;
	bool labeled = false;

	if (ext2fs_xattrs_open(img->fs, EXT2_ROOT_INO, &h))
		return true; /* cannot tell: assume it is, and prune */
	if (ext2fs_xattrs_read(h))
		labeled = true; /* cannot tell */
	else
		labeled = !ext2fs_xattr_get(h, "security.selinux", &val, &len);
	free(val);
	ext2fs_xattrs_close(&h);
	return labeled;
}

int img_close(struct image *img, const char *cmd)
{
	errcode_t rc;

	if (!img->fs)
		return 0;
	rc = ext2fs_close_free(&img->fs);
	if (rc) {
		fprintf(stderr, "fclabel %s: %s: closing (flushing) failed: %s\n", cmd, img->name,
			error_message(rc));
		return -1;
	}
	return 0;
}
