/*
 * Compressed files (erofs_fs.h: COMPRESSED_FULL and COMPRESSED_COMPACT layouts), read whole,
 * front to back. After the inode and its xattrs, 8-aligned, comes struct z_erofs_map_header
 * (8 bytes: h_advise at 4, h_algorithmtype at 6 (bits 0-3 HEAD1's algorithm, 4-7 HEAD2's),
 * h_clusterbits at 7 (bits 0-3: logical cluster bits - block bits; bit 7: the whole file in
 * the packed inode)), then one index per logical cluster (lcluster) of the file. An lcluster's
 * type is PLAIN (0), HEAD1 (1), NONHEAD (2) or HEAD2 (3): a head begins an extent at
 * clusterofs inside its lcluster, stored at block pblk, raw (PLAIN) or compressed; the extent
 * runs to the next head, or the end of the file. Its pcluster is one block, or with big
 * pclusters (Z_EROFS_ADVISE_BIG_PCLUSTER_1 for HEAD1, _2 for PLAIN and HEAD2) as many as the
 * NONHEAD lcluster right after the head says: its delta[0] with Z_EROFS_LI_D0_CBLKCNT (0x800)
 * set holds the count.
 *
 * Indexes, COMPRESSED_FULL: 8 bytes each (struct z_erofs_lcluster_index: di_advise 0, whose
 * low 2 bits are the type, di_clusterofs 2, di_u.blkaddr 4), from 8 bytes after the map
 * header; a NONHEAD's di_u begins with delta[0]. COMPRESSED_COMPACT: packs of 2 entries in 8
 * bytes (compact 4B) or 16 in 32 bytes (compact 2B): entry i is encodebits wide at bit
 * encodebits * i (lobits of value, then 2 of type); the pack's last 4 bytes are a block
 * address: a head's pblk is that address plus the blocks of the pclusters before it in the
 * pack (one each, and one more; with big pclusters, the counts the CBLKCNT entries give, the
 * other NONHEADs skipped back over by their delta). The first packs are 4B up to a 32-byte
 * boundary, then
 * (with Z_EROFS_ADVISE_COMPACTED_2B) 2B packs for a multiple of 16 lclusters, then 4B again.
 *
 * The last extent (the one holding the file's last byte) may lie elsewhere: inline
 * (Z_EROFS_ADVISE_INLINE_PCLUSTER, ztailpacking): h_idata_size (16 bits at 2) bytes right after
 * the index pack that holds the last lcluster, not crossing a block; or in the packed inode
 * (Z_EROFS_ADVISE_FRAGMENT_PCLUSTER, fragments), at h_fragmentoff (32 bits at 0; with full
 * indexes the tail head's blkaddr gives the high 32 bits). With h_clusterbits bit 7 the whole
 * file is in the packed inode, at the 63 bits of the header below it, and there are no
 * indexes. A PLAIN pcluster is the extent's bytes as they are, or with
 * Z_EROFS_ADVISE_INTERLACED_PCLUSTER rotated within its block: the extent's first byte at the
 * offset its start has in a block. Algorithms: zalg.c.
 *
 * The packed inode (superblock packed_nid) is itself a file, compressed or not; its data is read
 * whole once and kept while the image is open (erofs_packed_read).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

enum { LC_PLAIN, LC_HEAD1, LC_NONHEAD, LC_HEAD2 };
#define ADV_COMPACTED_2B 0x0001
#define ADV_BIG_PCLUSTER_1 0x0002
#define ADV_BIG_PCLUSTER_2 0x0004
#define ADV_INLINE_PCLUSTER 0x0008
#define ADV_INTERLACED_PCLUSTER 0x0010
#define ADV_FRAGMENT_PCLUSTER 0x0020
#define ADV_EXTENTS 0x0001 /* (full indexes: the 48-bit layout's extents) */
#define D0_CBLKCNT 0x0800
/* a pcluster's size at most (Z_EROFS_PCLUSTER_MAX_SIZE) */
#define PCLUSTER_MAX (1u << 20)

struct zmap {
	const struct erofs_img *img;
	const struct erofs_inode *ino;
	uint64_t hdr;           /* the map header's offset */
	unsigned advise, algs;
	uint64_t totalidx;      /* lclusters (of a block each) */
	unsigned idata;         /* ztailpacking: the inline pcluster's size */
	uint64_t tailoff;       /* ... where it lies; fragments: where the tail lies in the packed
				 * inode */
	bool whole;             /* the whole file is in the packed inode */
};

/* An lcluster's index: its type; a head's clusterofs and block; a NONHEAD's delta[0] */
struct lcl {
	unsigned type, ofs, d0;
	uint32_t pblk;
};

/* One lcluster's index: *type, and for a head *clusterofs and *pblk. 0, or -1 with why. */
static int full_index(const struct zmap *z, uint64_t lcn, struct lcl *l, char *why, size_t n)
{
	uint64_t at = z->hdr + 16 + lcn * 8;
	if (!erofs_in(z->img, at, 8)) {
		snprintf(why, n, "its index of lcluster %llu lies past the end of the image",
			 (unsigned long long)lcn);
		return -1;
	}
	const unsigned char *d = z->img->base + at;
	l->type = erofs_le16(d) & 3;
	l->ofs = erofs_le16(d + 2);
	l->pblk = erofs_le32(d + 4);
	l->d0 = erofs_le16(d + 4);
	return 0;
}

static unsigned field(const unsigned char *in, unsigned pos, unsigned lobits, unsigned *type)
{
	uint32_t v = erofs_le32(in + pos / 8) >> (pos & 7);
	*type = (v >> lobits) & 3;
	return v & ((1u << lobits) - 1);
}

/* The blocks of the pclusters before entry i of a compact pack (see above). */
static int pack_blocks(const struct zmap *z, const unsigned char *in, int i, unsigned encodebits,
		       unsigned lobits, unsigned *nblk)
{
	bool big = z->advise & ADV_BIG_PCLUSTER_1;
	*nblk = big ? 0 : 1;
	while (i > 0) {
		unsigned t, lo = field(in, encodebits * (unsigned)--i, lobits, &t);
		if (t != LC_NONHEAD) {
			++*nblk;
		} else if (!big) {
			if ((i -= (int)lo) >= 0)
				++*nblk;
		} else if (lo & D0_CBLKCNT) {
			--i;
			*nblk += lo & ~D0_CBLKCNT;
		} else if (lo <= 1) {
			return -1; /* (a big pcluster's NONHEAD says CBLKCNT or a delta of 2 up) */
		} else {
			i -= (int)lo - 2;
		}
	}
	return 0;
}

/* Where lcluster lcn's compact entry is (*pos), and its width (1 << *shift bytes, averaged). */
static void compact_pos(const struct zmap *z, uint64_t lcn, uint64_t *at, unsigned *shiftp)
{
	const uint64_t ebase = z->hdr + 8;
	unsigned initial = (unsigned)(((32 - ebase % 32) / 4) & 7), shift = 2;
	uint64_t twob = 0, pos = ebase;
	if ((z->advise & ADV_COMPACTED_2B) && initial < z->totalidx)
		twob = (z->totalidx - initial) / 16 * 16;
	if (lcn >= initial) {
		pos += initial * 4;
		lcn -= initial;
		if (lcn < twob) {
			shift = 1;
		} else {
			pos += twob * 2;
			lcn -= twob;
		}
	}
	*at = pos + (lcn << shift);
	*shiftp = shift;
}

static int compact_index(const struct zmap *z, uint64_t lcn, struct lcl *l, char *why, size_t n)
{
	uint64_t pos;
	unsigned shift;
	compact_pos(z, lcn, &pos, &shift);
	unsigned vcnt = shift == 2 ? 2 : 16, packsz = vcnt << shift;
	unsigned lobits = z->img->blkbits > 12 ? z->img->blkbits : 12;
	unsigned encodebits = (packsz - 4) * 8 / vcnt;
	uint64_t pack = pos & ~(uint64_t)(packsz - 1);
	/* (+ 4: a field is read as 32 bits) */
	if (!erofs_in(z->img, pack, packsz + 4)) {
		snprintf(why, n, "its compact index lies past the end of the image");
		return -1;
	}
	const unsigned char *in = z->img->base + pack;
	int i = (int)((pos - pack) >> shift);
	unsigned lo = field(in, encodebits * (unsigned)i, lobits, &l->type), nblk;
	l->d0 = lo;
	if (l->type == LC_NONHEAD)
		return 0;
	l->ofs = lo;
	if (pack_blocks(z, in, i, encodebits, lobits, &nblk)) {
		snprintf(why, n, "corrupt compact index before lcluster %llu",
			 (unsigned long long)lcn);
		return -1;
	}
	l->pblk = erofs_le32(in + packsz - 4) + nblk;
	return 0;
}

/* An extent: its head's lcluster, type, start, block and blocks */
struct head {
	unsigned type;
	uint64_t lcn, la;
	uint32_t pblk, nblks;
};

/* A PLAIN pcluster's bytes (src, slen of them) as the extent's len bytes at la. */
static int plain(const struct zmap *z, uint64_t la, const unsigned char *src, size_t slen,
		 unsigned char *out, size_t len, char *why, size_t n)
{
	size_t bs = (size_t)1 << z->img->blkbits;
	if (len > slen) {
		snprintf(why, n, "an uncompressed extent of %zu bytes in a pcluster of %zu", len,
			 slen);
		return -1;
	}
	if (!(z->advise & ADV_INTERLACED_PCLUSTER)) {
		memcpy(out, src, len);
		return 0;
	}
	/* interlaced: the extent begins where la lies in a block, and wraps around to the
	 * pcluster's start */
	size_t skip = (size_t)(la & (bs - 1)), right = len < bs - skip ? len : bs - skip;
	if (slen > bs || skip + right > slen) {
		snprintf(why, n, "an interlaced pcluster of %zu bytes for an extent at %llu", slen,
			 (unsigned long long)la);
		return -1;
	}
	memcpy(out, src + skip, right);
	memcpy(out + right, src, len - right);
	return 0;
}

/* The extent [h->la, end): into out + la. tail: it is the file's last, which may be inline or a
 * fragment. */
static int extent(const struct zmap *z, const struct head *h, uint64_t end, bool tail,
		  unsigned char *out, char *why, size_t n)
{
	const struct erofs_img *img = z->img;
	uint64_t la = h->la;
	size_t len = (size_t)(end - la), bs = (size_t)1 << img->blkbits, slen;
	uint64_t at;
	if (len > (size_t)Z_EROFS_MAX_EXTENT) {
		snprintf(why, n, "an extent of %zu bytes at %llu", len, (unsigned long long)la);
		return -1;
	}
	if (tail && (z->advise & ADV_FRAGMENT_PCLUSTER))
		return erofs_packed_read(img, z->ino, z->tailoff, out + la, len, why, n);
	if (tail && z->idata) {
		at = z->tailoff;
		slen = z->idata;
		if ((at & (bs - 1)) + slen > bs) {
			snprintf(why, n, "its inline pcluster (%zu bytes) crosses a block", slen);
			return -1;
		}
	} else if (h->nblks) {
		at = (uint64_t)h->pblk << img->blkbits;
		slen = bs * h->nblks;
	} else {
		snprintf(why, n, "a pcluster of 0 blocks at lcluster %llu", (unsigned long long)h->lcn);
		return -1;
	}
	if (!erofs_in(img, at, slen)) {
		snprintf(why, n, "its pcluster at byte %llu lies past the end of the image",
			 (unsigned long long)at);
		return -1;
	}
	const unsigned char *src = img->base + at;
	if (h->type == LC_PLAIN)
		return plain(z, la, src, slen, out + la, len, why, n);
	char w[200];
	if (erofs_decode(img, h->type == LC_HEAD1 ? z->algs & 15 : z->algs >> 4, src, slen,
			 out + la, len, w, sizeof(w))) {
		snprintf(why, n, "%s at byte %llu (extent at %llu)", w, (unsigned long long)at,
			 (unsigned long long)la);
		return -1;
	}
	return 0;
}

/* Where the bytes after the index of the last lcluster begin: the inline pcluster's place. */
static uint64_t index_end(const struct zmap *z)
{
	if (z->ino->layout == EROFS_COMPRESSED_FULL)
		return z->hdr + 16 + z->totalidx * 8;
	uint64_t pos;
	unsigned shift;
	compact_pos(z, z->totalidx - 1, &pos, &shift);
	unsigned packsz = (shift == 2 ? 2u : 16u) << shift;
	return (pos & ~(uint64_t)(packsz - 1)) + packsz;
}

static int map_header(struct zmap *z, char *why, size_t n)
{
	const struct erofs_inode *ino = z->ino;
	z->hdr = (ino->off + ino->isize + ino->xsize + 7) & ~(uint64_t)7;
	if (!erofs_in(z->img, z->hdr, 8)) {
		snprintf(why, n, "its compression header lies past the end of the image");
		return -1;
	}
	const unsigned char *h = z->img->base + z->hdr;
	z->totalidx = (ino->size + ((uint64_t)1 << z->img->blkbits) - 1) >> z->img->blkbits;
	if (h[7] & 0x80) { /* the whole file in the packed inode */
		z->whole = true;
		z->tailoff = erofs_le64(h) & ~(1ull << 63);
		return 0;
	}
	z->advise = erofs_le16(h + 4);
	z->algs = h[6];
	if ((h[7] & 0x7f) || (ino->layout == EROFS_COMPRESSED_FULL && (z->advise & ADV_EXTENTS)) ||
	    (ino->layout == EROFS_COMPRESSED_COMPACT && z->img->blkbits > 14)) {
		snprintf(why, n, "compressed in a way not read yet (advise 0x%x, cluster bits 0x%x, "
			 "blocks of 2^%u)", z->advise, h[7], z->img->blkbits);
		return -1;
	}
	if (z->advise & ADV_FRAGMENT_PCLUSTER) {
		z->tailoff = erofs_le32(h);
	} else if (z->advise & ADV_INLINE_PCLUSTER) {
		z->idata = erofs_le16(h + 2);
		z->tailoff = index_end(z);
	}
	return 0;
}

/* Whether a head of this type may have a big pcluster. */
static bool big_for(const struct zmap *z, unsigned type)
{
	return z->advise & (type == LC_HEAD1 ? ADV_BIG_PCLUSTER_1 : ADV_BIG_PCLUSTER_2);
}

/* The last extent, from h to the end of the file. */
static int last_extent(struct zmap *z, const struct head *h, unsigned char *out, char *why,
		       size_t n)
{
	/* full indexes: a fragment's offset has 64 bits, the tail head's blkaddr the high 32 */
	if ((z->advise & ADV_FRAGMENT_PCLUSTER) && z->ino->layout == EROFS_COMPRESSED_FULL)
		z->tailoff |= (uint64_t)h->pblk << 32;
	return h->la < z->ino->size ? extent(z, h, z->ino->size, true, out, why, n) : 0;
}

int erofs_zread(const struct erofs_img *img, const struct erofs_inode *ino, unsigned char *out,
		char *why, size_t n)
{
	struct zmap z = { .img = img, .ino = ino };
	struct head h = { 0 };
	bool have = false;

	if (!ino->size)
		return 0;
	if (map_header(&z, why, n))
		return -1;
	if (z.whole)
		return erofs_packed_read(img, ino, z.tailoff, out, (size_t)ino->size, why, n);
	for (uint64_t lcn = 0; lcn < z.totalidx; lcn++) {
		struct lcl l = { 0 };
		if (ino->layout == EROFS_COMPRESSED_FULL ? full_index(&z, lcn, &l, why, n)
							 : compact_index(&z, lcn, &l, why, n))
			return -1;
		if (l.type == LC_NONHEAD) {
			/* the first NONHEAD after a head: its pcluster's block count */
			if (have && lcn == h.lcn + 1 && (l.d0 & D0_CBLKCNT) && big_for(&z, h.type))
				h.nblks = l.d0 & ~D0_CBLKCNT;
			/* (0 blocks: the tail, in the packed inode; extent() tells) */
			if (h.nblks > PCLUSTER_MAX >> img->blkbits) {
				snprintf(why, n, "a pcluster of %u blocks at lcluster %llu", h.nblks,
					 (unsigned long long)lcn);
				return -1;
			}
			continue;
		}
		uint64_t at = (lcn << img->blkbits) + l.ofs;
		if (at == ino->size && have)
			break; /* (an empty extent at the end: the one before is the last) */
		if (l.ofs >> img->blkbits || (!have && at) || (have && at <= h.la) ||
		    at > ino->size) {
			snprintf(why, n, "corrupt compression index at lcluster %llu",
				 (unsigned long long)lcn);
			return -1;
		}
		if (have && extent(&z, &h, at, false, out, why, n))
			return -1;
		h = (struct head){ l.type, lcn, at, l.pblk, 1 };
		have = true;
	}
	if (!have) {
		snprintf(why, n, "a compressed file with no head lcluster");
		return -1;
	}
	return last_extent(&z, &h, out, why, n);
}

/* The packed inode's data is read whole, at most this much */
#define PACKED_MAX ((uint64_t)1 << 30)

/* Reads the packed inode whole into img->packed (once; a failure is kept). */
static void packed_load(const struct erofs_img *img)
{
	struct erofs_packed *p = img->packed;
	struct erofs_inode ino;
	char w[200];
	p->state = -1;
	if (!img->packed_nid || erofs_inode_read(img, img->packed_nid, &ino, w, sizeof(w))) {
		snprintf(p->err, sizeof(p->err), "its packed inode (nid %llu): %s",
			 (unsigned long long)img->packed_nid, img->packed_nid ? w : "none");
		return;
	}
	if (!S_ISREG(ino.mode) || ino.size > PACKED_MAX) {
		snprintf(p->err, sizeof(p->err), "its packed inode (nid %llu) is not a file of at "
			 "most 1 GiB (mode 0%o, %llu bytes)", (unsigned long long)img->packed_nid,
			 ino.mode, (unsigned long long)ino.size);
		return;
	}
	bool z = ino.layout == EROFS_COMPRESSED_FULL || ino.layout == EROFS_COMPRESSED_COMPACT;
	if (!(p->data = malloc((size_t)ino.size + 1))) {
		snprintf(p->err, sizeof(p->err), "its packed inode: out of memory");
		return;
	}
	if (z ? erofs_zread(img, &ino, p->data, w, sizeof(w))
	      : erofs_pread(img, &ino, 0, p->data, (size_t)ino.size, w, sizeof(w))) {
		snprintf(p->err, sizeof(p->err), "its packed inode (nid %llu): %s",
			 (unsigned long long)img->packed_nid, w);
		free(p->data);
		p->data = NULL;
		return;
	}
	p->size = ino.size;
	p->state = 1;
}

int erofs_packed_read(const struct erofs_img *img, const struct erofs_inode *reader, uint64_t off,
		      unsigned char *out, size_t len, char *why, size_t n)
{
	struct erofs_packed *p = img->packed;
	/* the packed inode's own data in the packed inode: a loop */
	if (reader && reader->nid == img->packed_nid) {
		snprintf(why, n, "the packed inode refers to itself");
		return -1;
	}
	if (!p->state)
		packed_load(img);
	if (p->state < 0) {
		snprintf(why, n, "%s", p->err);
		return -1;
	}
	if (off > p->size || len > p->size - off) {
		snprintf(why, n, "a fragment of %zu bytes at %llu, past the end of the packed inode "
			 "(%llu bytes)", len, (unsigned long long)off, (unsigned long long)p->size);
		return -1;
	}
	memcpy(out, p->data + off, len);
	return 0;
}
