/*
 * Building a set's spec list: the one place where the text and the compiled readers (parse.c,
 * binfile.c) add specs, keep file buffers and names, and report errors. Both call down into
 * this file; neither calls the other.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define FC_MAX_FILE (1u << 30)

void fc_seterr(struct fc_error *err, const char *file, unsigned line, unsigned col,
	       const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
	err->line = line;
	err->column = col;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

static int push(void ***v, size_t *n, void *p)
{
	void **nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!nv)
		return ENOMEM;
	nv[(*n)++] = p;
	*v = nv;
	return 0;
}

int fc_keep_name(struct fc_set *set, const char *path, unsigned *fileno_)
{
	char *name = strdup(path);
	if (!name || push((void ***)&set->names, &set->nnames, name)) {
		free(name);
		return ENOMEM;
	}
	*fileno_ = (unsigned)(set->nnames - 1);
	return 0;
}

/*
 * Big blocks. Each first touch of a 4 KiB page costs a fault, which is most of a load's time on
 * a virtual machine (over 10 us each, measured); a block of 256 KiB or more is mapped on its
 * own, 2 MiB aligned, and marked for transparent huge pages (where the kernel allows them: one
 * fault per 2 MiB). A header before the block says how it was allocated.
 */
#define FC_BIG (256u << 10)
#define FC_HUGE ((size_t)2 << 20)

struct bhdr {
	size_t maplen;      /* 0: malloc'd */
	size_t pad;         /* keeps the block 16-byte aligned */
};

void *fc_balloc(size_t n)
{
	struct bhdr *h;

	if (n > SIZE_MAX - 2 * FC_HUGE)
		return NULL;
	if (n < FC_BIG) {
		if (!(h = malloc(sizeof(*h) + n)))
			return NULL;
		h->maplen = 0;
		return h + 1;
	}
	size_t len = (n + sizeof(*h) + FC_HUGE - 1) & ~(FC_HUGE - 1);
	char *m = mmap(NULL, len + FC_HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	char *a = (char *)(((uintptr_t)m + FC_HUGE - 1) & ~(uintptr_t)(FC_HUGE - 1));
	if (a > m)
		munmap(m, (size_t)(a - m));
	if (a + len < m + len + FC_HUGE)
		munmap(a + len, (size_t)(m + len + FC_HUGE - (a + len)));
	madvise(a, len, MADV_HUGEPAGE); /* a hint: without it, 4 KiB pages */
	h = (struct bhdr *)a;
	h->maplen = len;
	return h + 1;
}

void fc_bfree(void *p)
{
	if (!p)
		return;
	struct bhdr *h = (struct bhdr *)p - 1;
	if (h->maplen)
		munmap(h, h->maplen);
	else
		free(h);
}

int fc_keep_big(struct fc_set *set, void *p)
{
	if (push((void ***)&set->bigs, &set->nbigs, p))
		return fc_bfree(p), ENOMEM;
	return 0;
}

/* The set owns buf from now on, even on failure. */
int fc_keep_buf(struct fc_set *set, char *buf)
{
	if (push((void ***)&set->bufs, &set->nbufs, buf))
		return free(buf), ENOMEM;
	return 0;
}

int fc_read_file(const char *path, bool optional, char **out, size_t *len, int *bin_fd,
		 struct fc_error *err)
{
	struct stat st;
	char *buf;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		int e = errno;
		if (!(optional && e == ENOENT))
			fc_seterr(err, path, 0, 0, "cannot open: %s", strerror(e));
		return e;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		int e = S_ISDIR(st.st_mode) ? EISDIR : errno ? errno : EINVAL;
		fc_seterr(err, path, 0, 0, "not a regular file");
		close(fd);
		return e;
	}
	if ((unsigned long long)st.st_size > FC_MAX_FILE) {
		fc_seterr(err, path, 0, 0, "file is %lld bytes, larger than the 1 GiB limit",
			  (long long)st.st_size);
		close(fd);
		return EFBIG;
	}
	/* A compiled file is mostly PCRE bytecode that is never read: its reader reads the
	 * fields from the descriptor. */
	unsigned char head[4];
	if (bin_fd && (*bin_fd = -1, st.st_size >= 4) && pread(fd, head, 4, 0) == 4 &&
	    fc_bin_magic((const char *)head, 4)) {
		*bin_fd = fd;
		*out = NULL;
		*len = (size_t)st.st_size;
		return 0;
	}
	buf = fc_balloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int e = r < 0 ? errno : EIO;
			fc_seterr(err, path, 0, 0, "read failed: %s", r < 0 ? strerror(e) : "file shrank");
			fc_bfree(buf);
			close(fd);
			return e;
		}
		got += (size_t)r;
	}
	close(fd);
	buf[got] = 0;
	*out = buf;
	*len = got;
	return 0;
}

int fc_reserve(struct fc_set *set, size_t n)
{
	if (set->nspecs + n <= set->cap)
		return 0;
	if (n > (SIZE_MAX / sizeof(struct spec)) / 2 - set->nspecs)
		return ENOMEM;
	struct spec *nv = fc_balloc((set->nspecs + n) * sizeof(*nv));
	if (!nv)
		return ENOMEM;
	if (set->nspecs)
		memcpy(nv, set->specs, set->nspecs * sizeof(*nv));
	fc_bfree(set->specs);
	set->specs = nv;
	set->cap = set->nspecs + n;
	return 0;
}

/* Appends a spec whose regex, mode and context are set: the derived fields are filled in here,
 * for the text and the compiled forms alike. */
int fc_push_spec(struct fc_set *set, struct spec *s)
{
	s->tclass = (uint8_t)fc_mode_class(s->pub.mode);
	s->none = strcmp(s->pub.context, "<<none>>") == 0;
	s->next_same = -1;
	if (set->nspecs == set->cap) {
		int rc = fc_reserve(set, set->cap ? set->cap : 256);
		if (rc)
			return rc;
	}
	s->pub.index = (unsigned)set->nspecs;
	set->specs[set->nspecs++] = *s;
	return 0;
}

