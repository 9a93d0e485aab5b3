/*
 * Quota usage, kept right when a label takes or gives back a block. With the quota feature the
 * image holds, per user, group and project, the space its files use (ext4's quota files, in the
 * v2 tree format: a 4-level radix tree of 1 KiB blocks indexed by id, leaves of 72-byte entries);
 * e2fsck adds up every inode's blocks (an attribute block counts once for each inode using it)
 * and reports a usage that differs. The kernel charges a new attribute block to the inode's
 * owner: so do we. Changes are added up while the labels are written and made once, at the end:
 * only existing entries are updated (a file's owner already has one), nothing is allocated.
 */
#include <errno.h>
#include <et/com_err.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define QT_BLK 1024
#define QT_DEPTH 4
#define DQ_HDR 16     /* a leaf block's header */
#define DQ_ENTRY 72   /* struct v2r1_disk_dqblk */
#define DQ_CURSPACE 48 /* its dqb_curspace */

enum { QUSR, QGRP, QPRJ, QTYPES };
static const char *const type_names[QTYPES] = { "user", "group", "project" };
static const uint32_t magics[QTYPES] = { 0xd9c01f11, 0xd9c01927, 0xd9c03f14 };

struct qdelta {
	uint64_t key;    /* type << 32 | id, plus 1 (0: empty slot) */
	int64_t up, down; /* charged (>= 0) and given back (<= 0): written apart, when the writes
			   * are ordered (charges before the inodes that take the blocks, credits
			   * after those that give them back) */
};

struct quota {
	ext2_filsys fs;
	ext2_ino_t file[QTYPES];
	struct qdelta *d;
	size_t n, mask;
};

struct quota *quota_new(ext2_filsys fs)
{
	struct ext2_super_block *sb = fs->super;
	if (!ext2fs_has_feature_quota(sb))
		return NULL;
	struct quota *q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->fs = fs;
	q->file[QUSR] = sb->s_usr_quota_inum;
	q->file[QGRP] = sb->s_grp_quota_inum;
	q->file[QPRJ] = ext2fs_has_feature_project(sb) ? sb->s_prj_quota_inum : 0;
	return q;
}

void quota_free(struct quota *q)
{
	if (q)
		free(q->d);
	free(q);
}

static int add(struct quota *q, int type, uint32_t id, int64_t bytes)
{
	if (!q->file[type] || !bytes)
		return 0;
	if (!q->d || (q->n + 1) * 2 > q->mask + 1) {
		size_t nm = q->d ? q->mask * 2 + 1 : 63;
		struct qdelta *nd = calloc(nm + 1, sizeof(*nd));
		if (!nd)
			return ENOMEM;
		for (size_t i = 0; q->d && i <= q->mask; i++)
			if (q->d[i].key) {
				size_t b = (size_t)(q->d[i].key * 0x9e3779b97f4a7c15ull >> 40) & nm;
				while (nd[b].key)
					b = (b + 1) & nm;
				nd[b] = q->d[i];
			}
		free(q->d);
		q->d = nd;
		q->mask = nm;
	}
	uint64_t key = ((uint64_t)type << 32 | id) + 1;
	size_t b = (size_t)(key * 0x9e3779b97f4a7c15ull >> 40) & q->mask;
	while (q->d[b].key && q->d[b].key != key)
		b = (b + 1) & q->mask;
	if (!q->d[b].key) {
		q->d[b].key = key;
		q->n++;
	}
	if (bytes > 0)
		q->d[b].up += bytes;
	else
		q->d[b].down += bytes;
	return 0;
}

int quota_charge(struct quota *q, const struct ext2_inode_large *inode, int64_t bytes)
{
	if (!q || !bytes)
		return 0;
	const struct ext2_inode *in = (const struct ext2_inode *)inode;
	int rc = add(q, QUSR, inode_uid(*in), bytes);
	if (!rc)
		rc = add(q, QGRP, inode_gid(*in), bytes);
	/* the project id, where the inode is large enough to hold it (e2fsck's rule) */
	uint32_t projid = 0;
	if (EXT2_INODE_SIZE(q->fs->super) > EXT2_GOOD_OLD_INODE_SIZE &&
	    EXT2_GOOD_OLD_INODE_SIZE + (size_t)inode->i_extra_isize >=
		    offsetof(struct ext2_inode_large, i_projid) + sizeof(inode->i_projid))
		projid = inode->i_projid;
	if (!rc)
		rc = add(q, QPRJ, projid, bytes);
	return rc;
}

static errcode_t qread(ext2_file_t f, uint64_t off, char *buf)
{
	unsigned got = 0;
	errcode_t rc = ext2fs_file_llseek(f, off, EXT2_SEEK_SET, NULL);
	if (!rc)
		rc = ext2fs_file_read(f, buf, QT_BLK, &got);
	return rc ? rc : got == QT_BLK ? 0 : EXT2_ET_SHORT_READ;
}

/* The offset of id's entry in the quota file f (0: none). */
static errcode_t find_entry(ext2_file_t f, uint32_t id, char *buf, uint64_t *at)
{
	uint32_t blk = 1;
	errcode_t rc;
	*at = 0;
	for (int depth = 0; depth < QT_DEPTH; depth++) {
		uint32_t ref;
		if ((rc = qread(f, (uint64_t)blk * QT_BLK, buf)))
			return rc;
		memcpy(&ref, buf + 4 * ((id >> ((QT_DEPTH - depth - 1) * 8)) & 0xff), 4);
		blk = ext2fs_le32_to_cpu(ref);
		if (!blk)
			return 0;
	}
	if ((rc = qread(f, (uint64_t)blk * QT_BLK, buf)))
		return rc;
	static const char zero[DQ_ENTRY];
	for (size_t o = DQ_HDR; o + DQ_ENTRY <= QT_BLK; o += DQ_ENTRY) {
		uint32_t eid;
		memcpy(&eid, buf + o, 4);
		if (memcmp(buf + o, zero, DQ_ENTRY) && ext2fs_le32_to_cpu(eid) == id) {
			*at = (uint64_t)blk * QT_BLK + o;
			return 0;
		}
	}
	return 0;
}

/* What of d the commit writes: both, the charges, or the credits. */
static int64_t part(const struct qdelta *d, int which)
{
	return which == QC_UP ? d->up : which == QC_DOWN ? d->down : d->up + d->down;
}

static void clear_part(struct qdelta *d, int which)
{
	if (which != QC_DOWN)
		d->up = 0;
	if (which != QC_UP)
		d->down = 0;
}

/*
 * Whether a quota file may be written, looked at before the first write: the superblock names
 * its inode, and nothing else vouches for it. An unused inode's block map may point anywhere
 * (at the inode table: the commit then overwrote the root inode), and the claims scan does not
 * look at it; a directory or a file of other contents was found out only once the labels were
 * written. So the inode is reserved or in use (then the claims scan claims what it maps), a
 * regular file, a v2 quota file of its type (header magic and version), and its tree (a 4-level
 * radix tree of 1 KiB blocks from block 1) readable: every block it points to inside the file
 * (dqi_blocks), each tree block met once (one met twice is a loop), so that what the image
 * says costs at most what it holds.
 */
struct qtree {
	ext2_file_t f;
	uint32_t nblocks;     /* the file's blocks (dqi_blocks, and no more than its size) */
	unsigned char *seen;  /* per block: 1 a tree block, 2 a leaf */
	char buf[QT_BLK];
	char *why;
	size_t n;
	const char *type;
	ext2_ino_t ino;
};

static errcode_t tree_bad(struct qtree *t, uint32_t from, uint32_t blk, const char *what)
{
	snprintf(t->why, t->n, "the %s quota file (inode %u): its tree block %u points to block %u, "
		 "%s", t->type, t->ino, from, blk, what);
	return EXT2_ET_FILESYSTEM_CORRUPTED;
}

static errcode_t tree_walk(struct qtree *t, uint32_t from, uint32_t blk, int depth)
{
	errcode_t rc;
	if (blk >= t->nblocks) {
		char what[64];
		snprintf(what, sizeof(what), "past its end (%u blocks)", t->nblocks);
		return tree_bad(t, from, blk, what);
	}
	if (depth == QT_DEPTH) {
		/* a leaf holds the entries of several ids: more than one reference is right */
		if (t->seen[blk] == 1)
			return tree_bad(t, from, blk, "a block of its tree");
		if (t->seen[blk])
			return 0;
		t->seen[blk] = 2;
		return qread(t->f, (uint64_t)blk * QT_BLK, t->buf);
	}
	if (t->seen[blk])
		return tree_bad(t, from, blk, "which its tree holds already");
	t->seen[blk] = 1;
	if ((rc = qread(t->f, (uint64_t)blk * QT_BLK, t->buf)))
		return rc;
	uint32_t refs[QT_BLK / 4];
	memcpy(refs, t->buf, sizeof(refs));
	for (size_t i = 0; i < QT_BLK / 4; i++)
		if (refs[i] && (rc = tree_walk(t, blk, ext2fs_le32_to_cpu(refs[i]), depth + 1)))
			return rc;
	return 0;
}

/* What is wrong with the quota file's inode (NULL: nothing). A size past the image's would
 * leave the tree's bounds to the image's word alone. */
static const char *inode_bad(ext2_filsys fs, ext2_ino_t ino, const struct ext2_inode *in)
{
	uint64_t size = EXT2_I_SIZE(in);
	if (ino >= EXT2_FIRST_INO(fs->super) &&
	    (!in->i_links_count || (fs->inode_map && !ext2fs_test_inode_bitmap2(fs->inode_map, ino))))
		return "is not in use (neither a reserved inode nor a file)";
	if (!LINUX_S_ISREG(in->i_mode))
		return "is not a regular file";
	if (size < 2 * QT_BLK || size % QT_BLK)
		return "is not a v2 quota file (its size is not a whole number of 1 KiB blocks, at "
		       "least two)";
	if (size > (uint64_t)ext2fs_blocks_count(fs->super) * fs->blocksize)
		return "is not a v2 quota file (its size is past the image's)";
	return NULL;
}

/* The header (struct v2_disk_dqheader: magic, version; then v2_disk_dqinfo's dqi_blocks), then
 * the tree. */
static errcode_t check_contents(struct qtree *t, uint32_t magic, uint64_t size)
{
	uint32_t hdr[6];
	errcode_t rc = qread(t->f, 0, t->buf);
	if (rc)
		return rc;
	memcpy(hdr, t->buf, sizeof(hdr));
	if (ext2fs_le32_to_cpu(hdr[0]) != magic || ext2fs_le32_to_cpu(hdr[1]) != 1) {
		snprintf(t->why, t->n, "the %s quota file (inode %u) is not a v2 quota file (magic "
			 "%#x, version %u)", t->type, t->ino, ext2fs_le32_to_cpu(hdr[0]),
			 ext2fs_le32_to_cpu(hdr[1]));
		return EXT2_ET_BAD_MAGIC;
	}
	t->nblocks = ext2fs_le32_to_cpu(hdr[5]);
	if (t->nblocks > size / QT_BLK)
		t->nblocks = (uint32_t)(size / QT_BLK);
	if (t->nblocks < 2) {
		snprintf(t->why, t->n, "the %s quota file (inode %u) is not a v2 quota file (its header "
			 "gives it %u blocks)", t->type, t->ino, ext2fs_le32_to_cpu(hdr[5]));
		return EXT2_ET_BAD_MAGIC;
	}
	if (!(t->seen = calloc(t->nblocks, 1)))
		return ENOMEM;
	return tree_walk(t, 0, 1, 0);
}

static errcode_t check_type(struct quota *q, int type, char *why, size_t n)
{
	ext2_filsys fs = q->fs;
	ext2_ino_t ino = q->file[type];
	struct ext2_inode in;
	struct qtree t = { .why = why, .n = n, .type = type_names[type], .ino = ino };
	const char *bad;
	errcode_t rc;

	if (ino > fs->super->s_inodes_count) {
		snprintf(why, n, "the %s quota file (inode %u) is past the last inode (%u)",
			 t.type, ino, fs->super->s_inodes_count);
		return EXT2_ET_BAD_INODE_NUM;
	}
	if (!(rc = ext2fs_read_inode(fs, ino, &in)) && (bad = inode_bad(fs, ino, &in))) {
		snprintf(why, n, "the %s quota file (inode %u) %s", t.type, ino, bad);
		return EXT2_ET_FILESYSTEM_CORRUPTED;
	}
	if (!rc && !(rc = ext2fs_file_open(fs, ino, 0, &t.f))) {
		rc = check_contents(&t, magics[type], EXT2_I_SIZE(&in));
		ext2fs_file_close(t.f);
	}
	if (rc && !*why)
		snprintf(why, n, "the %s quota file (inode %u) cannot be read: %s", t.type, ino,
			 error_message(rc));
	free(t.seen);
	return rc;
}

errcode_t quota_check(struct quota *q, char *why, size_t n)
{
	errcode_t rc = 0;
	*why = 0;
	for (int t = 0; q && t < QTYPES && !rc; t++)
		if (q->file[t])
			rc = check_type(q, t, why, n);
	return rc;
}

/* One quota file's changes: 0, or an errcode_t with why (naming file and id). */
static errcode_t commit_type(struct quota *q, int type, int which, char *why, size_t n)
{
	ext2_file_t f;
	char buf[QT_BLK];
	errcode_t rc = ext2fs_file_open(q->fs, q->file[type], EXT2_FILE_WRITE, &f), rc2;
	if (rc) {
		snprintf(why, n, "cannot open the %s quota file (inode %u): %s", type_names[type],
			 q->file[type], error_message(rc));
		return rc;
	}
	uint32_t hdr[2];
	if (!(rc = qread(f, 0, buf))) {
		memcpy(hdr, buf, sizeof(hdr));
		if (ext2fs_le32_to_cpu(hdr[0]) != magics[type] || ext2fs_le32_to_cpu(hdr[1]) != 1)
			rc = EXT2_ET_BAD_MAGIC;
	}
	for (size_t i = 0; !rc && i <= q->mask; i++) {
		struct qdelta *d = &q->d[i];
		if (!d->key || (int)((d->key - 1) >> 32) != type)
			continue;
		int64_t bytes = part(d, which);
		if (!bytes) {
			clear_part(d, which); /* (what cancels out is done) */
			continue;
		}
		uint32_t id = (uint32_t)(d->key - 1);
		uint64_t at, space;
		if ((rc = find_entry(f, id, buf, &at)))
			break;
		if (!at) {
			snprintf(why, n, "the %s quota file (inode %u) has no entry for id %u: its usage "
				 "is left as it was", type_names[type], q->file[type], id);
			rc = EXT2_ET_FILESYSTEM_CORRUPTED;
			break;
		}
		size_t o = (size_t)(at % QT_BLK);
		memcpy(&space, buf + o + DQ_CURSPACE, 8);
		space = ext2fs_le64_to_cpu(space);
		space = bytes < 0 && (uint64_t)-bytes > space ? 0 : space + (uint64_t)bytes;
		space = ext2fs_cpu_to_le64(space);
		unsigned wrote = 0;
		if (!(rc = ext2fs_file_llseek(f, at + DQ_CURSPACE, EXT2_SEEK_SET, NULL)) &&
		    !(rc = ext2fs_file_write(f, &space, 8, &wrote)) && wrote != 8)
			rc = EXT2_ET_SHORT_WRITE;
		if (!rc)
			clear_part(d, which);
	}
	if ((rc2 = ext2fs_file_close(f)) && !rc)
		rc = rc2;
	if (rc && !*why)
		snprintf(why, n, "updating the %s quota file (inode %u) failed: %s", type_names[type],
			 q->file[type], rc == EXT2_ET_BAD_MAGIC ? "not a v2 quota file"
								  : error_message(rc));
	return rc;
}

errcode_t quota_commit(struct quota *q, int which, char *why, size_t n)
{
	errcode_t rc = 0;
	*why = 0;
	if (!q || !q->n)
		return 0;
	for (int t = 0; t < QTYPES && !rc; t++) {
		bool any = false;
		for (size_t i = 0; i <= q->mask && !any; i++)
			any = q->d[i].key && (int)((q->d[i].key - 1) >> 32) == t &&
			      part(&q->d[i], which);
		if (any && q->file[t])
			rc = commit_type(q, t, which, why, n);
	}
	return rc;
}

/* ---- repair: the usage of every entry made what the inodes use ---- */

static struct qdelta *slot_of(const struct quota *q, int type, uint32_t id)
{
	if (!q->d)
		return NULL;
	uint64_t key = ((uint64_t)type << 32 | id) + 1;
	size_t b = (size_t)(key * 0x9e3779b97f4a7c15ull >> 40) & q->mask;
	while (q->d[b].key && q->d[b].key != key)
		b = (b + 1) & q->mask;
	return q->d[b].key ? &q->d[b] : NULL;
}

struct qwalk {
	ext2_file_t f;
	int type;
	struct quota *usage;
	unsigned char *seen;  /* a bit per block of the file: each leaf is read once */
	uint64_t nblocks;
	unsigned long fixed;
	errcode_t rc;
};

static errcode_t qwrite(ext2_file_t f, uint64_t off, const char *buf)
{
	unsigned wrote = 0;
	errcode_t rc = ext2fs_file_llseek(f, off, EXT2_SEEK_SET, NULL);
	if (!rc)
		rc = ext2fs_file_write(f, buf, QT_BLK, &wrote);
	return rc ? rc : wrote == QT_BLK ? 0 : EXT2_ET_SHORT_WRITE;
}

/* Tree block blk at depth (QT_DEPTH: a leaf of entries). */
static void qwalk_block(struct qwalk *w, uint32_t blk, int depth)
{
	char buf[QT_BLK];
	if (w->rc || !blk || blk >= w->nblocks)
		return;
	if (depth == QT_DEPTH) {
		if (w->seen[blk / 8] & (1u << (blk % 8)))
			return;
		w->seen[blk / 8] |= (unsigned char)(1u << (blk % 8));
	}
	if ((w->rc = qread(w->f, (uint64_t)blk * QT_BLK, buf)))
		return;
	if (depth < QT_DEPTH) {
		for (int i = 0; i < QT_BLK / 4 && !w->rc; i++) {
			uint32_t ref;
			memcpy(&ref, buf + 4 * i, 4);
			qwalk_block(w, ext2fs_le32_to_cpu(ref), depth + 1);
		}
		return;
	}
	static const char zero[DQ_ENTRY];
	bool dirty = false;
	for (size_t o = DQ_HDR; o + DQ_ENTRY <= QT_BLK; o += DQ_ENTRY) {
		uint32_t id;
		uint64_t space;
		if (!memcmp(buf + o, zero, DQ_ENTRY))
			continue;
		memcpy(&id, buf + o, 4);
		memcpy(&space, buf + o + DQ_CURSPACE, 8);
		struct qdelta *u = slot_of(w->usage, w->type, ext2fs_le32_to_cpu(id));
		uint64_t want = u ? (uint64_t)u->up : 0;
		if (u)
			u->down = 1; /* (an entry has it) */
		if (ext2fs_le64_to_cpu(space) == want)
			continue;
		space = ext2fs_cpu_to_le64(want);
		memcpy(buf + o + DQ_CURSPACE, &space, 8);
		dirty = true;
		w->fixed++;
	}
	if (dirty)
		w->rc = qwrite(w->f, (uint64_t)blk * QT_BLK, buf);
}

errcode_t quota_repair(struct quota *q, struct quota *usage, unsigned long *fixed, char *why,
		       size_t n)
{
	*fixed = 0;
	*why = 0;
	for (int t = 0; t < QTYPES; t++) {
		if (!q->file[t])
			continue;
		struct qwalk w = { .type = t, .usage = usage };
		char buf[QT_BLK];
		errcode_t rc = ext2fs_file_open(q->fs, q->file[t], EXT2_FILE_WRITE, &w.f), rc2;
		if (rc) {
			snprintf(why, n, "cannot open the %s quota file (inode %u): %s", type_names[t],
				 q->file[t], error_message(rc));
			return rc;
		}
		uint32_t hdr[2];
		w.nblocks = ext2fs_file_get_size(w.f) / QT_BLK;
		if (!(rc = qread(w.f, 0, buf))) {
			memcpy(hdr, buf, sizeof(hdr));
			if (ext2fs_le32_to_cpu(hdr[0]) != magics[t] || ext2fs_le32_to_cpu(hdr[1]) != 1)
				rc = EXT2_ET_BAD_MAGIC;
		}
		if (!rc && !(w.seen = calloc(w.nblocks / 8 + 1, 1)))
			rc = ENOMEM;
		if (!rc) {
			qwalk_block(&w, 1, 0);
			rc = w.rc;
		}
		free(w.seen);
		*fixed += w.fixed;
		if ((rc2 = ext2fs_file_close(w.f)) && !rc)
			rc = rc2;
		if (rc) {
			snprintf(why, n, "repairing the %s quota file (inode %u) failed: %s",
				 type_names[t], q->file[t], rc == EXT2_ET_BAD_MAGIC ? "not a v2 quota file"
										 : error_message(rc));
			return rc;
		}
		/* an owner using space with no entry: e2fsck would add one, which is not done here */
		for (size_t i = 0; usage->d && i <= usage->mask; i++) {
			struct qdelta *d = &usage->d[i];
			if (d->key && (int)((d->key - 1) >> 32) == t && d->up && !d->down) {
				snprintf(why, n, "the %s quota file (inode %u) has no entry for id %u, "
					 "which uses %lld bytes", type_names[t], q->file[t],
					 (unsigned)(d->key - 1), (long long)d->up);
				return EXT2_ET_FILESYSTEM_CORRUPTED;
			}
		}
	}
	return 0;
}
