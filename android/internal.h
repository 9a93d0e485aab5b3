/* Private to android/. */
#ifndef ANDROID_INTERNAL_H
#define ANDROID_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "android.h"

/* Android's app id ranges (android_filesystem_config.h) and its category mapping limit. */
#define AID_USER_OFFSET		      100000u
#define AID_APP_START		      10000u
#define AID_APP_END		      19999u
#define AID_SDK_SANDBOX_PROCESS_START 20000u
#define AID_ISOLATED_START	      90000u
#define CAT_MAPPING_MAX_ID	      (1u << 16)

enum level_from { LEVEL_FROM_NONE, LEVEL_FROM_APP, LEVEL_FROM_USER, LEVEL_FROM_ALL };

/* user= and name=: a trailing '*' makes a prefix; len counts the '*', as Android's does. */
struct sel_str {
	const char *str; /* NULL when the line has no such key */
	size_t len;
	bool is_prefix;
};

/* One seapp_contexts line. Strings point into the set's buffers. */
struct rule {
	/* selectors */
	bool system_server;
	bool ephemeral_set, ephemeral;
	bool v2_set, v2;  /* isV2App, a key of Android 8 and 9 (seinfo ":v2"); read for their files */
	struct sel_str user;
	const char *seinfo;
	struct sel_str name;
	bool privapp_set, privapp;
	int32_t min_target_sdk;
	bool from_run_as;
	bool isolated_compute;
	bool sdk_sandbox_audit;
	bool sdk_sandbox_next;
	/* outputs */
	const char *domain;
	const char *type;
	const char *level;
	enum level_from level_from;
	/* origin */
	bool vendor;	  /* from a vendor or odm file: loses V3's platform tie-break */
	unsigned file;	  /* index into seapp_set.files */
	unsigned line;	  /* physical, 1-based */
	const char *text; /* the line as written */
	size_t order;	  /* load order: the tie-break that makes our sort stable */
};

struct seapp_set {
	struct rule *rules; /* in precedence order */
	size_t nrules;
	char **files; /* names as given */
	size_t nfiles;
	char **bufs; /* copies of the file contents the rules point into */
	size_t nbufs;
	size_t neverallow;
};

/* The longest line Android's fgets(buf, BUFSIZ - 1) reads whole, BUFSIZ being bionic's 1024. */
#define SEAPP_MAX_LINE 1022
/* Sizes we refuse to read: far above any real seapp_contexts or packages.list. */
#define SEAPP_MAX_FILE (256u << 20)

/* libselinux's is_app_data_path: path[0..len) is at or below an app data directory (paths.c). */
bool seapp_is_app_data(const char *path, size_t len);

void seapp_seterr(struct seapp_error *err, const char *file, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Reads a whole regular file into a NUL-terminated malloc'd buffer. */
int seapp_slurp(const char *path, char **out, size_t *len, struct seapp_error *err);

/* ASCII-only case folding, as bionic's strcasecmp in the C locale. */
static inline int ascii_lower(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* strncasecmp(a, b, n) where a has alen bytes and no NUL (a shorter a compares as if NUL-ended). */
static inline bool ascii_prefix_eq(const char *a, size_t alen, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int ca = i < alen ? ascii_lower((unsigned char)a[i]) : 0;
		int cb = ascii_lower((unsigned char)b[i]);
		if (ca != cb)
			return false;
		if (!cb)
			return true;
	}
	return true;
}

/* strcasecmp(a, b) == 0 where a has alen bytes and no NUL. */
static inline bool ascii_eq(const char *a, size_t alen, const char *b)
{
	size_t i;
	for (i = 0; i < alen; i++)
		if (!b[i] || ascii_lower((unsigned char)a[i]) != ascii_lower((unsigned char)b[i]))
			return false;
	return b[i] == 0;
}

/* isspace() in the C locale. */
static inline bool c_isspace(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

#endif
