/*
 * The copy-and-rename writer behind both of imgfmt's io_managers: the input is only read, the
 * result is built in a temporary file beside the output, synced, and renamed over it, so an
 * interrupted run leaves the original whole.
 *
 * Written blocks go to an unlinked overlay file beside the output, with an index in memory:
 * memory and disk grow with the blocks that change, not with the image. To keep the cost close
 * to writing in place, the first write starts a thread that copies the input into the result
 * file (holes kept) and syncs it while the labeler works. A changed block of a RAW chunk that the
 * copy has already passed is written straight into the copy at its own offset; the others wait
 * in the overlay. At close those that sit in RAW chunks are patched in, and from the first change
 * that alters the layout on, the format writes the rest anew (sparse.c). The result file is
 * unnamed (O_TMPFILE) where the file system allows it, so a killed run leaves nothing behind.
 *
 * A raw image is laid out here as one RAW chunk from offset 0 with no headers: its result is
 * always the input copied, then patched.
 */
#include <errno.h>
#include <et/com_err.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "internal.h"

static char last_error[512];
static char *output_path;
static char *replace_image;
static struct imgcopy *last_rw; /* the open read-write image, for a discard through a wrapper */
static bool sync_result = true;

void imgfmt_set_sync(bool sync)
{
	sync_result = sync;
}

const char *imgfmt_error(void)
{
	return last_error[0] ? last_error : NULL;
}

void imgfmt_set_image(const char *path)
{
	free(replace_image);
	replace_image = path ? strdup(path) : NULL;
}

void imgfmt_set_output(const char *path)
{
	free(output_path);
	output_path = path ? strdup(path) : NULL;
}

errcode_t ic_fail(errcode_t rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return rc;
}

/* Whole reads and writes: short transfers continue, EINTR is retried. */
static bool io_all(int fd, void *buf, size_t n, uint64_t off, bool write)
{
	char *p = buf;
	int e = imgfmt_fault(write ? IMGIO_FWRITE : IMGIO_FREAD);
	if (e) {
		errno = e;
		return false;
	}
	while (n) {
		ssize_t r = write ? pwrite(fd, p, n, (off_t)off) : pread(fd, p, n, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			errno = write ? ENOSPC : 0; /* (a read: the file ends early) */
		if (r <= 0)
			return false;
		p += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return true;
}

bool ic_pread_all(int fd, void *buf, size_t n, uint64_t off)
{
	return io_all(fd, buf, n, off, false);
}

bool ic_pwrite_all(int fd, const void *buf, size_t n, uint64_t off)
{
	return io_all(fd, (void *)buf, n, off, true);
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

void ic_fill_block(char *b, uint32_t blksz, uint32_t fill)
{
	for (uint32_t i = 0; i < blksz; i += 4)
		memcpy(b + i, &fill, 4);
}

/* A raw image as one RAW chunk from offset 0 (no headers): the same copy, patch and rename. */
static errcode_t raw_parse(struct imgcopy *s, const char *name)
{
	(void)name;
	struct stat st;
	if (fstat(s->fd, &st) < 0)
		return errno;
	s->fsize = s->end = (uint64_t)st.st_size;
	/* the largest unit (up to 4 KiB) the size is a multiple of: a tail shorter than that is
	 * copied, never addressed (the file system ends before it) */
	s->blksz = 4096;
	while (s->blksz > 512 && s->fsize % s->blksz)
		s->blksz /= 2;
	s->total = s->fsize / s->blksz;
	if (!s->total)
		return 0;
	if (!(s->c = calloc(1, sizeof(*s->c))))
		return ENOMEM;
	s->c[0] = (struct chunk){ .start = 0, .nblk = s->total, .type = CT_RAW };
	s->nc = 1;
	return 0;
}

struct chunk *ic_find_chunk(struct imgcopy *s, uint64_t blk)
{
	size_t lo = 0, hi = s->nc;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (blk < s->c[mid].start)
			hi = mid;
		else if (blk >= s->c[mid].start + s->c[mid].nblk)
			lo = mid + 1;
		else
			return &s->c[mid];
	}
	return NULL;
}

static int64_t ov_find(struct imgcopy *s, uint64_t blk)
{
	if (!s->key)
		return -1;
	for (size_t b = (blk * 0x9e3779b97f4a7c15ull) >> 20 & s->mask;; b = (b + 1) & s->mask) {
		if (!s->key[b])
			return -1;
		if (s->key[b] == blk + 1)
			return s->slot[b];
	}
}

/* Records where block blk now is: a slot of the overlay file, or DIRECT. */
static errcode_t ov_set(struct imgcopy *s, uint64_t blk, uint32_t slot)
{
	for (size_t b = (blk * 0x9e3779b97f4a7c15ull) >> 20 & s->mask; s->key && s->key[b];
	     b = (b + 1) & s->mask)
		if (s->key[b] == blk + 1) {
			s->slot[b] = slot;
			return 0;
		}
	if ((s->used + 1) * 2 > s->mask + 1 || !s->key) {
		size_t nm = s->key ? s->mask * 2 + 1 : 1023;
		uint64_t *nk = calloc(nm + 1, sizeof(*nk));
		uint32_t *ns = calloc(nm + 1, sizeof(*ns));
		if (!nk || !ns) {
			free(nk);
			free(ns);
			return ENOMEM;
		}
		for (size_t i = 0; s->key && i <= s->mask; i++)
			if (s->key[i]) {
				size_t b = ((s->key[i] - 1) * 0x9e3779b97f4a7c15ull) >> 20 & nm;
				while (nk[b])
					b = (b + 1) & nm;
				nk[b] = s->key[i];
				ns[b] = s->slot[i];
			}
		free(s->key);
		free(s->slot);
		s->key = nk;
		s->slot = ns;
		s->mask = nm;
	}
	size_t b = (blk * 0x9e3779b97f4a7c15ull) >> 20 & s->mask;
	while (s->key[b])
		b = (b + 1) & s->mask;
	s->key[b] = blk + 1;
	s->slot[b] = slot;
	s->used++;
	return 0;
}

#define WB_N 64

/* Where block blk lies in the input (and, while the layout is kept, in the result), when it
 * is in a RAW chunk. */
static bool raw_offset(struct imgcopy *s, uint64_t blk, uint64_t *off)
{
	const struct chunk *c = ic_find_chunk(s, blk);
	if (!c || c->type != CT_RAW)
		return false;
	*off = c->off + (blk - c->start) * s->blksz;
	return true;
}

static errcode_t wb_flush_one(struct imgcopy *s, unsigned e)
{
	if (!s->wb_dirty[e])
		return 0;
	uint64_t blk = s->wb_blk[e], off;
	const char *data = s->wb + (size_t)e * s->blksz;
	int64_t slot = ov_find(s, blk);
	errcode_t rc;
	/* Once the copy has passed it, a block of a RAW chunk goes straight into the result at its
	 * own offset (the copier never writes there again): nothing to patch at close. */
	if (s->copying && !s->whole && raw_offset(s, blk, &off) &&
	    off + s->blksz <= atomic_load_explicit(&s->copied_to, memory_order_acquire)) {
		if (!ic_pwrite_all(s->tfd, data, s->blksz, off))
			return EXT2_ET_SHORT_WRITE;
		if (slot != (int64_t)DIRECT && (rc = ov_set(s, blk, DIRECT)))
			return rc;
		s->wb_dirty[e] = false;
		return 0;
	}
	if (slot < 0 || slot == (int64_t)DIRECT) {
		slot = (int64_t)s->nslots;
		if ((rc = ov_set(s, blk, (uint32_t)s->nslots)))
			return rc;
		s->nslots++;
	}
	if (!ic_pwrite_all(s->ofd, data, s->blksz, (uint64_t)slot * s->blksz))
		return EXT2_ET_SHORT_WRITE;
	s->wb_dirty[e] = false;
	return 0;
}

static bool in_wb(const struct imgcopy *s, uint64_t blk)
{
	unsigned e = (unsigned)(blk % WB_N);
	return s->wb && s->wb_dirty[e] && s->wb_blk[e] == blk;
}

/* changed by this run: in the overlay or waiting in the cache */
bool ic_changed(struct imgcopy *s, uint64_t blk)
{
	return in_wb(s, blk) || ov_find(s, blk) >= 0;
}

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
static void start_copy(struct imgcopy *s)
{
	s->copy_tried = true;
	if (s->whole || s->discard)
		return;
	if (make_result_file(s)) {
		last_error[0] = 0; /* tried again, and reported, at close */
		return;
	}
	if (pthread_create(&s->copier, NULL, copy_input, s) == 0)
		s->copying = true;
}

static void join_copy(struct imgcopy *s)
{
	if (s->copying) {
		pthread_join(s->copier, NULL);
		s->copying = false;
		s->copied = !s->copy_rc;
	}
}

static errcode_t put_block(struct imgcopy *s, uint64_t blk, const char *data)
{
	if (!s->copy_tried && s->rw)
		start_copy(s);
	unsigned e = (unsigned)(blk % WB_N);
	if (!s->wb && !(s->wb = malloc((size_t)WB_N * s->blksz)))
		return ENOMEM;
	if (s->wb_dirty[e] && s->wb_blk[e] != blk) {
		errcode_t rc = wb_flush_one(s, e);
		if (rc)
			return rc;
	}
	memcpy(s->wb + (size_t)e * s->blksz, data, s->blksz);
	s->wb_blk[e] = blk;
	s->wb_dirty[e] = true;
	s->dirty = true;
	return 0;
}

/* A failed read of a file of ours: what the system said (EIO is not a block outside the image,
 * which is EXT2_ET_SHORT_READ). */
static errcode_t read_error(void)
{
	return errno && errno != EINTR ? errno : EXT2_ET_SHORT_READ;
}

/* One sparse block, as the image has it now. */
errcode_t ic_get_block(struct imgcopy *s, uint64_t blk, char *dst)
{
	if (in_wb(s, blk)) {
		memcpy(dst, s->wb + (size_t)(blk % WB_N) * s->blksz, s->blksz);
		return 0;
	}
	int64_t slot = ov_find(s, blk);
	uint64_t off;
	if (slot == (int64_t)DIRECT && raw_offset(s, blk, &off))
		return ic_pread_all(s->tfd, dst, s->blksz, off) ? 0 : read_error();
	if (slot >= 0)
		return ic_pread_all(s->ofd, dst, s->blksz, (uint64_t)slot * s->blksz) ? 0 : read_error();
	struct chunk *c = ic_find_chunk(s, blk);
	if (!c)
		return EXT2_ET_SHORT_READ;
	if (c->type == CT_RAW)
		return ic_pread_all(s->fd, dst, s->blksz, c->off + (blk - c->start) * s->blksz)
			       ? 0 : read_error();
	ic_fill_block(dst, s->blksz, c->type == CT_FILL ? c->fill : 0);
	return 0;
}

static errcode_t rw_bytes(struct imgcopy *s, uint64_t off, size_t len, void *rbuf, const void *wbuf)
{
	while (len) {
		uint64_t blk = off / s->blksz;
		size_t boff = (size_t)(off % s->blksz), n = s->blksz - boff;
		errcode_t rc;
		if (n > len)
			n = len;
		if (blk >= s->total)
			return EXT2_ET_SHORT_READ;
		if (in_wb(s, blk)) {
			/* in the write-back cache: read or changed there (an inode at a time, with
			 * 128-byte inodes: no whole block copied in and out for each) */
			char *w = s->wb + (size_t)(blk % WB_N) * s->blksz + boff;
			if (rbuf) {
				memcpy(rbuf, w, n);
				rbuf = (char *)rbuf + n;
			} else {
				memcpy(w, wbuf, n);
				wbuf = (const char *)wbuf + n;
			}
		} else if (rbuf) {
			struct chunk *c;
			if (!boff && len >= s->blksz && (c = ic_find_chunk(s, blk)) && c->type == CT_RAW &&
			    !ic_changed(s, blk)) {
				/* whole unchanged blocks of one RAW chunk: one read */
				uint64_t k = 1, most = len / s->blksz;
				while (k < most && blk + k < c->start + c->nblk && !ic_changed(s, blk + k))
					k++;
				if (!ic_pread_all(s->fd, rbuf, k * s->blksz, c->off + (blk - c->start) * s->blksz))
					return read_error();
				rbuf = (char *)rbuf + k * s->blksz;
				off += k * s->blksz;
				len -= k * s->blksz;
				continue;
			}
			if ((rc = ic_get_block(s, blk, s->blk)))
				return rc;
			memcpy(rbuf, s->blk + boff, n);
			rbuf = (char *)rbuf + n;
		} else {
			if (n < s->blksz && (rc = ic_get_block(s, blk, s->blk)))
				return rc;
			memcpy(s->blk + boff, wbuf, n);
			if ((rc = put_block(s, blk, s->blk)))
				return rc;
			wbuf = (const char *)wbuf + n;
		}
		off += n;
		len -= n;
	}
	return 0;
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
		if (!raw_offset(s, s->key[b] - 1, &off) || !ic_pread_all(s->tfd, s->blk, s->blksz, off))
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
			if (!in_wb(s, k) && ov_find(s, k) == (int64_t)DIRECT)
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
	join_copy(s);
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
	if (!rc || last_error[0])
		return rc;
	return ic_fail(rc, "%s: %s failed: %s; the original is as it was", s->out, step,
		       error_message(rc));
}

static errcode_t write_result(struct imgcopy *s)
{
	char *dirc = strdup(s->out), *buf = malloc(s->blksz);
	errcode_t rc = ENOMEM;
	pthread_t dropper;
	bool dropping = false;
	uint64_t *chg = NULL, end = s->end;
	size_t nchg = 0, from = 0;

	last_error[0] = 0;
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

/* ---- the io_manager ---- */

static struct imgcopy *priv(io_channel ch)
{
	return ch->private_data;
}

static void ic_free(struct imgcopy *s)
{
	if (!s)
		return;
	if (last_rw == s)
		last_rw = NULL;
	if (s->fd >= 0)
		close(s->fd);
	if (s->ofd >= 0)
		close(s->ofd);
	join_copy(s);
	if (s->tfd >= 0)
		close(s->tfd);
	if (s->tname)
		unlink(s->tname);
	free(s->tname);
	free(s->c);
	free(s->key);
	free(s->slot);
	free(s->blk);
	free(s->wb);
	free(s->out);
	if (s->fmt && s->fmt->free_data)
		s->fmt->free_data(s->fmt_data);
	free(s);
}

/* The overlay: an unlinked file beside the output that holds the changed blocks. */
static errcode_t make_overlay(struct imgcopy *s)
{
	char *d = strdup(s->out), *t = NULL;
	errcode_t rc;
	if (!d || asprintf(&t, "%s/.fclabel-overlay-XXXXXX", dirname(d)) < 0) {
		free(d);
		return ENOMEM;
	}
	s->ofd = mkstemp(t);
	rc = errno;
	if (s->ofd >= 0)
		unlink(t);
	free(t);
	free(d);
	if (s->ofd < 0)
		return ic_fail(rc, "%s: cannot create a temporary file beside it: %s", s->out,
			       strerror(rc));
	return 0;
}

errcode_t ic_open(const char *name, int flags, io_channel *channel,
		  const struct imgcopy_format *fmt, io_manager manager)
{
	struct imgcopy *s = calloc(1, sizeof(*s));
	io_channel ch = calloc(1, sizeof(*ch));
	errcode_t rc = ENOMEM;

	last_error[0] = 0;
	if (!s || !ch)
		goto fail;
	s->ofd = -1;
	s->tfd = -1;
	s->rw = flags & IO_FLAG_RW;
	s->fmt = fmt;
	/* the input is only read: the result replaces it by rename */
	s->fd = open(name, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (s->fd < 0 || fstat(s->fd, &st) < 0) {
		rc = errno;
		goto fail;
	}
	s->in_dev = st.st_dev;
	s->in_ino = st.st_ino;
	s->raw = !fmt->rewrite;
	if ((rc = fmt->parse(s, name)))
		goto fail;
	s->blk = malloc(s->blksz);
	s->out = strdup(output_path ? output_path : name);
	s->out_differs = output_path && strcmp(output_path, name);
	ch->name = strdup(name);
	if (!s->blk || !s->out || !ch->name) {
		rc = ENOMEM;
		goto fail;
	}
	if (s->rw && (rc = make_overlay(s)))
		goto fail;
	if (s->rw)
		last_rw = s;
	ch->magic = EXT2_ET_MAGIC_IO_CHANNEL;
	ch->manager = manager;
	ch->block_size = 1024;
	ch->refcount = 1;
	ch->private_data = s;
	*channel = ch;
	return 0;
fail:
	if (ch)
		free(ch->name);
	free(ch);
	ic_free(s);
	return rc;
}

static const struct imgcopy_format raw_format = { .parse = raw_parse };

static errcode_t rp_open(const char *name, int flags, io_channel *channel)
{
	/* another file opened through us (undo_io opens its undo file with its backing manager)
	 * is a plain file */
	if (replace_image && strcmp(name, replace_image))
		return unix_io_manager->open(name, flags, channel);
	return ic_open(name, flags, channel, &raw_format, imgfmt_replace_manager);
}

void imgfmt_discard(io_channel channel)
{
	channel = imgfmt_inner_channel(channel);
	/* (the caller may have put a copy of the manager in place: its open tells; under another
	 * manager, undo_io's, the image is the one open read-write) */
	if (channel && channel->manager->close == ic_close)
		priv(channel)->discard = true;
	else if (channel && last_rw)
		last_rw->discard = true;
}

errcode_t ic_close(io_channel ch)
{
	struct imgcopy *s = priv(ch);
	errcode_t rc = 0;

	if (--ch->refcount > 0)
		return 0;
	if (s->rw && s->dirty && !s->discard)
		rc = write_result(s);
	ic_free(s);
	free(ch->name);
	free(ch);
	return rc;
}

errcode_t ic_set_blksize(io_channel ch, int blksize)
{
	struct imgcopy *s = priv(ch);
	ch->block_size = blksize;
	/* a raw image's unit follows the file system's block, when nothing is written yet: a
	 * changed block then never fills a hole beside it */
	if (s->raw && !s->dirty && !s->wb && blksize >= 512 && blksize <= 65536 &&
	    !(blksize & (blksize - 1)) && s->fsize % (uint64_t)blksize == 0 &&
	    (uint32_t)blksize != s->blksz) {
		char *b = realloc(s->blk, (size_t)blksize);
		if (!b)
			return ENOMEM;
		s->blk = b;
		s->blksz = (uint32_t)blksize;
		s->total = s->fsize / s->blksz;
		if (s->nc)
			s->c[0].nblk = s->total;
	}
	return 0;
}

static size_t span(io_channel ch, int count)
{
	return count < 0 ? (size_t)-count : (size_t)count * (size_t)ch->block_size;
}

errcode_t ic_read64(io_channel ch, unsigned long long block, int count, void *data)
{
	return rw_bytes(priv(ch), block * (uint64_t)ch->block_size, span(ch, count), data, NULL);
}

errcode_t ic_write64(io_channel ch, unsigned long long block, int count, const void *data)
{
	if (!priv(ch)->rw)
		return EXT2_ET_RO_FILSYS;
	return rw_bytes(priv(ch), block * (uint64_t)ch->block_size, span(ch, count), NULL, data);
}

errcode_t ic_read(io_channel ch, unsigned long block, int count, void *data)
{
	return ic_read64(ch, block, count, data);
}

errcode_t ic_write(io_channel ch, unsigned long block, int count, const void *data)
{
	return ic_write64(ch, block, count, data);
}

errcode_t ic_write_byte(io_channel ch, unsigned long offset, int count, const void *data)
{
	if (!priv(ch)->rw)
		return EXT2_ET_RO_FILSYS;
	return rw_bytes(priv(ch), offset, (size_t)count, NULL, data);
}

errcode_t ic_flush(io_channel ch)
{
	(void)ch;
	return 0;
}

errcode_t ic_set_option(io_channel ch, const char *option, const char *arg)
{
	(void)ch;
	(void)option;
	(void)arg;
	return EXT2_ET_INVALID_ARGUMENT;
}

static struct struct_io_manager replace_manager = {
	IC_SHARED_OPS,
	.name = "Raw image replaced whole I/O manager",
	.open = rp_open,
};

io_manager imgfmt_replace_manager = &replace_manager;
