/*
 * make bench-relabel's floor: a pure read of the image metadata a relabel needs, no more: the
 * superblock and group descriptors (ext2fs_open, as fclabel opens an image), the path down to
 * each directory a changed spec can reach, and below it every directory's blocks and every
 * entry's inode with its label (in the inode, or its attribute block). No policy, no lookups,
 * no writes.
 *
 *   relabelfloor IMAGE DIR...     prints "ENTRIES" (the inodes read below the DIRs)
 */
#include <ext2fs/ext2fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct floor {
	ext2_filsys fs;
	char *inode, *block;
	ext2_ino_t *kids; /* a stack of the entries still to read */
	size_t n, cap;
	unsigned long entries;
};

static int each_entry(struct ext2_dir_entry *d, int offset, int blocksize, char *buf, void *arg)
{
	struct floor *f = arg;
	int len = ext2fs_dirent_name_len(d);
	(void)offset, (void)blocksize, (void)buf;
	if (!d->inode || (len == 1 && d->name[0] == '.') ||
	    (len == 2 && d->name[0] == '.' && d->name[1] == '.'))
		return 0;
	if (f->n == f->cap) {
		f->cap = f->cap ? 2 * f->cap : 4096;
		if (!(f->kids = realloc(f->kids, f->cap * sizeof(*f->kids)))) {
			perror("relabelfloor");
			exit(2);
		}
	}
	f->kids[f->n++] = d->inode;
	return 0;
}

/* ino's inode and label; its entries pushed when it is a directory */
static void visit(struct floor *f, ext2_ino_t ino)
{
	struct ext2_inode *in = (struct ext2_inode *)f->inode;
	int size = EXT2_INODE_SIZE(f->fs->super);
	errcode_t rc = ext2fs_read_inode_full(f->fs, ino, in, size);
	if (rc) {
		fprintf(stderr, "relabelfloor: inode %u: %s\n", ino, error_message(rc));
		exit(2);
	}
	f->entries++;
	blk64_t acl = ext2fs_file_acl_block(f->fs, in);
	if (acl && (rc = io_channel_read_blk64(f->fs->io, acl, 1, f->block))) {
		fprintf(stderr, "relabelfloor: block %llu: %s\n", (unsigned long long)acl,
			error_message(rc));
		exit(2);
	}
	if (LINUX_S_ISDIR(in->i_mode) &&
	    (rc = ext2fs_dir_iterate(f->fs, ino, 0, NULL, each_entry, f))) {
		fprintf(stderr, "relabelfloor: directory %u: %s\n", ino, error_message(rc));
		exit(2);
	}
}

int main(int argc, char **argv)
{
	struct floor f = { 0 };
	errcode_t rc;

	if (argc < 3) {
		fprintf(stderr, "usage: relabelfloor IMAGE DIR...\n");
		return 2;
	}
	if ((rc = ext2fs_open(argv[1], 0, 0, 0, unix_io_manager, &f.fs))) {
		fprintf(stderr, "relabelfloor: %s: %s\n", argv[1], error_message(rc));
		return 2;
	}
	f.inode = malloc(EXT2_INODE_SIZE(f.fs->super));
	f.block = malloc(f.fs->blocksize);
	if (!f.inode || !f.block) {
		perror("relabelfloor");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		ext2_ino_t ino;
		if ((rc = ext2fs_namei(f.fs, EXT2_ROOT_INO, EXT2_ROOT_INO, argv[i], &ino))) {
			fprintf(stderr, "relabelfloor: %s: %s\n", argv[i], error_message(rc));
			return 2;
		}
		visit(&f, ino);
		while (f.n)
			visit(&f, f.kids[--f.n]);
	}
	printf("%lu\n", f.entries);
	ext2fs_close_free(&f.fs);
	free(f.inode);
	free(f.block);
	free(f.kids);
	return 0;
}
