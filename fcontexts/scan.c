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

void fc_scan_regex(const char *re, struct regex_shape *sh, char *prefix, size_t *prefix_len,
		   char *req, size_t *req_len)
{
	size_t i = 0, n = strlen(re), plen = 0;
	int depth = 0;
	bool in_prefix = true, topalt = false, opaque = false, literal = true;
	struct runs run = { .best = req, .first = true };

	scan34(re, sh);

	while (i < n && !opaque) {
		char c = re[i];
		if (c == '\\') {
			char x = re[i + 1];
			if (!x) {
				opaque = true;
				break;
			}
			if (isalnum((unsigned char)x)) {
				literal = false;
				in_prefix = false;
				run_end(&run);
				/* \Q quotes up to \E, \c eats the next character */
				if (x == 'Q' || x == 'c' || x == 'E') {
					opaque = true;
					break;
				}
				/* \x61, \141, \o{141}, \p{L}, \g{1}, \k<n>: the escape's
				 * argument is not literal text; skip it (and what may follow) */
				i += 2;
				while (isalnum((unsigned char)re[i]))
					i++;
				if (re[i] == '{' || re[i] == '<' || re[i] == '\'') {
					char close = re[i] == '{' ? '}' : re[i] == '<' ? '>' : '\'';
					size_t j = i + 1;
					while (re[j] && re[j] != close && re[j] != '(' && re[j] != ')' &&
					       re[j] != '|' && re[j] != '[')
						j++;
					if (re[j] == close)
						i = j + 1;
				}
				continue;
			} else {
				bool q = is_quant(re[i + 2]);
				if (in_prefix) {
					if (q)
						in_prefix = false;
					else
						prefix[plen++] = x;
				}
				if (q || depth)
					run_end(&run);
				else
					run_add(&run, x);
			}
			i += 2;
			continue;
		}
		if (strchr("[()|.^$?*+{", c))
			run_end(&run);
		if (c == '{') {
			/* a quantifier {n}, {n,}, {n,m} is not literal text: skip it whole */
			size_t j = i + 1;
			while (re[j] && (isdigit((unsigned char)re[j]) || re[j] == ','))
				j++;
			if (re[j] == '}') {
				literal = in_prefix = false;
				i = j + 1;
				continue;
			}
		}
		switch (c) {
		case '[': {
			size_t j = skip_class(re, i);
			literal = in_prefix = false;
			if (!j) {
				opaque = true;
				break;
			}
			i = j;
			continue;
		}
		case '(':
			literal = in_prefix = false;
			if (re[i + 1] == '*') {
				opaque = true;
				break;
			}
			if (re[i + 1] == '?') {
				char y = re[i + 2];
				bool ok = y == ':' || y == '=' || y == '!' || y == '>' ||
					  (y == '<' && (re[i + 3] == '=' || re[i + 3] == '!'));
				if (!ok) {
					opaque = true;
					break;
				}
			}
			depth++;
			break;
		case ')':
			literal = in_prefix = false;
			if (--depth < 0)
				opaque = true;
			break;
		case '|':
			literal = in_prefix = false;
			if (depth == 0)
				topalt = true;
			break;
		case '.': case '^': case '$': case '?': case '*': case '+': case '{':
			literal = in_prefix = false;
			break;
		default: {
			bool q = is_quant(re[i + 1]);
			if (in_prefix) {
				if (q)
					in_prefix = false;
				else
					prefix[plen++] = c;
			}
			if (q || depth)
				run_end(&run);
			else
				run_add(&run, c);
			break;
		}
		}
		i++;
	}
	run_end(&run);
	if (depth != 0)
		opaque = true;
	if (opaque || topalt) {
		/* "^a|b$" is not anchored at both ends: it has no prefix. */
		plen = 0;
		run.best_len = 0;
		literal = false;
	}
	sh->literal = literal && !sh->meta;
	*prefix_len = plen;
	*req_len = run.best_len;
}
