/*
 * Compiled file_contexts: the file_contexts.bin that sefcontext_compile writes, read for its
 * regex strings, file types and contexts only. The serialized PCRE bytecode is skipped: every
 * regex is compiled again at load, exactly as for a text file, so a .bin made for another PCRE2
 * version or architecture reads the same.
 *
 * Two layouts (libselinux label_file.h, sefcontext_compile.c; our own reading of them):
 *
 *  Versions 1 to 5 (libselinux up to 3.7; Debian 12's 3.4 writes 5), in the writer's byte order
 *  (little-endian read here: x86 and ARM; 3.4 reads its own host's order):
 *   u32 magic 0xf97cff8a, u32 version,
 *   [v>=2] u32 n + n bytes: the PCRE version, [v>=5] u32 n + n bytes: the PCRE2 arch string,
 *   u32 stem count, each: u32 n (>0) + n bytes + NUL,
 *   u32 spec count, each: u32 n + n bytes context (NUL included), u32 n + n bytes regex (NUL
 *   included), u32 mode (S_IFxxx or 0), s32 stem id (out of range: none), u32 hasMetaChars,
 *   [v>=4] u32 prefix length, then the regex data: PCRE2 u32 n + n bytes (n may be 0);
 *   PCRE1 (version string below "10", or v1) the same twice (pattern, study data).
 *   The specs are in the text's order after libselinux's stable partition (regexes with
 *   metacharacters first), which is also what 3.4 uses when it loads the .bin: so the specs are
 *   taken in file order and give 3.4's answers exactly. Stem id and hasMetaChars must be what
 *   the regex itself gives (3.4 would trust them; a file where they disagree is refused).
 *
 *  Version 6 (libselinux 3.8), big-endian, a tree:
 *   u32 magic, u32 6, u32 n + PCRE version, u32 n + arch, u64 spec count,
 *   u32 context count, each: u16 n (1..65534) + n bytes (no NUL),
 *   node: u16 n + stem with NUL (n == 1 only at the root), u32 count + literal specs,
 *   u32 count + regex specs, u32 count + child nodes (stems strictly increasing);
 *   literal spec: u32 context index (1-based), u16 n + regex with NUL, u16 n + literal with
 *   NUL, u8 file kind; regex spec: u32 context index, u32 source line, u16 n + regex with NUL,
 *   u16 prefix length, u8 file kind, u32 n + n bytes regex data.
 *   The text order is not kept: literal specs are sorted by path, for one path typed before
 *   untyped (same-type lines in text order with glibc's stable qsort); regex specs keep their
 *   source line. We rebuild an order for 3.4's rules: the regex specs by source line, then the
 *   literal specs in file order, the last winning. That is the text's answer unless two plain
 *   lines match the same path in another order than the text's ("/a" then "/a --": the untyped
 *   one wins here, the typed one in the text and in 3.8). A spec that 3.4 calls plain but 3.8
 *   a regex ("/x/f\d") comes before every literal spec.
 *
 * A spec's "line" (fc_spec.line, FILE:LINE in messages and `lookup -v`) is its ordinal in the
 * compiled file, 1-based. Errors in the layout name the byte offset.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

#define FC_BIN_MAX_DEPTH 64

/*
 * The file is read through a window: most of a compiled file is PCRE bytecode that is never
 * looked at, so it is read a chunk at a time (ahead.c), and the fields are taken from the chunk
 * in place. Pointers from take() are valid until the next take(): what a spec keeps is copied
 * out at once (keep()).
 */
struct rd {
	const unsigned char *b; /* the window: file bytes [wbase, wbase + wlen) */
	size_t wbase, wlen;
	struct fc_ahead *ah;    /* NULL: b is the whole file */
	size_t len, off;
	bool be;            /* multi-byte numbers are big-endian */
	unsigned spec;      /* the spec being read (1-based), 0 outside specs */
	const char *path;
	struct fc_error *err;
	struct fc_set *set; /* whose arena keeps the strings the specs keep */
	bool nomem;
	bool shared;        /* the specs' analyses are shared with ah's thread */
};

/* A copy of the string s, n bytes with its NUL, in the set's arena ("" when out of memory: the
 * parse then fails with ENOMEM). */
static const char *keep(struct rd *r, const char *s, size_t n)
{
	char *d = fc_balloc(r->set, n, 1);
	if (!d) {
		r->nomem = true;
		return "";
	}
	return memcpy(d, s, n);
}

static uint32_t load32(const unsigned char *p, bool be)
{
	return be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
		  : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* "FILE: at byte offset N (spec K): reason", at the offset where the bad item starts. */
static int bad(struct rd *r, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(struct rd *r, size_t at, const char *fmt, ...)
{
	char why[400], where[80];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (r->spec)
		snprintf(where, sizeof(where), " (spec %u)", r->spec);
	else
		where[0] = 0;
	fc_seterr(r->err, r->path, 0, 0, "compiled file_contexts: at byte offset %zu%s: %s", at,
		  where, why);
	return EINVAL;
}

/* take() when the bytes are not in the window, or not in the file */
static int take_slow(struct rd *r, size_t n, const char *what, const unsigned char **out)
{
	int rc;

	if (n > r->len - r->off)
		return bad(r, r->off, "truncated: %s needs %zu byte%s, %zu left", what, n,
			   n == 1 ? "" : "s", r->len - r->off);
	if (out) {
		if ((r->off < r->wbase || r->off + n > r->wbase + r->wlen) &&
		    (rc = fc_ahead_get(r->ah, r->off, n, &r->b, &r->wbase, &r->wlen)))
			return rc;
		*out = r->b + (r->off - r->wbase);
	}
	r->off += n;
	return 0;
}

/* n bytes at the current offset (to *out unless out is NULL), the offset moved past them; inline
 * for the usual field, which is in the window (a call a field was a tenth of a format 5 load) */
static inline __attribute__((always_inline)) int take(struct rd *r, size_t n, const char *what,
						       const unsigned char **out)
{
	/* the window lies within the file: inside it, n bytes are there to take */
	size_t in = r->off - r->wbase; /* huge when off is before the window */
	if (out && in <= r->wlen && n <= r->wlen - in) {
		*out = r->b + in;
		r->off += n;
		return 0;
	}
	return take_slow(r, n, what, out);
}

static inline int u32(struct rd *r, const char *what, uint32_t *v)
{
	const unsigned char *p;
	int rc = take(r, 4, what, &p);
	if (!rc)
		*v = load32(p, r->be);
	return rc;
}

static inline int u16(struct rd *r, const char *what, uint16_t *v)
{
	const unsigned char *p;
	int rc = take(r, 2, what, &p);
	if (!rc)
		*v = r->be ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]);
	return rc;
}

static inline int u8(struct rd *r, const char *what, uint8_t *v)
{
	const unsigned char *p;
	int rc = take(r, 1, what, &p);
	if (!rc)
		*v = p[0];
	return rc;
}

/* A count of records of at least min bytes each must fit in what is left. */
static int count_fits(struct rd *r, size_t at, uint64_t n, size_t min, const char *what)
{
	if (n > (r->len - r->off) / min)
		return bad(r, at, "%llu %s cannot fit in the %zu bytes left (corrupt count?)",
			   (unsigned long long)n, what, r->len - r->off);
	return 0;
}

static bool space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* Whether none of the 8 bytes of w is at or below ' ', or at or above 0x7f: such a byte sets its
 * high bit in one of the three (a borrow or carry into the next byte only errs the other way) */
static inline bool printable8(uint64_t w)
{
	uint64_t low = w - 0x2121212121212121ull, high = w + 0x0101010101010101ull;
	return ((low | high | w) & 0x8080808080808080ull) == 0;
}

/*
 * A regex or context of n bytes at s (s[n] is NUL): what a file_contexts line could hold, so
 * that the set is one the text parser could have made: not empty, no NUL, no white space, no
 * byte above 0x7f (refused in text too).
 */
static int check_field(struct rd *r, size_t at, const char *s, size_t n, const char *what)
{
	size_t i = 0;

	if (!n)
		return bad(r, at, "empty %s", what);
	/* the usual field has none: eight bytes at a time, the last eight overlapping the rest */
	if (n >= 8) {
		uint64_t w;
		for (; i + 8 <= n; i += 8) {
			memcpy(&w, s + i, 8);
			if (!printable8(w))
				break;
		}
		if (i + 8 > n) {
			memcpy(&w, s + n - 8, 8);
			if (printable8(w))
				return 0;
			i = n - 8;
		}
	}
	for (; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!c)
			return bad(r, at, "NUL byte inside the %s", what);
		if (space(c) || c >= 0x80)
			return bad(r, at, "%s has byte 0x%02x at %zu (after '%.*s'), which a "
				   "file_contexts line cannot hold", what, c, i, (int)(i < 60 ? i : 60),
				   s);
	}
	return 0;
}

/* A NUL-terminated string of n bytes (NUL included, none before it) at the current offset. */
static int cstring(struct rd *r, size_t n, const char *what, const char **out)
{
	size_t at = r->off;
	const unsigned char *p;
	int rc;

	if (!n)
		return bad(r, at, "empty %s (length 0)", what);
	if ((rc = take(r, n, what, &p)))
		return rc;
	if (p[n - 1])
		return bad(r, at, "%s does not end with a NUL byte", what);
	*out = (const char *)p;
	return check_field(r, at, *out, n - 1, what);
}

static const char *type_name(mode_t m)
{
	switch (m) {
	case S_IFREG: return "--";
	case S_IFDIR: return "-d";
	case S_IFCHR: return "-c";
	case S_IFBLK: return "-b";
	case S_IFSOCK: return "-s";
	case S_IFLNK: return "-l";
	case S_IFIFO: return "-p";
	default: return NULL;
	}
}

/* A spec of the set as add_spec makes it, its ordinal (file order) given; its analysis left */
static void fill_spec(struct spec *s, const char *file, unsigned ordinal, const char *regex,
		      const char *context, mode_t mode)
{
	*s = fc_blank_spec;
	s->pub.file = file;
	s->pub.line = ordinal;
	s->pub.regex = regex;
	s->pub.type = type_name(mode);
	s->pub.mode = mode;
	s->pub.context = context;
	s->col = 1;
}

/* sh: the regex's fc_scan34 shape, when the reader has it (NULL: the index scans for it) */
static int add_spec(struct fc_set *set, struct rd *r, unsigned fileno_, unsigned ordinal,
		    const char *regex, const char *context, mode_t mode,
		    const struct regex_shape *sh)
{
	struct spec s;

	fill_spec(&s, set->names[fileno_], ordinal, regex, context, mode);
	if (sh && sh->stem_len <= UINT32_MAX) {
		s.shaped = true;
		s.meta34 = sh->meta;
		s.stem34 = (uint32_t)sh->stem_len;
	}
	/* with a thread of the read's own, analysed by either side once pushed (the thread's
	 * share runs beside the reader's parse); else now, on this side */
	if (r->shared) {
		int rc = fc_push_spec(set, &s);
		if (!rc)
			fc_ahead_pushed(r->ah, set->nspecs);
		return rc;
	}
	int rc = fc_analyze_spec(set, &s);
	return rc ? rc : fc_push_spec(set, &s);
}

/* PCRE2's version strings start "10."; PCRE1's "8.". */
static bool pcre1_layout(uint32_t version, const unsigned char *v, size_t n)
{
	unsigned long major = 0;
	size_t i = 0;

	if (version < 2)
		return true;
	for (; i < n && i < 6 && v[i] >= '0' && v[i] <= '9'; i++)
		major = major * 10 + (v[i] - '0');
	return i > 0 && major < 10;
}

static int skip_blob(struct rd *r, const char *what)
{
	uint32_t n;
	int rc = u32(r, what, &n);
	return rc ? rc : take(r, n, what, NULL);
}

/* ---- versions 1 to 5 ---- */

static int parse_v5(struct fc_set *set, unsigned fileno_, struct rd *r, uint32_t version,
		    bool pcre1)
{
	uint32_t nstems, nspecs;
	const char **stem_str = NULL;
	size_t at;
	uint32_t *stem_len = NULL;
	int rc;

	/* a thread for the analyses keeps up with this reader and reads the file's last eighth
	 * meanwhile (refpolicy: best of 41 3.58 -> 3.15 ms, median 4.66 -> 3.95 at load 2.8; a
	 * tenth and a fourteenth paid less) */
	fc_ahead_tail(r->ah, r->len - r->len / 8);
	at = r->off;
	if ((rc = u32(r, "the stem count", &nstems)) ||
	    (rc = count_fits(r, at, nstems, 5, "stems")))
		return rc;
	stem_str = malloc((nstems + 1) * sizeof(*stem_str));
	stem_len = malloc((nstems + 1) * sizeof(*stem_len));
	if (!stem_str || !stem_len) {
		rc = ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < nstems; i++) {
		const unsigned char *p;
		uint32_t n;
		at = r->off;
		if ((rc = u32(r, "a stem length", &n)))
			goto out;
		if (!n || n == UINT32_MAX) {
			rc = bad(r, at, "stem %u has length %u", i, n);
			goto out;
		}
		if ((rc = take(r, (size_t)n + 1, "a stem", &p)))
			goto out;
		if (p[n]) {
			rc = bad(r, at + 4, "stem %u does not end with a NUL byte", i);
			goto out;
		}
		stem_str[i] = keep(r, (const char *)p, strlen((const char *)p) + 1);
		stem_len[i] = n;
	}
	at = r->off;
	if ((rc = u32(r, "the spec count", &nspecs)) ||
	    (rc = count_fits(r, at, nspecs, version >= 4 ? 30 : 26, "specs")) ||
	    (rc = fc_reserve(set, nspecs)))
		goto out;
	r->shared = fc_ahead_share(r->ah, set, nspecs);
	for (uint32_t i = 0; i < nspecs; i++) {
		const char *ctx, *re;
		uint32_t n, mode, meta, prefix;
		int32_t stem;
		size_t spec_at = r->off;
		struct regex_shape sh;

		r->spec = i + 1;
		if ((rc = u32(r, "the context length", &n)) ||
		    (rc = cstring(r, n, "context", &ctx)))
			goto out;
		ctx = keep(r, ctx, n);
		if ((rc = u32(r, "the regex length", &n)) || (rc = cstring(r, n, "regex", &re)))
			goto out;
		re = keep(r, re, n);
		at = r->off;
		if ((rc = u32(r, "the mode", &mode)))
			goto out;
		if (mode && !type_name(mode)) {
			rc = bad(r, at, "mode 0%o is not a file type", mode);
			goto out;
		}
		if ((rc = u32(r, "the stem id", (uint32_t *)&stem)) ||
		    (rc = u32(r, "the metacharacter flag", &meta)))
			goto out;
		if (version >= 4 && (rc = u32(r, "the prefix length", &prefix)))
			goto out;
		if ((rc = skip_blob(r, "the compiled regex")) ||
		    (pcre1 && (rc = skip_blob(r, "the regex study data"))))
			goto out;

		/* The stem and the metacharacter flag decide 3.4's answers: they must be the
		 * regex's own, as sefcontext_compile writes them. */
		fc_scan34(re, &sh);
		if (meta != (uint32_t)sh.meta) {
			rc = bad(r, spec_at, "the metacharacter flag is %u, but regex '%.60s' %s", meta,
				 re, sh.meta ? "has metacharacters" : "has none");
			goto out;
		}
		bool has = stem >= 0 && (uint32_t)stem < nstems;
		if (has != (sh.stem_len != 0) ||
		    (has && (stem_len[stem] != sh.stem_len ||
			     memcmp(stem_str[stem], re, sh.stem_len) != 0))) {
			rc = bad(r, spec_at, "stem id %d does not name the stem of regex '%.60s', "
				 "which is %s%.*s%s", (int)stem, re, sh.stem_len ? "'" : "",
				 sh.stem_len ? (int)sh.stem_len : 4, sh.stem_len ? re : "none",
				 sh.stem_len ? "'" : "");
			goto out;
		}
		if ((rc = add_spec(set, r, fileno_, i + 1, re, ctx, mode, &sh)))
			goto out;
	}
	r->spec = 0;
	if (r->off != r->len)
		rc = bad(r, r->off, "%zu byte%s after the last spec", r->len - r->off,
			 r->len - r->off == 1 ? "" : "s");
out:
	free(stem_str);
	free(stem_len);
	return rc;
}

/* ---- version 6 ---- */

/* A spec as read; its ordinal is its place in v6.e, plus one (24 bytes an entry, not 32, keep
 * refpolicy's arena, with the read chunk, in one huge page) */
struct ent {
	const char *regex;
	const char *context;
	mode_t mode;
	uint32_t lineno;     /* source line of a regex spec; 0 for a literal spec */
};

struct v6 {
	struct ent *e;
	size_t n, cap;
	const char **ctx;
	uint32_t nctx;
	bool pcre1;
	/* the specs as read, analysed meanwhile by the load's thread (NULL: none); they go
	 * into the set once the order is known */
	struct spec *stage;
	const char *file;
};

static const mode_t kind_mode[8] = { 0, S_IFDIR, S_IFCHR, S_IFBLK, S_IFSOCK, S_IFIFO, S_IFLNK,
				     S_IFREG };

static int push_ent(struct rd *r, struct v6 *t, const struct ent *e)
{
	/* room for as many as the header counts, which cannot be more than the file holds */
	if (t->n == t->cap)
		return bad(r, r->off, "more specs than the header counts (%zu)", t->cap);
	t->e[t->n++] = *e;
	if (t->stage) {
		fill_spec(&t->stage[t->n - 1], t->file, (unsigned)t->n, e->regex, e->context,
			  e->mode);
		fc_ahead_pushed(r->ah, t->n);
	}
	return 0;
}

/* Reads the common head of both spec kinds: context index (and line), regex. */
static int v6_context(struct rd *r, struct v6 *t, struct ent *e)
{
	uint32_t id;
	size_t at = r->off;
	int rc = u32(r, "the context index", &id);

	if (rc)
		return rc;
	if (!id || id > t->nctx)
		return bad(r, at, "context index %u is not in 1..%u", id, t->nctx);
	e->context = t->ctx[id - 1];
	return 0;
}

/* The regex, kept; *len: its length (strlen) */
static int v6_regex(struct rd *r, const char **re, size_t *len)
{
	uint16_t n;
	int rc = u16(r, "the regex length", &n);
	if (!rc && !(rc = cstring(r, n, "regex", re))) {
		*re = keep(r, *re, n);
		*len = (size_t)n - 1; /* cstring: n > 0, one NUL, at the end */
	}
	return rc;
}

static int v6_kind(struct rd *r, struct ent *e)
{
	uint8_t k;
	size_t at = r->off;
	int rc = u8(r, "the file kind", &k);

	if (rc)
		return rc;
	if (k > 7)
		return bad(r, at, "file kind %u is not one of 0..7", k);
	e->mode = kind_mode[k];
	return 0;
}

static int v6_node(struct rd *r, struct v6 *t, unsigned depth, const char **stem_out)
{
	uint16_t sl;
	uint32_t nlit, nre, nkids;
	const unsigned char *stem;
	const char *prev_kid = NULL;
	size_t at = r->off;
	int rc;

	if (depth > FC_BIN_MAX_DEPTH)
		return bad(r, at, "nodes nested deeper than %d", FC_BIN_MAX_DEPTH);
	if ((rc = u16(r, "a node's stem length", &sl)))
		return rc;
	if (!sl || (sl == 1) != (depth == 0))
		return bad(r, at, "%s node has a stem of length %u", depth ? "a child" : "the root",
			   sl);
	if ((rc = take(r, sl, "a node's stem", &stem)))
		return rc;
	if (stem[sl - 1])
		return bad(r, at + 2, "a node's stem does not end with a NUL byte");
	if (depth && (rc = check_field(r, at + 2, (const char *)stem, (size_t)sl - 1u, "node stem")))
		return rc;
	*stem_out = keep(r, (const char *)stem, sl);

	at = r->off;
	if ((rc = u32(r, "the literal spec count", &nlit)) ||
	    (rc = count_fits(r, at, nlit, 13, "literal specs")))
		return rc;
	for (uint32_t i = 0; i < nlit; i++) {
		struct ent e = {0};
		const char *lit;
		uint16_t n;
		size_t rl;
		r->spec = (unsigned)t->n + 1;
		if ((rc = v6_context(r, t, &e)) || (rc = v6_regex(r, &e.regex, &rl)))
			return rc;
		at = r->off;
		if ((rc = u16(r, "the literal length", &n)) || (rc = cstring(r, n, "literal", &lit)))
			return rc;
		if ((size_t)n - 1 > rl)
			return bad(r, at, "the literal is longer than its regex");
		if ((rc = v6_kind(r, &e)) || (rc = push_ent(r, t, &e)))
			return rc;
	}
	at = r->off;
	r->spec = 0;
	if ((rc = u32(r, "the regex spec count", &nre)) ||
	    (rc = count_fits(r, at, nre, 18, "regex specs")))
		return rc;
	for (uint32_t i = 0; i < nre; i++) {
		struct ent e = {0};
		uint16_t prefix;
		size_t rl;
		r->spec = (unsigned)t->n + 1;
		if ((rc = v6_context(r, t, &e)))
			return rc;
		at = r->off;
		if ((rc = u32(r, "the line number", &e.lineno)))
			return rc;
		if (!e.lineno || e.lineno == UINT32_MAX)
			return bad(r, at, "line number %u", e.lineno);
		if ((rc = v6_regex(r, &e.regex, &rl)))
			return rc;
		at = r->off;
		if ((rc = u16(r, "the prefix length", &prefix)))
			return rc;
		if (prefix > rl)
			return bad(r, at, "prefix length %u is longer than the regex", prefix);
		if ((rc = v6_kind(r, &e)) || (rc = skip_blob(r, "the compiled regex")) ||
		    (t->pcre1 && (rc = skip_blob(r, "the regex study data"))))
			return rc;
		if ((rc = push_ent(r, t, &e)))
			return rc;
	}
	r->spec = 0;
	at = r->off;
	if ((rc = u32(r, "the child node count", &nkids)) ||
	    (rc = count_fits(r, at, nkids, 14, "child nodes")))
		return rc;
	for (uint32_t i = 0; i < nkids; i++) {
		const char *kid;
		at = r->off;
		if ((rc = v6_node(r, t, depth + 1, &kid)))
			return rc;
		if (prev_kid && strcmp(prev_kid, kid) >= 0)
			return bad(r, at, "child node '%.40s' is not after '%.40s' (not sorted)", kid,
				   prev_kid);
		prev_kid = kid;
	}
	if (depth && !nlit && !nre && !nkids)
		return bad(r, at, "an empty child node");
	return 0;
}

/*
 * The order 3.4's rules need: regex specs by source line, then literal specs in file order. The
 * specs' ordinals (file order) sorted by that key, a literal spec's being above every regex
 * spec's line: a radix sort, a byte of the key a pass, as many passes as the largest key has
 * bytes (two for any policy under 65535 lines), which keeps the file order of equal keys
 * (qsort's calls to a comparison were a tenth of a load).
 */
static uint32_t order_key(const struct ent *e, uint32_t literal)
{
	return e->lineno ? e->lineno : literal;
}

/* Returns the order in *order, in a malloc'd block returned (in the arena, it would outlive the
 * load under the specs' analyses: refpolicy's index then needs a second huge page). */
static uint32_t *v6_order(const struct v6 *t, const uint32_t **order)
{
	uint32_t *block = malloc((2 * t->n + 1) * sizeof(*block)), *a = block, *b = a + t->n;
	uint32_t literal = 0;

	if (!block)
		return NULL;
	for (size_t i = 0; i < t->n; i++) {
		a[i] = (uint32_t)i;
		if (t->e[i].lineno > literal)
			literal = t->e[i].lineno;
	}
	literal++; /* a line is below UINT32_MAX */
	for (unsigned shift = 0; shift < 32 && literal >> shift; shift += 8) {
		size_t count[257] = {0};
		for (size_t i = 0; i < t->n; i++)
			count[(order_key(&t->e[a[i]], literal) >> shift & 255) + 1]++;
		for (unsigned k = 0; k < 256; k++)
			count[k + 1] += count[k];
		for (size_t i = 0; i < t->n; i++)
			b[count[order_key(&t->e[a[i]], literal) >> shift & 255]++] = a[i];
		uint32_t *swap = a;
		a = b;
		b = swap;
	}
	*order = a;
	return block;
}

/* The specs into the set in order: analysed as they were read (staged), or now */
static int v6_add(struct fc_set *set, unsigned fileno_, struct rd *r, const struct v6 *t,
		  const uint32_t *order)
{
	int rc = 0;

	if (t->stage) {
		fc_ahead_finish(r->ah, set);
		for (size_t i = 0; i < t->n && !rc; i++)
			rc = fc_push_spec(set, &t->stage[order[i]]);
		return rc;
	}
	r->shared = fc_ahead_share(r->ah, set, t->n);
	for (size_t i = 0; i < t->n && !rc; i++) {
		const struct ent *e = &t->e[order[i]];
		rc = add_spec(set, r, fileno_, order[i] + 1, e->regex, e->context, e->mode, NULL);
	}
	return rc;
}

static int parse_v6(struct fc_set *set, unsigned fileno_, struct rd *r, bool pcre1)
{
	struct v6 t = { .pcre1 = pcre1, .file = set->names[fileno_] };
	const unsigned char *p;
	const char *root;
	uint64_t total;
	size_t at, total_at = r->off;
	int rc;

	if ((rc = take(r, 8, "the spec count", &p)))
		return rc;
	total = (uint64_t)load32(p, true) << 32 | load32(p + 4, true);
	if ((rc = count_fits(r, total_at, total, 13, "specs")))
		return rc;
	t.cap = (size_t)total;
	if (!(t.e = fc_balloc(set, (t.cap + 1) * sizeof(*t.e), 16)))
		return ENOMEM;
	at = r->off;
	if ((rc = u32(r, "the context count", &t.nctx)) ||
	    (rc = count_fits(r, at, t.nctx, 3, "contexts")))
		return rc;
	/* contexts are stored without NUL: copy them, each NUL-terminated */
	t.ctx = malloc((t.nctx + 1) * sizeof(*t.ctx));
	if (!t.ctx)
		return ENOMEM;
	for (uint32_t i = 0; i < t.nctx; i++) {
		uint16_t n;
		at = r->off;
		if ((rc = u16(r, "a context length", &n)))
			goto out;
		if (!n || n == UINT16_MAX) {
			rc = bad(r, at, "context %u has length %u", i + 1, n);
			goto out;
		}
		if ((rc = take(r, n, "a context", &p)))
			goto out;
		char *c = fc_balloc(r->set, (size_t)n + 1, 1);
		if (!c) {
			rc = ENOMEM;
			goto out;
		}
		memcpy(c, p, n);
		c[n] = 0;
		if ((rc = check_field(r, at + 2, c, n, "context")))
			goto out;
		t.ctx[i] = c;
	}
	/* the thread analyses the specs while the tree is read */
	t.stage = fc_ahead_stage(r->ah, t.cap);
	if ((rc = v6_node(r, &t, 0, &root)))
		goto out;
	r->spec = 0;
	if (r->off != r->len) {
		rc = bad(r, r->off, "%zu byte%s after the root node", r->len - r->off,
			 r->len - r->off == 1 ? "" : "s");
		goto out;
	}
	if (total != t.n) {
		rc = bad(r, total_at, "the header counts %llu specs, the tree holds %zu",
			 (unsigned long long)total, t.n);
		goto out;
	}
	/* room for the specs at once (a list grown as it goes leaves its old copies in the
	 * arena) */
	if ((rc = fc_reserve(set, t.n)))
		goto out;
	const uint32_t *order;
	uint32_t *block = v6_order(&t, &order);
	if (!block) {
		rc = ENOMEM;
		goto out;
	}
	rc = v6_add(set, fileno_, r, &t, order);
	free(block);
out:
	free(t.ctx);
	return rc;
}

static int parse_all(struct fc_set *set, unsigned fileno_, struct rd *r)
{
	const unsigned char *v = NULL;
	uint32_t magic, version, vlen = 0, alen;
	bool pcre1;
	int rc;

	if ((rc = u32(r, "the magic number", &magic)))
		return rc;
	r->be = magic != FC_BIN_MAGIC;
	if ((rc = u32(r, "the version", &version)))
		return rc;
	if (version < 1 || version > 6 || (version == 6) != r->be)
		return bad(r, 4, "unsupported version %u (%s-endian); known: 1 to 5 little-endian "
			   "(libselinux 3.4 writes 5), 6 big-endian (libselinux 3.8)", version,
			   r->be ? "big" : "little");
	if (version >= 2) {
		if ((rc = u32(r, "the PCRE version length", &vlen)) ||
		    (rc = take(r, vlen, "the PCRE version", &v)))
			return rc;
	}
	/* v stays valid: skipping the architecture reads nothing */
	if (version >= 5) {
		if ((rc = u32(r, "the PCRE architecture length", &alen)) ||
		    (rc = take(r, alen, "the PCRE architecture", NULL)))
			return rc;
	}
	pcre1 = pcre1_layout(version, v, vlen);
	return version == 6 ? parse_v6(set, fileno_, r, pcre1)
			    : parse_v5(set, fileno_, r, version, pcre1);
}

int fc_parse_bin(struct fc_set *set, unsigned fileno_, const char *buf, int fd, size_t len,
		 struct fc_error *err)
{
	struct rd r = { .b = (const unsigned char *)buf, .wlen = buf ? len : 0, .len = len,
			.path = set->names[fileno_], .err = err, .set = set };
	int rc = buf ? 0 : fc_ahead_open(&r.ah, set, fd, len, r.path, err);

	if (!rc)
		rc = parse_all(set, fileno_, &r);
	if (!rc)
		fc_ahead_finish(r.ah, set);
	fc_ahead_close(r.ah, set);
	if (!rc && r.nomem)
		rc = ENOMEM;
	return rc;
}
