/*
 * What a regex's text tells before PCRE2 sees it: libselinux 3.4's own classification (metachars,
 * stem), the literal prefix every match must start with, and a literal run every match contains.
 * Anything this scanner does not fully understand makes it conservative: no prefix, no run.
 */
#include <ctype.h>
#include <string.h>

#include "internal.h"

static bool is_meta34(int c)
{
	return c && strchr(".^$?*+|[({", c) != NULL;
}

static bool is_quant(int c)
{
	return c == '?' || c == '*' || c == '+' || c == '{';
}

static void scan34(const char *re, struct regex_shape *sh)
{
	const char *slash = re[0] ? strchr(re + 1, '/') : NULL;

	sh->meta = false;
	for (const char *c = re; *c; c++) {
		if (is_meta34(*c)) {
			sh->meta = true;
			break;
		}
		if (*c == '\\' && !*++c)
			break;
	}
	sh->stem_len = 0;
	if (slash) {
		const char *c;
		for (c = re; c < slash && !is_meta34(*c); c++)
			;
		if (c == slash)
			sh->stem_len = (size_t)(slash - re);
	}
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
	if (strchr("[()|.^$?*+{", c))
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

void fc_scan_regex(const char *re, struct regex_shape *sh, char *prefix, size_t *prefix_len,
		   char *req, size_t *req_len)
{
	struct scanner s = { .re = re, .in_prefix = true, .literal = true, .prefix = prefix,
			     .run = { .best = req, .first = true } };
	size_t n = strlen(re);

	scan34(re, sh);
	while (s.i < n && !s.opaque) {
		if (re[s.i] == '\\')
			escape(&s);
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
