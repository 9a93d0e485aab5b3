/* Opening an ext2/3/4 image with libext2fs, refusing what must not be written. */
#include <et/com_err.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include "label.h"

int img_open(struct image *img, const char *name, unsigned flags, const struct img_params *p,
	     const char *cmd)
{
	int mflags = 0;
	errcode_t rc;
	bool rw = flags & IMG_RW;
	char why[256] = "";
	io_manager io = unix_io_manager;

	memset(img, 0, sizeof(*img));
	img->name = name;
	if ((rc = imgfmt_detect(name, &img->fmt, why, sizeof(why)))) {
		fprintf(stderr, "fclabel %s: %s: %s\n", cmd, name, why);
		return -1;
	}
	if (p && p->output && img->fmt != IMGFMT_SPARSE) {
		fprintf(stderr, "fclabel %s: %s: -o is for sparse images; a %s image is written in "
			"place (copy it first)\n", cmd, name, imgfmt_name(img->fmt));
		return -1;
	}
	if (img->fmt == IMGFMT_SPARSE) {
		if (p && p->undo) {
			fprintf(stderr, "fclabel %s: %s: -z is for raw images and block devices; a sparse "
				"image is replaced whole, only when complete\n", cmd, name);
			return -1;
		}
		sparse_io_set_output(p ? p->output : NULL);
		sparse_io_set_sync(!(p && p->no_sync));
		io = sparse_io_manager;
	} else if (rw && p && p->undo) {
		/* like tune2fs -z: a fresh undo file that e2undo replays */
		if (unlink(p->undo) < 0 && errno != ENOENT) {
			fprintf(stderr, "fclabel %s: -z %s: %s\n", cmd, p->undo, strerror(errno));
			return -1;
		}
		set_undo_io_backing_manager(unix_io_manager);
		set_undo_io_backup_file((char *)p->undo);
		io = undo_io_manager;
	}
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
			  0, 0, io, &img->fs);
	if (rc) {
		const char *detail = img->fmt == IMGFMT_SPARSE ? sparse_io_error() : NULL;
		if (detail)
			fprintf(stderr, "fclabel %s: %s\n", cmd, detail);
		else
			fprintf(stderr, "fclabel %s: %s: cannot open as an ext2/3/4 file system (%s "
				"image): %s\n", cmd, name, imgfmt_name(img->fmt), error_message(rc));
		img->fs = NULL;
		return -1;
	}
	img->rw = rw;
	img->no_sync = p && p->no_sync;
	/* Without I/O statistics ext2fs_close leaves s_kbytes_written alone: every format gives the
	 * same bytes (a sparse image's result equals the raw one's), and the superblock keeps what
	 * it said but for the blocks the labels need. */
	static struct struct_io_manager quiet;
	quiet = *img->fs->io->manager;
	quiet.get_stats = NULL;
	img->fs->io->manager = &quiet;
	struct ext2_super_block *sb = img->fs->super;
	/* Reproducible results: the superblock's write time stays as it was (or becomes
	 * SOURCE_DATE_EPOCH), so the same input always gives the same bytes. */
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	img->fs->now = sde && *sde ? (time_t)strtoll(sde, NULL, 10) : (time_t)sb->s_wtime;
	const char *problem = NULL;
	if (sb->s_state & EXT2_ERROR_FS)
		problem = "its superblock says the file system has errors (run e2fsck first)";
	else if (ext2fs_has_feature_journal_needs_recovery(sb))
		problem = "its journal needs recovery (mount it once, or run e2fsck first)";
	else if (!(sb->s_state & EXT2_VALID_FS))
		problem = "its superblock says it was not cleanly unmounted (run e2fsck first)";
	if (problem) {
		if (!rw) {
			fprintf(stderr, "fclabel %s: warning: %s: %s\n", cmd, name, problem);
		} else if (!(flags & IMG_FORCE)) {
			fprintf(stderr, "fclabel %s: %s: %s; refusing to write (--force to write anyway)\n",
				cmd, name, problem);
			ext2fs_close_free(&img->fs);
			return -1;
		} else {
			fprintf(stderr, "fclabel %s: warning: %s: %s; writing anyway (--force)\n", cmd,
				name, problem);
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

void img_abandon(struct image *img)
{
	if (img->fs && img->fmt == IMGFMT_SPARSE)
		sparse_io_discard(img->fs->io);
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
	/* What was written reaches the disk before we say it is done: the inodes first, then
	 * (when blocks were allocated) ext2fs_close writes and syncs the bitmaps and superblock.
	 * A sparse image syncs its new file before the rename instead. */
	rc = 0;
	if (img->rw && !img->no_sync)
		rc = io_channel_flush(img->fs->io);
	if (!rc) {
		rc = ext2fs_close2(img->fs, img->no_sync ? EXT2_FLAG_FLUSH_NO_SYNC : 0);
		if (!rc)
			img->fs = NULL;
	}
	if (rc && img->fs)
		ext2fs_free(img->fs);
	img->fs = NULL;
	if (rc) {
		fprintf(stderr, "fclabel %s: %s: closing (flushing) failed: %s\n", cmd, img->name,
			error_message(rc));
		return -1;
	}
	return 0;
}
