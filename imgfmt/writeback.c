/*
 * Writes pushed to the disk as they are made (struct imgfmt_writeback, internal.h): by the
 * overlay's commits and the journal's log, which both write through it, so that neither calls
 * the other for it.
 */
#include <fcntl.h>

#include "internal.h"

void imgfmt_writeback_start(const struct imgfmt_writeback *w, uint64_t off, uint64_t len)
{
	/* (a failure is the barrier's to meet: its flush writes whatever this did not) */
	if (w && w->fd >= 0)
		(void)sync_file_range(w->fd, (off64_t)(w->base + off), (off64_t)len,
				      SYNC_FILE_RANGE_WRITE);
}
