/*
 * The compression algorithms of EROFS pclusters (erofs_fs.h: Z_EROFS_COMPRESSION_LZ4 0, LZMA 1,
 * DEFLATE 2, ZSTD 3), each decoded by its library: LZ4 (and LZ4HC, the same format) by liblz4,
 * MicroLZMA by liblzma (lzma_microlzma_decoder: LZMA without a header, its first byte the
 * property byte inverted), raw DEFLATE (no zlib header) by zlib, and Zstandard frames by
 * libzstd.
 *
 * The compressed bytes end at the end of their pcluster; the zeros before them are padding
 * (INCOMPAT_ZERO_PADDING; LZMA, DEFLATE and Zstandard always have it, the kernel refuses them
 * without). An extent may be the start of what its pcluster decodes to (dedupe: a pcluster
 * shared with a longer extent, Z_EROFS_LI_PARTIAL_REF), so each decoder is asked for the
 * extent's len bytes and must give them all, but may have more to give.
 */
#include <lz4.h>
#include <lzma.h>
#include <stdio.h>
#include <zlib.h>
#include <zstd.h>

#include "internal.h"

static int lz4(const unsigned char *src, size_t slen, unsigned char *out, size_t len)
{
	int r = LZ4_decompress_safe_partial((const char *)src, (char *)out, (int)slen, (int)len,
					    (int)len);
	return r == (int)len ? 0 : -1;
}

static int microlzma(const unsigned char *src, size_t slen, unsigned char *out, size_t len)
{
	lzma_stream s = LZMA_STREAM_INIT;
	/* a dictionary as large as the output: nothing can refer further back */
	uint32_t dict = len < 4096 ? 4096 : (uint32_t)len;
	if (lzma_microlzma_decoder(&s, slen, len, false, dict) != LZMA_OK)
		return -1;
	s.next_in = src;
	s.avail_in = slen;
	s.next_out = out;
	s.avail_out = len;
	lzma_ret r = lzma_code(&s, LZMA_FINISH);
	size_t got = len - s.avail_out;
	lzma_end(&s);
	return (r == LZMA_STREAM_END || r == LZMA_OK) && got == len ? 0 : -1;
}

static int deflate_raw(const unsigned char *src, size_t slen, unsigned char *out, size_t len)
{
	z_stream s = { 0 };
	if (inflateInit2(&s, -15) != Z_OK)
		return -1;
	s.next_in = (unsigned char *)src;
	s.avail_in = (uInt)slen;
	s.next_out = out;
	s.avail_out = (uInt)len;
	int r = inflate(&s, Z_SYNC_FLUSH);
	size_t got = len - s.avail_out;
	inflateEnd(&s);
	return (r == Z_STREAM_END || r == Z_OK || r == Z_BUF_ERROR) && got == len ? 0 : -1;
}

static int zstd(const unsigned char *src, size_t slen, unsigned char *out, size_t len)
{
	ZSTD_DStream *d = ZSTD_createDStream();
	if (!d)
		return -1;
	ZSTD_inBuffer in = { src, slen, 0 };
	ZSTD_outBuffer o = { out, len, 0 };
	size_t r = ZSTD_initDStream(d);
	/* no window past what an extent decodes to (Z_EROFS_MAX_EXTENT, 12 MiB): a frame asking
	 * for more is refused rather than given the memory */
	if (!ZSTD_isError(r))
		r = ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, 24);
	/* until the output is full, the frame ends, or no progress is made */
	while (!ZSTD_isError(r) && o.pos < len) {
		size_t before = o.pos, inbefore = in.pos;
		r = ZSTD_decompressStream(d, &o, &in);
		if (!r || (o.pos == before && in.pos == inbefore))
			break;
	}
	ZSTD_freeDStream(d);
	return !ZSTD_isError(r) && o.pos == len ? 0 : -1;
}

static const char *const names[] = { "LZ4", "LZMA", "DEFLATE", "Zstandard" };

int erofs_decode(const struct erofs_img *img, unsigned alg, const unsigned char *src,
		 size_t slen, unsigned char *out, size_t len, char *why, size_t n)
{
	if (alg > 3) {
		snprintf(why, n, "compression algorithm %u, which fclabel does not know", alg);
		return -1;
	}
	if (len > INT32_MAX || slen > INT32_MAX) {
		snprintf(why, n, "a %s extent of %zu bytes", names[alg], len);
		return -1;
	}
	size_t margin = 0;
	if (alg || (img->incompat & EROFS_IN_ZERO_PADDING))
		while (margin < slen && !src[margin])
			margin++;
	if (margin == slen) {
		snprintf(why, n, "a %s pcluster of zeros only", names[alg]);
		return -1;
	}
	src += margin;
	slen -= margin;
	int r = alg == 0 ? lz4(src, slen, out, len)
	      : alg == 1 ? microlzma(src, slen, out, len)
	      : alg == 2 ? deflate_raw(src, slen, out, len)
	      : zstd(src, slen, out, len);
	if (r) {
		snprintf(why, n, "corrupt %s data", names[alg]);
		return -1;
	}
	return 0;
}
