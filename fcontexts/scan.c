/*
 * What a regex's text tells before PCRE2 sees it: libselinux 3.4's own classification (metachars,
 * stem), the literal prefix every match must start with, and a literal run every match contains.
 * Anything this scanner does not fully understand makes it conservative: no prefix, no run.
 */
#include <ctype.h>
#include <string.h>

#include "internal.h"

/* Regex syntax characters (of the pattern text, outside classes and escapes). */
static bool is_syntax(unsigned char c)
{
	switch (c) {
	case '[': case ']': case '(': case ')': case '{': case '}': case '|': case '.': case '^':
	case '$': case '?': case '*': case '+':
		return true;
	default:
		return false;
	}
}

static bool is_quant(int c)
{
	return c == '?' || c == '*' || c == '+' || c == '{';
}

/* The bytes fc_scan34 stops at, by kind: one table lookup a byte (the scan runs over every
 * spec's regex at load) */
enum { C34_META = 1, C34_ESC = 2, C34_SLASH = 4, C34_END = 8 };
static const unsigned char cls34[256] = {
	[0] = C34_END, ['\\'] = C34_ESC, ['/'] = C34_SLASH,
	['.'] = C34_META, ['^'] = C34_META, ['$'] = C34_META, ['?'] = C34_META, ['*'] = C34_META,
	['+'] = C34_META, ['|'] = C34_META, ['['] = C34_META, ['('] = C34_META, ['{'] = C34_META,
};

/*
 * libselinux 3.4's two scans in one pass: hasMetaChars (a metacharacter outside an escape; a
 * '\\' at the end stops it) and the stem (the text up to the first '/' after the first byte,
 * when no byte before that '/', escaped or not, is a metacharacter).
 */
void fc_scan34(const char *re, struct regex_shape *sh)
{
	const unsigned char *p = (const unsigned char *)re;
	size_t i = 0, slash = 0;     /* slash: the stem's '/', 0 while none is found */
	bool meta = false, nostem = false; /* nostem: a metacharacter before any '/' */

	for (;;) {
		unsigned k = cls34[p[i]];
		if (!k) {
			i++;
			continue;
		}
		if (k & C34_END)
			break;
		if (k & C34_SLASH) {
			if (i && !slash && !nostem)
				slash = i;
			i++;
		} else if (k & C34_META) {
			/* both known now: whether there is a stem was decided before this byte */
			meta = true;
			nostem |= !slash;
			break;
		} else {
			/* an escape: its byte counts for the stem, not for hasMetaChars */
			unsigned e = cls34[p[i + 1]];
			if (e & C34_END)
				break;
			if (!slash && !nostem) {
				if (e & C34_META)
					nostem = true;
				else if (e & C34_SLASH)
					slash = i + 1;
			}
			i += 2;
		}
	}
	sh->meta = meta;
	sh->stem_len = nostem ? 0 : slash;
}

/* Skips a character class starting at re[i] == '['; returns the index after its ']', or 0 when
 * the class is one this scanner does not model (POSIX classes, \Q, \c, unterminated). */
static size_t skip_class(const char *re, size_t i)
{
	size_t j = i + 1;

	if (re[j] == '^')
		j++;
	if (re[j] == ']')
		j++;
	while (re[j] && re[j] != ']') {
		if (re[j] == '\\') {
			if (!re[j + 1] || re[j + 1] == 'Q' || re[j + 1] == 'c' || re[j + 1] == 'E')
				return 0;
			j += 2;
		} else if (re[j] == '[') {
			return 0;
		} else {
			j++;
		}
	}
	return re[j] == ']' ? j + 1 : 0;
}

/* The run of literal characters being collected at the top level, and the longest one seen. */
struct runs {
	char *best;
	size_t best_len, cur_len;
	char cur[256];
	bool first;      /* the current run started at the pattern's start: it is the prefix */
};

static void run_end(struct runs *r)
{
	if (!r->first && r->cur_len > r->best_len) {
		memcpy(r->best, r->cur, r->cur_len);
		r->best_len = r->cur_len;
	}
	r->cur_len = 0;
	r->first = false;
}

static void run_add(struct runs *r, char c)
{
	if (r->cur_len < sizeof(r->cur))
		r->cur[r->cur_len++] = c;
}

/* Bytes that are not plain text to the scan: syntax, the escape, the end. */
static const unsigned char unplain[256] = {
	[0] = 1, ['\\'] = 1, ['['] = 1, [']'] = 1, ['('] = 1, [')'] = 1, ['{'] = 1, ['}'] = 1,
	['|'] = 1, ['.'] = 1, ['^'] = 1, ['$'] = 1, ['?'] = 1, ['*'] = 1, ['+'] = 1,
};

/* A scan in progress over one regex. */
struct scanner {
	const char *re;
	size_t i, plen;
	int depth;          /* of groups */
	bool in_prefix;     /* every character so far is literal: they make the prefix */
	bool topalt;        /* a '|' outside any group */
	bool opaque;        /* something we do not follow: no prefix, no required literal */
	bool literal;       /* no metacharacter and only escapes of punctuation so far */
	char *prefix;
	struct runs run;
};

/* The literal character c, followed in the pattern by `after`. */
static void literal_char(struct scanner *s, char c, char after)
{
	bool q = is_quant(after);
	if (s->in_prefix) {
		if (q)
			s->in_prefix = false;
		else
			s->prefix[s->plen++] = c;
	}
	if (q || s->depth)
		run_end(&s->run);
	else
		run_add(&s->run, c);
}

/* The escape at re[i]: an escaped punctuation character is literal, a letter or digit is not. */
static void escape(struct scanner *s)
{
	const char *re = s->re;
	char x = re[s->i + 1];
	if (!x) {
		s->opaque = true;
		return;
	}
	if (!isalnum((unsigned char)x)) {
		literal_char(s, x, re[s->i + 2]);
		s->i += 2;
		return;
	}
	s->literal = s->in_prefix = false;
	run_end(&s->run);
	/* \Q quotes up to \E, \c eats the next character */
	if (x == 'Q' || x == 'c' || x == 'E') {
		s->opaque = true;
		return;
	}
	/* \x61, \141, \o{141}, \p{L}, \g{1}, \k<n>: the escape's argument is not literal text;
	 * skip it (and what may follow) */
	s->i += 2;
	while (isalnum((unsigned char)re[s->i]))
		s->i++;
	if (re[s->i] == '{' || re[s->i] == '<' || re[s->i] == '\'') {
		char close = re[s->i] == '{' ? '}' : re[s->i] == '<' ? '>' : '\'';
		size_t j = s->i + 1;
		while (re[j] && re[j] != close && re[j] != '(' && re[j] != ')' && re[j] != '|' &&
		       re[j] != '[')
			j++;
		if (re[j] == close)
			s->i = j + 1;
	}
}

/* A group opens at re[i]: only the plain, non-capturing and lookaround forms are followed. */
static void open_group(struct scanner *s)
{
	const char *re = s->re + s->i;
	s->literal = s->in_prefix = false;
	if (re[1] == '*') {
		s->opaque = true;
		return;
	}
	if (re[1] == '?') {
		char y = re[2];
		if (!(y == ':' || y == '=' || y == '!' || y == '>' ||
		      (y == '<' && (re[3] == '=' || re[3] == '!')))) {
			s->opaque = true;
			return;
		}
	}
	s->depth++;
}

/* A quantifier {n}, {n,}, {n,m} at re[i] is not literal text: skipped whole (true). */
static bool quantifier(struct scanner *s)
{
	size_t j = s->i + 1;
	while (s->re[j] && (isdigit((unsigned char)s->re[j]) || s->re[j] == ','))
		j++;
	if (s->re[j] != '}')
		return false;
	s->literal = s->in_prefix = false;
	s->i = j + 1;
	return true;
}

/* The character at re[i], outside an escape; advances i. */
static void step(struct scanner *s)
{
	char c = s->re[s->i];
	if (c != ']' && c != '}' && is_syntax((unsigned char)c))
		run_end(&s->run);
	if (c == '{' && quantifier(s))
		return;
	switch (c) {
	case '[': {
		size_t j = skip_class(s->re, s->i);
		s->literal = s->in_prefix = false;
		if (!j)
			s->opaque = true;
		else
			s->i = j;
		return;
	}
	case '(':
		open_group(s);
		break;
	case ')':
		s->literal = s->in_prefix = false;
		if (--s->depth < 0)
			s->opaque = true;
		break;
	case '|':
		s->literal = s->in_prefix = false;
		if (s->depth == 0)
			s->topalt = true;
		break;
	case '.': case '^': case '$': case '?': case '*': case '+': case '{':
		s->literal = s->in_prefix = false;
		break;
	default:
		literal_char(s, c, s->re[s->i + 1]);
		break;
	}
	s->i++;
}

/* Plain characters each followed by another (so by no quantifier): what literal_char does to
 * each of them, at once (most of a path regex is such text: the scan runs over every spec at
 * load, a character a call was a fifth of the load). */
static void plain_span(struct scanner *s)
{
	const unsigned char *re = (const unsigned char *)s->re;
	size_t i = s->i, k = i;

	while (!unplain[re[k]] && !unplain[re[k + 1]])
		k++;
	if (s->in_prefix) {
		memcpy(s->prefix + s->plen, re + i, k - i);
		s->plen += k - i;
	}
	if (s->depth) {
		run_end(&s->run);
	} else {
		size_t room = sizeof(s->run.cur) - s->run.cur_len;
		size_t m = k - i < room ? k - i : room;
		memcpy(s->run.cur + s->run.cur_len, re + i, m);
		s->run.cur_len += m;
	}
	s->i = k;
}

void fc_scan_regex_shaped(const char *re, struct regex_shape *sh, char *prefix,
			  size_t *prefix_len, char *req, size_t *req_len)
{
	/* every field set but the run's buffer, of which only what was added is read (an
	 * initializer would clear its 256 bytes: a quarter of the scan, spec after spec) */
	struct scanner s;
	size_t n = strlen(re);

	s.re = re;
	s.i = s.plen = 0;
	s.depth = 0;
	s.in_prefix = s.literal = true;
	s.topalt = s.opaque = false;
	s.prefix = prefix;
	s.run.best = req;
	s.run.best_len = s.run.cur_len = 0;
	s.run.first = true;

	while (s.i < n && !s.opaque) {
		if (re[s.i] == '\\')
			escape(&s);
		else if (!unplain[(unsigned char)re[s.i]] && !unplain[(unsigned char)re[s.i + 1]])
			plain_span(&s);
		else
			step(&s);
	}
	run_end(&s.run);
	if (s.depth != 0)
		s.opaque = true;
	if (s.opaque || s.topalt) {
		/* "^a|b$" is not anchored at both ends: it has no prefix. */
		s.plen = 0;
		s.run.best_len = 0;
		s.literal = false;
	}
	sh->literal = s.literal && !sh->meta;
	*prefix_len = s.plen;
	*req_len = s.run.best_len;
}

void fc_scan_regex(const char *re, struct regex_shape *sh, char *prefix, size_t *prefix_len,
		   char *req, size_t *req_len)
{
	fc_scan34(re, sh);
	fc_scan_regex_shaped(re, sh, prefix, prefix_len, req, req_len);
}

/*
 * True when "^RE$" is sure to compile in PCRE2 (DOTALL): RE uses only a small, well-understood
 * part of the syntax — printable ASCII, escapes of punctuation and \d \D \s \S \w \W, '.',
 * '^', '$', '|', plain groups, quantifiers ? * + after something repeatable (a lazy or
 * possessive mark allowed), {n}, {n,}, {n,m} with n <= m < 65536, and bracket classes without
 * POSIX names or reversed ranges. Anything else answers false, and the caller compiles it at
 * once to learn whether and why it fails; so a deferred compile cannot fail for a reason the
 * load would have reported.
 */
static bool class_ok(const char *re, size_t *i)
{
	size_t j = *i + 1;
	int prev = -1; /* the last single character, a range's possible start */

	/* "[:alpha:]" outside a class is an error, "[.x.]" and "[=x=]" too */
	if (re[j] == ':' || re[j] == '.' || re[j] == '=')
		return false;
	if (re[j] == '^')
		j++;
	if (re[j] == ']')
		prev = ']', j++;
	for (;;) {
		unsigned char c = (unsigned char)re[j];
		if (!c || c < 0x20 || c > 0x7e || c == '[')
			return false;
		if (c == ']')
			break;
		if (c == '\\') {
			unsigned char x = (unsigned char)re[j + 1];
			if (x < 0x20 || x > 0x7e)
				return false;
			if (isalnum(x)) {
				/* a class escape cannot start or end a range: "[\\d-z]" is an error */
				if (!strchr("dDsSwW", x) || (re[j + 2] == '-' && re[j + 3] != ']'))
					return false;
				prev = -1;
			} else {
				prev = x;
			}
			j += 2;
			continue;
		}
		if (c == '-' && prev >= 0 && re[j + 1] != ']') {
			unsigned char hi = (unsigned char)re[j + 1];
			if (hi == '\\' || hi == '[' || hi < 0x20 || hi > 0x7e || hi < prev)
				return false;
			j += 2;
			prev = -1;
			continue;
		}
		prev = c;
		j++;
	}
	*i = j + 1;
	return true;
}

static bool count_ok(const char *re, size_t *i, unsigned long *mult)
{
	size_t j = *i + 1;
	unsigned long lo = 0, hi;
	size_t d = 0;

	while (isdigit((unsigned char)re[j]) && d < 6)
		lo = lo * 10 + (unsigned long)(re[j++] - '0'), d++;
	if (!d || isdigit((unsigned char)re[j]))
		return false;
	hi = lo;
	if (re[j] == ',') {
		j++;
		d = 0;
		hi = 0;
		while (isdigit((unsigned char)re[j]) && d < 6)
			hi = hi * 10 + (unsigned long)(re[j++] - '0'), d++;
		if (isdigit((unsigned char)re[j]))
			return false;
		if (!d)
			hi = lo;
	}
	if (re[j] != '}' || lo > hi || hi >= 65536)
		return false;
	*mult *= hi + 1;
	*i = j + 1;
	return true;
}

bool fc_regex_surely_compiles(const char *re)
{
	size_t i = 0, n = strlen(re);
	int depth = 0;
	bool repeatable = false; /* the last item can take a quantifier */
	unsigned long mult = 1;  /* how often counted repeats may copy the pattern, at most */

	if (n > 4000)
		return false;
	while (i < n) {
		unsigned char c = (unsigned char)re[i];
		if (c < 0x20 || c > 0x7e)
			return false;
		if (!unplain[c]) {
			/* plain text, most of a regex: each an item that may repeat, taken at once */
			while (re[i] >= 0x20 && re[i] <= 0x7e && !unplain[(unsigned char)re[i]])
				i++;
			repeatable = true;
			continue;
		}
		switch (c) {
		case '\\': {
			unsigned char x = (unsigned char)re[i + 1];
			if (x < 0x20 || x > 0x7e || (isalnum(x) && !strchr("dDsSwW", x)))
				return false;
			i += 2;
			repeatable = true;
			continue;
		}
		case '[':
			if (!class_ok(re, &i))
				return false;
			repeatable = true;
			continue;
		case '(':
			if (re[i + 1] == '?' || re[i + 1] == '*' || ++depth > 100)
				return false;
			repeatable = false;
			break;
		case ')':
			if (--depth < 0)
				return false;
			repeatable = true;
			break;
		case '|': case '^': case '$':
			repeatable = false;
			break;
		case '?': case '*': case '+': case '{':
			if (!repeatable)
				return false;
			if (c == '{') {
				/* PCRE2 copies a counted item: bound the compiled size */
				if (!count_ok(re, &i, &mult) || mult > 64 || n * mult > 16000)
					return false;
			} else {
				i++;
			}
			if (re[i] == '?' || re[i] == '+')
				i++;
			if (re[i] && strchr("?*+{", re[i]))
				return false;
			repeatable = false;
			continue;
		case '}': case ']': default:
			repeatable = true;
			break;
		}
		i++;
	}
	return depth == 0;
}

/*
 * Prefixes for a regex that starts with a group of plain alternatives: "/(vendor|system/vendor)
 * /bin/x" gives "/vendor/bin/x" and "/system/vendor/bin/x", of which every match starts with
 * one. Written one after another to out (each at most strlen(re) bytes, not NUL-terminated);
 * lens[i] their lengths. Returns how many (2..max), or 0 when the regex is not of that form:
 * a literal run, "(" A1 "|" ... "|" An ")" with each Ai a literal run, no quantifier on the
 * group, then a literal run (its last character dropped when a quantifier follows it), and no
 * "|" outside a group anywhere (a top-level "|" unanchors both sides).
 */
static bool plain_lit(const char *re, size_t i, char *c, size_t *adv)
{
	unsigned char x = (unsigned char)re[i];
	if (x == '\\') {
		unsigned char y = (unsigned char)re[i + 1];
		if (!y || isalnum(y) || y < 0x20 || y > 0x7e)
			return false;
		*c = (char)y;
		*adv = 2;
		return true;
	}
	if (!x || x < 0x20 || x > 0x7e || is_syntax(x))
		return false;
	*c = (char)x;
	*adv = 1;
	return true;
}

size_t fc_prefix_alts(const char *re, char *out, size_t *lens, size_t max)
{
	size_t n = strlen(re), i = 0, adv, p0 = 0, nalt = 0, starts[16];
	char c, head[512], tail[512], *o = out;

	if (max > 16)
		max = 16;
	/* (two alternatives need a '|': most regexes have none, found without the walk below) */
	if (n >= sizeof(head) || !memchr(re, '|', n))
		return 0;
	/* the literal run before the group */
	while (plain_lit(re, i, &c, &adv)) {
		if (is_quant(re[i + adv]))
			return 0;
		head[p0++] = c;
		i += adv;
	}
	if (re[i] != '(' || re[i + 1] == '?' || re[i + 1] == '*')
		return 0;
	i++;
	for (;;) {
		if (nalt == max)
			return 0;
		starts[nalt] = (size_t)(o - out);
		memcpy(o, head, p0);
		o += p0;
		while (plain_lit(re, i, &c, &adv)) {
			*o++ = c;
			i += adv;
		}
		lens[nalt] = (size_t)(o - out) - starts[nalt];
		nalt++;
		if (re[i] == '|') {
			i++;
			continue;
		}
		if (re[i] != ')')
			return 0;
		i++;
		break;
	}
	if (nalt < 2 || is_quant(re[i]))
		return 0;
	/* the literal run after it, added to each alternative */
	size_t tl = 0;
	while (plain_lit(re, i, &c, &adv) && !is_quant(re[i + adv])) {
		tail[tl++] = c;
		i += adv;
	}
	/* no top-level '|' in the rest */
	for (int depth = 0; re[i]; ) {
		if (re[i] == '\\') {
			if (!re[i + 1])
				return 0;
			i += 2;
		} else if (re[i] == '[') {
			size_t j = skip_class(re, i);
			if (!j)
				return 0;
			i = j;
		} else {
			if (re[i] == '(')
				depth++;
			else if (re[i] == ')' && --depth < 0)
				return 0;
			else if (re[i] == '|' && depth == 0)
				return 0;
			i++;
		}
	}
	/* each alternative gets the tail: rebuild from the back so nothing is overwritten */
	for (size_t k = nalt; k-- > 0;) {
		size_t dst = starts[k] + k * tl;
		memmove(out + dst, out + starts[k], lens[k]);
		memcpy(out + dst + lens[k], tail, tl);
		lens[k] += tl;
	}
	return nalt;
}

/* Whether re[0..n) is literal text only (characters and escaped punctuation, none followed by a
 * quantifier); its unescaped bytes go to out (n bytes room), their count to *outlen. */
bool fc_literal_span(const char *re, size_t n, char *out, size_t *outlen)
{
	size_t i = 0, o = 0, adv;
	char c;

	while (i < n) {
		unsigned char x = (unsigned char)re[i];
		if (x >= 0x20 && x <= 0x7e && !unplain[x]) {
			/* plain_lit's plain byte, without the call */
			if (is_quant(re[i + 1]))
				return false;
			out[o++] = (char)x;
			i++;
			continue;
		}
		if (!plain_lit(re, i, &c, &adv) || i + adv > n || is_quant(re[i + adv]))
			return false;
		out[o++] = c;
		i += adv;
	}
	*outlen = o;
	return true;
}
