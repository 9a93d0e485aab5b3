/*
 * Compiling a loaded set for lookups.
 *
 * libselinux 3.4 tries every spec from the last to the first (plain specs before regex specs) and
 * the first that passes its filters and matches decides. We keep that order but try far fewer:
 *  - literal plain specs sit in a hash: K matches "^L$" exactly when K == L or K == L "\n";
 *  - every other spec gets a required prefix q (its literal prefix, lengthened by 3.4's stem rule,
 *    which is itself a prefix condition), and a radix tree over the q's finds, in one walk down
 *    the key, the deepest q that is a prefix of the key. The candidates are the specs of that q
 *    and of its shorter ancestors;
 *  - for each (q, mode class) seen, the candidates are listed lazily in priority order, and each
 *    is tried with its own JIT-compiled pattern unless a cheap test rules it out: most regexes
 *    contain a literal run (".cgi", "bin/java") that the key must contain, and a 256-bit set of
 *    the key's byte pairs, made once per lookup, rejects most candidates without a search.
 *    (Combining a node's candidates into one alternation was tried: PCRE2 then has to run every
 *    alternative's backtracking, and it measured slower than this filter.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Eight bytes a step: keys are paths of tens of bytes, hashed once per lookup. */
uint64_t fc_hash(const char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 29);
}

/* ---- radix tree over required prefixes ---- */

/* Nodes live in the set's arena; their kid arrays are malloc'd (they grow). */
static struct qnode *qnode_new(struct fc_set *set, const char *label, unsigned len)
{
	struct qnode *n = fc_balloc(set, sizeof(*n), 16);
	if (n) {
		memset(n, 0, sizeof(*n));
		n->label = label;
		n->len = len;
		n->qid = -1;
	}
	return n;
}

static void qnode_free(struct qnode *n)
{
	if (!n)
		return;
	for (unsigned i = 0; i < n->nkids; i++)
		qnode_free(n->kids[i]);
	free(n->kids);
}

static struct qnode *qnode_kid(const struct qnode *n, unsigned char c, unsigned *slot)
{
	unsigned lo = 0, hi = n->nkids;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		unsigned char k = (unsigned char)n->kids[mid]->label[0];
		if (k == c) {
			if (slot)
				*slot = mid;
			return n->kids[mid];
		}
		if (k < c)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (slot)
		*slot = lo;
	return NULL;
}

static int qnode_add_kid(struct qnode *n, struct qnode *kid, unsigned slot)
{
	struct qnode **nv = n->kids;
	/* capacity: the next power of two (growing one by one copies the array every time) */
	if (!(n->nkids & (n->nkids - 1)) &&
	    !(nv = realloc(n->kids, (n->nkids ? n->nkids * 2 : 1) * sizeof(*nv))))
		return ENOMEM;
	memmove(nv + slot + 1, nv + slot, (n->nkids - slot) * sizeof(*nv));
	nv[slot] = kid;
	n->kids = nv;
	n->nkids++;
	return 0;
}

/* Returns the node for q, creating it. */
static struct qnode *qtree_insert(struct fc_set *set, struct qnode *root, const char *q,
				  unsigned qlen)
{
	struct qnode *n = root;
	unsigned pos = 0;

	while (pos < qlen) {
		unsigned slot, common = 0;
		struct qnode *c = qnode_kid(n, (unsigned char)q[pos], &slot);
		if (!c) {
			struct qnode *leaf = qnode_new(set, q + pos, qlen - pos);
			if (!leaf || qnode_add_kid(n, leaf, slot))
				return NULL; /* the arena keeps leaf */
			return leaf;
		}
		while (common < c->len && pos + common < qlen && c->label[common] == q[pos + common])
			common++;
		if (common < c->len) {
			struct qnode *mid = qnode_new(set, c->label, common);
			if (!mid || !(mid->kids = malloc(sizeof(*mid->kids))))
				return NULL;
			c->label += common;
			c->len -= common;
			mid->kids[0] = c;
			mid->nkids = 1;
			n->kids[slot] = mid;
			c = mid;
		}
		n = c;
		pos += common;
	}
	return n;
}

void fc_qwalk(struct qwalk *w, const char *key, size_t len)
{
	const struct qnode *n = w->n;
	size_t pos = w->pos;

	while (pos < len) {
		const struct qnode *c = NULL;
		if (n->nkids <= sizeof(n->kc)) {
			/* a few kids: their first bytes sit in the node */
			for (unsigned i = 0; i < n->nkids; i++)
				if (n->kc[i] == (unsigned char)key[pos]) {
					c = n->kids[i];
					break;
				}
		} else {
			c = qnode_kid(n, (unsigned char)key[pos], NULL);
		}
		unsigned j = 1; /* the first byte matched in qnode_kid */
		if (!c || c->len > len - pos)
			break;
		while (j < c->len && c->label[j] == key[pos + j])
			j++;
		if (j < c->len)
			break;
		pos += c->len;
		n = c;
		if (c->qid >= 0)
			w->best = c->qid;
	}
	w->n = n;
	w->pos = pos;
}

int fc_find_q(const struct tier *t, const char *key, size_t len)
{
	struct qwalk w;

	if (!t->root)
		return -1;
	fc_qwalk_start(t, &w);
	fc_qwalk(&w, key, len);
	return w.best;
}

static void set_parents(struct tier *t, struct qnode *n, int above)
{
	for (unsigned i = 0; i < n->nkids && i < sizeof(n->kc); i++)
		n->kc[i] = (unsigned char)n->kids[i]->label[0];
	if (n->qid >= 0) {
		t->q[n->qid].parent = above;
		above = n->qid;
	}
	for (unsigned i = 0; i < n->nkids; i++)
		set_parents(t, n->kids[i], above);
}

/* ---- building ---- */

static pcre2_code *compile_re(const struct spec *s, int *ecode, PCRE2_SIZE *eoff)
{
	size_t n = strlen(s->pub.regex);
	char *pat = malloc(n + 3);
	pcre2_code *re;

	*ecode = 0;
	*eoff = 0;
	if (!pat)
		return NULL;
	pat[0] = '^';
	memcpy(pat + 1, s->pub.regex, n);
	pat[n + 1] = '$';
	pat[n + 2] = 0;
	re = pcre2_compile((PCRE2_SPTR)pat, n + 2, PCRE2_DOTALL, ecode, eoff, NULL);
	free(pat);
	return re;
}

static int compile_one(struct spec *s, struct fc_error *err)
{
	int ecode;
	PCRE2_SIZE eoff;
	pcre2_code *re = compile_re(s, &ecode, &eoff);

	if (!re && !ecode)
		return ENOMEM;
	if (!re) {
		PCRE2_UCHAR msg[160];
		size_t n = strlen(s->pub.regex);
		size_t off = eoff > 0 ? eoff - 1 : 0;
		if (off > n)
			off = n;
		pcre2_get_error_message(ecode, msg, sizeof(msg));
		fc_seterr(err, s->pub.file, s->pub.line, s->col + (unsigned)off,
			  "bad regex '%.200s': %s (PCRE2, at offset %zu)", s->pub.regex,
			  (const char *)msg, off);
		return EINVAL;
	}
	atomic_store_explicit(&s->re, re, memory_order_release);
	return 0;
}

pcre2_code *fc_code(const struct spec *cs)
{
	struct spec *s = (struct spec *)cs; /* compiled lazily */
	pcre2_code *re = atomic_load_explicit(&s->re, memory_order_acquire), *none = NULL;
	int ecode;
	PCRE2_SIZE eoff;

	if (re || s->kind == SK_LITERAL)
		return re;
	/* fc_regex_surely_compiles said yes: only memory can fail here. Two threads may both
	 * compile; the first to store wins. */
	re = compile_re(s, &ecode, &eoff);
	if (re && !atomic_compare_exchange_strong_explicit(&s->re, &none, re, memory_order_acq_rel,
							   memory_order_acquire)) {
		pcre2_code_free(re);
		re = none;
	}
	return re;
}

#define FC_MAX_ALTS 8

/* The prefixes a spec is indexed under: its required prefix, or (regex tier) the prefixes of a
 * leading group of alternatives when each extends the required prefix (fc_prefix_alts).
 * Returns how many; q[i], qlen[i] point into *scratch or the spec. */
static size_t spec_prefixes(const struct spec *s, char *scratch, const char **q, size_t *qlen)
{
	size_t lens[FC_MAX_ALTS], n = 0, off = 0;

	if (s->kind == SK_REGEX)
		n = fc_prefix_alts(s->pub.regex, scratch, lens, FC_MAX_ALTS);
	for (size_t i = 0; i < n; i++) {
		if (lens[i] < s->qlen || memcmp(scratch + off, s->q, s->qlen) != 0) {
			n = 0;
			break;
		}
		q[i] = scratch + off;
		qlen[i] = lens[i];
		off += lens[i];
	}
	if (!n) {
		q[0] = s->q;
		qlen[0] = s->qlen;
		n = 1;
	}
	return n;
}

/* A prefix a spec is indexed under (spec_prefixes). */
struct pfx {
	const char *q;
	size_t len;
};

/* Every spec's prefixes, spec i's at pf[pfirst[i] .. pfirst[i + 1]); returns how many, or
 * SIZE_MAX when out of memory. The alternatives' text is put in one arena block, which outlives
 * the build (the tree's labels point into it), cut to what it holds: nothing else is taken from
 * the arena meanwhile. */
static size_t tier_prefixes(struct fc_set *set, bool plain, size_t in_tier, size_t room,
			    struct pfx **pfo, unsigned **pfirst)
{
	char *alts = room ? fc_balloc(set, room, 1) : NULL;
	struct pfx *pf = malloc((in_tier * FC_MAX_ALTS + 1) * sizeof(*pf));
	unsigned *first = malloc((set->nspecs + 1) * sizeof(*first));
	size_t np = 0, used = 0;

	*pfo = pf;
	*pfirst = first;
	if ((room && !alts) || !pf || !first)
		return SIZE_MAX;
	for (size_t i = 0; i < set->nspecs; i++) {
		const struct spec *s = &set->specs[i];
		first[i] = (unsigned)np;
		if (s->dead || s->kind == SK_LITERAL || (s->kind == SK_REGEX) == plain)
			continue;
		const char *q[FC_MAX_ALTS];
		size_t qlen[FC_MAX_ALTS], k = spec_prefixes(s, alts ? alts + used : NULL, q, qlen);
		for (size_t a = 0; a < k; a++) {
			pf[np].q = q[a];
			pf[np++].len = qlen[a];
			if (k > 1)
				used += qlen[a]; /* the alternatives' text, one after another */
		}
	}
	first[set->nspecs] = (unsigned)np;
	if (alts)
		fc_bshrink(set, alts, used);
	return np;
}

static int build_tier(struct fc_set *set, struct tier *t, bool plain)
{
	unsigned *first = NULL, *qids = NULL, *pfirst = NULL;
	struct pfx *pf = NULL;
	size_t qcap = 0, nq = 0, cap = 0, room = 0;
	int rc = ENOMEM;

	t->rootq = -1;
	t->root = qnode_new(set, "", 0);
	if (!t->root)
		return ENOMEM;
	size_t in_tier = 0;
	for (size_t i = 0; i < set->nspecs; i++) {
		const struct spec *s = &set->specs[i];
		if (s->dead || s->kind == SK_LITERAL || (s->kind == SK_REGEX) == plain)
			continue;
		in_tier++;
		if (!plain)
			room += FC_MAX_ALTS * strlen(s->pub.regex) + 1;
	}
	size_t np = tier_prefixes(set, plain, in_tier, room, &pf, &pfirst);
	if (np == SIZE_MAX)
		goto out;
	/* an entry per prefix at most (sized for eight alternatives a spec, the entries and their
	 * text took refpolicy's arena from 2 to 5 MB: huge pages to clear, mostly unused) */
	qcap = np + 1;
	if (!(t->q = fc_balloc(set, qcap * sizeof(*t->q), 64)))
		goto out;
	first = malloc((set->nspecs + 1) * sizeof(*first));
	if (!first)
		goto out;
	/* Distinct prefixes, in spec order; spec i is under qids[first[i] .. first[i + 1]). */
	for (size_t i = 0; i < set->nspecs; i++) {
		first[i] = (unsigned)nq;
		for (unsigned a = pfirst[i]; a < pfirst[i + 1]; a++) {
			struct qnode *n = qtree_insert(set, t->root, pf[a].q, (unsigned)pf[a].len);
			if (!n)
				goto out;
			if (n->qid < 0) {
				if (t->nq == qcap)
					goto out; /* cannot happen: qcap bounds them */
				memset(&t->q[t->nq], 0, sizeof(t->q[0]));
				n->qid = (int)t->nq++;
			}
			/* two alternatives with the same prefix: once */
			bool seen = false;
			for (size_t j = first[i]; j < nq; j++)
				seen |= qids[j] == (unsigned)n->qid;
			if (seen)
				continue;
			if (nq == cap) {
				cap = cap ? cap * 2 : 256;
				unsigned *nv = realloc(qids, cap * sizeof(*nv));
				if (!nv)
					goto out;
				qids = nv;
			}
			qids[nq++] = (unsigned)n->qid;
			t->q[n->qid].nspecs++;
		}
	}
	first[set->nspecs] = (unsigned)nq;
	/* each prefix's specs: slices of one block */
	unsigned *slots = fc_balloc(set, (nq + 1) * sizeof(unsigned), 16);
	if (!slots)
		goto out;
	for (unsigned k = 0; k < t->nq; k++) {
		t->q[k].specs = slots;
		slots += t->q[k].nspecs;
		t->q[k].nspecs = 0;
	}
	/* Highest priority first: walk the specs backwards. */
	for (size_t i = set->nspecs; i-- > 0;) {
		for (unsigned j = first[i]; j < first[i + 1]; j++) {
			struct qentry *e = &t->q[qids[j]];
			e->specs[e->nspecs++] = (unsigned)i;
		}
	}
	t->rootq = t->root->qid;
	set_parents(t, t->root, -1);
	rc = 0;
out:
	free(first);
	free(qids);
	free(pf);
	free(pfirst);
	return rc;
}

/* FORM_SUBTREE for "P(/.*)?", FORM_ANYSUFFIX for "P.*", where P is literal text and is
 * exactly the spec's required prefix q (so the index has already compared it). */
static uint8_t fast_form(const struct spec *s, size_t rl)
{
	static const char sub[] = "(/.*)?", any[] = ".*";
	const char *re = s->pub.regex;
	uint8_t form;
	size_t plen, n;
	char lit[512];

	if (s->kind != SK_REGEX || s->dead || rl >= sizeof(lit))
		return FORM_PCRE;
	if (rl >= 6 && !strcmp(re + rl - 6, sub))
		form = FORM_SUBTREE, n = rl - 6;
	else if (rl >= 2 && !strcmp(re + rl - 2, any) && (rl == 2 || re[rl - 3] != '\\'))
		form = FORM_ANYSUFFIX, n = rl - 2;
	else
		return FORM_PCRE;
	if (!fc_literal_span(re, n, lit, &plen) || plen != s->qlen || memcmp(lit, s->q, plen))
		return FORM_PCRE;
	return form;
}

/*
 * The half of the index that a spec's regex alone decides: its kind, required prefix, literal
 * run and fast form. The compiled reader has it done as each spec is read, by the thread that
 * reads ahead when there is one (ahead.c), else by itself. The index does it for the text's
 * specs, as it did before (on one core the text gained nothing from the move).
 * Whether the regex compiles is left to fc_build_index, which compiles in spec order, so that
 * the first bad regex is the one reported.
 */
/* The room analyze() needs for s: its longest prefix and run. */
static size_t analyze_room(const struct spec *s)
{
	return 2 * strlen(s->pub.regex) + 4;
}

/* Analyses s, its prefix and run kept at p (analyze_room bytes); returns the bytes they hold. */
static size_t analyze(struct spec *s, char *p)
{
	struct regex_shape sh;
	size_t rl = strlen(s->pub.regex), plen, reqlen;
	char *req = p + rl + 2;

	if (s->shaped) {
		sh.meta = s->meta34;
		sh.stem_len = s->stem34;
		fc_scan_regex_shaped(s->pub.regex, &sh, p, &plen, req, &reqlen);
	} else {
		fc_scan_regex(s->pub.regex, &sh, p, &plen, req, &reqlen);
	}
	s->kind = !sh.meta ? (sh.literal ? SK_LITERAL : SK_PLAINRE) : SK_REGEX;
	s->q = p;
	s->qlen = plen;
	if (sh.stem_len) {
		/* 3.4 tries a spec with a stem S only for keys whose stem is S: keys that start
		 * with S "/". Fold that into the required prefix. */
		const char *stem = s->pub.regex;
		size_t sl = sh.stem_len;
		size_t common = plen < sl + 1 ? plen : sl + 1;
		bool agree = memcmp(p, stem, common < sl ? common : sl) == 0 &&
			     (common <= sl || p[sl] == '/');
		if (!agree) {
			s->dead = true;
		} else if (plen < sl + 1) {
			memcpy(p, stem, sl);
			p[sl] = '/';
			s->qlen = sl + 1;
			if (s->kind == SK_LITERAL)
				s->dead = true; /* the literal is shorter than its own stem */
		}
	}
	p[s->qlen] = 0;
	s->reqlen = reqlen;
	s->reqfrom = plen;
	fc_pairs(req, reqlen, s->pairs);
	req[reqlen] = 0;
	s->req = memmove(p + s->qlen + 1, req, reqlen + 1);
	const char *sl = memrchr(s->req, '/', reqlen);
	s->reqslash = sl ? (size_t)(sl - s->req) : reqlen;
	if (s->kind == SK_LITERAL) {
		s->lit = s->q;
		s->litlen = s->qlen;
	} else {
		s->unsure = !fc_regex_surely_compiles(s->pub.regex);
		s->form = fast_form(s, rl);
	}
	return s->qlen + reqlen + 2;
}

/* The arena keeps what the analyses hold, cut to that (its huge pages are cleared whole:
 * refpolicy's index then fits in one). */
int fc_analyze_spec(struct fc_set *set, struct spec *s)
{
	char *p = fc_balloc(set, analyze_room(s), 1);

	if (!p)
		return ENOMEM;
	fc_bshrink(set, p, analyze(s, p));
	return 0;
}

size_t fc_analyze_at(struct spec *s, char *p)
{
	return analyze(s, p);
}

size_t fc_shape_room(const struct spec *s)
{
	return analyze_room(s);
}

int fc_shape_spec(struct spec *s, char *p, size_t *used, struct fc_error *err)
{
	*used += analyze(s, p);
	return s->kind != SK_LITERAL && s->unsure ? compile_one(s, err) : 0;
}

int fc_build_index(struct fc_set *set, struct fc_error *err)
{
	size_t nlit = 0;
	unsigned pos_plain = 0, pos_regex = 0;
	int rc;

	/* the specs the readers have not analysed (the text's), in one block of the arena, as
	 * before the compiled reader analysed its own */
	size_t room = 0, used = 0;
	for (size_t i = 0; i < set->nspecs; i++)
		if (!set->specs[i].q)
			room += analyze_room(&set->specs[i]);
	char *p = room ? fc_balloc(set, room, 1) : NULL;
	if (room && !p)
		return ENOMEM;
	for (size_t i = 0; i < set->nspecs; i++) {
		struct spec *s = &set->specs[i];
		if (!s->q)
			used += analyze(s, p + used);
		if (s->kind == SK_LITERAL) {
			s->tier_pos = pos_plain++;
			if (!s->dead)
				nlit++;
		} else {
			if (s->unsure && (rc = compile_one(s, err)))
				return rc;
			s->tier_pos = s->kind == SK_PLAINRE ? pos_plain++ : pos_regex++;
		}
	}
	if (p)
		fc_bshrink(set, p, used);
	set->plain.nspecs = pos_plain;
	set->regex.nspecs = pos_regex;

	/* Literal hash: each bucket holds the highest-priority spec; next_same chains the rest. */
	size_t size = 16;
	while (size < nlit * 2)
		size <<= 1;
	set->lhash = malloc(size * sizeof(int));
	if (!set->lhash)
		return ENOMEM;
	memset(set->lhash, 0xff, size * sizeof(int));
	set->lmask = size - 1;
	for (size_t i = 0; i < set->nspecs; i++) {
		struct spec *s = &set->specs[i];
		if (s->kind != SK_LITERAL || s->dead)
			continue;
		size_t lb = s->litlen < 255 ? s->litlen : 255;
		set->litlens[lb >> 6] |= 1ull << (lb & 63);
		fc_first_set(set->litfirst, s->lit, s->litlen);
		size_t b = fc_hash(s->lit, s->litlen) & set->lmask;
		while (set->lhash[b] >= 0) {
			struct spec *o = &set->specs[set->lhash[b]];
			if (o->litlen == s->litlen && memcmp(o->lit, s->lit, s->litlen) == 0)
				break;
			b = (b + 1) & set->lmask;
		}
		s->next_same = set->lhash[b];
		set->lhash[b] = (int)i;
	}
	if ((rc = build_tier(set, &set->plain, true)) || (rc = build_tier(set, &set->regex, false)))
		return rc;
	return 0;
}

int fc_literal_find(const struct fc_set *set, const char *key, size_t len)
{
	size_t b = fc_hash(key, len) & set->lmask;
	int i;

	while ((i = set->lhash[b]) >= 0) {
		const struct spec *s = &set->specs[i];
		if (s->litlen == len && memcmp(s->lit, key, len) == 0)
			return i;
		b = (b + 1) & set->lmask;
	}
	return -1;
}

/* ---- lazily built candidate chunks ---- */

static int by_priority(const void *a, const void *b, void *arg)
{
	const struct fc_set *set = arg;
	unsigned pa = set->specs[*(const unsigned *)a].tier_pos;
	unsigned pb = set->specs[*(const unsigned *)b].tier_pos;
	return pa < pb ? 1 : pa > pb ? -1 : 0;
}

void fc_count_try(const struct spec *cs)
{
	struct spec *s = (struct spec *)cs; /* counted and JIT-compiled lazily */
	if (atomic_fetch_add_explicit(&s->uses, 1, memory_order_relaxed) != FC_JIT_AFTER)
		return;
	/* only the thread that made the count FC_JIT_AFTER gets here */
	pcre2_code *re = fc_code(s), *copy = re ? pcre2_code_copy(re) : NULL;
	if (!copy)
		return;
	/* without JIT (or on failure) the interpreter answers: same answers, slower */
	if (pcre2_jit_compile(copy, PCRE2_JIT_COMPLETE) != 0) {
		pcre2_code_free(copy);
		return;
	}
	atomic_store_explicit(&s->jre, copy, memory_order_release);
}

static struct chunkset *build_chunkset(struct fc_set *set, const struct tier *t, int qid,
				       unsigned cls)
{
	struct chunkset *cs = calloc(1, sizeof(*cs));
	unsigned n = 0, cap = 0;

	if (!cs)
		return NULL;
	for (int k = qid; k >= 0; k = t->q[k].parent)
		cap += t->q[k].nspecs;
	cs->all = malloc((cap + 1) * sizeof(unsigned));
	if (!cs->all) {
		free(cs);
		return NULL;
	}
	for (int k = qid; k >= 0; k = t->q[k].parent)
		for (unsigned j = 0; j < t->q[k].nspecs; j++) {
			unsigned i = t->q[k].specs[j];
			if (fc_class_ok(set->specs[i].tclass, cls))
				cs->all[n++] = i;
		}
	qsort_r(cs->all, n, sizeof(unsigned), by_priority, set);
	/* a spec indexed under two prefixes of the same key comes once */
	unsigned m = 0;
	for (unsigned i = 0; i < n; i++)
		if (!m || cs->all[m - 1] != cs->all[i])
			cs->all[m++] = cs->all[i];
	cs->nall = m;
	/* (their regexes are compiled when a lookup first runs them: most candidates are ruled
	 * out before, and a directory's memo lists mode 0's candidates, every type's) */
	return cs;
}

const struct chunkset *fc_chunkset(const struct fc_set *cset, const struct tier *t, int qid,
				   unsigned cls)
{
	struct fc_set *set = (struct fc_set *)cset; /* the chunk cache is filled lazily */
	struct qentry *e = &t->q[qid];
	struct chunkset *cs = atomic_load_explicit(&e->cs[cls], memory_order_acquire);

	if (cs)
		return cs;
	pthread_mutex_lock(&set->lock);
	cs = atomic_load_explicit(&e->cs[cls], memory_order_relaxed);
	if (!cs) {
		cs = build_chunkset(set, t, qid, cls);
		if (cs)
			atomic_store_explicit(&e->cs[cls], cs, memory_order_release);
	}
	pthread_mutex_unlock(&set->lock);
	return cs;
}

/* The sort of the literals looks at their first 16 bytes as two big-endian numbers (zeros past
 * the end: a literal holds no NUL, so a shorter one sorts first, as memcmp and then the length
 * order them), which settles most pairs without a call to memcmp, and it moves 4-byte indices
 * (glibc's merge sort copies those word by word). Sorted with memcmp alone the list was 0.3 ms
 * of a relabel's walk, at its first directory. */
struct litsort {
	const struct fc_set *set;
	const uint64_t (*k)[2]; /* a literal spec i's numbers at k[i] */
};

static uint64_t be_word(const char *p, size_t n)
{
	uint64_t w = 0;

	memcpy(&w, p, n < 8 ? n : 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	return w;
}

static int by_literal(const void *a, const void *b, void *arg)
{
	const struct litsort *ls = arg;
	unsigned i = *(const unsigned *)a, j = *(const unsigned *)b;

	for (int w = 0; w < 2; w++)
		if (ls->k[i][w] != ls->k[j][w])
			return ls->k[i][w] < ls->k[j][w] ? -1 : 1;
	const struct spec *x = &ls->set->specs[i], *y = &ls->set->specs[j];
	size_t n = x->litlen < y->litlen ? x->litlen : y->litlen;
	int c = n > 16 ? memcmp(x->lit + 16, y->lit + 16, n - 16) : 0;
	return c ? c : x->litlen < y->litlen ? -1 : x->litlen > y->litlen;
}

static unsigned *literal_sort(struct fc_set *set)
{
	uint64_t (*k)[2] = malloc((set->nspecs + 1) * sizeof(*k));
	unsigned *v = malloc((set->nspecs + 1) * sizeof(*v)), n = 0;
	struct litsort ls = { set, (const uint64_t (*)[2])k };

	if (!k || !v) {
		free(k);
		free(v);
		return NULL;
	}
	for (size_t i = 0; i < set->nspecs; i++) {
		const struct spec *s = &set->specs[i];
		if (s->kind != SK_LITERAL || s->dead)
			continue;
		k[i][0] = be_word(s->lit, s->litlen);
		k[i][1] = s->litlen > 8 ? be_word(s->lit + 8, s->litlen - 8) : 0;
		v[n++] = (unsigned)i;
	}
	qsort_r(v, n, sizeof(*v), by_literal, &ls);
	free(k);
	set->nlitsort = n;
	return v;
}

bool fc_literal_under(const struct fc_set *cset, const char *p, size_t n)
{
	struct fc_set *set = (struct fc_set *)cset; /* sorted lazily */
	unsigned *v = atomic_load_explicit(&set->litsort, memory_order_acquire);
	size_t lo = 0, hi;

	if (!v) {
		pthread_mutex_lock(&set->lock);
		if (!(v = atomic_load_explicit(&set->litsort, memory_order_relaxed)) &&
		    (v = literal_sort(set)))
			atomic_store_explicit(&set->litsort, v, memory_order_release);
		pthread_mutex_unlock(&set->lock);
		if (!v)
			return true; /* out of memory: "maybe", which only costs the look */
	}
	/* the first string not below p: the strings that start with p follow it */
	hi = set->nlitsort;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct spec *x = &set->specs[v[mid]];
		int c = memcmp(x->lit, p, x->litlen < n ? x->litlen : n);
		if (c < 0 || (!c && x->litlen < n))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < set->nlitsort && set->specs[v[lo]].litlen >= n &&
	       memcmp(set->specs[v[lo]].lit, p, n) == 0;
}

static void free_tier(struct tier *t)
{
	for (unsigned k = 0; k < t->nq; k++) {
		for (unsigned c = 0; c < FC_NCLASS; c++) {
			struct chunkset *cs = atomic_load(&t->q[k].cs[c]);
			if (!cs)
				continue;
			free(cs->all);
			free(cs);
		}
	}
	/* t->q and its specs are in the set's arena */
	free(t->order);
	qnode_free(t->root);
	memset(t, 0, sizeof(*t));
}

void fc_free_index(struct fc_set *set)
{
	free_tier(&set->plain);
	free_tier(&set->regex);
	for (size_t i = 0; i < set->nspecs; i++) {
		pcre2_code_free(set->specs[i].re);
		pcre2_code_free(set->specs[i].jre);
	}
	free(set->lhash);
	free(atomic_load(&set->litsort));
}
