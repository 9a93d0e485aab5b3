/*
 * Inodes and their uncompressed data (erofs_fs.h: struct erofs_inode_compact, 32 bytes, and
 * struct erofs_inode_extended, 64 bytes; the data layouts FLAT_PLAIN, FLAT_INLINE and
 * CHUNK_BASED). Compressed data (COMPRESSED_FULL, COMPRESSED_COMPACT) is zdata.c's, read whole.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

#define I_NLINK_1 (1u << 4) /* i_format, non-directory compact inodes: nlink is 1 */
#define I_ALL 0x1fu

static bool valid_type(unsigned mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: case S_IFDIR: case S_IFLNK: case S_IFCHR: case S_IFBLK: case S_IFIFO:
	case S_IFSOCK:
		return true;
	}
	return false;
}

/*
 * The fields' offsets. Compact: i_format 0, i_xattr_icount 2, i_mode 4, i_nb (nlink) 6,
 * i_size 8 (32 bits), i_mtime 12, i_u 16, i_ino 20, i_uid 24 and i_gid 26 (16 bits each).
 * Extended: the same up to i_mode, i_size 8 (64 bits), i_u 16, i_ino 20, i_uid 24, i_gid 28,
 * i_mtime 32, i_mtime_nsec 40, i_nlink 44. The inline xattr area follows the inode:
 * 0 bytes when i_xattr_icount is 0, else a 12-byte header and (icount - 1) * 4 bytes.
 */
int erofs_inode_read(const struct erofs_img *img, uint64_t nid, struct erofs_inode *ino,
		     char *why, size_t n)
{
	memset(ino, 0, sizeof(*ino));
	ino->nid = nid;
	if (nid > (UINT64_MAX - img->meta_off) / 32 ||
	    !erofs_in(img, ino->off = img->meta_off + nid * 32, 32)) {
		snprintf(why, n, "inode (nid %llu) lies past the end of the image",
			 (unsigned long long)nid);
		return -1;
	}
	const unsigned char *d = img->base + ino->off;
	unsigned fmt = erofs_le16(d), icount = erofs_le16(d + 2);
	ino->layout = (fmt >> 1) & 7;
	ino->isize = fmt & 1 ? 64 : 32;
	ino->xsize = icount ? 12 + 4 * (icount - 1) : 0;
	ino->mode = erofs_le16(d + 4);
	if ((fmt & ~I_ALL) || ino->layout > EROFS_CHUNK_BASED) {
		snprintf(why, n, "inode (nid %llu) of an unknown format (0x%x)",
			 (unsigned long long)nid, fmt);
		return -1;
	}
	if (!erofs_in(img, ino->off, (uint64_t)ino->isize + ino->xsize)) {
		snprintf(why, n, "inode (nid %llu) or its attributes lie past the end of the "
			 "image", (unsigned long long)nid);
		return -1;
	}
	if (fmt & 1) {
		ino->size = erofs_le64(d + 8);
		ino->uid = erofs_le32(d + 24);
		ino->gid = erofs_le32(d + 28);
		ino->nlink = erofs_le32(d + 44);
	} else {
		ino->size = erofs_le32(d + 8);
		ino->uid = erofs_le16(d + 24);
		ino->gid = erofs_le16(d + 26);
		ino->nlink = !S_ISDIR(ino->mode) && (fmt & I_NLINK_1) ? 1 : erofs_le16(d + 6);
	}
	ino->startblk = erofs_le32(d + 16);
	if (!valid_type(ino->mode)) {
		snprintf(why, n, "inode (nid %llu) of no valid type (mode 0%o)",
			 (unsigned long long)nid, ino->mode);
		return -1;
	}
	return 0;
}

/* A chunked file (CHUNK_BASED): i_u holds the chunk format, a chunk is the block size shifted
 * by its low 5 bits; after the inline xattrs comes one entry per chunk: a 4-byte block
 * address, or with EROFS_CHUNK_INDEXES an 8-byte struct erofs_inode_chunk_index (startblk_hi
 * 0, device_id 2, startblk_lo 4), 8-aligned. EROFS_NULL_ADDR is a hole. */
static int chunk_at(const struct erofs_img *img, const struct erofs_inode *ino, uint64_t off,
		    uint64_t *addr, uint64_t *room, char *why, size_t n)
{
	unsigned fmt = ino->startblk & 0xffff;
	unsigned bits = img->blkbits + (fmt & EROFS_CHUNK_BLKBITS_MASK);
	if (bits > 40 || (fmt & ~0x3fu)) {
		snprintf(why, n, "chunk format 0x%x not supported", fmt);
		return -1;
	}
	uint64_t c = off >> bits, at = ino->off + ino->isize + ino->xsize;
	unsigned unit = fmt & EROFS_CHUNK_INDEXES ? 8 : 4;
	if (unit == 8)
		at = (at + 7) & ~(uint64_t)7;
	at += c * unit;
	if (!erofs_in(img, at, unit)) {
		snprintf(why, n, "its chunk index lies past the end of the image");
		return -1;
	}
	const unsigned char *e = img->base + at;
	uint32_t blk = erofs_le32(unit == 8 ? e + 4 : e);
	if (unit == 8 && (erofs_le16(e) || erofs_le16(e + 2)) && blk != EROFS_NULL_ADDR) {
		snprintf(why, n, "a chunk on another device (multi-device images are not read)");
		return -1;
	}
	uint64_t in = off & (((uint64_t)1 << bits) - 1);
	*room = ((uint64_t)1 << bits) - in;
	*addr = blk == EROFS_NULL_ADDR ? UINT64_MAX : ((uint64_t)blk << img->blkbits) + in;
	return 0;
}

int erofs_data_at(const struct erofs_img *img, const struct erofs_inode *ino, uint64_t off,
		  const unsigned char **p, size_t *len, char *why, size_t n)
{
	uint64_t bs = (uint64_t)1 << img->blkbits, addr, room = bs - (off & (bs - 1));
	*p = NULL;
	*len = 0;
	if (off >= ino->size)
		return 0;
	switch (ino->layout) {
	case EROFS_FLAT_INLINE: {
		/* the last block's bytes (the tail) are packed right after the inode and its
		 * xattrs; the blocks before it start at i_u */
		uint64_t tail = (ino->size - 1) & ~(bs - 1);
		if (off >= tail) {
			addr = ino->off + ino->isize + ino->xsize + (off - tail);
			room = ino->size - off;
			/* the tail may not cross a block (the kernel refuses it so) */
			if ((ino->off + ino->isize + ino->xsize) % bs + (ino->size - tail) > bs) {
				snprintf(why, n, "its inline data crosses a block boundary");
				return -1;
			}
			break;
		}
	}
		/* fall through */
	case EROFS_FLAT_PLAIN:
		addr = ((uint64_t)ino->startblk << img->blkbits) + off;
		break;
	case EROFS_CHUNK_BASED:
		if (chunk_at(img, ino, off, &addr, &room, why, n))
			return -1;
		if (room > bs - (off & (bs - 1)))
			room = bs - (off & (bs - 1));
		break;
	default:
		snprintf(why, n, "compressed data (layout %u) is read whole, not by range", ino->layout);
		return -1;
	}
	if (room > ino->size - off)
		room = ino->size - off;
	*len = (size_t)room;
	if (addr == UINT64_MAX)
		return 0;
	if (!erofs_in(img, addr, room)) {
		snprintf(why, n, "its data lies past the end of the image (truncated?)");
		return -1;
	}
	*p = img->base + addr;
	return 0;
}

int erofs_pread(const struct erofs_img *img, const struct erofs_inode *ino, uint64_t off,
		void *buf, size_t len, char *why, size_t n)
{
	unsigned char *o = buf;
	if (off > ino->size || len > ino->size - off) {
		snprintf(why, n, "a read past the end of the file");
		return -1;
	}
	while (len) {
		const unsigned char *p;
		size_t l;
		if (erofs_data_at(img, ino, off, &p, &l, why, n))
			return -1;
		if (!l) {
			snprintf(why, n, "a read past the end of the file");
			return -1;
		}
		if (l > len)
			l = len;
		if (p)
			memcpy(o, p, l);
		else
			memset(o, 0, l);
		o += l;
		off += l;
		len -= l;
	}
	return 0;
}
