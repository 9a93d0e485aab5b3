/*
 * Whether a live-tree walk can meet one inode under two paths through mounts: a file system
 * mounted twice within the walk (a bind mount of one of its own directories, the same device
 * mounted at two places and entered with --cross-mounts). Hard links are the engine's to handle;
 * these are not: every inode below the second mount is met again, directories too.
 *
 * The threaded walk (treepool.c) reads each entry's label ahead of the engine and writes what
 * the engine will want written, so an inode met twice may be read at its second meeting before
 * its first meeting's write lands, or after: its count (and, where the two paths' labels differ,
 * which label stays) would follow the threads' timing. Such a tree is walked by one thread,
 * which meets everything in walk order, as -T 1 does.
 *
 * Read from /proc/self/mountinfo: "ID PARENT MAJ:MIN ROOT MOUNTPOINT ...", where ROOT is the
 * directory of the file system the mount shows. Two mounts of one device overlap when one's
 * root is at or below the other's; the mount the walk starts in shows its root joined with the
 * part of the walk's path below its mount point.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

struct mnt {
	unsigned ma, mi;
	char *root;  /* what it shows of its file system */
	char *point; /* where */
};

/* mountinfo's octal escapes (\040 for a space, ...) undone, in place. */
static void unescape(char *s)
{
	char *o = s;
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

/* Whether path is dir or below it ("/" holds everything). */
static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 1 && dir[0] == '/')
		return true;
	return !strncmp(path, dir, n) && (path[n] == 0 || path[n] == '/');
}

static bool overlap(const char *a, const char *b)
{
	return under(a, b) || under(b, a);
}

/* Every mount of the table: 0, or -1 (not readable: then nothing is known). */
static int read_mounts(struct mnt **out, size_t *n)
{
	FILE *fp = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0, have = 0;
	struct mnt *m = NULL;
	int rc = 0;

	if (!fp)
		return -1;
	while (getline(&line, &cap, fp) > 0) {
		struct mnt x = { 0 };
		if (sscanf(line, "%*d %*d %u:%u %ms %ms", &x.ma, &x.mi, &x.root, &x.point) != 4) {
			free(x.root);
			free(x.point);
			continue;
		}
		struct mnt *g = realloc(m, (have + 1) * sizeof(*m));
		if (!g) {
			free(x.root);
			free(x.point);
			rc = -1;
			break;
		}
		m = g;
		unescape(x.root);
		unescape(x.point);
		m[have++] = x;
	}
	free(line);
	fclose(fp);
	*out = m;
	*n = have;
	return rc;
}

/* The mount the walk's root is in: the last (the one on top) with the longest mount point at
 * or above it; or -1. */
static long containing(const struct mnt *m, size_t n, const char *root)
{
	long best = -1;
	size_t len = 0;
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(m[i].point);
		if (under(root, m[i].point) && (best < 0 || l >= len)) {
			best = (long)i;
			len = l;
		}
	}
	return best;
}

/* What mount c shows at root: its root joined with root's part below its mount point. */
static char *shown_at(const struct mnt *c, const char *root)
{
	size_t pl = strlen(c->point);
	const char *rest = pl == 1 ? root : root + pl;
	char *s = NULL;
	size_t rl = strlen(c->root);
	if (asprintf(&s, "%.*s%s", (int)(rl == 1 && *rest ? 0 : rl), c->root, rest) < 0)
		return NULL;
	return s;
}

/* root's absolute path, as the kernel names the directory (not realpath(3): that reads every
 * directory above it, and a walk reads nothing outside its tree but /proc). */
static char *real_path(const char *root)
{
	int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	char proc[64], *buf = NULL;
	ssize_t n = -1;
	if (fd < 0)
		return NULL;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if ((buf = malloc(PATH_MAX)))
		n = readlink(proc, buf, PATH_MAX - 1);
	close(fd);
	if (n <= 0 || buf[0] != '/') {
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	return buf;
}

bool tree_mounted_twice(const char *root, bool cross, char **first, char **second)
{
	char *real = real_path(root), *top = NULL;
	struct mnt *m = NULL;
	size_t n = 0;
	bool twice = false;

	*first = *second = NULL;
	if (!real || read_mounts(&m, &n))
		goto out;
	long c = containing(m, n, real);
	if (c < 0 || !(top = shown_at(&m[c], real)))
		goto out;
	/* the mounts the walk can enter: the one it starts in, those below its root (of the
	 * same device, unless it crosses into others) */
	for (size_t i = 0; i < n && !twice; i++) {
		bool in_i = (long)i == c || (under(m[i].point, real) && strcmp(m[i].point, real));
		if (!in_i || (!cross && (m[i].ma != m[c].ma || m[i].mi != m[c].mi)))
			continue;
		const char *ri = (long)i == c ? top : m[i].root;
		for (size_t j = i + 1; j < n && !twice; j++) {
			bool in_j = (long)j == c || (under(m[j].point, real) && strcmp(m[j].point, real));
			if (!in_j || m[j].ma != m[i].ma || m[j].mi != m[i].mi)
				continue;
			if (overlap(ri, (long)j == c ? top : m[j].root)) {
				twice = true;
				*first = strdup((long)i == c ? real : m[i].point);
				*second = strdup((long)j == c ? real : m[j].point);
			}
		}
	}
out:
	for (size_t i = 0; i < n; i++) {
		free(m[i].root);
		free(m[i].point);
	}
	free(m);
	free(top);
	free(real);
	return twice;
}
