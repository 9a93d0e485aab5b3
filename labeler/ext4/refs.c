/*
 * Attribute blocks whose h_refcount is not the number of inodes using them. Dropping a
 * reference trusts h_refcount: one too low frees (or rewrites in place) a block other inodes
 * still use, one too high leaks it. So before the first write to an inode that has a block, the
 * inodes in use (links count not 0, as e2fsck counts them) and the orphans (whose references a
 * mount releases later) are counted per block, and a write to an inode whose block's count says
 * otherwise is refused (the image needs e2fsck). The inode tables are read as itable_each reads
 * them: a relabel that writes a few thousand files spent most of its time here when it read
 * them inode by inode.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct suspect {
	blk64_t blk; /* first: bsearch compares it */
	unsigned refcount;
	size_t users;
};

static int cmp_blk(const void *a, const void *b)
{
	blk64_t x = *(const blk64_t *)a, y = *(const blk64_t *)b;
	return x < y ? -1 : x > y;
}

struct ea_list {
	blk64_t *blks;
	size_t n, cap;
	const struct orphans *orphans;
};

static int add_ea_block(ext2_filsys fs, ext2_ino_t ino, const struct ext2_inode *in, void *arg)
{
	struct ea_list *l = arg;
	blk64_t b = ext2fs_file_acl_block(fs, (struct ext2_inode *)in);
	if (!b || !inode_holds_blocks(l->orphans, ino, in))
		return 0;
	if (l->n == l->cap) {
		size_t c = l->cap ? l->cap * 2 : 1024;
		blk64_t *nbk = realloc(l->blks, c * sizeof(*nbk));
		if (!nbk)
			return -1;
		l->blks = nbk;
		l->cap = c;
	}
	l->blks[l->n++] = b;
	return 0;
}

void refs_count(struct refs *r, ext2_filsys fs, struct xattr_ctx *x)
{
	struct ea_list l = { 0 };
	struct suspect *sus = NULL;
	size_t nsus = 0;
	char *buf = malloc(fs->blocksize);

	r->counted = -1;
	if (!buf || xattr_orphans(x, &l.orphans) || itable_each(fs, add_ea_block, &l))
		goto out;
	blk64_t *blks = l.blks;
	size_t n = l.n;
	qsort(blks, n, sizeof(*blks), cmp_blk);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i; j < n && blks[j] == blks[i]; j++)
			;
		/* unreadable or not a block of attributes: the inodes using it report that */
		struct ext2_ext_attr_header *h = (struct ext2_ext_attr_header *)buf;
		if (io_channel_read_blk64(fs->io, blks[i], 1, buf) ||
		    ext2fs_le32_to_cpu(h->h_magic) != EXT2_EXT_ATTR_MAGIC ||
		    ext2fs_le32_to_cpu(h->h_refcount) == j - i)
			continue;
		struct suspect *ns = realloc(sus, (nsus + 1) * sizeof(*ns));
		if (!ns)
			goto out;
		sus = ns;
		sus[nsus++] = (struct suspect){ blks[i], ext2fs_le32_to_cpu(h->h_refcount), j - i };
	}
	r->suspect = sus;
	r->n = nsus;
	sus = NULL;
	r->counted = 1;
out:
	free(sus);
	free(l.blks);
	free(buf);
}

bool refs_suspect(const struct refs *r, ext2_ino_t ino, blk64_t b, char *why, size_t n)
{
	const struct suspect *su;
	if (r->counted <= 0 || !r->n ||
	    !(su = bsearch(&b, r->suspect, r->n, sizeof(*su), cmp_blk)))
		return false;
	snprintf(why, n, "inode %u: its attribute block %llu has h_refcount %u but %zu inodes use "
		 "it (run e2fsck); left as it is", ino, (unsigned long long)b, su->refcount,
		 su->users);
	return true;
}

void refs_free(struct refs *r)
{
	free(r->suspect);
	memset(r, 0, sizeof(*r));
}
