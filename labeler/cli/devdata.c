/*
 * Whether a /data is a device's: Android's boot walk writes security.sehash (20 bytes) on /data
 * and on each top directory it enters, vold's on the users' CE directories, and nothing else
 * does but a labeler that means to spare a device those walks (restorecon -D, fclabel's own
 * --digests). A full label of such a /data strips the levels the device keeps; the run (run.c)
 * refuses it without --as-device or --full-label, and check counts what the device keeps.
 *
 * Read before the target is opened for writing (an image is opened read-only and closed again),
 * so that a refusal leaves it as it was, byte for byte.
 */
#include <dirent.h>
#include <errno.h>
#include <et/com_err.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "internal.h"

#define SEHASH "security.sehash"
#define SEHASH_LEN 20
/* a hostile image may hold millions of names at its root: so many are looked at, no more */
#define MAX_TOP 4096

struct look {
	ext2_filsys fs;
	const char *mp;
	char *where;
	size_t n;
	unsigned seen;
	bool found;
};

static bool ino_digested(ext2_filsys fs, ext2_ino_t ino, errcode_t *rc)
{
	struct ext2_xattr_handle *h;
	void *v = NULL;
	size_t l = 0;
	bool yes = false;

	if ((*rc = ext2fs_xattrs_open(fs, ino, &h)))
		return false;
	if (!(*rc = ext2fs_xattrs_read(h))) {
		*rc = ext2fs_xattr_get(h, SEHASH, &v, &l);
		yes = !*rc && l == SEHASH_LEN;
		if (*rc == EXT2_ET_EA_KEY_NOT_FOUND)
			*rc = 0;
	}
	ext2fs_free_mem(&v);
	ext2fs_xattrs_close(&h);
	return yes;
}

static int top_entry(struct ext2_dir_entry *de, int offset, int blocksize, char *buf, void *arg)
{
	struct look *l = arg;
	struct ext2_inode in;
	int nlen = ext2fs_dirent_name_len(de);
	(void)offset;
	(void)blocksize;
	(void)buf;

	if (!de->inode || (nlen == 1 && de->name[0] == '.') ||
	    (nlen == 2 && de->name[0] == '.' && de->name[1] == '.'))
		return 0;
	if (++l->seen > MAX_TOP)
		return DIRENT_ABORT;
	int ft = ext2fs_dirent_file_type(de);
	if (ft != EXT2_FT_DIR && ft != EXT2_FT_UNKNOWN)
		return 0;
	if (de->inode > l->fs->super->s_inodes_count || ext2fs_read_inode(l->fs, de->inode, &in) ||
	    !LINUX_S_ISDIR(in.i_mode))
		return 0;
	errcode_t rc;
	if (!ino_digested(l->fs, de->inode, &rc))
		return 0; /* (attributes that cannot be read are the walk's to report) */
	snprintf(l->where, l->n, "%s/%.*s", l->mp, nlen, de->name);
	l->found = true;
	return DIRENT_ABORT;
}

static int image_digested(const char *target, const struct img_params *ip, const char *cmd,
			  const char *mp, char *where, size_t n)
{
	struct image img;
	struct img_params p = { .lock = ip->lock, .where = ip->where };
	errcode_t rc;

	if (img_open(&img, target, 0, &p, cmd))
		return -1;
	struct look l = { img.fs, mp, where, n, 0, false };
	if (ino_digested(img.fs, EXT2_ROOT_INO, &rc)) {
		snprintf(where, n, "%s", mp);
		l.found = true;
	} else {
		/* (a root that cannot be read is the walk's to report) */
		ext2fs_dir_iterate(img.fs, EXT2_ROOT_INO, 0, NULL, top_entry, &l);
	}
	img_close(&img, cmd);
	return l.found;
}

static bool fd_digested(int fd)
{
	unsigned char v[64];
	return fgetxattr(fd, SEHASH, v, sizeof(v)) == SEHASH_LEN;
}

static int tree_digested(const char *target, const char *cmd, const char *mp, char *where,
			 size_t n)
{
	int fd = open(target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "fclabel %s: %s: %s\n", cmd, qname(target), strerror(errno));
		return -1;
	}
	if (fd_digested(fd)) {
		snprintf(where, n, "%s", mp);
		close(fd);
		return 1;
	}
	int dfd = dup(fd);
	DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
	struct dirent *de;
	unsigned seen = 0;
	int found = 0;
	if (!d && dfd >= 0)
		close(dfd);
	while (d && !found && seen++ < MAX_TOP && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		int cfd = openat(fd, de->d_name,
				 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (cfd < 0)
			continue;
		if (fd_digested(cfd)) {
			snprintf(where, n, "%s/%s", mp, de->d_name);
			found = 1;
		}
		close(cfd);
	}
	if (d)
		closedir(d);
	close(fd);
	return found;
}

int data_digested(const char *target, bool tree, const struct img_params *ip, const char *cmd,
		  const char *mp, char *where, size_t n)
{
	return tree ? tree_digested(target, cmd, mp, where, n)
		    : image_digested(target, ip, cmd, mp, where, n);
}
