/*
 * Writes in place, made durable as a crash needs them. An image written in place is opened
 * through this manager, around the tracked one; until imgfmt_overlay_begin it passes everything
 * through. From then on every write is held in memory (reads see it), and a commit makes what is
 * held durable in one of two ways:
 *
 * - through the image's jbd2 journal (journal.c): the held blocks are one transaction, logged and
 *   committed, then written to their places (a checkpoint). A kill at any write leaves either the
 *   state before the commit block reached the disk or the one after: the next mount, e2fsck or
 *   fclabel replays the log. While this runs the superblock carries needs_recovery (in every copy
 *   of it written), so that nobody discards the log; it is cleared once the log is empty.
 *
 * - in order, where there is no journal: first the new contents (attribute blocks, references
 *   added, quota charged), then what records the blocks taken (bitmaps, descriptors, superblock),
 *   then the inode tables, each set on disk before the next begins. The caller holds back what must come
 *   after the inodes (references dropped, blocks freed) to a commit of its own. A kill then leaves
 *   at most blocks marked in use that nothing uses, counts one too high: a leak, which the next
 *   run repairs. While this runs the superblock says the file system is not clean (VALID_FS
 *   clear), which tells the next run (and e2fsck) to look.
 *
 * A block written with the contents it has on disk is not held. Nothing here prints.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define SB_OFFSET 1024
#define SB_STATE 0x3a
#define SB_INCOMPAT 0x60
#define SB_RO_COMPAT 0x64
#define SB_CHECKSUM 0x3fc
#define INCOMPAT_RECOVER 0x4u
#define RO_COMPAT_METADATA_CSUM 0x400u
#define STATE_VALID 0x1u

struct ov {
	io_channel in;      /* the channel below */
	bool active;
	int mode;           /* IMGFMT_OV_JOURNAL or IMGFMT_OV_ORDERED */
	unsigned bs;
	bool sync;
	struct imgfmt_journal *j;
	int (*order)(void *arg, uint64_t blk);
	void *order_arg;
	int64_t now;
	/* the blocks held: blk[i] and its data at data + i * bs; idx: open addressing on the
	 * block number, i + 1 (0: empty) */
	uint64_t *blk;
	char *data;
	size_t n, cap;
	struct imgfmt_pages pg; /* data's pages, made ahead of the writes (pages.c) */
	uint32_t *idx;
	size_t mask;
	uint64_t sb_blk;    /* the block holding the primary superblock, and where in it */
	unsigned sb_off;
	bool was_valid;     /* ordered: the superblock said VALID_FS at the start */
	bool marked;        /* the superblock on disk carries the marker */
	errcode_t failed;   /* a commit failed: nothing more is written */
	char *tmp, *tmp2;
	char *run;          /* RUN blocks: a commit's writes gathered, the log's and the homes' */
	struct imgfmt_writeback wb; /* (its fd our own duplicate) */
	/* imgfmt_read_kept: bytes [kept_off, kept_off + kept_len) as the channel below had them
	 * when imgfmt_writes_below() said kept_gen */
	char *kept;
	size_t kept_cap, kept_len;
	uint64_t kept_off;
	unsigned long kept_gen;
	struct imgfmt_overlay_stats st;
};

/* Blocks a write takes at most. */
enum { RUN = 256 };

static struct ov *ov_of(io_channel ch)
{
	return ch->private_data;
}

static io_manager overlay_inner;

void imgfmt_set_overlay_inner(io_manager inner)
{
	overlay_inner = inner;
}

io_channel imgfmt_overlay_lower(io_channel ch)
{
	return ch && ch->manager == imgfmt_overlay_manager ? ov_of(ch)->in : ch;
}

/* ---- the held blocks ---- */

static size_t slot_of(const struct ov *o, uint64_t blk)
{
	return (size_t)((blk * 0x9e3779b97f4a7c15ull) >> 32) & o->mask;
}

static char *held(const struct ov *o, uint64_t blk)
{
	if (!o->n)
		return NULL;
	for (size_t b = slot_of(o, blk);; b = (b + 1) & o->mask) {
		if (!o->idx[b])
			return NULL;
		if (o->blk[o->idx[b] - 1] == blk)
			return o->data + (size_t)(o->idx[b] - 1) * o->bs;
	}
}

static errcode_t grow(struct ov *o)
{
	size_t cap = o->cap ? o->cap * 2 : 256;
	uint64_t *nb = realloc(o->blk, cap * sizeof(*nb));
	if (!nb)
		return ENOMEM;
	o->blk = nb;
	char *nd = realloc(o->data, cap * (size_t)o->bs);
	if (!nd)
		return ENOMEM;
	o->data = nd;
	pages_grown(&o->pg, nd, cap * (size_t)o->bs);
	size_t mask = 1;
	while (mask < cap * 2)
		mask <<= 1;
	uint32_t *ni = calloc(mask, sizeof(*ni));
	if (!ni)
		return ENOMEM;
	free(o->idx);
	o->idx = ni;
	o->mask = mask - 1;
	o->cap = cap;
	for (size_t i = 0; i < o->n; i++) {
		size_t b = slot_of(o, o->blk[i]);
		while (o->idx[b])
			b = (b + 1) & o->mask;
		o->idx[b] = (uint32_t)(i + 1);
	}
	return 0;
}

static void drop_all(struct ov *o)
{
	if (o->idx)
		memset(o->idx, 0, (o->mask + 1) * sizeof(*o->idx));
	o->n = 0;
}

/* Reads len bytes at byte offset off from the channel below, whatever its block size now. */
static errcode_t lower_read(struct ov *o, uint64_t off, size_t len, char *buf)
{
	unsigned ibs = (unsigned)o->in->block_size;
	return io_channel_read_blk64(o->in, off / ibs, -(int)len, buf);
}

static errcode_t lower_write(struct ov *o, uint64_t off, size_t len, const char *buf)
{
	unsigned ibs = (unsigned)o->in->block_size;
	errcode_t rc = io_channel_write_blk64(o->in, off / ibs, -(int)len, buf);
	if (!rc)
		imgfmt_writeback_start(&o->wb, off, len);
	return rc;
}

static void writeback_close(struct ov *o)
{
	if (o->wb.fd >= 0)
		close(o->wb.fd);
	o->wb.fd = -1;
	if (o->j)
		imgfmt_journal_set_writeback(o->j, NULL);
}

/* Block blk as the channel below has it: where imgfmt_read_kept kept it, while nothing has
 * been written below since, else read into buf. NULL: *rc says why. */
static const char *lower_block(struct ov *o, uint64_t blk, char *buf, errcode_t *rc)
{
	uint64_t off = blk * o->bs;
	if (o->kept_len && off >= o->kept_off && off - o->kept_off + o->bs <= o->kept_len &&
	    o->kept_gen == imgfmt_writes_below())
		return o->kept + (off - o->kept_off);
	return (*rc = lower_read(o, off, o->bs, buf)) ? NULL : buf;
}

/* The marker the superblock carries while writes are under way, set or taken off, and its
 * checksum made right. */
static void sb_mark(const struct ov *o, char *sb, bool on)
{
	uint32_t v;
	if (o->mode == IMGFMT_OV_JOURNAL) {
		memcpy(&v, sb + SB_INCOMPAT, 4);
		v = ext2fs_le32_to_cpu(v);
		v = on ? v | INCOMPAT_RECOVER : v & ~INCOMPAT_RECOVER;
		v = ext2fs_cpu_to_le32(v);
		memcpy(sb + SB_INCOMPAT, &v, 4);
	} else {
		uint16_t s;
		memcpy(&s, sb + SB_STATE, 2);
		s = ext2fs_le16_to_cpu(s);
		s = on ? s & ~STATE_VALID : (o->was_valid ? s | STATE_VALID : s);
		s = ext2fs_cpu_to_le16(s);
		memcpy(sb + SB_STATE, &s, 2);
	}
	memcpy(&v, sb + SB_RO_COMPAT, 4);
	if (ext2fs_le32_to_cpu(v) & RO_COMPAT_METADATA_CSUM) {
		v = ext2fs_cpu_to_le32(imgfmt_crc32c(~0u, sb, SB_CHECKSUM));
		memcpy(sb + SB_CHECKSUM, &v, 4);
	}
}

/* A new held block blk, its contents to be filled: where they go (NULL: *rc says why). */
static char *add(struct ov *o, uint64_t blk, errcode_t *rc)
{
	if (o->n == o->cap && (*rc = grow(o)))
		return NULL;
	pages_use(&o->pg, o->data, (o->n + 1) * (size_t)o->bs, o->cap * (size_t)o->bs);
	size_t b = slot_of(o, blk);
	while (o->idx[b])
		b = (b + 1) & o->mask;
	o->blk[o->n] = blk;
	o->idx[b] = (uint32_t)++o->n;
	return o->data + (o->n - 1) * (size_t)o->bs;
}

/* Holds data as block blk's new contents (unless it is what the disk has). */
static errcode_t hold(struct ov *o, uint64_t blk, const char *data)
{
	char *h = held(o, blk);
	const char *src = data;
	errcode_t rc;

	if (blk == o->sb_blk) {
		if (src != o->tmp2)
			memcpy(o->tmp2, data, o->bs);
		sb_mark(o, o->tmp2 + o->sb_off, true);
		src = o->tmp2;
	}
	if (h) {
		if (h != src)
			memcpy(h, src, o->bs);
		return 0;
	}
	const char *disk = lower_block(o, blk, o->tmp, &rc);
	if (!disk)
		return rc;
	if (!memcmp(disk, src, o->bs))
		return 0;
	if (!(h = add(o, blk, &rc)))
		return rc;
	memcpy(h, src, o->bs);
	return 0;
}

/* A part of block blk that is not held, written: merged into what the disk has, read once (a
 * label in an inode, the first in its block). */
static errcode_t hold_part(struct ov *o, uint64_t blk, size_t from, size_t n, const char *data)
{
	errcode_t rc = 0;
	const char *disk = lower_block(o, blk, o->tmp2, &rc);
	char *h;

	if (!disk || !memcmp(disk + from, data, n))
		return rc;
	if (!(h = add(o, blk, &rc)))
		return rc;
	memcpy(h, disk, o->bs);
	memcpy(h + from, data, n);
	return 0;
}

/* Bytes [off, off + len) written: whole blocks held as they come, partial ones merged into
 * what is held or on disk. */
static errcode_t write_bytes(struct ov *o, uint64_t off, size_t len, const char *data)
{
	errcode_t rc = 0;
	for (uint64_t b = off / o->bs; len && !rc; b++) {
		uint64_t bstart = b * o->bs;
		size_t from = (size_t)(off - bstart), n = o->bs - from;
		if (n > len)
			n = len;
		char *h;
		if (!from && n == o->bs) {
			rc = hold(o, b, data);
		} else if (b != o->sb_blk && (h = held(o, b))) {
			/* (a label in an inode: the bytes alone, not the block twice) */
			memcpy(h + from, data, n);
		} else if (b != o->sb_blk) {
			rc = hold_part(o, b, from, n, data);
		} else {
			h = held(o, b);
			if (h) {
				memcpy(o->tmp2, h, o->bs);
			} else if ((rc = lower_read(o, bstart, o->bs, o->tmp2))) {
				break;
			}
			memcpy(o->tmp2 + from, data, n);
			rc = hold(o, b, o->tmp2);
		}
		off += n;
		data += n;
		len -= n;
	}
	return rc;
}

/* ---- making it durable ---- */

struct held_ref {
	uint64_t blk;
	size_t i;
};

static int cmp_ref(const void *a, const void *b)
{
	uint64_t x = ((const struct held_ref *)a)->blk, y = ((const struct held_ref *)b)->blk;
	return x < y ? -1 : x > y;
}

/* The held blocks' indexes, in the order of their block numbers. */
static size_t *sorted(const struct ov *o)
{
	struct held_ref *r = malloc(o->n * sizeof(*r));
	size_t *ord = malloc(o->n * sizeof(*ord));
	if (!r || !ord) {
		free(r);
		free(ord);
		return NULL;
	}
	for (size_t i = 0; i < o->n; i++)
		r[i] = (struct held_ref){ o->blk[i], i };
	qsort(r, o->n, sizeof(*r), cmp_ref);
	for (size_t i = 0; i < o->n; i++)
		ord[i] = r[i].i;
	free(r);
	return ord;
}

/* Writes the held blocks of ord[] of one class (IMGFMT_ORDER_*; -1: all) to their places, runs
 * of consecutive blocks in one write. */
static errcode_t write_home(struct ov *o, const size_t *ord, int which)
{
	char *run = o->run;
	uint64_t first = 0;
	size_t nrun = 0;
	errcode_t rc = 0;

	for (size_t k = 0; k <= o->n && !rc; k++) {
		bool take = false;
		size_t i = 0;
		if (k < o->n) {
			i = ord[k];
			take = which < 0 || (o->order ? o->order(o->order_arg, o->blk[i])
						      : IMGFMT_ORDER_CONTENTS) == which;
		}
		if (nrun && (!take || o->blk[i] != first + nrun || nrun == RUN)) {
			rc = lower_write(o, first * o->bs, nrun * o->bs, run);
			o->st.home_writes++;
			nrun = 0;
		}
		if (!take || rc)
			continue;
		if (!nrun)
			first = o->blk[i];
		memcpy(run + nrun * (size_t)o->bs, o->data + i * (size_t)o->bs, o->bs);
		nrun++;
	}
	return rc;
}

static errcode_t barrier(struct ov *o)
{
	o->st.barriers += o->sync;
	return o->sync ? io_channel_flush(o->in) : 0;
}

struct jdata {
	const struct ov *o;
	const size_t *ord;
};

static const char *jdata_at(void *arg, size_t k)
{
	const struct jdata *d = arg;
	return d->o->data + d->ord[k] * (size_t)d->o->bs;
}

static errcode_t write_marker(struct ov *o, bool on);

static errcode_t commit(struct ov *o)
{
	errcode_t rc;
	if (o->failed)
		return o->failed;
	if (!o->n)
		return 0;
	if (!o->marked) {
		/* the first write of the run: the marker goes first */
		if ((rc = write_marker(o, true))) {
			o->failed = rc;
			return rc;
		}
		o->marked = true;
	}
	/* (kept from commit to commit: its pages are touched once) */
	if (!o->run && !(o->run = malloc((size_t)RUN * o->bs)))
		return ENOMEM;
	size_t *ord = sorted(o);
	if (!ord)
		return ENOMEM;
	if (o->mode == IMGFMT_OV_JOURNAL) {
		uint64_t *blks = malloc(o->n * sizeof(*blks));
		struct jdata d = { o, ord };
		rc = blks ? 0 : ENOMEM;
		for (size_t k = 0; !rc && k < o->n; k++)
			blks[k] = o->blk[ord[k]];
		if (!rc)
			rc = imgfmt_journal_commit(o->j, blks, o->n, jdata_at, &d, o->now, o->sync,
						   o->run, (size_t)RUN * o->bs);
		free(blks);
		o->st.barriers += 2 * o->sync;
		/* checkpoint: a kill from here on is replayed */
		if (!rc && !(rc = write_home(o, ord, -1)))
			rc = barrier(o);
		o->st.transactions += !rc;
	} else {
		/* new contents, then what says their blocks are taken, then the inodes */
		for (int c = IMGFMT_ORDER_CONTENTS; c <= IMGFMT_ORDER_INODES && !rc; c++)
			if (!(rc = write_home(o, ord, c)))
				rc = barrier(o);
	}
	o->st.blocks += rc ? 0 : o->n;
	free(ord);
	if (rc) {
		o->failed = rc;
		return rc;
	}
	o->st.commits++;
	drop_all(o);
	return 0;
}

/* Writes the primary superblock from the disk's copy, with the marker on or off. */
static errcode_t write_marker(struct ov *o, bool on)
{
	errcode_t rc = lower_read(o, o->sb_blk * o->bs, o->bs, o->tmp);
	if (rc)
		return rc;
	if (on) {
		uint16_t s;
		memcpy(&s, o->tmp + o->sb_off + SB_STATE, 2);
		o->was_valid = ext2fs_le16_to_cpu(s) & STATE_VALID;
	}
	sb_mark(o, o->tmp + o->sb_off, on);
	if ((rc = lower_write(o, o->sb_blk * o->bs, o->bs, o->tmp)))
		return rc;
	return barrier(o);
}

errcode_t imgfmt_overlay_begin(io_channel ch, const struct imgfmt_overlay_params *p)
{
	if (ch->manager != imgfmt_overlay_manager)
		return EXT2_ET_INVALID_ARGUMENT;
	struct ov *o = ov_of(ch);

	if (o->active)
		return EXT2_ET_INVALID_ARGUMENT;
	o->mode = p->mode;
	o->bs = p->blocksize;
	o->sync = p->sync;
	o->j = p->journal;
	o->order = p->order;
	o->order_arg = p->order_arg;
	o->now = p->now;
	o->sb_blk = SB_OFFSET / o->bs;
	o->sb_off = SB_OFFSET % o->bs;
	free(o->tmp);
	free(o->tmp2);
	free(o->run);
	o->run = NULL; /* (sized for this block size at the first commit) */
	if (!(o->tmp = malloc(o->bs)) || !(o->tmp2 = malloc(o->bs)))
		return ENOMEM;
	if (o->mode == IMGFMT_OV_JOURNAL && !o->j)
		return EXT2_ET_INVALID_ARGUMENT;
	writeback_close(o);
	o->wb.base = p->writeback_base;
	/* (without sync nothing waits for the disk: the kernel writes back when it likes) */
	if (o->sync && p->writeback_fd >= 0)
		o->wb.fd = fcntl(p->writeback_fd, F_DUPFD_CLOEXEC, 3);
	if (o->j)
		imgfmt_journal_set_writeback(o->j, &o->wb);
	/* this layer is the write cache now: what goes below goes there in the order given */
	if (o->in->manager->set_option)
		(void)o->in->manager->set_option(o->in, "cache", "off");
	o->active = true;
	return 0;
}

void imgfmt_overlay_set_order(io_channel ch, int (*order)(void *arg, uint64_t blk), void *arg)
{
	if (ch->manager != imgfmt_overlay_manager)
		return;
	ov_of(ch)->order = order;
	ov_of(ch)->order_arg = arg;
}

errcode_t imgfmt_overlay_commit(io_channel ch)
{
	if (ch->manager != imgfmt_overlay_manager || !ov_of(ch)->active)
		return 0;
	return commit(ov_of(ch));
}

size_t imgfmt_overlay_held(io_channel ch)
{
	return ch->manager == imgfmt_overlay_manager ? ov_of(ch)->n : 0;
}

bool imgfmt_overlay_active(io_channel ch)
{
	return ch->manager == imgfmt_overlay_manager && ov_of(ch)->active;
}

void imgfmt_overlay_discard(io_channel ch)
{
	if (ch->manager != imgfmt_overlay_manager)
		return;
	drop_all(ov_of(ch));
}

void imgfmt_overlay_abort(io_channel ch)
{
	if (ch->manager != imgfmt_overlay_manager)
		return;
	struct ov *o = ov_of(ch);
	drop_all(o);
	writeback_close(o);
	pages_stop(&o->pg);
	o->active = false; /* (the marker stays: the disk may be between two commits' steps) */
}

errcode_t imgfmt_overlay_end(io_channel ch, struct imgfmt_overlay_stats *st)
{
	if (ch->manager != imgfmt_overlay_manager)
		return 0;
	struct ov *o = ov_of(ch);
	errcode_t rc = 0;
	if (st)
		*st = o->st;
	if (!o->active)
		return 0;
	rc = commit(o);
	if (!rc && o->marked && o->mode == IMGFMT_OV_JOURNAL)
		rc = imgfmt_journal_reset(o->j, o->sync);
	if (!rc && o->marked)
		rc = write_marker(o, false);
	if (!rc)
		o->marked = false;
	else
		o->failed = rc;
	writeback_close(o);
	pages_stop(&o->pg);
	o->active = false;
	if (st)
		*st = o->st;
	return rc;
}

/* ---- the manager ---- */

static errcode_t ov_open(const char *name, int flags, io_channel *channel)
{
	io_channel ch = calloc(1, sizeof(*ch)), in = NULL;
	struct ov *o = calloc(1, sizeof(*o));
	errcode_t rc = ENOMEM;

	if (!ch || !o || !(ch->name = strdup(name)))
		goto fail;
	if ((rc = overlay_inner->open(name, flags, &in)))
		goto fail;
	o->in = in;
	o->wb.fd = -1;
	ch->magic = EXT2_ET_MAGIC_IO_CHANNEL;
	ch->manager = imgfmt_overlay_manager;
	ch->block_size = in->block_size;
	ch->refcount = 1;
	ch->flags = in->flags;
	ch->align = in->align;
	ch->private_data = o;
	*channel = ch;
	return 0;
fail:
	if (ch)
		free(ch->name);
	free(ch);
	free(o);
	return rc;
}

static errcode_t ov_close(io_channel ch)
{
	if (--ch->refcount > 0)
		return 0;
	struct ov *o = ov_of(ch);
	errcode_t rc = io_channel_close(o->in);
	pages_stop(&o->pg);
	free(o->kept);
	if (o->wb.fd >= 0)
		close(o->wb.fd);
	free(o->blk);
	free(o->data);
	free(o->idx);
	free(o->tmp);
	free(o->tmp2);
	free(o->run);
	free(o);
	free(ch->name);
	free(ch);
	return rc;
}

static errcode_t ov_set_blksize(io_channel ch, int blksize)
{
	errcode_t rc = io_channel_set_blksize(ov_of(ch)->in, blksize);
	if (!rc)
		ch->block_size = blksize;
	return rc;
}

static size_t span(io_channel ch, int count)
{
	return count < 0 ? (size_t)-count : (size_t)count * (size_t)ch->block_size;
}

/* What is held of the blocks read into data (as the channel below had them) put over it. */
static void merge_held(struct ov *o, io_channel ch, unsigned long long block, int count,
		       void *data)
{
	if (!o->active || !o->n)
		return;
	uint64_t off = block * (uint64_t)ch->block_size;
	size_t len = span(ch, count);
	for (uint64_t b = off / o->bs; b * o->bs < off + len; b++) {
		const char *h = held(o, b);
		if (!h)
			continue;
		uint64_t s = b * o->bs > off ? b * o->bs : off;
		uint64_t e = (b + 1) * o->bs < off + len ? (b + 1) * o->bs : off + len;
		memcpy((char *)data + (s - off), h + (s - b * o->bs), (size_t)(e - s));
	}
}

static errcode_t ov_read64(io_channel ch, unsigned long long block, int count, void *data)
{
	struct ov *o = ov_of(ch);
	errcode_t rc = io_channel_read_blk64(o->in, block, count, data);
	if (!rc)
		merge_held(o, ch, block, count, data);
	return rc;
}

/* (a copy of a chunk just read, in the core's cache: a tenth of what reading each block again
 * cost, a syscall and a copy out of the page cache each) */
errcode_t imgfmt_read_kept(io_channel ch, unsigned long long block, int count, void *data)
{
	if (ch->manager != imgfmt_overlay_manager || !ov_of(ch)->active)
		return io_channel_read_blk64(ch, block, count, data);
	struct ov *o = ov_of(ch);
	size_t len = span(ch, count);
	unsigned long gen = imgfmt_writes_below();
	errcode_t rc = io_channel_read_blk64(o->in, block, count, data);
	o->kept_len = 0;
	if (rc)
		return rc;
	if (len > o->kept_cap) {
		char *k = realloc(o->kept, len);
		if (k) {
			o->kept = k;
			o->kept_cap = len;
		}
	}
	if (len <= o->kept_cap) {
		memcpy(o->kept, data, len);
		o->kept_off = block * (uint64_t)ch->block_size;
		o->kept_len = len;
		o->kept_gen = gen;
	}
	merge_held(o, ch, block, count, data);
	return 0;
}

static errcode_t ov_write64(io_channel ch, unsigned long long block, int count, const void *data)
{
	struct ov *o = ov_of(ch);
	if (!o->active)
		return io_channel_write_blk64(o->in, block, count, data);
	if (o->failed)
		return o->failed;
	return write_bytes(o, block * (uint64_t)ch->block_size, span(ch, count), data);
}

static errcode_t ov_read(io_channel ch, unsigned long block, int count, void *data)
{
	return ov_read64(ch, block, count, data);
}

static errcode_t ov_write(io_channel ch, unsigned long block, int count, const void *data)
{
	return ov_write64(ch, block, count, data);
}

static errcode_t ov_write_byte(io_channel ch, unsigned long offset, int count, const void *data)
{
	struct ov *o = ov_of(ch);
	if (!o->active)
		return o->in->manager->write_byte
			       ? o->in->manager->write_byte(o->in, offset, count, data)
			       : EXT2_ET_UNIMPLEMENTED;
	if (o->failed)
		return o->failed;
	return write_bytes(o, offset, (size_t)count, data);
}

static errcode_t ov_flush(io_channel ch)
{
	struct ov *o = ov_of(ch);
	if (o->active)
		return commit(o);
	return io_channel_flush(o->in);
}

static errcode_t ov_set_option(io_channel ch, const char *option, const char *arg)
{
	io_channel in = ov_of(ch)->in;
	return in->manager->set_option ? in->manager->set_option(in, option, arg)
				       : EXT2_ET_INVALID_ARGUMENT;
}

/* Discarding and zeroing below would bypass what is held: while active, the library writes
 * zeros instead. */
static errcode_t ov_discard(io_channel ch, unsigned long long block, unsigned long long count)
{
	struct ov *o = ov_of(ch);
	if (o->active || !o->in->manager->discard)
		return EXT2_ET_UNIMPLEMENTED;
	return o->in->manager->discard(o->in, block, count);
}

static errcode_t ov_zeroout(io_channel ch, unsigned long long block, unsigned long long count)
{
	struct ov *o = ov_of(ch);
	if (o->active || !o->in->manager->zeroout)
		return EXT2_ET_UNIMPLEMENTED;
	return o->in->manager->zeroout(o->in, block, count);
}

static errcode_t ov_cache_readahead(io_channel ch, unsigned long long block,
				    unsigned long long count)
{
	io_channel in = ov_of(ch)->in;
	return in->manager->cache_readahead ? in->manager->cache_readahead(in, block, count)
					    : EXT2_ET_UNIMPLEMENTED;
}

static struct struct_io_manager overlay_manager = {
	.magic = EXT2_ET_MAGIC_IO_MANAGER,
	.name = "fclabel overlay I/O manager",
	.open = ov_open,
	.close = ov_close,
	.set_blksize = ov_set_blksize,
	.read_blk = ov_read,
	.write_blk = ov_write,
	.flush = ov_flush,
	.write_byte = ov_write_byte,
	.set_option = ov_set_option,
	.read_blk64 = ov_read64,
	.write_blk64 = ov_write64,
	.discard = ov_discard,
	.cache_readahead = ov_cache_readahead,
	.zeroout = ov_zeroout,
};

io_manager imgfmt_overlay_manager = &overlay_manager;

/* ---- a channel opened again: the file system read anew over the same channel ---- */

static io_channel reuse_channel;

void imgfmt_set_reuse(io_channel ch)
{
	reuse_channel = ch;
}

static errcode_t reuse_open(const char *name, int flags, io_channel *channel)
{
	(void)name;
	(void)flags;
	if (!reuse_channel)
		return EXT2_ET_BAD_DEVICE_NAME;
	*channel = reuse_channel; /* (the reference the caller kept is the one handed over) */
	reuse_channel = NULL;
	return 0;
}

static struct struct_io_manager reuse_manager = {
	.magic = EXT2_ET_MAGIC_IO_MANAGER,
	.name = "fclabel channel reused",
	.open = reuse_open,
};

io_manager imgfmt_reuse_manager = &reuse_manager;
