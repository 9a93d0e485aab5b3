/*
 * The pages of the buffer the overlay holds its blocks in (struct imgfmt_pages, internal.h),
 * made before the writes meet them. A label holds an inode table's worth (50 MiB for 200,000
 * inodes), each page first met by a copy: a fault for each 4 KiB page was a tenth of a label's
 * time, and made at once on the writes' thread (MADV_POPULATE_WRITE, Linux 5.14) still 8% of
 * its CPU, the kernel allocating and zeroing them. Past PAGES_THREAD_FROM bytes (a label; not a
 * relabel's few blocks) another thread makes them MAKER_AHEAD ahead of the writes, on a core
 * the walk leaves idle; the writes' thread never waits for it, and makes what it finds not made,
 * a step at a time.
 *
 * Making a page does not change what it holds, so all of this is a hint: a range a grow moved
 * away meanwhile is made for nothing (or fails), never spoilt, and a page not made is made by
 * the write that meets it.
 */
#include <errno.h>
#include <sys/mman.h>

#include "internal.h"

#define STEP ((size_t)1 << 20)
#define PAGES_THREAD_FROM ((size_t)4 << 20)
#define MAKER_AHEAD ((size_t)4 << 20)
/* What the writes' thread makes past what is used when it finds a page not made: a relabel
 * holds a few hundred KiB of the first 1 MiB buffer, and made a STEP at once it paid for the
 * whole (each page ~2 us: 0.5 ms for 256 pages of which B1 uses 125). */
#define WRITER_AHEAD ((size_t)64 << 10)

/* Bytes [from, to) of data made at once, where the kernel can. */
static void populate(char *data, size_t from, size_t to)
{
#ifdef MADV_POPULATE_WRITE
	uintptr_t pg = 4096, a = ((uintptr_t)data + from + pg - 1) & ~(pg - 1);
	uintptr_t e = ((uintptr_t)data + to) & ~(pg - 1);
	if (e > a)
		(void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#else
	(void)data, (void)from, (void)to;
#endif
}

/* The next step, from ready up to end at most; ready moved past it unless the other thread
 * moved it meanwhile. */
static void make_step(struct imgfmt_pages *p, char *data, size_t end)
{
	size_t from = atomic_load(&p->ready);
	if (end > from + STEP)
		end = from + STEP;
	if (from >= end)
		return;
	populate(data, from, end);
	atomic_compare_exchange_strong(&p->ready, &from, end);
}

/* Where the maker is to stop: what it was asked for, within the buffer grown so far. */
static size_t goal(struct imgfmt_pages *p)
{
	size_t want = atomic_load(&p->want), end = atomic_load(&p->end);
	return want < end ? want : end;
}

static void *maker(void *arg)
{
	struct imgfmt_pages *p = arg;
	while (!sem_wait(&p->go) || errno == EINTR) {
		size_t g;
		while (!atomic_load(&p->stop) && atomic_load(&p->ready) < (g = goal(p)))
			make_step(p, atomic_load(&p->data), g);
		if (atomic_load(&p->stop))
			break;
	}
	return NULL;
}

void pages_grown(struct imgfmt_pages *p, char *data, size_t bytes)
{
	atomic_store(&p->data, data);
	atomic_store(&p->end, bytes);
	if (bytes < PAGES_THREAD_FROM || p->started || sem_init(&p->go, 0, 0))
		return;
	atomic_store(&p->stop, false);
	p->started = !pthread_create(&p->th, NULL, maker, p);
	if (!p->started)
		sem_destroy(&p->go);
}

void pages_use(struct imgfmt_pages *p, char *data, size_t used, size_t bytes)
{
	/* the maker asked for MAKER_AHEAD past what is used when about half of it is left */
	if (p->started && used + MAKER_AHEAD / 2 >= atomic_load(&p->want)) {
		atomic_store(&p->want, used + MAKER_AHEAD);
		sem_post(&p->go);
	}
	if (used > atomic_load(&p->ready))
		make_step(p, data, used + WRITER_AHEAD < bytes ? used + WRITER_AHEAD : bytes);
}

void pages_stop(struct imgfmt_pages *p)
{
	if (!p->started)
		return;
	atomic_store(&p->stop, true);
	sem_post(&p->go);
	pthread_join(p->th, NULL);
	sem_destroy(&p->go);
	p->started = false;
}
