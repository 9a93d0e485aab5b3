/*
 * Walking every directory entry of an image from the root, depth first, in directory order.
 * An explicit stack (not recursion) so that deep trees cannot exhaust the C stack; one path
 * buffer that grows and shrinks with the walk, so paths longer than PATH_MAX are whole; each
 * directory inode is entered once, so a corrupt image with a directory loop cannot hang it.
 */
#include <errno.h>
#include <et/com_err.h>
#include <stdlib.h>
#include <string.h>

#include "label.h"

struct frame {
	ext2_ino_t dir;
	size_t pathlen;     /* length of the directory's path */
	char *names;        /* entries: ino (4 bytes), name length (2), name; packed */
	size_t size, cap, pos;
};

struct collect {
	struct frame *f;
	errcode_t err;
};

static int collect_entry(struct ext2_dir_entry *d, int offset, int blocksize, char *buf,
			 void *priv)
{
	struct collect *c = priv;
	struct frame *f = c->f;
	int len = ext2fs_dirent_name_len(d);

	(void)offset;
	(void)blocksize;
	(void)buf;
	if (!d->inode || (len == 1 && d->name[0] == '.') ||
	    (len == 2 && d->name[0] == '.' && d->name[1] == '.'))
		return 0;
	if (f->size + 6 + (size_t)len > f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 4096;
		while (cap < f->size + 6 + (size_t)len)
			cap *= 2;
		char *n = realloc(f->names, cap);
		if (!n) {
			c->err = ENOMEM;
			return DIRENT_ABORT;
		}
		f->names = n;
		f->cap = cap;
	}
	uint32_t ino = d->inode;
	uint16_t l = (uint16_t)len;
	memcpy(f->names + f->size, &ino, 4);
	memcpy(f->names + f->size + 4, &l, 2);
	memcpy(f->names + f->size + 6, d->name, (size_t)len);
	f->size += 6 + (size_t)len;
	return 0;
}

struct pathbuf {
	char *p;
	size_t len, cap;
};

static int path_set(struct pathbuf *b, size_t at, const char *name, size_t n)
{
	size_t need = at + 1 + n + 1;
	if (need > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < need)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p)
			return ENOMEM;
		b->p = p;
		b->cap = cap;
	}
	/* the root's path is "/" (no mount point): its children are "/name", not "//name" */
	if (at == 1 && b->p[0] == '/')
		at = 0;
	b->p[at] = '/';
	memcpy(b->p + at + 1, name, n);
	b->len = at + 1 + n;
	b->p[b->len] = 0;
	return 0;
}

errcode_t walk_image(ext2_filsys fs, const char *mountpoint, walk_fn fn, void *arg,
		     struct walk_stats *st, void (*warn)(void *arg, const char *path, const char *msg))
{
	struct frame *stack = NULL;
	size_t depth = 0, cap = 0;
	struct pathbuf path = { 0 };
	struct ext2_inode_large *inode;
	size_t isize = EXT2_INODE_SIZE(fs->super);
	ext2_ino_t ninodes = fs->super->s_inodes_count;
	unsigned char *seen = calloc(ninodes / 8 + 1, 1);
	errcode_t rc = 0;
	char msg[256];

	if (isize < sizeof(struct ext2_inode_large))
		isize = sizeof(struct ext2_inode_large);
	inode = calloc(1, isize);
	if (!seen || !inode) {
		rc = ENOMEM;
		goto out;
	}
	/* the root */
	size_t ml = strlen(mountpoint);
	path.cap = ml + 256;
	path.p = malloc(path.cap);
	if (!path.p) {
		rc = ENOMEM;
		goto out;
	}
	if (ml) {
		memcpy(path.p, mountpoint, ml + 1);
		path.len = ml;
	} else {
		strcpy(path.p, "/");
		path.len = 1;
	}
	rc = ext2fs_read_inode_full(fs, EXT2_ROOT_INO, (struct ext2_inode *)inode, (int)isize);
	if (rc)
		goto out;
	struct walk_entry e = { EXT2_ROOT_INO, EXT2_ROOT_INO, path.p, path.len, inode };
	int r = fn(&e, arg);
	if (r < 0)
		goto out;
	if (r == 1 || !LINUX_S_ISDIR(inode->i_mode))
		goto out;
	seen[EXT2_ROOT_INO / 8] |= 1 << (EXT2_ROOT_INO % 8);

	/* push the root */
	ext2_ino_t next_dir = EXT2_ROOT_INO;
	size_t next_len = path.len;
	for (;;) {
		if (next_dir) {
			if (depth == cap) {
				size_t nc = cap ? cap * 2 : 64;
				struct frame *ns = realloc(stack, nc * sizeof(*ns));
				if (!ns) {
					rc = ENOMEM;
					goto out;
				}
				memset(ns + cap, 0, (nc - cap) * sizeof(*ns));
				stack = ns;
				cap = nc;
			}
			struct frame *f = &stack[depth];
			f->dir = next_dir;
			f->pathlen = next_len;
			f->size = f->pos = 0;
			struct collect c = { f, 0 };
			path.p[next_len] = 0;
			errcode_t drc = ext2fs_dir_iterate(fs, next_dir, 0, NULL, collect_entry, &c);
			if (c.err) {
				rc = c.err;
				goto out;
			}
			if (drc) {
				snprintf(msg, sizeof(msg), "cannot read directory (inode %u): %s",
					 next_dir, error_message(drc));
				warn(arg, path.p, msg);
				st->warnings++;
				/* entries read before the error are still walked */
			}
			depth++;
			next_dir = 0;
		}
		if (!depth)
			break;
		struct frame *f = &stack[depth - 1];
		if (f->pos >= f->size) {
			depth--;
			continue;
		}
		uint32_t ino;
		uint16_t nl;
		memcpy(&ino, f->names + f->pos, 4);
		memcpy(&nl, f->names + f->pos + 4, 2);
		const char *name = f->names + f->pos + 6;
		f->pos += 6 + nl;
		if ((rc = path_set(&path, f->pathlen, name, nl)))
			goto out;
		if (ino < 1 || ino > ninodes) {
			snprintf(msg, sizeof(msg), "directory entry points to inode %u, outside 1..%u; "
				 "skipped", ino, ninodes);
			warn(arg, path.p, msg);
			st->warnings++;
			continue;
		}
		errcode_t irc = ext2fs_read_inode_full(fs, ino, (struct ext2_inode *)inode, (int)isize);
		if (irc) {
			snprintf(msg, sizeof(msg), "cannot read inode %u: %s; skipped", ino,
				 error_message(irc));
			warn(arg, path.p, msg);
			st->warnings++;
			continue;
		}
		bool isdir = LINUX_S_ISDIR(inode->i_mode);
		if (isdir && (seen[ino / 8] & (1 << (ino % 8)))) {
			snprintf(msg, sizeof(msg), "directory inode %u is reached a second time (a "
				 "directory loop or a hard-linked directory); not entered again", ino);
			warn(arg, path.p, msg);
			st->warnings++;
			continue;
		}
		struct walk_entry we = { ino, f->dir, path.p, path.len, inode };
		r = fn(&we, arg);
		if (r < 0)
			goto out;
		if (isdir && r == 0) {
			seen[ino / 8] |= 1 << (ino % 8);
			next_dir = ino;
			next_len = path.len;
		}
	}
out:
	for (size_t i = 0; i < cap; i++)
		free(stack[i].names);
	free(stack);
	free(path.p);
	free(seen);
	free(inode);
	return rc;
}
