/*
 * What a regex's text tells before PCRE2 sees it: libselinux 3.4's own classification (metachars,
 * stem), the literal prefix every match must start with, and whether the regex can safely be one
 * alternative of a combined pattern. Anything this scanner does not fully understand makes it
 * conservative: a shorter prefix, not combinable.
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

/* Escapes that match one character (or a simple assertion) and consume nothing after them. */
static bool simple_alnum_escape(int c)
{
	return c && strchr("dDwWsShHvVtnrfebB", c) != NULL;
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

void fc_scan_regex(const char *re, struct regex_shape *sh, char *prefix, size_t *prefix_len)
{
	size_t i = 0, n = strlen(re), plen = 0;
	int depth = 0;
	bool in_prefix = true, topalt = false, opaque = false, literal = true;

	scan34(re, sh);
	sh->combinable = true;

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
				if (x == 'Q' || x == 'c' || x == 'E')
					opaque = true;
				else if (!simple_alnum_escape(x))
					sh->combinable = false;
			} else if (in_prefix) {
				if (is_quant(re[i + 2]))
					in_prefix = false;
				else
					prefix[plen++] = x;
			}
			i += 2;
			continue;
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
		default:
			if (in_prefix) {
				if (is_quant(re[i + 1]))
					in_prefix = false;
				else
					prefix[plen++] = c;
			}
			break;
		}
		i++;
	}
	if (depth != 0)
		opaque = true;
	if (opaque || topalt) {
		/* "^a|b$" is not anchored at both ends: no prefix, and it must run on its own. */
		plen = 0;
		sh->combinable = false;
		literal = false;
	}
	sh->literal = literal && !sh->meta;
	*prefix_len = plen;
}
