/*
 * Android sparse images (format 1.0) as an io_manager.
 *
 * File: a 28-byte header (magic 0xed26ff3a, version 1.0, header sizes, block size, total blocks,
 * total chunks, checksum), then chunks, each a 12-byte header (type, reserved, size in blocks,
 * total bytes) and its data: RAW (the blocks), FILL (a 4-byte pattern), DONT_CARE (nothing, read
 * as zeros), CRC32 (4 bytes: the CRC-32 of every block so far, DONT_CARE as zeros).
 *
 * We keep an index of the chunks, never the image. Written blocks go to an unlinked temporary
 * file beside the output, with an index in memory: memory and disk grow with the blocks that
 * change, not with the image.
 *
 * The result is built in a temporary file beside the output, synced, and renamed over it, so an
 * interrupted run leaves the original whole. To keep that close to the cost of writing in place,
 * the first write starts a thread that copies the input into the temporary file and syncs it
 * while the labeler works. A changed block of a RAW chunk that the copy has already passed is
 * written straight into the copy at its own offset; the others wait in the overlay, and at
 * close those that sit in RAW chunks are patched in, and only from the first change that alters
 * the chunk layout (a write into a FILL or DONT_CARE run) is the rest rewritten. Images with
 * CRC32 chunks are rewritten whole, since their checksum covers everything. The temporary file
 * is unnamed (O_TMPFILE) where the filesystem allows it, so a killed run leaves nothing behind.
 *
 * replace_io_manager runs a raw image through the same code as one RAW chunk from offset 0 with
 * no headers (holes copied as holes): a labeled copy renamed over the image.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "imgfmt.h"

#define SPARSE_MAGIC 0xed26ff3aU
#define CT_RAW 0xCAC1
#define CT_FILL 0xCAC2
#define CT_DONT_CARE 0xCAC3
#define CT_CRC32 0xCAC4
#define DIRECT UINT32_MAX

struct sparse_header {
	uint32_t magic;
	uint16_t major, minor, file_hdr_sz, chunk_hdr_sz;
	uint32_t blk_sz, total_blks, total_chunks, image_checksum;
};

struct chunk_header {
	uint16_t type, reserved;
	uint32_t chunk_sz, total_sz;
};

struct chunk {
	uint64_t start, nblk; /* in sparse blocks */
	uint64_t off;         /* RAW: file offset of the data */
	uint64_t hoff;        /* file offset of the chunk header */
	uint32_t idx;         /* how many chunk headers come before it in the input */
	uint32_t fill;
	uint16_t type;
};

struct sparse {
	int fd, ofd;
	uint32_t blksz;
	uint64_t total;
	struct sparse_header hdr;
	struct chunk *c;
	size_t nc;
	bool had_crc, rw, dirty, discard;
	bool raw;      /* a raw image: one RAW chunk from offset 0, no headers */
	/* overlay: block -> slot in ofd (or DIRECT: already in the result file at its own offset),
	 * open addressing, key block + 1 */
	uint64_t *key;
	uint32_t *slot;
	size_t mask, used, nslots;
	char *blk;     /* one block of scratch */
	/* write-back cache in front of the overlay: consecutive inode writes to one block of an
	 * inode table become one write */
	uint64_t wb_blk[64];
	bool wb_dirty[64];
	char *wb;      /* 64 blocks */
	char *out;     /* output path */
	/* the result being built: a copy of the input, made by a thread from the first write on */
	int tfd;
	char *tname;   /* its name when O_TMPFILE was not available */
	uint64_t fsize, end; /* input size; where its last chunk ends */
	pthread_t copier;
	_Atomic uint64_t copied_to; /* the copy is final below this input offset */
	bool copy_tried, copying, copied;
	bool out_differs; /* -o: the input stays */
	errcode_t copy_rc;
};

static char last_error[512];
static char *output_path;
static char *replace_image;
static struct sparse *last_rw; /* the open read-write image, for a discard through a wrapper */
static bool sync_result = true;

void sparse_io_set_sync(bool sync)
{
	sync_result = sync;
}

const char *sparse_io_error(void)
{
	return last_error[0] ? last_error : NULL;
}

void replace_io_set_image(const char *path)
{
	free(replace_image);
	replace_image = path ? strdup(path) : NULL;
}

void sparse_io_set_output(const char *path)
{
	free(output_path);
	output_path = path ? strdup(path) : NULL;
}

static errcode_t fail(errcode_t rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return rc;
}

/* Whole reads and writes: short transfers continue, EINTR is retried. */
static bool io_all(int fd, void *buf, size_t n, uint64_t off, bool write)
{
	char *p = buf;
	while (n) {
		ssize_t r = write ? pwrite(fd, p, n, (off_t)off) : pread(fd, p, n, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		p += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return true;
}

static bool pread_all(int fd, void *buf, size_t n, uint64_t off)
{
	return io_all(fd, buf, n, off, false);
}

static bool pwrite_all(int fd, const void *buf, size_t n, uint64_t off)
{
	return io_all(fd, (void *)buf, n, off, true);
}

/* CRC-32 of n copies of one block, in O(log n) combines. */
static uLong crc_repeat(uLong crc, const char *block, uint32_t blksz, uint64_t n)
{
	uLong one = crc32(0, (const Bytef *)block, blksz), acc = 0;
	uint64_t acclen = 0, pw = 1;
	uLong pwcrc = one;
	uint64_t pwlen = blksz;
	while (n) {
		if (n & 1) {
			acc = acclen ? crc32_combine64(acc, pwcrc, (z_off64_t)pwlen) : pwcrc;
			acclen += pwlen;
		}
		n >>= 1;
		if (n) {
			pwcrc = crc32_combine64(pwcrc, pwcrc, (z_off64_t)pwlen);
			pwlen *= 2;
			pw *= 2;
		}
	}
	return acclen ? crc32_combine64(crc, acc, (z_off64_t)acclen) : crc;
}

static void fill_block(char *b, uint32_t blksz, uint32_t fill)
{
	for (uint32_t i = 0; i < blksz; i += 4)
		memcpy(b + i, &fill, 4);
}

/* A raw image as one RAW chunk from offset 0 (no headers): the same copy, patch and rename. */
static errcode_t parse_raw(struct sparse *s)
{
	struct stat st;
	if (fstat(s->fd, &st) < 0)
		return errno;
	s->fsize = s->end = (uint64_t)st.st_size;
	/* the largest unit (up to 4 KiB) the size is a multiple of: a tail shorter than that is
	 * copied, never addressed (the file system ends before it) */
	s->blksz = 4096;
	while (s->blksz > 512 && s->fsize % s->blksz)
		s->blksz /= 2;
	s->total = s->fsize / s->blksz;
	s->hdr.blk_sz = s->blksz;
	s->hdr.total_chunks = 1;
	if (!s->total)
		return 0;
	if (!(s->c = calloc(1, sizeof(*s->c))))
		return ENOMEM;
	s->c[0] = (struct chunk){ .start = 0, .nblk = s->total, .type = CT_RAW };
	s->nc = 1;
	return 0;
}

/* Reads the header and the chunk index; verifies CRC32 chunks when there are any. */
static errcode_t parse(struct sparse *s, const char *name)
{
	struct stat st;
	struct sparse_header *h = &s->hdr;
	uint64_t pos, blk = 0, fsize;
	size_t cap = 0;

	if (fstat(s->fd, &st) < 0)
		return errno;
	fsize = (uint64_t)st.st_size;
	s->fsize = fsize;
	if (!pread_all(s->fd, h, sizeof(*h), 0))
		return fail(EXT2_ET_SHORT_READ, "%s: truncated sparse header", name);
	if (h->magic != SPARSE_MAGIC)
		return fail(EXT2_ET_MAGIC_IO_CHANNEL, "%s: not an Android sparse image", name);
	if (h->major != 1)
		return fail(EINVAL, "%s: sparse format version %u.%u; only 1.x is known", name,
			    h->major, h->minor);
	if (h->file_hdr_sz < 28 || h->chunk_hdr_sz < 12 || h->file_hdr_sz > 4096 ||
	    h->chunk_hdr_sz > 4096)
		return fail(EINVAL, "%s: sparse header sizes %u/%u are not valid", name,
			    h->file_hdr_sz, h->chunk_hdr_sz);
	if (h->blk_sz < 1024 || h->blk_sz % 4 || h->blk_sz > (1u << 20) ||
	    (h->blk_sz & (h->blk_sz - 1)))
		return fail(EINVAL, "%s: sparse block size %u is not valid", name, h->blk_sz);
	s->blksz = h->blk_sz;
	s->total = h->total_blks;
	pos = h->file_hdr_sz;
	for (uint32_t i = 0; i < h->total_chunks; i++) {
		struct chunk_header ch;
		if (pos + h->chunk_hdr_sz > fsize || !pread_all(s->fd, &ch, sizeof(ch), pos))
			return fail(EXT2_ET_SHORT_READ, "%s: chunk %u at offset %llu: truncated "
				    "(the file ends at %llu)", name, i, (unsigned long long)pos,
				    (unsigned long long)fsize);
		uint64_t data = pos + h->chunk_hdr_sz, want;
		switch (ch.type) {
		case CT_RAW: want = h->chunk_hdr_sz + (uint64_t)ch.chunk_sz * h->blk_sz; break;
		case CT_FILL: want = h->chunk_hdr_sz + 4u; break;
		case CT_DONT_CARE: want = h->chunk_hdr_sz; break;
		case CT_CRC32: want = h->chunk_hdr_sz + 4u; break;
		default:
			return fail(EINVAL, "%s: chunk %u at offset %llu: unknown chunk type 0x%04x",
				    name, i, (unsigned long long)pos, ch.type);
		}
		if (ch.total_sz != want)
			return fail(EINVAL, "%s: chunk %u at offset %llu: size %u bytes, %llu expected "
				    "for its type and %u blocks", name, i, (unsigned long long)pos,
				    ch.total_sz, (unsigned long long)want, ch.chunk_sz);
		if (pos + want > fsize)
			return fail(EXT2_ET_SHORT_READ, "%s: chunk %u at offset %llu: truncated (needs "
				    "%llu bytes, the file ends at %llu)", name, i,
				    (unsigned long long)pos, (unsigned long long)want,
				    (unsigned long long)fsize);
		if (ch.type == CT_CRC32) {
			s->had_crc = true;
			pos += want;
			continue;
		}
		if (blk + ch.chunk_sz > s->total)
			return fail(EINVAL, "%s: chunk %u at offset %llu: blocks %llu..%llu overrun the "
				    "declared %llu blocks", name, i, (unsigned long long)pos,
				    (unsigned long long)blk,
				    (unsigned long long)(blk + ch.chunk_sz - 1),
				    (unsigned long long)s->total);
		if (ch.chunk_sz) {
			if (s->nc == cap) {
				cap = cap ? cap * 2 : 64;
				struct chunk *n = realloc(s->c, cap * sizeof(*n));
				if (!n)
					return ENOMEM;
				s->c = n;
			}
			struct chunk *c = &s->c[s->nc++];
			c->start = blk;
			c->nblk = ch.chunk_sz;
			c->type = ch.type;
			c->off = data;
			c->hoff = pos;
			c->idx = i;
			c->fill = 0;
			if (ch.type == CT_FILL && !pread_all(s->fd, &c->fill, 4, data))
				return fail(EXT2_ET_SHORT_READ, "%s: chunk %u: cannot read", name, i);
		}
		blk += ch.chunk_sz;
		pos += want;
	}
	s->end = pos;
	if (blk != s->total)
		return fail(EINVAL, "%s: the chunks cover %llu blocks, the header declares %llu", name,
			    (unsigned long long)blk, (unsigned long long)s->total);
	if (!s->had_crc)
		return 0;
	/* verify every CRC32 chunk against the data before it */
	uLong crc = crc32(0, NULL, 0);
	size_t ci = 0;
	char *buf = malloc(1 << 20);
	if (!buf)
		return ENOMEM;
	pos = h->file_hdr_sz;
	errcode_t rc = 0;
	for (uint32_t i = 0; i < h->total_chunks && !rc; i++) {
		struct chunk_header ch;
		pread_all(s->fd, &ch, sizeof(ch), pos);
		if (ch.type == CT_CRC32) {
			uint32_t rec;
			pread_all(s->fd, &rec, 4, pos + h->chunk_hdr_sz);
			if (rec != (uint32_t)crc)
				rc = fail(EINVAL, "%s: CRC32 chunk %u at offset %llu: recorded 0x%08x, "
					  "the data gives 0x%08lx", name, i, (unsigned long long)pos,
					  rec, crc);
		} else if (ch.chunk_sz) {
			struct chunk *c = &s->c[ci++];
			if (c->type == CT_RAW) {
				uint64_t left = c->nblk * s->blksz, off = c->off;
				while (left && !rc) {
					size_t n = left < (1 << 20) ? (size_t)left : (1 << 20);
					if (!pread_all(s->fd, buf, n, off))
						rc = fail(EXT2_ET_SHORT_READ, "%s: chunk %u: read failed",
							  name, i);
					crc = crc32(crc, (const Bytef *)buf, (uInt)n);
					left -= n;
					off += n;
				}
			} else {
				fill_block(buf, s->blksz, c->type == CT_FILL ? c->fill : 0);
				crc = crc_repeat(crc, buf, s->blksz, c->nblk);
			}
		}
		pos += ch.total_sz;
	}
	free(buf);
	return rc;
}

static struct chunk *find_chunk(struct sparse *s, uint64_t blk)
{
	size_t lo = 0, hi = s->nc;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (blk < s->c[mid].start)
			hi = mid;
		else if (blk >= s->c[mid].start + s->c[mid].nblk)
			lo = mid + 1;
		else
			return &s->c[mid];
	}
	return NULL;
}

static long ov_find(struct sparse *s, uint64_t blk)
{
	if (!s->key)
		return -1;
	for (size_t b = (blk * 0x9e3779b97f4a7c15ull) >> 20 & s->mask;; b = (b + 1) & s->mask) {
		if (!s->key[b])
			return -1;
		if (s->key[b] == blk + 1)
			return s->slot[b];
	}
}

/* Records where block blk now is: a slot of the overlay file, or DIRECT. */
static errcode_t ov_set(struct sparse *s, uint64_t blk, uint32_t slot)
{
	for (size_t b = (blk * 0x9e3779b97f4a7c15ull) >> 20 & s->mask; s->key && s->key[b];
	     b = (b + 1) & s->mask)
		if (s->key[b] == blk + 1) {
			s->slot[b] = slot;
			return 0;
		}
	if ((s->used + 1) * 2 > s->mask + 1 || !s->key) {
		size_t nm = s->key ? s->mask * 2 + 1 : 1023;
		uint64_t *nk = calloc(nm + 1, sizeof(*nk));
		uint32_t *ns = calloc(nm + 1, sizeof(*ns));
		if (!nk || !ns) {
			free(nk);
			free(ns);
			return ENOMEM;
		}
		for (size_t i = 0; s->key && i <= s->mask; i++)
			if (s->key[i]) {
				size_t b = ((s->key[i] - 1) * 0x9e3779b97f4a7c15ull) >> 20 & nm;
				while (nk[b])
					b = (b + 1) & nm;
				nk[b] = s->key[i];
				ns[b] = s->slot[i];
			}
		free(s->key);
		free(s->slot);
		s->key = nk;
		s->slot = ns;
		s->mask = nm;
	}
	size_t b = (blk * 0x9e3779b97f4a7c15ull) >> 20 & s->mask;
	while (s->key[b])
		b = (b + 1) & s->mask;
	s->key[b] = blk + 1;
	s->slot[b] = slot;
	s->used++;
	return 0;
}

#define WB_N 64

/* Where block blk lies in the input (and, while the layout is kept, in the result), when it
 * is in a RAW chunk. */
static bool raw_offset(struct sparse *s, uint64_t blk, uint64_t *off)
{
	const struct chunk *c = find_chunk(s, blk);
	if (!c || c->type != CT_RAW)
		return false;
	*off = c->off + (blk - c->start) * s->blksz;
	return true;
}

static errcode_t wb_flush_one(struct sparse *s, unsigned e)
{
	if (!s->wb_dirty[e])
		return 0;
	uint64_t blk = s->wb_blk[e], off;
	const char *data = s->wb + (size_t)e * s->blksz;
	long slot = ov_find(s, blk);
	errcode_t rc;
	/* Once the copy has passed it, a block of a RAW chunk goes straight into the result at its
	 * own offset (the copier never writes there again): nothing to patch at close. */
	if (s->copying && !s->had_crc && raw_offset(s, blk, &off) &&
	    off + s->blksz <= atomic_load_explicit(&s->copied_to, memory_order_acquire)) {
		if (!pwrite_all(s->tfd, data, s->blksz, off))
			return EXT2_ET_SHORT_WRITE;
		if (slot != (long)DIRECT && (rc = ov_set(s, blk, DIRECT)))
			return rc;
		s->wb_dirty[e] = false;
		return 0;
	}
	if (slot < 0 || slot == (long)DIRECT) {
		slot = (long)s->nslots;
		if ((rc = ov_set(s, blk, (uint32_t)s->nslots)))
			return rc;
		s->nslots++;
	}
	if (!pwrite_all(s->ofd, data, s->blksz, (uint64_t)slot * s->blksz))
		return EXT2_ET_SHORT_WRITE;
	s->wb_dirty[e] = false;
	return 0;
}

static bool in_wb(const struct sparse *s, uint64_t blk)
{
	unsigned e = (unsigned)(blk % WB_N);
	return s->wb && s->wb_dirty[e] && s->wb_blk[e] == blk;
}

/* changed by this run: in the overlay or waiting in the cache */
static bool changed(struct sparse *s, uint64_t blk)
{
	return in_wb(s, blk) || ov_find(s, blk) >= 0;
}

#define COPY_BUF (1u << 20)

/* Copies bytes [pos, n) of fd in to the same offsets of fd out, inside the kernel where it can;
 * *done (when given) follows what is copied. */
static errcode_t copy_range(int in, int out, uint64_t pos, uint64_t n, _Atomic uint64_t *done)
{
	char *buf = NULL;
	errcode_t rc = 0;
	while (pos < n) {
		size_t k = n - pos < COPY_BUF ? (size_t)(n - pos) : COPY_BUF;
		ssize_t r = -1;
		if (!buf) {
			loff_t i = (loff_t)pos, o = (loff_t)pos;
			r = copy_file_range(in, &i, out, &o, k, 0);
		}
		if (r <= 0) {
			if (!buf && !(buf = malloc(COPY_BUF))) {
				rc = ENOMEM;
				break;
			}
			if (!pread_all(in, buf, k, pos)) {
				rc = EXT2_ET_SHORT_READ;
				break;
			}
			if (!pwrite_all(out, buf, k, pos)) {
				rc = errno ? errno : EIO;
				break;
			}
			r = (ssize_t)k;
		}
		pos += (uint64_t)r;
		if (done)
			atomic_store_explicit(done, pos, memory_order_release);
	}
	free(buf);
	return rc;
}

static errcode_t copy_fd(int in, int out, uint64_t n)
{
	return copy_range(in, out, 0, n, NULL);
}

/* Copies the whole input into the result file, holes left as holes (a raw image is mostly
 * holes), following the progress in copied_to. */
static errcode_t copy_whole(struct sparse *s)
{
	uint64_t pos = 0, n = s->fsize;
	if (ftruncate(s->tfd, (off_t)n) < 0)
		return errno;
	while (pos < n) {
		off_t data = lseek(s->fd, (off_t)pos, SEEK_DATA), hole;
		if (data < 0 && errno == ENXIO)
			break; /* only a hole is left */
		if (data < 0 || (hole = lseek(s->fd, data, SEEK_HOLE)) < 0) {
			data = (off_t)pos; /* no hole information: copy the rest */
			hole = (off_t)n;
		}
		if ((uint64_t)hole > n)
			hole = (off_t)n;
		atomic_store_explicit(&s->copied_to, (uint64_t)data, memory_order_release);
		errcode_t rc = copy_range(s->fd, s->tfd, (uint64_t)data, (uint64_t)hole, &s->copied_to);
		if (rc)
			return rc;
		pos = (uint64_t)hole;
	}
	atomic_store_explicit(&s->copied_to, n, memory_order_release);
	return 0;
}

/* The file the result is built in, beside the output: unnamed where the filesystem allows. */
static errcode_t make_result_file(struct sparse *s)
{
	char *d = strdup(s->out);
	errcode_t rc = 0;
	if (!d)
		return ENOMEM;
	const char *dir = dirname(d);
	s->tfd = -1;
#ifdef O_TMPFILE
	s->tfd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
#endif
	if (s->tfd < 0) {
		if (asprintf(&s->tname, "%s/.fclabel-new-XXXXXX", dir) < 0) {
			s->tname = NULL;
			rc = ENOMEM;
		} else if ((s->tfd = mkstemp(s->tname)) < 0) {
			rc = fail(errno, "%s: cannot create a temporary file beside it: %s", s->out,
				  strerror(errno));
			free(s->tname);
			s->tname = NULL;
		}
	}
	free(d);
	return rc;
}

static void *copy_input(void *arg)
{
	struct sparse *s = arg;
	errcode_t rc = copy_whole(s);
	if (!rc && sync_result && fdatasync(s->tfd) < 0)
		rc = errno;
	s->copy_rc = rc;
	return NULL;
}

/* On the first write: start copying the input into the result file, in the background. */
static void start_copy(struct sparse *s)
{
	s->copy_tried = true;
	if (s->had_crc || s->discard)
		return;
	if (make_result_file(s)) {
		last_error[0] = 0; /* tried again, and reported, at close */
		return;
	}
	if (pthread_create(&s->copier, NULL, copy_input, s) == 0)
		s->copying = true;
}

static void join_copy(struct sparse *s)
{
	if (s->copying) {
		pthread_join(s->copier, NULL);
		s->copying = false;
		s->copied = !s->copy_rc;
	}
}

static errcode_t put_block(struct sparse *s, uint64_t blk, const char *data)
{
	if (!s->copy_tried && s->rw)
		start_copy(s);
	unsigned e = (unsigned)(blk % WB_N);
	if (!s->wb && !(s->wb = malloc((size_t)WB_N * s->blksz)))
		return ENOMEM;
	if (s->wb_dirty[e] && s->wb_blk[e] != blk) {
		errcode_t rc = wb_flush_one(s, e);
		if (rc)
			return rc;
	}
	memcpy(s->wb + (size_t)e * s->blksz, data, s->blksz);
	s->wb_blk[e] = blk;
	s->wb_dirty[e] = true;
	s->dirty = true;
	return 0;
}

/* One sparse block, as the image has it now. */
static errcode_t get_block(struct sparse *s, uint64_t blk, char *dst)
{
	if (in_wb(s, blk)) {
		memcpy(dst, s->wb + (size_t)(blk % WB_N) * s->blksz, s->blksz);
		return 0;
	}
	long slot = ov_find(s, blk);
	uint64_t off;
	if (slot == (long)DIRECT && raw_offset(s, blk, &off))
		return pread_all(s->tfd, dst, s->blksz, off) ? 0 : EXT2_ET_SHORT_READ;
	if (slot >= 0)
		return pread_all(s->ofd, dst, s->blksz, (uint64_t)slot * s->blksz) ? 0 : EXT2_ET_SHORT_READ;
	struct chunk *c = find_chunk(s, blk);
	if (!c)
		return EXT2_ET_SHORT_READ;
	if (c->type == CT_RAW)
		return pread_all(s->fd, dst, s->blksz, c->off + (blk - c->start) * s->blksz)
			       ? 0 : EXT2_ET_SHORT_READ;
	fill_block(dst, s->blksz, c->type == CT_FILL ? c->fill : 0);
	return 0;
}

static errcode_t rw_bytes(struct sparse *s, uint64_t off, size_t len, void *rbuf, const void *wbuf)
{
	while (len) {
		uint64_t blk = off / s->blksz;
		size_t boff = (size_t)(off % s->blksz), n = s->blksz - boff;
		errcode_t rc;
		if (n > len)
			n = len;
		if (blk >= s->total)
			return EXT2_ET_SHORT_READ;
		if (rbuf) {
			struct chunk *c;
			if (!boff && len >= s->blksz && (c = find_chunk(s, blk)) && c->type == CT_RAW &&
			    !changed(s, blk)) {
				/* whole unchanged blocks of one RAW chunk: one read */
				uint64_t k = 1, most = len / s->blksz;
				while (k < most && blk + k < c->start + c->nblk && !changed(s, blk + k))
					k++;
				if (!pread_all(s->fd, rbuf, k * s->blksz, c->off + (blk - c->start) * s->blksz))
					return EXT2_ET_SHORT_READ;
				rbuf = (char *)rbuf + k * s->blksz;
				off += k * s->blksz;
				len -= k * s->blksz;
				continue;
			}
			if ((rc = get_block(s, blk, s->blk)))
				return rc;
			memcpy(rbuf, s->blk + boff, n);
			rbuf = (char *)rbuf + n;
		} else {
			if (n < s->blksz && (rc = get_block(s, blk, s->blk)))
				return rc;
			memcpy(s->blk + boff, wbuf, n);
			if ((rc = put_block(s, blk, s->blk)))
				return rc;
			wbuf = (const char *)wbuf + n;
		}
		off += n;
		len -= n;
	}
	return 0;
}

/* ---- writing the result ---- */

struct writer {
	int fd;
	uint64_t pos;
	uint32_t nchunks;
	uLong crc;
	bool crc_on;
	struct sparse *s;
	char *big; /* COPY_BUF bytes */
};

static errcode_t put_header(struct writer *w, uint16_t type, uint64_t nblk, uint32_t total)
{
	struct chunk_header ch = { type, 0, (uint32_t)nblk, total };
	char pad[4096] = { 0 };
	if (!pwrite_all(w->fd, &ch, sizeof(ch), w->pos))
		return errno ? errno : EIO;
	/* a chunk header larger than ours keeps its size, zero-padded */
	if (w->s->hdr.chunk_hdr_sz > sizeof(ch) &&
	    !pwrite_all(w->fd, pad, w->s->hdr.chunk_hdr_sz - sizeof(ch), w->pos + sizeof(ch)))
		return errno ? errno : EIO;
	w->pos += w->s->hdr.chunk_hdr_sz;
	w->nchunks++;
	return 0;
}

/* RAW chunk of blocks [b, b+n) taken from the current image: unchanged runs copied from the
 * input in large pieces (inside the kernel when no CRC is needed), changed blocks from the
 * overlay. */
static errcode_t put_raw(struct writer *w, uint64_t b, uint64_t n, char *buf)
{
	struct sparse *s = w->s;
	errcode_t rc = put_header(w, CT_RAW, n, s->hdr.chunk_hdr_sz + (uint32_t)(n * s->blksz));
	if (rc)
		return rc;
	for (uint64_t i = 0; i < n;) {
		uint64_t blk = b + i;
		struct chunk *c = find_chunk(s, blk);
		if (changed(s, blk) || !c || c->type != CT_RAW) {
			if ((rc = get_block(s, blk, buf)))
				return rc;
			if (w->crc_on)
				w->crc = crc32(w->crc, (const Bytef *)buf, s->blksz);
			if (!pwrite_all(w->fd, buf, s->blksz, w->pos))
				return errno ? errno : EIO;
			w->pos += s->blksz;
			i++;
			continue;
		}
		/* a run of unchanged blocks of the same RAW chunk */
		uint64_t run = 1;
		while (i + run < n && b + i + run < c->start + c->nblk && !changed(s, b + i + run))
			run++;
		uint64_t src = c->off + (blk - c->start) * s->blksz, len = run * s->blksz;
		while (len) {
			size_t k = len < COPY_BUF ? (size_t)len : COPY_BUF;
			if (!w->crc_on && w->big) {
				loff_t in = (loff_t)src, o = (loff_t)w->pos;
				ssize_t r = copy_file_range(s->fd, &in, w->fd, &o, k, 0);
				if (r > 0) {
					k = (size_t)r;
					goto copied;
				}
			}
			if (!pread_all(s->fd, w->big, k, src))
				return EXT2_ET_SHORT_READ;
			if (w->crc_on)
				w->crc = crc32(w->crc, (const Bytef *)w->big, (uInt)k);
			if (!pwrite_all(w->fd, w->big, k, w->pos))
				return errno ? errno : EIO;
copied:
			src += k;
			w->pos += k;
			len -= k;
		}
		i += run;
	}
	return 0;
}

static errcode_t put_same(struct writer *w, const struct chunk *c, uint64_t n, char *buf)
{
	errcode_t rc;
	if (c->type == CT_FILL) {
		if ((rc = put_header(w, CT_FILL, n, w->s->hdr.chunk_hdr_sz + 4)))
			return rc;
		if (!pwrite_all(w->fd, &c->fill, 4, w->pos))
			return errno ? errno : EIO;
		w->pos += 4;
	} else if ((rc = put_header(w, CT_DONT_CARE, n, w->s->hdr.chunk_hdr_sz))) {
		return rc;
	}
	if (w->crc_on) {
		fill_block(buf, w->s->blksz, c->type == CT_FILL ? c->fill : 0);
		w->crc = crc_repeat(w->crc, buf, w->s->blksz, n);
	}
	return 0;
}

/* Gives the finished result file its place: renamed over the output. */
static errcode_t publish(struct sparse *s, const char *dir)
{
	if (s->tname) {
		if (rename(s->tname, s->out) < 0)
			return fail(errno, "%s: cannot rename the new image over it: %s", s->out,
				    strerror(errno));
		free(s->tname);
		s->tname = NULL;
		return 0;
	}
	/* an unnamed file: link it under a temporary name, then rename that over the output */
	char *tmp = NULL, proc[64];
	errcode_t rc = 0;
	for (unsigned i = 0;; i++) {
		free(tmp);
		if (asprintf(&tmp, "%s/.fclabel-new-%ld-%u", dir, (long)getpid(), i) < 0)
			return ENOMEM;
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", s->tfd);
		if (linkat(s->tfd, "", AT_FDCWD, tmp, AT_EMPTY_PATH) == 0 ||
		    linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0)
			break;
		if (errno == EEXIST && i < 100)
			continue;
		/* no way to name it: copy it into a named temporary file */
		free(tmp);
		tmp = NULL;
		int fd = s->tfd;
		struct stat st;
		if (fstat(fd, &st) < 0)
			return errno;
		s->tfd = -1;
		if ((rc = make_result_file(s)) || !s->tname) {
			close(fd);
			return rc ? rc : EIO;
		}
		fchmod(s->tfd, st.st_mode & 07777);
		rc = copy_fd(fd, s->tfd, (uint64_t)st.st_size);
		close(fd);
		if (!rc && sync_result && fsync(s->tfd) < 0)
			rc = errno;
		return rc ? rc : publish(s, dir);
	}
	if (rename(tmp, s->out) < 0) {
		rc = fail(errno, "%s: cannot rename the new image over it: %s", s->out, strerror(errno));
		unlink(tmp);
	}
	free(tmp);
	return rc;
}

/* Whether every changed block sits in a RAW chunk, so that the result keeps the input's layout. */
static bool layout_kept(struct sparse *s)
{
	for (size_t b = 0; s->key && b <= s->mask; b++) {
		const struct chunk *c = s->key[b] ? find_chunk(s, s->key[b] - 1) : NULL;
		if (c && c->type != CT_RAW)
			return false;
	}
	for (unsigned e = 0; s->wb && e < WB_N; e++) {
		const struct chunk *c = s->wb_dirty[e] ? find_chunk(s, s->wb_blk[e]) : NULL;
		if (c && c->type != CT_RAW)
			return false;
	}
	return true;
}

/* The input is no longer read once the result keeps its layout: dropping its cached pages here,
 * beside the patching and syncing, spares the final close (which frees the replaced file). */
static void *drop_input(void *arg)
{
	struct sparse *s = arg;
	posix_fadvise(s->fd, 0, 0, POSIX_FADV_DONTNEED);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The changed blocks, sorted, without repeats: what the result is built from, so that closing
 * costs time in the blocks that changed and the chunks, never in the declared size. */
static uint64_t *changed_list(struct sparse *s, size_t *n)
{
	size_t cap = s->used + WB_N + 1, k = 0;
	uint64_t *a = malloc(cap * sizeof(*a));
	if (!a)
		return NULL;
	for (size_t b = 0; s->key && b <= s->mask; b++)
		if (s->key[b] && k < cap)
			a[k++] = s->key[b] - 1;
	for (unsigned e = 0; s->wb && e < WB_N; e++)
		if (s->wb_dirty[e] && k < cap)
			a[k++] = s->wb_blk[e];
	qsort(a, k, sizeof(*a), cmp_u64);
	size_t u = 0;
	for (size_t i = 0; i < k; i++)
		if (!u || a[u - 1] != a[i])
			a[u++] = a[i];
	*n = u;
	return a;
}

/* The first index i with a[i] >= v. */
static size_t at_or_after(const uint64_t *a, size_t n, uint64_t v)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (a[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Blocks written straight into the result move to the overlay: before the result is written
 * anew (the copy failed, or the layout changes and the rewrite would pass over them). */
static errcode_t undirect(struct sparse *s)
{
	for (size_t b = 0; s->key && b <= s->mask; b++) {
		uint64_t off;
		if (!s->key[b] || s->slot[b] != DIRECT)
			continue;
		if (!raw_offset(s, s->key[b] - 1, &off) || !pread_all(s->tfd, s->blk, s->blksz, off))
			return EXT2_ET_SHORT_READ;
		if (!pwrite_all(s->ofd, s->blk, s->blksz, (uint64_t)s->nslots * s->blksz))
			return EXT2_ET_SHORT_WRITE;
		s->slot[b] = (uint32_t)s->nslots++;
	}
	return 0;
}

static errcode_t write_result(struct sparse *s)
{
	char *dirc = strdup(s->out), *buf = malloc(s->blksz);
	struct writer w = { .fd = -1, .crc_on = s->had_crc, .s = s, .crc = crc32(0, NULL, 0) };
	errcode_t rc = ENOMEM;
	pthread_t dropper;
	bool dropping = false;
	uint64_t *chg = NULL;
	size_t nchg = 0;

	w.big = malloc(COPY_BUF);
	if (!dirc || !buf || !w.big)
		goto out;
	const char *dir = dirname(dirc);
	join_copy(s);
	if (!s->copied && (rc = undirect(s)))
		goto out;
	if (s->tfd < 0 && (rc = make_result_file(s)))
		goto out;
	if (s->raw && !s->copied) {
		/* a raw image is always the input copied, then patched */
		if ((rc = copy_whole(s)))
			goto out;
		s->copied = true;
	}
	w.fd = s->tfd;
	/* while same, the result file holds the input byte for byte up to the current chunk and
	 * keeps its layout: changed blocks of RAW chunks are patched in at their own offsets */
	chg = changed_list(s, &nchg);
	if (!chg) {
		rc = ENOMEM;
		goto out;
	}
	bool same = s->copied && !s->had_crc;
	dropping = same && !s->out_differs && layout_kept(s) &&
		   pthread_create(&dropper, NULL, drop_input, s) == 0;
	w.pos = s->hdr.file_hdr_sz;
	for (size_t i = 0; i < s->nc; i++) {
		const struct chunk *c = &s->c[i];
		uint64_t b = c->start, end = c->start + c->nblk;
		if (same) {
			size_t j = at_or_after(chg, nchg, b);
			bool any = j < nchg && chg[j] < end;
			for (; c->type == CT_RAW && j < nchg && chg[j] < end; j++) {
				uint64_t k = chg[j];
				if (!in_wb(s, k) && ov_find(s, k) == (long)DIRECT)
					continue; /* already there */
				if ((rc = get_block(s, k, buf)))
					goto out;
				if (!pwrite_all(w.fd, buf, s->blksz, c->off + (k - c->start) * s->blksz)) {
					rc = errno ? errno : EIO;
					goto out;
				}
			}
			if (c->type == CT_RAW || !any)
				continue;
			/* a write into a FILL or DONT_CARE run: from here on the layout changes */
			same = false;
			if ((rc = undirect(s)))
				goto out;
			w.pos = c->hoff;
			w.nchunks = c->idx;
		}
		if (c->type == CT_RAW) {
			/* RAW stays one chunk across changed and unchanged blocks */
			if ((rc = put_raw(&w, b, end - b, buf)))
				goto out;
			continue;
		}
		while (b < end) {
			/* a run of changed blocks becomes RAW; the unchanged run up to the next one keeps
			 * the chunk's type */
			size_t j = at_or_after(chg, nchg, b);
			uint64_t e;
			if (j < nchg && chg[j] == b) {
				for (e = b + 1; e < end && j + 1 < nchg && chg[j + 1] == e; j++)
					e++;
				rc = put_raw(&w, b, e - b, buf);
			} else {
				e = j < nchg && chg[j] < end ? chg[j] : end;
				rc = put_same(&w, c, e - b, buf);
			}
			if (rc)
				goto out;
			b = e;
		}
	}
	if (same) {
		w.pos = s->end;
		w.nchunks = s->hdr.total_chunks;
	}
	if (s->had_crc) {
		uint32_t v = (uint32_t)w.crc;
		if ((rc = put_header(&w, CT_CRC32, 0, s->hdr.chunk_hdr_sz + 4)))
			goto out;
		if (!pwrite_all(w.fd, &v, 4, w.pos)) {
			rc = errno ? errno : EIO;
			goto out;
		}
		w.pos += 4;
	}
	struct sparse_header h = s->hdr;
	h.total_chunks = w.nchunks;
	h.image_checksum = 0;
	char pad[4096] = { 0 };
	/* the result keeps the mode and, where we may, the owner of what it replaces */
	struct stat st;
	if (stat(s->out, &st) == 0) {
		if (fchown(w.fd, st.st_uid, st.st_gid) < 0)
			(void)0; /* not ours to give away: it stays ours */
		fchmod(w.fd, st.st_mode & 07777);
	}
	errno = 0;
	if (ftruncate(w.fd, (off_t)w.pos) < 0 ||
	    (!s->raw && !pwrite_all(w.fd, &h, sizeof(h), 0)) ||
	    (!s->raw && h.file_hdr_sz > sizeof(h) &&
	     !pwrite_all(w.fd, pad, h.file_hdr_sz - sizeof(h), sizeof(h))) ||
	    (sync_result && fsync(w.fd) < 0)) {
		rc = errno ? errno : EIO;
		goto out;
	}
	if ((rc = publish(s, dir)))
		goto out;
	int dfd = sync_result ? open(dir, O_RDONLY | O_DIRECTORY) : -1;
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	rc = 0;
out:
	if (dropping)
		pthread_join(dropper, NULL);
	free(chg);
	free(dirc);
	free(buf);
	free(w.big);
	return rc;
}

/* ---- the io_manager ---- */

static struct sparse *priv(io_channel ch)
{
	return ch->private_data;
}

static void sparse_free(struct sparse *s)
{
	if (!s)
		return;
	if (last_rw == s)
		last_rw = NULL;
	if (s->fd >= 0)
		close(s->fd);
	if (s->ofd >= 0)
		close(s->ofd);
	join_copy(s);
	if (s->tfd >= 0)
		close(s->tfd);
	if (s->tname)
		unlink(s->tname);
	free(s->tname);
	free(s->c);
	free(s->key);
	free(s->slot);
	free(s->blk);
	free(s->wb);
	free(s->out);
	free(s);
}

static errcode_t open_common(const char *name, int flags, io_channel *channel, bool raw)
{
	struct sparse *s = calloc(1, sizeof(*s));
	io_channel ch = calloc(1, sizeof(*ch));
	errcode_t rc = ENOMEM;

	last_error[0] = 0;
	if (!s || !ch)
		goto fail;
	s->ofd = -1;
	s->tfd = -1;
	s->rw = flags & IO_FLAG_RW;
	/* the input is only read: the result replaces it by rename */
	s->fd = open(name, O_RDONLY | O_CLOEXEC);
	if (s->fd < 0) {
		rc = errno;
		goto fail;
	}
	s->raw = raw;
	if ((rc = raw ? parse_raw(s) : parse(s, name)))
		goto fail;
	s->blk = malloc(s->blksz);
	s->out = strdup(output_path ? output_path : name);
	s->out_differs = output_path && strcmp(output_path, name);
	ch->name = strdup(name);
	if (!s->blk || !s->out || !ch->name) {
		rc = ENOMEM;
		goto fail;
	}
	if (s->rw) {
		char *d = strdup(s->out), *t = NULL;
		if (!d || asprintf(&t, "%s/.fclabel-overlay-XXXXXX", dirname(d)) < 0) {
			free(d);
			rc = ENOMEM;
			goto fail;
		}
		s->ofd = mkstemp(t);
		rc = errno;
		if (s->ofd >= 0)
			unlink(t);
		free(t);
		free(d);
		if (s->ofd < 0) {
			rc = fail(rc, "%s: cannot create a temporary file beside it: %s", s->out,
				  strerror(rc));
			goto fail;
		}
	}
	if (s->rw)
		last_rw = s;
	ch->magic = EXT2_ET_MAGIC_IO_CHANNEL;
	ch->manager = raw ? replace_io_manager : sparse_io_manager;
	ch->block_size = 1024;
	ch->refcount = 1;
	ch->private_data = s;
	*channel = ch;
	return 0;
fail:
	if (ch)
		free(ch->name);
	free(ch);
	sparse_free(s);
	return rc;
}

static errcode_t sp_open(const char *name, int flags, io_channel *channel)
{
	return open_common(name, flags, channel, false);
}

static errcode_t rp_open(const char *name, int flags, io_channel *channel)
{
	/* another file opened through us (undo_io opens its undo file with its backing manager)
	 * is a plain file */
	if (replace_image && strcmp(name, replace_image))
		return unix_io_manager->open(name, flags, channel);
	return open_common(name, flags, channel, true);
}

void sparse_io_discard(io_channel channel)
{
	/* (the caller may have put a copy of the manager in place: its open tells; under another
	 * manager, undo_io's, the image is the one open read-write) */
	if (channel && (channel->manager->open == sp_open || channel->manager->open == rp_open))
		priv(channel)->discard = true;
	else if (channel && last_rw)
		last_rw->discard = true;
}

static errcode_t sp_close(io_channel ch)
{
	struct sparse *s = priv(ch);
	errcode_t rc = 0;

	if (--ch->refcount > 0)
		return 0;
	if (s->rw && s->dirty && !s->discard)
		rc = write_result(s);
	sparse_free(s);
	free(ch->name);
	free(ch);
	return rc;
}

static errcode_t sp_set_blksize(io_channel ch, int blksize)
{
	struct sparse *s = priv(ch);
	ch->block_size = blksize;
	/* a raw image's unit follows the file system's block, when nothing is written yet: a
	 * changed block then never fills a hole beside it */
	if (s->raw && !s->dirty && !s->wb && blksize >= 512 && blksize <= 65536 &&
	    !(blksize & (blksize - 1)) && s->fsize % (uint64_t)blksize == 0 &&
	    (uint32_t)blksize != s->blksz) {
		char *b = realloc(s->blk, (size_t)blksize);
		if (!b)
			return ENOMEM;
		s->blk = b;
		s->blksz = s->hdr.blk_sz = (uint32_t)blksize;
		s->total = s->fsize / s->blksz;
		if (s->nc)
			s->c[0].nblk = s->total;
	}
	return 0;
}

static size_t span(io_channel ch, int count)
{
	return count < 0 ? (size_t)-count : (size_t)count * (size_t)ch->block_size;
}

static errcode_t sp_read64(io_channel ch, unsigned long long block, int count, void *data)
{
	return rw_bytes(priv(ch), block * (uint64_t)ch->block_size, span(ch, count), data, NULL);
}

static errcode_t sp_write64(io_channel ch, unsigned long long block, int count, const void *data)
{
	if (!priv(ch)->rw)
		return EXT2_ET_RO_FILSYS;
	return rw_bytes(priv(ch), block * (uint64_t)ch->block_size, span(ch, count), NULL, data);
}

static errcode_t sp_read(io_channel ch, unsigned long block, int count, void *data)
{
	return sp_read64(ch, block, count, data);
}

static errcode_t sp_write(io_channel ch, unsigned long block, int count, const void *data)
{
	return sp_write64(ch, block, count, data);
}

static errcode_t sp_write_byte(io_channel ch, unsigned long offset, int count, const void *data)
{
	if (!priv(ch)->rw)
		return EXT2_ET_RO_FILSYS;
	return rw_bytes(priv(ch), offset, (size_t)count, NULL, data);
}

static errcode_t sp_flush(io_channel ch)
{
	(void)ch;
	return 0;
}

static errcode_t sp_set_option(io_channel ch, const char *option, const char *arg)
{
	(void)ch;
	(void)option;
	(void)arg;
	return EXT2_ET_INVALID_ARGUMENT;
}

/* the two managers differ only in how the file is read: a sparse image, or a raw one */
#define SHARED_OPS                                                                               \
	.magic = EXT2_ET_MAGIC_IO_MANAGER, .close = sp_close, .set_blksize = sp_set_blksize,     \
	.read_blk = sp_read, .write_blk = sp_write, .flush = sp_flush,                           \
	.write_byte = sp_write_byte, .set_option = sp_set_option, .read_blk64 = sp_read64,       \
	.write_blk64 = sp_write64

static struct struct_io_manager sparse_manager = {
	SHARED_OPS,
	.name = "Android sparse image I/O manager",
	.open = sp_open,
};

io_manager sparse_io_manager = &sparse_manager;

static struct struct_io_manager replace_manager = {
	SHARED_OPS,
	.name = "Raw image replaced whole I/O manager",
	.open = rp_open,
};

io_manager replace_io_manager = &replace_manager;

/* ---- detection ---- */

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
	bool got = pread_all(fd, &magic, 4, 0);
	close(fd);
	*fmt = got && magic == SPARSE_MAGIC ? IMGFMT_SPARSE : IMGFMT_RAW;
	return 0;
}
