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
 * The set's arena. Each first touch of a 4 KiB page costs a fault, which is most of a load's
 * time on a virtual machine (over 10 us each, measured against 0.1 ms for a 2 MiB huge page).
 * A set's bulk (file buffers, the spec list, kept strings, the index's text) is bump-allocated
 * from one reservation, 2 MiB aligned and marked for transparent huge pages (a hint: without
 * them, 4 KiB pages). Untouched reserved space costs nothing. Whatever does not fit gets a
 * mapping of its own. All of it lives until fc_free.
 */
#define FC_HUGE ((size_t)2 << 20)
#define FC_ARENA ((size_t)64 << 20)

/* LeakSanitizer scans malloc'd memory for pointers, not our mappings: told of them, it finds
 * what they point to (the regexes compiled lazily, for one) */
#if defined(__SANITIZE_ADDRESS__)
#define FC_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FC_LSAN 1
#endif
#endif
#ifdef FC_LSAN
#include <sanitizer/lsan_interface.h>
#define lsan_root(p, n) __lsan_register_root_region(p, n)
#define lsan_unroot(p, n) __lsan_unregister_root_region(p, n)
#else
#define lsan_root(p, n) ((void)0)
#define lsan_unroot(p, n) ((void)0)
#endif

static void *map_huge(size_t len)
{
	char *m = mmap(NULL, len + FC_HUGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	char *a = (char *)(((uintptr_t)m + FC_HUGE - 1) & ~(uintptr_t)(FC_HUGE - 1));
	if (a > m)
		munmap(m, (size_t)(a - m));
	if (a + len < m + len + FC_HUGE)
		munmap(a + len, (size_t)(m + len + FC_HUGE - (a + len)));
	madvise(a, len, MADV_HUGEPAGE);
	lsan_root(a, len);
	return a;
}

static void unmap_huge(void *p, size_t len)
{
	lsan_unroot(p, len);
	munmap(p, len);
}

void *fc_balloc(struct fc_set *set, size_t n, size_t align)
{
	struct arena *ar = &set->arena;

	if (n > SIZE_MAX - 2 * FC_HUGE)
		return NULL;
	if (!ar->base && !(ar->base = map_huge(FC_ARENA)))
		ar->cap = ar->used = 0;
	else if (!ar->cap)
		ar->cap = FC_ARENA;
	size_t at = (ar->used + align - 1) & ~(align - 1);
	if (ar->base && at <= ar->cap && n <= ar->cap - at) {
		ar->used = at + n;
		ar->last = at;
		return ar->base + at;
	}
	return fc_bmap(set, n);
}

void *fc_bmap(struct fc_set *set, size_t n)
{
	if (n > SIZE_MAX - 2 * FC_HUGE)
		return NULL;
	/* a mapping of its own, kept in the set's list */
	size_t len = (n + FC_HUGE - 1) & ~(FC_HUGE - 1);
	void *p = map_huge(len ? len : FC_HUGE);
	if (!p)
		return NULL;
	struct bigmap *nv = realloc(set->bigs, (set->nbigs + 1) * sizeof(*nv));
	if (!nv) {
		unmap_huge(p, len ? len : FC_HUGE);
		return NULL;
	}
	set->bigs = nv;
	set->bigs[set->nbigs].p = p;
	set->bigs[set->nbigs++].len = len ? len : FC_HUGE;
	return p;
}

void fc_bshrink(struct fc_set *set, void *p, size_t n)
{
	struct arena *ar = &set->arena;
	if (ar->base && (char *)p == ar->base + ar->last && n <= ar->used - ar->last)
		ar->used = ar->last + n;
}

void fc_arena_free(struct fc_set *set)
{
	if (set->arena.base)
		unmap_huge(set->arena.base, FC_ARENA);
	for (size_t i = 0; i < set->nbigs; i++)
		unmap_huge(set->bigs[i].p, set->bigs[i].len);
	free(set->bigs);
	memset(&set->arena, 0, sizeof(set->arena));
	set->bigs = NULL;
	set->nbigs = 0;
}

/* The set owns buf from now on, even on failure. */
int fc_keep_buf(struct fc_set *set, char *buf)
{
	if (push((void ***)&set->bufs, &set->nbufs, buf))
		return free(buf), ENOMEM;
	return 0;
}

int fc_read_file(struct fc_set *set, const char *path, bool optional, char **out, size_t *len,
		 int *bin_fd, struct fc_error *err)
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
	buf = fc_balloc(set, (size_t)st.st_size + 1, 16);
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
			fc_bshrink(set, buf, 0);
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

/* A grown list leaves its old block in the arena, unused: an eighth more room than asked for
 * lets the files that follow the first (.homedirs, .local, most often a few hundred lines) fit
 * without that (refpolicy's list is a megabyte; its old copy cost a huge page's clearing). */
int fc_reserve(struct fc_set *set, size_t n)
{
	if (set->nspecs + n <= set->cap)
		return 0;
	if (n > (SIZE_MAX / sizeof(struct spec)) / 4 - set->nspecs)
		return ENOMEM;
	size_t cap = set->nspecs + n + (set->nspecs + n) / 8;
	struct spec *nv = fc_balloc(set, cap * sizeof(*nv), 64);
	if (!nv)
		return ENOMEM;
	if (set->nspecs)
		memcpy(nv, set->specs, set->nspecs * sizeof(*nv));
	set->specs = nv;
	set->cap = cap;
	return 0;
}

const struct spec fc_blank_spec;

/* Appends a spec whose regex, mode and context are set: the derived fields are filled in here,
 * for the text and the compiled forms alike. */
int fc_push_spec(struct fc_set *set, struct spec *s)
{
	s->tclass = (uint8_t)fc_mode_class(s->pub.mode);
	/* a call to strcmp a spec was a few percent of a load: most contexts start "system_u" */
	s->none = s->pub.context[0] == '<' && strcmp(s->pub.context, "<<none>>") == 0;
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

