/*
 * Reading seapp_contexts as Android 15's seapp_context_reload_internal does (libselinux
 * android_seapp.c), then its precedence sort and duplicate check. Where Android reads a line in a
 * way nobody could mean (a value cut at 1022 bytes, a '\r' kept in the last value, an empty user=
 * read before its buffer) we refuse the file and say why instead.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

enum key {
	K_IS_SYSTEM_SERVER,
	K_IS_EPHEMERAL_APP,
	K_USER,
	K_SEINFO,
	K_NAME,
	K_DOMAIN,
	K_TYPE,
	K_LEVEL_FROM_UID,
	K_LEVEL_FROM,
	K_LEVEL,
	K_IS_PRIV_APP,
	K_MIN_TARGET_SDK,
	K_FROM_RUN_AS,
	K_IS_ISOLATED_COMPUTE_APP,
	K_IS_SDK_SANDBOX_AUDIT,
	K_IS_SDK_SANDBOX_NEXT,
	K_IS_V2_APP,
	K_UNKNOWN
};

static const char *const key_names[] = {
	[K_IS_SYSTEM_SERVER] = "isSystemServer",
	[K_IS_EPHEMERAL_APP] = "isEphemeralApp",
	[K_USER] = "user",
	[K_SEINFO] = "seinfo",
	[K_NAME] = "name",
	[K_DOMAIN] = "domain",
	[K_TYPE] = "type",
	[K_LEVEL_FROM_UID] = "levelFromUid",
	[K_LEVEL_FROM] = "levelFrom",
	[K_LEVEL] = "level",
	[K_IS_PRIV_APP] = "isPrivApp",
	[K_MIN_TARGET_SDK] = "minTargetSdkVersion",
	[K_FROM_RUN_AS] = "fromRunAs",
	[K_IS_ISOLATED_COMPUTE_APP] = "isIsolatedComputeApp",
	[K_IS_SDK_SANDBOX_AUDIT] = "isSdkSandboxAudit",
	[K_IS_SDK_SANDBOX_NEXT] = "isSdkSandboxNext",
	[K_IS_V2_APP] = "isV2App",
};

/* Keys older releases knew: worth a hint, since their files are the likely source. */
static const char *const old_keys[] = { "isOwner", "path", "sebool" };

struct loader {
	struct seapp_set *set;
	const char *fname;
	unsigned fileno;
	bool vendor;
	unsigned line;
	size_t cap;
	struct seapp_error *err;
};

static int fail(struct loader *ld, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct loader *ld, const char *fmt, ...)
{
	char msg[sizeof(ld->err->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	seapp_seterr(ld->err, ld->fname, ld->line, "%s", msg);
	return EINVAL;
}

static enum key find_key(const char *k)
{
	for (size_t i = 0; i < K_UNKNOWN; i++)
		if (ascii_eq(k, strlen(k), key_names[i]))
			return (enum key)i;
	return K_UNKNOWN;
}

static int unknown_key(struct loader *ld, const char *k)
{
	for (size_t i = 0; i < sizeof(old_keys) / sizeof(old_keys[0]); i++)
		if (ascii_eq(k, strlen(k), old_keys[i]))
			return fail(ld,
				    "unknown key '%s' (older Android releases knew it; Android 14 "
				    "and later refuse the whole set)",
				    k);
	return fail(ld, "unknown key '%.100s'", k);
}

/* Booleans are "true" or "false" in any case; nothing else, not even 1 or yes. */
static int parse_bool(struct loader *ld, enum key k, const char *v, bool *out)
{
	if (ascii_eq(v, strlen(v), "true"))
		*out = true;
	else if (ascii_eq(v, strlen(v), "false"))
		*out = false;
	else
		return fail(ld, "%s=%.100s: want true or false", key_names[k], v);
	return 0;
}

/* strtol(v, &end, 10) with *end == 0 and 0 <= result <= INT32_MAX, as Android checks it: a sign
 * is allowed, so "-0" and "+5" pass. */
static int parse_min_sdk(struct loader *ld, const char *v, int32_t *out)
{
	const char *p = v;
	bool neg = false;
	long long n = 0;

	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (*p < '0' || *p > '9')
		goto bad;
	for (; *p >= '0' && *p <= '9'; p++)
		if (n <= INT32_MAX)
			n = n * 10 + (*p - '0');
	if (*p || n > INT32_MAX || (neg && n != 0))
		goto bad;
	*out = (int32_t)n;
	return 0;
bad:
	return fail(ld, "minTargetSdkVersion=%.100s: want a number from 0 to 2147483647", v);
}

/* user=, seinfo=, name=, domain=, type=, level= may each appear once. */
static int set_once(struct loader *ld, enum key k, const char **field, const char *v)
{
	if (*field)
		return fail(ld, "%s= given twice (Android refuses a repeated %s=)", key_names[k],
			    key_names[k]);
	*field = v;
	return 0;
}

static int set_sel(struct loader *ld, enum key k, struct sel_str *s, const char *v)
{
	int rc = set_once(ld, k, &s->str, v);
	if (rc)
		return rc;
	s->len = strlen(v);
	s->is_prefix = v[s->len - 1] == '*';
	return 0;
}

/* levelFrom and levelFromUid share one field, and Android refuses a second one only once the
 * first said something other than none: "levelFrom=none levelFrom=app" is accepted. */
static int set_level_from(struct loader *ld, enum key k, const char *v, struct rule *r)
{
	static const char *const names[] = { "none", "app", "user", "all" };
	bool b;

	if (r->level_from != LEVEL_FROM_NONE)
		return fail(ld, "%s= after a levelFrom other than none (Android refuses it)",
			    key_names[k]);
	if (k == K_LEVEL_FROM_UID) {
		if (parse_bool(ld, k, v, &b))
			return EINVAL;
		r->level_from = b ? LEVEL_FROM_APP : LEVEL_FROM_NONE;
		return 0;
	}
	for (int i = 0; i < 4; i++) {
		if (ascii_eq(v, strlen(v), names[i])) {
			r->level_from = (enum level_from)i;
			return 0;
		}
	}
	return fail(ld, "levelFrom=%.100s: want none, app, user or all", v);
}

/* A ':' would make Android's context_type_set fail at every lookup that reaches the line. */
static int check_type(struct loader *ld, enum key k, const char *v)
{
	if (strchr(v, ':'))
		return fail(ld, "%s=%.100s: a type cannot contain ':'", key_names[k], v);
	return 0;
}

static int set_key(struct loader *ld, enum key k, const char *v, struct rule *r)
{
	switch (k) {
	case K_IS_SYSTEM_SERVER: return parse_bool(ld, k, v, &r->system_server);
	case K_IS_EPHEMERAL_APP:
		r->ephemeral_set = true;
		return parse_bool(ld, k, v, &r->ephemeral);
	case K_IS_V2_APP:
		r->v2_set = true;
		return parse_bool(ld, k, v, &r->v2);
	case K_USER: return set_sel(ld, k, &r->user, v);
	case K_SEINFO:
		if (set_once(ld, k, &r->seinfo, v))
			return EINVAL;
		if (strchr(v, ':'))
			return fail(ld, "seinfo=%.100s: a seinfo cannot contain ':'", v);
		return 0;
	case K_NAME: return set_sel(ld, k, &r->name, v);
	case K_DOMAIN: return check_type(ld, k, v) ? EINVAL : set_once(ld, k, &r->domain, v);
	case K_TYPE: return check_type(ld, k, v) ? EINVAL : set_once(ld, k, &r->type, v);
	case K_LEVEL_FROM_UID:
	case K_LEVEL_FROM: return set_level_from(ld, k, v, r);
	case K_LEVEL: return set_once(ld, k, &r->level, v);
	case K_IS_PRIV_APP: r->privapp_set = true; return parse_bool(ld, k, v, &r->privapp);
	case K_MIN_TARGET_SDK: return parse_min_sdk(ld, v, &r->min_target_sdk);
	case K_FROM_RUN_AS: return parse_bool(ld, k, v, &r->from_run_as);
	case K_IS_ISOLATED_COMPUTE_APP: return parse_bool(ld, k, v, &r->isolated_compute);
	case K_IS_SDK_SANDBOX_AUDIT: return parse_bool(ld, k, v, &r->sdk_sandbox_audit);
	case K_IS_SDK_SANDBOX_NEXT: return parse_bool(ld, k, v, &r->sdk_sandbox_next);
	case K_UNKNOWN: break;
	}
	return EINVAL;
}

static int parse_token(struct loader *ld, char *tok, struct rule *r)
{
	char *v = strchr(tok, '=');
	enum key k;

	if (tok[0] == '#')
		return fail(ld,
			    "'%.100s': seapp_contexts has no end-of-line comments (Android reads "
			    "this as a key=value token)",
			    tok);
	if (!v)
		return fail(ld, "'%.100s' is not key=value", tok);
	*v++ = 0;
	if (!tok[0])
		return fail(ld, "'=%.100s': empty key", v);
	k = find_key(tok);
	if (k == K_UNKNOWN)
		return unknown_key(ld, tok);
	if (!*v)
		return fail(ld, "%s= has an empty value", key_names[k]);
	return set_key(ld, k, v, r);
}

static int push_rule(struct loader *ld, const struct rule *r)
{
	struct seapp_set *set = ld->set;

	if (set->nrules == ld->cap) {
		size_t cap = ld->cap ? 2 * ld->cap : 64;
		struct rule *nv = realloc(set->rules, cap * sizeof(*nv));
		if (!nv)
			return ENOMEM;
		set->rules = nv;
		ld->cap = cap;
	}
	set->rules[set->nrules] = *r;
	set->rules[set->nrules].order = set->nrules;
	set->nrules++;
	return 0;
}

/* One non-blank, non-comment line: tokens split on spaces and tabs, as strtok_r(" \t"). */
static int parse_rule(struct loader *ld, char *p, const char *text)
{
	struct rule r = {
		.vendor = ld->vendor, .file = ld->fileno, .line = ld->line, .text = text
	};
	char *save = NULL;
	int rc;

	for (char *tok = strtok_r(p, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		rc = parse_token(ld, tok, &r);
		if (rc)
			return rc;
	}
	if (!r.privapp && r.name.str && (!r.seinfo || strcmp(r.seinfo, "default") == 0))
		return fail(ld,
			    "name=%.100s without a specific seinfo= (other than default) or "
			    "isPrivApp=true: Android refuses this insecure line",
			    r.name.str);
	return push_rule(ld, &r);
}

/* Source trees keep checkseapp's neverallow rules; the build strips them, so the device never
 * reads one (and would refuse it: "neverallow" is no key=value token). */
static bool is_neverallow(const char *p)
{
	return strncmp(p, "neverallow", 10) == 0 && (!p[10] || p[10] == ' ' || p[10] == '\t');
}

/* What Android would read differently from what the line says, or not at all. */
static int check_bytes(struct loader *ld, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '\r')
			return fail(ld,
				    "carriage return (a CRLF file?): Android keeps it in the last "
				    "value of the line");
		if (c == 0)
			return fail(ld,
				    "NUL byte at column %zu: Android stops reading the line there",
				    i + 1);
		if (c < 0x20 && c != '\t')
			return fail(ld, "control byte 0x%02x at column %zu", c, i + 1);
	}
	return 0;
}

static int parse_buf(struct loader *ld, const struct seapp_buf *b)
{
	/* Two copies: one keeps each line's text for explanations, the other is cut into tokens. */
	char *text = malloc(2 * b->len + 2), *tok;
	int rc;

	if (!text)
		return ENOMEM;
	ld->set->bufs[ld->set->nbufs++] = text;
	tok = text + b->len + 1;
	memcpy(text, b->data, b->len);
	memcpy(tok, b->data, b->len);
	text[b->len] = tok[b->len] = 0;
	ld->line = 0;
	for (size_t off = 0; off < b->len;) {
		const char *nl = memchr(text + off, '\n', b->len - off);
		size_t n = nl ? (size_t)(nl - (text + off)) : b->len - off;
		char *p = tok + off;

		ld->line++;
		rc = check_bytes(ld, text + off, n);
		if (rc)
			return rc;
		text[off + n] = tok[off + n] = 0;
		off += n + 1;
		while (*p == ' ' || *p == '\t')
			p++;
		if (is_neverallow(p)) {
			ld->set->neverallow++;
			continue;
		}
		/* A comment too: its second piece would be read as a rule. */
		if (n > SEAPP_MAX_LINE)
			return fail(ld,
				    "line is %zu bytes long: Android reads at most %u bytes at a "
				    "time and would parse the rest as a line of its own",
				    n, SEAPP_MAX_LINE);
		if (*p && *p != '#') {
			rc = parse_rule(ld, p, text + (p - tok));
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* The platform side is system, system_ext and product; vendor and odm are the vendor side. */
bool seapp_name_is_vendor(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return strstr(base, "vendor_") || strstr(base, "nonplat_") || strstr(base, "odm_");
}

/* Android 15's seapp_context_cmp: negative when a comes first. */
static int rule_cmp(const struct rule *a, const struct rule *b)
{
	if (a->system_server != b->system_server)
		return a->system_server ? -1 : 1;
	if (a->ephemeral_set != b->ephemeral_set)
		return a->ephemeral_set ? -1 : 1;
	/* Android 8 and 9: a specified isV2App before an unspecified one (no later file has it) */
	if (a->v2_set != b->v2_set)
		return a->v2_set ? -1 : 1;
	if (!a->user.str != !b->user.str)
		return a->user.str ? -1 : 1;
	if (a->user.str) {
		if (a->user.is_prefix != b->user.is_prefix)
			return b->user.is_prefix ? -1 : 1;
		/* Only prefixes compare lengths; two fixed users tie whatever their lengths. */
		if (a->user.is_prefix && a->user.len != b->user.len)
			return a->user.len > b->user.len ? -1 : 1;
	}
	/* seinfo: presence only, never the value. */
	if (!a->seinfo != !b->seinfo)
		return a->seinfo ? -1 : 1;
	if (!a->name.str != !b->name.str)
		return a->name.str ? -1 : 1;
	if (a->name.str) {
		if (a->name.is_prefix != b->name.is_prefix)
			return b->name.is_prefix ? -1 : 1;
		if (a->name.is_prefix && a->name.len != b->name.len)
			return a->name.len > b->name.len ? -1 : 1;
	}
	if (a->privapp_set != b->privapp_set)
		return a->privapp_set ? -1 : 1;
	if (a->min_target_sdk != b->min_target_sdk)
		return a->min_target_sdk > b->min_target_sdk ? -1 : 1;
	if (a->from_run_as != b->from_run_as)
		return a->from_run_as ? -1 : 1;
	if (a->vendor != b->vendor)
		return a->vendor ? 1 : -1;
	return 0;
}

/*
 * Android sorts with qsort, which is not stable: lines that tie keep no particular order there.
 * Tied lines that survive the duplicate check differ in a selector value, so at most one of them
 * matches any app, unless their user=, seinfo= or name= differ only in letter case (matching is
 * case-insensitive, the duplicate check is not). Only then does the order matter; we keep file
 * order, which Android may or may not.
 */
static int rule_cmp_stable(const void *pa, const void *pb)
{
	const struct rule *a = pa, *b = pb;
	int c = rule_cmp(a, b);

	if (c)
		return c;
	return a->order < b->order ? -1 : a->order > b->order;
}

static bool str_eq(const char *a, const char *b)
{
	return !a || strcmp(a, b) == 0;
}

/* Android 15's duplicate test for two lines that tie: the same selectors, compared case-
 * sensitively, whatever their outputs. Unset flags equal false for the exact-match keys. */
static bool rule_dup(const struct rule *a, const struct rule *b)
{
	return str_eq(a->user.str, b->user.str) && str_eq(a->seinfo, b->seinfo) &&
	       str_eq(a->name.str, b->name.str) && (!a->privapp_set || a->privapp == b->privapp) &&
	       (!a->ephemeral_set || a->ephemeral == b->ephemeral) &&
	       (!a->v2_set || a->v2 == b->v2) && a->isolated_compute == b->isolated_compute &&
	       a->sdk_sandbox_audit == b->sdk_sandbox_audit &&
	       a->sdk_sandbox_next == b->sdk_sandbox_next;
}

static int check_dups(struct seapp_set *set, struct seapp_error *err)
{
	for (size_t i = 0; i < set->nrules; i++) {
		const struct rule *a = &set->rules[i];
		for (size_t j = i + 1; j < set->nrules && rule_cmp(a, &set->rules[j]) == 0; j++) {
			const struct rule *b = &set->rules[j];
			if (!rule_dup(a, b))
				continue;
			/* The sort is stable: b is the later line of the two. */
			seapp_seterr(err, set->files[b->file], b->line,
				     "duplicate: the same selectors as %s:%u (Android refuses the "
				     "whole set)",
				     set->files[a->file], a->line);
			return EINVAL;
		}
	}
	return 0;
}

void seapp_free(seapp_set *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->nbufs; i++)
		free(set->bufs[i]);
	for (size_t i = 0; i < set->nfiles; i++)
		free(set->files[i]);
	free(set->bufs);
	free(set->files);
	free(set->rules);
	free(set);
}

static int parse_all(struct seapp_set *set, const struct seapp_buf *bufs, size_t n,
		     struct seapp_error *err)
{
	struct loader ld = { .set = set, .err = err };
	int rc;

	set->files = calloc(n ? n : 1, sizeof(*set->files));
	set->bufs = calloc(n ? n : 1, sizeof(*set->bufs));
	if (!set->files || !set->bufs)
		return ENOMEM;
	for (size_t i = 0; i < n; i++) {
		set->files[i] = strdup(bufs[i].name);
		if (!set->files[i])
			return ENOMEM;
		set->nfiles++;
		ld.fname = bufs[i].name;
		ld.fileno = (unsigned)i;
		ld.vendor = seapp_name_is_vendor(bufs[i].name);
		rc = parse_buf(&ld, &bufs[i]);
		if (rc)
			return rc;
	}
	if (set->nrules)
		qsort(set->rules, set->nrules, sizeof(*set->rules), rule_cmp_stable);
	return check_dups(set, err);
}

int seapp_parse(seapp_set **out, const struct seapp_buf *bufs, size_t nbufs,
		struct seapp_error *err)
{
	struct seapp_set *set = calloc(1, sizeof(*set));
	int rc;

	if (!set)
		return ENOMEM;
	rc = parse_all(set, bufs, nbufs, err);
	if (rc) {
		if (rc == ENOMEM)
			seapp_seterr(err, "", 0, "out of memory");
		seapp_free(set);
		return rc;
	}
	*out = set;
	return 0;
}

int seapp_load(seapp_set **out, const char *const *files, size_t nfiles, struct seapp_error *err)
{
	struct seapp_buf *bufs = calloc(nfiles ? nfiles : 1, sizeof(*bufs));
	char **datas = calloc(nfiles ? nfiles : 1, sizeof(*datas));
	size_t got;
	int rc = 0;

	if (!bufs || !datas) {
		free(bufs);
		free(datas);
		seapp_seterr(err, "", 0, "out of memory");
		return ENOMEM;
	}
	for (got = 0; got < nfiles; got++) {
		rc = seapp_slurp(files[got], &datas[got], &bufs[got].len, err);
		if (rc)
			break;
		bufs[got].name = files[got];
		bufs[got].data = datas[got];
	}
	if (!rc)
		rc = seapp_parse(out, bufs, nfiles, err);
	for (size_t i = 0; i < got; i++)
		free(datas[i]);
	free(datas);
	free(bufs);
	return rc;
}

size_t seapp_count(const seapp_set *set)
{
	return set->nrules;
}

size_t seapp_neverallow_count(const seapp_set *set)
{
	return set->neverallow;
}

void seapp_rule_at(const seapp_set *set, size_t i, struct seapp_where *w)
{
	const struct rule *r = &set->rules[i];

	*w = (struct seapp_where){
		.file = set->files[r->file], .line = r->line, .text = r->text, .vendor = r->vendor,
		.domain = r->domain, .type = r->type, .level = r->level
	};
}
