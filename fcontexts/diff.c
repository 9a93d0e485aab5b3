/*
 * What changed between two file_contexts sets, and which paths a change can reach.
 *
 * The spec lists are compared as sequences of (regex, type, context) with Myers' O(ND) longest
 * common subsequence. A path's label can change only if some spec that matches it is outside the
 * common subsequence (removed from the old list or added to the new one): otherwise the specs
 * that match it are the same, in the same relative order, and the same one decides.
 * fc_diff_reaches() answers, for a directory, whether any such spec can match a path below it,
 * with PCRE2 partial matching on the directory's path.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct fc_diff {
	const struct fc_set *old, *new;
	struct fc_change *v;
	size_t n;
	/* the specs outside the common subsequence, from both sides (the old side's first:
	 * nchanged_old of them) */
	const struct spec **changed;
	size_t nchanged, nchanged_old;
	/* copies of the changed specs of a compare-only set, shaped (shape_changed), and the
	 * text their prefixes point into */
	struct spec *own;
	size_t nown;
	char *owntext;
	bool everything; /* substitutions differ, or the diff was too large: no pruning */
	bool any_dir;    /* a changed spec reaches below every directory (reaches_any_dir) */
	pcre2_match_data *md;
};

static uint64_t key_of(const struct spec *s)
{
	uint64_t h = fc_hash(s->pub.regex, strlen(s->pub.regex));
	h = h * 31 + (s->pub.type ? fc_hash(s->pub.type, strlen(s->pub.type)) : 7);
	return h * 131 + fc_hash(s->pub.context, strlen(s->pub.context));
}

static bool same_spec(const struct spec *a, const struct spec *b)
{
	return !strcmp(a->pub.regex, b->pub.regex) && !strcmp(a->pub.context, b->pub.context) &&
	       (a->pub.type ? b->pub.type && !strcmp(a->pub.type, b->pub.type) : !b->pub.type);
}

static bool same_subs(const struct sublist *a, const struct sublist *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i].src, b->v[i].src) || strcmp(a->v[i].dst, b->v[i].dst))
			return false;
	return true;
}

/*
 * Myers' greedy diff of a[0..n) and b[0..m). Marks in_a[i] / in_b[j] for the elements of one
 * longest common subsequence. Returns 0, ENOMEM, or E2BIG when more than maxd edits are needed.
 */
static int myers(const uint64_t *a, size_t n, const uint64_t *b, size_t m, bool *in_a, bool *in_b,
		 size_t maxd)
{
	long N = (long)n, M = (long)m, max = N + M;
	long lim = (long)maxd < max ? (long)maxd : max;
	long **trace = calloc((size_t)lim + 2, sizeof(long *));
	long *v = calloc(2 * (size_t)max + 3, sizeof(long)), off = max + 1;
	long D = -1;
	int rc = 0;

	if (!trace || !v) {
		rc = ENOMEM;
		goto out;
	}
	for (long d = 0; d <= lim; d++) {
		for (long k = -d; k <= d; k += 2) {
			long x;
			if (k == -d || (k != d && v[off + k - 1] < v[off + k + 1]))
				x = v[off + k + 1];
			else
				x = v[off + k - 1] + 1;
			long y = x - k;
			while (x < N && y < M && a[x] == b[y]) {
				x++;
				y++;
			}
			v[off + k] = x;
			if (x >= N && y >= M) {
				D = d;
				break;
			}
		}
		trace[d] = malloc((2 * (size_t)d + 1) * sizeof(long));
		if (!trace[d]) {
			rc = ENOMEM;
			goto out;
		}
		for (long k = -d; k <= d; k++)
			trace[d][k + d] = v[off + k];
		if (D >= 0)
			break;
	}
	if (D < 0) {
		rc = E2BIG;
		goto out;
	}
	/* walk back: the diagonals are the common elements */
	long x = N, y = M;
	for (long d = D; d > 0; d--) {
		const long *pv = trace[d - 1] + (d - 1); /* pv[k] for k in [-(d-1), d-1] */
		long k = x - y, pk;
		if (k == -d || (k != d && pv[k - 1] < pv[k + 1]))
			pk = k + 1; /* an element of b was inserted */
		else
			pk = k - 1; /* an element of a was removed */
		long px = pv[pk], py = px - pk;
		while (x > px && y > py) {
			in_a[--x] = true;
			in_b[--y] = true;
		}
		x = px;
		y = py;
	}
	while (x > 0 && y > 0) {
		in_a[--x] = true;
		in_b[--y] = true;
	}
out:
	if (trace)
		for (long d = 0; d <= lim + 1; d++)
			free(trace[d]);
	free(trace);
	free(v);
	return rc;
}

static int add_change(struct fc_diff *d, enum fc_change_kind kind, const struct spec *o,
		      const struct spec *n)
{
	if (!(d->n & (d->n - 1))) { /* capacity: the next power of two */
		struct fc_change *nv = realloc(d->v, (d->n ? d->n * 2 : 1) * sizeof(*nv));
		if (!nv)
			return ENOMEM;
		d->v = nv;
	}
	d->v[d->n++] = (struct fc_change){ kind, o ? &o->pub : NULL, n ? &n->pub : NULL };
	return 0;
}

/*
 * A compare-only set's specs are not shaped (FC_COMPARE_ONLY): its changed ones are, here, in
 * copies the diff keeps, and their regexes checked as a load checks them. Its unchanged ones
 * need neither: each is the same as a spec of the other side.
 */
static int shape_changed(struct fc_diff *d, struct fc_error *err)
{
	size_t room = 0, used = 0, n = 0;
	int rc;

	for (size_t i = 0; i < d->nchanged; i++) {
		const struct fc_set *from = i < d->nchanged_old ? d->old : d->new;
		if (from->compare_only) {
			room += fc_shape_room(d->changed[i]);
			n++;
		}
	}
	if (!n)
		return 0;
	if (!(d->own = calloc(n, sizeof(*d->own))) || !(d->owntext = malloc(room + 1)))
		return ENOMEM;
	for (size_t i = 0; i < d->nchanged; i++) {
		const struct fc_set *from = i < d->nchanged_old ? d->old : d->new;
		if (!from->compare_only)
			continue;
		struct spec *s = &d->own[d->nown++];
		*s = *d->changed[i];
		d->changed[i] = s;
		if ((rc = fc_shape_spec(s, d->owntext + used, &used, err)))
			return rc;
	}
	return 0;
}

/* Whether a partial match of s finds something below every directory: its regex begins "/.*" or
 * ".*" (not the possessive ".*+"; '.' matches any byte, the patterns being compiled with
 * PCRE2_DOTALL), so the key of any directory, "/" and its names and a "/", is a start of a path
 * it can match. A policy edit that adds such a spec (B2 of make bench-relabel) reaches every
 * directory; its partial match at each was a tenth of that relabel's time. */
static bool reaches_any_dir(const struct spec *s)
{
	const char *r = s->pub.regex;

	if (s->dead || s->kind == SK_LITERAL)
		return false;
	r += *r == '^';
	r += *r == '/';
	return r[0] == '.' && r[1] == '*' && r[2] != '+';
}

int fc_diff(const fc_set *old, const fc_set *new, struct fc_diff **out, struct fc_error *err)
{
	struct fc_diff *d = calloc(1, sizeof(*d));
	size_t n = old->nspecs, m = new->nspecs;
	uint64_t *ka = malloc((n + 1) * sizeof(*ka)), *kb = malloc((m + 1) * sizeof(*kb));
	bool *in_a = calloc(n + 1, 1), *in_b = calloc(m + 1, 1), *used = calloc(m + 1, 1);
	int rc = ENOMEM;

	if (!d || !ka || !kb || !in_a || !in_b || !used)
		goto fail;
	d->old = old;
	d->new = new;
	d->md = pcre2_match_data_create(1, NULL);
	if (!d->md)
		goto fail;
	/* An edit leaves most of a policy as it was, before and after it: the common head and tail
	 * are compared as they are (one pass, no keys), and only what lies between is diffed. Some
	 * longest common subsequence holds them both. */
	size_t head = 0, tail = 0;
	while (head < n && head < m && same_spec(&old->specs[head], &new->specs[head])) {
		in_a[head] = in_b[head] = true;
		head++;
	}
	while (tail < n - head && tail < m - head &&
	       same_spec(&old->specs[n - 1 - tail], &new->specs[m - 1 - tail])) {
		in_a[n - 1 - tail] = in_b[m - 1 - tail] = true;
		tail++;
	}
	for (size_t i = head; i < n - tail; i++)
		ka[i] = key_of(&old->specs[i]);
	for (size_t j = head; j < m - tail; j++)
		kb[j] = key_of(&new->specs[j]);
	rc = myers(ka + head, n - head - tail, kb + head, m - head - tail, in_a + head, in_b + head,
		   20000);
	if (rc == E2BIG) {
		d->everything = true;
		memset(in_a, 0, n);
		memset(in_b, 0, m);
		rc = 0;
	}
	if (rc)
		goto fail;
	/* a hash collision must not hide a change: verify the common pairs between */
	for (size_t i = head, j = head; i < n - tail && j < m - tail;) {
		if (!in_a[i]) { i++; continue; }
		if (!in_b[j]) { j++; continue; }
		if (!same_spec(&old->specs[i], &new->specs[j]))
			in_a[i] = in_b[j] = false;
		i++;
		j++;
	}
	if (!same_subs(&old->subs, &new->subs) || !same_subs(&old->dist, &new->dist))
		d->everything = true;
	d->changed = malloc((n + m + 1) * sizeof(*d->changed));
	if (!d->changed)
		goto fail;
	/* Name the changes: removed specs paired with an added one of the same regex. */
	for (size_t i = 0; i < n; i++) {
		if (in_a[i])
			continue;
		const struct spec *o = &old->specs[i];
		d->changed[d->nchanged++] = o;
		enum fc_change_kind kind = FC_REMOVED;
		const struct spec *pair = NULL;
		for (int pass = 0; pass < 3 && !pair; pass++)
			for (size_t j = 0; j < m; j++) {
				const struct spec *s = &new->specs[j];
				if (in_b[j] || used[j] || strcmp(s->pub.regex, o->pub.regex))
					continue;
				bool same_type = o->pub.type ? s->pub.type && !strcmp(s->pub.type, o->pub.type)
							     : !s->pub.type;
				bool same_ctx = !strcmp(s->pub.context, o->pub.context);
				if ((pass == 0 && same_type && same_ctx) ||
				    (pass == 1 && same_type) || (pass == 2 && same_ctx)) {
					pair = s;
					used[j] = true;
					kind = pass == 0 ? FC_MOVED : pass == 1 ? FC_CONTEXT : FC_RETYPED;
					break;
				}
			}
		if ((rc = add_change(d, kind, o, pair)))
			goto fail;
	}
	d->nchanged_old = d->nchanged;
	for (size_t j = 0; j < m; j++) {
		if (in_b[j])
			continue;
		d->changed[d->nchanged++] = &new->specs[j];
		if (!used[j] && (rc = add_change(d, FC_ADDED, NULL, &new->specs[j])))
			goto fail;
	}
	if ((rc = shape_changed(d, err)))
		goto fail;
	for (size_t i = 0; i < d->nchanged && !d->any_dir; i++)
		d->any_dir = reaches_any_dir(d->changed[i]);
	free(ka);
	free(kb);
	free(in_a);
	free(in_b);
	free(used);
	*out = d;
	return 0;
fail:
	free(ka);
	free(kb);
	free(in_a);
	free(in_b);
	free(used);
	fc_diff_free(d);
	return rc;
}

void fc_diff_free(struct fc_diff *d)
{
	if (!d)
		return;
	free(d->v);
	free(d->changed);
	for (size_t i = 0; i < d->nown; i++)
		pcre2_code_free(d->own[i].re);
	free(d->own);
	free(d->owntext);
	pcre2_match_data_free(d->md);
	free(d);
}

size_t fc_diff_count(const struct fc_diff *d)
{
	return d->n;
}

const struct fc_change *fc_diff_at(const struct fc_diff *d, size_t i)
{
	return i < d->n ? &d->v[i] : NULL;
}

bool fc_diff_everything(const struct fc_diff *d)
{
	return d->everything;
}

bool fc_diff_reaches_all(const struct fc_diff *d)
{
	return d->everything || d->any_dir;
}

const char *fc_spec_prefix(const fc_set *set, const struct fc_spec *spec, size_t *len)
{
	const struct spec *s = (const struct spec *)spec;
	(void)set;
	if (s->dead) {
		*len = 0;
		return NULL;
	}
	*len = s->qlen;
	return s->q;
}

/* Substitutes the key prefix dir + "/" as a lookup would, when every path below dir is
 * substituted the same way; false when some SRC reaches deeper than dir. */
static bool subst_dir(const struct sublist *l, char *buf, size_t *len)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].slen >= *len && !memcmp(l->v[i].src, buf, *len))
			return false;
	for (size_t i = l->n; i-- > 0;) {
		const struct subst *s = &l->v[i];
		if (s->slen >= *len || memcmp(buf, s->src, s->slen) || buf[s->slen] != '/')
			continue;
		size_t skip = s->slen + (s->dlen == 1 && s->dst[0] == '/');
		memmove(buf + s->dlen, buf + skip, *len - skip + 1);
		memcpy(buf, s->dst, s->dlen);
		*len = s->dlen + *len - skip;
		return true;
	}
	return true;
}

int fc_diff_reaches(const struct fc_diff *d, const char *dir)
{
	size_t dl = strlen(dir), len;
	const struct fc_set *sets[2] = { d->old, d->new };

	if (d->everything || d->any_dir)
		return 1;
	if (!d->nchanged)
		return 0;
	/* keys below dir start with dir "/" (runs of '/' collapsed: dir is a clean path) */
	size_t maxdst = 0;
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < sets[k]->subs.n + sets[k]->dist.n; i++) {
			const struct subst *s = i < sets[k]->subs.n ? &sets[k]->subs.v[i]
								   : &sets[k]->dist.v[i - sets[k]->subs.n];
			if (s->dlen > maxdst)
				maxdst = s->dlen;
		}
	char stackbuf[1024], *buf = stackbuf;
	if (dl + 2 * maxdst + 3 > sizeof(stackbuf) && !(buf = malloc(dl + 2 * maxdst + 3)))
		return 1;
	memcpy(buf, dir, dl);
	len = dl;
	if (!(len == 1 && buf[0] == '/'))
		buf[len++] = '/';
	buf[len] = 0;
	/* subs are the same in both sets (else everything) */
	if (!subst_dir(&d->old->subs, buf, &len) || !subst_dir(&d->old->dist, buf, &len)) {
		if (buf != stackbuf)
			free(buf);
		return 1;
	}
	int reach = 0;
	for (size_t i = 0; i < d->nchanged && !reach; i++) {
		const struct spec *s = d->changed[i];
		if (s->dead)
			continue;
		if (s->kind == SK_LITERAL) {
			reach = s->litlen > len && !memcmp(s->lit, buf, len);
			continue;
		}
		size_t c = s->qlen < len ? s->qlen : len;
		if (memcmp(s->q, buf, c))
			continue;
		/* A partial match only finds matches that start inside buf. "^a|b$" (a top-level
		 * alternation) is not anchored: its "b$" can match text that starts after buf, in
		 * any name below dir. Unless PCRE2 finds the pattern anchored, visit. */
		uint32_t opts = 0;
		pcre2_code *re = fc_code(s);
		if (!re || pcre2_pattern_info(re, PCRE2_INFO_ALLOPTIONS, &opts) ||
		    !(opts & PCRE2_ANCHORED)) {
			reach = 1;
			continue;
		}
		int rc = pcre2_match(re, (PCRE2_SPTR)buf, len, 0,
				     PCRE2_PARTIAL_SOFT | PCRE2_NO_JIT, d->md, NULL);
		if (rc != PCRE2_ERROR_NOMATCH)
			reach = 1; /* a match, a partial match, or an error: visit */
	}
	if (buf != stackbuf)
		free(buf);
	return reach;
}
