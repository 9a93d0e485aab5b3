/*
 * One partition of a disk image, as an io_manager: the file system it holds is read and written
 * as if it began at byte 0 of the channel, every block moved by the partition's offset, and no
 * read or write leaves the partition's range (one that would is refused, so that every byte
 * outside it stays as it was whatever a damaged pointer in the file system says). It sits right
 * above the manager of the image's format (the raw file, the Android sparse reader, the copy
 * writer), below undo_io, the tracked manager and the overlay: everything above sees a plain
 * file system, everything below a whole disk.
 *
 * A partition starts on a sector (512 bytes), not always on a file system block (an MBR
 * partition at sector 63), so the channel below is given the largest block size that divides
 * both the offset and the file system's block size: a block of the file system is then a whole
 * number of the lower channel's blocks, and the translation stays exact.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static io_manager next_inner;
static uint64_t next_off, next_len;
static char *next_name;

void imgfmt_set_part(io_manager inner, const char *image, uint64_t offset, uint64_t size)
{
	free(next_name);
	next_name = image ? strdup(image) : NULL;
	next_inner = inner;
	next_off = offset;
	next_len = size;
}

struct part {
	io_channel in;
	uint64_t off, len; /* bytes */
	unsigned unit;     /* the lower channel's block size */
};

static struct part *part_of(io_channel ch)
{
	return ch->private_data;
}

/* The largest power of two dividing both the offset and bs (bs itself at offset 0). */
static unsigned unit_for(uint64_t off, unsigned bs)
{
	unsigned u = bs;
	while (u > 1 && off % u)
		u >>= 1;
	return u ? u : 1;
}

static errcode_t pt_open(const char *name, int flags, io_channel *channel)
{
	io_channel ch = calloc(1, sizeof(*ch));
	struct part *p = calloc(1, sizeof(*p));
	errcode_t rc = ENOMEM;

	if (!ch || !p || !(ch->name = strdup(name)))
		goto fail;
	if (!next_inner) {
		rc = EXT2_ET_INVALID_ARGUMENT;
		goto fail;
	}
	/* any other file opened through it (undo_io opens its undo file through the manager below
	 * it) is that file whole, from its first byte */
	if (!next_name || strcmp(name, next_name)) {
		free(ch->name);
		free(ch);
		free(p);
		return next_inner->open(name, flags, channel);
	}
	if ((rc = next_inner->open(name, flags, &p->in)))
		goto fail;
	p->off = next_off;
	p->len = next_len;
	ch->magic = EXT2_ET_MAGIC_IO_CHANNEL;
	ch->manager = imgfmt_part_manager;
	ch->block_size = p->in->block_size;
	ch->refcount = 1;
	ch->flags = p->in->flags;
	ch->align = p->in->align;
	ch->private_data = p;
	p->unit = unit_for(p->off, (unsigned)ch->block_size);
	if (p->unit != (unsigned)p->in->block_size &&
	    (rc = io_channel_set_blksize(p->in, (int)p->unit))) {
		io_channel_close(p->in);
		goto fail;
	}
	*channel = ch;
	return 0;
fail:
	if (ch)
		free(ch->name);
	free(ch);
	free(p);
	return rc;
}

static errcode_t pt_close(io_channel ch)
{
	if (--ch->refcount > 0)
		return 0;
	struct part *p = part_of(ch);
	errcode_t rc = io_channel_close(p->in);
	free(p);
	free(ch->name);
	free(ch);
	return rc;
}

static errcode_t pt_set_blksize(io_channel ch, int blksize)
{
	struct part *p = part_of(ch);
	unsigned u = unit_for(p->off, (unsigned)blksize);
	errcode_t rc = io_channel_set_blksize(p->in, (int)u);
	if (!rc) {
		ch->block_size = blksize;
		p->unit = u;
	}
	return rc;
}

/* Where block..+count of this channel is in the lower one (*lblk, *lcount), or false when any
 * of it lies outside the partition. (A negative count is a length in bytes, as libext2fs has
 * it, and stays one below.) */
static bool place(io_channel ch, unsigned long long block, int count, unsigned long long *lblk,
		  int *lcount)
{
	struct part *p = part_of(ch);
	uint64_t bs = (uint64_t)ch->block_size;
	uint64_t bytes = count < 0 ? (uint64_t)-(int64_t)count : (uint64_t)count * bs;
	uint64_t pos = (uint64_t)block * bs;

	if (block > UINT64_MAX / bs || pos > p->len || bytes > p->len - pos)
		return false;
	*lblk = (p->off + pos) / p->unit;
	*lcount = count < 0 ? count : (int)(bytes / p->unit);
	return true;
}

static errcode_t pt_read64(io_channel ch, unsigned long long block, int count, void *data)
{
	unsigned long long lb;
	int lc;
	if (!place(ch, block, count, &lb, &lc)) {
		/* as a file read past its end: zeros, and a short read (a damaged pointer, which the
		 * caller reports) */
		memset(data, 0, count < 0 ? (size_t)-count : (size_t)count * (size_t)ch->block_size);
		return EXT2_ET_SHORT_READ;
	}
	return io_channel_read_blk64(part_of(ch)->in, lb, lc, data);
}

static errcode_t pt_write64(io_channel ch, unsigned long long block, int count, const void *data)
{
	unsigned long long lb;
	int lc;
	/* never a byte outside the partition: the next partition's data is there */
	if (!place(ch, block, count, &lb, &lc))
		return EXT2_ET_SHORT_WRITE;
	return io_channel_write_blk64(part_of(ch)->in, lb, lc, data);
}

static errcode_t pt_read(io_channel ch, unsigned long block, int count, void *data)
{
	return pt_read64(ch, block, count, data);
}

static errcode_t pt_write(io_channel ch, unsigned long block, int count, const void *data)
{
	return pt_write64(ch, block, count, data);
}

static errcode_t pt_write_byte(io_channel ch, unsigned long offset, int count, const void *data)
{
	struct part *p = part_of(ch);
	io_channel in = p->in;
	if (count < 0 || offset > p->len || (uint64_t)count > p->len - offset)
		return EXT2_ET_SHORT_WRITE;
	if (!in->manager->write_byte)
		return EXT2_ET_UNIMPLEMENTED;
	return in->manager->write_byte(in, (unsigned long)(p->off + offset), count, data);
}

static errcode_t pt_flush(io_channel ch)
{
	return io_channel_flush(part_of(ch)->in);
}

static errcode_t pt_set_option(io_channel ch, const char *option, const char *arg)
{
	io_channel in = part_of(ch)->in;
	/* (an offset of libext2fs's own would move the lower channel under us) */
	if (!strcmp(option, "offset"))
		return EXT2_ET_INVALID_ARGUMENT;
	return in->manager->set_option ? in->manager->set_option(in, option, arg)
				       : EXT2_ET_INVALID_ARGUMENT;
}

/* The range operations go through only when a block here is a block below (an offset on a
 * block boundary), inside the partition; else they are not done, which libext2fs allows. */
static bool range(io_channel ch, unsigned long long *block, unsigned long long count)
{
	struct part *p = part_of(ch);
	uint64_t bs = (uint64_t)ch->block_size;
	if (p->unit != bs || count > p->len / bs || *block > p->len / bs - count)
		return false;
	*block += p->off / bs;
	return true;
}

static errcode_t pt_discard(io_channel ch, unsigned long long block, unsigned long long count)
{
	io_channel in = part_of(ch)->in;
	if (!in->manager->discard || !range(ch, &block, count))
		return EXT2_ET_UNIMPLEMENTED;
	return in->manager->discard(in, block, count);
}

static errcode_t pt_cache_readahead(io_channel ch, unsigned long long block,
				    unsigned long long count)
{
	io_channel in = part_of(ch)->in;
	if (!in->manager->cache_readahead || !range(ch, &block, count))
		return EXT2_ET_UNIMPLEMENTED;
	return in->manager->cache_readahead(in, block, count);
}

static errcode_t pt_zeroout(io_channel ch, unsigned long long block, unsigned long long count)
{
	io_channel in = part_of(ch)->in;
	if (!in->manager->zeroout || !range(ch, &block, count))
		return EXT2_ET_UNIMPLEMENTED;
	return in->manager->zeroout(in, block, count);
}

io_channel imgfmt_part_lower(io_channel ch)
{
	return ch && ch->manager == imgfmt_part_manager ? part_of(ch)->in : ch;
}

static struct struct_io_manager part_manager = {
	.magic = EXT2_ET_MAGIC_IO_MANAGER,
	.name = "fclabel partition I/O manager",
	.open = pt_open,
	.close = pt_close,
	.set_blksize = pt_set_blksize,
	.read_blk = pt_read,
	.write_blk = pt_write,
	.flush = pt_flush,
	.write_byte = pt_write_byte,
	.set_option = pt_set_option,
	.read_blk64 = pt_read64,
	.write_blk64 = pt_write64,
	.discard = pt_discard,
	.cache_readahead = pt_cache_readahead,
	.zeroout = pt_zeroout,
};

io_manager imgfmt_part_manager = &part_manager;
