/*
 * What every part of the copy-and-rename writer stands on: its last error (imgfmt_error), whole
 * reads and writes, the input's chunks, and the blocks this run changed: the overlay file's index
 * (block -> slot, or DIRECT: already in the result file at its own offset), the write-back cache
 * in front of it, and a block as the image has it now. The io_manager (replace.c) and the result
 * file (result.c) are built on it; it calls neither.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static char last_error[512];

const char *imgfmt_error(void)
{
	return last_error[0] ? last_error : NULL;
}

errcode_t ic_fail(errcode_t rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return rc;
}

void ic_clear_error(void)
{
	last_error[0] = 0;
}

/* Whole reads and writes: short transfers continue, EINTR is retried. */
static bool io_all(int fd, void *buf, size_t n, uint64_t off, bool write)
{
	char *p = buf;
	int e = imgfmt_fault(write ? IMGIO_FWRITE : IMGIO_FREAD);
	if (e) {
		errno = e;
		return false;
	}
	while (n) {
		ssize_t r = write ? pwrite(fd, p, n, (off_t)off) : pread(fd, p, n, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			errno = write ? ENOSPC : 0; /* (a read: the file ends early) */
		if (r <= 0)
			return false;
		p += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return true;
}

bool ic_pread_all(int fd, void *buf, size_t n, uint64_t off)
{
	return io_all(fd, buf, n, off, false);
}

bool ic_pwrite_all(int fd, const void *buf, size_t n, uint64_t off)
{
	return io_all(fd, (void *)buf, n, off, true);
}

void ic_fill_block(char *b, uint32_t blksz, uint32_t fill)
{
	for (uint32_t i = 0; i < blksz; i += 4)
		memcpy(b + i, &fill, 4);
}

struct chunk *ic_find_chunk(struct imgcopy *s, uint64_t blk)
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

int64_t ic_ov_find(struct imgcopy *s, uint64_t blk)
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
static errcode_t ov_set(struct imgcopy *s, uint64_t blk, uint32_t slot)
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
bool ic_raw_offset(struct imgcopy *s, uint64_t blk, uint64_t *off)
{
	const struct chunk *c = ic_find_chunk(s, blk);
	if (!c || c->type != CT_RAW)
		return false;
	*off = c->off + (blk - c->start) * s->blksz;
	return true;
}

errcode_t ic_wb_flush_one(struct imgcopy *s, unsigned e)
{
	if (!s->wb_dirty[e])
		return 0;
	uint64_t blk = s->wb_blk[e], off;
	const char *data = s->wb + (size_t)e * s->blksz;
	int64_t slot = ic_ov_find(s, blk);
	errcode_t rc;
	/* Once the copy has passed it, a block of a RAW chunk goes straight into the result at its
	 * own offset (the copier never writes there again): nothing to patch at close. */
	if (s->copying && !s->whole && ic_raw_offset(s, blk, &off) &&
	    off + s->blksz <= atomic_load_explicit(&s->copied_to, memory_order_acquire)) {
		if (!ic_pwrite_all(s->tfd, data, s->blksz, off))
			return EXT2_ET_SHORT_WRITE;
		if (slot != (int64_t)DIRECT && (rc = ov_set(s, blk, DIRECT)))
			return rc;
		s->wb_dirty[e] = false;
		return 0;
	}
	if (slot < 0 || slot == (int64_t)DIRECT) {
		slot = (int64_t)s->nslots;
		if ((rc = ov_set(s, blk, (uint32_t)s->nslots)))
			return rc;
		s->nslots++;
	}
	if (!ic_pwrite_all(s->ofd, data, s->blksz, (uint64_t)slot * s->blksz))
		return EXT2_ET_SHORT_WRITE;
	s->wb_dirty[e] = false;
	return 0;
}

bool ic_in_wb(const struct imgcopy *s, uint64_t blk)
{
	unsigned e = (unsigned)(blk % WB_N);
	return s->wb && s->wb_dirty[e] && s->wb_blk[e] == blk;
}

/* changed by this run: in the overlay or waiting in the cache */
bool ic_changed(struct imgcopy *s, uint64_t blk)
{
	return ic_in_wb(s, blk) || ic_ov_find(s, blk) >= 0;
}

/* A failed read of a file of ours: what the system said (EIO is not a block outside the image,
 * which is EXT2_ET_SHORT_READ). */
errcode_t ic_read_error(void)
{
	return errno && errno != EINTR ? errno : EXT2_ET_SHORT_READ;
}

/* One sparse block, as the image has it now. */
errcode_t ic_get_block(struct imgcopy *s, uint64_t blk, char *dst)
{
	if (ic_in_wb(s, blk)) {
		memcpy(dst, s->wb + (size_t)(blk % WB_N) * s->blksz, s->blksz);
		return 0;
	}
	int64_t slot = ic_ov_find(s, blk);
	uint64_t off;
	if (slot == (int64_t)DIRECT && ic_raw_offset(s, blk, &off))
		return ic_pread_all(s->tfd, dst, s->blksz, off) ? 0 : ic_read_error();
	if (slot >= 0)
		return ic_pread_all(s->ofd, dst, s->blksz, (uint64_t)slot * s->blksz)
			       ? 0 : ic_read_error();
	struct chunk *c = ic_find_chunk(s, blk);
	if (!c)
		return EXT2_ET_SHORT_READ;
	if (c->type == CT_RAW)
		return ic_pread_all(s->fd, dst, s->blksz, c->off + (blk - c->start) * s->blksz)
			       ? 0 : ic_read_error();
	ic_fill_block(dst, s->blksz, c->type == CT_FILL ? c->fill : 0);
	return 0;
}
