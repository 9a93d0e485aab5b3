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
/* Reading what a sparse image holds, for a reader that is not libext2fs's (EROFS): the bytes
 * [off, off + len) of it into buf (zeros past its end), or all of it expanded into a new memory
 * file (memfd; DONT_CARE chunks and zero fills left as holes) whose descriptor is *fd. 0, or an
 * errcode_t (imgfmt_error says why). */
errcode_t imgfmt_sparse_read(const char *path, uint64_t off, void *buf, size_t len);
errcode_t imgfmt_sparse_expand(const char *path, int *fd);
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
/* While held, this library's own file I/O (imgfmt_detect, the sparse and copy readers) is
 * neither counted nor failed by FCLABEL_FAULT: a look at an image that is not the run's own
 * reading of it, so that the Nth I/O stays the run's Nth. Held for the calling thread only. */
void imgfmt_fault_hold(bool hold);
/* While on, reads on the calling thread through a tracked channel read ahead of what the caller
 * needs: one the system fails is not recorded as the run's I/O error (the caller then reads what
 * it needs alone, and that read's error is); one FCLABEL_FAULT fails is, as any. */
void imgfmt_read_ahead(bool on);
/* What the fault injector says (the I/O it fails, a setting it ignores), one message at a time
 * without a newline; NULL (the default): nothing is said. */
typedef void (*imgfmt_log_fn)(void *arg, const char *msg);
void imgfmt_set_log(imgfmt_log_fn fn, void *arg);
/* FCLABEL_FAULT=count: "I/O counts: read=N write=N ..." into buf, true; else false. */
bool imgfmt_io_counts(char *buf, size_t n);
/* The channel below the tracked one (ch itself when it is not tracked). */
io_channel imgfmt_inner_channel(io_channel ch);
/* The run's first I/O error ("IMAGE: write of block N failed: ..."), or NULL when none. */
const char *imgfmt_io_error(void);
/* Whether this run wrote (or tried to write) to an image channel. */
bool imgfmt_written(void);
/* fn(arg, why, n) runs once, just before the first write to the image through the tracked
 * manager (the first write of a run that writes at all): an error it returns fails that write
 * and every later one, with why as the run's I/O error. NULL: none. Set after the open. */
void imgfmt_set_before_write(errcode_t (*fn)(void *arg, char *why, size_t n), void *arg);

/*
 * Writes in place, made durable as a crash needs them (overlay.c): a raw image or block device
 * written in place is opened through this manager, around the tracked one (set before
 * ext2fs_open2, like the tracked manager's inner one). It passes everything through until
 * imgfmt_overlay_begin; then writes are held in memory and imgfmt_overlay_commit makes what is
 * held durable together: as one transaction of the image's jbd2 journal, or where there is none
 * in order (everything but the inode tables, then the inode tables). imgfmt_overlay_end makes
 * the last commit and takes the superblock's marker off (needs_recovery; VALID_FS cleared).
 */
extern io_manager imgfmt_overlay_manager;
void imgfmt_set_overlay_inner(io_manager inner);
/* A manager whose open hands out ch (a reference the caller holds): the file system read anew
 * over a channel that stays open, and with it what the channel holds (a copy being made). */
extern io_manager imgfmt_reuse_manager;
void imgfmt_set_reuse(io_channel ch);
/* The channel below the overlay (ch itself when it is not one). */
io_channel imgfmt_overlay_lower(io_channel ch);
/* Reads as io_channel_read_blk64 does; through an active overlay it also keeps (until the next
 * such read) what the disk has there, so that a write to part of one of those blocks soon after
 * merges into that instead of reading the block again: the walk reads a chunk of an inode
 * table, then writes the label of each inode in it, the first write to each block a read. */
errcode_t imgfmt_read_kept(io_channel ch, unsigned long long block, int count, void *data);
struct imgfmt_journal;
enum { IMGFMT_OV_JOURNAL = 1, IMGFMT_OV_ORDERED };
/* The order of the writes without a journal: contents (attribute blocks, quota files), then
 * allocation records (bitmaps, group descriptors, superblocks), then inode tables. */
enum { IMGFMT_ORDER_CONTENTS, IMGFMT_ORDER_RECORDS, IMGFMT_ORDER_INODES };
struct imgfmt_overlay_params {
	int mode;
	unsigned blocksize;              /* the file system's */
	bool sync;                       /* each step on disk (fsync) before the next */
	struct imgfmt_journal *journal;  /* IMGFMT_OV_JOURNAL: the log (kept; freed by the caller) */
	int (*order)(void *arg, uint64_t blk); /* ordered: which IMGFMT_ORDER_* blk is */
	void *order_arg;
	int64_t now;                     /* commit times */
	/* with sync: a descriptor of the file the channel writes (the image, opened in any mode;
	 * duplicated, the caller keeps its own), whose writes the overlay pushes to the disk as it
	 * makes them, so that each barrier waits for less; -1: none. writeback_base: where the
	 * channel's byte 0 lies in that file. */
	int writeback_fd;
	uint64_t writeback_base;
};
struct imgfmt_overlay_stats {
	unsigned long commits, transactions, blocks, barriers, home_writes;
};
errcode_t imgfmt_overlay_begin(io_channel ch, const struct imgfmt_overlay_params *p);
errcode_t imgfmt_overlay_commit(io_channel ch);
/* Another classifier for the ordered writes (NULL: every block is contents). */
void imgfmt_overlay_set_order(io_channel ch, int (*order)(void *arg, uint64_t blk), void *arg);
/* How many blocks are held, waiting for a commit. */
size_t imgfmt_overlay_held(io_channel ch);
bool imgfmt_overlay_active(io_channel ch);
/* After a failure: what is held is dropped, never written (the last commit stands). */
void imgfmt_overlay_discard(io_channel ch);
errcode_t imgfmt_overlay_end(io_channel ch, struct imgfmt_overlay_stats *st);
/* After a failure in the middle of making writes durable: nothing more is written, and the
 * superblock keeps its marker (the next mount, e2fsck or run replays, or repairs). */
void imgfmt_overlay_abort(io_channel ch);

/* Journal blocks [first, first + len) are the image's blocks [blk, blk + len). */
struct imgfmt_jrun {
	uint64_t blk;
	uint32_t first, len;
};

/*
 * The jbd2 journal (journal.c). runs: where its blocks are in the image, nruns runs in order,
 * each starting where the one before ends (a journal made by mke2fs is one run: a map of each
 * block was 16384 entries for a 64 MiB journal, a relabel's hundred page faults). Opening
 * reads and checks its superblock: 0, or why not in why (EXT2_ET_UNSUPP_FEATURE: features not
 * written here, such as fast commits).
 */
errcode_t imgfmt_journal_open(io_channel ch, unsigned blocksize, const struct imgfmt_jrun *runs,
			      size_t nruns, struct imgfmt_journal **j, char *why, size_t n);
void imgfmt_journal_free(struct imgfmt_journal *j);
/* Whether its log is empty (s_start 0): nothing to replay. */
bool imgfmt_journal_empty(const struct imgfmt_journal *j);
/* The error the kernel recorded in it (s_errno), 0 when none. */
int32_t imgfmt_journal_errno(const struct imgfmt_journal *j);
/* The most blocks one transaction can log. */
uint32_t imgfmt_journal_capacity(const struct imgfmt_journal *j);
/* One transaction: the n blocks blks[] (data(arg, i) their contents), logged and committed,
 * each step on disk before the next when sync. Not written to their places. The log's blocks
 * are gathered in run (runlen bytes, at least a block), one write a run: the caller's, so that
 * its writes to the blocks' places gather in the same pages (a fresh buffer's pages each cost
 * a fault: about 120 of a relabel that commits 124 blocks). */
errcode_t imgfmt_journal_commit(struct imgfmt_journal *j, const uint64_t *blks, size_t n,
				const char *(*data)(void *arg, size_t i), void *arg, int64_t now,
				bool sync, char *run, size_t runlen);
/* Marks the log empty. */
errcode_t imgfmt_journal_reset(struct imgfmt_journal *j, bool sync);
/* Replays the log as a mount does: put(arg, blk, data) for each block of each committed
 * transaction, in log order. 0, or why not in why (the log is not touched: see
 * imgfmt_journal_reset). */
typedef errcode_t (*imgfmt_replay_put)(void *arg, uint64_t blk, const char *data);
struct imgfmt_replay {
	unsigned long transactions, blocks, revoked;
};
errcode_t imgfmt_journal_replay(struct imgfmt_journal *j, imgfmt_replay_put put, void *arg,
				struct imgfmt_replay *st, char *why, size_t n);

/*
 * Disk images (table.c, part.c). The partition table of a GPT or MBR disk image, raw or Android
 * sparse, read with libblkid: t->n is 0 when there is none (or the image holds a file system
 * from byte 0, which is read as before). On error, why says what.
 */
struct imgfmt_part {
	int number;          /* as the table numbers it, from 1 */
	char name[80];       /* the GPT partition name, "" when none */
	char type[40];       /* the GPT type GUID in lower case, or the MBR type ("0x83") */
	uint64_t start, size; /* bytes */
	bool inside;         /* whether it lies inside the disk */
	bool ext;            /* whether an ext2/3/4 superblock is there */
	bool erofs;          /* ... or an EROFS one (read by labeler/erofs/, not through io) */
	uint64_t fs_bytes;   /* ... and the size its file system says it has */
};
struct imgfmt_table {
	char kind[8];        /* "gpt", "dos" */
	bool bad_gpt;        /* (no table read) a protective MBR names a GPT libblkid cannot read */
	uint64_t disk_size;  /* bytes */
	size_t n;
	struct imgfmt_part *p;
};
errcode_t imgfmt_partitions(const char *path, enum img_format fmt, struct imgfmt_table *t,
			    char *why, size_t n);
void imgfmt_table_free(struct imgfmt_table *t);
/* One partition (size bytes from offset) of the disk image at path image, read and written as a
 * whole image through the format's manager inner (set before ext2fs_open2, like the tracked
 * manager's inner one): no byte outside it is read or written. Any other file opened through it
 * (an undo file) is opened by inner, whole. */
extern io_manager imgfmt_part_manager;
void imgfmt_set_part(io_manager inner, const char *image, uint64_t offset, uint64_t size);
/* The channel below a partition's (ch itself when it is not one). */
io_channel imgfmt_part_lower(io_channel ch);

/* Why the last open failed, when it was the image format's fault (chunk and offset). */
const char *imgfmt_error(void);

/* crc32c (Castagnoli) as ext4 and jbd2 use it, as ext2fs_crc32c_le computes it (seeded with crc,
 * not inverted), with the CPU's instruction where it has one (crc32c.c). */
uint32_t imgfmt_crc32c(uint32_t crc, const void *p, size_t len);

#endif
