/*
 * imgfmt/crc32c.c: imgfmt_crc32c (the CPU's instruction, or a table in
 * software) gives ext4's and jbd2's crc32c: the standard check values (RFC 3720's, and
 * "123456789"), and the instruction and the table agree on every length and alignment met in
 * an image (inodes, 4 KiB blocks, odd tails), whole or in pieces.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../imgfmt/internal.h"
#include "unit.h"

/* The finished crc32c of a buffer as the standards give it (seeded with ~0, inverted after). */
static uint32_t finished(crc32c_fn f, const void *p, size_t n)
{
	return ~f(~0u, p, n);
}

static uint32_t chosen(uint32_t crc, const unsigned char *p, size_t n)
{
	return imgfmt_crc32c(crc, p, n);
}

static void check_values(const char *name, crc32c_fn f)
{
	unsigned char zeros[32] = { 0 }, ones[32], inc[32];
	memset(ones, 0xff, sizeof(ones));
	for (int i = 0; i < 32; i++)
		inc[i] = (unsigned char)i;
	CHECK(finished(f, "123456789", 9) == 0xe3069283, "%s: \"123456789\" -> e3069283", name);
	CHECK(finished(f, zeros, 32) == 0x8a9136aa, "%s: 32 zeros -> 8a9136aa (RFC 3720)", name);
	CHECK(finished(f, ones, 32) == 0x62a8ab43, "%s: 32 0xff -> 62a8ab43 (RFC 3720)", name);
	CHECK(finished(f, inc, 32) == 0x46dd794e, "%s: 0..31 -> 46dd794e (RFC 3720)", name);
	CHECK(f(0x12345678u, inc, 0) == 0x12345678u, "%s: nothing read, the seed returned", name);
}

/* f against ref on n bytes at buf, whole and in two pieces: the count of disagreements. */
static unsigned disagree_at(crc32c_fn f, crc32c_fn ref, const unsigned char *buf, size_t n)
{
	uint32_t want = ref(0x9e3779b9u, buf, n);
	size_t cut = n / 3;
	return (f(0x9e3779b9u, buf, n) != want) +
	       (f(f(0x9e3779b9u, buf, cut), buf + cut, n - cut) != want);
}

/* ... on every length to 300, some to 4200 and those of ext4's checksums (an inode's parts, a
 * directory block without its tail, a block), at each alignment. */
static unsigned disagree(crc32c_fn f, crc32c_fn ref, const unsigned char *buf)
{
	static const size_t sizes[] = { 124, 128, 156, 1012, 1024, 4084, 4096, 4100 };
	unsigned bad = 0;
	for (size_t off = 0; off < 8; off++) {
		for (size_t n = 0; n <= 4200; n += n < 300 ? 1 : 97)
			bad += disagree_at(f, ref, buf + off, n);
		for (size_t i = 0; i < sizeof(sizes) / sizeof(*sizes); i++)
			bad += disagree_at(f, ref, buf + off, sizes[i]);
	}
	return bad;
}

int main(void)
{
	unsigned char *buf = malloc(4300);
	if (!buf)
		return 2;
	srand(34);
	for (int i = 0; i < 4300; i++)
		buf[i] = (unsigned char)rand();
	crc32c_fn soft = crc32c_soft_fn(), insn = crc32c_insn_fn();
	check_values("table", soft);
	check_values("imgfmt_crc32c", chosen);
	if (insn) {
		check_values("instruction", insn);
		CHECK(!disagree(insn, soft, buf), "instruction and table agree on every length and "
		      "alignment");
	} else {
		printf("(this CPU has no crc32c instruction: the table alone)\n");
	}
	CHECK(!disagree(chosen, soft, buf), "imgfmt_crc32c and the table agree");
	free(buf);
	printf("%d checks, %d failed\n", checks, failures);
	return failures != 0;
}
