/*
 * A compiled file's bytes, read ahead on a thread of its own. Most of a .bin is PCRE bytecode
 * that its reader (binfile.c) skips, yet the bytes must still be copied in from the page cache:
 * 1.2 ms for refpolicy's 7 MB format 5 file, a third of its whole load. On a second core that
 * copy runs while the reader parses what came before.
 *
 * The file comes in chunks, into a ring of a few of them (64 KiB that stay in cache, however
 * large the file). The reader asks for ranges at
 * increasing offsets; a range inside one chunk is returned in place, one that crosses chunks is
 * copied out. A chunk goes back to the thread once the reader asks for a range past it.
 *
 * Either side reads the next chunk nobody has claimed, and the reader never waits for the
 * thread: one that catches up with it reads on by itself (the chunk the thread is reading, into
 * a buffer of its own), so that a thread that gets no core (the machine's other jobs) costs the
 * load little more than its start. A small file, a machine with no core free at the start (the
 * thread would only take turns with the reader and the other jobs, and the reader's fields would
 * come from another core's cache), or a thread that cannot be started: the file is read by the
 * reader alone, chunk by chunk as it is needed (a chunk it skips is never read).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* The ring: 64 KiB, one block of the set's arena, kept for every compiled file the set reads
 * (memory first touched here costs a page fault a 4 KiB page, over 5 us each on a virtual
 * machine; the arena's huge page is already there). Read ahead on the thread, in four chunks;
 * read by the reader alone, in one (a system call a chunk). */
#define FC_AHEAD_RING ((size_t)64 << 10)
#define FC_AHEAD_SLOTS 4u
/* below this, the thread's start and its wake-ups cost more than the read they hide */
#define FC_AHEAD_MIN ((size_t)1 << 20)
/* how long the thread spins for a chunk to be given back before it sleeps: a few times the
 * reader's time for a chunk */
#define FC_AHEAD_SPINS 5000

#if defined(__x86_64__) || defined(__i386__)
#define relax() __builtin_ia32_pause()
#elif defined(__aarch64__) || defined(__arm__)
#define relax() __asm__ volatile("yield")
#else
#define relax() ((void)0)
#endif

struct fc_ahead {
	int fd;
	size_t len, nchunks;
	const char *path;
	struct fc_error *err;
	unsigned char *ring;   /* nslots chunks; chunk c in slot c % nslots */
	size_t chunk, nslots;
	/* the chunk each slot holds, whole, plus one; BUSY while the thread reads into it */
	atomic_size_t held[FC_AHEAD_SLOTS];
	atomic_size_t next;    /* the first chunk nobody has claimed to read */
	atomic_size_t given;   /* chunks [0, given) are given back: their slots may be refilled */
	unsigned char *copy;   /* a range that crosses chunks */
	size_t copycap;
	unsigned char *own;    /* the reader's copy of a chunk the thread is reading */
	bool threaded;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t room;   /* chunks were given back, or the reader is done */
	atomic_size_t sleeps;  /* the thread sleeps until given reaches this (0: it does not) */
	atomic_bool stop;      /* the reader is done: the thread ends */
};

#define BUSY SIZE_MAX

static unsigned char *slot(struct fc_ahead *a, size_t c)
{
	return a->ring + (c % a->nslots) * a->chunk;
}

/* Reads chunk c to p: 0, an errno value, or -1 when the file came to an end early. */
static int read_to(struct fc_ahead *a, size_t c, unsigned char *p)
{
	size_t at = c * a->chunk, want = a->len - at, got = 0;

	if (want > a->chunk)
		want = a->chunk;
	while (got < want) {
		ssize_t k = pread(a->fd, p + got, want - got, (off_t)(at + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? errno : -1;
		got += (size_t)k;
	}
	return 0;
}

/* Reads chunk c into its slot. */
static int read_chunk(struct fc_ahead *a, size_t c)
{
	int rc = read_to(a, c, slot(a, c));
	if (!rc)
		atomic_store(&a->held[c % a->nslots], c + 1);
	return rc;
}

/* The thread waits for slot c's previous chunk to be given back: a spin (the reader takes a few
 * microseconds a chunk), then a sleep until half the ring is free. False when told to stop. */
static bool wait_room(struct fc_ahead *a, size_t c)
{
	if (c < a->nslots)
		return !atomic_load(&a->stop);
	for (int i = 0; i < FC_AHEAD_SPINS; i++) {
		if (atomic_load(&a->given) > c - a->nslots || atomic_load(&a->stop))
			return !atomic_load(&a->stop);
		/* on a busy machine, the core goes to whoever else wants it */
		if (i % 64 == 63)
			sched_yield();
		else
			relax();
	}
	size_t until = c - a->nslots + a->nslots / 2;
	pthread_mutex_lock(&a->lock);
	atomic_store(&a->sleeps, until);
	/* the reader stores given before it loads sleeps: one of the two sees the other's store */
	while (atomic_load(&a->given) < until && !atomic_load(&a->stop))
		pthread_cond_wait(&a->room, &a->lock);
	atomic_store(&a->sleeps, 0);
	pthread_mutex_unlock(&a->lock);
	return !atomic_load(&a->stop);
}

static void *ahead_main(void *arg)
{
	struct fc_ahead *a = arg;

	for (;;) {
		size_t c = atomic_load(&a->next);
		if (c >= a->nchunks || !wait_room(a, c))
			break;
		/* the slot is marked before the claim: a reader that claims a later chunk of the
		 * same slot while this read is still under way sees the mark (and reads that
		 * chunk into a buffer of its own) */
		atomic_size_t *held = &a->held[c % a->nslots];
		atomic_store(held, BUSY);
		/* the reader may have claimed it meanwhile (the slot's chunk is one it is past) */
		if (!atomic_compare_exchange_strong(&a->next, &c, c + 1)) {
			atomic_store(held, 0);
			continue;
		}
		/* a failed read is the reader's to report: it reads that chunk again itself */
		if (read_chunk(a, c))
			break;
	}
	return NULL;
}

/* Whether a core is free now: no more tasks running or ready to run (the fourth field of
 * /proc/loadavg, "2/123": this one counted) than cores this process may use. Measured: with the
 * machine's two cores busy, the thread made the load slower (best of 41: 5.3 against 5.1 ms).
 * Not "fewer than": an idle 2-core virtual machine reads "2/110" as often as "1/110" (a
 * passing task of the system's), and the thread was then never used (v5 load 4.0 ms against
 * 3.5 with it, best of 9). */
static bool core_free(void)
{
	char buf[128];
	cpu_set_t cpus;
	int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC), fields = 0;
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0 || sched_getaffinity(0, sizeof(cpus), &cpus))
		return false;
	buf[n] = 0;
	for (char *p = buf; *p; p++)
		if (*p == ' ' && ++fields == 3)
			return strtol(p + 1, NULL, 10) <= CPU_COUNT(&cpus);
	return false;
}

/* Whether to read ahead on a thread. (For the test suite, FCLABEL_AHEAD: "thread" for every
 * compiled file, whatever its size and the machine's load; "none" for none.) */
static bool use_thread(size_t len)
{
	const char *e = getenv("FCLABEL_AHEAD");

	if (e && !strcmp(e, "thread"))
		return true;
	if (e && !strcmp(e, "none"))
		return false;
	return len >= FC_AHEAD_MIN && core_free();
}

int fc_ahead_open(struct fc_ahead **out, struct fc_set *set, int fd, size_t len,
		  const char *path, struct fc_error *err)
{
	struct fc_ahead *a = calloc(1, sizeof(*a));
	sigset_t all, old;

	if (!set->ahead_ring)
		set->ahead_ring = fc_balloc(set, FC_AHEAD_RING, 64);
	if (!a || !set->ahead_ring) {
		free(a);
		return ENOMEM;
	}
	a->ring = set->ahead_ring;
	a->fd = fd;
	a->len = len;
	a->path = path;
	a->err = err;
	a->nslots = use_thread(len) ? FC_AHEAD_SLOTS : 1;
	a->chunk = FC_AHEAD_RING / a->nslots;
	a->nchunks = (len + a->chunk - 1) / a->chunk;
	*out = a;
	if (a->nslots == 1)
		return 0;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->room, NULL);
	/* signals go to the caller's threads, never to this one */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	a->threaded = !pthread_create(&a->thread, NULL, ahead_main, a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!a->threaded) {
		pthread_mutex_destroy(&a->lock);
		pthread_cond_destroy(&a->room);
	}
	return 0;
}

void fc_ahead_close(struct fc_ahead *a)
{
	if (!a)
		return;
	if (a->threaded) {
		pthread_mutex_lock(&a->lock);
		atomic_store(&a->stop, true);
		pthread_cond_signal(&a->room);
		pthread_mutex_unlock(&a->lock);
		pthread_join(a->thread, NULL);
		pthread_mutex_destroy(&a->lock);
		pthread_cond_destroy(&a->room);
	}
	free(a->copy);
	free(a->own);
	free(a);
}

/* Chunks before c are no longer needed: the thread may refill their slots. */
static void give_back(struct fc_ahead *a, size_t c)
{
	if (!a->threaded || atomic_load(&a->given) >= c)
		return;
	atomic_store(&a->given, c);
	size_t until = atomic_load(&a->sleeps);
	if (until && c >= until) {
		pthread_mutex_lock(&a->lock);
		pthread_cond_signal(&a->room);
		pthread_mutex_unlock(&a->lock);
	}
}

static bool holds(struct fc_ahead *a, size_t c)
{
	return atomic_load(&a->held[c % a->nslots]) == c + 1;
}

/* Chunk c into the reader's own buffer: the thread is reading it, or still reading an earlier
 * chunk into its slot, or failed to read it. */
static const unsigned char *read_own(struct fc_ahead *a, size_t c, int *rc)
{
	if (!a->own && !(a->own = malloc(a->chunk))) {
		*rc = ENOMEM;
		return NULL;
	}
	*rc = read_to(a, c, a->own);
	return a->own;
}

/* Chunk c's bytes: in its slot, read ahead by the thread or read now, or in the reader's own
 * buffer. */
static const unsigned char *have(struct fc_ahead *a, size_t c, int *rc)
{
	const unsigned char *p = slot(a, c);

	*rc = 0;
	while (!holds(a, c)) {
		size_t n = atomic_load(&a->next);
		if (n > c) {
			p = read_own(a, c, rc);
			break;
		}
		/* nobody has claimed it: claim it (and those skipped before it, never read),
		 * read it here */
		if (atomic_compare_exchange_strong(&a->next, &n, c + 1)) {
			if (atomic_load(&a->held[c % a->nslots]) == BUSY)
				p = read_own(a, c, rc);
			else
				*rc = read_chunk(a, c);
			break;
		}
	}
	if (!p)
		return NULL;
	if (!*rc)
		return p;
	fc_seterr(a->err, a->path, 0, 0, "read failed: %s", *rc > 0 ? strerror(*rc) : "file shrank");
	if (*rc < 0)
		*rc = EIO;
	return NULL;
}

int fc_ahead_get(struct fc_ahead *a, size_t off, size_t n, const unsigned char **b,
		 size_t *base, size_t *len)
{
	size_t c = off / a->chunk, last = n ? (off + n - 1) / a->chunk : c;
	int rc = 0;

	give_back(a, c);
	if (c == last) {
		*b = c < a->nchunks ? have(a, c, &rc) : slot(a, c);
		if (!*b)
			return rc;
		*base = c * a->chunk;
		*len = c < a->nchunks ? a->len - *base : 0;
		if (*len > a->chunk)
			*len = a->chunk;
		/* the thread's writes are in its core's cache: ask for the rest of the chunk at
		 * once, not a line at a time as the fields are read */
		if (a->threaded)
			for (size_t i = off - *base; i < *len; i += 64)
				__builtin_prefetch(*b + i);
		return 0;
	}
	if (n > a->copycap) {
		unsigned char *nv = realloc(a->copy, n);
		if (!nv)
			return ENOMEM;
		a->copy = nv;
		a->copycap = n;
	}
	/* chunk by chunk, each given back once copied but the last, where the next range starts */
	for (size_t done = 0; done < n; c++) {
		size_t from = (off + done) % a->chunk, k = a->chunk - from;
		if (k > n - done)
			k = n - done;
		const unsigned char *p = have(a, c, &rc);
		if (!p)
			return rc;
		memcpy(a->copy + done, p + from, k);
		done += k;
		if (c < last)
			give_back(a, c + 1);
	}
	*b = a->copy;
	*base = off;
	*len = n;
	return 0;
}
