/*
 * imgfmt: every kind of image behind libext2fs's io_manager, so that the labeler never learns
 * which one it is writing. Library rules: errcode_t returns, nothing printed.
 */
#ifndef IMGFMT_H
#define IMGFMT_H

#include <ext2fs/ext2fs.h>
#include <stdbool.h>
#include <stddef.h>

enum img_format {
	IMGFMT_RAW,      /* a plain file holding the file system */
	IMGFMT_SPARSE,   /* Android sparse image, v1.0 */
	IMGFMT_BLOCKDEV, /* a block device */
};

/* Detects the format by content (and file type), not by name. On error, why says what. */
errcode_t imgfmt_detect(const char *path, enum img_format *fmt, char *why, size_t whylen);
const char *imgfmt_name(enum img_format fmt);

/*
 * The Android sparse image io_manager. Reads never expand the image: blocks come from RAW
 * chunks, FILL patterns or DONT_CARE zeros. The input is copied beside the output in the
 * background; writes go into the copy once it has passed them, else to a temporary overlay
 * file; on close, after a successful run, the copy is patched (or rewritten from the first
 * change of layout) and renamed over the output, so an interrupted run leaves the original
 * whole. CRC32 chunks are verified at open and written when the input had them. (Named apart
 * from libext2fs's own sparse_io_manager, a libsparse wrapper.)
 */
extern io_manager imgfmt_sparse_manager;
/*
 * A raw image written the same way: the input is copied beside the output (holes kept) while the
 * labeler works, changed blocks are written into the copy, and the copy is synced and renamed
 * over the output. An interrupted run leaves the original whole; costs free space for the copy.
 * The settings below apply to it too.
 */
extern io_manager imgfmt_replace_manager;
/* The image it replaces: any other file opened through it (an undo file) is a plain file. */
void imgfmt_set_image(const char *path);
/* Where the result goes (NULL: over the input). Set before ext2fs_open2, like undo_io's. */
void imgfmt_set_output(const char *path);
/* Whether the result is synced to disk before it replaces the original (default: yes). */
void imgfmt_set_sync(bool sync);
/* After a failed run: close without writing anything. */
void imgfmt_discard(io_channel channel);
/*
 * Every image is opened through this manager, around the one that reads its format (set just
 * before ext2fs_open2, like undo_io's backing manager): it records the run's first I/O error
 * and, for the test suite, fails the Nth I/O of a kind (FCLABEL_FAULT=KIND:N; see tracked.c).
 */
extern io_manager imgfmt_tracked_manager;
void imgfmt_set_tracked_inner(io_manager inner);
/* The channel below the tracked one (ch itself when it is not tracked). */
io_channel imgfmt_inner_channel(io_channel ch);
/* The run's first I/O error ("IMAGE: write of block N failed: ..."), or NULL when none. */
const char *imgfmt_io_error(void);
/* Whether FCLABEL_FAULT failed an operation in this run. */
bool imgfmt_fault_fired(void);
/* Whether this run wrote (or tried to write) to an image channel. */
bool imgfmt_written(void);
/* fn(arg, why, n) runs once, just before the first write to the image through the tracked
 * manager (the first write of a run that writes at all): an error it returns fails that write
 * and every later one, with why as the run's I/O error. NULL: none. Set after the open. */
void imgfmt_set_before_write(errcode_t (*fn)(void *arg, char *why, size_t n), void *arg);

/* Why the last open failed, when it was the image format's fault (chunk and offset). */
const char *imgfmt_error(void);

#endif
