/*
 * The directory digest restorecon keeps in security.sehash: libselinux 3.4's
 * selabel_hash_all_partial_matches(), that is label_file.c hash_all_partial_matches() over
 * lookup_all(key, mode 0, partial). Its rules, each checked against the library by
 * tests/t_digest.sh:
 *  - the key is cleaned and substituted as for a lookup;
 *  - every spec is a candidate: a partial lookup skips the stem test, and mode 0 admits every type
 *    (so the specs index.c marks dead count here);
 *  - specs are tried in lookup order (the plain tier, then the regex tier, each from its last line
 *    up), and each that PCRE2 matches fully or partially (PCRE2_PARTIAL_SOFT on "^REGEX$" compiled
 *    with DOTALL) is hashed as: regex NUL, the spec's mode as a host mode_t, context NUL;
 *  - the first matching <<none>> spec ends the list, hashed or not, and so does a PCRE2 error
 *    (we answer EIO there rather than a digest of the specs before it).
 *
 * libselinux runs every regex of the policy for every directory. We run few: every string a
 * spec's "^REGEX$" matches starts with its literal prefix P (fc_scan_regex), so a key K can match
 * it, fully or partially, only when P is a prefix of K or K a prefix of P. In the second case,
 * with K shorter than P, PCRE2 runs out of subject among P's literal characters: a partial match,
 * always, so the spec is taken without running it. Only the specs whose P is a prefix of K are
 * tried (literal ones by comparing strings). A sorted array of the distinct prefixes finds both
 * kinds: the prefixes of K lie on one chain of parents, and the prefixes that extend K are one
 * contiguous run of the array.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/sha1.h>
#include <nettle/version.h>

#include "internal.h"

/* nettle 3.10 dropped the length argument of the digest functions. */
#if NETTLE_VERSION_MAJOR > 3 || (NETTLE_VERSION_MAJOR == 3 && NETTLE_VERSION_MINOR >= 10)
#define sha1_final(ctx, out) sha1_digest(ctx, out)
#else
#define sha1_final(ctx, out) sha1_digest(ctx, SHA1_DIGEST_SIZE, out)
#endif

_Static_assert(FC_DIGEST_LEN == SHA1_DIGEST_SIZE, "a digest is one SHA-1");

/* Ranks: the position in libselinux's hashing order, 0 first. */
#define NO_RANK UINT32_MAX

struct dprefix {
	uint32_t off, len;   /* the text, in fc_dindex.text */
	int32_t parent;      /* the longest other prefix in the array that prefixes this one */
	uint32_t first, end; /* the ranks of its specs: fc_dindex.ranks[first..end) */
	_Atomic bool jitted; /* its regexes have their partial-match JIT code (under set->lock) */
	_Atomic uint32_t uses; /* keys that reached it: JIT pays only for the busy ones */
	uint32_t nfilt;      /* how many of its specs the next-byte filter may leave out */
	_Atomic(struct nexttab *) next; /* that filter, made on the first key that needs it */
};

/*
 * The next-byte filter of a prefix P. A spec that matches a key K, fully or partially, also
 * matches partially K's first |P| + 1 bytes (P and the byte c after it): the match that reads K
 * reads P, then c, and there runs out of subject, which PCRE2_PARTIAL_SOFT reports. So the
 * specs that do not match P + c need not be tried on any key that goes on with c: by[c] has
 * a bit for each spec of P (in ranks order) that must be tried, made the first time a key
 * brings c. That holds for a regex that reads its subject forwards from the start and decides
 * nothing at the end of the subject that it would not decide at that byte: it does not hold for
 * a top-level '|' (whose prefix is empty: the empty prefix has no filter), lookaround, \b and other assertions, back
 * references, atomic groups and possessive quantifiers, which filter_safe() keeps out.
 * Fewer steps were taken on K than on P + c, so a spec that fails with a PCRE2 error on K (which
 * ends libselinux's list) does so on P + c too, and is tried.
 */
struct nexttab {
	_Atomic(uint64_t *) by[256];
};

/* A prefix gets a filter when at least this many of its specs can be left out by one. */
#define FILTER_MIN 4

/* How many keys reach a prefix before its regexes get JIT code: compiling costs a few hundred
 * matches' time, a relabel that visits few directories would spend more on it than it saves. */
#define JIT_AFTER 1024

/* One malloc'd block, kept in the set's bufs so that fc_free frees it. */
struct fc_dindex {
	uint32_t npre, nspecs, nwords;
	struct dprefix *pre;     /* sorted by text (bytes, then length) */
	uint32_t *ranks;         /* grouped by prefix, in pre[]'s order */
	uint32_t *spec_of;       /* rank -> index in set->specs */
	bool *jit_ok;            /* by rank: the regex has JIT code for partial matching */
	bool *filt;              /* by rank: the next-byte filter may leave it out (filter_safe) */
	char *text;
};

/* ---- building the index, on the first fc_digest of a set ---- */

struct pspec {
	uint32_t off, len, rank;
};

static int by_text(const void *a, const void *b, void *arg)
{
	const struct pspec *x = a, *y = b;
	const char *text = arg;
	int c = memcmp(text + x->off, text + y->off, x->len < y->len ? x->len : y->len);

	if (c)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* libselinux's order: the plain tier, then the regex tier, each from the highest priority. */
static void rank_specs(const struct fc_set *set, uint32_t *spec_of)
{
	uint32_t r = 0;

	for (unsigned p = set->plain.nspecs; p-- > 0;)
		spec_of[r++] = set->plain.order[p];
	for (unsigned p = set->regex.nspecs; p-- > 0;)
		spec_of[r++] = set->regex.order[p];
}

/* Each spec's literal prefix into arena; ps[] sorted by it. For a literal spec the prefix is the
 * whole string it matches. (index.c's spec.q may be lengthened by the stem rule, which partial
 * lookups do not apply: that is why the regexes are scanned again.) */
static void scan_prefixes(const struct fc_set *set, const uint32_t *spec_of, struct pspec *ps,
			  char *arena)
{
	char req[256 + 1]; /* fc_scan_regex's literal run, unused here */
	uint32_t used = 0;

	for (uint32_t r = 0; r < set->nspecs; r++) {
		const char *re = set->specs[spec_of[r]].pub.regex;
		struct regex_shape sh;
		size_t plen, reqlen;

		fc_scan_regex(re, &sh, arena + used, &plen, req, &reqlen);
		ps[r] = (struct pspec){ used, (uint32_t)plen, r };
		used += (uint32_t)plen;
	}
	qsort_r(ps, set->nspecs, sizeof(*ps), by_text, arena);
}

static bool is_prefix(const char *text, const struct dprefix *p, const char *s, size_t len)
{
	return p->len <= len && memcmp(text + p->off, s, p->len) == 0;
}

/* Fills pre[], ranks[] and text from the sorted ps[]; returns the number of prefixes. */
static uint32_t group_prefixes(struct fc_dindex *d, const struct pspec *ps, const char *arena,
			       int32_t *stack)
{
	uint32_t n = 0, used = 0;
	int depth = 0;

	for (uint32_t i = 0; i < d->nspecs; i++) {
		const struct pspec *s = &ps[i];
		struct dprefix *p = n ? &d->pre[n - 1] : NULL;

		d->ranks[i] = s->rank;
		if (p && p->len == s->len && !memcmp(d->text + p->off, arena + s->off, s->len)) {
			p->end = i + 1;
			continue;
		}
		p = &d->pre[n];
		memcpy(d->text + used, arena + s->off, s->len);
		*p = (struct dprefix){ used, s->len, -1, i, i + 1, false, 0, 0, NULL };
		used += s->len;
		/* In sorted order the prefixes of p that came before are on the stack. */
		while (depth &&
		       !is_prefix(d->text, &d->pre[stack[depth - 1]], d->text + p->off, p->len))
			depth--;
		p->parent = depth ? stack[depth - 1] : -1;
		stack[depth++] = (int32_t)n++;
	}
	return n;
}

/* Whether the next-byte filter holds for the regex (see struct nexttab): no "(?" (lookaround,
 * atomic groups, options, callouts, named references), no escape of a letter or digit but the
 * classes \d \s \w and their negations, no possessive quantifier. Errs on the safe side: a
 * class such as "[(?]" counts as well. */
static bool filter_safe(const char *re)
{
	for (const char *q = re; *q; q++) {
		if (*q == '\\') {
			char x = *++q;
			bool alnum = (x >= '0' && x <= '9') || (x >= 'a' && x <= 'z') ||
				     (x >= 'A' && x <= 'Z');
			if (!x || (alnum && !strchr("dDsSwW", x)))
				return false;
		} else if (*q == '(' && q[1] == '?') {
			return false;
		} else if (*q == '+' && q > re && strchr("*+?}", q[-1])) {
			return false;
		}
	}
	return true;
}

static struct fc_dindex *build_index(struct fc_set *set)
{
	size_t n = set->nspecs, textlen = 0, size;
	struct fc_dindex *d = NULL;
	struct pspec *ps = malloc((n + 1) * sizeof(*ps));
	uint32_t *spec_of = malloc((n + 1) * sizeof(*spec_of));
	int32_t *stack = malloc((n + 1) * sizeof(*stack));
	char *arena;

	for (size_t i = 0; i < n; i++)
		textlen += strlen(set->specs[i].pub.regex);
	arena = malloc(textlen + 1);
	if (!ps || !spec_of || !stack || !arena || n >= NO_RANK)
		goto out;
	rank_specs(set, spec_of);
	scan_prefixes(set, spec_of, ps, arena);

	size = sizeof(*d) + n * sizeof(struct dprefix) + 2 * n * sizeof(uint32_t) + 2 * n + textlen +
	       1;
	d = malloc(size);
	if (!d)
		goto out;
	d->nspecs = (uint32_t)n;
	d->nwords = (uint32_t)(n / 64 + 1); /* never 0: scratch_get grows to it */
	d->pre = (struct dprefix *)(d + 1);
	d->ranks = (uint32_t *)(d->pre + n);
	d->spec_of = d->ranks + n;
	d->jit_ok = (bool *)(d->spec_of + n);
	d->filt = d->jit_ok + n;
	d->text = (char *)(d->filt + n);
	memcpy(d->spec_of, spec_of, n * sizeof(*spec_of));
	for (uint32_t r = 0; r < n; r++) {
		const struct spec *sp = &set->specs[spec_of[r]];
		d->filt[r] = sp->kind != SK_LITERAL && filter_safe(sp->pub.regex);
	}
	d->npre = group_prefixes(d, ps, arena, stack);
	for (uint32_t i = 0; i < d->npre; i++) {
		struct dprefix *p = &d->pre[i];
		p->nfilt = 0;
		/* the empty prefix is that of a regex with a top-level '|', "^A|B$": B is not anchored
		 * at the start and may match anywhere in the key, not only from its first bytes */
		for (uint32_t j = p->first; p->len && j < p->end; j++)
			p->nfilt += d->filt[d->ranks[j]];
		atomic_init(&p->next, NULL);
	}
	if (fc_keep_buf(set, (char *)d))
		d = NULL; /* freed there */
out:
	free(ps);
	free(spec_of);
	free(stack);
	free(arena);
	return d;
}

static const struct fc_dindex *get_index(const struct fc_set *cset)
{
	struct fc_set *set = (struct fc_set *)cset; /* the index is filled in lazily */
	struct fc_dindex *d = atomic_load_explicit(&set->dindex, memory_order_acquire);

	if (d)
		return d;
	pthread_mutex_lock(&set->lock);
	d = atomic_load_explicit(&set->dindex, memory_order_relaxed);
	if (!d) {
		d = build_index(set);
		if (d)
			atomic_store_explicit(&set->dindex, d, memory_order_release);
	}
	pthread_mutex_unlock(&set->lock);
	return d;
}

/* ---- per-thread scratch: nothing is allocated per digest once it has grown ---- */

struct dscratch {
	pcre2_match_data *md; /* first: fc_scratch_new makes it */
	char *key[2];
	size_t keycap;
	uint64_t *bits; /* one bit per rank: the spec matches */
	size_t nwords;
};

static __thread struct dscratch *tls;

static void scratch_free(void *p)
{
	struct dscratch *s = p;

	if (!s)
		return;
	free(s->key[0]);
	free(s->key[1]);
	free(s->bits);
	pcre2_match_data_free(s->md);
	free(s);
}

static bool grow(void **p, size_t size)
{
	void *np = realloc(*p, size);

	if (np)
		*p = np;
	return np != NULL;
}

static struct dscratch *scratch_get(size_t keylen, size_t nwords)
{
	struct dscratch *s = tls;

	if (!s) {
		if (!(s = fc_scratch_new(FC_SCRATCH_DIGEST, sizeof(*s), scratch_free)))
			return NULL;
		tls = s;
	}
	if (keylen > s->keycap) {
		size_t cap = keylen < 256 ? 256 : keylen * 2;
		if (!grow((void **)&s->key[0], cap) || !grow((void **)&s->key[1], cap))
			return NULL;
		/* PCRE2's JIT reads unanchored searches in whole SIMD words, past the key's end
		 * (and ignores those bytes): let them be defined, for valgrind */
		memset(s->key[0], 0, cap);
		memset(s->key[1], 0, cap);
		s->keycap = cap;
	}
	if (nwords > s->nwords) {
		if (!grow((void **)&s->bits, nwords * sizeof(uint64_t)))
			return NULL;
		s->nwords = nwords;
	}
	return s;
}


/* ---- which specs match ---- */

static int cmp_prefix(const struct fc_dindex *d, uint32_t i, const char *key, size_t len)
{
	const struct dprefix *p = &d->pre[i];
	int c = memcmp(d->text + p->off, key, p->len < len ? p->len : len);

	if (c)
		return c;
	return p->len < len ? -1 : p->len > len;
}

/* The first prefix not below key. */
static uint32_t lower_bound(const struct fc_dindex *d, const char *key, size_t len)
{
	uint32_t lo = 0, hi = d->npre;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (cmp_prefix(d, mid, key, len) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first prefix from lo on that does not start with key (those that do come first). */
static uint32_t end_of_extensions(const struct fc_dindex *d, uint32_t lo, const char *key,
				  size_t len)
{
	uint32_t hi = d->npre;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct dprefix *p = &d->pre[mid];
		if (p->len >= len && !memcmp(d->text + p->off, key, len))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The regexes of a prefix get JIT code for partial matching once JIT_AFTER keys have reached them:
 * the interpreter spends most of its time copying backtracking frames for the optional ".*"
 * groups that refpolicy puts after "/usr/".
 * The code is added to the spec's own pattern, so fc_free frees it; the lookups' JIT mode is
 * another slot of it. Under set->lock, and published by p->jitted, so that no thread matches a
 * pattern while its partial mode is being made.
 */
static bool jit_prefix(const struct fc_set *cset, const struct fc_dindex *d, struct dprefix *p)
{
	struct fc_set *set = (struct fc_set *)cset;

	if (atomic_load_explicit(&p->jitted, memory_order_acquire))
		return true;
	if (atomic_fetch_add_explicit(&p->uses, 1, memory_order_relaxed) < JIT_AFTER)
		return false;
	pthread_mutex_lock(&set->lock);
	if (!atomic_load_explicit(&p->jitted, memory_order_relaxed)) {
		for (uint32_t j = p->first; j < p->end; j++) {
			uint32_t r = d->ranks[j];
			pcre2_code *re = fc_code(&set->specs[d->spec_of[r]]);
			/* when JIT fails (or is not built in) the interpreter answers */
			d->jit_ok[r] = re && pcre2_jit_compile(re, PCRE2_JIT_PARTIAL_SOFT) == 0;
		}
		atomic_store_explicit(&p->jitted, true, memory_order_release);
	}
	pthread_mutex_unlock(&set->lock);
	return true;
}

/* 1 when the spec, whose literal prefix (plen bytes) key starts with, matches key fully or
 * partially; 0 when not; -1 on a PCRE2 error. */
static int try_spec(const struct spec *s, bool jit_ok, size_t plen, const char *key, size_t len,
		    pcre2_match_data *md)
{
	int rc = PCRE2_ERROR_JIT_BADOPTION;

	if (s->kind == SK_LITERAL) /* "^L$": K == L, or L and the final newline "$" allows */
		return len == plen || (len == plen + 1 && key[plen] == '\n');
	pcre2_code *re = fc_code(s);
	if (!re)
		return -1;
	if (jit_ok)
		rc = pcre2_jit_match(re, (PCRE2_SPTR)key, len, 0, PCRE2_PARTIAL_SOFT, md, NULL);
	if (rc < 0 && rc != PCRE2_ERROR_NOMATCH && rc != PCRE2_ERROR_PARTIAL)
		/* JIT has its own stack and limits: the interpreter's answer is libselinux's */
		rc = pcre2_match(re, (PCRE2_SPTR)key, len, 0, PCRE2_PARTIAL_SOFT | PCRE2_NO_JIT,
				 md, NULL);
	if (rc >= 0 || rc == PCRE2_ERROR_PARTIAL)
		return 1; /* 0: a match with more groups than md holds */
	return rc == PCRE2_ERROR_NOMATCH ? 0 : -1;
}

static void set_bit(uint64_t *bits, uint32_t r)
{
	bits[r / 64] |= 1ull << (r % 64);
}

/* The next-byte filter of p for the byte after it in key (len > p->len): NULL for none (too few
 * specs to leave out, or no memory). Made under set->lock, with the interpreter. */
static const uint64_t *next_filter(const struct fc_set *cset, const struct fc_dindex *d,
				   struct dprefix *p, const char *key, pcre2_match_data *md)
{
	struct fc_set *set = (struct fc_set *)cset;
	unsigned char c = (unsigned char)key[p->len];
	struct nexttab *t = atomic_load_explicit(&p->next, memory_order_acquire);
	uint64_t *bits = t ? atomic_load_explicit(&t->by[c], memory_order_acquire) : NULL;

	if (bits || p->nfilt < FILTER_MIN)
		return bits;
	pthread_mutex_lock(&set->lock);
	t = atomic_load_explicit(&p->next, memory_order_relaxed);
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (t && fc_keep_buf(set, (char *)t))
			t = NULL; /* freed there */
		if (t)
			atomic_store_explicit(&p->next, t, memory_order_release);
	}
	bits = t ? atomic_load_explicit(&t->by[c], memory_order_relaxed) : NULL;
	if (t && !bits && (bits = calloc((p->end - p->first) / 64 + 1, sizeof(*bits)))) {
		if (fc_keep_buf(set, (char *)bits)) {
			bits = NULL;
		} else {
			for (uint32_t j = p->first; j < p->end; j++) {
				uint32_t r = d->ranks[j];
				if (!d->filt[r] || try_spec(&set->specs[d->spec_of[r]], false, p->len,
							    key, p->len + 1, md))
					set_bit(bits, j - p->first);
			}
			atomic_store_explicit(&t->by[c], bits, memory_order_release);
		}
	}
	pthread_mutex_unlock(&set->lock);
	return bits;
}

/* Tries the specs whose prefix is a prefix of key. a is the last prefix not above key: the
 * prefixes of key are all on its chain of parents, since every prefix between the longest one
 * and key extends it. *err becomes the lowest rank where PCRE2 failed. */
static void mark_prefixes_of(const struct fc_set *set, const struct fc_dindex *d, int32_t a,
			     const char *key, size_t len, struct dscratch *s, uint32_t *err)
{
	while (a >= 0 && !is_prefix(d->text, &d->pre[a], key, len))
		a = d->pre[a].parent;
	for (; a >= 0; a = d->pre[a].parent) {
		struct dprefix *p = &d->pre[a];
		bool jitted = jit_prefix(set, d, p);
		const uint64_t *need = len > p->len ? next_filter(set, d, p, key, s->md) : NULL;
		for (uint32_t j = p->first; j < p->end; j++) {
			uint32_t r = d->ranks[j], k = j - p->first;
			if (r > *err)
				continue; /* libselinux stops at the error: never reached */
			if (need && !(need[k / 64] >> (k % 64) & 1))
				continue; /* cannot match: P and the byte after it do not */
			int m = try_spec(&set->specs[d->spec_of[r]], jitted && d->jit_ok[r], p->len, key,
					 len, s->md);
			if (m > 0)
				set_bit(s->bits, r);
			else if (m < 0)
				*err = r;
		}
	}
}

/* Takes the specs whose prefix extends key, pre[lo..): key ends inside their literal text. */
static void mark_extensions(const struct fc_dindex *d, uint32_t lo, const char *key, size_t len,
			    uint64_t *bits)
{
	uint32_t hi = end_of_extensions(d, lo, key, len);

	if (lo >= hi)
		return;
	for (uint32_t j = d->pre[lo].first; j < d->pre[hi - 1].end; j++)
		set_bit(bits, d->ranks[j]);
}

/* Calls fn for the marked specs in rank order, up to the first <<none>> one; *count says how
 * many. EIO when the PCRE2 error at rank err comes first. */
static int visit(const struct fc_set *set, const struct fc_dindex *d, const uint64_t *bits,
		 uint32_t err, int (*fn)(const struct spec *, void *), void *arg, unsigned *count)
{
	for (uint32_t w = 0; w < d->nwords; w++) {
		for (uint64_t b = bits[w]; b; b &= b - 1) {
			uint32_t r = w * 64 + (uint32_t)__builtin_ctzll(b);
			const struct spec *s = &set->specs[d->spec_of[r]];
			if (r > err)
				return EIO;
			if (s->none)
				return 0;
			++*count;
			if (fn(s, arg))
				return 0;
		}
	}
	return err != NO_RANK ? EIO : 0;
}

static int digest_walk(const fc_set *set, const char *dir, int (*fn)(const struct spec *, void *),
		       void *arg, unsigned *count)
{
	const struct fc_dindex *d;
	struct dscratch *s;
	const char *key;
	size_t dlen, len;
	uint32_t lo, err = NO_RANK;
	bool exact;

	*count = 0;
	if (!dir || dir[0] != '/' || set->compare_only)
		return EINVAL;
	d = get_index(set);
	dlen = strlen(dir);
	s = d ? scratch_get(dlen + fc_key_room(set), d->nwords) : NULL;
	if (!s)
		return ENOMEM;
	key = fc_make_key(set, dir, dlen, s->key[0], s->key[1], &len);
	memset(s->bits, 0, d->nwords * sizeof(uint64_t));
	lo = lower_bound(d, key, len);
	exact = lo < d->npre && cmp_prefix(d, lo, key, len) == 0;
	mark_prefixes_of(set, d, exact ? (int32_t)lo : (int32_t)lo - 1, key, len, s, &err);
	mark_extensions(d, exact ? lo + 1 : lo, key, len, s->bits);
	return visit(set, d, s->bits, err, fn, arg, count);
}

/* ---- the API ---- */

static int feed(const struct spec *s, void *arg)
{
	struct sha1_ctx *ctx = arg;
	mode_t mode = s->pub.mode; /* libselinux hashes its own mode_t, host order */

	sha1_update(ctx, strlen(s->pub.regex) + 1, (const uint8_t *)s->pub.regex);
	sha1_update(ctx, sizeof(mode), (const uint8_t *)&mode);
	sha1_update(ctx, strlen(s->pub.context) + 1, (const uint8_t *)s->pub.context);
	return 0;
}

int fc_digest(const fc_set *set, const char *dir, unsigned char out[FC_DIGEST_LEN])
{
	struct sha1_ctx ctx;
	unsigned n;
	int rc;

	sha1_init(&ctx);
	rc = digest_walk(set, dir, feed, &ctx, &n);
	if (rc)
		return rc;
	if (!n)
		return ENOENT;
	sha1_final(&ctx, out);
	return 0;
}

struct explain {
	int (*fn)(const struct fc_spec *, void *);
	void *arg;
};

static int explain_one(const struct spec *s, void *arg)
{
	struct explain *e = arg;

	return e->fn(&s->pub, e->arg);
}

int fc_digest_explain(const fc_set *set, const char *dir,
		      int (*fn)(const struct fc_spec *spec, void *arg), void *arg)
{
	struct explain e = { fn, arg };
	unsigned n;

	return digest_walk(set, dir, explain_one, &e, &n);
}
