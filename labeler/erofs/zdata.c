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
 * LZ4 (algorithm 0; LZ4HC writes the same format) is decoded by liblz4; with
 * INCOMPAT_LZ4_0PADDING the compressed bytes end at the end of their block, the zeros before
 * them are padding. Not read yet: inline (ztailpacking) and fragment
 * pclusters, interlaced plain pclusters, LZMA, DEFLATE and Zstandard.
 */
#include <lz4.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

enum { LC_PLAIN, LC_HEAD1, LC_NONHEAD, LC_HEAD2 };
#define ADV_COMPACTED_2B 0x0001
#define ADV_BIG_PCLUSTER_1 0x0002
#define ADV_BIG_PCLUSTER_2 0x0004
#define ADV_INLINE_PCLUSTER 0x0008
#define ADV_INTERLACED_PCLUSTER 0x0010
#define ADV_FRAGMENT_PCLUSTER 0x0020
#define D0_CBLKCNT 0x0800
/* a pcluster's size at most (Z_EROFS_PCLUSTER_MAX_SIZE) */
#define PCLUSTER_MAX (1u << 20)

struct zmap {
	const struct erofs_img *img;
	const struct erofs_inode *ino;
	uint64_t hdr;           /* the map header's offset */
	unsigned advise, algs;
	uint64_t totalidx;      /* lclusters (of a block each) */
};

/* One lcluster's index: *type, and for a head *clusterofs and *pblk. 0, or -1 with why. */
static int full_index(const struct zmap *z, uint64_t lcn, unsigned *type, unsigned *ofs,
		      uint32_t *pblk, unsigned *d0, char *why, size_t n)
{
	uint64_t at = z->hdr + 16 + lcn * 8;
	if (!erofs_in(z->img, at, 8)) {
		snprintf(why, n, "its index of lcluster %llu lies past the end of the image",
			 (unsigned long long)lcn);
		return -1;
	}
	const unsigned char *d = z->img->base + at;
	*type = erofs_le16(d) & 3;
	*ofs = erofs_le16(d + 2);
	*pblk = erofs_le32(d + 4);
	*d0 = erofs_le16(d + 4);
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

static int compact_index(const struct zmap *z, uint64_t lcn, unsigned *type, unsigned *ofs,
			 uint32_t *pblk, unsigned *d0, char *why, size_t n)
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
	pos += lcn << shift;
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
	unsigned lo = field(in, encodebits * (unsigned)i, lobits, type), nblk;
	*d0 = lo;
	if (*type == LC_NONHEAD)
		return 0;
	*ofs = lo;
	if (pack_blocks(z, in, i, encodebits, lobits, &nblk)) {
		snprintf(why, n, "corrupt compact index before lcluster %llu",
			 (unsigned long long)lcn);
		return -1;
	}
	*pblk = erofs_le32(in + packsz - 4) + nblk;
	return 0;
}

/* The extent [la, end) whose head is at lcn, stored at block pblk: into out + la. */
struct head {
	unsigned type;
	uint64_t lcn, la;
	uint32_t pblk, nblks;
};

/* The extent [h->la, end): into out + la. */
static int extent(const struct zmap *z, const struct head *h, uint64_t end, unsigned char *out,
		  char *why, size_t n)
{
	const struct erofs_img *img = z->img;
	unsigned type = h->type;
	uint32_t pblk = h->pblk;
	uint64_t la = h->la;
	size_t bs = ((size_t)1 << img->blkbits) * h->nblks, len = (size_t)(end - la);
	uint64_t at = (uint64_t)pblk << img->blkbits;
	if (!erofs_in(img, at, bs)) {
		snprintf(why, n, "its pcluster at block %u lies past the end of the image", pblk);
		return -1;
	}
	const unsigned char *src = img->base + at;
	if (len > (type == LC_PLAIN ? bs : (size_t)Z_EROFS_MAX_EXTENT)) {
		snprintf(why, n, "an extent of %zu bytes at %llu", len, (unsigned long long)la);
		return -1;
	}
	if (type == LC_PLAIN) {
		memcpy(out + la, src, len);
		return 0;
	}
	unsigned alg = type == LC_HEAD1 ? z->algs & 15 : z->algs >> 4;
	if (alg != 0) {
		snprintf(why, n, "compression algorithm %u (not LZ4) is not read yet", alg);
		return -1;
	}
	size_t margin = 0;
	if (img->incompat & EROFS_IN_ZERO_PADDING)
		while (margin < bs && !src[margin])
			margin++;
	int r = LZ4_decompress_safe_partial((const char *)src + margin, (char *)out + la,
					    (int)(bs - margin), (int)len, (int)len);
	if (r != (int)len) {
		snprintf(why, n, "corrupt LZ4 data at block %u (extent at byte %llu)", pblk,
			 (unsigned long long)la);
		return -1;
	}
	return 0;
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
	z->advise = erofs_le16(h + 4);
	z->algs = h[6];
	if ((h[7] & 0x0f) || (h[7] & 0x80) ||
	    (z->advise & (ADV_INLINE_PCLUSTER | ADV_INTERLACED_PCLUSTER | ADV_FRAGMENT_PCLUSTER))) {
		snprintf(why, n, "compressed with features not read yet (advise 0x%x, cluster "
			 "bits 0x%x)", z->advise, h[7]);
		return -1;
	}
	z->totalidx = (ino->size + ((uint64_t)1 << z->img->blkbits) - 1) >> z->img->blkbits;
	return 0;
}

/* Whether a head of this type may have a big pcluster. */
static bool big_for(const struct zmap *z, unsigned type)
{
	return z->advise & (type == LC_HEAD1 ? ADV_BIG_PCLUSTER_1 : ADV_BIG_PCLUSTER_2);
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
	for (uint64_t lcn = 0; lcn < z.totalidx; lcn++) {
		unsigned type, ofs = 0, d0 = 0;
		uint32_t pblk = 0;
		int r = ino->layout == EROFS_COMPRESSED_FULL
				? full_index(&z, lcn, &type, &ofs, &pblk, &d0, why, n)
				: compact_index(&z, lcn, &type, &ofs, &pblk, &d0, why, n);
		if (r)
			return -1;
		if (type == LC_NONHEAD) {
			/* the first NONHEAD after a head: its pcluster's block count */
			if (have && lcn == h.lcn + 1 && (d0 & D0_CBLKCNT) && big_for(&z, h.type))
				h.nblks = d0 & ~D0_CBLKCNT;
			if (!h.nblks || h.nblks > PCLUSTER_MAX >> img->blkbits) {
				snprintf(why, n, "a pcluster of %u blocks at lcluster %llu", h.nblks,
					 (unsigned long long)lcn);
				return -1;
			}
			continue;
		}
		uint64_t at = (lcn << img->blkbits) + ofs;
		if (ofs >> img->blkbits || (!have && at) || (have && at <= h.la) ||
		    at > ino->size) {
			snprintf(why, n, "corrupt compression index at lcluster %llu",
				 (unsigned long long)lcn);
			return -1;
		}
		if (have && extent(&z, &h, at, out, why, n))
			return -1;
		h = (struct head){ type, lcn, at, pblk, 1 };
		have = true;
	}
	if (!have) {
		snprintf(why, n, "a compressed file with no head lcluster");
		return -1;
	}
	return h.la < ino->size ? extent(&z, &h, ino->size, out, why, n) : 0;
}
