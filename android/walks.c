/*
 * The device's own walks of /data, following Android 14 and 15 (libselinux's android_device.c
 * and android.c, selinux_android_restorecon_common; installd's restorecon_app_data_lazy; vold's
 * restorecon of a user's CE directories at unlock), asked one entry at a time by a labeler that
 * means to end where the device ends:
 *
 *  - init, at every boot, `restorecon --recursive --skip-ce /data`: a directory whose
 *    security.sehash is the digest of the current policy is skipped with everything below it,
 *    its own label unread; any other is labeled, digested and entered, except app data
 *    directories and /data/{system,misc,vendor}_ce (labeled and digested, not entered) and
 *    /data/misc/profiles/cur/N (entered, neither labeled nor digested: vold labels it).
 *  - vold, when a user unlocks, restorecon --recursive of /data/system_ce/N, /data/vendor_ce/N
 *    and /data/misc_ce/N: the same walk without --skip-ce (app data directories still not
 *    entered), which digests every directory it walks.
 *  - installd, at unlock, for each package directory (CE and DE, each user, and each SDK's
 *    directory below /data/misc_{ce,de}/N/sdksandbox/PKG): the directory is relabeled, and what
 *    is below it only when the directory's own label was not the one seapp_contexts gives, or
 *    when the directory carries user.restorecon_in_progress (Android 14's installd sets it
 *    while it relabels a package whole, and on finding it does so again, whatever the label).
 *    And for each package it prepares, restorecon (not recursive, digests not looked at) of
 *    /data/misc/profiles/cur/N/PKG: labeled from file_contexts, whatever the digests above say.
 *
 * seapp_init_walk and seapp_vold_walk say what one walk does at a path it reaches;
 * android_walk_visit and android_walk_below follow all of them down a tree, the walks that reach
 * a directory handed down to its entries; android_walk_digests says where the walks write
 * digests, each walk taken whole. No I/O: a directory's digest is asked of the caller.
 */
#include <string.h>

#include "internal.h"

static bool starts(const char *path, size_t len, const char *lit)
{
	size_t n = strlen(lit);
	return len >= n && memcmp(path, lit, n) == 0;
}

static bool is(const char *path, size_t len, const char *lit)
{
	return len == strlen(lit) && !memcmp(path, lit, len);
}

/* USER_PROFILE_PATH "/data/misc/profiles/cur/ *" with FNM_PATHNAME: one component exactly. */
static bool profile_cur(const char *path, size_t len)
{
	static const char top[] = "/data/misc/profiles/cur/";
	const size_t n = sizeof(top) - 1;

	return starts(path, len, top) && !memchr(path + n, '/', len - n);
}

/* --skip-ce: a plain prefix test, so the tops themselves (and /data/misc_ce_x) match. */
static bool skip_ce(const char *path, size_t len)
{
	return starts(path, len, "/data/system_ce") || starts(path, len, "/data/misc_ce") ||
	       starts(path, len, "/data/vendor_ce");
}

unsigned seapp_init_walk(const char *path, size_t len, bool is_dir, unsigned build)
{
	unsigned flags = SEAPP_INIT_LABELS | SEAPP_INIT_DIGESTS;

	if (!is_dir)
		return SEAPP_INIT_LABELS;
	/* "vold takes care of that": neither labeled nor digested, but walked into. */
	if (profile_cur(path, len))
		return SEAPP_INIT_DESCENDS;
	/* The digest is queued before these checks, so these directories get one. */
	if (skip_ce(path, len) || seapp_is_app_data(path, len))
		return flags;
	/* release_selinux_data_data_ignore: /data/data itself is app data (labeled from
	 * file_contexts, as no package is in its path, and not entered) */
	if ((build & SEAPP_BUILD_DATA_DATA_IGNORE) && len == 10 && !memcmp(path, "/data/data", 10))
		return flags;
	return flags | SEAPP_INIT_DESCENDS;
}

/* The CE tops, whose user directories vold walks at unlock. */
static const char *const ce_tops[] = { "/data/system_ce", "/data/vendor_ce", "/data/misc_ce" };

/* "/data/system_ce/N", "/data/vendor_ce/N" or "/data/misc_ce/N" (N one component): the length
 * of the start of the vold walk path is in, 0 when none. */
static size_t vold_start(const char *path, size_t len)
{
	for (size_t i = 0; i < sizeof(ce_tops) / sizeof(ce_tops[0]); i++) {
		size_t n = strlen(ce_tops[i]) + 1;
		if (!starts(path, len, ce_tops[i]) || len < n || path[n - 1] != '/' || len == n ||
		    path[n] == '/')
			continue;
		const char *end = memchr(path + n, '/', len - n);
		return end ? (size_t)(end - path) : len;
	}
	return 0;
}

unsigned seapp_vold_walk(const char *path, size_t len, bool is_dir)
{
	size_t start = vold_start(path, len);

	if (!start)
		return 0;
	/* below the start, an app data directory (misc_ce/N/sdksandbox) is labeled and digested,
	 * not entered: what is below it is not visited */
	for (size_t i = start + 1; i < len; i++)
		if (path[i] == '/' && seapp_is_app_data(path, i))
			return 0;
	if (!is_dir)
		return SEAPP_INIT_LABELS;
	if (seapp_is_app_data(path, len))
		return SEAPP_INIT_LABELS | SEAPP_INIT_DIGESTS;
	return SEAPP_INIT_LABELS | SEAPP_INIT_DIGESTS | SEAPP_INIT_DESCENDS;
}

/* /data/system_ce/N, /data/vendor_ce/N, /data/misc_ce/N: where vold's walks at unlock start. */
static bool ce_user_dir(const char *path, size_t len)
{
	return len && vold_start(path, len) == len;
}

#define PROFILES_CUR "/data/misc/profiles/cur"

/* /data/misc/profiles/cur/N (N a user's number): where installd's profile directories are. */
static bool profiles_user(const char *path, size_t len)
{
	size_t n = strlen(PROFILES_CUR "/");
	if (len <= n || !starts(path, len, PROFILES_CUR "/"))
		return false;
	for (size_t i = n; i < len; i++)
		if (path[i] < '0' || path[i] > '9')
			return false;
	return true;
}

/* /data/misc/profiles/cur/N/PKG, PKG a package packages.list knows: installd labels it. */
static bool profile_dir(const pkg_list *pkgs, const char *path, size_t len)
{
	const char *slash = len ? memrchr(path, '/', len) : NULL;
	if (!pkgs || !slash || !profiles_user(path, (size_t)(slash - path)))
		return false;
	size_t pl = len - (size_t)(slash + 1 - path);
	return pl && pkglist_find(pkgs, slash + 1, pl) != NULL;
}

/* Whether a walk starts below the directory: a package directory, an SDK's directory, a CE user
 * directory, a profile directory. */
static bool holds_starts(const char *path, size_t len)
{
	if (is(path, len, "/data") || appdata_holds_pkgdirs(path, len))
		return true;
	for (size_t i = 0; i < sizeof(ce_tops) / sizeof(ce_tops[0]); i++)
		if (is(path, len, ce_tops[i]))
			return true;
	return is(path, len, "/data/misc") || is(path, len, "/data/misc/profiles") ||
	       is(path, len, PROFILES_CUR) || profiles_user(path, len);
}

/* The walks that reach the entry, from those its directory hands down. */
static unsigned reach(const struct android_walk_at *at)
{
	unsigned up = at->from, r;

	if (at->root)
		return ANDROID_WALK_INIT; /* the walk's root: /data */
	if (up & ANDROID_WALK_NONE)
		return ANDROID_WALK_NONE;
	if (up & ANDROID_WALK_TREE)
		return ANDROID_WALK_TREE;
	r = up & (ANDROID_WALK_INIT | ANDROID_WALK_VOLD);
	if (at->is_dir) {
		struct seapp_path sp;
		seapp_path_classify(at->path, at->len, &sp);
		if (up & ANDROID_WALK_SANDBOX)
			r |= ANDROID_WALK_LAZY; /* an SDK's directory */
		else if (sp.has_pkg && sp.pkgdir_len == at->len)
			r |= sp.sdk_sandbox ? ANDROID_WALK_SANDBOX : ANDROID_WALK_LAZY;
		if (ce_user_dir(at->path, at->len))
			r |= ANDROID_WALK_VOLD;
		if (profile_dir(at->pkgs, at->path, at->len))
			r |= ANDROID_WALK_PROFILE;
	}
	return r;
}

void android_walk_visit(const struct android_walk_at *at, struct android_walk *w)
{
	memset(w, 0, sizeof(*w));
	w->init = seapp_init_walk(at->path, at->len, at->is_dir, at->build);
	w->reach = reach(at);
	if (w->reach & ANDROID_WALK_NONE)
		return;
	/* init compares the digest of every directory it reaches but /data/misc/profiles/cur/N;
	 * vold of every one */
	w->digest = at->is_dir && at->digest_matches &&
		    ((w->reach & ANDROID_WALK_VOLD) ||
		     ((w->reach & ANDROID_WALK_INIT) && (w->init & SEAPP_INIT_DIGESTS)));
	if (w->digest)
		w->matched = at->digest_matches(at->arg);
	w->boot = !w->matched && (w->reach & ANDROID_WALK_INIT) && (w->init & SEAPP_INIT_LABELS);
	w->vold = !w->matched && (w->reach & ANDROID_WALK_VOLD);
	w->labels = w->boot || w->vold ||
		    (w->reach & (ANDROID_WALK_LAZY | ANDROID_WALK_TREE | ANDROID_WALK_PROFILE));
}

unsigned android_walk_below(const struct android_walk *w, const char *path, size_t len,
			    bool redo)
{
	unsigned b = 0;

	if (w->reach & ANDROID_WALK_NONE)
		return ANDROID_WALK_NONE;
	if ((w->reach & ANDROID_WALK_TREE) || ((w->reach & ANDROID_WALK_LAZY) && redo))
		return ANDROID_WALK_TREE; /* installd: all below, with app data rules */
	if (w->reach & ANDROID_WALK_LAZY)
		return 0; /* a package directory whose label is right: nothing below is looked at */
	if (!w->matched) {
		if ((w->reach & ANDROID_WALK_INIT) && (w->init & SEAPP_INIT_DESCENDS))
			b |= ANDROID_WALK_INIT;
		if ((w->reach & ANDROID_WALK_VOLD) && !seapp_is_app_data(path, len))
			b |= ANDROID_WALK_VOLD;
	}
	b |= w->reach & ANDROID_WALK_SANDBOX;
	if (!b && holds_starts(path, len))
		b = ANDROID_WALK_PASS;
	return b;
}

/* /data, or a path below it. */
static bool under_data(const char *path, size_t len)
{
	size_t n = strlen(ANDROID_DATA);
	return starts(path, len, ANDROID_DATA) && (len == n || path[n] == '/');
}

void android_walk_digests(const char *path, size_t len, bool parent_entered, unsigned build,
			  struct android_digests *out)
{
	unsigned fl = seapp_init_walk(path, len, true, build);

	out->init_visits = under_data(path, len) && (is(path, len, ANDROID_DATA) || parent_entered);
	out->init_enters = out->init_visits && (fl & SEAPP_INIT_DESCENDS);
	out->init_digests = out->init_visits && (fl & SEAPP_INIT_DIGESTS);
	out->vold_digests = (seapp_vold_walk(path, len, true) & SEAPP_INIT_DIGESTS) != 0;
}
