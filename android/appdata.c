/*
 * Android app data, for a labeler's walk: which label a path below /data/data/PKG,
 * /data/user/N/PKG, /data/user_de/N/PKG (and the adoptable-storage and SDK sandbox forms) gets,
 * from the file_contexts answer and the seapp_contexts answer for the package and user.
 *
 * The walk is depth first, so the files of one package directory come one after another: the
 * package's answer is worked out once, at its directory, and kept until the walk leaves it.
 *
 * SDK sandbox data (/data/misc_{ce,de}/N/sdksandbox/PKG/...): installd creates PKG without
 * relabeling it, so it keeps the label it inherits from the sdksandbox directory; what is below it
 * installd labels with the sandbox's uid (the app id moved from 10000.. to 20000..) and the app's
 * seinfo.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

struct pkgdir {
	char *prefix;           /* the package directory's path */
	size_t len, cap;
	enum ad_kind kind;
	const struct pkg_entry *pkg;
	struct seapp_answer ans, old; /* in the new set, and (relabel) in the old one */
	bool old_known;         /* old is the answer of an old set */
	int err;                /* the lookup's error (AD_FAILED) */
	unsigned user;
	uint32_t uid;           /* the uid the answer is for */
	const char *why;
	char sandbox_ctx[256];  /* the sdksandbox directory's label: the package directory's */
	bool sandbox_ctx_ok;
};

/* A package's answers for one uid: a package has a directory in each of CE and DE storage for
 * each user (and SDK sandbox ones), all with the same answer for a uid. */
struct answer {
	const struct pkg_entry *pkg;
	uint32_t uid;
	int err;
	const char *why;
	struct seapp_answer ans, old;
	bool old_known;
};

struct appdata {
	const seapp_set *seapp, *old;
	const pkg_list *pkgs;
	const fc_set *set;
	struct pkgdir cur;
	struct answer *answers; /* in the order found */
	size_t nanswers, capanswers;
	uint32_t *slots;        /* open addressing, mask + 1 slots: 1 + an index in answers, 0 free */
	size_t mask;
};

struct appdata *appdata_new(const seapp_set *seapp, const seapp_set *old, const pkg_list *pkgs,
			    const fc_set *set)
{
	struct appdata *ad = calloc(1, sizeof(*ad));
	if (ad) {
		ad->seapp = seapp;
		ad->old = old;
		ad->pkgs = pkgs;
		ad->set = set;
	}
	return ad;
}

void appdata_free(struct appdata *ad)
{
	if (ad) {
		free(ad->cur.prefix);
		free(ad->answers);
		free(ad->slots);
	}
	free(ad);
}

/* The uid installd labels a package's files with: the app's, or its SDK sandbox's. */
static int pkg_uid(const struct pkg_entry *pkg, const struct seapp_path *sp, uint32_t *uid,
		   const char **why)
{
	uint32_t appid = pkg->uid;
	if (sp->sdk_sandbox) {
		if (appid < AID_APP_START || appid > AID_APP_END) {
			*why = "an SDK sandbox exists only for an app id of 10000-19999";
			return ERANGE;
		}
		appid = appid - AID_APP_START + AID_SDK_SANDBOX_PROCESS_START;
	}
	*uid = appid + sp->user * AID_USER_OFFSET;
	return 0;
}

static int lookup(const seapp_set *s, const struct pkg_entry *pkg, const struct seapp_path *sp,
		  struct seapp_answer *ans, uint32_t *uidp, const char **why)
{
	uint32_t uid = 0;
	int rc = pkg_uid(pkg, sp, &uid, why);
	*uidp = uid;
	if (rc)
		return rc;
	rc = seapp_lookup_type(s, uid, pkg->seinfo, pkg->name, pkg->name_len, ans);
	if (rc)
		*why = ans->why;
	return rc;
}

static size_t answer_hash(const struct pkg_entry *pkg, uint32_t uid, size_t mask)
{
	return (size_t)((((uintptr_t)pkg >> 4) ^ uid * 2654435761u) * 0x9e3779b97f4a7c15ull >> 20) &
	       mask;
}

/* The answers of (pkg, uid), found or made (pkg NULL: not yet looked up); NULL when out of
 * memory. */
static struct answer *answer_slot(struct appdata *ad, const struct pkg_entry *pkg, uint32_t uid)
{
	if (ad->nanswers * 2 >= ad->mask) {
		size_t nm = ad->mask ? ad->mask * 2 + 1 : 255;
		uint32_t *ns = calloc(nm + 1, sizeof(*ns));
		if (!ns)
			return NULL;
		for (size_t i = 0; i < ad->nanswers; i++) {
			size_t b = answer_hash(ad->answers[i].pkg, ad->answers[i].uid, nm);
			while (ns[b])
				b = (b + 1) & nm;
			ns[b] = (uint32_t)i + 1;
		}
		free(ad->slots);
		ad->slots = ns;
		ad->mask = nm;
	}
	size_t b = answer_hash(pkg, uid, ad->mask);
	for (; ad->slots[b]; b = (b + 1) & ad->mask) {
		struct answer *a = &ad->answers[ad->slots[b] - 1];
		if (a->pkg == pkg && a->uid == uid)
			return a;
	}
	if (ad->nanswers == ad->capanswers) {
		size_t c = ad->capanswers ? ad->capanswers * 2 : 64;
		struct answer *na = realloc(ad->answers, c * sizeof(*na));
		if (!na)
			return NULL;
		ad->answers = na;
		ad->capanswers = c;
	}
	ad->slots[b] = (uint32_t)++ad->nanswers;
	struct answer *a = &ad->answers[ad->nanswers - 1];
	memset(a, 0, sizeof(*a));
	return a;
}

/* The lookups of the package directory c is at (uid worked out), from the cache or made. */
static int pkg_answers(struct appdata *ad, struct pkgdir *c, const struct seapp_path *sp)
{
	struct answer *a = answer_slot(ad, c->pkg, c->uid);
	if (!a)
		return ENOMEM;
	if (!a->pkg) {
		uint32_t uid;
		const char *oldwhy;
		a->pkg = c->pkg;
		a->uid = c->uid;
		a->err = lookup(ad->seapp, c->pkg, sp, &a->ans, &uid, &a->why);
		a->old_known = !a->err && ad->old &&
			       !lookup(ad->old, c->pkg, sp, &a->old, &uid, &oldwhy);
	}
	c->err = a->err;
	c->why = a->why;
	c->ans = a->ans;
	c->old = a->old;
	c->old_known = a->old_known;
	return 0;
}

/* The sdksandbox directory's label, for the package directory below it. */
static void sandbox_label(struct appdata *ad, const char *path, size_t pkgstart)
{
	struct pkgdir *c = &ad->cur;
	struct fc_result res;
	char *dir = strndup(path, pkgstart - 1);

	c->sandbox_ctx_ok = false;
	if (dir && !fc_lookup(ad->set, dir, S_IFDIR, &res) && res.status == FC_LABEL &&
	    strlen(res.context) < sizeof(c->sandbox_ctx)) {
		strcpy(c->sandbox_ctx, res.context);
		c->sandbox_ctx_ok = true;
	}
	free(dir);
}

/* Works out the package directory path[0..sp->pkgdir_len) into ad->cur. */
static int enter_pkgdir(struct appdata *ad, const char *path, const struct seapp_path *sp)
{
	struct pkgdir *c = &ad->cur;
	if (sp->pkgdir_len + 1 > c->cap) {
		char *p = realloc(c->prefix, sp->pkgdir_len + 1);
		if (!p)
			return ENOMEM;
		c->prefix = p;
		c->cap = sp->pkgdir_len + 1;
	}
	memcpy(c->prefix, path, sp->pkgdir_len);
	c->prefix[sp->pkgdir_len] = 0;
	c->len = sp->pkgdir_len;
	c->pkg = pkglist_find(ad->pkgs, sp->pkg, sp->pkg_len);
	c->old_known = false;
	c->why = NULL;
	c->err = 0;
	if (!c->pkg) {
		c->kind = AD_UNKNOWN;
		return 0;
	}
	c->kind = AD_LABEL;
	c->user = sp->user;
	if ((c->err = pkg_uid(c->pkg, sp, &c->uid, &c->why))) {
		c->kind = AD_FAILED;
		return 0;
	}
	if (pkg_answers(ad, c, sp))
		return ENOMEM;
	if (c->err) {
		c->kind = AD_FAILED;
		return 0;
	}
	if (sp->sdk_sandbox)
		sandbox_label(ad, path, (size_t)(sp->pkg - path));
	return 0;
}

int appdata_label(struct appdata *ad, const char *path, size_t len, const char *fcctx, char *out,
		  size_t n, struct ad_answer *a)
{
	struct seapp_path sp;
	struct pkgdir *c = &ad->cur;

	memset(a, 0, sizeof(*a));
	seapp_path_classify(path, len, &sp);
	if (!sp.has_pkg) {
		a->kind = AD_NOT_APP;
		return 0;
	}
	if (!(c->prefix && c->len == sp.pkgdir_len && !memcmp(c->prefix, path, c->len))) {
		int rc = enter_pkgdir(ad, path, &sp);
		if (rc)
			return rc;
	}
	a->kind = c->kind;
	a->pkg = c->pkg;
	a->user = c->user;
	a->uid = c->uid;
	a->pkgdir = len == sp.pkgdir_len;
	a->why = c->why;
	if (c->kind != AD_LABEL)
		return 0;
	a->ans = &c->ans;
	if (sp.sdk_sandbox && a->pkgdir) {
		/* as installd creates it: the label the sdksandbox directory gives it */
		a->ans = NULL;
		if (!c->sandbox_ctx_ok) {
			a->kind = AD_NOT_APP;
			return 0;
		}
		fcctx = c->sandbox_ctx;
	} else if (sp.sdk_sandbox) {
		a->sandbox = true;
	}
	int rc = a->ans ? seapp_apply(fcctx, a->ans, out, n) : 0;
	if (!a->ans && strlen(fcctx) < n)
		strcpy(out, fcctx);
	else if (!a->ans)
		rc = ERANGE;
	if (rc == EINVAL) {
		a->kind = AD_FAILED;
		a->why = "the file_contexts label is not a context Android's libselinux reads";
		return 0;
	}
	return rc;
}

bool appdata_pkg_changed(struct appdata *ad, const char *path, size_t len)
{
	struct seapp_path sp;
	struct pkgdir *c = &ad->cur;

	seapp_path_classify(path, len, &sp);
	if (!sp.has_pkg)
		return false;
	if (!(c->prefix && c->len == sp.pkgdir_len && !memcmp(c->prefix, path, c->len)) &&
	    enter_pkgdir(ad, path, &sp))
		return true;
	if (c->kind != AD_LABEL || !c->old_known)
		return true;
	return !seapp_answer_equal(&c->ans, &c->old);
}

/* Whether the components of path[0..len) begin the pattern pat ('*' is any one component). */
static bool begins(const char *path, size_t len, const char *pat)
{
	size_t i = 0;
	while (i < len) {
		if (path[i] != '/' || !*pat)
			return false;
		size_t e = i + 1;
		while (e < len && path[e] != '/')
			e++;
		const char *pe = strchr(pat + 1, '/');
		size_t pl = pe ? (size_t)(pe - pat) : strlen(pat);
		if (!(pl == 2 && pat[1] == '*') && (pl != e - i || memcmp(pat, path + i, pl)))
			return false;
		i = e;
		pat += pl;
	}
	return true;
}

bool appdata_holds_pkgdirs(const char *path, size_t len)
{
	/* the directories package directories sit in, and their ancestors */
	static const char *const parents[] = {
		"/data/data", "/data/user/*", "/data/user_de/*", "/data/misc_ce/*/sdksandbox",
		"/data/misc_de/*/sdksandbox", "/mnt/expand/*/user/*", "/mnt/expand/*/user_de/*",
		"/mnt/expand/*/misc_ce/*/sdksandbox", "/mnt/expand/*/misc_de/*/sdksandbox",
	};
	if (len == 1 && path[0] == '/')
		return true;
	for (size_t i = 0; i < sizeof(parents) / sizeof(parents[0]); i++)
		if (begins(path, len, parents[i]))
			return true;
	return false;
}

const pkg_list *appdata_packages(const struct appdata *ad)
{
	return ad ? ad->pkgs : NULL;
}
