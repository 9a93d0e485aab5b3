/*
 * Android sparse images (format 1.0), laid out for the copy-and-rename writer (replace.c).
 *
 * File: a 28-byte header (magic 0xed26ff3a, version 1.0, header sizes, block size, total blocks,
 * total chunks, checksum), then chunks, each a 12-byte header (type, reserved, size in blocks,
 * total bytes) and its data: RAW (the blocks), FILL (a 4-byte pattern), DONT_CARE (nothing, read
 * as zeros), CRC32 (4 bytes: the CRC-32 of every block so far, DONT_CARE as zeros).
 *
 * We keep an index of the chunks, never the image; the writer keeps the changed blocks. At close,
 * while every change sits in a RAW chunk, the writer patches the copy of the input in place;
 * from the first change that alters the layout (a write into a FILL or DONT_CARE run) on, the
 * rest is written here anew. Images with CRC32 chunks are rewritten whole, since their checksum
 * covers everything.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "internal.h"

struct sparse_header {
	uint32_t magic;
	uint16_t major, minor, file_hdr_sz, chunk_hdr_sz;
	uint32_t blk_sz, total_blks, total_chunks, image_checksum;
};

struct chunk_header {
	uint16_t type, reserved;
	uint32_t chunk_sz, total_sz;
};

static struct sparse_header *hdr(struct imgcopy *s)
{
	return s->fmt_data;
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

/* Every CRC32 chunk verified against the data before it (FILL and DONT_CARE runs as they
 * read). */
static errcode_t verify_crc32(struct imgcopy *s, const struct sparse_header *h, const char *name)
{
	uLong crc = crc32(0, NULL, 0);
	size_t ci = 0;
	char *buf = malloc(1 << 20);
	if (!buf)
		return ENOMEM;
	uint64_t pos = h->file_hdr_sz;
	errcode_t rc = 0;
	for (uint32_t i = 0; i < h->total_chunks && !rc; i++) {
		struct chunk_header ch;
		ic_pread_all(s->fd, &ch, sizeof(ch), pos);
		if (ch.type == CT_CRC32) {
			uint32_t rec;
			ic_pread_all(s->fd, &rec, 4, pos + h->chunk_hdr_sz);
			if (rec != (uint32_t)crc)
				rc = ic_fail(EINVAL, "%s: CRC32 chunk %u at offset %llu: recorded 0x%08x, "
					  "the data gives 0x%08lx", name, i, (unsigned long long)pos,
					  rec, crc);
		} else if (ch.chunk_sz) {
			struct chunk *c = &s->c[ci++];
			if (c->type == CT_RAW) {
				uint64_t left = c->nblk * s->blksz, off = c->off;
				while (left && !rc) {
					size_t n = left < (1 << 20) ? (size_t)left : (1 << 20);
					if (!ic_pread_all(s->fd, buf, n, off))
						rc = ic_fail(EXT2_ET_SHORT_READ, "%s: chunk %u: read failed",
							  name, i);
					crc = crc32(crc, (const Bytef *)buf, (uInt)n);
					left -= n;
					off += n;
				}
			} else {
				ic_fill_block(buf, s->blksz, c->type == CT_FILL ? c->fill : 0);
				crc = crc_repeat(crc, buf, s->blksz, c->nblk);
			}
		}
		pos += ch.total_sz;
	}
	free(buf);
	return rc;
}

/* Reads the header and the chunk index; verifies CRC32 chunks when there are any. */
static errcode_t sparse_parse(struct imgcopy *s, const char *name)
{
	struct stat st;
	struct sparse_header *h = calloc(1, sizeof(*h));
	uint64_t pos, blk = 0, fsize;
	size_t cap = 0;

	if (!h)
		return ENOMEM;
	s->fmt_data = h;
	if (fstat(s->fd, &st) < 0)
		return errno;
	fsize = (uint64_t)st.st_size;
	s->fsize = fsize;
	if (!ic_pread_all(s->fd, h, sizeof(*h), 0))
		return ic_fail(EXT2_ET_SHORT_READ, "%s: truncated sparse header", name);
	if (h->magic != SPARSE_MAGIC)
		return ic_fail(EXT2_ET_MAGIC_IO_CHANNEL, "%s: not an Android sparse image", name);
	if (h->major != 1)
		return ic_fail(EINVAL, "%s: sparse format version %u.%u; only 1.x is known", name,
			    h->major, h->minor);
	if (h->file_hdr_sz < 28 || h->chunk_hdr_sz < 12 || h->file_hdr_sz > 4096 ||
	    h->chunk_hdr_sz > 4096)
		return ic_fail(EINVAL, "%s: sparse header sizes %u/%u are not valid", name,
			    h->file_hdr_sz, h->chunk_hdr_sz);
	if (h->blk_sz < 1024 || h->blk_sz % 4 || h->blk_sz > (1u << 20) ||
	    (h->blk_sz & (h->blk_sz - 1)))
		return ic_fail(EINVAL, "%s: sparse block size %u is not valid", name, h->blk_sz);
	s->blksz = h->blk_sz;
	s->total = h->total_blks;
	pos = h->file_hdr_sz;
	for (uint32_t i = 0; i < h->total_chunks; i++) {
		struct chunk_header ch;
		if (pos + h->chunk_hdr_sz > fsize || !ic_pread_all(s->fd, &ch, sizeof(ch), pos))
			return ic_fail(EXT2_ET_SHORT_READ, "%s: chunk %u at offset %llu: truncated "
				    "(the file ends at %llu)", name, i, (unsigned long long)pos,
				    (unsigned long long)fsize);
		uint64_t data = pos + h->chunk_hdr_sz, want;
		switch (ch.type) {
		case CT_RAW: want = h->chunk_hdr_sz + (uint64_t)ch.chunk_sz * h->blk_sz; break;
		case CT_FILL: want = h->chunk_hdr_sz + 4u; break;
		case CT_DONT_CARE: want = h->chunk_hdr_sz; break;
		case CT_CRC32: want = h->chunk_hdr_sz + 4u; break;
		default:
			return ic_fail(EINVAL, "%s: chunk %u at offset %llu: unknown chunk type 0x%04x",
				    name, i, (unsigned long long)pos, ch.type);
		}
		if (ch.total_sz != want)
			return ic_fail(EINVAL, "%s: chunk %u at offset %llu: size %u bytes, %llu expected "
				    "for its type and %u blocks", name, i, (unsigned long long)pos,
				    ch.total_sz, (unsigned long long)want, ch.chunk_sz);
		if (pos + want > fsize)
			return ic_fail(EXT2_ET_SHORT_READ, "%s: chunk %u at offset %llu: truncated (needs "
				    "%llu bytes, the file ends at %llu)", name, i,
				    (unsigned long long)pos, (unsigned long long)want,
				    (unsigned long long)fsize);
		if (ch.type == CT_CRC32) {
			s->whole = true;
			pos += want;
			continue;
		}
		if (blk + ch.chunk_sz > s->total)
			return ic_fail(EINVAL, "%s: chunk %u at offset %llu: blocks %llu..%llu overrun the "
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
			if (ch.type == CT_FILL && !ic_pread_all(s->fd, &c->fill, 4, data))
				return ic_fail(EXT2_ET_SHORT_READ, "%s: chunk %u: cannot read", name, i);
		}
		blk += ch.chunk_sz;
		pos += want;
	}
	s->end = pos;
	if (blk != s->total)
		return ic_fail(EINVAL, "%s: the chunks cover %llu blocks, the header declares %llu", name,
			    (unsigned long long)blk, (unsigned long long)s->total);
	if (!s->whole)
		return 0;
	return verify_crc32(s, h, name);
}


/* ---- writing the result anew ---- */

struct writer {
	int fd;
	uint64_t pos;
	uint32_t nchunks;
	uLong crc;
	bool crc_on;
	struct imgcopy *s;
	char *big; /* IC_COPY_BUF bytes */
};

static errcode_t put_header(struct writer *w, uint16_t type, uint64_t nblk, uint32_t total)
{
	struct chunk_header ch = { type, 0, (uint32_t)nblk, total };
	char pad[4096] = { 0 };
	if (!ic_pwrite_all(w->fd, &ch, sizeof(ch), w->pos))
		return errno ? errno : EIO;
	/* a chunk header larger than ours keeps its size, zero-padded */
	if (hdr(w->s)->chunk_hdr_sz > sizeof(ch) &&
	    !ic_pwrite_all(w->fd, pad, hdr(w->s)->chunk_hdr_sz - sizeof(ch), w->pos + sizeof(ch)))
		return errno ? errno : EIO;
	w->pos += hdr(w->s)->chunk_hdr_sz;
	w->nchunks++;
	return 0;
}

/* RAW chunk of blocks [b, b+n) taken from the current image: unchanged runs copied from the
 * input in large pieces (inside the kernel when no CRC is needed), changed blocks from the
 * overlay. */
static errcode_t put_raw(struct writer *w, uint64_t b, uint64_t n, char *buf)
{
	struct imgcopy *s = w->s;
	errcode_t rc = put_header(w, CT_RAW, n, hdr(s)->chunk_hdr_sz + (uint32_t)(n * s->blksz));
	if (rc)
		return rc;
	for (uint64_t i = 0; i < n;) {
		uint64_t blk = b + i;
		struct chunk *c = ic_find_chunk(s, blk);
		if (ic_changed(s, blk) || !c || c->type != CT_RAW) {
			if ((rc = ic_get_block(s, blk, buf)))
				return rc;
			if (w->crc_on)
				w->crc = crc32(w->crc, (const Bytef *)buf, s->blksz);
			if (!ic_pwrite_all(w->fd, buf, s->blksz, w->pos))
				return errno ? errno : EIO;
			w->pos += s->blksz;
			i++;
			continue;
		}
		/* a run of unchanged blocks of the same RAW chunk */
		uint64_t run = 1;
		while (i + run < n && b + i + run < c->start + c->nblk && !ic_changed(s, b + i + run))
			run++;
		uint64_t src = c->off + (blk - c->start) * s->blksz, len = run * s->blksz;
		while (len) {
			size_t k = len < IC_COPY_BUF ? (size_t)len : IC_COPY_BUF;
			if (!w->crc_on && w->big) {
				loff_t in = (loff_t)src, o = (loff_t)w->pos;
				ssize_t r = copy_file_range(s->fd, &in, w->fd, &o, k, 0);
				if (r > 0) {
					k = (size_t)r;
					goto copied;
				}
			}
			if (!ic_pread_all(s->fd, w->big, k, src))
				return EXT2_ET_SHORT_READ;
			if (w->crc_on)
				w->crc = crc32(w->crc, (const Bytef *)w->big, (uInt)k);
			if (!ic_pwrite_all(w->fd, w->big, k, w->pos))
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
		if ((rc = put_header(w, CT_FILL, n, hdr(w->s)->chunk_hdr_sz + 4)))
			return rc;
		if (!ic_pwrite_all(w->fd, &c->fill, 4, w->pos))
			return errno ? errno : EIO;
		w->pos += 4;
	} else if ((rc = put_header(w, CT_DONT_CARE, n, hdr(w->s)->chunk_hdr_sz))) {
		return rc;
	}
	if (w->crc_on) {
		ic_fill_block(buf, w->s->blksz, c->type == CT_FILL ? c->fill : 0);
		w->crc = crc_repeat(w->crc, buf, w->s->blksz, n);
	}
	return 0;
}

/* Chunk c from block b on, through its end: a run of changed blocks becomes RAW, the unchanged
 * run up to the next one keeps the chunk's type. */
static errcode_t put_split(struct writer *w, const struct chunk *c, const uint64_t *chg,
			   size_t nchg, char *buf)
{
	uint64_t b = c->start, end = c->start + c->nblk;
	errcode_t rc;
	while (b < end) {
		size_t j = ic_at_or_after(chg, nchg, b);
		uint64_t e;
		if (j < nchg && chg[j] == b) {
			for (e = b + 1; e < end && j + 1 < nchg && chg[j + 1] == e; j++)
				e++;
			rc = put_raw(w, b, e - b, buf);
		} else {
			e = j < nchg && chg[j] < end ? chg[j] : end;
			rc = put_same(w, c, e - b, buf);
		}
		if (rc)
			return rc;
		b = e;
	}
	return 0;
}

/* The writer's hook: chunks [from, nc) anew (all of them from the file header on when fresh),
 * the CRC32 trailer when the input had one, and the header. */
static errcode_t sparse_rewrite(struct imgcopy *s, size_t from, bool fresh, const uint64_t *chg,
				size_t nchg, int fd, uint64_t *end)
{
	struct sparse_header *h0 = hdr(s);
	struct writer w = { .fd = fd, .crc_on = s->whole, .s = s, .crc = crc32(0, NULL, 0) };
	char *buf = malloc(s->blksz), pad[4096] = { 0 };
	errcode_t rc = ENOMEM;

	w.big = malloc(IC_COPY_BUF);
	if (!buf || !w.big)
		goto out;
	if (fresh) {
		w.pos = h0->file_hdr_sz;
	} else if (from < s->nc) {
		w.pos = s->c[from].hoff;
		w.nchunks = s->c[from].idx;
	} else {
		w.pos = s->end;
		w.nchunks = h0->total_chunks;
	}
	for (size_t i = from; i < s->nc; i++) {
		const struct chunk *c = &s->c[i];
		/* RAW stays one chunk across changed and unchanged blocks */
		rc = c->type == CT_RAW ? put_raw(&w, c->start, c->nblk, buf)
				       : put_split(&w, c, chg, nchg, buf);
		if (rc)
			goto out;
	}
	if (s->whole) {
		uint32_t v = (uint32_t)w.crc;
		if ((rc = put_header(&w, CT_CRC32, 0, h0->chunk_hdr_sz + 4)))
			goto out;
		if (!ic_pwrite_all(w.fd, &v, 4, w.pos)) {
			rc = errno ? errno : EIO;
			goto out;
		}
		w.pos += 4;
	}
	struct sparse_header h = *h0;
	h.total_chunks = w.nchunks;
	h.image_checksum = 0;
	errno = 0;
	if (!ic_pwrite_all(fd, &h, sizeof(h), 0) ||
	    (h.file_hdr_sz > sizeof(h) &&
	     !ic_pwrite_all(fd, pad, h.file_hdr_sz - sizeof(h), sizeof(h)))) {
		rc = errno ? errno : EIO;
		goto out;
	}
	*end = w.pos;
	rc = 0;
out:
	free(buf);
	free(w.big);
	return rc;
}

static const struct imgcopy_format sparse_format = {
	.parse = sparse_parse,
	.rewrite = sparse_rewrite,
	.free_data = free,
};

static errcode_t sp_open(const char *name, int flags, io_channel *channel)
{
	return ic_open(name, flags, channel, &sparse_format, imgfmt_sparse_manager);
}

static struct struct_io_manager sparse_manager = {
	IC_SHARED_OPS,
	.name = "Android sparse image I/O manager",
	.open = sp_open,
};

io_manager imgfmt_sparse_manager = &sparse_manager;


/* ---- reading what a sparse image holds, without the writer (for EROFS, read whole) ---- */

/* The image at path parsed into s (its fd open): 0, or an errcode_t (imgfmt_error says why). */
static errcode_t sparse_load(struct imgcopy *s, const char *path)
{
	memset(s, 0, sizeof(*s));
	s->ofd = -1;
	if ((s->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return ic_fail(errno, "%s: %s", path, strerror(errno));
	return sparse_parse(s, path);
}

static void sparse_unload(struct imgcopy *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->c);
	free(s->fmt_data);
}

/* The bytes [off, off + len) of chunk c (off and len inside it) into buf. */
static errcode_t chunk_read(struct imgcopy *s, const struct chunk *c, uint64_t off, char *buf,
			    size_t len)
{
	if (c->type == CT_RAW)
		return ic_pread_all(s->fd, buf, len, c->off + off) ? 0
			: ic_fail(errno ? errno : EIO, "cannot read a RAW chunk: %s",
				  strerror(errno ? errno : EIO));
	for (size_t i = 0; i < len; i++) /* FILL: its 4 bytes over and over; DONT_CARE: zeros */
		buf[i] = c->type == CT_FILL ? (char)(c->fill >> (8 * ((off + i) & 3))) : 0;
	return 0;
}

errcode_t imgfmt_sparse_read(const char *path, uint64_t off, void *buf, size_t len)
{
	struct imgcopy s;
	errcode_t rc = sparse_load(&s, path);
	memset(buf, 0, len);
	for (size_t i = 0; !rc && i < s.nc; i++) {
		const struct chunk *c = &s.c[i];
		uint64_t a = c->start * s.blksz, b = a + c->nblk * s.blksz;
		uint64_t lo = off > a ? off : a, hi = off + len < b ? off + len : b;
		if (lo < hi)
			rc = chunk_read(&s, c, lo - a, (char *)buf + (lo - off), (size_t)(hi - lo));
	}
	sparse_unload(&s);
	return rc;
}

errcode_t imgfmt_sparse_expand(const char *path, int *out)
{
	struct imgcopy s;
	errcode_t rc = sparse_load(&s, path);
	char *buf = NULL;
	int fd = -1;
	*out = -1;
	if (!rc && (fd = memfd_create("fclabel-sparse", MFD_CLOEXEC)) < 0)
		rc = ic_fail(errno, "%s: cannot make a memory file to expand it into: %s", path,
			     strerror(errno));
	if (!rc && ftruncate(fd, (off_t)(s.total * s.blksz)) < 0)
		rc = ic_fail(errno, "%s: cannot expand it (%llu bytes): %s", path,
			     (unsigned long long)(s.total * s.blksz), strerror(errno));
	if (!rc && !(buf = malloc(IC_COPY_BUF)))
		rc = ENOMEM;
	/* RAW and FILL chunks written; DONT_CARE ones and zero fills stay holes */
	for (size_t i = 0; !rc && i < s.nc; i++) {
		const struct chunk *c = &s.c[i];
		uint64_t size = c->nblk * s.blksz, at = c->start * s.blksz;
		if (c->type == CT_DONT_CARE || (c->type == CT_FILL && !c->fill))
			continue;
		for (uint64_t done = 0; !rc && done < size;) {
			size_t n = size - done < IC_COPY_BUF ? (size_t)(size - done) : IC_COPY_BUF;
			rc = chunk_read(&s, c, done, buf, n);
			if (!rc && !ic_pwrite_all(fd, buf, n, at + done))
				rc = ic_fail(errno ? errno : EIO, "%s: cannot expand it: %s", path,
					     strerror(errno ? errno : EIO));
			done += n;
		}
	}
	free(buf);
	sparse_unload(&s);
	if (rc && fd >= 0)
		close(fd);
	else
		*out = fd;
	return rc;
}
