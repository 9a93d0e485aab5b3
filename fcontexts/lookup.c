/* Loading a set, and looking paths up in it. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- per-thread scratch: nothing is allocated per lookup once these have grown ---- */

struct scratch {
	pcre2_match_data *md; /* first: fc_scratch_new makes it */
	char *buf[2];
	size_t cap;
	/* the byte pairs of the last key's directory part (up to its last '/'): the next key of
	 * a walk is most often in the same directory, and hashing the pairs of a whole key of
	 * tens of bytes was a third of a lookup */
	char *dir;
	size_t dirlen, dircap;
	uint64_t dirpairs[4];
	struct dirmemos memo; /* the last directories' (dirmemo.c) */
};

static __thread struct scratch *tls;

static void scratch_free(void *p)
{
	struct scratch *s = p;
	if (!s)
		return;
	free(s->buf[0]);
	free(s->buf[1]);
	free(s->dir);
	for (int i = 0; i < FC_DIR_SLOTS; i++)
		fc_dir_free(&s->memo.slot[i]);
	pcre2_match_data_free(s->md);
	free(s);
}

static struct scratch *scratch_get(size_t need)
{
	struct scratch *s = tls;

	if (!s) {
		if (!(s = fc_scratch_new(FC_SCRATCH_LOOKUP, sizeof(*s), scratch_free)))
			return NULL;
		tls = s;
	}
	if (need > s->cap) {
		size_t cap = need < 256 ? 256 : need * 2;
		char *a = realloc(s->buf[0], cap), *b;
		if (!a)
			return NULL;
		s->buf[0] = a;
		b = realloc(s->buf[1], cap);
		if (!b)
			return NULL;
		s->buf[1] = b;
		s->cap = cap;
	}
	return s;
}

/* ---- the key, as 3.4 cleans it ---- */

void fc_index_subs(struct sublist *l)
{
	l->maxdst = 0;
	memset(l->first, 0, sizeof(l->first));
	for (size_t i = 0; i < l->n; i++) {
		fc_first_set(l->first, l->v[i].src, l->v[i].slen);
		if (l->v[i].dlen > l->maxdst)
			l->maxdst = l->v[i].dlen;
	}
}

/* Applies the last-listed SRC that prefixes key up to a '/' or the key's end. */
static bool apply_subs(const struct sublist *l, const char *key, size_t len, char *out,
		       size_t *outlen)
{
	if (!fc_first_bit(l->first, key, len))
		return false;
	for (size_t i = l->n; i-- > 0;) {
		const struct subst *s = &l->v[i];
		if (s->slen > len || (s->slen > 1 && key[1] != s->src[1]) || memcmp(key, s->src, s->slen) != 0)
			continue;
		if (key[s->slen] != '/' && key[s->slen] != 0)
			continue;
		size_t skip = s->slen;
		if (key[s->slen] == '/' && s->dlen == 1 && s->dst[0] == '/')
			skip++;
		memcpy(out, s->dst, s->dlen);
		memcpy(out + s->dlen, key + skip, len - skip);
		*outlen = s->dlen + len - skip;
		out[*outlen] = 0;
		return true;
	}
	return false;
}

/* Whether p[0..n) may hold "//": eight bytes a step; a false yes ("/." can look like one)
 * only costs the slow path. */
static bool maybe_double_slash(const char *p, size_t n)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	uint64_t prev = 0, w, t, z;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		t = w ^ (ones * '/');
		z = (t - ones) & ~t & highs; /* the high bit of each byte that is (or may be) '/' */
		if ((z & (z >> 8)) || (prev && (z & 0x80)))
			return true;
		prev = z >> 63;
	}
	for (; i < n; i++)
		if (p[i] == '/' && i && p[i - 1] == '/')
			return true;
	return false;
}

const char *fc_make_key(const struct fc_set *set, const char *path, size_t len, char *a, char *b,
			size_t *keylen)
{
	const char *key = a;
	size_t n = 0;

	if (len && (len == 1 || path[len - 1] != '/') && !maybe_double_slash(path, len)) {
		/* already clean (the usual case): the path itself, NUL-terminated at len */
		key = path;
		n = len;
	} else {
		/* Copy up to each '/', then skip the slashes that follow it. */
		for (size_t i = 0; i < len;) {
			const char *sl = memchr(path + i, '/', len - i);
			size_t upto = sl ? (size_t)(sl - path) + 1 : len;
			memcpy(a + n, path + i, upto - i);
			n += upto - i;
			for (i = upto; i < len && path[i] == '/'; i++)
				;
		}
		if (n > 1 && a[n - 1] == '/')
			n--;
		a[n] = 0;
	}
	if (set->subs.n && apply_subs(&set->subs, key, n, key == a ? b : a, &n))
		key = key == a ? b : a;
	if (set->dist.n && apply_subs(&set->dist, key, n, key == a ? b : a, &n))
		key = key == a ? b : a;
	*keylen = n;
	return key;
}

static int make_key(const struct fc_set *set, const char *path, struct scratch **sp,
		    const char **key, size_t *keylen)
{
	size_t len = strlen(path);
	struct scratch *s;

	if (!len)
		return EINVAL;
	if (!(s = scratch_get(len + fc_key_room(set))))
		return ENOMEM;
	*key = fc_make_key(set, path, len, s->buf[0], s->buf[1], keylen);
	*sp = s;
	return 0;
}

/* ---- matching ---- */

/* The byte pairs of key[0..len) (fc_pairs), from the cache when its directory part is the
 * previous key's. */
static void key_pairs(struct scratch *s, const char *key, size_t len, uint64_t pairs[4])
{
	const char *sl = len ? memrchr(key, '/', len) : NULL;
	size_t d = sl ? (size_t)(sl - key) + 1 : 0;
	uint64_t tail[4];

	if (d != s->dirlen || (d && memcmp(key, s->dir, d) != 0)) {
		if (d > s->dircap) {
			char *nd = realloc(s->dir, d * 2);
			if (!nd) {
				fc_pairs(key, len, pairs);
				return;
			}
			s->dir = nd;
			s->dircap = d * 2;
		}
		memcpy(s->dir, key, d);
		s->dirlen = d;
		fc_pairs(key, d, s->dirpairs);
	}
	/* the pairs from the last '/' on (it ends the directory part and starts the rest) */
	fc_pairs(key + (d ? d - 1 : 0), len - (d ? d - 1 : 0), tail);
	for (int i = 0; i < 4; i++)
		pairs[i] = s->dirpairs[i] | tail[i];
}

#define NOMATCH (-1)
#define FAILED (-2)

/* Whether sp's regex matches key: 1, 0, FAILED on a PCRE2 error, -ENOMEM. */
static int match_re(const struct spec *sp, const char *key, size_t len, pcre2_match_data *md)
{
	pcre2_code *j = atomic_load_explicit(&sp->jre, memory_order_acquire), *re;
	int rc;

	if (j) {
		rc = pcre2_jit_match(j, (PCRE2_SPTR)key, len, 0, 0, md, NULL);
	} else {
		if (!(re = fc_code(sp)))
			return -ENOMEM;
		rc = pcre2_match(re, (PCRE2_SPTR)key, len, 0, PCRE2_NO_JIT, md, NULL);
		fc_count_try(sp);
	}
	if (rc >= 0)
		return 1;
	return rc == PCRE2_ERROR_NOMATCH ? 0 : FAILED;
}

/* Whether sp matches key, which starts with sp->q: match_re's answers. pairs[4] says whether
 * pairs[0..3] hold the key's byte pairs yet. (Inlined: a call per candidate, of some twenty
 * a lookup, cost the general way a tenth.) */
static inline __attribute__((always_inline)) int try_spec(const struct spec *sp, const char *key, size_t len, struct scratch *s,
		    uint64_t pairs[5])
{
	/* the key starts with sp->q: these forms need nothing more */
	if (sp->form == FORM_ANYSUFFIX)
		return 1;
	if (sp->form == FORM_SUBTREE) {
		size_t q = sp->qlen;
		return len == q || key[q] == '/' || (len == q + 1 && key[q] == '\n');
	}
	if (sp->reqlen) {
		if (!pairs[4]) { /* the key's byte pairs, when first needed */
			key_pairs(s, key, len, pairs);
			pairs[4] = 1;
		}
		if ((sp->pairs[0] & ~pairs[0]) | (sp->pairs[1] & ~pairs[1]) |
		    (sp->pairs[2] & ~pairs[2]) | (sp->pairs[3] & ~pairs[3]))
			return 0;
		if (!memmem(key + sp->reqfrom, len - sp->reqfrom, sp->req, sp->reqlen))
			return 0;
	}
	return match_re(sp, key, len, s->md);
}

/* The first spec of the tier's candidates for required prefix qid, in 3.4's order, that
 * matches; NOMATCH; FAILED on a PCRE2 error; or -ENOMEM. */
static int run_cands(const struct fc_set *set, const struct tier *t, int qid, const char *key,
		     size_t len, unsigned cls, struct scratch *s, uint64_t pairs[5])
{
	const struct chunkset *cs = fc_chunkset(set, t, qid, cls);

	if (!cs)
		return -ENOMEM;
	for (unsigned i = 0; i < cs->nall; i++) {
		int r = try_spec(&set->specs[cs->all[i]], key, len, s, pairs);
		if (r)
			return r > 0 ? (int)cs->all[i] : r;
	}
	return NOMATCH;
}

/* The first spec of the tier, in 3.4's order, that the key's prefix leaves possible and that
 * matches (run_cands' answers). */
static int run_tier(const struct fc_set *set, const struct tier *t, const char *key, size_t len,
		    unsigned cls, struct scratch *s, uint64_t pairs[5])
{
	int qid = fc_find_q(t, key, len);

	return qid < 0 ? NOMATCH : run_cands(set, t, qid, key, len, cls, s, pairs);
}

/* Whether h[0..hn) holds n[0..nn) (nn > 0): for a name and a short run, quicker than memmem. */
static bool holds(const char *h, size_t hn, const char *n, size_t nn)
{
	for (size_t i = 0; i + nn <= hn; i++)
		if (h[i] == n[0] && h[i + nn - 1] == n[nn - 1] && memcmp(h + i, n, nn) == 0)
			return true;
	return false;
}

/* run_cands over a directory's list (dirmemo.c) for key = DIR/NAME, NAME at name[0..nlen). */
static int run_dir_list(const struct fc_set *set, const struct dtier *dt, const char *key,
			size_t len, const char *name, size_t nlen, unsigned cls, struct scratch *s,
			uint64_t pairs[5])
{
	uint64_t nb = 0;
	bool have = false;

	for (unsigned i = 0; i < dt->n; i++) {
		const struct dcand *c = &dt->v[i];
		const struct spec *sp = &set->specs[c->spec];
		int r;
		if (!fc_class_ok(c->tclass, cls))
			continue;
		switch (c->how) {
		case D_SURE:
			return (int)c->spec;
		case D_WHOLE:
			r = try_spec(sp, key, len, s, pairs);
			break;
		case D_INNAME:
			if (!have) {
				nb = fc_byteset(name, nlen);
				have = true;
			}
			if ((c->need & ~nb) || !holds(name, nlen, c->b, c->blen))
				continue;
			r = match_re(sp, key, len, s->md);
			break;
		case D_HEAD:
			/* (b is never empty) */
			if (nlen < c->blen || name[0] != c->b[0] || memcmp(name, c->b, c->blen) != 0)
				continue;
			r = match_re(sp, key, len, s->md);
			break;
		default: /* D_PCRE */
			r = match_re(sp, key, len, s->md);
			break;
		}
		if (r)
			return r > 0 ? (int)c->spec : r;
	}
	return NOMATCH;
}

/* run_tier for a key in m's directory: the tree's walk goes on from DIR's end, and names whose
 * deepest required prefix is DIR's take the directory's list. */
static int run_tier_in(const struct fc_set *set, struct dirmemo *m, int k, const char *key,
		       size_t len, unsigned cls, struct scratch *s, uint64_t pairs[5])
{
	const struct tier *t = k ? &set->regex : &set->plain;
	struct qwalk w = m->tier[k].w;
	const struct dtier *dt;

	if (!w.n)
		return NOMATCH;
	fc_qwalk(&w, key, len);
	if (w.best < 0)
		return NOMATCH;
	if (w.best != m->tier[k].w.best)
		return run_cands(set, t, w.best, key, len, cls, s, pairs);
	if (!(dt = fc_dir_cands(m, set, k)))
		return -ENOMEM;
	return run_dir_list(set, dt, key, len, key + m->klen, len - m->klen, cls, s, pairs);
}

static int literal_best(const struct fc_set *set, const char *key, size_t len, unsigned cls)
{
	int best = NOMATCH;

	for (int pass = 0; pass < 2; pass++) {
		size_t l = len;
		if (pass == 1) {
			/* "$" also matches before a final newline */
			if (!len || key[len - 1] != '\n')
				break;
			l--;
		}
		/* no literal spec has this length: nothing to hash */
		size_t lb = l < 255 ? l : 255;
		if (!(set->litlens[lb >> 6] >> (lb & 63) & 1) || !fc_first_bit(set->litfirst, key, l))
			continue;
		for (int i = fc_literal_find(set, key, l); i >= 0; i = set->specs[i].next_same) {
			if (!fc_class_ok(set->specs[i].tclass, cls))
				continue;
			if (best < 0 || set->specs[i].tier_pos > set->specs[best].tier_pos)
				best = i;
			break;
		}
	}
	return best;
}

/* 3.4's filters and match for one spec, without any index: the reference the index must agree
 * with, used after a PCRE2 error and by fc_explain. */
static int spec_matches(const struct spec *s, const char *key, size_t len, unsigned cls,
			pcre2_match_data *md, int *code)
{
	if (s->dead || !fc_class_ok(s->tclass, cls))
		return 0;
	if (s->kind == SK_LITERAL)
		return (len == s->litlen || (len == s->litlen + 1 && key[len - 1] == '\n')) &&
		       memcmp(key, s->lit, s->litlen) == 0;
	if (len < s->qlen || memcmp(key, s->q, s->qlen) != 0)
		return 0;
	pcre2_code *re = fc_code(s);
	int rc = re ? pcre2_match(re, (PCRE2_SPTR)key, len, 0, PCRE2_NO_JIT, md, NULL)
		    : PCRE2_ERROR_NOMEMORY;
	if (rc == PCRE2_ERROR_NOMATCH)
		return 0;
	if (rc < 0 && code)
		*code = rc;
	return rc < 0 ? -1 : 1;
}

/* On EIO, *failed (when given) is the spec PCRE2 gave up on and *code its error. */
static int walk_all(const struct fc_set *set, const char *key, size_t len, unsigned cls,
		    pcre2_match_data *md, int (*fn)(const struct fc_spec *, void *), void *arg,
		    const struct fc_spec **failed, int *code)
{
	const struct tier *tiers[2] = { &set->plain, &set->regex };

	for (int k = 0; k < 2; k++) {
		const struct tier *t = tiers[k];
		for (unsigned p = t->nspecs; p-- > 0;) {
			const struct spec *s = &set->specs[t->order[p]];
			int m = spec_matches(s, key, len, cls, md, code);
			if (m < 0) {
				if (failed)
					*failed = &s->pub;
				return EIO;
			}
			if (m && fn(&s->pub, arg))
				return 0;
		}
	}
	return 0;
}

static int first_match(const struct fc_spec *spec, void *arg)
{
	*(const struct fc_spec **)arg = spec;
	return 1;
}

int fc_lookup(const fc_set *set, const char *path, mode_t mode, struct fc_result *res)
{
	struct scratch *s;
	struct dirmemo *m;
	const char *key = NULL;
	size_t len;
	unsigned cls = fc_mode_class(mode);
	int best, rc;

	res->status = FC_NOMATCH;
	res->context = NULL;
	res->spec = NULL;
	res->match_error = 0;
	if (!path || set->compare_only)
		return EINVAL;
	if (!(len = strlen(path)))
		return EINVAL;
	if (!(s = scratch_get(len + fc_key_room(set))))
		return ENOMEM;
	if ((m = fc_dir_memo(&s->memo, set, path, len)))
		key = fc_dir_key(m, path, len, &len);
	if (!key) {
		m = NULL;
		key = fc_make_key(set, path, len, s->buf[0], s->buf[1], &len);
	}

	best = set->lhash && (!m || m->lit) ? literal_best(set, key, len, cls) : NOMATCH;
	uint64_t pairs[5] = { 0 }; /* [4]: computed */
	if (set->plain.nq) {
		int r = m ? run_tier_in(set, m, 0, key, len, cls, s, pairs)
			  : run_tier(set, &set->plain, key, len, cls, s, pairs);
		if (r == FAILED || r < -2)
			goto slow;
		if (r >= 0 && (best < 0 || set->specs[r].tier_pos > set->specs[best].tier_pos))
			best = r;
	}
	if (best < 0 && set->regex.nq) {
		best = m ? run_tier_in(set, m, 1, key, len, cls, s, pairs)
			 : run_tier(set, &set->regex, key, len, cls, s, pairs);
		if (best == FAILED || best < -2)
			goto slow;
	}
	if (best >= 0)
		res->spec = &set->specs[best].pub;
	goto done;
slow:
	res->spec = NULL;
	if ((rc = walk_all(set, key, len, cls, s->md, first_match, &res->spec, &res->spec,
			   &res->match_error)))
		return rc;
done:
	if (res->spec) {
		const struct spec *sp = (const struct spec *)res->spec;
		res->status = sp->none ? FC_NONE : FC_LABEL;
		res->context = sp->none ? NULL : sp->pub.context;
	}
	return 0;
}

int fc_explain(const fc_set *set, const char *path, mode_t mode,
	       int (*fn)(const struct fc_spec *spec, void *arg), void *arg)
{
	struct scratch *s;
	const char *key;
	size_t len;
	int rc;

	if (!path || set->compare_only)
		return EINVAL;
	if ((rc = make_key(set, path, &s, &key, &len)))
		return rc;
	return walk_all(set, key, len, fc_mode_class(mode), s->md, fn, arg, NULL, NULL);
}

size_t fc_count(const fc_set *set)
{
	return set->nspecs;
}

const struct fc_spec *fc_spec_at(const fc_set *set, size_t i)
{
	return i < set->nspecs ? &set->specs[i].pub : NULL;
}

const char *fc_match_error(int code, char *buf, size_t n)
{
	if (!n)
		return buf;
	if (pcre2_get_error_message(code, (PCRE2_UCHAR *)buf, n) < 0)
		snprintf(buf, n, "PCRE2 error %d", code);
	return buf;
}
