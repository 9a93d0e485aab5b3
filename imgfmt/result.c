/*
 * The result of the copy-and-rename writer (replace.c): the file it is built in, beside the
 * output; the copy of the input that a thread makes into it from the first write on; and at close
 * the changed blocks patched in (or the rest written anew by the format), the file synced, and
 * put over the image while its path still names the file that was opened.
 */
#include <errno.h>
#include <et/com_err.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static bool sync_result = true;

void imgfmt_set_sync(bool sync)
{
	sync_result = sync;
}

/* fsync (or fdatasync), rename and ftruncate, each one an I/O FCLABEL_FAULT can fail. */
static int ic_sync(int fd, bool data_only)
{
	int e = imgfmt_fault(IMGIO_SYNC);
	if (e) {
		errno = e;
		return -1;
	}
	return data_only ? fdatasync(fd) : fsync(fd);
}

static int ic_rename(const char *from, const char *to)
{
	int e = imgfmt_fault(IMGIO_RENAME);
	if (e) {
		errno = e;
		return -1;
	}
	return rename(from, to);
}

/* renameat2's RENAME_EXCHANGE: both names stay, each naming the other's file. */
static int ic_exchange(const char *a, const char *b)
{
	int e = imgfmt_fault(IMGIO_RENAME);
	if (e) {
		errno = e;
		return -1;
	}
	return renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
}

static int ic_truncate(int fd, uint64_t size)
{
	int e = imgfmt_fault(IMGIO_FWRITE);
	if (e) {
		errno = e;
		return -1;
	}
	return ftruncate(fd, (off_t)size);
}

/* ---- the copy of the input, made while the labeler works ---- */

/* Copies bytes [pos, n) of fd in to the same offsets of fd out, inside the kernel where it can;
 * *done (when given) follows what is copied. */
errcode_t ic_copy_range(int in, int out, uint64_t pos, uint64_t n, _Atomic uint64_t *done)
{
	char *buf = NULL;
	errcode_t rc = 0;
	while (pos < n) {
		size_t k = n - pos < IC_COPY_BUF ? (size_t)(n - pos) : IC_COPY_BUF;
		ssize_t r = -1;
		if (!buf) {
			loff_t i = (loff_t)pos, o = (loff_t)pos;
			int e = imgfmt_fault(IMGIO_FWRITE);
			if (e) {
				rc = e;
				break;
			}
			r = copy_file_range(in, &i, out, &o, k, 0);
		}
		if (r <= 0) {
			if (!buf && !(buf = malloc(IC_COPY_BUF))) {
				rc = ENOMEM;
				break;
			}
			if (!ic_pread_all(in, buf, k, pos)) {
				rc = errno ? errno : EXT2_ET_SHORT_READ;
				break;
			}
			if (!ic_pwrite_all(out, buf, k, pos)) {
				rc = errno ? errno : EIO;
				break;
			}
			r = (ssize_t)k;
		}
		pos += (uint64_t)r;
		if (done)
			atomic_store_explicit(done, pos, memory_order_release);
	}
	free(buf);
	return rc;
}

static errcode_t copy_fd(int in, int out, uint64_t n)
{
	return ic_copy_range(in, out, 0, n, NULL);
}

/* Copies the whole input into the result file, holes left as holes (a raw image is mostly
 * holes), following the progress in copied_to. */
static errcode_t copy_whole(struct imgcopy *s)
{
	uint64_t pos = 0, n = s->fsize;
	if (ic_truncate(s->tfd, n) < 0)
		return errno;
	while (pos < n) {
		off_t data = lseek(s->fd, (off_t)pos, SEEK_DATA), hole;
		if (data < 0 && errno == ENXIO)
			break; /* only a hole is left */
		if (data < 0 || (hole = lseek(s->fd, data, SEEK_HOLE)) < 0) {
			data = (off_t)pos; /* no hole information: copy the rest */
			hole = (off_t)n;
		}
		if ((uint64_t)hole > n)
			hole = (off_t)n;
		atomic_store_explicit(&s->copied_to, (uint64_t)data, memory_order_release);
		errcode_t rc = ic_copy_range(s->fd, s->tfd, (uint64_t)data, (uint64_t)hole, &s->copied_to);
		if (rc)
			return rc;
		pos = (uint64_t)hole;
	}
	atomic_store_explicit(&s->copied_to, n, memory_order_release);
	return 0;
}

/* The file the result is built in, beside the output: unnamed where the filesystem allows. */
static errcode_t make_result_file(struct imgcopy *s)
{
	char *d = strdup(s->out);
	errcode_t rc = 0;
	if (!d)
		return ENOMEM;
	const char *dir = dirname(d);
	s->tfd = -1;
#ifdef O_TMPFILE
	s->tfd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
#endif
	if (s->tfd < 0) {
		if (asprintf(&s->tname, "%s/.fclabel-new-XXXXXX", dir) < 0) {
			s->tname = NULL;
			rc = ENOMEM;
		} else if ((s->tfd = mkstemp(s->tname)) < 0) {
			rc = ic_fail(errno, "%s: cannot create a temporary file beside it: %s", s->out,
				  strerror(errno));
			free(s->tname);
			s->tname = NULL;
		}
	}
	free(d);
	return rc;
}

static void *copy_input(void *arg)
{
	struct imgcopy *s = arg;
	errcode_t rc = copy_whole(s);
	if (!rc && sync_result && ic_sync(s->tfd, true) < 0)
		rc = errno;
	s->copy_rc = rc;
	return NULL;
}

/* On the first write: start copying the input into the result file, in the background. */
void ic_start_copy(struct imgcopy *s)
{
	s->copy_tried = true;
	if (s->whole || s->discard)
		return;
	if (make_result_file(s)) {
		ic_clear_error(); /* tried again, and reported, at close */
		return;
	}
	if (pthread_create(&s->copier, NULL, copy_input, s) == 0)
		s->copying = true;
}

void ic_join_copy(struct imgcopy *s)
{
	if (s->copying) {
		pthread_join(s->copier, NULL);
		s->copying = false;
		s->copied = !s->copy_rc;
	}
}

/* ---- writing the result ---- */

/* Whether path names the input as it was opened (device and inode). */
static bool is_input(const struct imgcopy *s, const char *path)
{
	struct stat st;
	return !lstat(path, &st) && st.st_dev == s->in_dev && st.st_ino == s->in_ino;
}

/* Why the result does not go over the image: its path names another file, or none. */
static errcode_t not_the_image(struct imgcopy *s, bool gone)
{
	if (gone)
		return ic_fail(ENOENT, "%s was moved or removed during the run (the path names "
			       "nothing now); nothing written", s->out);
	return ic_fail(ESTALE, "%s was replaced by another file during the run; nothing written",
		       s->out);
}

/*
 * Puts the finished result (named tmp, beside the output) at the output, and removes the name
 * tmp (unless it then names another program's file, which the message says). Over the image
 * itself, only while its path still names the very file that was opened, not another one moved
 * there during the run: the two names are exchanged (RENAME_EXCHANGE) and what comes back under
 * tmp must be the image, else they are exchanged back. Where the file system cannot exchange
 * (EINVAL; ENOSYS before Linux 3.15) the path is looked at just before a plain rename, which
 * leaves a window of microseconds instead of the whole run.
 */
static errcode_t install(struct imgcopy *s, const char *tmp)
{
	errcode_t rc = 0;

	if (s->out_differs) {
		if (ic_rename(tmp, s->out) < 0) {
			rc = ic_fail(errno, "%s: cannot rename the new image over it: %s", s->out,
				     strerror(errno));
			unlink(tmp);
		}
		return rc;
	}
	if (ic_exchange(tmp, s->out) == 0) {
		if (is_input(s, tmp)) {
			/* the image, now under the temporary name (a kill right here leaves it
			 * there, beside the result: space, not harm) */
			unlink(tmp);
			return 0;
		}
		if (renameat2(AT_FDCWD, tmp, AT_FDCWD, s->out, RENAME_EXCHANGE) < 0)
			return ic_fail(errno, "%s was replaced by another file during the run, and "
				       "putting that file back failed (%s): it is now %s, and the "
				       "labeled image is at %s", s->out, strerror(errno), tmp,
				       s->out);
		unlink(tmp);
		return not_the_image(s, false);
	}
	int e = errno;
	struct stat st;
	if (e == ENOENT)
		rc = not_the_image(s, true);
	else if (e != EINVAL && e != ENOSYS)
		rc = ic_fail(e, "%s: cannot rename the new image over it: %s", s->out, strerror(e));
	else if (lstat(s->out, &st) < 0)
		rc = errno == ENOENT ? not_the_image(s, true)
				     : ic_fail(errno, "%s: %s", s->out, strerror(errno));
	else if (st.st_dev != s->in_dev || st.st_ino != s->in_ino)
		rc = not_the_image(s, false);
	else if (ic_rename(tmp, s->out) < 0)
		rc = ic_fail(errno, "%s: cannot rename the new image over it: %s", s->out,
			     strerror(errno));
	if (rc)
		unlink(tmp);
	return rc;
}

/* Gives the finished result file its place: renamed over the output. */
static errcode_t publish(struct imgcopy *s, const char *dir)
{
	if (s->tname) {
		errcode_t rc = install(s, s->tname);
		free(s->tname);
		s->tname = NULL;
		return rc;
	}
	/* an unnamed file: link it under a temporary name, then rename that over the output */
	char *tmp = NULL, proc[64];
	errcode_t rc = 0;
	for (unsigned i = 0;; i++) {
		free(tmp);
		if (asprintf(&tmp, "%s/.fclabel-new-%ld-%u", dir, (long)getpid(), i) < 0)
			return ENOMEM;
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", s->tfd);
		if (linkat(s->tfd, "", AT_FDCWD, tmp, AT_EMPTY_PATH) == 0 ||
		    linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0)
			break;
		if (errno == EEXIST && i < 100)
			continue;
		/* no way to name it: copy it into a named temporary file */
		free(tmp);
		tmp = NULL;
		int fd = s->tfd;
		struct stat st;
		if (fstat(fd, &st) < 0)
			return errno;
		s->tfd = -1;
		if ((rc = make_result_file(s)) || !s->tname) {
			close(fd);
			return rc ? rc : EIO;
		}
		fchmod(s->tfd, st.st_mode & 07777);
		rc = copy_fd(fd, s->tfd, (uint64_t)st.st_size);
		close(fd);
		if (!rc && sync_result && ic_sync(s->tfd, false) < 0)
			rc = errno;
		return rc ? rc : publish(s, dir);
	}
	rc = install(s, tmp);
	free(tmp);
	return rc;
}

/* Whether every changed block sits in a RAW chunk, so that the result keeps the input's layout. */
static bool layout_kept(struct imgcopy *s)
{
	for (size_t b = 0; s->key && b <= s->mask; b++) {
		const struct chunk *c = s->key[b] ? ic_find_chunk(s, s->key[b] - 1) : NULL;
		if (c && c->type != CT_RAW)
			return false;
	}
	for (unsigned e = 0; s->wb && e < WB_N; e++) {
		const struct chunk *c = s->wb_dirty[e] ? ic_find_chunk(s, s->wb_blk[e]) : NULL;
		if (c && c->type != CT_RAW)
			return false;
	}
	return true;
}

/* The input is no longer read once the result keeps its layout: dropping its cached pages here,
 * beside the patching and syncing, spares the final close (which frees the replaced file). */
static void *drop_input(void *arg)
{
	struct imgcopy *s = arg;
	posix_fadvise(s->fd, 0, 0, POSIX_FADV_DONTNEED);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The changed blocks, sorted, without repeats: what the result is built from, so that closing
 * costs time in the blocks that changed and the chunks, never in the declared size. */
static uint64_t *changed_list(struct imgcopy *s, size_t *n)
{
	size_t cap = s->used + WB_N + 1, k = 0;
	uint64_t *a = malloc(cap * sizeof(*a));
	if (!a)
		return NULL;
	for (size_t b = 0; s->key && b <= s->mask; b++)
		if (s->key[b] && k < cap)
			a[k++] = s->key[b] - 1;
	for (unsigned e = 0; s->wb && e < WB_N; e++)
		if (s->wb_dirty[e] && k < cap)
			a[k++] = s->wb_blk[e];
	qsort(a, k, sizeof(*a), cmp_u64);
	size_t u = 0;
	for (size_t i = 0; i < k; i++)
		if (!u || a[u - 1] != a[i])
			a[u++] = a[i];
	*n = u;
	return a;
}

/* The first index i with a[i] >= v. */
size_t ic_at_or_after(const uint64_t *a, size_t n, uint64_t v)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (a[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Blocks written straight into the result move to the overlay: before the result is written
 * anew (the copy failed, or the layout changes and the rewrite would pass over them). */
static errcode_t undirect(struct imgcopy *s)
{
	for (size_t b = 0; s->key && b <= s->mask; b++) {
		uint64_t off;
		if (!s->key[b] || s->slot[b] != DIRECT)
			continue;
		if (!ic_raw_offset(s, s->key[b] - 1, &off) ||
		    !ic_pread_all(s->tfd, s->blk, s->blksz, off))
			return EXT2_ET_SHORT_READ;
		if (!ic_pwrite_all(s->ofd, s->blk, s->blksz, (uint64_t)s->nslots * s->blksz))
			return EXT2_ET_SHORT_WRITE;
		s->slot[b] = (uint32_t)s->nslots++;
	}
	return 0;
}

/* Patches the changed blocks of RAW chunks into the copy, at their own offsets, as long as the
 * layout is kept; *from is the first chunk whose layout changes (nc when none does). */
static errcode_t patch_copy(struct imgcopy *s, const uint64_t *chg, size_t nchg, char *buf,
			    size_t *from)
{
	for (size_t i = 0; i < s->nc; i++) {
		const struct chunk *c = &s->c[i];
		uint64_t end = c->start + c->nblk;
		size_t j = ic_at_or_after(chg, nchg, c->start);
		if (c->type != CT_RAW) {
			if (j < nchg && chg[j] < end) {
				/* a write into a FILL or DONT_CARE run */
				*from = i;
				return 0;
			}
			continue;
		}
		for (; j < nchg && chg[j] < end; j++) {
			uint64_t k = chg[j];
			errcode_t rc;
			if (!ic_in_wb(s, k) && ic_ov_find(s, k) == (int64_t)DIRECT)
				continue; /* already there */
			if ((rc = ic_get_block(s, k, buf)))
				return rc;
			if (!ic_pwrite_all(s->tfd, buf, s->blksz, c->off + (k - c->start) * s->blksz))
				return errno ? errno : EIO;
		}
	}
	*from = s->nc;
	return 0;
}

/* The result file ends at end, has the mode and, where we may, the owner of the input (the
 * file it replaces, or with -o the one it was made from: not a temporary file's 0600), and is
 * on disk. */
static errcode_t finish_file(struct imgcopy *s, uint64_t end)
{
	struct stat st;
	if (fstat(s->fd, &st) == 0) {
		if (fchown(s->tfd, st.st_uid, st.st_gid) < 0)
			(void)0; /* not ours to give away: it stays ours */
		fchmod(s->tfd, st.st_mode & 07777);
	}
	errno = 0;
	if (ic_truncate(s->tfd, end) < 0)
		return ic_fail(errno ? errno : EIO, "%s: cannot set the size of the new image: %s",
			       s->out, strerror(errno ? errno : EIO));
	if (sync_result && ic_sync(s->tfd, false) < 0)
		return ic_fail(errno ? errno : EIO, "%s: syncing the new image failed: %s", s->out,
			       strerror(errno ? errno : EIO));
	return 0;
}

/* The result file holds the input (copied in the background, or now) before it is patched. */
static errcode_t prepare_result(struct imgcopy *s)
{
	errcode_t rc;
	ic_join_copy(s);
	if (!s->copied && (rc = undirect(s)))
		return rc;
	if (s->tfd < 0 && (rc = make_result_file(s)))
		return rc;
	if (s->raw && !s->copied) {
		/* a raw image is always the input copied, then patched */
		if ((rc = copy_whole(s)))
			return rc;
		s->copied = true;
	}
	return 0;
}

/* A failed step of writing the result: its message names the output and the step (unless the
 * step gave its own). */
static errcode_t step_failed(struct imgcopy *s, errcode_t rc, const char *step)
{
	if (!rc || imgfmt_error())
		return rc;
	return ic_fail(rc, "%s: %s failed: %s; the original is as it was", s->out, step,
		       error_message(rc));
}

errcode_t ic_write_result(struct imgcopy *s)
{
	char *dirc = strdup(s->out), *buf = malloc(s->blksz);
	errcode_t rc = ENOMEM;
	pthread_t dropper;
	bool dropping = false;
	uint64_t *chg = NULL, end = s->end;
	size_t nchg = 0, from = 0;

	ic_clear_error();
	if (!dirc || !buf)
		goto out;
	const char *dir = dirname(dirc);
	if ((rc = step_failed(s, prepare_result(s), "copying the image into a new file beside it")))
		goto out;
	if (!(chg = changed_list(s, &nchg))) {
		rc = ENOMEM;
		goto out;
	}
	/* while same, the result file holds the input byte for byte and keeps its layout */
	bool same = s->copied && !s->whole;
	dropping = same && !s->out_differs && layout_kept(s) &&
		   pthread_create(&dropper, NULL, drop_input, s) == 0;
	if (same && (rc = step_failed(s, patch_copy(s, chg, nchg, buf, &from),
				      "writing the changed blocks into the new file")))
		goto out;
	/* from `from` on the format writes anew, passing over blocks written straight in */
	if (same && from < s->nc &&
	    (rc = step_failed(s, undirect(s), "moving changed blocks aside")))
		goto out;
	if (s->fmt->rewrite &&
	    (rc = step_failed(s, s->fmt->rewrite(s, from, !same, chg, nchg, s->tfd, &end),
			      "writing the new image")))
		goto out;
	if ((rc = step_failed(s, finish_file(s, end), "finishing the new file")) ||
	    (rc = step_failed(s, publish(s, dir), "renaming the new image over it")))
		goto out;
	int dfd = sync_result ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (dfd >= 0) {
		if (ic_sync(dfd, false) < 0) {
			rc = ic_fail(errno, "%s: the new image is in place, but syncing its folder %s "
				     "failed (%s): it may not survive a power cut", s->out, dir,
				     strerror(errno));
		}
		close(dfd);
	}
out:
	if (dropping)
		pthread_join(dropper, NULL);
	free(chg);
	free(dirc);
	free(buf);
	return rc;
}

