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
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

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
__attribute__((target("sse4.2"))) static uint32_t crc32c_insn(uint32_t crc, const unsigned char *p,
							      size_t n)
{
	while (n && ((uintptr_t)p & 7)) {
		crc = _mm_crc32_u8(crc, *p++);
		n--;
	}
	uint64_t c = crc;
	for (; n >= 8; p += 8, n -= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = _mm_crc32_u64(c, v);
	}
	crc = (uint32_t)c;
	while (n--)
		crc = _mm_crc32_u8(crc, *p++);
	return crc;
}

static int have_insn(void)
{
	return __builtin_cpu_supports("sse4.2");
}
#elif defined(__aarch64__)
__attribute__((target("arch=armv8-a+crc"))) static uint32_t crc32c_insn(uint32_t crc,
									 const unsigned char *p,
									 size_t n)
{
	while (n && ((uintptr_t)p & 7)) {
		crc = __builtin_aarch64_crc32cb(crc, *p++);
		n--;
	}
	for (; n >= 8; p += 8, n -= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		crc = __builtin_aarch64_crc32cx(crc, v);
	}
	while (n--)
		crc = __builtin_aarch64_crc32cb(crc, *p++);
	return crc;
}

static int have_insn(void)
{
	return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
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
	return have_insn() ? crc32c_insn : NULL;
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
