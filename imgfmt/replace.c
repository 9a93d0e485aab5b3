/*
 * The copy-and-rename writer behind both of imgfmt's io_managers: the input is only read, the
 * result is built in a temporary file beside the output, synced, and renamed over it, so an
 * interrupted run leaves the original whole.
 *
 * Written blocks go to an unlinked overlay file beside the output, with an index in memory:
 * memory and disk grow with the blocks that change, not with the image. To keep the cost close
 * to writing in place, the first write starts a thread that copies the input into the result
 * file (holes kept) and syncs it while the labeler works. A changed block of a RAW chunk that the
 * copy has already passed is written straight into the copy at its own offset; the others wait
 * in the overlay. At close those that sit in RAW chunks are patched in, and from the first change
 * that alters the layout on, the format writes the rest anew (sparse.c). The result file is
 * unnamed (O_TMPFILE) where the file system allows it, so a killed run leaves nothing behind.
 * (The result file, the copy and what happens at close: result.c; the chunks, the overlay's
 * index and the write-back cache: blocks.c.)
 *
 * A raw image is laid out here as one RAW chunk from offset 0 with no headers: its result is
 * always the input copied, then patched.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "internal.h"

static char *output_path;
static char *replace_image;
static struct imgcopy *last_rw; /* the open read-write image, for a discard through a wrapper */

void imgfmt_set_image(const char *path)
{
	free(replace_image);
	replace_image = path ? strdup(path) : NULL;
}

void imgfmt_set_output(const char *path)
{
	free(output_path);
	output_path = path ? strdup(path) : NULL;
}

/* A raw image as one RAW chunk from offset 0 (no headers): the same copy, patch and rename. */
static errcode_t raw_parse(struct imgcopy *s, const char *name)
{
	(void)name;
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
	if (!s->total)
		return 0;
	if (!(s->c = calloc(1, sizeof(*s->c))))
		return ENOMEM;
	s->c[0] = (struct chunk){ .start = 0, .nblk = s->total, .type = CT_RAW };
	s->nc = 1;
	return 0;
}

static errcode_t put_block(struct imgcopy *s, uint64_t blk, const char *data)
{
	if (!s->copy_tried && s->rw)
		ic_start_copy(s);
	unsigned e = (unsigned)(blk % WB_N);
	if (!s->wb && !(s->wb = malloc((size_t)WB_N * s->blksz)))
		return ENOMEM;
	if (s->wb_dirty[e] && s->wb_blk[e] != blk) {
		errcode_t rc = ic_wb_flush_one(s, e);
		if (rc)
			return rc;
	}
	memcpy(s->wb + (size_t)e * s->blksz, data, s->blksz);
	s->wb_blk[e] = blk;
	s->wb_dirty[e] = true;
	s->dirty = true;
	return 0;
}


static errcode_t rw_bytes(struct imgcopy *s, uint64_t off, size_t len, void *rbuf, const void *wbuf)
{
	while (len) {
		uint64_t blk = off / s->blksz;
		size_t boff = (size_t)(off % s->blksz), n = s->blksz - boff;
		errcode_t rc;
		if (n > len)
			n = len;
		if (blk >= s->total)
			return EXT2_ET_SHORT_READ;
		if (ic_in_wb(s, blk)) {
			/* in the write-back cache: read or changed there (an inode at a time, with
			 * 128-byte inodes: no whole block copied in and out for each) */
			char *w = s->wb + (size_t)(blk % WB_N) * s->blksz + boff;
			if (rbuf) {
				memcpy(rbuf, w, n);
				rbuf = (char *)rbuf + n;
			} else {
				memcpy(w, wbuf, n);
				wbuf = (const char *)wbuf + n;
			}
		} else if (rbuf) {
			struct chunk *c;
			if (!boff && len >= s->blksz && (c = ic_find_chunk(s, blk)) && c->type == CT_RAW &&
			    !ic_changed(s, blk)) {
				/* whole unchanged blocks of one RAW chunk: one read */
				uint64_t k = 1, most = len / s->blksz;
				while (k < most && blk + k < c->start + c->nblk && !ic_changed(s, blk + k))
					k++;
				if (!ic_pread_all(s->fd, rbuf, k * s->blksz, c->off + (blk - c->start) * s->blksz))
					return ic_read_error();
				rbuf = (char *)rbuf + k * s->blksz;
				off += k * s->blksz;
				len -= k * s->blksz;
				continue;
			}
			if ((rc = ic_get_block(s, blk, s->blk)))
				return rc;
			memcpy(rbuf, s->blk + boff, n);
			rbuf = (char *)rbuf + n;
		} else {
			if (n < s->blksz && (rc = ic_get_block(s, blk, s->blk)))
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

/* ---- the io_manager ---- */

static struct imgcopy *priv(io_channel ch)
{
	return ch->private_data;
}

static void ic_free(struct imgcopy *s)
{
	if (!s)
		return;
	if (last_rw == s)
		last_rw = NULL;
	if (s->fd >= 0)
		close(s->fd);
	if (s->ofd >= 0)
		close(s->ofd);
	ic_join_copy(s);
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
	if (s->fmt && s->fmt->free_data)
		s->fmt->free_data(s->fmt_data);
	free(s);
}

/* The overlay: an unnamed file beside the output that holds the changed blocks (O_TMPFILE where
 * the file system allows it; else named, and unlinked at once: a kill between the two leaves
 * the name behind). */
static errcode_t make_overlay(struct imgcopy *s)
{
	char *d = strdup(s->out), *t = NULL;
	const char *dir = d ? dirname(d) : NULL;
	errcode_t rc = 0;
	if (!dir || asprintf(&t, "%s/.fclabel-overlay-XXXXXX", dir) < 0) {
		free(d);
		return ENOMEM;
	}
	s->ofd = -1;
#ifdef O_TMPFILE
	s->ofd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
#endif
	if (s->ofd < 0) {
		s->ofd = mkstemp(t);
		rc = errno;
		if (s->ofd >= 0)
			unlink(t);
	}
	free(t);
	free(d);
	if (s->ofd < 0)
		return ic_fail(rc, "%s: cannot create a temporary file beside it: %s", s->out,
			       strerror(rc));
	return 0;
}

errcode_t ic_open(const char *name, int flags, io_channel *channel,
		  const struct imgcopy_format *fmt, io_manager manager)
{
	struct imgcopy *s = calloc(1, sizeof(*s));
	io_channel ch = calloc(1, sizeof(*ch));
	errcode_t rc = ENOMEM;

	ic_clear_error();
	if (!s || !ch)
		goto fail;
	s->ofd = -1;
	s->tfd = -1;
	s->rw = flags & IO_FLAG_RW;
	s->fmt = fmt;
	/* the input is only read: the result replaces it by rename */
	s->fd = open(name, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (s->fd < 0 || fstat(s->fd, &st) < 0) {
		rc = errno;
		goto fail;
	}
	s->in_dev = st.st_dev;
	s->in_ino = st.st_ino;
	s->raw = !fmt->rewrite;
	if ((rc = fmt->parse(s, name)))
		goto fail;
	s->blk = malloc(s->blksz);
	s->out = strdup(output_path ? output_path : name);
	s->out_differs = output_path && strcmp(output_path, name);
	ch->name = strdup(name);
	if (!s->blk || !s->out || !ch->name) {
		rc = ENOMEM;
		goto fail;
	}
	if (s->rw && (rc = make_overlay(s)))
		goto fail;
	if (s->rw)
		last_rw = s;
	ch->magic = EXT2_ET_MAGIC_IO_CHANNEL;
	ch->manager = manager;
	ch->block_size = 1024;
	ch->refcount = 1;
	ch->private_data = s;
	*channel = ch;
	return 0;
fail:
	if (ch)
		free(ch->name);
	free(ch);
	ic_free(s);
	return rc;
}

static const struct imgcopy_format raw_format = { .parse = raw_parse };

static errcode_t rp_open(const char *name, int flags, io_channel *channel)
{
	/* another file opened through us (undo_io opens its undo file with its backing manager)
	 * is a plain file */
	if (replace_image && strcmp(name, replace_image))
		return unix_io_manager->open(name, flags, channel);
	return ic_open(name, flags, channel, &raw_format, imgfmt_replace_manager);
}

void imgfmt_discard(io_channel channel)
{
	channel = imgfmt_inner_channel(channel);
	/* (the caller may have put a copy of the manager in place: its open tells; under another
	 * manager, undo_io's, the image is the one open read-write) */
	if (channel && channel->manager->close == ic_close)
		priv(channel)->discard = true;
	else if (channel && last_rw)
		last_rw->discard = true;
}

errcode_t ic_close(io_channel ch)
{
	struct imgcopy *s = priv(ch);
	errcode_t rc = 0;

	if (--ch->refcount > 0)
		return 0;
	if (s->rw && s->dirty && !s->discard)
		rc = ic_write_result(s);
	ic_free(s);
	free(ch->name);
	free(ch);
	return rc;
}

errcode_t ic_set_blksize(io_channel ch, int blksize)
{
	struct imgcopy *s = priv(ch);
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
		s->blksz = (uint32_t)blksize;
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

errcode_t ic_read64(io_channel ch, unsigned long long block, int count, void *data)
{
	return rw_bytes(priv(ch), block * (uint64_t)ch->block_size, span(ch, count), data, NULL);
}

errcode_t ic_write64(io_channel ch, unsigned long long block, int count, const void *data)
{
	if (!priv(ch)->rw)
		return EXT2_ET_RO_FILSYS;
	return rw_bytes(priv(ch), block * (uint64_t)ch->block_size, span(ch, count), NULL, data);
}

errcode_t ic_read(io_channel ch, unsigned long block, int count, void *data)
{
	return ic_read64(ch, block, count, data);
}

errcode_t ic_write(io_channel ch, unsigned long block, int count, const void *data)
{
	return ic_write64(ch, block, count, data);
}

errcode_t ic_write_byte(io_channel ch, unsigned long offset, int count, const void *data)
{
	if (!priv(ch)->rw)
		return EXT2_ET_RO_FILSYS;
	return rw_bytes(priv(ch), offset, (size_t)count, NULL, data);
}

errcode_t ic_flush(io_channel ch)
{
	(void)ch;
	return 0;
}

errcode_t ic_set_option(io_channel ch, const char *option, const char *arg)
{
	(void)ch;
	(void)option;
	(void)arg;
	return EXT2_ET_INVALID_ARGUMENT;
}

static struct struct_io_manager replace_manager = {
	IC_SHARED_OPS,
	.name = "Raw image replaced whole I/O manager",
	.open = rp_open,
};

io_manager imgfmt_replace_manager = &replace_manager;
