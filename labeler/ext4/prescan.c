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
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "internal.h"

#define PRESCAN_MIN (4u << 20)

static struct prescan {
	bool started;
	pthread_t thread;
	ext2_filsys fs;
	struct stat st;          /* the file when it was opened */
	char *super, *desc;      /* its superblock and group descriptors then */
	size_t desc_size;
	atomic_bool cancel;      /* the run ended: stop */
	errcode_t rc;
	struct claims_result res;
} ps;

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

static void *scan(void *arg)
{
	struct orphans *o = NULL;
	(void)arg;
	/* (its reads are not the run's: FCLABEL_FAULT's Nth I/O stays the run's) */
	imgfmt_fault_hold(true);
	errcode_t rc = ext2fs_read_block_bitmap(ps.fs);
	if (!rc)
		rc = orphans_read(ps.fs, &o);
	if (!rc)
		rc = claims_scan(ps.fs, o, &ps.res);
	orphans_free(o);
	ps.rc = rc;
	return NULL;
}

static void drop(void)
{
	if (ps.fs)
		ext2fs_close_free(&ps.fs);
	free(ps.super);
	free(ps.desc);
	memset(&ps, 0, sizeof(ps));
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

static void join(void)
{
	if (ps.started)
		pthread_join(ps.thread, NULL);
	ps.started = false;
}

void img_prescan_end(void)
{
	atomic_store(&ps.cancel, true);
	join();
	drop();
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

bool img_prescan_take(ext2_filsys fs, struct claims_result *res)
{
	if (!ps.started)
		return false;
	join();
	bool ok = !ps.rc && !res->keep && same_image(fs);
	if (ok) {
		memcpy(res->cross, ps.res.cross, sizeof(res->cross));
		memcpy(res->free, ps.res.free, sizeof(res->free));
	}
	drop();
	return ok;
}
