/*
 * What a lookup of DIR/NAME knows from DIR alone (DIR: the path up to its last '/').
 *
 * A walk looks up the entries of a directory one after another, and most of a lookup's work
 * was the same for each of them: the substitutions (applied to DIR's part of the key alone
 * unless a SRC runs into the name), the walk down the prefix trees through DIR's key, and above
 * all the candidates' filters. A candidate's literal run (struct spec.req) that has a '/' can
 * only lie in DIR, or end in it on the run's last '/' (NAME holds none): for most candidates
 * DIR alone says that no name can match. So a thread keeps, for the directories of its last
 * lookups, the key's directory part, the trees' walks, and each tier's candidates with what is
 * left to check per name (struct dcand); a name then costs its own bytes. A subdirectory's memo
 * starts from its parent's: the key's directory part, the walks and "no literal below" hold for
 * the whole subtree; the candidate list does not (a run may lie in the subdirectory's name).
 *
 * Every step keeps the answers the general way gives: the list keeps the candidates' order and
 * drops only those that cannot match any name, or that come after one that matches every name
 * of every type; a candidate DIR says nothing about keeps the general way's checks (D_WHOLE).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int grow(char **p, size_t *cap, size_t need)
{
	char *n;

	if (need <= *cap)
		return 0;
	if (!(n = realloc(*p, need * 2)))
		return ENOMEM;
	*p = n;
	*cap = need * 2;
	return 0;
}

void fc_dir_free(struct dirmemo *m)
{
	free(m->dir);
	free(m->key);
	for (int k = 0; k < 2; k++)
		free(m->tier[k].v);
	memset(m, 0, sizeof(*m));
}

enum { SUB_NONE, SUB_APPLIED, SUB_DEPENDS };

/*
 * apply_subs (lookup.c) for the keys DIR/NAME, dir[0..d) = DIR (ending in '/'): the last-listed
 * SRC that prefixes the key up to a '/' or its end. A SRC shorter than DIR is decided by DIR; a
 * longer one that starts with DIR could equal DIR/NAME for some name (SUB_DEPENDS, unless one
 * listed after it already applies). On SUB_APPLIED, out holds DST and the rest of DIR.
 */
static int dir_subs(const struct sublist *l, const char *dir, size_t d, char *out,
		    size_t *outlen)
{
	/* DIR holds its keys' first component (but "/"'s): a SRC that prefixes a key, or that
	 * starts with DIR, has it too */
	if (d > 1 && !fc_first_bit(l->first, dir, d))
		return SUB_NONE;
	for (size_t i = l->n; i-- > 0;) {
		const struct subst *s = &l->v[i];
		if (d > 1 && s->slen > 1 && s->src[1] != dir[1])
			continue;
		if (s->slen >= d) {
			if (memcmp(s->src, dir, d) == 0)
				return SUB_DEPENDS;
			continue;
		}
		if (memcmp(dir, s->src, s->slen) != 0 || dir[s->slen] != '/')
			continue;
		size_t skip = s->slen + (s->dlen == 1 && s->dst[0] == '/');
		memcpy(out, s->dst, s->dlen);
		memcpy(out + s->dlen, dir + skip, d - skip);
		*outlen = s->dlen + d - skip;
		return SUB_APPLIED;
	}
	return SUB_NONE;
}

/* DIR's key into m->key (m->dir set): 0, SUB_DEPENDS, or ENOMEM. */
static int dir_key(struct dirmemo *m, const struct fc_set *set)
{
	const struct sublist *lists[2] = { &set->subs, &set->dist };
	char *tmp = NULL;
	size_t tcap = 0;
	int rc = 0;

	if (grow(&m->key, &m->kcap, m->dlen + fc_key_room(set) + 1))
		return ENOMEM;
	memcpy(m->key, m->dir, m->dlen);
	m->klen = m->dlen;
	m->key_is_path = true;
	for (int k = 0; k < 2 && !rc; k++) {
		size_t n;
		if (!lists[k]->n)
			continue;
		if (grow(&tmp, &tcap, m->klen + lists[k]->maxdst + 1)) {
			rc = ENOMEM;
			break;
		}
		switch (dir_subs(lists[k], m->key, m->klen, tmp, &n)) {
		case SUB_DEPENDS:
			rc = SUB_DEPENDS;
			break;
		case SUB_APPLIED:
			memcpy(m->key, tmp, n);
			m->klen = n;
			m->key_is_path = false;
			break;
		}
	}
	free(tmp);
	return rc;
}

/* The trees' walks down DIR's key, from the start or on from the parent's. */
static void dir_walks(struct dirmemo *m, const struct fc_set *set, const struct dirmemo *parent)
{
	const struct tier *tiers[2] = { &set->plain, &set->regex };

	for (int k = 0; k < 2; k++) {
		struct dtier *dt = &m->tier[k];
		if (parent) {
			dt->w = parent->tier[k].w;
		} else if (tiers[k]->root) {
			fc_qwalk_start(tiers[k], &dt->w);
		} else {
			dt->w.n = NULL;
			dt->w.best = -1;
		}
		if (dt->w.n)
			fc_qwalk(&dt->w, m->key, m->klen);
	}
}

/*
 * DIR's key from its parent's (usable: no SRC that starts with the parent's directory, in either
 * list, so none that starts with DIR; those shorter decide alike): the parent's key and DIR's
 * last component. 0 or ENOMEM.
 */
static int key_from_parent(struct dirmemo *m, const struct fc_set *set,
			   const struct dirmemo *parent)
{
	size_t more = m->dlen - parent->dlen;

	if (grow(&m->key, &m->kcap, parent->klen + more + fc_key_room(set) + 1))
		return ENOMEM;
	memcpy(m->key, parent->key, parent->klen);
	memcpy(m->key + parent->klen, m->dir + parent->dlen, more);
	m->klen = parent->klen + more;
	m->key_is_path = parent->key_is_path;
	return 0;
}

/* Makes m, which holds the directory m->dir[0..d), from parent's memo when given (the memo of
 * the parent directory, usable): 0 or ENOMEM (m then holds nothing). */
static int dir_enter(struct dirmemo *m, const struct fc_set *set, size_t d,
		     const struct dirmemo *parent)
{
	const char *path = m->dir;
	int rc = 0;

	m->serial = 0;
	m->gen++;
	m->usable = false;
	m->have_pairs = false;
	m->tier[0].built = m->tier[1].built = false;
	m->parent = parent;
	m->parent_gen = parent ? parent->gen : 0;
	if (parent) {
		if ((rc = key_from_parent(m, set, parent)))
			return rc;
		m->lit = parent->lit && fc_literal_under(set, m->key, m->klen);
		dir_walks(m, set, parent);
		m->usable = true;
	} else if (!memmem(path, d, "//", 2) && !(rc = dir_key(m, set))) {
		/* (a path fc_make_key would clean takes the general way) */
		m->lit = set->lhash && fc_literal_under(set, m->key, m->klen);
		dir_walks(m, set, NULL);
		m->usable = true;
	} else if (rc == ENOMEM) {
		return ENOMEM;
	}
	m->serial = set->serial;
	return 0;
}

/* The slot of the directory path[0..d) when it holds it. */
static struct dirmemo *slot_of(struct dirmemo *slots, const struct fc_set *set, const char *path,
			       size_t d)
{
	/* a slot by DIR's length: a walk back from a subdirectory finds its parent's memo */
	struct dirmemo *m = &slots[d % FC_DIR_SLOTS];

	return m->serial == set->serial && m->dlen == d && memcmp(m->dir, path, d) == 0 ? m : NULL;
}

/* The usable memo of path[0..d)'s parent directory, unless it shares DIR's slot. */
static const struct dirmemo *parent_of(struct dirmemo *slots, const struct fc_set *set,
				       const char *path, size_t d)
{
	const char *sl = d > 1 ? memrchr(path, '/', d - 1) : NULL;
	size_t dp = sl ? (size_t)(sl - path) + 1 : 0;
	const struct dirmemo *p;

	/* (DIR's last component empty: "//", which the parent's memo has not ruled out) */
	if (!dp || d - dp < 2 || dp % FC_DIR_SLOTS == d % FC_DIR_SLOTS)
		return NULL;
	p = slot_of(slots, set, path, dp);
	return p && p->usable ? p : NULL;
}

struct dirmemo *fc_dir_memo(struct dirmemos *ms, const struct fc_set *set, const char *path,
			    size_t len)
{
	const struct dirmemo *parent;
	const char *sl;
	struct dirmemo *m;
	bool walking = ms->walking;
	uint64_t h;
	size_t d;

	ms->walking = false;
	if (len < 2 || path[0] != '/' || !(sl = memrchr(path, '/', len)))
		return NULL;
	d = (size_t)(sl - path) + 1;
	if (d == len)
		return NULL; /* no name: "/", "DIR/" */
	if ((m = slot_of(ms->slot, set, path, d)))
		goto kept;
	/* a walk goes down from a directory it has a memo of, or looks up a second name in
	 * it right after the first; lookups in no order pay, for a directory, only for hashing
	 * its bytes: the general way answers */
	parent = walking ? parent_of(ms->slot, set, path, d) : NULL;
	if (!parent) {
		h = fc_hash(path, d);
		if (h != ms->lasthash || d != ms->lastd || set->serial != ms->lastserial) {
			ms->lasthash = h;
			ms->lastd = d;
			ms->lastserial = set->serial;
			return NULL;
		}
		parent = parent_of(ms->slot, set, path, d);
	}
	m = &ms->slot[d % FC_DIR_SLOTS];
	m->serial = 0;
	if (grow(&m->dir, &m->dcap, d))
		return NULL;
	memcpy(m->dir, path, d);
	m->dlen = d;
	if (dir_enter(m, set, d, parent))
		return NULL;
kept:
	ms->walking = true;
	return m->usable ? m : NULL;
}

const char *fc_dir_key(struct dirmemo *m, const char *path, size_t len, size_t *keylen)
{
	size_t nlen = len - m->dlen;

	if (m->key_is_path) {
		*keylen = len;
		return path;
	}
	if (grow(&m->key, &m->kcap, m->klen + nlen + 1))
		return NULL;
	memcpy(m->key + m->klen, path + m->dlen, nlen + 1);
	*keylen = m->klen + nlen;
	return m->key;
}

/* What DIR's key kd[0..n) (byte pairs p) leaves of spec sp's checks, for names whose deepest
 * required prefix is DIR's (so every key starts with sp->q): a dcand_how, or -1 when no name
 * can match. */
static int classify(const struct spec *sp, const char *kd, size_t n, const uint64_t p[4],
		    struct dcand *c)
{
	size_t a = sp->reqslash;

	if (sp->form == FORM_ANYSUFFIX)
		return D_SURE;
	if (sp->form == FORM_SUBTREE) {
		/* "P(/.*)?": the key is longer than DIR, so only the byte after P counts */
		if (sp->qlen >= n)
			return D_WHOLE;
		return n && kd[sp->qlen] == '/' ? D_SURE : -1;
	}
	if (!sp->reqlen)
		return D_PCRE;
	if (sp->reqfrom > n)
		return D_WHOLE;
	if (!((sp->pairs[0] & ~p[0]) | (sp->pairs[1] & ~p[1]) | (sp->pairs[2] & ~p[2]) |
	      (sp->pairs[3] & ~p[3])) &&
	    memmem(kd + sp->reqfrom, n - sp->reqfrom, sp->req, sp->reqlen))
		return D_PCRE;
	/* not in DIR: the run reaches into NAME, which has no '/' */
	if (sp->reqlen > UINT16_MAX)
		return D_WHOLE;
	if (a == sp->reqlen) {
		c->b = sp->req;
		c->blen = (uint16_t)sp->reqlen;
		c->need = fc_byteset(sp->req, sp->reqlen);
		return D_INNAME;
	}
	/* its last '/' must be DIR's last byte, the bytes before it DIR's end */
	if (a + 1 == sp->reqlen || a + 1 > n || n - 1 - a < sp->reqfrom ||
	    memcmp(kd + n - 1 - a, sp->req, a + 1) != 0)
		return -1;
	c->b = sp->req + a + 1;
	c->blen = (uint16_t)(sp->reqlen - a - 1);
	return D_HEAD;
}

/* DIR's key's byte pairs: the parent's and those of DIR's last component (with the '/'s at
 * its ends). */
static void dir_pairs(struct dirmemo *m, const struct dirmemo *parent)
{
	if (m->have_pairs)
		return;
	if (parent && parent->have_pairs) {
		size_t from = parent->klen - 1;
		uint64_t more[4];
		fc_pairs(m->key + from, m->klen - from, more);
		for (int i = 0; i < 4; i++)
			m->pairs[i] = parent->pairs[i] | more[i];
	} else {
		fc_pairs(m->key, m->klen, m->pairs);
	}
	m->have_pairs = true;
}

/* Room for n candidates in dt: 0 or ENOMEM. */
static int cands_room(struct dtier *dt, unsigned n)
{
	struct dcand *v;

	if (n <= dt->cap)
		return 0;
	if (!(v = realloc(dt->v, n * 2 * sizeof(*v))))
		return ENOMEM;
	dt->v = v;
	dt->cap = n * 2;
	return 0;
}

/* Puts spec i (sp) in dt's list unless DIR rules it out; false when it ends the list. */
static bool add_cand(struct dtier *dt, const struct dirmemo *m, unsigned i, const struct spec *sp)
{
	struct dcand *c = &dt->v[dt->n];
	int how = classify(sp, m->key, m->klen, m->pairs, c);

	if (how < 0)
		return true;
	c->spec = i;
	c->tclass = sp->tclass;
	c->how = (uint8_t)how;
	dt->n++;
	/* it answers every name: those after it are never tried */
	return how != D_SURE || sp->tclass;
}

const struct dtier *fc_dir_cands(struct dirmemo *m, const struct fc_set *set, int k)
{
	struct dtier *dt = &m->tier[k];
	const struct dirmemo *p = m->parent;
	const struct chunkset *cs;

	if (dt->built)
		return dt;
	/* (a candidate the parent's list leaves out may still match deeper: its run may lie in
	 * DIR's last component) */
	if (p && (p->gen != m->parent_gen || p->serial != m->serial))
		p = NULL;
	dir_pairs(m, p);
	/* mode 0's candidates: every type's, each with its type (checked per name) */
	cs = fc_chunkset(set, k ? &set->regex : &set->plain, dt->w.best, 0);
	if (!cs || cands_room(dt, cs->nall))
		return NULL;
	dt->n = 0;
	for (unsigned j = 0; j < cs->nall; j++)
		if (!add_cand(dt, m, cs->all[j], &set->specs[cs->all[j]]))
			break;
	dt->built = true;
	return dt;
}
