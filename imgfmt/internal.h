/*
 * Private to imgfmt/: the copy-and-rename writer (replace.c, the io_manager; result.c, its result
 * file; blocks.c, what both stand on) and the formats it serves. A format (the raw one in
 * replace.c, the Android sparse one in sparse.c) describes its input as a list of chunks; the
 * writer keeps the changed blocks, copies the input beside the output while the labeler works,
 * and at close either patches the copy (the layout is kept) or asks the format to write the rest
 * anew. Arrows go one way: sparse.c uses the writer, never the reverse; replace.c uses result.c,
 * both use blocks.c.
 */
#ifndef IMGFMT_INTERNAL_H
#define IMGFMT_INTERNAL_H

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "imgfmt.h"

#define SPARSE_MAGIC 0xed26ff3aU

/* Chunk types; a raw image is one CT_RAW chunk from offset 0. */
enum { CT_RAW = 0xCAC1, CT_FILL = 0xCAC2, CT_DONT_CARE = 0xCAC3, CT_CRC32 = 0xCAC4 };

struct chunk {
	uint64_t start, nblk; /* in blocks */
	uint64_t off;         /* RAW: file offset of the data */
	uint64_t hoff;        /* file offset of the chunk header (sparse) */
	uint32_t idx;         /* how many chunk headers come before it in the input (sparse) */
	uint32_t fill;
	uint16_t type;
};

struct imgcopy;
struct imgcopy_format {
	/* Reads the input's layout: blksz, total, fsize, end, the chunks (and fmt_data). */
	errcode_t (*parse)(struct imgcopy *s, const char *name);
	/* Finishes the result file fd: chunks [from, nc) written anew (the layout changes at
	 * `from`; fresh: everything after the file header is written anew), trailer and header;
	 * chg[0..nchg) are the changed blocks, sorted. *end is where the result ends. NULL: the
	 * layout never changes and there is no header (a raw image). */
	errcode_t (*rewrite)(struct imgcopy *s, size_t from, bool fresh, const uint64_t *chg,
			     size_t nchg, int fd, uint64_t *end);
	void (*free_data)(void *data);
};

#define DIRECT UINT32_MAX
#define WB_N 64

struct imgcopy {
	int fd, ofd;
	uint32_t blksz;
	uint64_t total;       /* blocks */
	struct chunk *c;
	size_t nc;
	const struct imgcopy_format *fmt;
	void *fmt_data;
	bool whole;    /* the result is always rewritten whole (a sparse image with CRC32 chunks) */
	bool rw, dirty, discard;
	bool raw;      /* a raw image: one RAW chunk from offset 0, no headers */
	/* overlay: block -> slot in ofd (or DIRECT: already in the result file at its own offset),
	 * open addressing, key block + 1 */
	uint64_t *key;
	uint32_t *slot;
	size_t mask, used, nslots;
	char *blk;     /* one block of scratch */
	/* write-back cache in front of the overlay: consecutive inode writes to one block of an
	 * inode table become one write */
	uint64_t wb_blk[WB_N];
	bool wb_dirty[WB_N];
	char *wb;      /* WB_N blocks */
	char *out;     /* output path */
	/* the result being built: a copy of the input, made by a thread from the first write on */
	int tfd;
	char *tname;   /* its name when O_TMPFILE was not available */
	uint64_t fsize, end; /* input size; where its last chunk ends */
	pthread_t copier;
	_Atomic uint64_t copied_to; /* the copy is final below this input offset */
	bool copy_tried, copying, copied;
	bool out_differs; /* -o: the input stays */
	dev_t in_dev;     /* the input as opened: the result goes over it only while the output */
	ino_t in_ino;     /* path still names it */
	errcode_t copy_rc;
};

/* tracked.c: the I/O kinds FCLABEL_FAULT counts and fails (EIO from the Nth of a kind); a
 * non-zero return is the error to report instead of doing the operation. */
enum imgfmt_io { IMGIO_READ, IMGIO_WRITE, IMGIO_FLUSH, IMGIO_FREAD, IMGIO_FWRITE, IMGIO_SYNC,
		 IMGIO_RENAME, IMGIO_N };
int imgfmt_fault(enum imgfmt_io kind);
/* The first I/O error of the run, when it is not a channel operation's (which tracked.c sees). */
void imgfmt_io_error_set(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* blocks.c: what the writer and the formats stand on */
errcode_t ic_fail(errcode_t rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The message ic_fail left, cleared (imgfmt_error: whether there is one). */
void ic_clear_error(void);
bool ic_pread_all(int fd, void *buf, size_t n, uint64_t off);
bool ic_pwrite_all(int fd, const void *buf, size_t n, uint64_t off);
/* A failed read of a file of ours: what the system said, or EXT2_ET_SHORT_READ. */
errcode_t ic_read_error(void);
void ic_fill_block(char *b, uint32_t blksz, uint32_t fill);
struct chunk *ic_find_chunk(struct imgcopy *s, uint64_t blk);
/* Block blk's slot in the overlay file (DIRECT: in the result file at its own offset), or -1. */
int64_t ic_ov_find(struct imgcopy *s, uint64_t blk);
/* Where block blk lies in the input (and, while the layout is kept, in the result), when it is
 * in a RAW chunk. */
bool ic_raw_offset(struct imgcopy *s, uint64_t blk, uint64_t *off);
/* Entry e of the write-back cache written out (to the result file once the copy has passed
 * it, else to the overlay file). */
errcode_t ic_wb_flush_one(struct imgcopy *s, unsigned e);
/* Whether block blk waits in the write-back cache. */
bool ic_in_wb(const struct imgcopy *s, uint64_t blk);
/* Changed by this run (in the overlay or waiting in the write-back cache). */
bool ic_changed(struct imgcopy *s, uint64_t blk);
/* One block, as the image has it now. */
errcode_t ic_get_block(struct imgcopy *s, uint64_t blk, char *dst);
/* result.c: the result file */
/* Copies bytes [pos, n) of in to the same offsets of out, inside the kernel where it can;
 * *done (when given) follows what is copied. */
errcode_t ic_copy_range(int in, int out, uint64_t pos, uint64_t n, _Atomic uint64_t *done);
#define IC_COPY_BUF (1u << 20)
/* The first index i with a[i] >= v in the sorted a[0..n). */
size_t ic_at_or_after(const uint64_t *a, size_t n, uint64_t v);
/* On the first write: the input copied into the result file, in the background. */
void ic_start_copy(struct imgcopy *s);
/* That copy waited for (s->copied: whether it is whole). */
void ic_join_copy(struct imgcopy *s);
/* At close: the result built, synced and put over the output; 0, or an errcode_t (ic_fail's
 * message says why). */
errcode_t ic_write_result(struct imgcopy *s);
/* replace.c: the io_manager */
/* A channel over name, laid out by fmt, for the given manager. */
errcode_t ic_open(const char *name, int flags, io_channel *channel,
		  const struct imgcopy_format *fmt, io_manager manager);
/* The operations both managers share (everything but open). */
errcode_t ic_close(io_channel ch);
errcode_t ic_set_blksize(io_channel ch, int blksize);
errcode_t ic_read(io_channel ch, unsigned long block, int count, void *data);
errcode_t ic_write(io_channel ch, unsigned long block, int count, const void *data);
errcode_t ic_read64(io_channel ch, unsigned long long block, int count, void *data);
errcode_t ic_write64(io_channel ch, unsigned long long block, int count, const void *data);
errcode_t ic_write_byte(io_channel ch, unsigned long offset, int count, const void *data);
errcode_t ic_flush(io_channel ch);
errcode_t ic_set_option(io_channel ch, const char *option, const char *arg);

#define IC_SHARED_OPS                                                                            \
	.magic = EXT2_ET_MAGIC_IO_MANAGER, .close = ic_close, .set_blksize = ic_set_blksize,     \
	.read_blk = ic_read, .write_blk = ic_write, .flush = ic_flush,                           \
	.write_byte = ic_write_byte, .set_option = ic_set_option, .read_blk64 = ic_read64,       \
	.write_blk64 = ic_write64

/* pages.c: the pages of the buffer the overlay holds its blocks in, made ahead of the writes
 * (on another thread once it is large). Zeroed to begin; data and ready: only hints. */
struct imgfmt_pages {
	pthread_t th;
	sem_t go;               /* posted when want grows, and to stop */
	_Atomic(char *) data;   /* the buffer and its bytes, as the last grow left them */
	_Atomic size_t end;
	_Atomic size_t want;    /* the bytes the thread is to have made */
	_Atomic size_t ready;   /* the bytes made */
	atomic_bool stop;
	bool started;
};
/* After the buffer (re)allocated as data, bytes long. */
void pages_grown(struct imgfmt_pages *p, char *data, size_t bytes);
/* used bytes of data (of bytes) are about to be written: made now if they are not yet. */
void pages_use(struct imgfmt_pages *p, char *data, size_t used, size_t bytes);
/* The thread ended (before the buffer is freed). */
void pages_stop(struct imgfmt_pages *p);

/* tracked.c: how many writes (and discards, zeroings) any tracked channel was asked for: what
 * was read through one is still what it holds while this has not moved. */
unsigned long imgfmt_writes_below(void);

/* overlay.c: the file below a channel written in place, whose writes are pushed to the disk
 * as they are made (sync_file_range, which starts the write-back and does not wait for it), so
 * that the barrier after a step waits for little: a label's commit writes 50 MB twice, and
 * each flush waited 25-50 ms for what it had left to the end. A hint: what is written, in what
 * order, and where the barriers fall are the same without it. fd -1: none; base: where the
 * channel's byte 0 lies in the file (a partition's offset). */
struct imgfmt_writeback {
	int fd;
	uint64_t base;
};
void imgfmt_writeback_start(const struct imgfmt_writeback *w, uint64_t off, uint64_t len);
/* journal.c: the log's writes pushed so too (NULL: not). */
void imgfmt_journal_set_writeback(struct imgfmt_journal *j, const struct imgfmt_writeback *w);

/* crc32c.c: imgfmt_crc32c's implementations, for tests/crcunit.c: the CPU's instruction
 * (NULL where it has none) and the table in software. */
typedef uint32_t (*crc32c_fn)(uint32_t crc, const unsigned char *p, size_t n);
crc32c_fn crc32c_insn_fn(void);
crc32c_fn crc32c_soft_fn(void);

#endif
