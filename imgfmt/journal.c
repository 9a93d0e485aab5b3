/*
 * The jbd2 journal of an ext3/ext4 image, written and replayed as the kernel and e2fsck do (the
 * format is the kernel's fs/jbd2; facts from it and from e2fsprogs' e2fsck/recovery.c).
 *
 * The log is a ring of journal blocks [s_first, s_maxlen); block 0 holds the journal's
 * superblock, whose s_start names where the log begins (0: it is empty) and s_sequence the
 * transaction ID expected there. A transaction is one or more descriptor blocks, each followed
 * by the blocks its tags name (the new contents of that block of the file system; one that
 * begins with the journal's magic is logged with those four bytes zeroed, and its tag says so),
 * then a commit block. Replay walks the log while each block carries the magic and the expected
 * ID, and writes the blocks of every transaction whose commit block it found, but those a revoke
 * record of that transaction or a later one names.
 *
 * Checksums, by the journal's features: none; v1 (COMPAT_CHECKSUM: a crc32 of the transaction's
 * descriptor and data blocks in its commit block); v2 and v3 (crc32c seeded with the journal's
 * UUID: of each descriptor, revoke and commit block, and of each logged block in its tag, 16 or
 * 32 bits of it). A fast-commit area (FAST_COMMIT) is not written or replayed here.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define JMAGIC 0xc03b3998U
enum { JB_DESCRIPTOR = 1, JB_COMMIT = 2, JB_SB_V1 = 3, JB_SB_V2 = 4, JB_REVOKE = 5 };
enum { JF_ESCAPE = 1, JF_SAME_UUID = 2, JF_LAST_TAG = 8 };
#define JC_CHECKSUM 0x1u
#define JI_REVOKE 0x1u
#define JI_64BIT 0x2u
#define JI_ASYNC_COMMIT 0x4u
#define JI_CSUM_V2 0x8u
#define JI_CSUM_V3 0x10u
#define JI_FAST_COMMIT 0x20u
#define JI_KNOWN (JI_REVOKE | JI_64BIT | JI_ASYNC_COMMIT | JI_CSUM_V2 | JI_CSUM_V3)

/* The journal superblock's fields used here (big-endian, at these offsets). */
enum {
	JS_BLOCKSIZE = 0x0c, JS_MAXLEN = 0x10, JS_FIRST = 0x14, JS_SEQUENCE = 0x18, JS_START = 0x1c,
	JS_ERRNO = 0x20, JS_COMPAT = 0x24, JS_INCOMPAT = 0x28, JS_ROCOMPAT = 0x2c, JS_UUID = 0x30,
	JS_CSUM_TYPE = 0x50, JS_CHECKSUM = 0xfc, JS_SIZE = 0x400,
};
/* The commit block's. */
enum { JC_CSUM_TYPE = 12, JC_CSUM_SIZE = 13, JC_CSUM = 16, JC_SEC = 48, JC_NSEC = 56 };

struct imgfmt_journal {
	io_channel ch;      /* the image, below any overlay */
	struct imgfmt_jrun *runs; /* journal block -> block of the image (jblock) */
	size_t nruns;
	uint32_t len;
	unsigned bs;
	char *sb;           /* the journal's superblock block, as on disk */
	char *buf, *buf2;   /* scratch blocks */
	uint32_t first, last; /* the log: [first, last) */
	uint32_t seq, start;
	uint32_t compat, incompat;
	uint32_t seed;      /* v2, v3: crc32c of the UUID */
	unsigned tagbytes;
	bool csum, csum3, is64, v1;
	const struct imgfmt_writeback *wb; /* the overlay's, while it writes through us */
};

static uint32_t get32(const char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return ntohl(v);
}

static void put32(char *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

static void put16(char *p, uint16_t v)
{
	v = htons(v);
	memcpy(p, &v, 2);
}

static uint32_t crc32c(uint32_t seed, const void *p, size_t n)
{
	return imgfmt_crc32c(seed, p, n);
}

/* The checksum of a descriptor or revoke block (in its last four bytes) or of the journal
 * superblock (at JS_CHECKSUM): computed with its own field zeroed. */
static uint32_t block_csum(const struct imgfmt_journal *j, char *b, size_t at, size_t n,
			   uint32_t seed)
{
	char saved[4];
	memcpy(saved, b + at, 4);
	memset(b + at, 0, 4);
	uint32_t c = crc32c(seed, b, n);
	memcpy(b + at, saved, 4);
	(void)j;
	return c;
}

/* The image block of journal block at (below j->len). */
static uint64_t jblock(const struct imgfmt_journal *j, uint32_t at)
{
	size_t lo = 0, hi = j->nruns;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (j->runs[mid].first <= at)
			lo = mid;
		else
			hi = mid;
	}
	return j->runs[lo].blk + (at - j->runs[lo].first);
}

static errcode_t jread(struct imgfmt_journal *j, uint32_t at, char *buf)
{
	if (at >= j->len)
		return EXT2_ET_JOURNAL_TOO_SMALL;
	return io_channel_read_blk64(j->ch, jblock(j, at), 1, buf);
}

static errcode_t jwrite(struct imgfmt_journal *j, uint32_t at, const char *buf)
{
	if (at >= j->len)
		return EXT2_ET_JOURNAL_TOO_SMALL;
	return io_channel_write_blk64(j->ch, jblock(j, at), 1, buf);
}

static uint32_t wrap(const struct imgfmt_journal *j, uint32_t at)
{
	return at >= j->last ? at - (j->last - j->first) : at;
}

void imgfmt_journal_free(struct imgfmt_journal *j)
{
	if (!j)
		return;
	free(j->runs);
	free(j->sb);
	free(j->buf);
	free(j->buf2);
	free(j);
}

errcode_t imgfmt_journal_open(io_channel ch, unsigned bs, const struct imgfmt_jrun *runs,
			      size_t nruns, struct imgfmt_journal **out, char *why, size_t n)
{
	struct imgfmt_journal *j = calloc(1, sizeof(*j));
	errcode_t rc = ENOMEM;
	uint32_t len = 0;

	*out = NULL;
	if (!j || !(j->runs = malloc((nruns + 1) * sizeof(*runs))) || !(j->sb = malloc(bs)) ||
	    !(j->buf = malloc(bs)) || !(j->buf2 = malloc(bs)) || bs < JS_SIZE)
		goto fail;
	for (size_t i = 0; i < nruns; i++) {
		if (runs[i].first != len || runs[i].len > UINT32_MAX - len) {
			rc = EXT2_ET_INVALID_ARGUMENT;
			goto fail;
		}
		len += runs[i].len;
	}
	if (nruns)
		memcpy(j->runs, runs, nruns * sizeof(*runs));
	j->nruns = nruns;
	j->ch = ch;
	j->len = len;
	j->bs = bs;
	if (!len) {
		snprintf(why, n, "the journal inode maps no blocks");
		rc = EXT2_ET_JOURNAL_TOO_SMALL;
		goto fail;
	}
	if ((rc = jread(j, 0, j->sb))) {
		snprintf(why, n, "cannot read the journal's superblock");
		goto fail;
	}
	const char *s = j->sb;
	uint32_t type = get32(s + 4), maxlen = get32(s + JS_MAXLEN);
	rc = EXT2_ET_CORRUPT_JOURNAL_SB;
	if (get32(s) != JMAGIC || (type != JB_SB_V1 && type != JB_SB_V2)) {
		snprintf(why, n, "the journal's superblock has no jbd2 magic");
		goto fail;
	}
	j->first = get32(s + JS_FIRST);
	j->seq = get32(s + JS_SEQUENCE);
	j->start = get32(s + JS_START);
	if (get32(s + JS_BLOCKSIZE) != bs || maxlen > len || !j->first || j->first >= maxlen ||
	    maxlen - j->first < 8 || (j->start && (j->start < j->first || j->start >= maxlen))) {
		snprintf(why, n, "the journal's superblock gives block size %u, length %u, log start "
			 "%u and first block %u, which its %u blocks of %u bytes cannot hold",
			 get32(s + JS_BLOCKSIZE), maxlen, j->start, j->first, len, bs);
		goto fail;
	}
	j->last = maxlen;
	if (type == JB_SB_V2) {
		j->compat = get32(s + JS_COMPAT);
		j->incompat = get32(s + JS_INCOMPAT);
		uint32_t ro = get32(s + JS_ROCOMPAT);
		if ((j->incompat & ~JI_KNOWN) || (j->compat & ~JC_CHECKSUM) || ro) {
			snprintf(why, n, "the journal has features fclabel does not write (compat "
				 "%#x, incompat %#x, ro_compat %#x%s)", j->compat, j->incompat, ro,
				 j->incompat & JI_FAST_COMMIT ? ": fast commits" : "");
			rc = EXT2_ET_UNSUPP_FEATURE;
			goto fail;
		}
	}
	j->csum3 = j->incompat & JI_CSUM_V3;
	j->csum = j->csum3 || (j->incompat & JI_CSUM_V2);
	j->is64 = j->incompat & JI_64BIT;
	j->v1 = !j->csum && (j->compat & JC_CHECKSUM);
	if (j->csum) {
		j->seed = crc32c(~0u, s + JS_UUID, 16);
		if ((unsigned char)s[JS_CSUM_TYPE] != 4 ||
		    get32(s + JS_CHECKSUM) != block_csum(j, j->sb, JS_CHECKSUM, JS_SIZE, ~0u)) {
			snprintf(why, n, "the checksum of the journal's superblock does not match it");
			goto fail;
		}
	}
	if (j->csum3)
		j->tagbytes = 16;
	else
		j->tagbytes = 12 + (j->incompat & JI_CSUM_V2 ? 2 : 0) - (j->is64 ? 0 : 4);
	*out = j;
	return 0;
fail:
	imgfmt_journal_free(j);
	return rc;
}

void imgfmt_journal_set_writeback(struct imgfmt_journal *j, const struct imgfmt_writeback *w)
{
	j->wb = w;
}

bool imgfmt_journal_empty(const struct imgfmt_journal *j)
{
	return !j->start;
}

int32_t imgfmt_journal_errno(const struct imgfmt_journal *j)
{
	return (int32_t)get32(j->sb + JS_ERRNO);
}

/* Where the log begins and which ID it expects there, written to the journal's superblock. */
static errcode_t write_sb(struct imgfmt_journal *j, uint32_t start, uint32_t seq)
{
	put32(j->sb + JS_START, start);
	put32(j->sb + JS_SEQUENCE, seq);
	if (j->csum)
		put32(j->sb + JS_CHECKSUM, block_csum(j, j->sb, JS_CHECKSUM, JS_SIZE, ~0u));
	errcode_t rc = jwrite(j, 0, j->sb);
	if (!rc) {
		j->start = start;
		j->seq = seq;
	}
	return rc;
}

static errcode_t barrier(struct imgfmt_journal *j, bool sync)
{
	return sync ? io_channel_flush(j->ch) : 0;
}

/* ---- writing ---- */

/* How many tags one descriptor block holds (the first carries the UUID). */
static size_t tags_per_descriptor(const struct imgfmt_journal *j)
{
	size_t room = j->bs - 12 - (j->csum ? 4 : 0);
	return room < j->tagbytes + 16 ? 0 : 1 + (room - j->tagbytes - 16) / j->tagbytes;
}

uint32_t imgfmt_journal_capacity(const struct imgfmt_journal *j)
{
	size_t per = tags_per_descriptor(j), log = j->last - j->first;
	if (!per || log < 3)
		return 0;
	/* n blocks take n + ceil(n / per) + 1 (the commit block) */
	size_t n = (log - 1) * per / (per + 1);
	while (n && n + (n + per - 1) / per + 1 > log)
		n--;
	return (uint32_t)n;
}

static void put_tag(const struct imgfmt_journal *j, char *t, uint64_t blk, unsigned flags,
		    uint32_t csum)
{
	memset(t, 0, j->tagbytes);
	put32(t, (uint32_t)blk);
	if (j->csum3) {
		put32(t + 4, flags);
		put32(t + 8, (uint32_t)(blk >> 32));
		put32(t + 12, csum);
		return;
	}
	if (j->csum)
		put16(t + 4, (uint16_t)csum);
	put16(t + 6, (uint16_t)flags);
	if (j->is64)
		put32(t + 8, (uint32_t)(blk >> 32));
}

/* Log blocks written in runs: consecutive journal blocks that are consecutive on disk (as a
 * journal made by mke2fs is) go in one write. */
struct logw {
	struct imgfmt_journal *j;
	char *buf;
	size_t max;     /* the blocks buf holds */
	uint32_t first; /* the journal block buf starts at */
	size_t n;
};

static errcode_t logw_flush(struct logw *w)
{
	struct imgfmt_journal *j = w->j;
	errcode_t rc = 0;
	uint64_t blk = w->n ? jblock(j, w->first) : 0;
	if (w->n && !(rc = io_channel_write_blk64(j->ch, blk, (int)w->n, w->buf)))
		imgfmt_writeback_start(j->wb, blk * j->bs, w->n * (uint64_t)j->bs);
	w->n = 0;
	return rc;
}

static errcode_t logw_put(struct logw *w, uint32_t at, const char *data)
{
	struct imgfmt_journal *j = w->j;
	errcode_t rc;
	if (at >= j->len)
		return EXT2_ET_JOURNAL_TOO_SMALL;
	if (w->n && (w->n == w->max || at != w->first + w->n ||
		     jblock(j, at) != jblock(j, w->first) + w->n) && (rc = logw_flush(w)))
		return rc;
	if (!w->n)
		w->first = at;
	memcpy(w->buf + w->n++ * (size_t)j->bs, data, j->bs);
	return 0;
}

/* A block as it is logged: with the journal's magic at its start, those four bytes zeroed (the
 * tag says so). */
static const char *logged_form(struct imgfmt_journal *j, const char *src, bool *escaped)
{
	*escaped = get32(src) == JMAGIC;
	if (!*escaped)
		return src;
	memcpy(j->buf2, src, j->bs);
	memset(j->buf2, 0, 4);
	return j->buf2;
}

errcode_t imgfmt_journal_commit(struct imgfmt_journal *j, const uint64_t *blks, size_t n,
				const char *(*data)(void *arg, size_t i), void *arg, int64_t now,
				bool sync, char *run, size_t runlen)
{
	size_t per = tags_per_descriptor(j);
	uint32_t tid = j->seq, at = j->first;
	uint32_t v1sum = ~0u;
	struct logw w = { .j = j, .buf = run, .max = runlen / j->bs };
	errcode_t rc;

	if (!n)
		return 0;
	if (n > imgfmt_journal_capacity(j))
		return EXT2_ET_JOURNAL_TOO_SMALL;
	for (uint64_t i = 0; i < n; i++)
		if (!j->is64 && blks[i] >> 32)
			return EXT2_ET_JOURNAL_TOO_SMALL;
	if (!w.max)
		return EXT2_ET_INVALID_ARGUMENT;
	/* the log starts here, with this transaction: it counts only once its commit block is on
	 * disk, after everything it commits */
	if ((rc = write_sb(j, j->first, tid)))
		goto out;
	for (size_t i = 0; i < n;) {
		size_t k = n - i < per ? n - i : per;
		char *d = j->buf;
		memset(d, 0, j->bs);
		put32(d, JMAGIC);
		put32(d + 4, JB_DESCRIPTOR);
		put32(d + 8, tid);
		size_t off = 12;
		for (size_t t = 0; t < k; t++) {
			bool esc;
			const char *logged = logged_form(j, data(arg, i + t), &esc);
			unsigned flags = (t ? JF_SAME_UUID : 0) | (esc ? JF_ESCAPE : 0) |
					 (t == k - 1 ? JF_LAST_TAG : 0);
			uint32_t c = 0;
			if (j->csum) {
				uint32_t be = htonl(tid);
				c = crc32c(crc32c(j->seed, &be, 4), logged, j->bs);
			}
			put_tag(j, d + off, blks[i + t], flags, c);
			off += j->tagbytes;
			if (!t) {
				memcpy(d + off, j->sb + JS_UUID, 16);
				off += 16;
			}
		}
		if (j->csum)
			put32(d + j->bs - 4, block_csum(j, d, j->bs - 4, j->bs, j->seed));
		if (j->v1)
			v1sum = ext2fs_crc32_be(v1sum, (unsigned char *)d, j->bs);
		if ((rc = logw_put(&w, at, d)))
			goto out;
		at = wrap(j, at + 1);
		for (size_t t = 0; t < k; t++) {
			bool esc;
			const char *logged = logged_form(j, data(arg, i + t), &esc);
			if (j->v1)
				v1sum = ext2fs_crc32_be(v1sum, (const unsigned char *)logged, j->bs);
			if ((rc = logw_put(&w, at, logged)))
				goto out;
			at = wrap(j, at + 1);
		}
		i += k;
	}
	if ((rc = logw_flush(&w)) || (rc = barrier(j, sync)))
		goto out;
	char *c = j->buf;
	memset(c, 0, j->bs);
	put32(c, JMAGIC);
	put32(c + 4, JB_COMMIT);
	put32(c + 8, tid);
	uint64_t sec = now < 0 ? 0 : (uint64_t)now;
	put32(c + JC_SEC, (uint32_t)(sec >> 32));
	put32(c + JC_SEC + 4, (uint32_t)sec);
	if (j->v1) {
		c[JC_CSUM_TYPE] = 1; /* crc32 */
		c[JC_CSUM_SIZE] = 4;
		put32(c + JC_CSUM, v1sum);
	} else if (j->csum) {
		put32(c + JC_CSUM, crc32c(j->seed, c, j->bs));
	}
	if ((rc = jwrite(j, at, c)) || (rc = barrier(j, sync)))
		goto out;
	j->seq = tid + 1; /* the next transaction's; the superblock says so with it */
out:
	return rc;
}

errcode_t imgfmt_journal_reset(struct imgfmt_journal *j, bool sync)
{
	errcode_t rc = write_sb(j, 0, j->seq);
	return rc ? rc : barrier(j, sync);
}

/* ---- replay ---- */

struct revoked {
	uint64_t blk;
	uint32_t tid; /* the last transaction that revoked it */
};

struct replay {
	struct imgfmt_journal *j;
	struct revoked *rv;    /* open addressing on blk + 1 */
	size_t rvmask, nrv;
	uint32_t end;          /* the first transaction not replayed */
	bool end_known;
	imgfmt_replay_put put;
	void *arg;
	struct imgfmt_replay *st;
	char *why;
	size_t n;
};

static bool tid_ge(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) >= 0;
}

static struct revoked *rv_slot(struct replay *r, uint64_t blk)
{
	size_t b = (size_t)((blk * 0x9e3779b97f4a7c15ull) >> 32) & r->rvmask;
	while (r->rv[b].blk && r->rv[b].blk != blk + 1)
		b = (b + 1) & r->rvmask;
	return &r->rv[b];
}

static errcode_t rv_add(struct replay *r, uint64_t blk, uint32_t tid)
{
	if (!r->rv || (r->nrv + 1) * 2 > r->rvmask + 1) {
		size_t om = r->rvmask, nm = r->rv ? r->rvmask * 2 + 1 : 1023;
		struct revoked *o = r->rv, *nw = calloc(nm + 1, sizeof(*nw));
		if (!nw)
			return ENOMEM;
		r->rv = nw;
		r->rvmask = nm;
		for (size_t i = 0; o && i <= om; i++)
			if (o[i].blk)
				*rv_slot(r, o[i].blk - 1) = o[i];
		free(o);
	}
	struct revoked *s = rv_slot(r, blk);
	if (!s->blk) {
		s->blk = blk + 1;
		s->tid = tid;
		r->nrv++;
	} else if (tid_ge(tid, s->tid)) {
		s->tid = tid;
	}
	return 0;
}

static bool rv_hit(struct replay *r, uint64_t blk, uint32_t tid)
{
	if (!r->rv)
		return false;
	struct revoked *s = rv_slot(r, blk);
	return s->blk && tid_ge(s->tid, tid);
}

static uint64_t tag_block(const struct imgfmt_journal *j, const char *t)
{
	uint64_t b = get32(t);
	if (j->is64)
		b |= (uint64_t)get32(t + 8) << 32;
	return b;
}

static unsigned tag_flags(const struct imgfmt_journal *j, const char *t)
{
	/* (v3's 32-bit flags hold them in the same two bytes as v2's) */
	(void)j;
	return (unsigned char)t[6] << 8 | (unsigned char)t[7];
}

static bool tag_csum_ok(const struct imgfmt_journal *j, const char *t, const char *data,
			uint32_t tid)
{
	if (!j->csum)
		return true;
	uint32_t be = htonl(tid);
	uint32_t c = crc32c(crc32c(j->seed, &be, 4), data, j->bs);
	if (j->csum3)
		return get32(t + 12) == c;
	return (uint32_t)((unsigned char)t[4] << 8 | (unsigned char)t[5]) == (c & 0xffff);
}

enum { P_SCAN, P_REVOKE, P_REPLAY };

/* The tags of descriptor d, one at a time: fn(tag, index) for each; returns how many. */
static size_t each_tag(struct imgfmt_journal *j, const char *d,
		       int (*fn)(struct replay *, const char *, size_t), struct replay *r)
{
	size_t off = 12, end = j->bs - (j->csum ? 4 : 0), k = 0;
	while (off + j->tagbytes <= end) {
		const char *t = d + off;
		unsigned fl = tag_flags(j, t);
		if (fn && fn(r, t, k) < 0)
			return (size_t)-1;
		k++;
		off += j->tagbytes + (fl & JF_SAME_UUID ? 0 : 16);
		if (fl & JF_LAST_TAG)
			break;
	}
	return k;
}

/* The blocks the k tags of descriptor d describe, which follow it in the log from *at (moved
 * past them): added to the v1 checksum (P_SCAN, while the log's time is not in doubt), or
 * written where they belong (P_REPLAY) unless revoked. */
static errcode_t pass_tags(struct replay *r, int kind, const char *d, size_t k, uint32_t tid,
			   bool check_time, uint32_t *at, uint32_t *v1sum)
{
	struct imgfmt_journal *j = r->j;
	char *b = j->buf;
	size_t off = 12;
	errcode_t rc;

	for (size_t t = 0; t < k; t++) {
		const char *tag = d + off;
		unsigned fl = tag_flags(j, tag);
		off += j->tagbytes + (fl & JF_SAME_UUID ? 0 : 16);
		uint32_t here = *at;
		*at = wrap(j, *at + 1);
		if (kind == P_REVOKE || (kind == P_SCAN && !(j->v1 && !check_time)))
			continue;
		if ((rc = jread(j, here, b))) {
			snprintf(r->why, r->n, "cannot read journal block %u", here);
			return rc;
		}
		if (kind == P_SCAN) {
			*v1sum = ext2fs_crc32_be(*v1sum, (unsigned char *)b, j->bs);
			continue;
		}
		uint64_t blk = tag_block(j, tag);
		if (rv_hit(r, blk, tid)) {
			r->st->revoked++;
			continue;
		}
		if (!tag_csum_ok(j, tag, b, tid)) {
			snprintf(r->why, r->n, "block %llu of transaction %u has a bad "
				 "checksum in the journal", (unsigned long long)blk, tid);
			return EXT2_ET_CORRUPT_JOURNAL_SB;
		}
		if (fl & JF_ESCAPE)
			put32(b, JMAGIC);
		if ((rc = r->put(r->arg, blk, b))) {
			snprintf(r->why, r->n, "writing block %llu from the journal failed",
				 (unsigned long long)blk);
			return rc;
		}
		r->st->blocks++;
	}
	return 0;
}

/* P_SCAN: whether commit block b closes transaction tid and the log goes on. false: the log
 * ends before it, after a bad checksum (check_time) as stale blocks of an older log or, when
 * this commit is no older than the last one, as damage (*rc); or at an interrupted commit. */
static bool commit_scan(struct replay *r, char *b, uint32_t tid, bool check_time,
			uint64_t *last_time, uint32_t *v1sum, errcode_t *rc)
{
	struct imgfmt_journal *j = r->j;
	uint64_t t = (uint64_t)get32(b + JC_SEC) << 32 | get32(b + JC_SEC + 4);

	if (check_time) {
		if (t >= *last_time) {
			snprintf(r->why, r->n, "transaction %u has a bad checksum", tid);
			*rc = EXT2_ET_CORRUPT_JOURNAL_SB;
		}
		return false; /* stale blocks of an older log */
	}
	bool bad = false;
	if (j->v1) {
		bool used = b[JC_CSUM_TYPE] == 1 && b[JC_CSUM_SIZE] == 4 &&
			    get32(b + JC_CSUM) == *v1sum;
		bool unused = !b[JC_CSUM_TYPE] && !b[JC_CSUM_SIZE] && !get32(b + JC_CSUM);
		bad = !used && !unused;
		*v1sum = ~0u;
	} else if (j->csum) {
		bad = get32(b + JC_CSUM) != block_csum(j, b, JC_CSUM, j->bs, j->seed);
	}
	if (bad) {
		if (t < *last_time)
			return false;
		/* an interrupted commit: the log ends before it */
		return false;
	}
	*last_time = t;
	return true;
}

/* P_REVOKE: the blocks revoke block b of transaction tid names, remembered (rv_add). */
static errcode_t revoke_records(struct replay *r, const char *b, uint32_t tid)
{
	struct imgfmt_journal *j = r->j;
	uint32_t count = get32(b + 12);
	size_t rl = j->is64 ? 8 : 4;
	errcode_t rc;

	if (count > j->bs - (j->csum ? 4 : 0)) {
		snprintf(r->why, r->n, "a revoke block of transaction %u is corrupt", tid);
		return EXT2_ET_CORRUPT_JOURNAL_SB;
	}
	for (size_t o = 16; o + rl <= count; o += rl) {
		uint64_t blk = rl == 8 ? (uint64_t)get32(b + o) << 32 | get32(b + o + 4)
				       : get32(b + o);
		if ((rc = rv_add(r, blk, tid)))
			return rc;
	}
	return 0;
}

/* One pass over the log, as recovery.c's do_one_pass. */
static errcode_t pass(struct replay *r, int kind)
{
	struct imgfmt_journal *j = r->j;
	uint32_t tid = j->seq, at = j->start, v1sum = ~0u;
	uint64_t last_time = 0;
	bool check_time = false;
	char *b = j->buf, *d = malloc(j->bs);
	errcode_t rc = 0;
	unsigned long steps = 0;

	if (!d)
		return ENOMEM;
	for (;;) {
		if (kind != P_SCAN && !tid_ge(r->end, tid + 1))
			break;
		if (++steps > 4ull * j->len) {
			snprintf(r->why, r->n, "the journal's log does not end");
			rc = EXT2_ET_CORRUPT_JOURNAL_SB;
			break;
		}
		if ((rc = jread(j, at, b))) {
			snprintf(r->why, r->n, "cannot read journal block %u", at);
			break;
		}
		at = wrap(j, at + 1);
		if (get32(b) != JMAGIC || get32(b + 8) != tid)
			break;
		uint32_t type = get32(b + 4);
		if (type == JB_DESCRIPTOR) {
			memcpy(d, b, j->bs);
			if (j->csum && get32(d + j->bs - 4) != block_csum(j, d, j->bs - 4, j->bs, j->seed)) {
				if (kind != P_SCAN) {
					snprintf(r->why, r->n, "a descriptor block of transaction %u "
						 "has a bad checksum", tid);
					rc = EXT2_ET_CORRUPT_JOURNAL_SB;
					break;
				}
				check_time = true;
			}
			size_t k = each_tag(j, d, NULL, r);
			if (kind == P_SCAN && j->v1 && !check_time)
				v1sum = ext2fs_crc32_be(v1sum, (unsigned char *)d, j->bs);
			if ((rc = pass_tags(r, kind, d, k, tid, check_time, &at, &v1sum)))
				break;
			continue;
		}
		if (type == JB_COMMIT) {
			if (kind == P_SCAN &&
			    !commit_scan(r, b, tid, check_time, &last_time, &v1sum, &rc))
				break;
			if (kind == P_REPLAY)
				r->st->transactions++;
			tid++;
			continue;
		}
		if (type == JB_REVOKE) {
			if (kind == P_SCAN && j->csum &&
			    get32(b + j->bs - 4) != block_csum(j, b, j->bs - 4, j->bs, j->seed))
				check_time = true;
			if (kind != P_REVOKE)
				continue;
			if ((rc = revoke_records(r, b, tid)))
				break;
			continue;
		}
		break; /* an unknown block type ends the log */
	}
	if (kind == P_SCAN && !rc) {
		r->end = tid;
		r->end_known = true;
	}
	free(d);
	return rc;
}

errcode_t imgfmt_journal_replay(struct imgfmt_journal *j, imgfmt_replay_put put, void *arg,
				struct imgfmt_replay *st, char *why, size_t n)
{
	struct replay r = { .j = j, .put = put, .arg = arg, .st = st, .why = why, .n = n };
	errcode_t rc = 0;

	memset(st, 0, sizeof(*st));
	*why = 0;
	if (!j->start)
		return 0;
	if (!(rc = pass(&r, P_SCAN)) && !(rc = pass(&r, P_REVOKE)))
		rc = pass(&r, P_REPLAY);
	free(r.rv);
	if (!rc && r.end_known)
		j->seq = r.end + 1; /* past everything in the log, as the kernel restarts it */
	return rc;
}
