/*
 * Which file_contexts and seapp_contexts files a device loads, and in which order: the rules of
 * Android's libselinux (selinux_android_file_context_handle and seapp_context_reload, through
 * find_existing_files), as pure functions. Whether a file exists is asked of the caller, by the
 * path the device's libselinux uses; the caller knows where its partitions are.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "android.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* For each part, its paths in the order libselinux tries them: the first that exists is taken.
 * Android 8.1 to 13 also took nonplat_ names for the vendor part (Android 8.0's name for it);
 * Android 14 dropped them: a device that ships them runs a release that reads them. */
struct part {
	const char *name;
	const char *const fc[5];
	const char *const seapp[5];
};

static const struct part parts[] = {
	{ "plat",
	  { "/system/etc/selinux/plat_file_contexts", "/plat_file_contexts" },
	  { "/system/etc/selinux/plat_seapp_contexts", "/plat_seapp_contexts" } },
	{ "system_ext",
	  { "/system_ext/etc/selinux/system_ext_file_contexts", "/system_ext_file_contexts" },
	  { "/system_ext/etc/selinux/system_ext_seapp_contexts", "/system_ext_seapp_contexts" } },
	{ "product",
	  { "/product/etc/selinux/product_file_contexts", "/product_file_contexts" },
	  { "/product/etc/selinux/product_seapp_contexts", "/product_seapp_contexts" } },
	{ "vendor",
	  { "/vendor/etc/selinux/vendor_file_contexts", "/vendor_file_contexts",
	    "/vendor/etc/selinux/nonplat_file_contexts", "/nonplat_file_contexts" },
	  { "/vendor/etc/selinux/vendor_seapp_contexts", "/vendor_seapp_contexts",
	    "/vendor/etc/selinux/nonplat_seapp_contexts", "/nonplat_seapp_contexts" } },
	{ "odm",
	  { "/odm/etc/selinux/odm_file_contexts", "/odm_file_contexts" },
	  { "/odm/etc/selinux/odm_seapp_contexts", "/odm_seapp_contexts" } },
};

/* Before Treble (Android 4.4 to 7): one file in the root file system; 7 compiled it. */
static const char *const legacy_fc[] = { "/file_contexts.bin", "/file_contexts", NULL };
static const char *const legacy_seapp[] = { "/seapp_contexts", NULL };

/* What a refusal names as looked for: a part's paths, and for plat the legacy ones after them. */
static const char *const looked_plat_fc[] = { "/system/etc/selinux/plat_file_contexts",
					      "/plat_file_contexts", "/file_contexts.bin",
					      "/file_contexts", NULL };
static const char *const looked_plat_seapp[] = { "/system/etc/selinux/plat_seapp_contexts",
						 "/plat_seapp_contexts", "/seapp_contexts", NULL };
static const char *const looked_vendor_fc[] = { "/vendor/etc/selinux/vendor_file_contexts",
						"/vendor_file_contexts",
						"/vendor/etc/selinux/nonplat_file_contexts",
						"/nonplat_file_contexts", NULL };

/* The first of paths (up to n, NULL-ended) that exists: 1 and *found, 0 for none, or the
 * callback's negative errno. */
static int first_existing(seapp_exists_fn exists, void *arg, const char *const *paths, size_t n,
			  const char **found, const char **failed)
{
	for (size_t i = 0; i < n && paths[i]; i++) {
		int r = exists(arg, paths[i]);
		if (r < 0) {
			*failed = paths[i];
			return r;
		}
		if (r) {
			*found = paths[i];
			return 1;
		}
	}
	return 0;
}

/* One kind of file: every part's first existing path, or the legacy file alone. */
static int find_kind(seapp_exists_fn exists, void *arg, enum seapp_kind kind,
		     struct seapp_policy *out)
{
	struct seapp_policy_file *v = kind == SEAPP_FILE_CONTEXTS ? out->fc : out->seapp;
	size_t *nv = kind == SEAPP_FILE_CONTEXTS ? &out->nfc : &out->nseapp;
	const char *found = NULL;
	int r;

	*nv = 0;
	for (size_t i = 0; i < ARRAY_SIZE(parts); i++) {
		const char *const *paths = kind == SEAPP_FILE_CONTEXTS ? parts[i].fc : parts[i].seapp;
		r = first_existing(exists, arg, paths, 5, &found, &out->failed);
		if (r < 0)
			return -r;
		if (!r && i == 0)
			break; /* no plat: a device from before Treble, or an incomplete set */
		if (r) {
			v[*nv].part = parts[i].name;
			v[(*nv)++].path = found;
		}
	}
	if (*nv) {
		if (kind == SEAPP_FILE_CONTEXTS)
			out->layout = v[0].path == parts[0].fc[0] ? SEAPP_LAYOUT_TREBLE
								   : SEAPP_LAYOUT_ROOTFS;
		return 0;
	}
	r = first_existing(exists, arg, kind == SEAPP_FILE_CONTEXTS ? legacy_fc : legacy_seapp, 3,
			   &found, &out->failed);
	if (r < 0)
		return -r;
	if (!r) {
		out->missing = "plat";
		out->missing_kind = kind;
		out->looked = kind == SEAPP_FILE_CONTEXTS ? looked_plat_fc : looked_plat_seapp;
		return ENOENT;
	}
	if (kind == SEAPP_FILE_CONTEXTS)
		out->layout = SEAPP_LAYOUT_LEGACY;
	v[0].part = "legacy";
	v[0].path = found;
	*nv = 1;
	return 0;
}

int seapp_find_policy(seapp_exists_fn exists, void *arg, bool want_seapp, struct seapp_policy *out)
{
	int rc;

	*out = (struct seapp_policy){ 0 };
	if ((rc = find_kind(exists, arg, SEAPP_FILE_CONTEXTS, out)))
		return rc;
	/* a Treble device's own file_contexts label nothing of its vendor side: refused */
	if (out->layout == SEAPP_LAYOUT_TREBLE) {
		bool vendor = false;
		for (size_t i = 0; i < out->nfc; i++)
			vendor |= !strcmp(out->fc[i].part, "vendor");
		if (!vendor) {
			out->missing = "vendor";
			out->missing_kind = SEAPP_FILE_CONTEXTS;
			out->looked = looked_vendor_fc;
			return ENOENT;
		}
	}
	return want_seapp ? find_kind(exists, arg, SEAPP_SEAPP_CONTEXTS, out) : 0;
}
