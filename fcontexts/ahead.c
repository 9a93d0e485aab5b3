/*
 * A compiled file's bytes, read a chunk at a time, and its specs' analyses shared with a thread
 * of the load's own. Most of a .bin is PCRE bytecode that its reader (binfile.c) skips, yet the
 * bytes must still be copied in from the page cache: ~1 ms for refpolicy's 7 MB format 5 file
 * (its pages as sefcontext_compile wrote them, 4 KiB each), a third of its whole load.
 *
 * The file comes in 64 KiB chunks, into one buffer that stays in cache however large the file.
 * The reader asks for ranges at increasing offsets; a range inside one chunk is returned in
 * place, one that crosses chunks is copied out. A chunk the reader skips is never read.
 *
 * The thread takes the specs' analyses (fc_analyze_spec, half of a load's time), a few at a time
 * as the reader pushes them: the reader reads and parses while the thread analyses (format 5:
 * 2.0 ms of reading and parsing for refpolicy, the thread keeping up with it; format 6 stages
 * its specs in file order, fc_ahead_stage, as its tree is read), and what is left when the
 * reader is done is shared. Only the analyses go to the thread: the index that follows takes
 * memory from the set's arena, which is the reader's alone. Format 5's thread keeps up with its
 * reader and has time to spare: it first reads the file's last eighth (fc_ahead_tail), which the
 * reader then takes from it without a system call. (The thread used to read the whole file ahead,
 * in smaller chunks; with the analyses first it read almost none of them, 4 of 446, and the
 * reader's four times as many system calls cost 0.15-0.4 ms.)
 *
 * There is a thread only for a file of a MiB or more on a machine with a core free at the start
 * (the thread would otherwise only take turns with the reader and the other jobs), and the
 * reader never waits for it but at the end, for the few specs it is analysing then: a thread
 * that gets no core costs the load little more than its start.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* The chunk: 64 KiB, one block of the set's arena, kept for every compiled file the set reads
 * (memory first touched here costs a page fault a 4 KiB page, over 5 us each on a virtual
 * machine; the arena's huge page is already there). A system call a chunk. */
#define FC_AHEAD_CHUNK ((size_t)64 << 10)
/* below this, the thread's start and its wake-ups cost more than the analyses it takes */
#define FC_AHEAD_MIN ((size_t)1 << 20)
/* the specs the thread analyses at a claim: few enough that the reader, once done, waits little
 * for the thread's last claim; enough that the claims' atomic operations cost little */
#define FC_AHEAD_BATCH 16u
/* how long the thread spins with nothing to do before it naps (FC_AHEAD_NAP_NS a time): many
 * times the reader's time for a spec, so that only a reader kept off its core meets a napping
 * thread */
#define FC_AHEAD_SPINS 20000u
#define FC_AHEAD_NAP_NS 20000
/* how long the reader spins for the thread before it brings the thread onto its own core (about
 * 30 us) */
#define FC_AHEAD_RESCUE 1024u
/* the room's first page, the thread's to fault in: a huge page when there are any */
#define FC_AHEAD_HUGE ((size_t)2 << 20)
/* the room's first bytes, which the thread writes at its start (and nothing else does) */
#define FC_AHEAD_TOUCHED ((size_t)64)

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
	unsigned char *buf;    /* a chunk */
	size_t held;           /* the chunk buf holds, plus one (0: none) */
	unsigned char *copy;   /* a range that crosses chunks */
	size_t copycap;
	/* the file's last part, [tail_at, len), read by the thread into tail (fc_ahead_tail) */
	size_t tail_at;
	unsigned char *tail;
	atomic_int tail_state;
	bool threaded;
	pthread_t thread;
	atomic_bool stop;      /* the reader is done: the thread ends */
	atomic_bool quiet;     /* the thread has ended its work: it touches nothing more */
	struct fc_ahead *next_ended; /* in the set's list of threads to join */
	/* The specs' analyses, shared with the thread (fc_ahead_share): specs [0, pushed) of the
	 * list are complete, those from claimed on are not analysed yet; either side claims a
	 * few at a time. The list does not move while shared. Each count on a cache line of its
	 * own: the side that polls one does not slow the other's stores to the rest. */
	_Atomic(struct spec *) specs;
	size_t base;           /* (the reader's) specs before it were complete when shared */
	size_t last;           /* (the reader's) the count last announced */
	_Alignas(64) atomic_size_t pushed;
	_Alignas(64) atomic_size_t claimed;
	_Alignas(64) atomic_size_t analysed; /* how many the thread has done */
	char *room;            /* the thread's own room for what its analyses keep */
	size_t room_used, room_cap;
} __attribute__((aligned(64)));

enum { TAIL_NONE, TAIL_ASKED, TAIL_READY, TAIL_FAILED };

/* Reads want bytes at offset at to p: 0, an errno value, or -1 when the file came to an end
 * early. */
static int read_at(struct fc_ahead *a, size_t at, size_t want, unsigned char *p)
{
	size_t got = 0;

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

/* Reads chunk c to p (read_at's answers). */
static int read_to(struct fc_ahead *a, size_t c, unsigned char *p)
{
	size_t at = c * FC_AHEAD_CHUNK, want = a->len - at;

	return read_at(a, at, want < FC_AHEAD_CHUNK ? want : FC_AHEAD_CHUNK, p);
}

/* The tail, when asked for: read before any analysis, while the reader parses the head (a failed
 * read is the reader's to meet and report: it reads that part itself then). */
static void thread_reads_tail(struct fc_ahead *a)
{
	if (atomic_load_explicit(&a->tail_state, memory_order_acquire) != TAIL_ASKED)
		return;
	bool ok = !read_at(a, a->tail_at, a->len - a->tail_at, a->tail);
	atomic_store_explicit(&a->tail_state, ok ? TAIL_READY : TAIL_FAILED,
			      memory_order_release);
}

/* Claims the next specs not yet analysed, among those pushed: [*from, *to). */
static bool claim(struct fc_ahead *a, size_t *from, size_t *to)
{
	size_t c = atomic_load(&a->claimed);

	for (;;) {
		size_t n = atomic_load_explicit(&a->pushed, memory_order_acquire);
		if (c >= n)
			return false;
		size_t end = n - c > FC_AHEAD_BATCH ? c + FC_AHEAD_BATCH : n;
		if (atomic_compare_exchange_weak(&a->claimed, &c, end)) {
			*from = c;
			*to = end;
			return true;
		}
	}
}

/* The thread analyses a few specs, into its own room; false when there were none to claim. A
 * spec that does not fit is left to fc_build_index (its q stays NULL). */
static bool thread_analyses(struct fc_ahead *a)
{
	struct spec *specs = atomic_load(&a->specs);
	size_t from, to;

	if (!specs || !claim(a, &from, &to))
		return false;
	for (size_t i = from; i < to; i++) {
		size_t need = fc_shape_room(&specs[i]);
		if (need <= a->room_cap - a->room_used)
			a->room_used += fc_analyze_at(&specs[i], a->room + a->room_used);
	}
	atomic_fetch_add_explicit(&a->analysed, to - from, memory_order_release);
	return true;
}

/* A turn of a wait for the other side, the n-th: a spin, yielding now and then (on a busy
 * machine, the core goes to whoever else wants it). Never a sleep: a virtual core that goes idle
 * is slow to wake (a join that blocked took 40-120 us, where the thread was done in 10). */
static void spin(unsigned n)
{
	if (n % 64 == 63)
		sched_yield();
	else
		relax();
}

/* The thread, onto the reader's core (this thread's): a thread the other core's jobs keep off
 * it then runs when the reader yields. */
static void onto_my_core(struct fc_ahead *a)
{
	cpu_set_t cpus;
	int me = sched_getcpu();

	if (me < 0)
		return;
	CPU_ZERO(&cpus);
	CPU_SET(me, &cpus);
	pthread_setaffinity_np(a->thread, sizeof(cpus), &cpus);
}

/* The reader waits for the thread until done(a, arg): a spin, then (the thread is slow to come:
 * off its core, the other core taken by another job) it brings the thread onto its own core and
 * yields to it, so that the wait lasts a few of the thread's microseconds, not another job's
 * time slice. */
static void wait_thread(struct fc_ahead *a, bool (*done)(struct fc_ahead *, size_t), size_t arg)
{
	for (unsigned n = 0; !done(a, arg); n++) {
		if (n < FC_AHEAD_RESCUE) {
			spin(n);
			continue;
		}
		if (n == FC_AHEAD_RESCUE)
			onto_my_core(a);
		sched_yield();
	}
}

static bool analysed(struct fc_ahead *a, size_t n)
{
	return atomic_load_explicit(&a->analysed, memory_order_acquire) >= n;
}

static bool quiet(struct fc_ahead *a, size_t unused)
{
	return atomic_load(&a->quiet);
}

/* With nothing to do: a spin (the reader takes well under a microsecond a spec), then naps. */
static void thread_waits(unsigned *idle)
{
	if (++*idle < FC_AHEAD_SPINS) {
		spin(*idle);
		return;
	}
	struct timespec nap = { 0, FC_AHEAD_NAP_NS };
	nanosleep(&nap, NULL);
}

/* The specs' analyses as they come, until the reader is done. */
static void *ahead_main(void *arg)
{
	struct fc_ahead *a = arg;
	unsigned idle = 0;

	/* the room's first (huge) page is faulted in here, not by the reader, which may stage
	 * specs in it (fc_ahead_stage: after FC_AHEAD_TOUCHED bytes that only this write uses) */
	if (a->room)
		*(volatile char *)a->room = 0;

	while (!atomic_load(&a->stop)) {
		thread_reads_tail(a);
		if (thread_analyses(a))
			idle = 0;
		else
			thread_waits(&idle);
	}
	atomic_store(&a->quiet, true);
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

/* Whether to analyse on a thread. (For the test suite, FCLABEL_AHEAD: "thread" for every
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

/* The thread's room for what its analyses keep: what any file of len bytes could need (each
 * spec's regex is in the file, and a spec takes 13 bytes at least), reserved, not touched: the
 * thread's first use of it costs the thread, not the reader. */
static int thread_room(struct fc_ahead *a, struct fc_set *set)
{
	size_t specs = a->len / 13 + 1;

	if (a->len > (SIZE_MAX - 64) / 3)
		return ENOMEM;
	a->room_cap = 2 * a->len + 4 * specs;
	a->room = fc_bmap(set, a->room_cap);
	return a->room ? 0 : ENOMEM;
}

/* The thread goes to the cores this process may use but the reader's (attr set, true), when it
 * has others: the scheduler otherwise often put it beside the reader on a busy 2-core machine,
 * where it ran only when the reader was preempted (it analysed none of a format 6 file's specs in
 * 4 of 6 traced loads; kept off the reader's core, a third to a half in every one). */
static bool off_readers_core(pthread_attr_t *attr)
{
	cpu_set_t cpus;
	int me = sched_getcpu();

	if (me < 0 || sched_getaffinity(0, sizeof(cpus), &cpus) || !CPU_ISSET(me, &cpus) ||
	    CPU_COUNT(&cpus) < 2 || pthread_attr_init(attr))
		return false;
	CPU_CLR(me, &cpus);
	if (!pthread_attr_setaffinity_np(attr, sizeof(cpus), &cpus))
		return true;
	pthread_attr_destroy(attr);
	return false;
}

int fc_ahead_open(struct fc_ahead **out, struct fc_set *set, int fd, size_t len,
		  const char *path, struct fc_error *err)
{
	struct fc_ahead *a = aligned_alloc(64, sizeof(*a));
	sigset_t all, old;
	pthread_attr_t attr;

	if (!set->ahead_ring)
		set->ahead_ring = fc_balloc(set, FC_AHEAD_CHUNK, 64);
	if (!a || !set->ahead_ring) {
		free(a);
		return ENOMEM;
	}
	memset(a, 0, sizeof(*a));
	a->buf = set->ahead_ring;
	a->fd = fd;
	a->len = len;
	a->path = path;
	a->err = err;
	a->nchunks = (len + FC_AHEAD_CHUNK - 1) / FC_AHEAD_CHUNK;
	*out = a;
	/* without room for its analyses, no thread */
	if (!use_thread(len) || thread_room(a, set))
		return 0;
	/* signals go to the caller's threads, never to this one */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	bool pinned = off_readers_core(&attr);
	a->threaded = !pthread_create(&a->thread, pinned ? &attr : NULL, ahead_main, a);
	if (pinned)
		pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return 0;
}

bool fc_ahead_share(struct fc_ahead *a, struct fc_set *set, size_t more)
{
	/* the list must not move while shared: room for every spec still to come */
	if (!a || !a->threaded || !a->room || set->cap - set->nspecs < more)
		return false;
	a->base = a->last = set->nspecs;
	atomic_store(&a->pushed, set->nspecs);
	atomic_store(&a->claimed, set->nspecs);
	atomic_store(&a->specs, set->specs);
	return true;
}

void fc_ahead_tail(struct fc_ahead *a, size_t from)
{
	size_t at = (from + FC_AHEAD_CHUNK - 1) / FC_AHEAD_CHUNK * FC_AHEAD_CHUNK;
	size_t end = a && a->room_cap < FC_AHEAD_HUGE ? a->room_cap : FC_AHEAD_HUGE;

	/* in the room's first huge page, which the thread has faulted in (one placed further,
	 * where the thread faulted in another one or two, made the load slower), after the
	 * analyses' room (they have not started: nothing is shared yet); half of it at most */
	if (!a || !a->threaded || !a->room || atomic_load(&a->specs) || at >= a->len ||
	    a->len - at > end / 2)
		return;
	a->tail_at = at;
	a->room_cap = (end - (a->len - at)) & ~(size_t)63;
	a->tail = (unsigned char *)a->room + a->room_cap;
	atomic_store_explicit(&a->tail_state, TAIL_ASKED, memory_order_release);
}

struct spec *fc_ahead_stage(struct fc_ahead *a, size_t n)
{
	size_t size = (n * sizeof(struct spec) + 63) & ~(size_t)63;

	/* in the room (the thread has kept nothing there yet: nothing was shared), after the bytes
	 * the thread touches first; half of it at most: the rest for the analyses */
	if (!a || !a->threaded || !a->room || n > a->room_cap / sizeof(struct spec) ||
	    FC_AHEAD_TOUCHED + size > a->room_cap / 2)
		return NULL;
	struct spec *stage = (struct spec *)(void *)(a->room + FC_AHEAD_TOUCHED);
	a->room_used = FC_AHEAD_TOUCHED + size;
	a->base = a->last = 0;
	atomic_store(&a->pushed, 0);
	atomic_store(&a->claimed, 0);
	atomic_store(&a->specs, stage);
	return stage;
}

void fc_ahead_pushed(struct fc_ahead *a, size_t n)
{
	a->last = n;
	/* a batch at a time: a store the thread is polling for costs a miss on its line */
	if (n % FC_AHEAD_BATCH == 0)
		atomic_store_explicit(&a->pushed, n, memory_order_release);
}

void fc_ahead_finish(struct fc_ahead *a, struct fc_set *set)
{
	struct spec *specs = a ? atomic_load(&a->specs) : NULL;
	size_t from, to, mine = 0;
	bool nomem = false;

	if (!specs)
		return;
	atomic_store_explicit(&a->pushed, a->last, memory_order_release);
	/* out of memory: the rest is claimed, not analysed; fc_build_index tries again, and
	 * reports it */
	while (claim(a, &from, &to)) {
		mine += to - from;
		for (size_t i = from; i < to && !nomem; i++)
			nomem = fc_analyze_spec(set, &specs[i]) != 0;
	}
	/* the thread's last claims: done before the caller reads the specs again */
	wait_thread(a, analysed, a->last - a->base - mine);
	atomic_store(&a->specs, NULL);
}

void fc_ahead_close(struct fc_ahead *a, struct fc_set *set)
{
	if (!a)
		return;
	free(a->copy);
	if (!a->threaded) {
		free(a);
		return;
	}
	/* the specs it may still be analysing (a load that failed did not finish) are the
	 * reader's again: the thread must be out of its loop, but its end (the join) can wait until
	 * the set is built */
	atomic_store(&a->stop, true);
	wait_thread(a, quiet, 0);
	a->next_ended = set->ahead_ended;
	set->ahead_ended = a;
}

void fc_ahead_reap(struct fc_set *set)
{
	while (set->ahead_ended) {
		struct fc_ahead *a = set->ahead_ended;
		set->ahead_ended = a->next_ended;
		pthread_join(a->thread, NULL);
		free(a);
	}
}

/* Chunk c's bytes, in the buffer (read now unless it holds them already). */
static const unsigned char *have(struct fc_ahead *a, size_t c, int *rc)
{
	if (a->held == c + 1) {
		*rc = 0;
		return a->buf;
	}
	a->held = 0;
	if (!(*rc = read_to(a, c, a->buf))) {
		a->held = c + 1;
		return a->buf;
	}
	fc_seterr(a->err, a->path, 0, 0, "read failed: %s", *rc > 0 ? strerror(*rc) : "file shrank");
	if (*rc < 0)
		*rc = EIO;
	return NULL;
}

int fc_ahead_get(struct fc_ahead *a, size_t off, size_t n, const unsigned char **b,
		 size_t *base, size_t *len)
{
	size_t c = off / FC_AHEAD_CHUNK, last = n ? (off + n - 1) / FC_AHEAD_CHUNK : c;
	int rc = 0;

	/* in the tail, once the thread has read it: all of it at once */
	if (a->tail && off >= a->tail_at &&
	    atomic_load_explicit(&a->tail_state, memory_order_acquire) == TAIL_READY) {
		*b = a->tail;
		*base = a->tail_at;
		*len = a->len - a->tail_at;
		return 0;
	}
	if (c == last) {
		*b = c < a->nchunks ? have(a, c, &rc) : a->buf;
		if (!*b)
			return rc;
		*base = c * FC_AHEAD_CHUNK;
		*len = c < a->nchunks ? a->len - *base : 0;
		if (*len > FC_AHEAD_CHUNK)
			*len = FC_AHEAD_CHUNK;
		return 0;
	}
	if (n > a->copycap) {
		unsigned char *nv = realloc(a->copy, n);
		if (!nv)
			return ENOMEM;
		a->copy = nv;
		a->copycap = n;
	}
	/* chunk by chunk: the last stays in the buffer, where the next range starts */
	for (size_t done = 0; done < n; c++) {
		size_t from = (off + done) % FC_AHEAD_CHUNK, k = FC_AHEAD_CHUNK - from;
		if (k > n - done)
			k = n - done;
		const unsigned char *p = have(a, c, &rc);
		if (!p)
			return rc;
		memcpy(a->copy + done, p + from, k);
		done += k;
	}
	*b = a->copy;
	*base = off;
	*len = n;
	return 0;
}
