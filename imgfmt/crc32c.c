/*
 * crc32c (Castagnoli), as ext4 and jbd2 checksum their metadata: every inode, directory block,
 * attribute block, bitmap, group descriptor and journal block the labeler reads or writes.
 *
 * libext2fs 1.47 computes it in software (slice-by-8): in a profile of `fclabel label` of a
 * 200,000-inode image it was a quarter of all samples, since every inode read is verified and
 * every inode written is checksummed again, and every directory block read is verified. The
 * CPU's own instruction (SSE4.2 on x86-64, the CRC32 extension of ARMv8) does the same several
 * times faster.
 *
 * libext2fs's own checks keep its software crc32c: fclabel does not take its name (t_symbols);
 * the checksums fclabel computes itself (the inodes the walk reads and the labels it writes,
 * labeler/ext4/itable.c; the journal, journal.c) use this one. The same function either way
 * (tests/crcunit.c checks each implementation against the others and the standard values).
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

#if defined(__x86_64__)
#include <nmmintrin.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#include <asm/hwcap.h>
#endif

/* The reflected Castagnoli polynomial. */
#define CRC32C_POLY 0x82f63b78u

static uint32_t table[8][256];
/* LANE zero bytes' effect on a crc, a byte of it at a time: the crc is linear in its seed, so
 * lane_shift[k][b] is the XOR of the columns (one seed bit each) of b's bits, byte k. SLANE's
 * the same for the short lanes of an inode (256 bytes: 3 of 80 and a tail; one lane, 32 steps
 * one after the other, was most of a label's checksum time, an inode read and one written). */
#define LANE 1344u /* (3 lanes: 4032 bytes, a 4 KiB block's step with room for a tail) */
#define SLANE 80u
static uint32_t lane_shift[4][256], slane_shift[4][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static uint32_t crc32c_soft(uint32_t crc, const unsigned char *p, size_t n);

static void shift_init(uint32_t shift[4][256], size_t len)
{
	static const unsigned char zeros[LANE];
	uint32_t col[32];
	for (int b = 0; b < 32; b++)
		col[b] = crc32c_soft(1u << b, zeros, len);
	for (int k = 0; k < 4; k++)
		for (unsigned v = 0; v < 256; v++) {
			uint32_t x = 0;
			for (int b = 0; b < 8; b++)
				if (v >> b & 1)
					x ^= col[8 * k + b];
			shift[k][v] = x;
		}
}

static void table_init(void)
{
	for (unsigned i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (CRC32C_POLY & -(c & 1));
		table[0][i] = c;
	}
	for (unsigned i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
	shift_init(lane_shift, LANE);
	shift_init(slane_shift, SLANE);
}

/* Eight bytes a step (little-endian loads: the targets we build for are all little-endian). */
static uint32_t crc32c_soft(uint32_t crc, const unsigned char *p, size_t n)
{
	while (n && ((uintptr_t)p & 7)) {
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
		n--;
	}
	for (; n >= 8; p += 8, n -= 8) {
		uint32_t lo, hi;
		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
		lo ^= crc;
		crc = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^
		      table[5][(lo >> 16) & 0xff] ^ table[4][lo >> 24] ^
		      table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^
		      table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
	}
	while (n--)
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
	return crc;
}

#if defined(__x86_64__)
#define INSN_TARGET __attribute__((target("sse4.2")))
#define STEP8(c, b) _mm_crc32_u8(c, b)
#define STEP64(c, v) ((uint32_t)_mm_crc32_u64(c, v))

static int have_insn(void)
{
	return __builtin_cpu_supports("sse4.2");
}
#elif defined(__aarch64__)
#define INSN_TARGET __attribute__((target("arch=armv8-a+crc")))
#define STEP8(c, b) __builtin_aarch64_crc32cb(c, b)
#define STEP64(c, v) __builtin_aarch64_crc32cx(c, v)

static int have_insn(void)
{
	return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
}
#endif

#ifdef STEP64
/* The instruction takes a few cycles to give its result but can start one each cycle: three
 * lanes of LANE bytes each (a 4 KiB directory or journal block is one such step and a tail), each
 * lane's crc then moved past the lanes after it (lane_shift) and the three combined. */
static uint32_t lane_move(const uint32_t shift[4][256], uint32_t c)
{
	return shift[0][c & 0xff] ^ shift[1][(c >> 8) & 0xff] ^ shift[2][(c >> 16) & 0xff] ^
	       shift[3][c >> 24];
}

/* 3 * lane bytes at p, after crc. */
INSN_TARGET static inline uint32_t three_lanes(uint32_t crc, const unsigned char *p, size_t lane,
					       const uint32_t shift[4][256])
{
	uint32_t c0 = crc, c1 = 0, c2 = 0;
	for (size_t i = 0; i < lane; i += 8) {
		uint64_t a, b, c;
		memcpy(&a, p + i, 8);
		memcpy(&b, p + lane + i, 8);
		memcpy(&c, p + 2 * lane + i, 8);
		c0 = STEP64(c0, a);
		c1 = STEP64(c1, b);
		c2 = STEP64(c2, c);
	}
	return lane_move(shift, lane_move(shift, c0) ^ c1) ^ c2;
}

INSN_TARGET static uint32_t crc32c_insn(uint32_t crc, const unsigned char *p, size_t n)
{
	while (n && ((uintptr_t)p & 7)) {
		crc = STEP8(crc, *p++);
		n--;
	}
	for (; n >= 3 * LANE; p += 3 * LANE, n -= 3 * LANE)
		crc = three_lanes(crc, p, LANE, lane_shift);
	for (; n >= 3 * SLANE; p += 3 * SLANE, n -= 3 * SLANE)
		crc = three_lanes(crc, p, SLANE, slane_shift);
	for (; n >= 8; p += 8, n -= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		crc = STEP64(crc, v);
	}
	while (n--)
		crc = STEP8(crc, *p++);
	return crc;
}
#else
#define crc32c_insn NULL
static int have_insn(void)
{
	return 0;
}
#endif

crc32c_fn crc32c_insn_fn(void)
{
	if (!have_insn())
		return NULL;
	pthread_once(&table_once, table_init);
	return crc32c_insn;
}

crc32c_fn crc32c_soft_fn(void)
{
	pthread_once(&table_once, table_init);
	return crc32c_soft;
}

static crc32c_fn impl_fn;

/* Chosen at the first call, not in a constructor: the library may checksum before ours ran. */
static crc32c_fn pick(void)
{
	crc32c_fn f = crc32c_insn_fn();
	if (!f)
		f = crc32c_soft_fn();
	__atomic_store_n(&impl_fn, f, __ATOMIC_RELEASE);
	return f;
}

uint32_t imgfmt_crc32c(uint32_t crc, const void *p, size_t len)
{
	crc32c_fn f = __atomic_load_n(&impl_fn, __ATOMIC_ACQUIRE);
	if (!f)
		f = pick();
	return f(crc, p, len);
}
