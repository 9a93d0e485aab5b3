/*
 * Every image is read and written through a thin io_manager that records the first I/O error
 * (so that the labeler stops at it, instead of taking it for one damaged file) and, for the test
 * suite, fails the Nth I/O of a kind on demand, as SQLite tests itself.
 *
 * FCLABEL_FAULT=KIND:N fails the Nth I/O of KIND (with EIO): read, write and flush are the
 * channel's operations; fread, fwrite, sync and rename are the copy-and-rename writer's own file
 * operations (replace.c). FCLABEL_FAULT=count counts them, for the command to say at exit
 * (imgfmt_io_counts). A library does not print: what the injector has to say (the fault it
 * fails, a setting it ignores) goes to the caller's log function, as libselinux's
 * selinux_set_callback does; without one it is not said.
 */
#include <errno.h>
#include <et/com_err.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const kind_names[IMGIO_N] = { "read", "write", "flush", "fread", "fwrite",
						 "sync", "rename" };
static _Atomic unsigned long counts[IMGIO_N];
static int fault_kind = -1;         /* the kind to fail, -1: none */
static unsigned long fault_at;      /* its ordinal, from 1 */
static bool fault_counting, fault_read;
static _Thread_local bool fault_held; /* imgfmt_fault_hold: I/O that is not the run's (this
				       * thread's: prescan.c's is never the run's) */

static _Thread_local bool reading_ahead; /* imgfmt_read_ahead */

static _Atomic unsigned long writes_below; /* imgfmt_writes_below */

static char io_error[512];
static _Atomic int io_failed;

static imgfmt_log_fn log_fn;
static void *log_arg;

void imgfmt_set_log(imgfmt_log_fn fn, void *arg)
{
	log_fn = fn;
	log_arg = arg;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!log_fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_fn(log_arg, msg);
}

bool imgfmt_io_counts(char *buf, size_t n)
{
	size_t at = 0;
	if (!fault_counting || !n)
		return false;
	buf[0] = 0;
	at = (size_t)snprintf(buf, n, "I/O counts:");
	for (int k = 0; k < IMGIO_N && at < n; k++)
		at += (size_t)snprintf(buf + at, n - at, " %s=%lu", kind_names[k],
				       atomic_load(&counts[k]));
	return true;
}

/* FCLABEL_FAULT, read once. */
static void read_setting(void)
{
	const char *v = getenv("FCLABEL_FAULT");
	fault_read = true;
	if (!v || !*v)
		return;
	if (!strcmp(v, "count")) {
		fault_counting = true;
		return;
	}
	for (int k = 0; k < IMGIO_N; k++) {
		size_t l = strlen(kind_names[k]);
		if (!strncmp(v, kind_names[k], l) && v[l] == ':') {
			char *end;
			unsigned long n = strtoul(v + l + 1, &end, 10);
			if (!*end && n) {
				fault_kind = k;
				fault_at = n;
			}
		}
	}
	if (fault_kind < 0)
		say("FCLABEL_FAULT=%s: want KIND:N or count; ignored", v);
}

void imgfmt_fault_hold(bool hold)
{
	atomic_store(&fault_held, hold);
}

void imgfmt_read_ahead(bool on)
{
	reading_ahead = on;
}

int imgfmt_fault(enum imgfmt_io kind)
{
	if (atomic_load(&fault_held))
		return 0;
	if (!fault_read)
		read_setting();
	unsigned long n = atomic_fetch_add(&counts[kind], 1) + 1;
	if ((int)kind != fault_kind || n != fault_at)
		return 0;
	say("FCLABEL_FAULT: failing %s #%lu", kind_names[kind], n);
	return EIO;
}

unsigned long imgfmt_writes_below(void)
{
	return atomic_load(&writes_below);
}

bool imgfmt_written(void)
{
	return atomic_load(&counts[IMGIO_WRITE]) != 0;
}

/* ---- the first I/O error ---- */

static void record(io_channel ch, const char *what, unsigned long long block, errcode_t rc)
{
	int was = 0;
	if (!atomic_compare_exchange_strong(&io_failed, &was, 1))
		return;
	snprintf(io_error, sizeof(io_error), "%s: %s of block %llu failed: %s", ch->name, what,
		 block, error_message(rc));
}

const char *imgfmt_io_error(void)
{
	return atomic_load(&io_failed) ? io_error : NULL;
}

void imgfmt_io_error_set(const char *fmt, ...)
{
	int was = 0;
	if (!atomic_compare_exchange_strong(&io_failed, &was, 1))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(io_error, sizeof(io_error), fmt, ap);
	va_end(ap);
}

/* ---- what must come before the first write ---- */

static errcode_t (*before_write)(void *arg, char *why, size_t n);
static void *before_arg;
static bool before_ran;
static errcode_t before_rc;

void imgfmt_set_before_write(errcode_t (*fn)(void *arg, char *why, size_t n), void *arg)
{
	before_write = fn;
	before_arg = arg;
	before_ran = false;
	before_rc = 0;
}

/* Runs the hook before the first write (its own writes pass: it has begun); its failure fails
 * every write after. (Writes to an image come from one thread at a time.) */
static errcode_t first_write(io_channel ch)
{
	if (!before_write || before_ran)
		return before_rc;
	before_ran = true;
	char why[400] = "";
	before_rc = before_write(before_arg, why, sizeof(why));
	if (before_rc)
		imgfmt_io_error_set("%s: %s", ch->name, *why ? why : error_message(before_rc));
	return before_rc;
}

/* ---- the manager ---- */

static io_manager next_inner;

void imgfmt_set_tracked_inner(io_manager inner)
{
	next_inner = inner;
}

static io_channel inner_of(io_channel ch)
{
	return ch->private_data;
}

static errcode_t tr_open(const char *name, int flags, io_channel *channel)
{
	io_channel ch = calloc(1, sizeof(*ch)), in = NULL;
	errcode_t rc = ENOMEM;

	if (!ch || !(ch->name = strdup(name)))
		goto fail;
	if ((rc = next_inner->open(name, flags, &in)))
		goto fail;
	ch->magic = EXT2_ET_MAGIC_IO_CHANNEL;
	ch->manager = imgfmt_tracked_manager;
	ch->block_size = in->block_size;
	ch->refcount = 1;
	ch->flags = in->flags;
	ch->align = in->align;
	ch->private_data = in;
	*channel = ch;
	return 0;
fail:
	if (ch)
		free(ch->name);
	free(ch);
	return rc;
}

io_channel imgfmt_inner_channel(io_channel ch)
{
	/* (through a partition's channel too: the format's own is below it) */
	return imgfmt_part_lower(ch && ch->manager == imgfmt_tracked_manager ? inner_of(ch) : ch);
}

static errcode_t tr_close(io_channel ch)
{
	if (--ch->refcount > 0)
		return 0;
	errcode_t rc = io_channel_close(inner_of(ch));
	if (rc)
		record(ch, "closing (writing the result)", 0, rc);
	free(ch->name);
	free(ch);
	return rc;
}

static errcode_t tr_set_blksize(io_channel ch, int blksize)
{
	errcode_t rc = io_channel_set_blksize(inner_of(ch), blksize);
	if (!rc)
		ch->block_size = blksize;
	return rc;
}

static errcode_t tr_read64(io_channel ch, unsigned long long block, int count, void *data)
{
	errcode_t rc = imgfmt_fault(IMGIO_READ);
	bool injected = rc != 0;
	if (!rc)
		rc = io_channel_read_blk64(inner_of(ch), block, count, data);
	/* a block past the image's end (a damaged pointer) is the caller's to report: only what
	 * the system refused stops the run, and only when the caller needed it (a failure
	 * FCLABEL_FAULT injects is the run's: it stands for a block the run needed) */
	if (rc && rc != EXT2_ET_SHORT_READ && (injected || !reading_ahead))
		record(ch, "read", block, rc);
	return rc;
}

static errcode_t tr_write64(io_channel ch, unsigned long long block, int count, const void *data)
{
	atomic_fetch_add(&writes_below, 1);
	errcode_t rc = first_write(ch);
	if (rc)
		return rc;
	rc = imgfmt_fault(IMGIO_WRITE);
	if (!rc)
		rc = io_channel_write_blk64(inner_of(ch), block, count, data);
	if (rc)
		record(ch, "write", block, rc);
	return rc;
}

static errcode_t tr_read(io_channel ch, unsigned long block, int count, void *data)
{
	return tr_read64(ch, block, count, data);
}

static errcode_t tr_write(io_channel ch, unsigned long block, int count, const void *data)
{
	return tr_write64(ch, block, count, data);
}

static errcode_t tr_write_byte(io_channel ch, unsigned long offset, int count, const void *data)
{
	io_channel in = inner_of(ch);
	atomic_fetch_add(&writes_below, 1);
	errcode_t rc = first_write(ch);
	if (rc)
		return rc;
	rc = imgfmt_fault(IMGIO_WRITE);
	if (!rc)
		rc = in->manager->write_byte ? in->manager->write_byte(in, offset, count, data)
					     : EXT2_ET_UNIMPLEMENTED;
	if (rc && rc != EXT2_ET_UNIMPLEMENTED)
		record(ch, "write", offset / (ch->block_size ? (unsigned)ch->block_size : 1u), rc);
	return rc;
}

static errcode_t tr_flush(io_channel ch)
{
	errcode_t rc = imgfmt_fault(IMGIO_FLUSH);
	if (!rc)
		rc = io_channel_flush(inner_of(ch));
	if (rc)
		record(ch, "flush", 0, rc);
	return rc;
}

static errcode_t tr_set_option(io_channel ch, const char *option, const char *arg)
{
	io_channel in = inner_of(ch);
	return in->manager->set_option ? in->manager->set_option(in, option, arg)
				       : EXT2_ET_INVALID_ARGUMENT;
}

static errcode_t tr_discard(io_channel ch, unsigned long long block, unsigned long long count)
{
	io_channel in = inner_of(ch);
	atomic_fetch_add(&writes_below, 1);
	return in->manager->discard ? in->manager->discard(in, block, count)
				    : EXT2_ET_UNIMPLEMENTED;
}

static errcode_t tr_cache_readahead(io_channel ch, unsigned long long block,
				    unsigned long long count)
{
	io_channel in = inner_of(ch);
	return in->manager->cache_readahead ? in->manager->cache_readahead(in, block, count)
					    : EXT2_ET_UNIMPLEMENTED;
}

static errcode_t tr_zeroout(io_channel ch, unsigned long long block, unsigned long long count)
{
	io_channel in = inner_of(ch);
	atomic_fetch_add(&writes_below, 1);
	errcode_t rc = first_write(ch);
	if (rc)
		return rc;
	rc = imgfmt_fault(IMGIO_WRITE);
	if (!rc)
		rc = in->manager->zeroout ? in->manager->zeroout(in, block, count)
					  : EXT2_ET_UNIMPLEMENTED;
	if (rc && rc != EXT2_ET_UNIMPLEMENTED)
		record(ch, "zeroing", block, rc);
	return rc;
}

static struct struct_io_manager tracked_manager = {
	.magic = EXT2_ET_MAGIC_IO_MANAGER,
	.name = "fclabel tracked I/O manager",
	.open = tr_open,
	.close = tr_close,
	.set_blksize = tr_set_blksize,
	.read_blk = tr_read,
	.write_blk = tr_write,
	.flush = tr_flush,
	.write_byte = tr_write_byte,
	.set_option = tr_set_option,
	.read_blk64 = tr_read64,
	.write_blk64 = tr_write64,
	.discard = tr_discard,
	.cache_readahead = tr_cache_readahead,
	.zeroout = tr_zeroout,
};

io_manager imgfmt_tracked_manager = &tracked_manager;
