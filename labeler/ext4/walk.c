/*
 * Walking every directory entry of an image from the root, depth first, in directory order.
 * An explicit stack (not recursion) so that deep trees cannot exhaust the C stack; one path
 * buffer that grows and shrinks with the walk, so paths longer than PATH_MAX are whole; each
 * directory inode is entered once, so a corrupt image with a directory loop cannot hang it.
 * Damaged entries (names with '/' or NUL; inode numbers out of range, reserved, free or in the
 * unused part of an inode table; inodes not in use, of no valid type, with an impossible
 * i_extra_isize or symlink size; directories that cannot be read) are reported with warn()
 * and left alone: the kernel would refuse them, and writing to them could make the image worse.
 */
#include <errno.h>
#include <et/com_err.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct frame {
	ext2_ino_t dir;
	size_t pathlen;     /* length of the directory's path */
	char *names;        /* entries: ino (4 bytes), name length (2), name; packed */
	size_t size, cap, pos;
};

struct collect {
	struct frame *f;
	errcode_t err;
	unsigned long all; /* entries seen, "." and ".." included */
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
	c->all++;
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

/*
 * Why a directory entry's inode number cannot be a file's, known before reading the inode (what
 * e2fsck's pass 2 rejects); NULL when it can be.
 */
static const char *bad_ino(ext2_filsys fs, ext2_ino_t ino, char *buf, size_t n)
{
	ext2_ino_t ipg = fs->super->s_inodes_per_group;

	if (ino < 1 || ino > fs->super->s_inodes_count) {
		snprintf(buf, n, "directory entry points to inode %u, outside 1..%u; skipped", ino,
			 fs->super->s_inodes_count);
		return buf;
	}
	if (ino != EXT2_ROOT_INO && ino < EXT2_FIRST_INO(fs->super)) {
		snprintf(buf, n, "directory entry points to inode %u, one of the file system's "
			 "reserved inodes (1..%u: journal, resize, ...); skipped", ino,
			 EXT2_FIRST_INO(fs->super) - 1);
		return buf;
	}
	dgrp_t g = (ino - 1) / ipg;
	ext2_ino_t idx = (ino - 1) % ipg, unused = ext2fs_bg_itable_unused(fs, g);
	if (ext2fs_has_group_desc_csum(fs) && (ext2fs_bg_flags_test(fs, g, EXT2_BG_INODE_UNINIT) ||
					       (unused <= ipg && idx >= ipg - unused))) {
		snprintf(buf, n, "directory entry points to inode %u, in the unused part of group "
			 "%u's inode table; skipped", ino, g);
		return buf;
	}
	if (fs->inode_map && !ext2fs_test_inode_bitmap2(fs->inode_map, ino)) {
		snprintf(buf, n, "directory entry points to inode %u, which the inode bitmap marks "
			 "free; skipped", ino);
		return buf;
	}
	return NULL;
}

/* Why an inode as read cannot be walked (the checks of the kernel's iget and e2fsck's pass 1
 * that matter here); NULL when it can be. */
static const char *bad_inode(ext2_filsys fs, ext2_ino_t ino, const struct ext2_inode_large *inode,
			     char *buf, size_t n)
{
	unsigned mode = inode->i_mode, isize = EXT2_INODE_SIZE(fs->super);

	switch (mode & LINUX_S_IFMT) {
	case LINUX_S_IFREG: case LINUX_S_IFDIR: case LINUX_S_IFLNK: case LINUX_S_IFCHR:
	case LINUX_S_IFBLK: case LINUX_S_IFIFO: case LINUX_S_IFSOCK:
		break;
	default:
		if (!inode->i_links_count && !mode)
			snprintf(buf, n, "inode %u is not in use (mode 0, links count 0); skipped", ino);
		else
			snprintf(buf, n, "inode %u has an invalid file type (mode 0%o); left as it is",
				 ino, mode);
		return buf;
	}
	if (!inode->i_links_count) {
		snprintf(buf, n, "inode %u is not in use (links count 0); skipped", ino);
		return buf;
	}
	if (inode->i_flags & EXT4_EA_INODE_FL) {
		snprintf(buf, n, "inode %u holds an extended attribute value (EA inode), it is not a "
			 "file; skipped", ino);
		return buf;
	}
	if (isize > EXT2_GOOD_OLD_INODE_SIZE && ((inode->i_extra_isize & 3) ||
	    EXT2_GOOD_OLD_INODE_SIZE + (unsigned)inode->i_extra_isize > isize)) {
		snprintf(buf, n, "inode %u has an invalid i_extra_isize %u (inode size %u); left as "
			 "it is", ino, inode->i_extra_isize, isize);
		return buf;
	}
	if (inode->i_flags & EXT4_INLINE_DATA_FL) {
		/* inline data continues in system.data (e2fsck: "INLINE_DATA_FL flag but extended
		 * attribute not found"); libext2fs's inline data calls take it missing as empty */
		struct ext2_xattr_handle *h;
		void *v = NULL;
		size_t l;
		errcode_t e = ext2fs_xattrs_open(fs, ino, &h);
		if (!e) {
			if (!(e = ext2fs_xattrs_read(h)))
				e = ext2fs_xattr_get(h, "system.data", &v, &l);
			ext2fs_free_mem(&v);
			ext2fs_xattrs_close(&h);
		}
		if (e) {
			snprintf(buf, n, "inode %u has inline data but no readable system.data attribute "
				 "(%s); left as it is", ino, error_message(e));
			return buf;
		}
	}
	if (LINUX_S_ISLNK(mode)) {
		unsigned long long size = EXT2_I_SIZE(inode);
		bool fast = !(inode->i_flags & EXT4_INLINE_DATA_FL) &&
			    !ext2fs_inode_data_blocks2(fs, (struct ext2_inode *)inode);
		if (!size || size >= fs->blocksize || (fast && size >= sizeof(inode->i_block))) {
			snprintf(buf, n, "symlink inode %u has an impossible size %llu; left as it is",
				 ino, size);
			return buf;
		}
	}
	return NULL;
}

/* A directory whose size is not whole blocks: e2fsck corrects it, the kernel reads only up to
 * it. Its entries are still walked. */
static const char *odd_dir(ext2_filsys fs, ext2_ino_t ino, const struct ext2_inode_large *inode,
			   char *buf, size_t n)
{
	unsigned long long size = EXT2_I_SIZE(inode);
	if (!LINUX_S_ISDIR(inode->i_mode) || (inode->i_flags & EXT4_INLINE_DATA_FL) ||
	    (size && !(size % fs->blocksize)))
		return NULL;
	snprintf(buf, n, "directory inode %u has i_size %llu, not a whole number of %u-byte blocks "
		 "(the kernel lists only that much of it); walked anyway", ino, size, fs->blocksize);
	return buf;
}

/* A walk in progress: the stack of directories being listed and the current path. */
struct walker {
	ext2_filsys fs;
	walk_fn fn, leave;
	void *arg;
	struct walk_stats *st;
	void (*warn)(void *arg, const char *path, const char *msg);
	struct frame *stack;
	size_t depth, cap;
	struct pathbuf path;
	struct ext2_inode_large *inode;
	size_t isize;
	unsigned char *seen;  /* directory inodes entered */
	unsigned char *given; /* inodes read (those met again are the library's to read) */
	struct itable_window *win;
	struct dirread *dr;
	char msg[256];
};

/* Inode ino into w->inode, as ext2fs_read_inode_full reads it: from the inode table's chunk the
 * first time (itable.c), from the library when met again (it may have been written since) or
 * when the chunk cannot give it (the library then says why). */
static errcode_t read_inode(struct walker *w, ext2_ino_t ino)
{
	unsigned char bit = (unsigned char)(1 << (ino % 8));
	if (w->given[ino / 8] & bit)
		return ext2fs_read_inode_full(w->fs, ino, (struct ext2_inode *)w->inode,
					      (int)w->isize);
	w->given[ino / 8] |= bit;
	if (itable_window_read(w->win, ino, w->inode, w->isize))
		return 0;
	return ext2fs_read_inode_full(w->fs, ino, (struct ext2_inode *)w->inode, (int)w->isize);
}

static void wwarn(struct walker *w, const char *why)
{
	w->warn(w->arg, w->path.p, why);
	w->st->warnings++;
}

/* Lists directory dir (its path is path.p[0..pathlen), its inode as read in w->inode) into a new
 * frame on the stack: read by dirread.c when it can, else by the library; problems with the
 * listing are warnings, and what was read before them is still walked. */
static errcode_t push_dir(struct walker *w, ext2_ino_t dir, size_t pathlen)
{
	if (w->depth == w->cap) {
		size_t nc = w->cap ? w->cap * 2 : 64;
		struct frame *ns = realloc(w->stack, nc * sizeof(*ns));
		if (!ns)
			return ENOMEM;
		memset(ns + w->cap, 0, (nc - w->cap) * sizeof(*ns));
		w->stack = ns;
		w->cap = nc;
	}
	struct frame *f = &w->stack[w->depth];
	f->dir = dir;
	f->pathlen = pathlen;
	f->size = f->pos = 0;
	struct collect c = { f, 0, 0 };
	w->path.p[pathlen] = 0;
	errcode_t drc = 0;
	if (!w->dr || !dirread_entries(w->dr, dir, w->inode, collect_entry, &c)) {
		f->size = 0;
		c = (struct collect){ f, 0, 0 };
		drc = ext2fs_dir_iterate(w->fs, dir, 0, NULL, collect_entry, &c);
	}
	if (c.err)
		return c.err;
	if (!drc && !c.all) {
		/* not even "." and "..": libext2fs's block iterator does not report an extent tree
		 * it cannot open; say why */
		struct ext2_inode di;
		ext2_extent_handle_t h;
		drc = ext2fs_read_inode(w->fs, dir, &di);
		if (!drc && (di.i_flags & EXT4_EXTENTS_FL) &&
		    !(drc = ext2fs_extent_open2(w->fs, dir, &di, &h)))
			ext2fs_extent_free(h);
		snprintf(w->msg, sizeof(w->msg), "directory inode %u has no entries, not even '.' "
			 "(its block map is damaged%s%s); nothing below it walked", dir,
			 drc ? ": " : "", drc ? error_message(drc) : "");
		wwarn(w, w->msg);
	} else if (drc) {
		snprintf(w->msg, sizeof(w->msg), "cannot read directory (inode %u): %s", dir,
			 error_message(drc));
		wwarn(w, w->msg);
	}
	w->depth++;
	return 0;
}

/* The entry at the top frame's position, read into w->inode with its path in w->path: 1 when it
 * can be walked, 0 when it is skipped (a warning says why), or an error. */
static int take_entry(struct walker *w, ext2_ino_t *inop)
{
	struct frame *f = &w->stack[w->depth - 1];
	uint32_t ino;
	uint16_t nl;
	const char *why;
	memcpy(&ino, f->names + f->pos, 4);
	memcpy(&nl, f->names + f->pos + 4, 2);
	const char *name = f->names + f->pos + 6;
	f->pos += 6 + nl;
	errcode_t rc = path_set(&w->path, f->pathlen, name, nl);
	if (rc)
		return -(int)rc;
	if (!nl || memchr(name, '/', nl) || memchr(name, 0, nl)) {
		/* e2fsck's "illegal characters": as a path it would name another file */
		for (size_t i = w->path.len - nl; i < w->path.len; i++)
			if (w->path.p[i] == '/' || !w->path.p[i])
				w->path.p[i] = '?';
		snprintf(w->msg, sizeof(w->msg), "directory entry (inode %u) has a name of %u bytes "
			 "that is empty or holds '/' or NUL (shown as '?'); skipped", ino, nl);
		wwarn(w, w->msg);
		return 0;
	}
	if ((why = bad_ino(w->fs, ino, w->msg, sizeof(w->msg)))) {
		wwarn(w, why);
		return 0;
	}
	rc = read_inode(w, ino);
	if (rc) {
		snprintf(w->msg, sizeof(w->msg), "cannot read inode %u: %s; skipped", ino,
			 error_message(rc));
		wwarn(w, w->msg);
		return 0;
	}
	if ((why = bad_inode(w->fs, ino, w->inode, w->msg, sizeof(w->msg)))) {
		wwarn(w, why);
		return 0;
	}
	if (LINUX_S_ISDIR(w->inode->i_mode)) {
		if (w->seen[ino / 8] & (1 << (ino % 8))) {
			snprintf(w->msg, sizeof(w->msg), "directory inode %u is reached a second time (a "
				 "directory loop or a hard-linked directory); not entered again", ino);
			wwarn(w, w->msg);
			return 0;
		}
		if ((why = odd_dir(w->fs, ino, w->inode, w->msg, sizeof(w->msg))))
			wwarn(w, why);
	}
	*inop = ino;
	return 1;
}

/* The root: its path is the mount point (or "/"); 1 when it is to be entered. */
static int walk_root(struct walker *w, const char *mountpoint, errcode_t *rc)
{
	size_t ml = strlen(mountpoint);
	w->path.cap = ml + 256;
	if (!(w->path.p = malloc(w->path.cap))) {
		*rc = ENOMEM;
		return 0;
	}
	if (ml) {
		memcpy(w->path.p, mountpoint, ml + 1);
		w->path.len = ml;
	} else {
		strcpy(w->path.p, "/");
		w->path.len = 1;
	}
	if ((*rc = read_inode(w, EXT2_ROOT_INO)))
		return 0;
	const char *why = bad_inode(w->fs, EXT2_ROOT_INO, w->inode, w->msg, sizeof(w->msg));
	if (!why && !LINUX_S_ISDIR(w->inode->i_mode)) {
		snprintf(w->msg, sizeof(w->msg), "the root inode (%u) is not a directory (mode 0%o); "
			 "nothing walked", EXT2_ROOT_INO, w->inode->i_mode);
		why = w->msg;
	}
	if (why) {
		wwarn(w, why);
		return 0;
	}
	if ((why = odd_dir(w->fs, EXT2_ROOT_INO, w->inode, w->msg, sizeof(w->msg))))
		wwarn(w, why);
	struct walk_entry e = { EXT2_ROOT_INO, EXT2_ROOT_INO, w->path.p, w->path.len, w->inode };
	if (w->fn(&e, w->arg))
		return 0;
	w->seen[EXT2_ROOT_INO / 8] |= 1 << (EXT2_ROOT_INO % 8);
	return 1;
}

errcode_t walk_image(ext2_filsys fs, const char *mountpoint, walk_fn fn, walk_fn leave, void *arg,
		     struct walk_stats *st, void (*warn)(void *arg, const char *path, const char *msg))
{
	struct walker w = { .fs = fs, .fn = fn, .leave = leave, .arg = arg, .st = st, .warn = warn,
			    .isize = EXT2_INODE_SIZE(fs->super) };
	errcode_t rc = 0;

	if (w.isize < sizeof(struct ext2_inode_large))
		w.isize = sizeof(struct ext2_inode_large);
	w.inode = calloc(1, w.isize);
	w.seen = calloc(fs->super->s_inodes_count / 8 + 1, 1);
	w.given = calloc(fs->super->s_inodes_count / 8 + 1, 1);
	w.win = itable_window_new(fs);
	/* (FCLABEL_LIB_DIRS=1, for the test suite: every directory read by the library) */
	const char *lib = getenv("FCLABEL_LIB_DIRS");
	bool own = !lib || strcmp(lib, "1");
	if (own)
		w.dr = dirread_new(fs);
	if (!w.seen || !w.given || !w.win || (own && !w.dr) || !w.inode) {
		rc = ENOMEM;
		goto out;
	}
	if (!walk_root(&w, mountpoint, &rc) || (rc = push_dir(&w, EXT2_ROOT_INO, w.path.len)))
		goto out;
	while (w.depth) {
		struct frame *f = &w.stack[w.depth - 1];
		if (f->pos >= f->size) {
			w.depth--;
			w.path.p[f->pathlen] = 0;
			w.path.len = f->pathlen;
			struct walk_entry le = { f->dir, w.depth ? w.stack[w.depth - 1].dir : f->dir,
						 w.path.p, w.path.len, NULL };
			if (leave && leave(&le, arg) < 0)
				goto out;
			continue;
		}
		ext2_ino_t ino;
		int r = take_entry(&w, &ino);
		if (r < 0) {
			rc = (errcode_t)-r;
			goto out;
		}
		if (!r)
			continue;
		struct walk_entry we = { ino, f->dir, w.path.p, w.path.len, w.inode };
		r = fn(&we, arg);
		if (r < 0)
			goto out;
		if (LINUX_S_ISDIR(w.inode->i_mode) && r == 0) {
			w.seen[ino / 8] |= 1 << (ino % 8);
			if ((rc = push_dir(&w, ino, w.path.len)))
				goto out;
		}
	}
out:
	for (size_t i = 0; i < w.cap; i++)
		free(w.stack[i].names);
	free(w.stack);
	free(w.path.p);
	free(w.seen);
	free(w.given);
	itable_window_free(w.win);
	dirread_free(w.dr);
	free(w.inode);
	return rc;
}
