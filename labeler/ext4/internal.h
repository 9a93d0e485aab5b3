/* Private to labeler/ext4/: what its files share. */
#ifndef LABELER_EXT4_INTERNAL_H
#define LABELER_EXT4_INTERNAL_H

#include <stdatomic.h>

#include "ext4.h"

/* (image.c) What img_open took besides the file system (the journal, the inode tables). */
void img_release(struct image *img);
/* ---- lock.c: who else has the image ---- */
/* A mounted (or otherwise busy) image is not written; -1: refused (printed). *mounted: whether
 * it is mounted. */
int img_check_mounted(const char *name, bool rw, const char *cmd, bool *mounted);
/* ... and a partition of a disk (part set), mounted through a device of its own: its disk's
 * partition device, or a loop device over the disk image. */
int img_check_part_mounted(const char *name, const struct img_part *part, bool rw,
			   const char *cmd, bool *mounted);
/* The BSD lock on the image (img->lockfd), exclusive to write (and then no byte-range lock of
 * another process on it), shared to read, as p->lock says (LOCK_WAIT, ...): 0, or -1 after
 * saying why. img_unlock lets it go. */
int img_lock(struct image *img, const char *name, bool rw, int how, const char *cmd);
void img_unlock(struct image *img);
/* What the path names as the image is opened (img->dev, img->ino), for img_still_target; and,
 * after the open, whether libext2fs opened that file (false after saying why). */
int img_note_target(struct image *img, const char *name, const char *cmd);
bool img_still_target_open(const struct image *img, const char *cmd);
/* ---- inplace.c ---- */
/* The image's jbd2 journal, opened below the overlay (*j NULL: it has none). 0, or why not
 * (EXT2_ET_UNSUPP_FEATURE: a journal fclabel does not write, or on another device). */
errcode_t img_journal_load(ext2_filsys fs, struct imgfmt_journal **j, char *why, size_t n);
/* Before writing: a journal that needs recovery is replayed, as a mount would (*reopen: the
 * file system must be opened again); one that cannot be, or that holds transactions its
 * superblock does not ask to replay, refuses the image. -1 after saying why. */
int img_recover(struct image *img, const char *cmd, bool *reopen);
/* In place: the overlay set to write through the journal, or in crash order. -1 after saying
 * why. */
int img_begin_writes(struct image *img, bool sync, const char *cmd, bool verbose);
/* ---- repair.c ---- */
/* An image written in crash order that was not cleanly closed: what an interrupted write
 * leaves (leaked attribute blocks, free counts, reference counts, quota usage) made right, or
 * the image refused when more is wrong. -1 after saying why. */
int img_repair(struct image *img, const char *cmd);
/* ---- mmp.c: multiple mount protection ---- */
enum { MMP_NONE, MMP_CLEAN, MMP_HELD, MMP_DAMAGED };
/* What the image's MMP block says: no mmp feature, clean (nobody holds it; its time noted in
 * img->mmp_time), held by another node (mounted there, or e2fsck's mark: who, in why) or not a
 * valid MMP block (why). */
int mmp_look(struct image *img, char *why, size_t n);
/* For imgfmt_set_before_write (arg: the image, written in place): claims the image under MMP as
 * e2fsck does (this waits twice the update interval and a second), so that no other node mounts
 * it while it is written; ext2fs_close2 releases it (a clean sequence). */
errcode_t mmp_claim(void *arg, char *why, size_t n);

/* ---- xattr.c, xattr_write.c ---- */
struct xattr_ctx; /* (below: what the two share) */
/* deferred: the image is written as a copy that replaces it only when complete (the order of
 * the writes is free): label blocks are held in memory and each written once, by
 * xattr_write_back, which must then come before the image is closed. */
struct xattr_ctx *xattr_new(ext2_filsys fs, bool deferred);
void xattr_free(struct xattr_ctx *x);
/* The current security.selinux value of an inode. *len = 0 and *val = NULL when absent.
 * The value is valid until the next call. Returns 0 or an errcode_t. */
errcode_t xattr_get_label(struct xattr_ctx *x, ext2_ino_t ino, struct ext2_inode_large *inode,
			  const char **val, size_t *len);
/* Writes security.selinux = ctx plus its trailing NUL; inode is the inode as read (a full
 * EXT2_INODE_SIZE buffer), and is updated. Identical EA blocks holding only a label
 * are shared between inodes, as the kernel does. */
errcode_t xattr_set_label(struct xattr_ctx *x, ext2_ino_t ino, struct ext2_inode_large *inode,
			  const char *ctx);
/* security.sehash: the value (up to 64 bytes; *len 0 when absent), and writing one. The inode
 * is read afresh: pass it to xattr_get_label again after a write. */
errcode_t xattr_get_digest(struct xattr_ctx *x, ext2_ino_t ino, unsigned char *out, size_t *len);
errcode_t xattr_set_digest(struct xattr_ctx *x, ext2_ino_t ino, const unsigned char *digest,
			   size_t len);
/* Any attribute's value by its full name (*len 0 when absent, or longer than max). */
errcode_t xattr_get_value(struct xattr_ctx *x, ext2_ino_t ino, const char *name,
			  unsigned char *out, size_t max, size_t *len);
/* xattr_set_label's and xattr_set_digest's own refusals (not errno values, nor libext2fs's
 * codes); xattr_strerror says why. XATTR_E_CLAIMS refuses the image (every later allocation
 * too): its block bitmap cannot be trusted (claims.c). */
#define XATTR_E_CLAIMS ((errcode_t)-10)
#define XATTR_E_INLINE_SYMLINK ((errcode_t)-11)
#define XATTR_E_EA_INODE ((errcode_t)-12)
#define XATTR_E_TOO_BIG ((errcode_t)-14)
/* ... with what claims.c found for XATTR_E_CLAIMS (errors.c: ext4_strerror for the rest). */
const char *xattr_strerror(const struct xattr_ctx *x, errcode_t rc);
/* errors.c: any code of this room (XATTR_E_*, CLAIMS_E_*), libext2fs's, or an errno. */
const char *ext4_strerror(errcode_t rc);
/* In place (the image's overlay holds the writes): ordered (no journal) holds back what must
 * reach the disk after the inodes; a commit is due once limit blocks are held. */
void xattr_set_inplace(struct xattr_ctx *x, bool ordered, size_t limit);
bool xattr_commit_due(const struct xattr_ctx *x);
/* Whether writes are held, waiting for a commit. */
bool xattr_held(const struct xattr_ctx *x);
/* Between two files: what is held made durable together (quota usage included). After a
 * failure none follows; xattr_commit_failed says so, and xattr_inodes_on_disk whether the
 * labels of the failed one reached the disk even so (in order: the inodes came before). */
errcode_t xattr_commit(struct xattr_ctx *x);
bool xattr_commit_failed(const struct xattr_ctx *x);
bool xattr_inodes_on_disk(const struct xattr_ctx *x);
/* At the end: the quota usage changes of the labels written (quota.c) made in the quota files,
 * and in place the last commit: 0, or an errcode_t with why (why empty: not the quota's). */
errcode_t xattr_finish(struct xattr_ctx *x, char *why, size_t n);
/* How many EA blocks this run allocated and how many references it added to shared ones, and
 * how long the look at the image's block claims took (claims.c). */
void xattr_stats(const struct xattr_ctx *x, unsigned long *allocated, unsigned long *shared,
		 double *claims_seconds);
/* The image's orphans (orphans.c), read once: they hold references like any inode in use. */
struct orphans;
errcode_t xattr_orphans(struct xattr_ctx *x, const struct orphans **o);
/* After a labeling walk: the reference counts of the label-only blocks made right (the
 * orphans' references counted). */
errcode_t xattr_reconcile(struct xattr_ctx *x, unsigned long *fixed);
/* The label blocks held in memory written to the image (before it is closed, and before
 * anything else reads attribute blocks from it). 0 or an errcode_t. */
errcode_t xattr_write_back(struct xattr_ctx *x);

/* ---- orphans.c ---- */
/* The orphans of an image copied from a mounted file system (the orphan list, the orphan file):
 * open but deleted inodes that hold their blocks and attribute-block references until a mount
 * releases them (struct orphans: above). */
/* Reads them (at most s_inodes_count, whatever the image says): 0, or an errcode_t. */
errcode_t orphans_read(ext2_filsys fs, struct orphans **out);
void orphans_free(struct orphans *o);
/* Whether an inode holds its blocks and its attribute block's reference: its links count is not
 * 0, or it is an orphan (o may be NULL: none). */
bool inode_holds_blocks(const struct orphans *o, ext2_ino_t ino, const struct ext2_inode *in);

/* ---- itable.c ---- */
/* Called for every inode of the inode tables that may be in use (inode as on disk, isize bytes);
 * a negative return stops the scan (EXT2_ET_CANCEL_REQUESTED). */
typedef int (*itable_fn)(ext2_filsys fs, ext2_ino_t ino, const struct ext2_inode *inode,
			 void *arg);
errcode_t itable_each(ext2_filsys fs, itable_fn fn, void *arg);
/* ... a unit at a time (itable_each: units 0 to itable_units - 1, in order), read from src. */
struct itable_src {
	ext2_filsys fs;
	io_channel io;          /* what reads the tables, and what holds buf (itable_buf) */
	char *buf;
	const char *map;        /* the image file's bytes mapped (map_len of them; NULL: none):
				 * the tables it holds are looked at there, not read */
	uint64_t map_len;
};
size_t itable_units(ext2_filsys fs);
char *itable_buf(ext2_filsys fs);
errcode_t itable_unit(const struct itable_src *src, size_t unit, itable_fn fn, void *arg);
/* The walk's inodes, a chunk of an inode table at a time (itable.c says when they are current). */
struct itable_window {
	ext2_filsys fs;
	char *buf;
	size_t chunk, n; /* blocks: a chunk, and those in buf (0: none) */
	blk64_t at;      /* the first of them */
};
struct itable_window *itable_window_new(ext2_filsys fs);
void itable_window_free(struct itable_window *w);
bool itable_window_read(struct itable_window *w, ext2_ino_t ino, struct ext2_inode_large *out,
			size_t bufsize);
/* An inode's checksum (metadata_csum), with the CPU's crc32c: whether it is right (false also
 * for an inode of zeros, which the library lets pass), and set. */
bool inode_csum_ok(ext2_filsys fs, ext2_ino_t ino, struct ext2_inode_large *in);
void inode_csum_set(ext2_filsys fs, ext2_ino_t ino, struct ext2_inode_large *in);

/* ---- dirread.c ---- */
/* A directory's entries in use, read as ext2fs_dir_iterate(fs, dir, 0, ...) reads them but a run
 * of blocks at a time, for a directory whose extents are in its inode and whose every block
 * passes the library's checks (dirread.c says which). */
struct dirread;
struct dirread *dirread_new(ext2_filsys fs);
void dirread_free(struct dirread *d);
/* fn as ext2fs_dir_iterate's; DIRENT_ABORT stops. 1: read (fn was given every entry, or
 * stopped); 0: not one it reads, or a block failed a check or a read: what fn was given is to
 * be dropped and the directory read by the library, whose errors say why. in: the inode as
 * read. */
typedef int (*dirread_fn)(struct ext2_dir_entry *d, int offset, int blocksize, char *buf,
			  void *arg);
int dirread_entries(struct dirread *d, ext2_ino_t ino, const struct ext2_inode_large *in,
		    dirread_fn fn, void *arg);

/* ---- claims.c ---- */
/* Every block the file system's metadata and its inodes (those in use, and the orphans) claim,
 * as e2fsck's pass 1 finds them, against each other and the block bitmap: the first block
 * claimed twice (cross, naming inode and block; "" when none: the scan stops there) and the
 * first claimed block the bitmap calls free (free). With shared_blocks, files may share data
 * blocks. Claims outside the file system and damaged tree nodes are e2fsck's to drop, and not
 * counted. 0; CLAIMS_E_INTERRUPTED at SIGINT or SIGTERM (label_stop_signal); or an errcode_t
 * when a block could not be read. */
struct claims_result {
	char cross[256];
	char free[256];
	bool keep;                   /* in: keep every claim in claimed (freed by the caller) */
	const atomic_bool *cancel;   /* in: stops the scan (CLAIMS_E_INTERRUPTED) once set */
	ext2fs_block_bitmap claimed;
};
#define CLAIMS_E_INTERRUPTED ((errcode_t)-13) /* (not an errno value, nor libext2fs's) */
errcode_t claims_scan(ext2_filsys fs, const struct orphans *orphans, struct claims_result *res);
/* The same scan in parts (prescan.c: two threads share one out, each with a file system of its
 * own): a part's claims (the groups' own blocks first), into res; claims_run looks at the units
 * of the inode tables (itable_units) it takes from *next, in turn (at most `most`), reading
 * through io (or where map holds them): 0, or as claims_scan; claims_units says how many it
 * took (all of them, in order: it was the whole scan). A part is checked against itself only:
 * whether two overlap (a block claimed by both, other than the groups' own and an attribute
 * block both name) is claims_overlap's to say, and what one finds is not what the whole scan
 * would find first. Not with bigalloc (one inode's claims of a cluster in two parts) nor
 * shared_blocks. */
struct claims;
errcode_t claims_new(ext2_filsys fs, const struct orphans *orphans, struct claims_result *res,
		     struct claims **out);
errcode_t claims_run(struct claims *c, io_channel io, const char *map, uint64_t map_len,
		     atomic_size_t *next, size_t most);
size_t claims_units(const struct claims *c);
errcode_t claims_overlap(const struct claims *a, const struct claims *b, bool *overlap);
void claims_free(struct claims *c);

/* ---- prescan.c ---- */
/* Before the first write: the block claims of fs found by the scan img_prescan_start started,
 * into res (cross and free), taking a share of what is left of it (with fs's orphans, o) and
 * waiting for it to end: true; false when there is none, it failed, its parts found something
 * (their words are not the whole scan's), or fs is not the image it read, unchanged (then scan
 * fs). */
bool img_prescan_take(ext2_filsys fs, const struct orphans *o, struct claims_result *res);

/* ---- quota.c ---- */
struct quota;
/* The image's quota files (NULL when it has no quota feature, or out of memory). */
struct quota *quota_new(ext2_filsys fs);
void quota_free(struct quota *q);
/* bytes more (or less) space used by the inode's owner, group and project: added up, 0 or ENOMEM. */
int quota_charge(struct quota *q, const struct ext2_inode_large *inode, int64_t bytes);
/* Whether the quota files may be written, before the first write: each quota inode reserved or
 * in use, a regular file, a v2 quota file of its type whose tree is readable. 0, or an
 * errcode_t with why (naming the quota type and the inode). */
errcode_t quota_check(struct quota *q, char *why, size_t n);
/* The changes made in the quota files (existing entries only): all of them, only what was
 * charged, or only what was given back. 0, or an errcode_t with why. */
enum { QC_ALL, QC_UP, QC_DOWN };
errcode_t quota_commit(struct quota *q, int which, char *why, size_t n);
/* Repair: usage (a struct quota whose charges are what each owner's inodes use, added up with
 * quota_charge) made the usage of every entry of q's files; *fixed entries changed. 0, or an
 * errcode_t with why (an owner with no entry is one). */
errcode_t quota_repair(struct quota *q, struct quota *usage, unsigned long *fixed, char *why,
		       size_t n);

/* ---- walk.c ---- */
struct walk_entry {
	ext2_ino_t ino;
	ext2_ino_t parent;
	const char *path;          /* mount point prefixed, NUL-terminated */
	size_t pathlen;
	struct ext2_inode_large *inode;
};
/* Called for every entry, root first, depth first in directory order. Return 0 to go on, 1 to
 * skip a directory's subtree, -1 to stop. Every directory fn says to enter is left, with leave()
 * (path and inode number; inode NULL), once its entries are walked or could not be read. */
typedef int (*walk_fn)(const struct walk_entry *e, void *arg);
/* Returns 0, or an errcode_t when the walk could not go on; problems with single entries
 * (bad inode numbers, loops, unreadable directories) go to warn() and are counted. */
struct walk_stats {
	unsigned long warnings;
};
errcode_t walk_image(ext2_filsys fs, const char *mountpoint, walk_fn fn, walk_fn leave, void *arg,
		     struct walk_stats *st, void (*warn)(void *arg, const char *path, const char *msg));

/* ---- refs.c ---- */
struct suspect;
struct refs {
	int counted;             /* 0 not yet, 1 done, -1 could not be */
	struct suspect *suspect; /* sorted by block */
	size_t n;
};
/* Counts the users of every attribute block (inodes in use, orphans): once, before the first
 * write to an inode that has a block. */
void refs_count(struct refs *r, ext2_filsys fs, struct xattr_ctx *x);
/* Whether the count of ino's attribute block b is not its users (why: so, and left as it is). */
bool refs_suspect(const struct refs *r, ext2_ino_t ino, blk64_t b, char *why, size_t n);
void refs_free(struct refs *r);

/* ---- what xattr.c (the context, its refusals, reading, the blocks held in memory) and
 * xattr_write.c (writing, commits, reconcile) share ---- */
#define XATTR_SEC_INDEX 6 /* "security." */
#define XATTR_NAME "selinux"
#define XATTR_NAME_LEN 7
#define XATTR_DIGEST_NAME "security.sehash"
#define XATTR_DIGEST_MAX 64

struct xattr_shared {
	char *value; /* label with its NUL */
	size_t len;
	blk64_t blk;
	unsigned refs; /* its h_refcount when last seen */
	bool found;    /* on the image before this run: its count may be wrong (reconcile) */
};

struct xattr_ctx {
	ext2_filsys fs;
	struct ea_cache *cache; /* deferred writes; NULL: every write goes to the image at once */
	char *block;        /* last EA block read: own, or the one held in the cache */
	char *own;
	blk64_t block_nr;
	char *wbuf;
	char *value;        /* copy of the value returned by xattr_get_label */
	size_t value_cap;
	struct xattr_shared *sh; /* label -> a block holding only it */
	size_t nsh, capsh;
	blk64_t *recheck;   /* set (open addressing, 0 empty): label-only blocks of the image out
			     * of sh (full when found, or when they became full) whose counts
			     * reconcile makes right too */
	size_t nrecheck, maskrecheck;
	unsigned long allocated, shared_refs;
	size_t isize;
	char *ibuf;         /* an inode as on disk (isize bytes), for the library's writes */
	bool scanned;       /* the image's block claims were looked at (claims.c) */
	double claims_seconds; /* ... in this long */
	struct claims_result claims;
	struct orphans *orphans; /* read with the claims (xattr_orphans) */
	char why[512];      /* a refusal that is not the claims' (the quota files) */
	const char *refusal; /* why the image is refused (XATTR_E_CLAIMS) */
	bool no_alloc;      /* while set, no block may be taken (an inline-data symlink) */
	struct quota *quota; /* quota usage to keep right (NULL: no quota feature) */
	/* in place (the overlay holds the writes: imgfmt/overlay.c) */
	bool inplace;
	bool ordered;       /* no journal: what must come after the inodes waits (releases) */
	size_t commit_limit; /* blocks held before a commit is due */
	struct xattr_release *rel; /* ordered: references dropped and blocks freed, after the
				    * inodes */
	size_t nrel, caprel;
	bool applying;      /* the releases are being made: not held back again */
	void (*old_stats)(ext2_filsys, blk64_t, int);
	errcode_t quota_rc; /* the quota files could not be updated: why, once */
	errcode_t commit_failed; /* in place: a commit failed, none follows */
	bool inodes_on_disk; /* ordered: the last commit got as far as the inodes */
	char quota_why[512];
};
/* (xattr.c) Before the first write, the image's block claims looked at (claims.c) and the
 * quota files checked: 0, or XATTR_E_CLAIMS for the rest of the run. */
errcode_t xattr_may_write(struct xattr_ctx *x);
/* The same before a block is taken (an inline-data symlink is given none). */
errcode_t xattr_may_allocate(struct xattr_ctx *x);
/* security.selinux among the entries of an attribute area: 1 found, 0 absent, -1 corrupt. */
int xattr_find_label(const char *area, size_t size, const char *first, const char *vbase,
		     const char **val, size_t *len, unsigned *others, bool *inum);
/* The inode's EA block read into x->block (a block held in memory is used there). */
errcode_t xattr_read_block(struct xattr_ctx *x, ext2_ino_t ino, blk64_t blk);
/* An EA block written: to the image, or (deferred) to the block held in memory. */
errcode_t xattr_write_block(struct xattr_ctx *x, ext2_ino_t ino, blk64_t blk, char *buf);
/* The image is about to be read or changed at blk by the library, or blk is released: a newer
 * version held in memory is written first, and no longer held. */
errcode_t xattr_cache_release(struct xattr_ctx *x, blk64_t blk);
/* The label and the count of other attributes of an inode (*inum: a value in an EA inode). */
errcode_t xattr_inspect(struct xattr_ctx *x, ext2_ino_t ino, struct ext2_inode_large *inode,
			const char **val, size_t *len, unsigned *others, bool *inum);
/* The blocks labels share (sh): the one for a label, one forgotten, one remembered. */
struct xattr_shared *xattr_shared_find(struct xattr_ctx *x, const char *v, size_t len);
errcode_t xattr_shared_forget(struct xattr_ctx *x, blk64_t blk);
errcode_t xattr_shared_remember(struct xattr_ctx *x, const char *v, size_t len, blk64_t blk);

#endif
