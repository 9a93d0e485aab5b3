/*
 * Extended attributes (erofs_fs.h). After the inode, when i_xattr_icount is not 0: struct
 * erofs_xattr_ibody_header (12 bytes: h_name_filter 0, h_shared_count 4), h_shared_count
 * 4-byte ids of shared attributes (each at xattr_blkaddr * block size + id * 4), then inline
 * entries to the end of the area. An entry (struct erofs_xattr_entry) is e_name_len 0,
 * e_name_index 1, e_value_size 2 (16 bits), the name without its prefix, the value; 4-aligned.
 * The index names a short prefix (1 "user.", 2 "system.posix_acl_access", 3
 * "system.posix_acl_default", 4 "trusted.", 6 "security."), or with bit 7 set
 * (EROFS_XATTR_LONG_PREFIX) one of the image's long prefixes: a short one and an infix. As the
 * kernel's erofs_getxattr, inline entries are looked at before shared ones.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define LONG_PREFIX 0x80
#define LONG_PREFIX_MASK 0x7f

static const char *short_prefix(unsigned idx)
{
	static const char *const p[] = { NULL, "user.", "system.posix_acl_access",
					 "system.posix_acl_default", "trusted.", NULL,
					 "security." };
	return idx < sizeof(p) / sizeof(*p) ? p[idx] : NULL;
}

/* A long prefix record: its 16-bit length, then struct erofs_xattr_long_prefix (base_index,
 * the infix); records are 4-aligned. */
static int read_prefix(struct erofs_img *img, bool packed, uint64_t *pos,
		       struct erofs_prefix *pf, char *why, size_t n)
{
	unsigned char len[2], rec[256];
	size_t l;

	*pos = (*pos + 3) & ~(uint64_t)3;
	if (packed) {
		if (erofs_packed_read(img, NULL, *pos, len, 2, why, n))
			return -1;
	} else if (erofs_in(img, *pos, 2)) {
		memcpy(len, img->base + *pos, 2);
	} else {
		snprintf(why, n, "past the end of the image");
		return -1;
	}
	l = erofs_le16(len);
	if (l < 1 || l > sizeof(rec)) {
		snprintf(why, n, "a record of %zu bytes", l);
		return -1;
	}
	if (packed) {
		if (erofs_packed_read(img, NULL, *pos + 2, rec, l, why, n))
			return -1;
	} else if (erofs_in(img, *pos + 2, l)) {
		memcpy(rec, img->base + *pos + 2, l);
	} else {
		snprintf(why, n, "past the end of the image");
		return -1;
	}
	*pos += 2 + l;
	pf->base = rec[0];
	pf->len = l - 1;
	memcpy(pf->infix, rec + 1, pf->len);
	return 0;
}

/*
 * The long prefixes (INCOMPAT_XATTR_PREFIXES): xattr_prefix_count records from byte
 * xattr_prefix_start * 4, in the packed inode's data when there is one (packed_nid) and
 * COMPAT_PLAIN_XATTR_PFX does not say they are in the meta area, else in the image itself.
 */
int erofs_prefixes_load(struct erofs_img *img, char *why, size_t n)
{
	const unsigned char *sb = img->base + EROFS_SB_OFFSET;
	unsigned count = sb[91];
	uint64_t pos = (uint64_t)erofs_le32(sb + 92) * 4;
	bool in_packed = img->packed_nid && !(img->compat & EROFS_CO_PLAIN_XATTR_PFX);
	char w[300];

	if (!(img->incompat & EROFS_IN_XATTR_PREFIXES) || !count)
		return 0;
	if (!(img->prefixes = calloc(count, sizeof(*img->prefixes)))) {
		snprintf(why, n, "%s: out of memory", img->name);
		return -1;
	}
	for (unsigned i = 0; i < count; i++) {
		if (read_prefix(img, in_packed, &pos, &img->prefixes[i], w,
				sizeof(w))) {
			snprintf(why, n, "%s: corrupt EROFS image: long xattr prefix %u: %s",
				 img->name, i, w);
			return -1;
		}
		img->nprefixes++;
	}
	return 0;
}

/* Whether the entry at e (bounds checked by the caller) is the attribute name. */
static bool entry_is(const struct erofs_img *img, const unsigned char *e, const char *name)
{
	unsigned idx = e[1];
	size_t nl = strlen(name);
	const char *sp;
	const struct erofs_prefix *lp = NULL;

	if (idx & LONG_PREFIX) {
		if ((idx & LONG_PREFIX_MASK) >= img->nprefixes)
			return false;
		lp = &img->prefixes[idx & LONG_PREFIX_MASK];
		idx = lp->base;
	}
	if (!(sp = short_prefix(idx)))
		return false;
	size_t sl = strlen(sp);
	if (nl < sl || memcmp(name, sp, sl))
		return false;
	name += sl;
	nl -= sl;
	if (lp) {
		if (nl < lp->len || memcmp(name, lp->infix, lp->len))
			return false;
		name += lp->len;
		nl -= lp->len;
	}
	return nl == e[0] && !memcmp(name, e + 4, nl);
}

/* The entry at off, its whole size checked to lie below end: its size, or 0 when it does not. */
static size_t entry_size(const struct erofs_img *img, uint64_t off, uint64_t end)
{
	if (off > end || end - off < 4 || !erofs_in(img, off, 4))
		return 0;
	const unsigned char *e = img->base + off;
	size_t sz = (4 + (size_t)e[0] + erofs_le16(e + 2) + 3) & ~(size_t)3;
	return sz <= end - off && erofs_in(img, off, sz) ? sz : 0;
}

int erofs_xattr_get(const struct erofs_img *img, const struct erofs_inode *ino, const char *name,
		    const unsigned char **val, size_t *len, char *why, size_t n)
{
	*val = NULL;
	*len = 0;
	if (!ino->xsize)
		return 0;
	uint64_t start = ino->off + ino->isize, end = start + ino->xsize;
	if (ino->xsize < 12) {
		snprintf(why, n, "an attribute area of %u bytes", ino->xsize);
		return -1;
	}
	unsigned shared = img->base[start + 4];
	uint64_t off = start + 12 + 4 * (uint64_t)shared;
	if (off > end) {
		snprintf(why, n, "%u shared attributes in an area of %u bytes", shared, ino->xsize);
		return -1;
	}
	while (off < end) {
		size_t sz = entry_size(img, off, end);
		if (!sz) {
			snprintf(why, n, "an attribute entry at byte %llu runs past its area",
				 (unsigned long long)off);
			return -1;
		}
		const unsigned char *e = img->base + off;
		if (entry_is(img, e, name)) {
			*val = e + 4 + e[0];
			*len = erofs_le16(e + 2);
			return 0;
		}
		off += sz;
	}
	for (unsigned i = 0; i < shared; i++) {
		uint64_t id = erofs_le32(img->base + start + 12 + 4 * (uint64_t)i);
		uint64_t at = img->xattr_off + id * 4;
		if (!entry_size(img, at, img->size)) {
			snprintf(why, n, "shared attribute %llu lies past the end of the image",
				 (unsigned long long)id);
			return -1;
		}
		const unsigned char *e = img->base + at;
		if (entry_is(img, e, name)) {
			*val = e + 4 + e[0];
			*len = erofs_le16(e + 2);
			return 0;
		}
	}
	return 0;
}
