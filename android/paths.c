/*
 * Which paths Android treats as app data: is_app_data_path and extract_pkgname_and_userid of
 * libselinux (android_device.c in Android 14, android.c in 15, without 15's /data/storage_area).
 * What the device's walks do with each path is walks.c's. Android matches some of these with
 * fnmatch(FNM_PATHNAME | FNM_LEADING_DIR); the patterns are simple enough to match by hand:
 * '?' and '*' never match '/', and a pattern may be followed by nothing or by "/...".
 */
#include <string.h>

#include "internal.h"

struct cursor {
	const char *p, *end;
};

static bool eat(struct cursor *c, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, lit, n) != 0)
		return false;
	c->p += n;
	return true;
}

/* "????????-????-????-????-????????????": 36 characters, '-' where the pattern has one. */
static bool eat_uuid(struct cursor *c)
{
	if (c->end - c->p < 36)
		return false;
	for (int i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		if (dash ? c->p[i] != '-' : c->p[i] == '/')
			return false;
	}
	c->p += 36;
	return true;
}

/* '*' under FNM_PATHNAME: any run of characters other than '/'. */
static void eat_component(struct cursor *c)
{
	while (c->p < c->end && *c->p != '/')
		c->p++;
}

/* FNM_LEADING_DIR: the pattern may end the path or be followed by a '/'. */
static bool at_dir_end(const struct cursor *c)
{
	return c->p == c->end || *c->p == '/';
}

static bool starts(const char *path, size_t len, const char *lit)
{
	size_t n = strlen(lit);
	return len >= n && memcmp(path, lit, n) == 0;
}

/* "/mnt/expand/UUID/" */
static bool eat_expand(struct cursor *c)
{
	return eat(c, "/mnt/expand/") && eat_uuid(c) && eat(c, "/");
}

/* "<top>/misc_ce/ * /sdksandbox" or misc_de, top being /data or /mnt/expand/UUID. */
static bool sandbox_dir(struct cursor c, bool expand)
{
	if (expand ? !eat_expand(&c) : !eat(&c, "/data/"))
		return false;
	if (!eat(&c, "misc_ce/") && !eat(&c, "misc_de/"))
		return false;
	eat_component(&c);
	return eat(&c, "/sdksandbox") && at_dir_end(&c);
}

/* "/mnt/expand/UUID/<which>" */
static bool expand_user_dir(struct cursor c, const char *which)
{
	return eat_expand(&c) && eat(&c, which) && at_dir_end(&c);
}

bool seapp_is_app_data(const char *path, size_t len)
{
	struct cursor c = { path, path + len };

	return starts(path, len, "/data/data/") || starts(path, len, "/data/user/") ||
	       starts(path, len, "/data/user_de/") || expand_user_dir(c, "user") ||
	       expand_user_dir(c, "user_de") || sandbox_dir(c, false) || sandbox_dir(c, true);
}

/* extract_userid: strtoul(p, &end, 10) into an unsigned int, at least one digit, at most 1000.
 * strtoul takes leading spaces and a sign, and the 64-bit result is cut to 32 bits. */
static bool eat_userid(struct cursor *c, unsigned *user)
{
	const char *s = c->p;
	unsigned long long v = 0;
	bool neg = false;

	while (s < c->end && c_isspace((unsigned char)*s))
		s++;
	if (s < c->end && (*s == '+' || *s == '-'))
		neg = *s++ == '-';
	if (s == c->end || *s < '0' || *s > '9')
		return false;
	for (; s < c->end && *s >= '0' && *s <= '9'; s++) {
		if (v > (~0ull - (unsigned)(*s - '0')) / 10)
			return false; /* ERANGE */
		v = v * 10 + (unsigned)(*s - '0');
	}
	if (neg)
		v = 0 - v;
	if ((uint32_t)v > 1000)
		return false;
	*user = (uint32_t)v;
	c->p = s;
	return true;
}

/* After a user or user_de top: "N/". */
static bool eat_user_slash(struct cursor *c, struct seapp_path *out)
{
	return eat_userid(c, &out->user) && eat(c, "/");
}

/* After a misc_ce or misc_de top: "N/sdksandbox/". */
static bool eat_user_sandbox(struct cursor *c, struct seapp_path *out)
{
	out->sdk_sandbox = true;
	return eat_userid(c, &out->user) && eat(c, "/sdksandbox/");
}

/* Moves c to the package component, in the order Android tries the forms. */
static bool find_pkg(struct cursor *c, struct seapp_path *out)
{
	struct cursor start = *c;

	if (eat(c, "/data/data/"))
		return true;
	if (eat(c, "/data/user/") || eat(c, "/data/user_de/"))
		return eat_user_slash(c, out);
	if (expand_user_dir(start, "user") || expand_user_dir(start, "user_de")) {
		eat_expand(c);
		if (!eat(c, "user_de"))
			eat(c, "user");
		/* Android steps over the '/' without looking: on the top itself it reads past the
		 * string's end. We say: no package. */
		return eat(c, "/") && eat_user_slash(c, out);
	}
	if (eat(c, "/data/misc_ce/") || eat(c, "/data/misc_de/"))
		return eat_user_sandbox(c, out);
	if (sandbox_dir(start, true)) {
		eat_expand(c);
		if (!eat(c, "misc_ce/"))
			eat(c, "misc_de/");
		return eat_user_sandbox(c, out);
	}
	return false;
}

void seapp_path_classify(const char *path, size_t len, struct seapp_path *out)
{
	struct cursor c = { path, path + len };
	const char *pkg;

	memset(out, 0, sizeof(*out));
	out->app_data = seapp_is_app_data(path, len);
	if (!out->app_data || !find_pkg(&c, out) || c.p == c.end) {
		out->user = 0;
		out->sdk_sandbox = false;
		return;
	}
	pkg = c.p;
	eat_component(&c);
	if (c.p == pkg) { /* an empty component ("//", not a clean path): no package */
		out->user = 0;
		out->sdk_sandbox = false;
		return;
	}
	out->has_pkg = true;
	out->pkg = pkg;
	out->pkg_len = (size_t)(c.p - pkg);
	out->pkgdir_len = (size_t)(c.p - path);
}
