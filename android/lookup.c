/*
 * Android 15's seapp_context_lookup_internal for SEAPP_TYPE (libselinux android_seapp.c): the
 * app's seinfo string parsed by parse_seinfo, its uid named, then the first rule in precedence
 * order that matches and has a type=. Allocates nothing.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define SEINFO_BUFSIZ 256

enum {
	IS_PRIV_APP = 1 << 0,
	IS_FROM_RUN_AS = 1 << 1,
	IS_EPHEMERAL_APP = 1 << 2,
	IS_ISOLATED_COMPUTE_APP = 1 << 3,
	IS_SDK_SANDBOX_AUDIT = 1 << 4,
	IS_SDK_SANDBOX_NEXT = 1 << 5,
	IS_V2_APP = 1 << 6, /* ":v2" (Android 8 and 9: the v2 app sandbox) */
};

/* What a lookup knows about the app. Strings point into the caller's. */
struct app {
	const char *username;
	uint32_t userid, appid; /* appid after the range shift: what categories are made of */
	bool has_seinfo;
	const char *base; /* the seinfo's first non-empty ':' field */
	size_t base_len;
	unsigned is;
	int32_t target_sdk;
	bool preinstalled;     /* partition= was given... */
	const char *partition; /* ...with this value */
	size_t partition_len;
	const char *pkg;
	size_t pkg_len;
};

/* strtol(s, NULL, 10) on a 64-bit device, then stored in an int32_t: the value wraps. */
static int32_t android_strtol_i32(const char *s, size_t n)
{
	const char *end = s + n;
	unsigned long long v = 0;
	bool neg = false, sat = false;

	while (s < end && c_isspace((unsigned char)*s))
		s++;
	if (s < end && (*s == '+' || *s == '-'))
		neg = *s++ == '-';
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (v > ((unsigned long long)LLONG_MAX - (unsigned)(*s - '0')) / 10)
			sat = true;
		else
			v = v * 10 + (unsigned)(*s - '0');
	}
	if (sat)
		v = neg ? (unsigned long long)LLONG_MAX + 1 : (unsigned long long)LLONG_MAX;
	else if (neg)
		v = 0 - v;
	return (int32_t)(uint32_t)v;
}

/* strtok_r(field, "=") twice: the first non-empty piece after the first '=', or NULL. */
static const char *second_piece(const char *f, size_t n, size_t *len)
{
	const char *end = f + n, *p = memchr(f, '=', n), *q;

	if (!p)
		return NULL;
	while (p < end && *p == '=')
		p++;
	if (p == end)
		return NULL;
	q = memchr(p, '=', (size_t)(end - p));
	*len = (size_t)((q ? q : end) - p);
	return p;
}

static bool field_is(const char *f, size_t n, const char *word)
{
	return strlen(word) == n && memcmp(f, word, n) == 0;
}

static bool field_starts(const char *f, size_t n, const char *word)
{
	size_t w = strlen(word);
	return n >= w && memcmp(f, word, w) == 0;
}

/* One field after the base; false to stop (":complete"). */
static bool seinfo_field(struct app *app, const char *f, size_t n, const char **why)
{
	static const struct {
		const char *word;
		unsigned bit;
	} flags[] = {
		{ "privapp", IS_PRIV_APP },
		{ "ephemeralapp", IS_EPHEMERAL_APP },
		{ "isolatedComputeApp", IS_ISOLATED_COMPUTE_APP },
		{ "isSdkSandboxAudit", IS_SDK_SANDBOX_AUDIT },
		{ "isSdkSandboxNext", IS_SDK_SANDBOX_NEXT },
		{ "fromRunAs", IS_FROM_RUN_AS },
		{ "v2", IS_V2_APP },
	};
	const char *v;
	size_t vlen;

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if (field_is(f, n, flags[i].word)) {
			app->is |= flags[i].bit;
			return true;
		}
	}
	if (field_starts(f, n, "targetSdkVersion")) {
		v = second_piece(f, n, &vlen);
		if (!v) {
			*why = "seinfo has a targetSdkVersion field without a value";
			return false;
		}
		app->target_sdk = android_strtol_i32(v, vlen);
	} else if (field_starts(f, n, "partition")) {
		v = second_piece(f, n, &vlen);
		if (!v) {
			*why = "seinfo has a partition field without a value";
			return false;
		}
		app->preinstalled = true;
		app->partition = v;
		app->partition_len = vlen;
	} else if (field_is(f, n, "complete")) {
		return false;
	}
	/* Anything else: Android logs "Ignoring unknown seinfo field" and goes on. */
	return true;
}

/* parse_seinfo: fields split on ':' with empty ones skipped (strtok_r), the first is the base,
 * the rest are compared whole and case-sensitively; ":complete" ends the string. */
static int parse_seinfo(struct app *app, const char *seinfo, const char **why)
{
	const char *p = seinfo;
	bool first = true;

	if (!seinfo)
		return 0;
	app->has_seinfo = true;
	app->base = "";
	if (strlen(seinfo) >= SEINFO_BUFSIZ) {
		*why = "seinfo is 256 bytes or longer";
		return EINVAL;
	}
	while (*p) {
		size_t n = strcspn(p, ":");
		if (n && first) {
			app->base = p;
			app->base_len = n;
			first = false;
		} else if (n && !seinfo_field(app, p, n, why)) {
			if (*why)
				return EINVAL;
			break;
		}
		p += n + (p[n] == ':');
	}
	if (app->target_sdk < 0) {
		*why = "seinfo has a negative targetSdkVersion";
		return EINVAL;
	}
	return 0;
}

/* The user name of user= and the app id categories are made of. */
static int name_uid(struct app *app, uint32_t uid, char buf[16], const char **why)
{
	app->userid = uid / AID_USER_OFFSET;
	app->appid = uid % AID_USER_OFFSET;
	if (app->appid < AID_APP_START) {
		app->username = seapp_aid_name(app->appid, buf);
		if (!app->username) {
			*why = "the uid's app id is below 10000 and has no name";
			return ENOENT;
		}
	} else if (app->appid < AID_SDK_SANDBOX_PROCESS_START) {
		app->username = "_app";
		app->appid -= AID_APP_START;
	} else if (app->appid < AID_ISOLATED_START) {
		app->username = "_sdksandbox";
		app->appid -= AID_SDK_SANDBOX_PROCESS_START;
	} else {
		app->username = "_isolated";
		app->appid -= AID_ISOLATED_START;
	}
	if (app->appid >= CAT_MAPPING_MAX_ID || app->userid >= CAT_MAPPING_MAX_ID) {
		*why = "the app id or user id is too large to map to categories (65536 or more)";
		return ERANGE;
	}
	return 0;
}

static bool sel_matches(const struct sel_str *s, const char *v, size_t vlen)
{
	if (s->is_prefix)
		return ascii_prefix_eq(v, vlen, s->str, s->len - 1);
	return ascii_eq(v, vlen, s->str);
}

static bool flag(const struct app *app, unsigned bit)
{
	return (app->is & bit) != 0;
}

/* The per-rule checks of seapp_context_lookup_internal, for an app (isSystemServer false). */
static bool rule_matches(const struct rule *r, const struct app *app)
{
	if (r->system_server)
		return false;
	if (r->ephemeral_set && r->ephemeral != flag(app, IS_EPHEMERAL_APP))
		return false;
	if (r->v2_set && r->v2 != flag(app, IS_V2_APP))
		return false;
	if (r->user.str && !sel_matches(&r->user, app->username, strlen(app->username)))
		return false;
	if (r->seinfo && (!app->has_seinfo || !ascii_eq(app->base, app->base_len, r->seinfo)))
		return false;
	if (r->name.str && (!app->pkg || !sel_matches(&r->name, app->pkg, app->pkg_len)))
		return false;
	if (r->privapp_set && r->privapp != flag(app, IS_PRIV_APP))
		return false;
	if (r->min_target_sdk > app->target_sdk)
		return false;
	return r->from_run_as == flag(app, IS_FROM_RUN_AS) &&
	       r->isolated_compute == flag(app, IS_ISOLATED_COMPUTE_APP) &&
	       r->sdk_sandbox_audit == flag(app, IS_SDK_SANDBOX_AUDIT) &&
	       r->sdk_sandbox_next == flag(app, IS_SDK_SANDBOX_NEXT);
}

/* set_range_from_level. For uids below 10000 the app id is not shifted. */
static void level_from(char *out, size_t n, enum level_from lf, uint32_t userid, uint32_t appid)
{
	unsigned a0 = appid & 0xff, a1 = 256 + (appid >> 8 & 0xff);
	unsigned u0 = 512 + (userid & 0xff), u1 = 768 + (userid >> 8 & 0xff);

	switch (lf) {
	case LEVEL_FROM_APP: snprintf(out, n, "s0:c%u,c%u", a0, a1); break;
	case LEVEL_FROM_USER: snprintf(out, n, "s0:c%u,c%u", u0, u1); break;
	case LEVEL_FROM_ALL: snprintf(out, n, "s0:c%u,c%u,c%u,c%u", a0, a1, u0, u1); break;
	case LEVEL_FROM_NONE: out[0] = 0; break;
	}
}

static bool partition_is_platform(const char *p, size_t n)
{
	return field_is(p, n, "system") || field_is(p, n, "system_ext") ||
	       field_is(p, n, "product");
}

static void answer(const seapp_set *set, const struct rule *r, const struct app *app,
		   struct seapp_answer *ans)
{
	ans->found = true;
	ans->type = r->type;
	level_from(ans->level_from, sizeof(ans->level_from), r->level_from, app->userid,
		   app->appid);
	ans->level = r->level_from == LEVEL_FROM_NONE ? r->level : NULL;
	ans->file = set->files[r->file];
	ans->line = r->line;
	ans->text = r->text;
	ans->partition_warning = app->preinstalled && r->vendor &&
				 partition_is_platform(app->partition, app->partition_len);
}

int seapp_lookup_type(const seapp_set *set, uint32_t uid, const char *seinfo, const char *pkgname,
		      size_t pkglen, struct seapp_answer *ans)
{
	struct app app = { .pkg = pkgname, .pkg_len = pkglen };
	char buf[16];
	int rc;

	memset(ans, 0, sizeof(*ans));
	rc = parse_seinfo(&app, seinfo, &ans->why);
	if (!rc)
		rc = name_uid(&app, uid, buf, &ans->why);
	if (rc)
		return rc;
	for (size_t i = 0; i < set->nrules; i++) {
		const struct rule *r = &set->rules[i];
		/* A matching line without type= (a domain-only line) is passed over, not final. */
		if (rule_matches(r, &app) && r->type) {
			answer(set, r, &app, ans);
			break;
		}
	}
	return 0;
}

int seapp_lookup_pkg(const seapp_set *set, const struct pkg_entry *pkg, unsigned user,
		     struct seapp_answer *ans)
{
	uint32_t uid = pkg->uid + (uint32_t)user * AID_USER_OFFSET;

	return seapp_lookup_type(set, uid, pkg->seinfo, pkg->name, pkg->name_len, ans);
}

const char *seapp_answer_level(const struct seapp_answer *ans)
{
	if (!ans->found)
		return NULL;
	return ans->level_from[0] ? ans->level_from : ans->level;
}

bool seapp_answer_equal(const struct seapp_answer *a, const struct seapp_answer *b)
{
	const char *la, *lb;

	if (a->found != b->found)
		return false;
	if (!a->found)
		return true;
	la = seapp_answer_level(a);
	lb = seapp_answer_level(b);
	return strcmp(a->type, b->type) == 0 && (la && lb ? strcmp(la, lb) == 0 : la == lb);
}
