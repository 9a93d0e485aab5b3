/*
 * The EROFS reader's own declarations. Every fact of the format cited here is from the
 * kernel's fs/erofs/erofs_fs.h (the published on-disk format, mirrored in erofs-utils'
 * include/erofs_fs.h); the code is ours. All fields are little-endian.
 *
 * The image is mapped read-only whole: metadata is addressed by byte (an inode is
 * meta_blkaddr * block size + nid * 32), and every read below is bounds-checked against the
 * image's size before it is made, so a truncated or hostile image gives an error, never a read
 * past its end.
 */
#ifndef LABELER_EROFS_INTERNAL_H
#define LABELER_EROFS_INTERNAL_H

#include <stdint.h>

#include "erofs.h"

#define EROFS_MAGIC 0xE0F5E1E2u
#define EROFS_SB_OFFSET 1024
/* erofs_fs.h: feature_incompat bits this reader knows; one it does not is refused, as the
 * kernel refuses it (EROFS_ALL_FEATURE_INCOMPAT) */
#define EROFS_IN_ZERO_PADDING 0x01
#define EROFS_IN_COMPR_CFGS 0x02 /* also BIG_PCLUSTER */
#define EROFS_IN_CHUNKED_FILE 0x04
#define EROFS_IN_DEVICE_TABLE 0x08 /* also COMPR_HEAD2 */
#define EROFS_IN_ZTAILPACKING 0x10
#define EROFS_IN_FRAGMENTS 0x20 /* also DEDUPE */
#define EROFS_IN_XATTR_PREFIXES 0x40
#define EROFS_IN_48BIT 0x80
#define EROFS_IN_METABOX 0x100
#define EROFS_IN_KNOWN 0x7f /* 48BIT and METABOX: not read yet */
/* feature_compat: the superblock's crc32c; long prefixes kept in the meta area even with a
 * packed inode */
#define EROFS_CO_SB_CHKSUM 0x01
#define EROFS_CO_PLAIN_XATTR_PFX 0x10

/* i_format: bit 0 the inode's version (0: 32-byte compact, 1: 64-byte extended), bits 1-3
 * its data layout */
enum { EROFS_FLAT_PLAIN, EROFS_COMPRESSED_FULL, EROFS_FLAT_INLINE, EROFS_COMPRESSED_COMPACT,
       EROFS_CHUNK_BASED };
#define EROFS_NULL_ADDR 0xffffffffu
#define EROFS_CHUNK_BLKBITS_MASK 0x1f
#define EROFS_CHUNK_INDEXES 0x20

struct erofs_prefix {
	unsigned char base;     /* the short prefix it extends (EROFS_XATTR_INDEX_*) */
	unsigned char infix[255];
	size_t len;
};

/* The packed inode's data (fragments, long prefixes), read whole when first wanted. */
struct erofs_packed {
	int state;              /* 0 not read yet, 1 read, -1 it cannot be (err) */
	unsigned char *data;
	uint64_t size;
	char err[240];
};

struct erofs_img {
	char *name;
	int fd;
	const unsigned char *base; /* the image, mapped (or read) whole */
	size_t size;
	void *map;                 /* the mapping (NULL: base was read into memory) */
	size_t map_len;
	unsigned blkbits;
	uint64_t meta_off, xattr_off; /* byte offsets of the meta and shared xattr areas */
	uint64_t root_nid, inos, packed_nid;
	struct erofs_packed *packed; /* (filled in while the image is read, through a const img) */
	uint32_t compat, incompat;
	struct erofs_prefix *prefixes;
	unsigned nprefixes;
};

struct erofs_inode {
	uint64_t nid;
	uint64_t off;           /* where the on-disk inode starts in the image */
	unsigned isize;         /* 32 or 64 */
	unsigned xsize;         /* the inline xattr area after it */
	unsigned layout;
	unsigned mode;
	uint32_t uid, gid, nlink;
	uint64_t size;
	uint32_t startblk;      /* i_u: the first block (flat), or the chunk format (chunked) */
};

/* ---- super.c ---- */
/* Whether [off, off + len) lies inside the image. */
static inline bool erofs_in(const struct erofs_img *img, uint64_t off, uint64_t len)
{
	return off <= img->size && len <= img->size - off;
}
/* Little-endian fields (inline: every file reads them, and none owns them) */
static inline uint16_t erofs_le16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t erofs_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t erofs_le64(const unsigned char *p)
{
	return erofs_le32(p) | (uint64_t)erofs_le32(p + 4) << 32;
}

/* ---- inode.c ---- */
/* Reads inode nid: 0, or -1 with why. */
int erofs_inode_read(const struct erofs_img *img, uint64_t nid, struct erofs_inode *ino,
		     char *why, size_t n);
/* The bytes of ino's data at off, up to the end of their block (or of the file): *p and *len,
 * *p NULL for a hole (zeros). 0, or -1 with why (compressed data is not read yet). */
int erofs_data_at(const struct erofs_img *img, const struct erofs_inode *ino, uint64_t off,
		  const unsigned char **p, size_t *len, char *why, size_t n);
/* Reads len bytes of ino's data at off into buf: 0, or -1 with why. */
int erofs_pread(const struct erofs_img *img, const struct erofs_inode *ino, uint64_t off,
		void *buf, size_t len, char *why, size_t n);

/* ---- zdata.c ---- */
/* An extent decompresses to at most this (Z_EROFS_PCLUSTER_MAX_DSIZE, erofs_fs.h) */
#define Z_EROFS_MAX_EXTENT (12u << 20)
/* A compressed file's data, whole (ino->size bytes into out): 0, or -1 with why. */
int erofs_zread(const struct erofs_img *img, const struct erofs_inode *ino, unsigned char *out,
		char *why, size_t n);
/* The packed inode's bytes [off, off + len) into out, for file reader (which may not be the
 * packed inode itself; NULL: no file): 0, or -1 with why. */
int erofs_packed_read(const struct erofs_img *img, const struct erofs_inode *reader, uint64_t off,
		      unsigned char *out, size_t len, char *why, size_t n);

/* ---- zalg.c ---- */
/* Decodes the pcluster src (slen bytes, zero padding first) compressed with algorithm alg
 * (Z_EROFS_COMPRESSION_*) into the len bytes at out: 0, or -1 with why. */
int erofs_decode(const struct erofs_img *img, unsigned alg, const unsigned char *src,
		 size_t slen, unsigned char *out, size_t len, char *why, size_t n);

/* ---- xattr.c ---- */
/* The long name prefixes (XATTR_PREFIXES): 0, or -1 with why. */
int erofs_prefixes_load(struct erofs_img *img, char *why, size_t n);
/* The value of attribute name of ino: *val points into the image (NULL when absent). 0, or
 * -1 with why (the attribute area is damaged). */
int erofs_xattr_get(const struct erofs_img *img, const struct erofs_inode *ino, const char *name,
		    const unsigned char **val, size_t *len, char *why, size_t n);

/* ---- dir.c ---- */
struct erofs_dir {
	struct erofs_inode dir;
	uint64_t boff;            /* the directory block being read */
	const unsigned char *blk; /* ... its bytes, and how many */
	size_t blen;
	unsigned idx, count;      /* the next entry in it, and how many it holds */
	unsigned char *zbuf;      /* a compressed directory's bytes, decompressed */
};
void erofs_dir_open(struct erofs_dir *d, const struct erofs_inode *dir);
/* Frees what reading d took (a compressed directory's copy). */
void erofs_dir_close(struct erofs_dir *d);
/* The next entry: 1 (*nid, *name of *nl bytes, valid until d is closed), 0 at the end, -1
 * when the directory is damaged (why). */
int erofs_dir_next(const struct erofs_img *img, struct erofs_dir *d, uint64_t *nid,
		   const char **name, size_t *nl, char *why, size_t n);
/* The inode at path (from the root; symlinks are not followed): 0, or -1 with why. */
int erofs_lookup(const struct erofs_img *img, const char *path, struct erofs_inode *ino,
		 char *why, size_t n);

/* ---- walk.c ---- */
struct erofs_entry {
	const char *path;
	size_t pathlen;
	const struct erofs_inode *ino; /* NULL for a directory being left */
	uint64_t nid;
};
typedef int (*erofs_walk_fn)(const struct erofs_entry *e, void *arg);
/* Every file from the root (its path: mountpoint, or "/"), depth first; fn returns 0 to enter
 * a directory, 1 to skip it, -1 to stop; leave is called once a directory is done. Damaged
 * entries are given to warn and left out. 0, or an errno. */
int erofs_walk(const struct erofs_img *img, const char *mountpoint, erofs_walk_fn fn,
	       erofs_walk_fn leave, void *arg,
	       void (*warn)(void *arg, const char *path, const char *msg));

#endif
