/*
 * Opening an EROFS image: the whole file mapped read-only, and its superblock checked
 * (erofs_fs.h, struct erofs_super_block, 128 bytes at byte 1024 of the image).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

bool erofs_is_magic(const unsigned char *m)
{
	return erofs_le32(m) == EROFS_MAGIC;
}

int erofs_probe(const char *path)
{
	unsigned char m[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t r = pread(fd, m, sizeof(m), EROFS_SB_OFFSET);
	int e = errno;
	close(fd);
	if (r < 0) {
		errno = e;
		return -1;
	}
	return r == (ssize_t)sizeof(m) && erofs_le32(m) == EROFS_MAGIC;
}

/* The image's bytes (from off, len of them; len 0: to the end): mapped (a regular file or a
 * block device), else read whole. */
static int load(struct erofs_img *img, uint64_t off, uint64_t len, char *why, size_t n)
{
	struct stat st;
	if (fstat(img->fd, &st)) {
		snprintf(why, n, "%s: %s", img->name, strerror(errno));
		return -1;
	}
	uint64_t size = (uint64_t)st.st_size;
	if (S_ISBLK(st.st_mode)) {
		off_t end = lseek(img->fd, 0, SEEK_END);
		size = end > 0 ? (uint64_t)end : 0;
	} else if (!S_ISREG(st.st_mode)) {
		snprintf(why, n, "%s: not a regular file or a block device", img->name);
		return -1;
	}
	/* a partition: its bytes only (the caller has checked them against the disk's size) */
	if (off > size || (len && len > size - off)) {
		snprintf(why, n, "%s: bytes %llu to %llu lie past its end (%llu bytes)", img->name,
			 (unsigned long long)off, (unsigned long long)(off + len),
			 (unsigned long long)size);
		return -1;
	}
	size = len ? len : size - off;
	if (size < EROFS_SB_OFFSET + 128 || size > SIZE_MAX) {
		snprintf(why, n, "%s: too short for an EROFS image (%llu bytes)", img->name,
			 (unsigned long long)size);
		return -1;
	}
	img->size = (size_t)size;
	/* (mmap wants a page-aligned offset: the mapping starts at the page holding off) */
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), skip = off % page;
	void *p = mmap(NULL, img->size + skip, PROT_READ, MAP_PRIVATE, img->fd, (off_t)(off - skip));
	if (p != MAP_FAILED) {
		img->map = p;
		img->map_len = img->size + skip;
		img->base = (const unsigned char *)p + skip;
		return 0;
	}
	unsigned char *b = malloc(img->size);
	size_t got = 0;
	while (b && got < img->size) {
		ssize_t r = pread(img->fd, b + got, img->size - got, (off_t)(off + got));
		if (r <= 0) {
			snprintf(why, n, "%s: cannot read it: %s", img->name,
				 r ? strerror(errno) : "shorter than it said");
			free(b);
			return -1;
		}
		got += (size_t)r;
	}
	if (!b) {
		snprintf(why, n, "%s: out of memory", img->name);
		return -1;
	}
	img->base = b;
	return 0;
}

/*
 * COMPAT_SB_CHKSUM: the superblock's checksum (at 4) is crc32c, seeded with ~0 and not
 * inverted at the end, of the block from byte 1024 to its end (the block size less 1024, or a
 * whole block when blocks are 1 KiB or less) with the checksum field read as 0.
 */
static uint32_t crc32c(uint32_t crc, const unsigned char *p, size_t len)
{
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78u & -(crc & 1));
	}
	return crc;
}

static int check_sum(const struct erofs_img *img, char *why, size_t n)
{
	const unsigned char *sb = img->base + EROFS_SB_OFFSET;
	size_t len = (size_t)1 << img->blkbits;
	if (len > EROFS_SB_OFFSET)
		len -= EROFS_SB_OFFSET;
	if (!erofs_in(img, EROFS_SB_OFFSET, len)) {
		snprintf(why, n, "%s: truncated EROFS image: its superblock's checksummed block "
			 "runs past its end", img->name);
		return -1;
	}
	static const unsigned char zero[4];
	uint32_t crc = crc32c(~0u, sb, 4);
	crc = crc32c(crc, zero, 4);
	crc = crc32c(crc, sb + 8, len - 8);
	if (crc != erofs_le32(sb + 4)) {
		snprintf(why, n, "%s: corrupt EROFS superblock: checksum 0x%08x, its bytes give "
			 "0x%08x", img->name, erofs_le32(sb + 4), crc);
		return -1;
	}
	return 0;
}

/*
 * The superblock's fields (offsets in struct erofs_super_block): magic 0, checksum 4 (crc32c,
 * with COMPAT_SB_CHKSUM: check_sum),
 * feature_compat 8, blkszbits 12, sb_extslots 13, root nid 14 (16 bits), inos 16, blocks 36,
 * meta_blkaddr 40, xattr_blkaddr 44, feature_incompat 80, dirblkbits 90, xattr_prefix_count 91,
 * xattr_prefix_start 92, packed_nid 96.
 */
static int superblock(struct erofs_img *img, char *why, size_t n)
{
	const unsigned char *sb = img->base + EROFS_SB_OFFSET;
	if (erofs_le32(sb) != EROFS_MAGIC) {
		snprintf(why, n, "%s: not an EROFS image (no magic at byte 1024)", img->name);
		return -1;
	}
	img->compat = erofs_le32(sb + 8);
	img->incompat = erofs_le32(sb + 80);
	img->blkbits = sb[12];
	/* the kernel takes blocks of 512 bytes up to its page size; 64 KiB is the largest page */
	if (img->blkbits < 9 || img->blkbits > 16) {
		snprintf(why, n, "%s: corrupt EROFS superblock: block size 2^%u", img->name,
			 img->blkbits);
		return -1;
	}
	if ((img->compat & EROFS_CO_SB_CHKSUM) && check_sum(img, why, n))
		return -1;
	if (img->incompat & ~(uint32_t)EROFS_IN_KNOWN) {
		snprintf(why, n, "%s: EROFS features fclabel does not read (incompat 0x%x%s)",
			 img->name, img->incompat & ~(uint32_t)EROFS_IN_KNOWN,
			 img->incompat & (EROFS_IN_48BIT | EROFS_IN_METABOX) ? ": 48-bit layout or "
			 "metabox" : "");
		return -1;
	}
	/* directory blocks larger than a block: the kernel refuses them too */
	if (sb[90]) {
		snprintf(why, n, "%s: EROFS directory block bits %u are not supported", img->name,
			 sb[90]);
		return -1;
	}
	img->root_nid = erofs_le16(sb + 14);
	img->packed_nid = erofs_le64(sb + 96);
	img->inos = erofs_le64(sb + 16);
	img->meta_off = (uint64_t)erofs_le32(sb + 40) << img->blkbits;
	img->xattr_off = (uint64_t)erofs_le32(sb + 44) << img->blkbits;
	/* blocks (36): the image's size as mkfs.erofs wrote it; a shorter file was cut short */
	uint64_t blocks = erofs_le32(sb + 36);
	if (blocks > (uint64_t)img->size >> img->blkbits &&
	    (blocks << img->blkbits) - img->size >= ((uint64_t)1 << img->blkbits)) {
		snprintf(why, n, "%s: truncated EROFS image: %zu bytes, its superblock says %llu "
			 "blocks of %u", img->name, img->size, (unsigned long long)blocks,
			 1u << img->blkbits);
		return -1;
	}
	if (!erofs_in(img, img->meta_off, 32)) {
		snprintf(why, n, "%s: corrupt EROFS superblock: the meta area starts past the end "
			 "of the image (truncated?)", img->name);
		return -1;
	}
	return 0;
}

/* The image at fd (taken over), its EROFS file system len bytes from off (len 0: to the end). */
static int open_at(const char *name, int fd, uint64_t off, uint64_t len, struct erofs_img **out,
		   char *why, size_t n)
{
	struct erofs_img *img = calloc(1, sizeof(*img));
	*out = NULL;
	if (!img || !(img->name = strdup(name)) || !(img->packed = calloc(1, sizeof(*img->packed)))) {
		if (img)
			free(img->name);
		free(img);
		close(fd);
		snprintf(why, n, "%s: out of memory", name);
		return -1;
	}
	img->fd = fd;
	if (load(img, off, len, why, n) || superblock(img, why, n) ||
	    erofs_prefixes_load(img, why, n)) {
		erofs_close(img);
		return -1;
	}
	*out = img;
	return 0;
}

int erofs_open_fd(const char *name, int fd, struct erofs_img **out, char *why, size_t n)
{
	return open_at(name, fd, 0, 0, out, why, n);
}

int erofs_open_range(const char *path, uint64_t off, uint64_t len, struct erofs_img **out,
		     char *why, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	*out = NULL;
	if (fd < 0) {
		snprintf(why, n, "%s: %s", path, strerror(errno));
		return -1;
	}
	return open_at(path, fd, off, len, out, why, n);
}

int erofs_open(const char *path, struct erofs_img **out, char *why, size_t n)
{
	return erofs_open_range(path, 0, 0, out, why, n);
}

void erofs_close(struct erofs_img *img)
{
	if (!img)
		return;
	if (img->map)
		munmap(img->map, img->map_len);
	else
		free((void *)img->base);
	if (img->fd >= 0)
		close(img->fd);
	if (img->packed)
		free(img->packed->data);
	free(img->packed);
	free(img->prefixes);
	free(img->name);
	free(img);
}
