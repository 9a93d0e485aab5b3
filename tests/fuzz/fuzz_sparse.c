/*
 * fuzz_sparse: the Android sparse image io_manager (imgfmt/sparse.c, replace.c, result.c,
 * blocks.c) on fuzzed sparse files, called directly as libext2fs calls it, against a model of
 * the bytes.
 *
 * Input: a sparse image. Its header's image_checksum field (bytes 24..27), which the reader
 * ignores and the writer zeroes, drives the run: byte 24 is options (1: write the result to
 * another file with imgfmt_set_output, 2: discard instead of writing, 4: also open the
 * result with ext2fs_open2, 8: take the same bytes as a raw image, through imgfmt_replace_manager:
 * its whole 1 KiB units are the image, a shorter tail is kept as it is), bytes 24..27 seed
 * the writes.
 *
 * 1. Open read-only; read a window of the image (all of it when it is at most 1 MiB, else the
 *    first 512 KiB and the last 64 KiB): every block the header declares must read.
 * 2. Open read-write; make 1..12 writes into the window (whole blocks at channel block sizes
 *    1, 2 and 4 KiB, byte ranges through write_byte, the same bytes written back), reading back
 *    after each one; close, which writes the result.
 * 3. The result must open again and hold exactly the model's bytes; after a discard (or with
 *    nothing written) the input must be unchanged and no output written.
 */
#include <errno.h>
#include <et/com_err.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imgfmt.h"
#include "fuzzutil.c"

#define FZ_MAX_INPUT (1 << 20)
#define SMALL (1u << 20)
#define W1 (512u << 10)
#define W2 (64u << 10)

static uint32_t le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rng;
static uint32_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/* The modeled part of the image: [0, a) and [b, size). */
struct model {
	uint64_t size, a, b;
	uint8_t *lo, *hi;
};

static uint8_t *at(struct model *m, uint64_t off)
{
	return off < m->a ? m->lo + off : m->hi + (off - m->b);
}

static void die(const char *what, errcode_t rc)
{
	const char *why = imgfmt_error();
	fprintf(stderr, "fuzz_sparse: %s: %s%s%s\n", what, rc ? error_message(rc) : "mismatch",
		why ? " / " : "", why ? why : "");
	abort();
}

static void read_window(io_channel ch, struct model *m, uint8_t *lo, uint8_t *hi, const char *what)
{
	errcode_t rc;
	io_channel_set_blksize(ch, 1024);
	if (m->a && (rc = io_channel_read_blk64(ch, 0, -(int)m->a, lo)))
		die(what, rc);
	if (m->size > m->b && (rc = io_channel_read_blk64(ch, m->b / 1024, -(int)(m->size - m->b), hi)))
		die(what, rc);
}

/* A range [off, off+len) inside one part of the window, aligned to align. */
static bool pick(struct model *m, uint64_t align, uint64_t maxlen, uint64_t *off, uint64_t *len)
{
	bool high = m->size > m->b && (next() & 1);
	uint64_t start = high ? m->b : 0, end = high ? m->size : m->a;
	if (high && start % align)
		start += align - start % align;
	if (end <= start || end - start < align)
		return false;
	uint64_t units = (end - start) / align;
	uint64_t u = next() % units, n = 1 + next() % (maxlen / align ? maxlen / align : 1);
	if (u + n > units)
		n = units - u;
	*off = start + u * align;
	*len = n * align;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char in[512], out[512];
	io_channel ch;
	errcode_t rc;

	if (size > FZ_MAX_INPUT)
		return 0;
	fz_path(in, sizeof(in), "in.simg");
	fz_path(out, sizeof(out), "out.simg");
	fz_write(in, data, size);
	unlink(out);
	imgfmt_set_output(NULL);
	bool raw = size >= 28 && (data[24] & 8);
	io_manager mgr = raw ? imgfmt_replace_manager : imgfmt_sparse_manager;
	imgfmt_set_image(in);

	rc = mgr->open(in, 0, &ch);
	if (rc) {
		if (raw)
			die("a raw image did not open", rc);
		return 0; /* refused: imgfmt_error() may say why */
	}
	if (size < 28)
		die("opened an input shorter than a sparse header", 0);

	unsigned opt = data[24];
	rng = ((uint64_t)le32(data + 24) << 20) ^ size ^ 0x9e3779b97f4a7c15ull;
	struct model m;
	m.size = raw ? size / 1024 * 1024 : (uint64_t)le32(data + 12) * le32(data + 16);
	m.a = m.size <= SMALL ? m.size : W1;
	m.b = m.size <= SMALL ? m.size : m.size - W2;
	m.lo = malloc(m.a + 1);
	m.hi = malloc(m.size - m.b + 1);
	uint8_t *lo2 = malloc(m.a + 1), *hi2 = malloc(m.size - m.b + 1), *buf = malloc(16384);
	if (!m.lo || !m.hi || !lo2 || !hi2 || !buf)
		abort();
	read_window(ch, &m, m.lo, m.hi, "reading a declared block");
	/* past the end: an error, not a crash */
	io_channel_set_blksize(ch, 1024);
	if (io_channel_read_blk64(ch, m.size / 1024, 1, buf) == 0)
		die("a read past the declared blocks succeeded", 0);
	io_channel_close(ch);

	/* read-write */
	if (opt & 1)
		imgfmt_set_output(out);
	rc = mgr->open(in, IO_FLAG_RW, &ch);
	if (rc)
		die("the read-write open failed where the read-only one did not", rc);
	unsigned nops = 1 + next() % 12, writes = 0;
	for (unsigned i = 0; i < nops; i++) {
		unsigned kind = next() % 4;
		uint64_t bs = 1024u << (next() % 3), off, len;
		io_channel_set_blksize(ch, (int)bs);
		if (kind == 0 || kind == 3) {
			/* whole blocks (kind 3: the bytes already there) */
			if (!pick(&m, bs, 16384, &off, &len))
				continue;
			for (uint64_t k = 0; k < len; k++)
				buf[k] = kind == 3 ? *at(&m, off + k) : (uint8_t)(next() >> (k & 7));
			if ((next() & 1) && len % bs == 0)
				rc = io_channel_write_blk64(ch, off / bs, (int)(len / bs), buf);
			else
				rc = io_channel_write_blk64(ch, off / bs, -(int)len, buf);
		} else if (kind == 1) {
			/* bytes anywhere, as the superblock is written */
			if (!pick(&m, 1, 3000, &off, &len))
				continue;
			uint8_t v = (uint8_t)next();
			for (uint64_t k = 0; k < len; k++)
				buf[k] = (uint8_t)(v + k);
			rc = io_channel_write_byte(ch, (unsigned long)off, (int)len, buf);
		} else {
			/* read back something */
			if (!pick(&m, bs, 16384, &off, &len))
				continue;
			rc = io_channel_read_blk64(ch, off / bs, -(int)len, buf);
			if (rc)
				die("reading back during the read-write session", rc);
			for (uint64_t k = 0; k < len; k++)
				if (buf[k] != *at(&m, off + k)) {
					fprintf(stderr, "fuzz_sparse: byte %llu reads %u, %u was written\n",
						(unsigned long long)(off + k), buf[k], *at(&m, off + k));
					die("read after write", 0);
				}
			continue;
		}
		if (rc)
			die("a write inside the image failed", rc);
		for (uint64_t k = 0; k < len; k++)
			*at(&m, off + k) = buf[k];
		writes++;
	}
	/* everything, as it is now */
	read_window(ch, &m, lo2, hi2, "reading in the read-write session");
	if (memcmp(lo2, m.lo, m.a) || memcmp(hi2, m.hi, m.size - m.b))
		die("the session does not read what was written", 0);
	bool discard = opt & 2;
	if (discard)
		imgfmt_discard(ch);
	rc = io_channel_close(ch);
	if (rc)
		die("closing (writing the result) failed", rc);
	imgfmt_set_output(NULL);

	const char *result = (opt & 1) ? out : in;
	size_t got;
	char *now;
	if (discard || !writes) {
		if (access(out, F_OK) == 0)
			die("an output was written though nothing changed", 0);
		now = fz_read(in, &got);
		if (!now || got != size || memcmp(now, data, size))
			die("the input changed though nothing was written", 0);
		free(now);
	} else {
		if ((opt & 1) && ((now = fz_read(in, &got)) == NULL || got != size ||
				  memcmp(now, data, size)))
			die("with an output file the input changed", 0);
		if (opt & 1)
			free(now);
		if (raw && ((now = fz_read(result, &got)) == NULL || got != size ||
			    memcmp(now + m.size, data + m.size, size - m.size)))
			die("the raw result's size or tail changed", 0);
		if (raw)
			free(now);
		rc = mgr->open(result, 0, &ch);
		if (rc)
			die("the result does not open", rc);
		read_window(ch, &m, lo2, hi2, "reading the result");
		io_channel_close(ch);
		if (memcmp(lo2, m.lo, m.a) || memcmp(hi2, m.hi, m.size - m.b)) {
			for (uint64_t k = 0; k < m.size; k++)
				if ((k < m.a || k >= m.b) &&
				    (k < m.a ? lo2[k] : hi2[k - m.b]) != *at(&m, k)) {
					fprintf(stderr, "fuzz_sparse: result byte %llu is %u, want %u\n",
						(unsigned long long)k, k < m.a ? lo2[k] : hi2[k - m.b],
						*at(&m, k));
					break;
				}
			die("the result differs from what was written", 0);
		}
	}
	if (opt & 4) {
		ext2_filsys fs;
		if (ext2fs_open2(result, NULL, EXT2_FLAG_64BITS, 0, 0, mgr, &fs) == 0) {
			ext2fs_read_bitmaps(fs);
			ext2fs_close_free(&fs);
		}
	}
	free(m.lo);
	free(m.hi);
	free(lo2);
	free(hi2);
	free(buf);
	return 0;
}
