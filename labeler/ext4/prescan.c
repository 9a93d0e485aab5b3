/*
 * The image's block claims (claims.c) looked at on a thread of their own, from the moment the
 * image is identified: a relabel spends most of its time loading two policies and comparing them,
 * and the claims scan, which reads every inode table (ext4 has no reverse map: a block claimed
 * twice is found only by looking at every inode in use), then runs on the other core instead of
 * before the first write. The first write still waits for its answer (img_prescan_take), so no
 * write starts before the scan says it is safe.
 *
 * The answer is the image's as the thread read it, through a read-only file system of its own
 * (libext2fs's handles are not shared between threads). It is used only when the run's file
 * system is that image unchanged: the same file (device, inode, size, times), the same
 * superblock and group descriptors (a claim that changes takes or frees a block: the free counts,
 * the bitmaps' checksums and the write time change with it). Anything else (a journal to replay,
 * MMP, a partition, a sparse image, a block device, an error on the thread) and the run scans
 * where it always did, before its first write, on its own file system; so does a small image,
 * whose scan (under PRESCAN_MIN of inodes in use: a millisecond) a thread would not shorten.
 *
 * The run's thread reaches its first write about when the scan ends (a relabel's policies load
 * in about the time the scan takes), and waits for the rest: it then takes its share of what is
 * left (help), units of the inode tables from the same counter, into claims of its own, read
 * through its own file system (which is that image: same_image). The two parts found nothing and
 * claim no block twice between them (claims_overlap), or their answer is not taken: the run then
 * scans as before, and says what the whole scan finds first, word for word. The inode tables are
 * looked at where the image file is mapped (no copy out of the page cache: a fifth of the scan's
 * time), up to its size when it was opened: a table past it is read, and fails as it did.
 * Another program truncating the file under the mapping makes a look at a page no longer there
 * fault (SIGBUS): that part then ends as a read error would (EIO), and the run scans as before.
 */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define PRESCAN_MIN (4u << 20)

static struct prescan {
	bool started, taken;
	pthread_t thread;
	ext2_filsys fs;
	struct stat st;          /* the file when it was opened */
	char *super, *desc;      /* its superblock and group descriptors then */
	size_t desc_size;
	char *map;               /* the file, mapped (NULL: not) */
	atomic_bool cancel;      /* the run ended, or a part found something: stop */
	atomic_size_t next;      /* the next unit of the inode tables (itable_unit) */
	pthread_mutex_t lock;    /* over the flags below */
	pthread_cond_t changed;
	bool done;               /* the thread's part is over (rc) */
	bool helping;            /* the run's thread is taking units (the map stays) */
	bool arrived;            /* the run's thread is at its first write */
	bool go;                 /* (FCLABEL_PRESCAN_SHARE) the run's thread may take units */
	errcode_t rc;
	struct claims *a;        /* the thread's part */
	struct claims_result res;
} ps = { .lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER };

/* Where a part looking at the mapping goes back to if a page faults (this thread's), or NULL. */
static __thread sigjmp_buf *bus_at;

static void on_bus(int sig)
{
	if (bus_at)
		siglongjmp(*bus_at, 1);
	/* not a look at the mapping: the fault it is, as if no handler were here */
	signal(sig, SIG_DFL);
}

/* claims_run looking at the mapping where there is one: EIO when a page of it faulted (the file
 * truncated by another program); the part's claims are then moot. */
static bool bus_guarded;

static void guard_bus(void)
{
	struct sigaction sa = { .sa_handler = on_bus };
	sigemptyset(&sa.sa_mask);
	bus_guarded = !sigaction(SIGBUS, &sa, NULL);
}

static errcode_t run_part(struct claims *c, io_channel io, size_t most)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	sigjmp_buf env;

	if (ps.map)
		pthread_once(&once, guard_bus);
	if (!ps.map || !bus_guarded)
		return claims_run(c, io, NULL, 0, &ps.next, most);
	/* (the thread was made with every signal blocked: a fault blocked kills the process) */
	sigset_t bus;
	sigemptyset(&bus);
	sigaddset(&bus, SIGBUS);
	pthread_sigmask(SIG_UNBLOCK, &bus, NULL);
	if (sigsetjmp(env, 1)) {
		bus_at = NULL;
		return EIO;
	}
	bus_at = &env;
	errcode_t rc = claims_run(c, io, ps.map, (uint64_t)ps.st.st_size, &ps.next, most);
	bus_at = NULL;
	return rc;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

static void set(bool *flag, bool v)
{
	pthread_mutex_lock(&ps.lock);
	*flag = v;
	pthread_cond_broadcast(&ps.changed);
	pthread_mutex_unlock(&ps.lock);
}

/* (for the test suite, FCLABEL_PRESCAN_SHARE=K: the thread waits for the run's thread to be at
 * its first write, takes the first K units of the tables, and only then lets the run's thread
 * take the others: the parts split where the test wants) */
static size_t share(void)
{
	const char *e = getenv("FCLABEL_PRESCAN_SHARE");
	return e && *e ? strtoull(e, NULL, 10) : 0;
}

static void wait_until(const bool *flag)
{
	pthread_mutex_lock(&ps.lock);
	while (!*flag && !atomic_load(&ps.cancel))
		pthread_cond_wait(&ps.changed, &ps.lock);
	pthread_mutex_unlock(&ps.lock);
}

static errcode_t scan_part(void)
{
	size_t k = share();
	errcode_t rc = 0;

	if (k) {
		wait_until(&ps.arrived);
		rc = run_part(ps.a, ps.fs->io, k);
		set(&ps.go, true);
		pthread_mutex_lock(&ps.lock);
		while (ps.helping)
			pthread_cond_wait(&ps.changed, &ps.lock);
		pthread_mutex_unlock(&ps.lock);
	}
	return rc ? rc : run_part(ps.a, ps.fs->io, SIZE_MAX);
}

static void *scan(void *arg)
{
	struct orphans *o = NULL;
	(void)arg;
	/* (its reads are not the run's: FCLABEL_FAULT's Nth I/O stays the run's) */
	imgfmt_fault_hold(true);
	ps.res.cancel = &ps.cancel;
	errcode_t rc = ext2fs_read_block_bitmap(ps.fs);
	if (!rc)
		rc = orphans_read(ps.fs, &o);
	if (!rc)
		rc = claims_new(ps.fs, o, &ps.res, &ps.a);
	if (!rc)
		rc = scan_part();
	ps.rc = rc;
	/* the run's part may still read the map */
	pthread_mutex_lock(&ps.lock);
	ps.done = ps.go = true;
	pthread_cond_broadcast(&ps.changed);
	while (ps.helping)
		pthread_cond_wait(&ps.changed, &ps.lock);
	pthread_mutex_unlock(&ps.lock);
	/* (unmapped here, on this core: letting a mapping's pages go takes a while) */
	if (ps.map)
		munmap(ps.map, ps.st.st_size);
	ps.map = NULL;
	orphans_free(o);
	return NULL;
}

static void join(void)
{
	if (ps.started)
		pthread_join(ps.thread, NULL);
	ps.started = false;
}

static void drop(void)
{
	join();
	if (ps.fs)
		ext2fs_close_free(&ps.fs);
	claims_free(ps.a);
	ps.a = NULL;
	free(ps.super);
	free(ps.desc);
	ps.super = ps.desc = NULL;
	if (ps.map)
		munmap(ps.map, ps.st.st_size);
	ps.map = NULL;
}

/* (for the test suite, FCLABEL_PRESCAN_MIN: any size, 0 for every image) */
static uint64_t prescan_min(void)
{
	const char *e = getenv("FCLABEL_PRESCAN_MIN");
	return e && *e ? strtoull(e, NULL, 10) : PRESCAN_MIN;
}

/* The bytes of inodes in use, which the scan reads. */
static uint64_t inodes_in_use(ext2_filsys fs)
{
	uint32_t used = fs->super->s_inodes_count - fs->super->s_free_inodes_count;
	return used > fs->super->s_inodes_count ? 0 : (uint64_t)used * EXT2_INODE_SIZE(fs->super);
}

/* The file's bytes, mapped read-only: where the scan looks at the inode tables (NULL: they are
 * read). Opened again by name: the stat is compared with the run's at the end (same_file). */
static char *map_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	void *m = MAP_FAILED;

	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && same_file(&st, &ps.st) && st.st_size > 0 &&
	    (uint64_t)st.st_size <= SIZE_MAX)
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	return m == MAP_FAILED ? NULL : m;
}

/* The file system the thread reads, opened here (the open is not shared with the run either);
 * false when the image is not one it may scan. */
static bool open_image(const char *path)
{
	enum img_format fmt;
	char why[256];
	errcode_t rc;

	if (stat(path, &ps.st) || !S_ISREG(ps.st.st_mode))
		return false;
	imgfmt_fault_hold(true);
	rc = imgfmt_detect(path, &fmt, why, sizeof(why));
	if (!rc && fmt == IMGFMT_RAW)
		rc = ext2fs_open2(path, NULL, EXT2_FLAG_64BITS | EXT2_FLAG_SKIP_MMP, 0, 0,
				  imgfmt_replace_manager, &ps.fs);
	imgfmt_fault_hold(false);
	if (rc || fmt != IMGFMT_RAW || !ps.fs)
		return false;
	ext2_filsys fs = ps.fs;
	if (ext2fs_has_feature_journal_needs_recovery(fs->super) || ext2fs_has_feature_mmp(fs->super) ||
	    inodes_in_use(fs) < prescan_min())
		return false;
	ps.desc_size = (size_t)fs->desc_blocks * fs->blocksize;
	ps.super = malloc(SUPERBLOCK_SIZE);
	ps.desc = malloc(ps.desc_size);
	if (!ps.super || !ps.desc)
		return false;
	memcpy(ps.super, fs->super, SUPERBLOCK_SIZE);
	memcpy(ps.desc, fs->group_desc, ps.desc_size);
	ps.map = map_file(path);
	return true;
}

void img_prescan_start(const char *path, const struct img_part *part)
{
	sigset_t all, old;

	if (ps.started || (part && part->set) || label_stop_signal)
		return;
	if (!open_image(path)) {
		drop();
		return;
	}
	/* signals go to the run's thread (a SIGINT must interrupt its wait for a lock) */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ps.started = !pthread_create(&ps.thread, NULL, scan, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!ps.started)
		drop();
}

/* (under the lock: the thread may be waiting for the run's, wait_for_run) */
static void cancel(void)
{
	pthread_mutex_lock(&ps.lock);
	atomic_store(&ps.cancel, true);
	pthread_cond_broadcast(&ps.changed);
	pthread_mutex_unlock(&ps.lock);
}

void img_prescan_end(void)
{
	cancel();
	drop();
	ps.taken = false;
	ps.done = ps.helping = ps.arrived = ps.go = false;
	ps.rc = 0;
	atomic_store(&ps.next, 0);
	atomic_store(&ps.cancel, false);
}

/* Whether fs is the image the thread read, as it read it. */
static bool same_image(ext2_filsys fs)
{
	struct stat st;
	return fs->device_name && ps.fs && !strcmp(fs->device_name, ps.fs->device_name) &&
	       !stat(fs->device_name, &st) && same_file(&st, &ps.st) &&
	       fs->blocksize == ps.fs->blocksize && fs->desc_blocks == ps.fs->desc_blocks &&
	       !memcmp(fs->super, ps.super, SUPERBLOCK_SIZE) &&
	       !memcmp(fs->group_desc, ps.desc, ps.desc_size);
}

/* The run's thread takes units while any is left, into claims of its own made on fs (the image
 * the thread reads: same_image): b, or NULL when it took no part or found something (then the
 * thread is stopped). */
static struct claims *help(ext2_filsys fs, const struct orphans *o, struct claims_result *res)
{
	struct claims *b = NULL;
	bool may = !ext2fs_has_feature_bigalloc(fs->super) &&
		   !ext2fs_has_feature_shared_blocks(fs->super);
	pthread_mutex_lock(&ps.lock);
	ps.arrived = true;
	ps.helping = may && !ps.done;
	pthread_cond_broadcast(&ps.changed);
	pthread_mutex_unlock(&ps.lock);
	if (!ps.helping)
		return NULL;
	if (claims_new(fs, o, res, &b)) {
		set(&ps.helping, false);
		return NULL;
	}
	if (share())
		wait_until(&ps.go);
	res->cancel = &ps.cancel;
	imgfmt_fault_hold(true);
	errcode_t rc = run_part(b, fs->io, SIZE_MAX);
	imgfmt_fault_hold(false);
	if (rc || res->cross[0] || res->free[0]) {
		claims_free(b); /* (the run scans again: the thread's part is moot) */
		b = NULL;
		cancel();
	}
	set(&ps.helping, false);
	return b;
}

/* Whether the thread's part, and b's, found nothing, together: no block claimed by both. */
static bool apart(const struct claims *b)
{
	bool overlap = true;
	return !ps.res.cross[0] && !ps.res.free[0] && !claims_overlap(ps.a, b, &overlap) &&
	       !overlap;
}

/* The thread's answer, with b's part (NULL: none): whether it is the whole scan's. */
static bool answer(const struct claims *b, struct claims_result *res)
{
	pthread_mutex_lock(&ps.lock);
	while (!ps.done)
		pthread_cond_wait(&ps.changed, &ps.lock);
	pthread_mutex_unlock(&ps.lock);
	if (ps.rc || (b && !apart(b)))
		return false;
	memcpy(res->cross, ps.res.cross, sizeof(res->cross));
	memcpy(res->free, ps.res.free, sizeof(res->free));
	return true;
}

bool img_prescan_take(ext2_filsys fs, const struct orphans *o, struct claims_result *res)
{
	struct claims_result bres;
	struct claims *b;
	bool ok;

	if (!ps.started || ps.taken)
		return false;
	ps.taken = true;
	if (res->keep || !same_image(fs)) {
		cancel();
		return false;
	}
	b = help(fs, o, &bres);
	if (b && claims_units(b) == itable_units(fs)) {
		/* (b took every unit, in order: it was the whole scan, and found nothing) */
		cancel();
		res->cross[0] = res->free[0] = 0;
		ok = true;
	} else {
		ok = answer(b, res) && (b || !atomic_load(&ps.cancel));
	}
	claims_free(b);
	/* (a signal the thread's read raised is met by this thread: as when this thread reads, the
	 * scan it came in stops, and nothing is written) */
	return ok && !label_stop_signal;
}
