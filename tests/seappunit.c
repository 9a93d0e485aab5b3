/*
 * Unit tests of the android library: seapp_contexts parsing and precedence, the TYPE lookup,
 * packages.list, app data paths, the device's walks of /data (which reach, label and digest a
 * path), which policy files a device loads. Expectations come from reading Android 15's
 * libselinux (android_seapp.c, android.c), Android 14's android_device.c, installd, vold and
 * libpackagelistparser; the comments give the derivation where it is not obvious.
 *
 * usage: seappunit [SCRATCH_DIR]
 * Fixtures: $SEAPP_FIXTURES, else fixtures/seapp; real Android files: $SEAPP_DATA, else
 * ../shared/data (tests that need it are skipped when absent).
 * Prints "ok"/"FAIL" lines; exit 1 on any failure.
 */
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "android.h"

#include "unit.h"


#define SKIP(...) (printf("skip "), printf(__VA_ARGS__), putchar('\n'))

static char dir[4096];
static const char *fixtures = "fixtures/seapp";
static const char *data = "../shared/data";

static const char *path_in(const char *d, const char *name)
{
	static char path[8][4096];
	static int slot;
	char *p = path[slot++ % 8];

	if ((size_t)snprintf(p, 4096, "%s/%s", d, name) >= 4096) {
		fprintf(stderr, "path too long: %s/%s\n", d, name);
		exit(2);
	}
	return p;
}

static const char *write_file(const char *name, const char *text, size_t len)
{
	const char *p = path_in(dir, name);
	FILE *f = fopen(p, "w");

	if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0) {
		perror(p);
		exit(2);
	}
	return p;
}

static const char *wf(const char *name, const char *text)
{
	return write_file(name, text, strlen(text));
}

/* Loads text as one file named name (in the scratch dir). */
static int load_named(seapp_set **out, const char *name, const char *text, struct seapp_error *err)
{
	const char *p = wf(name, text);
	return seapp_load(out, &p, 1, err);
}

static seapp_set *load_ok(const char *what, const char *text)
{
	struct seapp_error err = { 0 };
	seapp_set *set = NULL;
	int rc = load_named(&set, "plat_seapp_contexts", text, &err);

	if (rc) {
		CHECK(0, "%s: loads (got %s:%u: %s)", what, err.file, err.line, err.msg);
		return NULL;
	}
	return set;
}

/* The load fails at the given line with a message containing part. */
static void load_bad(const char *what, const char *text, unsigned line, const char *part)
{
	struct seapp_error err = { 0 };
	seapp_set *set = (seapp_set *)&err; /* must stay untouched */
	int rc = load_named(&set, "plat_seapp_contexts", text, &err);
	const char *base = strrchr(err.file, '/');

	CHECK(rc == EINVAL && err.line == line && strstr(err.msg, part) && base &&
		      strcmp(base, "/plat_seapp_contexts") == 0 && set == (seapp_set *)&err,
	      "%s: refused at line %u (got rc %d, %s:%u: %s)", what, line, rc, err.file, err.line,
	      err.msg);
	if (!rc && set != (seapp_set *)&err)
		seapp_free(set);
}

static const char *errname(int rc)
{
	switch (rc) {
	case EINVAL: return "EINVAL";
	case ENOENT: return "ENOENT";
	case ERANGE: return "ERANGE";
	default: return "error";
	}
}

/* "type:level", "type:keep" (no range change), "none" (no line with type=), or the error. */
static const char *look(const seapp_set *set, uint32_t uid, const char *seinfo, const char *pkg)
{
	static char buf[4][256];
	static int slot;
	char *b = buf[slot++ % 4];
	struct seapp_answer a;
	int rc = seapp_lookup_type(set, uid, seinfo, pkg, pkg ? strlen(pkg) : 0, &a);

	if (rc) {
		snprintf(b, 256, "%s", errname(rc));
		CHECK(a.why != NULL, "lookup error %s has a reason", b);
	} else if (!a.found) {
		snprintf(b, 256, "none");
	} else {
		const char *l = seapp_answer_level(&a);
		snprintf(b, 256, "%s:%s", a.type, l ? l : "keep");
	}
	return b;
}

#define LOOK(what, set, uid, seinfo, pkg, want)                                                    \
	do {                                                                                       \
		const char *got_ = look(set, uid, seinfo, pkg);                                    \
		CHECK(strcmp(got_, want) == 0, "%s: got %s want %s", what, got_, want);            \
	} while (0)

static bool eqs(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* ---- parsing ---- */

static void test_keys_case(void)
{
	seapp_set *s = load_ok("keys", "USER=_app SeInfo=x DOMAIN=d Type=t LEVELFROM=App\n");

	if (!s)
		return;
	LOOK("keys compare case-insensitively (strcasecmp)", s, 10170, "x", NULL, "t:s0:c170,c256");
	seapp_free(s);
}

static void test_booleans(void)
{
	seapp_set *s = load_ok("bools", "user=_app isPrivApp=TRUE type=a\n"
					"user=_app isPrivApp=False type=b\n");
	if (s) {
		LOOK("isPrivApp=TRUE", s, 10001, "default:privapp", NULL, "a:keep");
		LOOK("isPrivApp=False", s, 10001, "default", NULL, "b:keep");
		seapp_free(s);
	}
	load_bad("boolean 1", "user=_app isPrivApp=1 type=a\n", 1, "want true or false");
	load_bad("boolean yes", "# c\nuser=_app fromRunAs=yes type=a\n", 2, "want true or false");
	load_bad("boolean with trailing text", "isSystemServer=truex domain=a\n", 1,
		 "true or false");
}

static void test_level_from_values(void)
{
	seapp_set *s =
		load_ok("levelFrom", "user=_app seinfo=a type=t levelFrom=ALL\n"
				     "user=_app seinfo=u type=t levelFrom=User\n"
				     "user=_app seinfo=p type=t levelFrom=app\n"
				     "user=_app seinfo=n type=t levelFrom=none level=s0:c9\n"
				     "user=_app seinfo=k type=t levelFrom=none\n"
				     "user=_app seinfo=t type=t levelFromUid=true\n"
				     "user=_app seinfo=f type=t levelFromUid=FALSE\n"
				     "user=_app seinfo=b type=t levelFrom=user level=s0:c1\n");
	if (s) {
		/* uid 1010170: user 10, app id 10170 - 10000 = 170 (c170, c256 + 0). */
		LOOK("levelFrom=all", s, 1010170, "a", NULL, "t:s0:c170,c256,c522,c768");
		LOOK("levelFrom=user", s, 1010170, "u", NULL, "t:s0:c522,c768");
		LOOK("levelFrom=app", s, 1010170, "p", NULL, "t:s0:c170,c256");
		LOOK("levelFrom=none with level=", s, 1010170, "n", NULL, "t:s0:c9");
		LOOK("levelFrom=none keeps the fc range", s, 1010170, "k", NULL, "t:keep");
		LOOK("levelFromUid=true is levelFrom=app", s, 1010170, "t", NULL, "t:s0:c170,c256");
		LOOK("levelFromUid=false is none", s, 1010170, "f", NULL, "t:keep");
		LOOK("levelFrom wins over level=", s, 1010170, "b", NULL, "t:s0:c522,c768");
		/* user 256, app id 300: 300 & 0xff = 44, 256 + 1; 512 + 0, 768 + 1 */
		LOOK("levelFrom=all high bytes", s, 25600000 + 10300, "a", NULL,
		     "t:s0:c44,c257,c512,c769");
		seapp_free(s);
	}
	load_bad("levelFrom=both", "user=_app type=t levelFrom=both\n", 1, "want none, app");
	load_bad("levelFromUid=1", "user=_app type=t levelFromUid=1\n", 1, "true or false");
}

static void test_level_from_repeats(void)
{
	/* The guard is "if (cur->levelFrom) goto err" and none is 0. */
	seapp_set *s = load_ok("levelFrom none then app", "user=_app type=t levelFrom=none "
							  "levelFrom=app\n");
	if (s) {
		LOOK("levelFrom=none levelFrom=app: app", s, 10170, NULL, NULL, "t:s0:c170,c256");
		seapp_free(s);
	}
	load_bad("levelFrom app then none", "user=_app type=t levelFrom=app levelFrom=none\n", 1,
		 "levelFrom");
	load_bad("levelFromUid then levelFrom",
		 "user=_app type=t levelFromUid=true levelFrom=user\n", 1, "levelFrom");
	s = load_ok("levelFromUid=false then levelFrom", "user=_app type=t levelFromUid=false "
							 "levelFrom=user\n");
	if (s) {
		LOOK("levelFromUid=false levelFrom=user: user", s, 10170, NULL, NULL,
		     "t:s0:c512,c768");
		seapp_free(s);
	}
}

static void test_repeated_keys(void)
{
	static const char *const once[] = { "user=_app user=_app",    "seinfo=a seinfo=a",
					    "seinfo=a name=x name=x", "domain=d domain=d",
					    "type=t type=t",	      "level=s0 level=s0" };
	char line[256], what[128];
	seapp_set *s;

	for (size_t i = 0; i < sizeof(once) / sizeof(once[0]); i++) {
		snprintf(line, sizeof(line), "#\n\nuser=_isolated %s\n", once[i]);
		if (i == 0)
			snprintf(line, sizeof(line), "#\n\n%s type=t\n", once[i]);
		snprintf(what, sizeof(what), "repeated key: %s", once[i]);
		load_bad(what, line, 3, "given twice");
	}
	/* Booleans and minTargetSdkVersion are plain assignments: the last one wins. */
	s = load_ok("repeated booleans", "user=_app isPrivApp=true isPrivApp=false type=a\n"
					 "user=_app minTargetSdkVersion=40 minTargetSdkVersion=20 "
					 "type=b\n"
					 "user=_app isEphemeralApp=false isEphemeralApp=true "
					 "fromRunAs=true fromRunAs=false isIsolatedComputeApp=true "
					 "isIsolatedComputeApp=false isSdkSandboxNext=true "
					 "isSdkSandboxNext=false isSdkSandboxAudit=true "
					 "isSdkSandboxAudit=false isSystemServer=true "
					 "isSystemServer=false type=c\n");
	if (s) {
		LOOK("isPrivApp=true isPrivApp=false: false", s, 10001, "default", NULL, "a:keep");
		LOOK("minTargetSdkVersion 40 then 20: 20", s, 10001,
		     "d:privapp:targetSdkVersion=25", NULL, "b:keep");
		LOOK("the other booleans: last wins", s, 10001, "d:privapp:ephemeralapp", NULL,
		     "c:keep");
		seapp_free(s);
	}
}

static void test_min_sdk(void)
{
	/* strtol with *end == 0 and 0 <= v <= INT32_MAX: a sign passes, "-0" is 0. */
	seapp_set *s = load_ok("minTargetSdkVersion forms",
			       "user=_app seinfo=p minTargetSdkVersion=+5 type=plus\n"
			       "user=_app seinfo=z minTargetSdkVersion=-0 type=zero\n"
			       "user=_app seinfo=m minTargetSdkVersion=2147483647 type=max\n");
	if (s) {
		LOOK("+5 is 5 (4 fails)", s, 10001, "p:targetSdkVersion=4", NULL, "none");
		LOOK("+5 is 5 (5 matches)", s, 10001, "p:targetSdkVersion=5", NULL, "plus:keep");
		LOOK("-0 is 0", s, 10001, "z", NULL, "zero:keep");
		LOOK("2147483647", s, 10001, "m:targetSdkVersion=2147483647", NULL, "max:keep");
		seapp_free(s);
	}
	load_bad("minTargetSdkVersion=-1", "user=_app minTargetSdkVersion=-1 type=t\n", 1,
		 "minTargetSdkVersion");
	load_bad("minTargetSdkVersion=2147483648",
		 "user=_app minTargetSdkVersion=2147483648 type=t\n", 1, "minTargetSdkVersion");
	load_bad("minTargetSdkVersion=12x", "user=_app minTargetSdkVersion=12x type=t\n", 1,
		 "minTargetSdkVersion");
	load_bad("minTargetSdkVersion=+", "user=_app minTargetSdkVersion=+ type=t\n", 1,
		 "minTargetSdkVersion");
}

static void test_bad_lines(void)
{
	char longline[1100];

	load_bad("unknown key", "user=_app colour=red type=t\n", 1, "unknown key 'colour'");
	load_bad("isOwner (Android 9 and before)", "user=_app isOwner=true type=t\n", 1,
		 "older Android releases");
	load_bad("seinfo with ':'", "user=_app seinfo=platform:privapp type=t\n", 1, "':'");
	load_bad("type with ':'", "user=_app type=a:b\n", 1, "':'");
	load_bad("empty user=", "user= type=t\n", 1, "empty value");
	load_bad("empty name=", "seinfo=x name= type=t\n", 1, "empty value");
	load_bad("empty seinfo=", "user=_app seinfo= type=t\n", 1, "empty value");
	load_bad("empty minTargetSdkVersion=", "user=_app minTargetSdkVersion= type=t\n", 1,
		 "empty value");
	load_bad("empty key", "user=_app =x type=t\n", 1, "empty key");
	load_bad("token without =", "user=_app type=t bare\n", 1, "not key=value");
	load_bad("end-of-line comment", "user=_app type=t # a comment\n", 1, "end-of-line");
	load_bad("end-of-line #x=y", "user=_app type=t #x=y\n", 1, "end-of-line");
	load_bad("CRLF", "# fine\r\nuser=_app type=t\r\n", 1, "carriage return");
	load_bad("CR on a data line", "# c\nuser=_app type=t\r\n", 2, "carriage return");
	load_bad("vertical tab", "user=_app\vtype=t\n", 1, "control byte 0x0b");
	{
		static const char nul[] = "user=_app type=t\n\0user=_app\n";
		const char *p = write_file("plat_seapp_contexts", nul, sizeof(nul) - 1);
		struct seapp_error err = { 0 };
		seapp_set *set = NULL;
		int rc = seapp_load(&set, &p, 1, &err);
		CHECK(rc == EINVAL && err.line == 2 && strstr(err.msg, "NUL"),
		      "NUL byte refused at its line (got %d %u %s)", rc, err.line, err.msg);
		if (!rc)
			seapp_free(set);
	}
	/* fgets(buf, 1023): 1022 bytes is the longest line read whole. */
	memset(longline, 0, sizeof(longline));
	strcpy(longline, "user=_app type=");
	memset(longline + strlen(longline), 't', 1022 - strlen(longline));
	strcat(longline, "\n");
	{
		seapp_set *s = load_ok("a 1022-byte line", longline);
		CHECK(s && seapp_count(s) == 1, "a 1022-byte line is one rule");
		seapp_free(s);
	}
	longline[1022] = 't';
	longline[1023] = '\n';
	load_bad("a 1023-byte line", longline, 1, "1023 bytes");
	/* name= needs a specific seinfo, unless isPrivApp=true; "default" compares with strcmp. */
	load_bad("name without seinfo", "# c\nuser=_app name=com.x type=t\n", 2, "seinfo");
	load_bad("name with seinfo=default", "user=_app seinfo=default name=com.x type=t\n", 1,
		 "seinfo");
	load_bad("name with isPrivApp=false", "user=_app isPrivApp=false name=com.x type=t\n", 1,
		 "seinfo");
	{
		seapp_set *s = load_ok("name with isPrivApp=true / seinfo=Default",
				       "user=_app isPrivApp=true name=com.x type=p\n"
				       "user=_app seinfo=Default name=com.y type=d\n");
		if (s) {
			LOOK("seinfo=Default matches base default", s, 10001, "default", "com.y",
			     "d:keep");
			seapp_free(s);
		}
	}
}

static void test_blank_and_comments(void)
{
	seapp_set *s = load_ok("blanks", "\n   \n\t# comment\n  user=_app\t\ttype=t  \n#\n");

	CHECK(s && seapp_count(s) == 1, "blank lines, indented comments, tabs and runs of blanks");
	if (s) {
		struct seapp_where w;
		seapp_rule_at(s, 0, &w);
		CHECK(w.line == 4 && strcmp(w.text, "user=_app\t\ttype=t  ") == 0,
		      "the rule keeps its physical line and text (got %u '%s')", w.line, w.text);
	}
	seapp_free(s);
	s = load_ok("empty file", "");
	CHECK(s && seapp_count(s) == 0, "an empty file loads with no rules");
	if (s)
		LOOK("an empty set matches nothing", s, 10170, "default", "x", "none");
	seapp_free(s);
}

static void test_neverallow(void)
{
	seapp_set *s =
		load_ok("neverallow", "neverallow user=_app domain=((?!x).)*\n"
				      "user=_app type=t\n"
				      "  neverallow isSystemServer=\"\" domain=system_server\n");
	CHECK(s && seapp_count(s) == 1 && seapp_neverallow_count(s) == 2,
	      "neverallow lines are skipped and counted");
	seapp_free(s);
	load_bad("neverallow not first", "user=_app neverallow type=t\n", 1, "not key=value");
	load_bad("neverallowx", "neverallowx user=_app\n", 1, "not key=value");
	{
		/* Never read by the device, so a neverallow line may be long. */
		char line[2100] = "neverallow user=_app name=";
		size_t n = strlen(line);
		memset(line + n, 'x', 2000);
		strcpy(line + n + 2000, "\nuser=_app type=t\n");
		s = load_ok("a 2000-byte neverallow line", line);
		CHECK(s && seapp_count(s) == 1 && seapp_neverallow_count(s) == 1,
		      "a long neverallow line is skipped too");
		seapp_free(s);
	}
	{
		/* Android would read a long comment's second piece as a rule. */
		char line[1100] = "# ";
		memset(line + 2, 'x', 1030);
		strcpy(line + 1032, "\n");
		load_bad("a 1032-byte comment", line, 1, "1032 bytes long");
	}
}

/* ---- duplicates ---- */

static void test_duplicates(void)
{
	struct seapp_error err = { 0 };
	seapp_set *s = NULL;
	const char *files[2];
	int rc;

	/* Outputs are ignored: a domain-only and a type-only line with the same selectors. */
	load_bad("duplicate", "user=_app seinfo=a domain=x\n# c\nuser=_app seinfo=a type=y\n", 3,
		 "plat_seapp_contexts:1");
	/* Unset equals false for the exact-match keys (Android's own unit test). */
	load_bad("fromRunAs=false vs unset",
		 "user=_app domain=x\n"
		 "user=_app fromRunAs=false domain=y type=x\n",
		 2, ":1");
	load_bad("isIsolatedComputeApp=false vs unset",
		 "user=_isolated domain=x\n"
		 "user=_isolated isIsolatedComputeApp=false domain=y\n",
		 2, ":1");
	load_bad("isSdkSandboxAudit=false vs unset",
		 "user=_app domain=x\n"
		 "user=_app isSdkSandboxAudit=false domain=y\n",
		 2, ":1");
	/* Case differs: strcmp says different; both kept. */
	s = load_ok("case-only difference", "user=_app seinfo=platform type=a\n"
					    "user=_app seinfo=PLATFORM type=b\n");
	CHECK(s && seapp_count(s) == 2, "seinfo=platform and seinfo=PLATFORM are no duplicates");
	seapp_free(s);
	s = load_ok("flag difference", "user=_app type=a\n"
				       "user=_app isSdkSandboxNext=true type=b\n"
				       "user=_app isPrivApp=true type=c\n"
				       "user=_app isPrivApp=false type=d\n");
	CHECK(s && seapp_count(s) == 4, "lines that differ in a flag are no duplicates");
	seapp_free(s);

	/* Two platform files: a duplicate across files, named by both file:line. */
	files[0] = wf("plat_seapp_contexts", "user=_app seinfo=a type=x\n");
	files[1] = wf("product_seapp_contexts", "#\nuser=_app seinfo=a type=y\n");
	rc = seapp_load(&s, files, 2, &err);
	CHECK(rc == EINVAL && err.line == 2 && strstr(err.file, "product_seapp_contexts") &&
		      strstr(err.msg, "plat_seapp_contexts:1"),
	      "duplicate across platform files names both (got %s:%u: %s)", err.file, err.line,
	      err.msg);
	/* Platform and vendor: different by the last sort key, so not duplicates. */
	files[1] = wf("vendor_seapp_contexts", "#\nuser=_app seinfo=a type=y\n");
	rc = seapp_load(&s, files, 2, &err);
	CHECK(rc == 0 && seapp_count(s) == 2,
	      "the same selectors in plat and vendor: no duplicate");
	if (!rc) {
		LOOK("...and the platform line shadows the vendor one", s, 10001, "a", NULL,
		     "x:keep");
		seapp_free(s);
	}
	files[0] = wf("odm_seapp_contexts", "user=_app seinfo=a type=x\n");
	rc = seapp_load(&s, files, 2, &err);
	CHECK(rc == EINVAL && strstr(err.msg, "odm_seapp_contexts:1"),
	      "vendor and odm are one side: duplicate (got %s)", err.msg);
}

static void test_partition_names(void)
{
	CHECK(seapp_name_is_vendor("/x/vendor_seapp_contexts") &&
		      seapp_name_is_vendor("vendor_etc_selinux_vendor_seapp_contexts") &&
		      seapp_name_is_vendor("/a/nonplat_seapp_contexts") &&
		      seapp_name_is_vendor("odm_seapp_contexts") &&
		      !seapp_name_is_vendor("/vendor_dir/plat_seapp_contexts") &&
		      !seapp_name_is_vendor("system_ext_seapp_contexts") &&
		      !seapp_name_is_vendor("product_seapp_contexts") &&
		      !seapp_name_is_vendor("seapp_contexts"),
	      "partition from the base name (vendor_, nonplat_, odm_)");
}

/* ---- precedence: two lines that both match; the earlier in the file must lose ---- */

struct prec {
	const char *what;
	const char *lines; /* type=win must win, though file order alone picks the other */
	uint32_t uid;
	const char *seinfo;
	const char *pkg;
};

static void test_precedence(void)
{
	static const struct prec cases[] = {
		{ "isEphemeralApp set before unset",
		  "user=_app type=lose\n"
		  "user=_app isEphemeralApp=false type=win\n",
		  10001, "default", NULL },
		{ "user before no user",
		  "seinfo=default type=lose\n"
		  "user=_app type=win\n",
		  10001, "default", NULL },
		{ "fixed user before a prefix",
		  "user=_ap* type=lose\n"
		  "user=_app type=win\n",
		  10001, NULL, NULL },
		{ "longer user prefix first",
		  "user=_* type=lose\n"
		  "user=_ap* type=win\n",
		  10001, NULL, NULL },
		{ "seinfo before no seinfo",
		  "user=_app type=lose\n"
		  "user=_app seinfo=default type=win\n",
		  10001, "default", NULL },
		{ "a longer user prefix outranks seinfo",
		  "seinfo=default user=_* type=lose\n"
		  "user=_ap* type=win\n",
		  10001, "default", NULL },
		{ "name before no name",
		  "user=_app seinfo=s type=lose\n"
		  "user=_app seinfo=s name=com.x type=win\n",
		  10001, "s", "com.x" },
		{ "fixed name before a prefix",
		  "user=_app seinfo=s name=com.* type=lose\n"
		  "user=_app seinfo=s name=com.x type=win\n",
		  10001, "s", "com.x" },
		{ "longer name prefix first",
		  "user=_app seinfo=s name=c* type=lose\n"
		  "user=_app seinfo=s name=com.* type=win\n",
		  10001, "s", "com.x" },
		{ "isPrivApp set before unset",
		  "user=_app type=lose\n"
		  "user=_app isPrivApp=false type=win\n",
		  10001, "default", NULL },
		{ "higher minTargetSdkVersion first",
		  "user=_app minTargetSdkVersion=10 type=lose\n"
		  "user=_app minTargetSdkVersion=20 type=win\n",
		  10001, "d:targetSdkVersion=30", NULL },
		{ "unset minTargetSdkVersion is 0",
		  "user=_app type=lose\n"
		  "user=_app minTargetSdkVersion=1 type=win\n",
		  10001, "d:targetSdkVersion=1", NULL },
		/* The domain-only line sorts first but cannot answer a TYPE lookup. */
		{ "a line without type= is passed over",
		  "user=_app type=win\n"
		  "user=_app minTargetSdkVersion=5 domain=lose\n",
		  10001, "d:targetSdkVersion=9", NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		seapp_set *s = load_ok(cases[i].what, cases[i].lines);
		if (!s)
			continue;
		LOOK(cases[i].what, s, cases[i].uid, cases[i].seinfo, cases[i].pkg, "win:keep");
		seapp_free(s);
	}
}

/* Steps no app lookup can see (isSystemServer, fromRunAs: exact matches) via the sorted order. */
static void test_sort_order(void)
{
	seapp_set *s = load_ok("sort", "user=_app type=c\n"
				       "user=_app fromRunAs=true domain=b\n"
				       "isSystemServer=true domain=a\n"
				       "user=_app minTargetSdkVersion=3 type=d\n");
	struct seapp_where w[4];

	if (!s)
		return;
	for (size_t i = 0; i < 4; i++)
		seapp_rule_at(s, i, &w[i]);
	/* isSystemServer first; then minTargetSdkVersion=3 before 0; fromRunAs=true before
	 * false among the minTargetSdkVersion=0 lines. */
	CHECK(w[0].line == 3 && w[1].line == 4 && w[2].line == 2 && w[3].line == 1,
	      "precedence order isSystemServer, minTargetSdkVersion, fromRunAs (got %u %u %u %u)",
	      w[0].line, w[1].line, w[2].line, w[3].line);
	seapp_free(s);
}

static void test_platform_first(void)
{
	struct seapp_error err = { 0 };
	seapp_set *s = NULL;
	const char *files[2];
	int rc;

	/* Given vendor first: only the sort can put the platform line ahead. */
	files[0] = wf("vendor_seapp_contexts", "user=_app seinfo=v type=vendor\n");
	files[1] = wf("plat_seapp_contexts", "user=_app seinfo=V type=plat\n");
	rc = seapp_load(&s, files, 2, &err);
	CHECK(rc == 0, "plat + vendor load (%s)", err.msg);
	if (rc)
		return;
	LOOK("platform before vendor (V3 tie-break)", s, 10001, "v", NULL, "plat:keep");
	seapp_free(s);
	/* The fixture pair: the vendor's seinfo=platform line ties with plat's and loses. */
	files[0] = path_in(fixtures, "plat_seapp_contexts");
	files[1] = path_in(fixtures, "vendor_seapp_contexts");
	rc = seapp_load(&s, files, 2, &err);
	CHECK(rc == 0, "fixture plat + vendor load (%s:%u: %s)", err.file, err.line, err.msg);
	if (rc)
		return;
	LOOK("vendor seinfo=platform shadowed by plat", s, 10050, "platform:targetSdkVersion=34",
	     "com.android.x", "app_data_file:s0:c512,c768");
	LOOK("vendor-only app", s, 10200, "vendorkey:targetSdkVersion=34", "com.vendor.tool",
	     "vendor_app_data_file:s0:c200,c256,c512,c768");
	{
		/* partition=system app decided by a vendor line: Android 15 only warns. */
		struct seapp_answer a;
		rc = seapp_lookup_type(s, 10200, "vendorkey:partition=system", "com.vendor.tool",
				       15, &a);
		CHECK(rc == 0 && a.found && a.partition_warning && strstr(a.file, "vendor_"),
		      "partition=system app labeled by a vendor line: warning flag");
		rc = seapp_lookup_type(s, 10200, "vendorkey:partition=vendor", "com.vendor.tool",
				       15, &a);
		CHECK(rc == 0 && a.found && !a.partition_warning, "partition=vendor: no warning");
		rc = seapp_lookup_type(s, 10200, "default:partition=system", "com.x", 5, &a);
		CHECK(rc == 0 && a.found && !a.partition_warning && !strstr(a.file, "vendor_"),
		      "partition=system app labeled by a platform line: no warning");
	}
	seapp_free(s);
}

/* Ties: Android's qsort is unstable; ours keeps file order. Only lines whose values differ in
 * case can both match. */
static void test_stable_ties(void)
{
	seapp_set *s = load_ok("ties", "user=_app seinfo=Foo type=first\n"
				       "user=_app seinfo=foo type=second\n");
	if (s) {
		LOOK("tie: file order", s, 10001, "FOO", NULL, "first:keep");
		seapp_free(s);
	}
	s = load_ok("ties swapped", "user=_app seinfo=foo type=second\n"
				    "user=_app seinfo=Foo type=first\n");
	if (s) {
		LOOK("tie swapped: file order", s, 10001, "FOO", NULL, "second:keep");
		seapp_free(s);
	}
	/* Two fixed users of different lengths tie too (lengths compare for prefixes only). */
	s = load_ok("fixed users tie", "user=SYSTEM type=a\nuser=system type=b\n");
	if (s) {
		LOOK("fixed users: file order", s, 1000, NULL, NULL, "a:keep");
		seapp_free(s);
	}
}

/* ---- selectors ---- */

static void test_user_selector(void)
{
	seapp_set *s = load_ok("user=", "user=SYSTEM type=sys\n"
					"user=rad* type=userprefix\n"
					"user=* type=anyuser\n"
					"user=oem_2901 type=oem\n");
	if (!s)
		return;
	LOOK("user fixed, case-insensitive", s, 1000, NULL, NULL, "sys:keep");
	LOOK("user prefix rad* (radio, 1001)", s, 1001, NULL, NULL, "userprefix:keep");
	LOOK("user=* matches any user (shell)", s, 2000, NULL, NULL, "anyuser:keep");
	LOOK("user=* matches _app", s, 10001, NULL, NULL, "anyuser:keep");
	LOOK("OEM uid 2901 is oem_2901", s, 2901, NULL, NULL, "oem:keep");
	seapp_free(s);
}

static void test_seinfo_selector(void)
{
	seapp_set *s = load_ok("seinfo=", "user=_app seinfo=PlatForm type=plat\n"
					  "user=_app seinfo=privapp type=base_privapp\n"
					  "user=_app type=other\n");
	if (!s)
		return;
	LOOK("seinfo base, case-insensitive", s, 10001, "platform:privapp:targetSdkVersion=34",
	     NULL, "plat:keep");
	/* parse_seinfo uses strtok_r(":"): empty fields vanish, a leading ':' too. */
	LOOK("seinfo base is the first non-empty field", s, 10001, "::platform", NULL, "plat:keep");
	LOOK("...even when it is a flag name", s, 10001, "privapp:x", NULL, "base_privapp:keep");
	LOOK("seinfo base must be equal, not a prefix", s, 10001, "platformx", NULL, "other:keep");
	LOOK("an empty seinfo has an empty base", s, 10001, ":::", NULL, "other:keep");
	LOOK("seinfo NULL: seinfo= lines never match", s, 10001, NULL, NULL, "other:keep");
	seapp_free(s);
}

static void test_name_selector(void)
{
	seapp_set *s = load_ok("name=", "user=_app seinfo=s name=Com.Example.App type=fixed\n"
					"user=_app seinfo=s name=com.example.* type=prefix\n"
					"user=_app type=other\n");
	if (!s)
		return;
	LOOK("name fixed, case-insensitive", s, 10001, "s", "com.example.app", "fixed:keep");
	LOOK("name prefix", s, 10001, "s", "com.example.other", "prefix:keep");
	LOOK("name prefix, case-insensitive", s, 10001, "s", "COM.EXAMPLE.z", "prefix:keep");
	LOOK("name prefix needs the prefix whole", s, 10001, "s", "com.example", "other:keep");
	LOOK("no package name: name= lines never match", s, 10001, "s", NULL, "other:keep");
	seapp_free(s);
}

static void test_flag_selectors(void)
{
	seapp_set *s = load_ok("flags", "user=_app isPrivApp=true type=priv\n"
					"user=_app isEphemeralApp=true type=eph\n"
					"user=_app fromRunAs=true type=runas\n"
					"user=_app minTargetSdkVersion=30 type=new\n"
					"user=_app type=old\n");
	if (!s)
		return;
	LOOK("isPrivApp from :privapp", s, 10001, "default:privapp", NULL, "priv:keep");
	LOOK("privappX is not privapp (fields compare whole)", s, 10001, "default:privappX", NULL,
	     "old:keep");
	LOOK("Privapp is not privapp (case-sensitive)", s, 10001, "default:Privapp", NULL,
	     "old:keep");
	LOOK("isEphemeralApp from :ephemeralapp", s, 10001, "default:ephemeralapp", NULL,
	     "eph:keep");
	LOOK("fromRunAs matches only fromRunAs=true lines", s, 10001,
	     "default:fromRunAs:targetSdkVersion=40", NULL, "runas:keep");
	LOOK("minTargetSdkVersion <= target", s, 10001, "default:targetSdkVersion=30", NULL,
	     "new:keep");
	LOOK("minTargetSdkVersion > target", s, 10001, "default:targetSdkVersion=29", NULL,
	     "old:keep");
	LOOK("no targetSdkVersion is 0", s, 10001, "default", NULL, "old:keep");
	LOOK(":complete ends the seinfo", s, 10001, "default:complete:privapp", NULL, "old:keep");
	LOOK("unknown seinfo fields are ignored", s, 10001, "default:whatever:privapp", NULL,
	     "priv:keep");
	/* strtol without an end check: 34abc is 34; strtok_r("=") skips a run of '='. */
	LOOK("targetSdkVersion=34abc is 34", s, 10001, "d:targetSdkVersion=34abc", NULL,
	     "new:keep");
	LOOK("targetSdkVersion==34 is 34", s, 10001, "d:targetSdkVersion==34", NULL, "new:keep");
	LOOK("targetSdkVersionX=34 counts (a prefix test)", s, 10001, "d:targetSdkVersionX=34",
	     NULL, "new:keep");
	/* (int32_t)strtol: 4294967330 = 2^32 + 34 wraps to 34. */
	LOOK("targetSdkVersion wraps to int32", s, 10001, "d:targetSdkVersion=4294967330", NULL,
	     "new:keep");
	LOOK("targetSdkVersion without value", s, 10001, "d:targetSdkVersion", NULL, "EINVAL");
	LOOK("targetSdkVersion= without value", s, 10001, "d:targetSdkVersion=", NULL, "EINVAL");
	LOOK("negative targetSdkVersion", s, 10001, "d:targetSdkVersion=-1", NULL, "EINVAL");
	LOOK("targetSdkVersion 2147483648 wraps negative", s, 10001,
	     "d:targetSdkVersion=2147483648", NULL, "EINVAL");
	LOOK("partition without value", s, 10001, "d:partition", NULL, "EINVAL");
	LOOK("a bad field after :complete is not read", s, 10001, "d:complete:targetSdkVersion",
	     NULL, "old:keep");
	{
		char big[300];
		memset(big, 'a', sizeof(big));
		big[255] = 0;
		LOOK("seinfo of 255 bytes", s, 10001, big, NULL, "old:keep");
		big[255] = 'a';
		big[256] = 0;
		LOOK("seinfo of 256 bytes", s, 10001, big, NULL, "EINVAL");
	}
	seapp_free(s);
}

/* isV2App (Android 8 and 9, read so that their files load): a specified isV2App sorts before an
 * unspecified one, right after isEphemeralApp, and matches the seinfo field "v2" (9 looked for
 * the substring ":v2"). */
static void test_v2_app(void)
{
	seapp_set *s = load_ok("isV2App", "user=_app type=plain\n"
					  "user=_app isV2App=false type=notv2\n"
					  "user=_app isEphemeralApp=true type=eph\n"
					  "user=_app isV2App=true isEphemeralApp=true type=v2eph\n");
	if (!s)
		return;
	LOOK("isV2App=true with an ephemeral v2 app", s, 10001, "default:ephemeralapp:v2", NULL,
	     "v2eph:keep");
	LOOK("an ephemeral app without :v2", s, 10001, "default:ephemeralapp", NULL, "eph:keep");
	LOOK("isV2App=false before the unspecified line", s, 10001, "default", NULL,
	     "notv2:keep");
	LOOK("a v2 app that is not ephemeral", s, 10001, "default:v2", NULL, "plain:keep");
	seapp_free(s);
	load_bad("isV2App needs a boolean", "user=_app isV2App=yes type=t\n", 1, "isV2App");
}

static void test_exact_flags(void)
{
	seapp_set *s =
		load_ok("exact flags", "user=_isolated isIsolatedComputeApp=true type=compute\n"
				       "user=_isolated type=isolated\n"
				       "user=_sdksandbox isSdkSandboxNext=true type=next\n"
				       "user=_sdksandbox isSdkSandboxAudit=true type=audit\n"
				       "user=_sdksandbox type=sandbox\n");
	if (!s)
		return;
	LOOK("isIsolatedComputeApp", s, 90005, "default:isolatedComputeApp", NULL, "compute:keep");
	LOOK("isolated, not compute: unset means false", s, 90005, "default", NULL,
	     "isolated:keep");
	LOOK("isSdkSandboxNext", s, 20170, "default:isSdkSandboxNext", NULL, "next:keep");
	LOOK("isSdkSandboxAudit", s, 20170, "default:isSdkSandboxAudit", NULL, "audit:keep");
	LOOK("sandbox without flags", s, 20170, "default", NULL, "sandbox:keep");
	LOOK("both flags: no line has both", s, 20170, "default:isSdkSandboxAudit:isSdkSandboxNext",
	     NULL, "none");
	seapp_free(s);
}

static void test_uids(void)
{
	char buf[16];
	seapp_set *s = load_ok("uids", "user=system type=system levelFrom=all\n"
				       "user=_app type=app levelFrom=all\n"
				       "user=_sdksandbox type=sandbox levelFrom=all\n"
				       "user=_isolated type=isolated levelFrom=all\n"
				       "user=oem_5000 type=oem levelFrom=app\n");
	if (!s)
		return;
	/* Below 10000 the app id is not shifted: 1000 = 0x3e8, c232 and c259. */
	LOOK("system uid 1000", s, 1000, NULL, NULL, "system:s0:c232,c259,c512,c768");
	LOOK("system uid of user 10", s, 1001000, NULL, NULL, "system:s0:c232,c259,c522,c768");
	LOOK("OEM uid 5000", s, 5000, NULL, NULL, "oem:s0:c136,c275");
	LOOK("uid 1999 has no name", s, 1999, NULL, NULL, "ENOENT");
	LOOK("uid 2899 has no name", s, 2899, NULL, NULL, "ENOENT");
	LOOK("uid 1093 (Android 15's uprobestats) has no name", s, 1093, NULL, NULL, "ENOENT");
	LOOK("app 10170", s, 10170, NULL, NULL, "app:s0:c170,c256,c512,c768");
	LOOK("app 19999 (app id 9999 = 0x270f)", s, 19999, NULL, NULL, "app:s0:c15,c295,c512,c768");
	LOOK("sandbox 20170 (app id 170)", s, 20170, NULL, NULL, "sandbox:s0:c170,c256,c512,c768");
	LOOK("sandbox 85535 (app id 65535)", s, 85535, NULL, NULL,
	     "sandbox:s0:c255,c511,c512,c768");
	LOOK("sandbox 85536: app id 65536, over the category mapping", s, 85536, NULL, NULL,
	     "ERANGE");
	LOOK("89999: app id 69999, over the category mapping", s, 89999, NULL, NULL, "ERANGE");
	LOOK("isolated 90001 (app id 1)", s, 90001, NULL, NULL, "isolated:s0:c1,c256,c512,c768");
	seapp_free(s);
	CHECK(eqs(seapp_aid_name(0, buf), "root") && eqs(seapp_aid_name(3, buf), "sys") &&
		      eqs(seapp_aid_name(1092, buf), "prng_seeder") &&
		      eqs(seapp_aid_name(1031, buf), "mediadrm") &&
		      eqs(seapp_aid_name(3012, buf), "readtracefs") &&
		      eqs(seapp_aid_name(9999, buf), "nobody") &&
		      eqs(seapp_aid_name(2999, buf), "oem_2999") &&
		      eqs(seapp_aid_name(5999, buf), "oem_5999") && !seapp_aid_name(1022, buf) &&
		      !seapp_aid_name(1025, buf) && !seapp_aid_name(3013, buf) &&
		      !seapp_aid_name(6000, buf) && !seapp_aid_name(3008, buf),
	      "AID names: table, fix-ups, OEM ranges, gaps");
}

/* ---- applying an answer ---- */

static void test_apply(void)
{
	seapp_set *s = load_ok("apply", "user=_app seinfo=a type=app_data_file levelFrom=all\n"
					"user=_app seinfo=k type=kept_file\n"
					"user=_app seinfo=l type=lvl_file level=s0:c1.c5\n");
	struct seapp_answer a, b, none;
	char out[128];

	if (!s)
		return;
	seapp_lookup_type(s, 10170, "a", NULL, 0, &a);
	seapp_lookup_type(s, 10170, "k", NULL, 0, &b);
	seapp_lookup_type(s, 10170, "zzz", NULL, 0, &none);
	CHECK(seapp_apply("u:object_r:system_data_file:s0", &a, out, sizeof(out)) == 0 &&
		      strcmp(out, "u:object_r:app_data_file:s0:c170,c256,c512,c768") == 0,
	      "type and range replaced, user and role kept (%s)", out);
	CHECK(seapp_apply("user_u:role_r:t:s0:c1,c2", &a, out, sizeof(out)) == 0 &&
		      strcmp(out, "user_u:role_r:app_data_file:s0:c170,c256,c512,c768") == 0,
	      "a range with ':' is replaced whole (%s)", out);
	CHECK(seapp_apply("u:r:t", &a, out, sizeof(out)) == 0 &&
		      strcmp(out, "u:r:app_data_file:s0:c170,c256,c512,c768") == 0,
	      "a range is added to a context without one (%s)", out);
	CHECK(seapp_apply("u:r:t:s0", &b, out, sizeof(out)) == 0 &&
		      strcmp(out, "u:r:kept_file:s0") == 0,
	      "no level: the fc range stays (%s)", out);
	CHECK(seapp_apply("u:r:t", &b, out, sizeof(out)) == 0 && strcmp(out, "u:r:kept_file") == 0,
	      "no level, no fc range: none added (%s)", out);
	CHECK(seapp_apply("u:r:t:s0", &none, out, sizeof(out)) == 0 && strcmp(out, "u:r:t:s0") == 0,
	      "not found: the fc context stands (%s)", out);
	CHECK(seapp_apply("u:r", &a, out, sizeof(out)) == EINVAL &&
		      seapp_apply("u:r:t:a:b:c:d", &a, out, sizeof(out)) == EINVAL &&
		      seapp_apply("u r:r:t:s0", &a, out, sizeof(out)) == EINVAL &&
		      seapp_apply("u:r:t:s0\n", &a, out, sizeof(out)) == EINVAL,
	      "contexts context_new refuses are refused");
	CHECK(seapp_apply("u:r:t:s0 s1", &b, out, sizeof(out)) == 0,
	      "a space in the range is fine");
	CHECK(seapp_apply("u:object_r:system_data_file:s0", &a, out, 20) == ERANGE,
	      "too small a buffer: ERANGE");
	seapp_lookup_type(s, 10170, "l", NULL, 0, &b);
	CHECK(seapp_apply("u:r:t:s0", &b, out, sizeof(out)) == 0 &&
		      strcmp(out, "u:r:lvl_file:s0:c1.c5") == 0,
	      "level= (%s)", out);
	{
		struct seapp_answer a2, a10;
		seapp_lookup_type(s, 10170, "a", "p", 1, &a2);
		seapp_lookup_type(s, 1010170, "a", NULL, 0, &a10);
		CHECK(seapp_answer_equal(&a, &a2) && !seapp_answer_equal(&a, &a10) &&
			      !seapp_answer_equal(&a, &none) && seapp_answer_equal(&none, &none) &&
			      !seapp_answer_equal(&a, &b),
		      "answers compare by type and range");
	}
	seapp_free(s);
}

/* ---- the Android 14 files ---- */

static void check_android14(const char *what, const seapp_set *s)
{
	char out[128];
	struct seapp_answer a;
	int rc;

	/* The sheet's worked example: the first _app line with a type that the app meets is
	 * "user=_app minTargetSdkVersion=34 ... type=app_data_file levelFrom=all". */
	rc = seapp_lookup_type(s, 10170, "default:targetSdkVersion=34", "com.example.app", 15, &a);
	CHECK(rc == 0 && seapp_apply("u:object_r:system_data_file:s0", &a, out, sizeof(out)) == 0 &&
		      strcmp(out, "u:object_r:app_data_file:s0:c170,c256,c512,c768") == 0,
	      "%s: worked example 10170 default:targetSdkVersion=34 -> %s", what, out);
	/* Two matching lines: "user=_app seinfo=platform ... type=app_data_file levelFrom=user"
	 * and "user=_app isPrivApp=true ... type=privapp_data_file"; seinfo sorts first. */
	LOOK("platform app (platform:privapp:targetSdkVersion=34)", s, 10050,
	     "platform:privapp:targetSdkVersion=34", "com.android.systemui",
	     "app_data_file:s0:c512,c768");
	LOOK("privapp", s, 10100, "default:privapp:targetSdkVersion=34", "com.example.priv",
	     "privapp_data_file:s0:c512,c768");
	LOOK("privapp by name (permissioncontroller, levelFrom=all)", s, 10101,
	     "default:privapp:targetSdkVersion=34", "com.google.android.permissioncontroller",
	     "privapp_data_file:s0:c101,c256,c512,c768");
	LOOK("gms prefix name com.google.android.gms.*", s, 10102,
	     "default:privapp:targetSdkVersion=34", "com.google.android.gms.unstable",
	     "privapp_data_file:s0:c512,c768");
	LOOK("system app", s, 1000, "platform:privapp:targetSdkVersion=34", "com.android.settings",
	     "system_app_data_file:keep");
	LOOK("shell", s, 2000, "platform:privapp:targetSdkVersion=34", "com.android.shell",
	     "shell_data_file:keep");
	LOOK("secure_element has no type=: fc stands", s, 1068, "platform", "com.android.se",
	     "none");
	LOOK("old app (target 25)", s, 10015, "default:targetSdkVersion=25", "com.test.old",
	     "app_data_file:s0:c512,c768");
	LOOK("target 28", s, 10015, "default:targetSdkVersion=28", "x",
	     "app_data_file:s0:c15,c256,c512,c768");
	LOOK("user 10", s, 1010170, "default:targetSdkVersion=34", "com.example.app",
	     "app_data_file:s0:c170,c256,c522,c768");
	LOOK("ephemeral", s, 10170, "default:ephemeralapp:targetSdkVersion=34", "x",
	     "app_data_file:s0:c170,c256,c512,c768");
	LOOK("sdk sandbox 20170", s, 20170, "default:targetSdkVersion=34", "com.example.app",
	     "sdk_sandbox_data_file:s0:c170,c256,c512,c768");
	LOOK("sdk sandbox next", s, 20170, "default:isSdkSandboxNext:targetSdkVersion=34", "x",
	     "sdk_sandbox_data_file:s0:c170,c256,c512,c768");
	LOOK("isolated: domain-only lines", s, 90001, "default", "x", "none");
	LOOK("runas app: domain-only lines, then none", s, 10170,
	     "default:fromRunAs:targetSdkVersion=34", "x", "none");
	LOOK("mediaprovider module", s, 10060, "media:privapp:targetSdkVersion=34",
	     "com.android.providers.media.module", "privapp_data_file:s0:c60,c256,c512,c768");
}

/* Our fixture carries rules of the kinds Android 14's file has: the same expectations hold (and hold
 * for the real file, in test_real_sets, when ../shared is there). */
static void test_android14_fixture(void)
{
	const char *f = path_in(fixtures, "plat_seapp_contexts");
	struct seapp_error err = { 0 };
	seapp_set *s = NULL;
	int rc = seapp_load(&s, &f, 1, &err);

	CHECK(rc == 0 && seapp_neverallow_count(s) == 0, "fixture %s loads (%s:%u: %s)", f,
	      err.file, err.line, err.msg);
	if (rc)
		return;
	check_android14("fixture", s);
	seapp_free(s);
}

/* ---- every seapp_contexts under the data dir ---- */

/* Lines starting "neverallow", and the first line with an isV2App= token (Android 8 and 9). */
static void scan_file(const char *path, unsigned *never, unsigned *v2_line)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	unsigned no = 0;

	*never = *v2_line = 0;
	while (f && fgets(line, sizeof(line), f)) {
		no++;
		*never += strncmp(line, "neverallow", 10) == 0;
		if (!*v2_line && line[0] != '#' && strstr(line, " isV2App="))
			*v2_line = no;
	}
	if (f)
		fclose(f);
}

static int nfound;

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	struct seapp_error err = { 0 };
	seapp_set *s = NULL;
	unsigned v2_line, never;
	int rc;

	if (type != FTW_F || !strstr(path + ftw->base, "seapp_contexts"))
		return 0;
	nfound++;
	rc = seapp_load(&s, &path, 1, &err);
	scan_file(path, &never, &v2_line);
	CHECK(rc == 0 && seapp_count(s) > 0 && seapp_neverallow_count(s) == never,
	      "%s: loads, %zu rules, %u neverallow skipped%s (%s:%u: %s)", path,
	      rc ? 0 : seapp_count(s), never, v2_line ? ", isV2App read" : "", err.file, err.line,
	      err.msg);
	if (!rc)
		seapp_free(s);
	return 0;
}

static bool have_data(void)
{
	struct stat st;
	return stat(data, &st) == 0 && S_ISDIR(st.st_mode);
}

static void test_real_files(void)
{
	if (!have_data()) {
		SKIP("real seapp_contexts: %s is absent", data);
		return;
	}
	nfound = 0;
	nftw(data, visit, 16, FTW_PHYS);
	CHECK(nfound > 0, "found %d seapp_contexts files under %s", nfound, data);
}

static void test_real_sets(void)
{
	char img[4096];
	const char *files[4];
	struct seapp_error err = { 0 };
	seapp_set *s = NULL;
	int rc;

	if (!have_data()) {
		SKIP("Android 14 source and device sets: %s is absent", data);
		return;
	}
	files[0] = path_in(data, "android/android-14.0.0_r50/private_seapp_contexts");
	rc = seapp_load(&s, files, 1, &err);
	CHECK(rc == 0 && seapp_neverallow_count(s) == 18,
	      "android-14.0.0_r50 private_seapp_contexts: 18 neverallow lines skipped (%s)",
	      err.msg);
	if (!rc) {
		check_android14("r50 source", s);
		seapp_free(s);
	}
	snprintf(img, sizeof(img), "%s/images/pixel5_redfin_RD1A.200810.020_android11", data);
	files[0] = path_in(img, "system_system_etc_selinux_plat_seapp_contexts");
	files[1] = path_in(img, "system_ext_etc_selinux_system_ext_seapp_contexts");
	files[2] = path_in(img, "product_etc_selinux_product_seapp_contexts");
	files[3] = path_in(img, "vendor_etc_selinux_vendor_seapp_contexts");
	rc = seapp_load(&s, files, 4, &err);
	CHECK(rc == 0, "pixel 5 plat + system_ext + product + vendor load together (%s:%u: %s)",
	      err.file, err.line, err.msg);
	if (rc)
		return;
	LOOK("pixel 5: vendor app by name", s, 10300, "platform:targetSdkVersion=30",
	     "com.android.pixellogger", "app_data_file:s0:c44,c257,c512,c768");
	LOOK("pixel 5: product app", s, 10301, "platform:privapp:targetSdkVersion=30",
	     "com.google.android.hiddenmenu", "app_data_file:s0:c45,c257,c512,c768");
	LOOK("pixel 5: plain app", s, 10170, "default:targetSdkVersion=30", "x",
	     "app_data_file:s0:c170,c256,c512,c768");
	seapp_free(s);
}

/* ---- packages.list ---- */

static pkg_list *pl_ok(const char *what, const char *text)
{
	struct seapp_error err = { 0 };
	pkg_list *l = NULL;
	int rc = pkglist_parse(&l, "packages.list", text, strlen(text), &err);

	CHECK(rc == 0, "%s: parses (%s:%u: %s)", what, err.file, err.line, err.msg);
	return rc ? NULL : l;
}

static void pl_bad(const char *what, const char *text, size_t len, unsigned line, const char *part)
{
	struct seapp_error err = { 0 };
	pkg_list *l = (pkg_list *)&err;
	int rc = pkglist_parse(&l, "packages.list", text, len == (size_t)-1 ? strlen(text) : len,
			       &err);

	CHECK(rc == EINVAL && err.line == line && strstr(err.msg, part) &&
		      strcmp(err.file, "packages.list") == 0 && l == (pkg_list *)&err,
	      "%s: refused at line %u (got rc %d, %s:%u: %s)", what, line, rc, err.file, err.line,
	      err.msg);
	if (!rc && l != (pkg_list *)&err)
		pkglist_free(l);
}

#define STR  ((size_t)-1)
#define GOOD "com.a 10170 0 /data/user/0/com.a default:targetSdkVersion=34 none\n"

static void test_pkglist(void)
{
	const struct pkg_entry *e;
	struct seapp_error err = { 0 };
	pkg_list *l =
		pl_ok("six to ten fields, tabs, CR",
		      "com.a 10170 0 /data/user/0/com.a default:targetSdkVersion=34 3003 0 57 1 "
		      "com.android.vending\n"
		      "com.b\t1000  1 /data/user_de/0/com.b platform:privapp none\r\n"
		      "com.c 10014 0 /data/user/0/com.c platform:privapp:targetSdkVersion=19 "
		      "1,,2 junk more fields\n"
		      "com.d 10015 -3 /d s 4294967295\n"
		      "com.a 10999 0 /data/user/0/com.a default:targetSdkVersion=35 none\n"
		      "com.last 4294967295 0 /x y +1,-0");
	if (l) {
		e = pkglist_find(l, "com.a", 5);
		CHECK(e && e->uid == 10999 && e->line == 5 &&
			      strcmp(e->seinfo, "default:targetSdkVersion=35") == 0,
		      "a repeated name: the last line wins");
		e = pkglist_find(l, "com.b", 5);
		CHECK(e && e->uid == 1000 && e->debuggable &&
			      strcmp(e->seinfo, "platform:privapp") == 0 &&
			      strcmp(e->data_dir, "/data/user_de/0/com.b") == 0 && e->line == 2,
		      "fields: uid, debuggable, data dir, seinfo, line");
		e = pkglist_find(l, "com.c", 5);
		CHECK(e && !e->debuggable, "an empty gid piece reads as 0; later fields ignored");
		e = pkglist_find(l, "com.d", 5);
		CHECK(e && e->debuggable, "debuggable is any int, != 0");
		e = pkglist_find(l, "com.last", 8);
		CHECK(e && e->uid == 4294967295u, "last line without a newline; uid UID_MAX");
		CHECK(!pkglist_find(l, "COM.A", 5) && !pkglist_find(l, "com.", 4) &&
			      !pkglist_find(l, "com.ab", 6),
		      "lookup is exact and case-sensitive");
		CHECK(pkglist_find(l, "com.a/files", 5) != NULL, "name given by length");
		CHECK(pkglist_count(l) == 5, "distinct names counted (%zu)", pkglist_count(l));
		pkglist_free(l);
	}
	pl_bad("five fields", GOOD "com.b 10001 0 /data/user/0/com.b default\n", STR, 2,
	       "5 fields");
	pl_bad("blank line", GOOD "\n" GOOD, STR, 2, "blank");
	pl_bad("blank last line", GOOD "  \n", STR, 2, "blank");
	pl_bad("uid abc", "com.b abc 0 /d s none\n", STR, 1, "uid");
	pl_bad("uid -1", "com.b -1 0 /d s none\n", STR, 1, "uid");
	pl_bad("uid +1", "com.b +1 0 /d s none\n", STR, 1, "uid");
	pl_bad("uid 4294967296", "com.b 4294967296 0 /d s none\n", STR, 1, "uid");
	pl_bad("uid 10170x", "com.b 10170x 0 /d s none\n", STR, 1, "uid");
	pl_bad("debuggable x", "com.b 1 x /d s none\n", STR, 1, "debuggable");
	pl_bad("gids 1,x", "com.b 1 0 /d s 1,x\n", STR, 1, "gids");
	pl_bad("gids 4294967296", "com.b 1 0 /d s 3003,4294967296\n", STR, 1, "gids");
	pl_bad("gids -1", "com.b 1 0 /d s -1\n", STR, 1, "gids");
	pl_bad("gids None", "com.b 1 0 /d s None\n", STR, 1, "gids");
	/* strtoul finds no digits in "+,": no conversion, so end is at the '+'. */
	pl_bad("gids +,5", "com.b 1 0 /d s +,5\n", STR, 1, "gids");
	pl_bad("NUL byte", "com.b 1 0 /d s none\n\0\n", 22, 2, "NUL");
	{
		pkg_list *e0 = pl_ok("empty file", "");
		CHECK(e0 && pkglist_count(e0) == 0 && !pkglist_find(e0, "x", 1), "empty list");
		pkglist_free(e0);
	}
	l = NULL;
	CHECK(pkglist_load(&l, path_in(fixtures, "packages.list"), &err) == 0 &&
		      pkglist_count(l) == 7,
	      "fixture packages.list loads (%s:%u: %s)", err.file, err.line, err.msg);
	pkglist_free(l);
	CHECK(pkglist_load(&l, path_in(dir, "no-such-file"), &err) == ENOENT && err.line == 0 &&
		      strstr(err.msg, "cannot open"),
	      "a missing file: ENOENT");
}

static void test_pkglist_big(void)
{
	size_t n = 100000, len = 0;
	char *buf = malloc(n * 64);
	struct seapp_error err = { 0 };
	pkg_list *l = NULL;
	size_t found = 0;
	char name[32];

	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(buf + len, "pkg.%zu %zu 0 /d default none\n", i,
				       10000 + i % 9000);
	CHECK(pkglist_parse(&l, "big", buf, len, &err) == 0 && pkglist_count(l) == n,
	      "100000 packages parse");
	for (size_t i = 0; l && i < n; i++) {
		int k = snprintf(name, sizeof(name), "pkg.%zu", i);
		const struct pkg_entry *e = pkglist_find(l, name, (size_t)k);
		found += e && e->uid == 10000 + i % 9000;
	}
	CHECK(found == n, "...and are all found");
	pkglist_free(l);
	free(buf);
}

static void test_lookup_pkg(void)
{
	const char *f = path_in(fixtures, "plat_seapp_contexts");
	struct seapp_error err = { 0 };
	struct seapp_answer a;
	seapp_set *s = NULL;
	pkg_list *l = NULL;
	const struct pkg_entry *e;

	if (seapp_load(&s, &f, 1, &err) ||
	    pkglist_load(&l, path_in(fixtures, "packages.list"), &err)) {
		CHECK(0, "fixtures load (%s)", err.msg);
		seapp_free(s);
		return;
	}
	e = pkglist_find(l, "com.example.app", 15);
	CHECK(e && seapp_lookup_pkg(s, e, 10, &a) == 0 && a.found &&
		      strcmp(seapp_answer_level(&a), "s0:c170,c256,c522,c768") == 0,
	      "seapp_lookup_pkg: uid = app id + user * 100000");
	e = pkglist_find(l, "com.android.settings", 20);
	CHECK(e && seapp_lookup_pkg(s, e, 0, &a) == 0 && a.found &&
		      strcmp(a.type, "system_app_data_file") == 0 && !seapp_answer_level(&a),
	      "settings (uid 1000): system_app_data_file, fc range kept");
	seapp_free(s);
	pkglist_free(l);
}

/* ---- paths ---- */

struct pcase {
	const char *path;
	bool app_data, has_pkg, sandbox;
	unsigned user;
	const char *pkg;
	size_t pkgdir_len;
};

#define UUID "0123abcd-0000-1111-2222-33334444aaaa"

static void test_paths(void)
{
	static const struct pcase cases[] = {
		{ "/data/data", false, false, false, 0, NULL, 0 },
		{ "/data/data/", true, false, false, 0, NULL, 0 },
		{ "/data/data/com.a", true, true, false, 0, "com.a", 16 },
		{ "/data/data/com.a/files/x", true, true, false, 0, "com.a", 16 },
		{ "/data/user", false, false, false, 0, NULL, 0 },
		{ "/data/user/0", true, false, false, 0, NULL, 0 },
		{ "/data/user/10", true, false, false, 0, NULL, 0 },
		{ "/data/user/0/com.a", true, true, false, 0, "com.a", 18 },
		{ "/data/user/10/com.a/cache", true, true, false, 10, "com.a", 19 },
		{ "/data/user/1000/p", true, true, false, 1000, "p", 17 },
		{ "/data/user/1001/x", true, false, false, 0, NULL, 0 },
		{ "/data/user/abc/p", true, false, false, 0, NULL, 0 },
		{ "/data/user/0x/p", true, false, false, 0, NULL, 0 },
		/* strtoul takes a sign; and its 64-bit result is cut to an unsigned int. */
		{ "/data/user/+5/p", true, true, false, 5, "p", 15 },
		{ "/data/user/-0/p", true, true, false, 0, "p", 15 },
		{ "/data/user/4294967296/p", true, true, false, 0, "p", 23 },
		{ "/data/user/99999999999999999999/p", true, false, false, 0, NULL, 0 },
		{ "/data/userx/0/p", false, false, false, 0, NULL, 0 },
		{ "/data/user_de/0", true, false, false, 0, NULL, 0 },
		{ "/data/user_de/0/com.a", true, true, false, 0, "com.a", 21 },
		{ "/data/user_de/11/com.a/f", true, true, false, 11, "com.a", 22 },
		{ "/mnt/expand/" UUID "/user", true, false, false, 0, NULL, 0 },
		{ "/mnt/expand/" UUID "/user/10", true, false, false, 0, NULL, 0 },
		{ "/mnt/expand/" UUID "/user/10/pkg/f", true, true, false, 10, "pkg", 60 },
		{ "/mnt/expand/" UUID "/user_de/0/pkg", true, true, false, 0, "pkg", 62 },
		{ "/mnt/expand/" UUID "/userx/0/pkg", false, false, false, 0, NULL, 0 },
		{ "/mnt/expand/0123abcd-0000-1111-2222-33334444aaa/user/0/p", false, false, false,
		  0, NULL, 0 },
		{ "/mnt/expand/0123abcd_0000-1111-2222-33334444aaaa/user/0/p", false, false, false,
		  0, NULL, 0 },
		{ "/data/misc_de/0/sdksandbox", true, false, false, 0, NULL, 0 },
		{ "/data/misc_de/0/sdksandbox/com.a", true, true, true, 0, "com.a", 32 },
		{ "/data/misc_de/0/sdksandbox/com.a/shared", true, true, true, 0, "com.a", 32 },
		{ "/data/misc_ce/10/sdksandbox/com.a/x", true, true, true, 10, "com.a", 33 },
		{ "/data/misc_ce/x/sdksandbox/com.a", true, false, false, 0, NULL, 0 },
		{ "/data/misc_ce/0/sdksandboxx/com.a", false, false, false, 0, NULL, 0 },
		{ "/data/misc_ce/0/other/com.a", false, false, false, 0, NULL, 0 },
		{ "/data/misc_ce/0", false, false, false, 0, NULL, 0 },
		{ "/mnt/expand/" UUID "/misc_ce/0/sdksandbox", true, false, false, 0, NULL, 0 },
		{ "/mnt/expand/" UUID "/misc_de/7/sdksandbox/p/q", true, true, true, 7, "p", 71 },
		{ "/mnt/expand/0123abcd-0000-1111-2222x33334444aaaa/user/0/p", false, false, false,
		  0, NULL, 0 },
		{ "/mnt/expand/0123abcd-0000-1111-2222-3333/444aaaa/user/0/p", false, false, false,
		  0, NULL, 0 },
		{ "/mnt/expand/.123abcd-0000-1111-2222-33334444aaaa/user/0/p", true, true, false, 0,
		  "p", 57 },
		/* strtoul also skips leading white space. */
		{ "/data/user/ 5/p", true, true, false, 5, "p", 15 },
		{ "/data/media/0", false, false, false, 0, NULL, 0 },
		{ "/data", false, false, false, 0, NULL, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct pcase *c = &cases[i];
		struct seapp_path p;
		bool ok;
		seapp_path_classify(c->path, strlen(c->path), &p);
		ok = p.app_data == c->app_data && p.has_pkg == c->has_pkg;
		if (ok && c->has_pkg)
			ok = p.sdk_sandbox == c->sandbox && p.user == c->user &&
			     p.pkg_len == strlen(c->pkg) && memcmp(p.pkg, c->pkg, p.pkg_len) == 0 &&
			     p.pkgdir_len == c->pkgdir_len;
		CHECK(ok,
		      "path %s: app_data %d pkg %s user %u sandbox %d prefix %zu (got %d %.*s "
		      "%u %d %zu)",
		      c->path, c->app_data, c->has_pkg ? c->pkg : "-", c->user, c->sandbox,
		      c->pkgdir_len, p.app_data, p.has_pkg ? (int)p.pkg_len : 1,
		      p.has_pkg ? p.pkg : "-", p.user, p.sdk_sandbox, p.pkgdir_len);
	}
	{
		/* Not NUL-terminated: only len counts. */
		struct seapp_path p;
		seapp_path_classify("/data/data/com.a/files", 16, &p);
		CHECK(p.has_pkg && p.pkgdir_len == 16, "the path is taken by its length");
	}
}

static void test_init_walk(void)
{
	enum { L = SEAPP_INIT_LABELS, D = SEAPP_INIT_DIGESTS, W = SEAPP_INIT_DESCENDS };
	static const struct {
		const char *path;
		bool dir;
		unsigned want;
	} cases[] = {
		{ "/data", true, L | D | W },
		{ "/data/data", true, L | D | W },
		{ "/data/data/com.a", true, L | D },
		{ "/data/user", true, L | D | W },
		{ "/data/user/0", true, L | D },
		{ "/data/user_de/10", true, L | D },
		{ "/data/user/0", false, L },
		{ "/data/misc/profiles/cur", true, L | D | W },
		{ "/data/misc/profiles/cur/0", true, W },
		{ "/data/misc/profiles/cur/0", false, L },
		{ "/data/misc/profiles/cur/0/com.a", true, L | D | W },
		{ "/data/misc/profiles/ref/com.a", true, L | D | W },
		{ "/data/system_ce", true, L | D },
		{ "/data/system_ce/0", true, L | D },
		{ "/data/misc_ce", true, L | D },
		{ "/data/misc_ce_x", true, L | D },
		{ "/data/vendor_ce/0", true, L | D },
		{ "/data/vendor_de/0", true, L | D | W },
		{ "/data/misc_de/0", true, L | D | W },
		{ "/data/misc_de/0/sdksandbox", true, L | D },
		{ "/mnt/expand/" UUID "/user", true, L | D },
		{ "/data/media/0", true, L | D | W },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned got =
			seapp_init_walk(cases[i].path, strlen(cases[i].path), cases[i].dir, 0);
		CHECK(got == cases[i].want, "init walk %s%s: %#x (got %#x)", cases[i].path,
		      cases[i].dir ? "/" : "", cases[i].want, got);
	}
	/* release_selinux_data_data_ignore: /data/data is labeled and digested, not entered */
	CHECK(seapp_init_walk("/data/data", 10, true, SEAPP_BUILD_DATA_DATA_IGNORE) == (L | D),
	      "init walk /data/data/ with data_data_ignore");
	CHECK(seapp_init_walk("/data/datax", 11, true, SEAPP_BUILD_DATA_DATA_IGNORE) == (L | D | W),
	      "init walk /data/datax/ with data_data_ignore");
	CHECK(seapp_init_walk("/data/user", 10, true, SEAPP_BUILD_DATA_DATA_IGNORE) == (L | D | W),
	      "init walk /data/user/ with data_data_ignore");

	static const struct {
		const char *path;
		bool dir;
		unsigned want;
	} vold[] = {
		{ "/data/system_ce", true, 0 },
		{ "/data/system_ce/0", true, L | D | W },
		{ "/data/system_ce/0", false, L },
		{ "/data/system_ce/10/backup", true, L | D | W },
		{ "/data/system_ce/10/backup/x", false, L },
		{ "/data/vendor_ce/0/facedata", true, L | D | W },
		{ "/data/misc_ce/0", true, L | D | W },
		{ "/data/misc_ce/0/sdksandbox", true, L | D },
		{ "/data/misc_ce/0/sdksandbox/com.a", true, 0 },
		{ "/data/misc_ce/0/sdksandbox/com.a/shared", false, 0 },
		{ "/data/misc_ce/0/sdksandboxx", true, L | D | W },
		{ "/data/misc_de/0", true, 0 },
		{ "/data/misc_ce_x/0", true, 0 },
		{ "/data/user/0", true, 0 },
	};
	for (size_t i = 0; i < sizeof(vold) / sizeof(vold[0]); i++) {
		unsigned got = seapp_vold_walk(vold[i].path, strlen(vold[i].path), vold[i].dir);
		CHECK(got == vold[i].want, "vold walk %s%s: %#x (got %#x)", vold[i].path,
		      vold[i].dir ? "/" : "", vold[i].want, got);
	}
}

/* ---- the device's walks of /data (walks.c) ---- */

/* ANDROID_WALK_* bits, written as letters: Init, Vold, Lazy (installd's check of a package
 * directory), Tree (installd's walk below it), Pass, Sandbox, pRofile, None. */
static unsigned walk_bits(const char *s)
{
	static const char letters[] = "IVLTPSRN";
	unsigned b = 0;
	for (; *s; s++)
		b |= 1u << (strchr(letters, *s) - letters);
	return b;
}

static const char *walk_letters(unsigned b, char buf[16])
{
	static const char letters[] = "IVLTPSRN";
	char *p = buf;
	for (int i = 0; i < 8; i++)
		if (b & (1u << i))
			*p++ = letters[i];
	*p = 0;
	return buf;
}

/* p is below the directory top. */
static bool path_below(const char *p, const char *top)
{
	size_t n = strlen(top);
	return !strncmp(p, top, n) && p[n] == '/';
}

struct walk_row {
	const char *path;
	/* 'd' or 'f'; then, for a directory, its security.sehash: '=' the policy's, '-' missing
	 * or stale; 'r': installd finds the package directory's own label wrong (or its
	 * user.restorecon_in_progress); 'b': (on /data) a build with
	 * release_selinux_data_data_ignore */
	const char *has;
	/* the walks that reach it ("x": none gets there, the directory above not being entered) */
	const char *reach;
	/* c: a walk compares its digest, m: ... and finds it equal, l: a walk labels it,
	 * d: a walk writes its digest */
	const char *does;
	const char *below; /* what a directory hands down ("": none enters it) */
};

struct digest_q {
	const struct walk_row *row;
	unsigned asked;
};

static bool row_digest(void *arg)
{
	struct digest_q *q = arg;
	q->asked++;
	return strchr(q->row->has, '=') != NULL;
}

/*
 * The device's walks down a /data, the rows in walk order (depth first), each walk starting at a
 * row "/data": what reaches each entry, what is done there, what goes on below, and where a
 * digest is written (android_walk_digests, as init's and vold's walks go). Expectations from
 * reading Android 14/15: selinux_android_restorecon_common (init's --skip-ce walk, its digests,
 * is_app_data_path, USER_PROFILE_PATH), vold's restorecon of /data/{system,vendor,misc}_ce/N,
 * installd's restorecon_app_data_lazy and its profile restorecon.
 */
static void test_device_walks(void)
{
	static const struct walk_row rows[] = {
		/* a device's first boot after an offline label: digests missing but where said */
		{ "/data", "d-", "I", "cld", "I" },
		{ "/data/system", "d-", "I", "cld", "I" },
		{ "/data/system/packages.list", "f", "I", "l", "" },
		/* a matching digest: not labeled, nothing below it looked at */
		{ "/data/local", "d=", "I", "cm", "" },
		{ "/data/local/tmp", "d-", "x", "", "" },
		{ "/data/data", "d-", "I", "cld", "I" },
		/* app data: init labels and digests the package directory, does not enter it;
		 * installd relabels what is below only when the directory's label was wrong */
		{ "/data/data/com.example.app", "d-r", "IL", "cld", "T" },
		{ "/data/data/com.example.app/files", "d-", "T", "l", "T" },
		{ "/data/data/com.example.app/files/a", "f", "T", "l", "" },
		{ "/data/data/com.example.old", "d-", "IL", "cld", "" },
		{ "/data/data/com.example.old/files", "d-", "x", "", "" },
		{ "/data/user", "d-", "I", "cld", "I" },
		/* an app data directory without a package: init stops; installd's walks start below */
		{ "/data/user/10", "d-", "I", "cld", "P" },
		{ "/data/user/10/com.example.app", "d-", "L", "l", "" },
		{ "/data/user/10/com.example.app/files", "d-", "x", "", "" },
		{ "/data/user_de", "d-", "I", "cld", "I" },
		/* init's digest matches: installd checks the packages below all the same */
		{ "/data/user_de/0", "d=", "I", "cm", "P" },
		{ "/data/user_de/0/com.example.app", "d-r", "L", "l", "T" },
		{ "/data/user_de/0/com.example.app/d", "f", "T", "l", "" },
		/* installd's profile directories: labeled whatever the digests above say, for a
		 * package packages.list knows */
		{ "/data/misc", "d=", "I", "cm", "P" },
		{ "/data/misc/profiles", "d-", "", "", "P" },
		{ "/data/misc/profiles/cur", "d-", "", "", "P" },
		{ "/data/misc/profiles/cur/0", "d-", "", "", "P" },
		{ "/data/misc/profiles/cur/0/com.example.app", "d-", "R", "l", "" },
		{ "/data/misc/profiles/cur/0/com.example.app/primary.prof", "f", "x", "", "" },
		{ "/data/misc/profiles/cur/0/com.example.gone", "d-", "", "", "" },
		/* --skip-ce: init labels and digests the CE tops, vold walks each user's at unlock
		 * and digests every directory it walks, SDK sandbox data but for what is below */
		{ "/data/misc_ce", "d-", "I", "cld", "P" },
		{ "/data/misc_ce/0", "d-", "V", "cld", "V" },
		{ "/data/misc_ce/0/sdksandbox", "d-", "V", "cld", "P" },
		/* installd makes an SDK's package directory without labeling it; each SDK's
		 * directory below is a package directory of its own */
		{ "/data/misc_ce/0/sdksandbox/com.example.app", "d-", "S", "", "S" },
		{ "/data/misc_ce/0/sdksandbox/com.example.app/sdk1", "d-", "L", "l", "" },
		{ "/data/system_ce", "d-", "I", "cld", "P" },
		{ "/data/system_ce/0", "d=", "V", "cm", "" },
		{ "/data/system_ce/0/backup", "d-", "x", "", "" },
		{ "/data/vendor_ce", "d-", "I", "cld", "P" },
		{ "/data/vendor_ce/0", "d-", "V", "cld", "V" },
		{ "/data/vendor_ce/0/facedata", "d-", "V", "cld", "V" },
		{ "/data/vendor_ce/0/facedata/f", "f", "V", "l", "" },

		/* another device: release_selinux_data_data_ignore, /data/misc's digest stale */
		{ "/data", "d-b", "I", "cld", "I" },
		{ "/data/data", "d-", "I", "cld", "P" },
		{ "/data/data/com.example.app", "d-", "L", "l", "" },
		{ "/data/misc", "d-", "I", "cld", "I" },
		{ "/data/misc/profiles", "d-", "I", "cld", "I" },
		{ "/data/misc/profiles/cur", "d-", "I", "cld", "I" },
		/* USER_PROFILE_PATH: "vold takes care of that": entered, no label, no digest */
		{ "/data/misc/profiles/cur/0", "d-", "I", "", "I" },
		{ "/data/misc/profiles/cur/0/com.example.app", "d-", "IR", "cld", "I" },
		{ "/data/misc/profiles/cur/0/com.example.app/primary.prof", "f", "I", "l", "" },
	};
	struct frame {
		const char *path;
		size_t len;
		unsigned below;
		bool init_enters;
	} stack[16];
	size_t n = 0;
	unsigned build = 0;
	pkg_list *pkgs = pl_ok("walks: packages.list",
			       "com.example.app 10170 0 /data/user/0/com.example.app "
			       "default:targetSdkVersion=34 3003\n"
			       "com.example.old 10100 0 /data/user/0/com.example.old "
			       "default:targetSdkVersion=29 none\n");

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct walk_row *r = &rows[i];
		size_t len = strlen(r->path);
		bool isdir = r->has[0] == 'd', root = !strcmp(r->path, "/data");
		char got[8] = "", gr[16], gb[16] = "";

		if (root) {
			n = 0;
			build = strchr(r->has, 'b') ? SEAPP_BUILD_DATA_DATA_IGNORE : 0;
		}
		while (n && !(len > stack[n - 1].len && path_below(r->path, stack[n - 1].path)))
			n--;
		if (!root && (!n || !stack[n - 1].below)) {
			CHECK(!strcmp(r->reach, "x"), "walks %s%s: not reached (expected: %s)",
			      r->path, isdir ? "/" : "", r->reach);
			if (isdir && n < 16)
				stack[n++] = (struct frame){ r->path, len, 0, false };
			continue;
		}
		struct digest_q q = { r, 0 };
		struct android_walk_at at = {
			.path = r->path, .len = len, .is_dir = isdir, .root = root,
			.from = root ? 0 : stack[n - 1].below, .build = build, .pkgs = pkgs,
			.digest_matches = row_digest, .arg = &q,
		};
		struct android_walk w;
		struct android_digests dg = { 0 };
		android_walk_visit(&at, &w);
		android_walk_digests(r->path, len, !root && stack[n - 1].init_enters, build, &dg);
		bool digested = isdir && ((w.boot && dg.init_digests) || (w.vold && dg.vold_digests));
		unsigned below = isdir ? android_walk_below(&w, r->path, len, strchr(r->has, 'r'))
				     : 0;
		snprintf(got, sizeof(got), "%s%s%s%s", w.digest ? "c" : "", w.matched ? "m" : "",
			 w.labels ? "l" : "", digested ? "d" : "");
		if (isdir)
			walk_letters(below, gb);
		CHECK(walk_bits(r->reach) == w.reach && !strcmp(got, r->does) &&
			      q.asked == (w.digest ? 1u : 0u) && !strcmp(gb, r->below),
		      "walks %s%s: reached by %s, %s, hands down %s (got %s, %s, %s)", r->path,
		      isdir ? "/" : "", r->reach[0] ? r->reach : "none", r->does[0] ? r->does : "-",
		      r->below[0] ? r->below : "none",
		      w.reach ? walk_letters(w.reach, gr) : "none", got[0] ? got : "-",
		      gb[0] ? gb : "none");
		if (isdir && n < 16)
			stack[n++] = (struct frame){ r->path, len, below, dg.init_enters };
	}

	/* a check's shadow of the walks follows them below what they do not enter */
	struct android_walk w;
	struct android_walk_at at = { .path = "/data/local/tmp", .len = 15, .is_dir = true,
				      .from = ANDROID_WALK_NONE, .pkgs = pkgs };
	android_walk_visit(&at, &w);
	CHECK(w.reach == ANDROID_WALK_NONE && !w.labels &&
		      android_walk_below(&w, at.path, at.len, true) == ANDROID_WALK_NONE,
	      "walks: below what none enters, none goes");
	/* no digest looked at (--ignore-digests): init labels what it reaches */
	at = (struct android_walk_at){ .path = "/data/local", .len = 11, .is_dir = true,
				       .from = ANDROID_WALK_INIT };
	android_walk_visit(&at, &w);
	CHECK(!w.digest && !w.matched && w.boot && w.labels &&
		      android_walk_below(&w, at.path, at.len, false) == ANDROID_WALK_INIT,
	      "walks: without digests, init labels and enters /data/local");
	pkglist_free(pkgs);

	/* where the walks write digests, each taken whole: path, init's walk entered the
	 * directory above, the build; init visits, enters, digests; vold digests */
	static const struct {
		const char *path;
		bool up;
		unsigned build;
		const char *want; /* v e i o: visits, enters, init digests, vold digests */
	} dig[] = {
		{ "/data", false, 0, "vei" },
		{ "/data/system", true, 0, "vei" },
		{ "/data/system", false, 0, "" },
		{ "/data/data", true, 0, "vei" },
		{ "/data/data", true, SEAPP_BUILD_DATA_DATA_IGNORE, "vi" },
		{ "/data/data/com.a", true, 0, "vi" },
		{ "/data/data/com.a/files", false, 0, "" },
		{ "/data/misc/profiles/cur/0", true, 0, "ve" },
		{ "/data/misc/profiles/cur/0/com.a", true, 0, "vei" },
		{ "/data/system_ce", true, 0, "vi" },
		{ "/data/system_ce/0", false, 0, "o" },
		{ "/data/system_ce/0/backup", false, 0, "o" },
		{ "/data/misc_ce/0/sdksandbox", false, 0, "o" },
		{ "/data/misc_ce/0/sdksandbox/com.a", false, 0, "" },
		{ "/datax", true, 0, "" },
		{ "/system", true, 0, "" },
		{ "/", false, 0, "" },
	};
	for (size_t i = 0; i < sizeof(dig) / sizeof(dig[0]); i++) {
		struct android_digests d;
		char got[8];
		android_walk_digests(dig[i].path, strlen(dig[i].path), dig[i].up, dig[i].build, &d);
		snprintf(got, sizeof(got), "%s%s%s%s", d.init_visits ? "v" : "",
			 d.init_enters ? "e" : "", d.init_digests ? "i" : "", d.vold_digests ? "o" : "");
		CHECK(!strcmp(got, dig[i].want), "walk digests %s (above %s%s): %s (got %s)",
		      dig[i].path, dig[i].up ? "entered" : "not entered",
		      dig[i].build ? ", data_data_ignore" : "", dig[i].want[0] ? dig[i].want : "-",
		      got[0] ? got : "-");
	}

	/* the directories package directories sit in, and their ancestors (adoptable storage
	 * too): installd's walks start below them */
	static const struct {
		const char *path;
		bool holds;
	} parents[] = {
		{ "/", true },
		{ "/data", true },
		{ "/data/user", true },
		{ "/data/user/10", true },
		{ "/data/user/10/com.a", false },
		{ "/data/misc_de/0/sdksandbox", true },
		{ "/data/misc_de/0/other", false },
		{ "/mnt/expand/" UUID "/user/0", true },
		{ "/mnt/expand/" UUID "/misc_ce/0/sdksandbox", true },
		{ "/mnt/expand/" UUID "/media", false },
		{ "/data/media", false },
	};
	for (size_t i = 0; i < sizeof(parents) / sizeof(parents[0]); i++)
		CHECK(appdata_holds_pkgdirs(parents[i].path, strlen(parents[i].path)) ==
			      parents[i].holds,
		      "holds package directories %s: %d", parents[i].path, parents[i].holds);
}

static void test_build_flags(void)
{
	static const char make14[] =
		"{\n\"flags\": [\n  { \"name\": \"RELEASE_A\", \"value\": \"\", \"set\": \"\", "
		"\"default\": \"\", \"declared\": \"x.scl\" },\n  { \"name\": "
		"\"RELEASE_SELINUX_DATA_DATA_IGNORE\", \"value\": \"true\", \"set\": \"a\", "
		"\"default\": \"\", \"declared\": \"b\" }\n]\n}\n";
	static const char rc15[] =
		"{\"flags\":[{\"flag_declaration\":{\"name\":\"RELEASE_SELINUX_DATA_DATA_IGNORE\","
		"\"namespace\":\"android_UNKNOWN\",\"description\":\"say \\\"value\\\"\",\"value\":"
		"{\"Val\":{\"BoolValue\":false}},\"containers\":[\"system\",\"vendor\"]},"
		"\"value\":{\"Val\":{\"BoolValue\":true}},\"traces\":[{\"source\":\"x\","
		"\"value\":{\"Val\":{\"BoolValue\":false}}}]},{\"flag_declaration\":{\"name\":"
		"\"RELEASE_N\"},\"value\":{\"Val\":{\"Int\":3.5e1}}}]}";
	static const char off15[] =
		"{\"flags\":[{\"flag_declaration\":{\"name\":\"RELEASE_SELINUX_DATA_DATA_IGNORE\","
		"\"value\":{\"Val\":{\"BoolValue\":true}}},\"value\":{\"Val\":{\"BoolValue\":"
		"false}}}]}";
	const char *n = "RELEASE_SELINUX_DATA_DATA_IGNORE";
	bool v = false;

	CHECK(seapp_build_flag(make14, strlen(make14), n, &v) == 0 && v, "make's summary: true");
	CHECK(seapp_build_flag(make14, strlen(make14), "RELEASE_A", &v) == 0 && !v,
	      "make's summary: an empty value is false");
	CHECK(seapp_build_flag(make14, strlen(make14), "RELEASE_B", &v) == ENOENT,
	      "make's summary: a flag not listed");
	v = false;
	CHECK(seapp_build_flag(rc15, strlen(rc15), n, &v) == 0 && v,
	      "the release-config summary: the value, not the declaration's default nor a trace");
	CHECK(seapp_build_flag(off15, strlen(off15), n, &v) == 0 && !v,
	      "the release-config summary: false over a default of true");
	CHECK(seapp_build_flag(rc15, strlen(rc15) - 1, n, &v) == EINVAL, "cut short: not JSON");
	CHECK(seapp_build_flag("{\"flags\": 3}", 12, n, &v) == ENOENT, "no list: not listed");
	CHECK(seapp_build_flag("[]", 2, n, &v) == EINVAL, "not an object");
	char deep[200];
	memset(deep, '[', sizeof(deep));
	memcpy(deep, "{\"x\":", 5);
	CHECK(seapp_build_flag(deep, sizeof(deep), n, &v) == EINVAL, "nesting is bounded");
}

/* ---- threads ---- */

struct job {
	const seapp_set *set;
	const pkg_list *list;
	int mismatches;
};

static const char *const thread_pkgs[] = { "com.example.app",	   "com.android.settings",
					   "com.android.shell",	   "com.google.android.gms",
					   "com.android.systemui", "com.test.a0",
					   "com.test.old" };

static void answer_for(const struct job *j, size_t i, unsigned user, struct seapp_answer *a)
{
	const struct pkg_entry *e = pkglist_find(j->list, thread_pkgs[i], strlen(thread_pkgs[i]));
	memset(a, 0, sizeof(*a));
	if (e)
		seapp_lookup_pkg(j->set, e, user, a);
}

static void *worker(void *arg)
{
	struct job *j = arg;
	struct seapp_answer a, b;
	size_t n = sizeof(thread_pkgs) / sizeof(thread_pkgs[0]);

	for (int round = 0; round < 2000; round++) {
		for (size_t i = 0; i < n; i++) {
			answer_for(j, i, (unsigned)round % 3, &a);
			answer_for(j, (i + 1) % n, 0, &b);
			answer_for(j, i, (unsigned)round % 3, &b);
			j->mismatches += !seapp_answer_equal(&a, &b);
		}
	}
	return NULL;
}

static void test_threads(void)
{
	const char *f = path_in(fixtures, "plat_seapp_contexts");
	struct seapp_error err = { 0 };
	seapp_set *s = NULL;
	pkg_list *l = NULL;
	pthread_t t[4];
	struct job jobs[4];
	int bad = 0;

	if (seapp_load(&s, &f, 1, &err) ||
	    pkglist_load(&l, path_in(fixtures, "packages.list"), &err)) {
		CHECK(0, "threads: fixtures load (%s)", err.msg);
		seapp_free(s);
		return;
	}
	for (int i = 0; i < 4; i++) {
		jobs[i] = (struct job){ s, l, 0 };
		pthread_create(&t[i], NULL, worker, &jobs[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		bad += jobs[i].mismatches;
	}
	CHECK(bad == 0, "4 threads share one set and list (%d mismatches)", bad);
	seapp_free(s);
	pkglist_free(l);
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return remove(path);
}

/* ---- which files a device loads (seapp_find_policy): a fake device, a list of paths ---- */

struct fakedev {
	const char *const *have; /* NULL-terminated */
	const char *fail;        /* this path's lookup fails with EIO */
	unsigned asked;
	const char *order[64];   /* every path asked, in order */
};

static int fake_exists(void *arg, const char *path)
{
	struct fakedev *d = arg;
	if (d->asked < 64)
		d->order[d->asked] = path;
	d->asked++;
	if (d->fail && !strcmp(path, d->fail))
		return -EIO;
	for (size_t i = 0; d->have[i]; i++)
		if (!strcmp(d->have[i], path))
			return 1;
	return 0;
}

/* "part=path part=path ..." of a result's fc (or seapp) list */
static const char *policy_str(const struct seapp_policy *p, bool seapp)
{
	static char bufs[2][2048];
	static int slot;
	char *buf = bufs[slot++ % 2];
	size_t n = seapp ? p->nseapp : p->nfc, k = 0;
	buf[0] = 0;
	for (size_t i = 0; i < n; i++) {
		const struct seapp_policy_file *f = seapp ? &p->seapp[i] : &p->fc[i];
		k += (size_t)snprintf(buf + k, sizeof(bufs[0]) - k, "%s%s=%s", i ? " " : "", f->part, f->path);
	}
	return buf;
}

static void test_find_policy(void)
{
	struct seapp_policy p;
	int rc;

	/* Android 10 and later: a file in each partition's etc/selinux, taken in the device's order;
	 * the root file system's copies (a recovery's) are not looked at once those exist */
	const char *const a10[] = {
		"/odm/etc/selinux/odm_file_contexts", "/vendor/etc/selinux/vendor_file_contexts",
		"/product/etc/selinux/product_file_contexts", "/plat_file_contexts",
		"/system_ext/etc/selinux/system_ext_file_contexts",
		"/system/etc/selinux/plat_file_contexts", "/system/etc/selinux/plat_seapp_contexts",
		"/vendor/etc/selinux/vendor_seapp_contexts", "/vendor_seapp_contexts",
		"/product/etc/selinux/product_seapp_contexts", NULL };
	struct fakedev d = { .have = a10 };
	rc = seapp_find_policy(fake_exists, &d, true, &p);
	CHECK(!rc && p.layout == SEAPP_LAYOUT_TREBLE &&
	      !strcmp(policy_str(&p, false),
		      "plat=/system/etc/selinux/plat_file_contexts "
		      "system_ext=/system_ext/etc/selinux/system_ext_file_contexts "
		      "product=/product/etc/selinux/product_file_contexts "
		      "vendor=/vendor/etc/selinux/vendor_file_contexts "
		      "odm=/odm/etc/selinux/odm_file_contexts"),
	      "find_policy: Android 10+: %s", policy_str(&p, false));
	CHECK(!strcmp(policy_str(&p, true),
		      "plat=/system/etc/selinux/plat_seapp_contexts "
		      "product=/product/etc/selinux/product_seapp_contexts "
		      "vendor=/vendor/etc/selinux/vendor_seapp_contexts"),
	      "find_policy: Android 10+ seapp_contexts: %s", policy_str(&p, true));
	/* the order of the questions is libselinux's: each part's paths in turn */
	CHECK(d.asked >= 2 && !strcmp(d.order[0], "/system/etc/selinux/plat_file_contexts") &&
	      !strcmp(d.order[1], "/system_ext/etc/selinux/system_ext_file_contexts"),
	      "find_policy: asks plat first, then system_ext (%s, %s)", d.order[0], d.order[1]);
	d = (struct fakedev){ .have = a10 };
	rc = seapp_find_policy(fake_exists, &d, false, &p);
	CHECK(!rc && p.nseapp == 0, "find_policy: seapp_contexts only when asked for");

	/* Android 8.0: plat_ and nonplat_; a root file system's pair (8.x ramdisk, a recovery) */
	const char *const a80[] = { "/system/etc/selinux/plat_file_contexts",
				    "/vendor/etc/selinux/nonplat_file_contexts",
				    "/system/etc/selinux/plat_seapp_contexts",
				    "/vendor/etc/selinux/nonplat_seapp_contexts", NULL };
	d = (struct fakedev){ .have = a80 };
	rc = seapp_find_policy(fake_exists, &d, true, &p);
	CHECK(!rc && !strcmp(policy_str(&p, false), "plat=/system/etc/selinux/plat_file_contexts "
						    "vendor=/vendor/etc/selinux/nonplat_file_contexts") &&
	      !strcmp(policy_str(&p, true), "plat=/system/etc/selinux/plat_seapp_contexts "
					    "vendor=/vendor/etc/selinux/nonplat_seapp_contexts"),
	      "find_policy: Android 8.0 nonplat_: %s", policy_str(&p, false));
	const char *const rootfs[] = { "/plat_file_contexts", "/nonplat_file_contexts", NULL };
	d = (struct fakedev){ .have = rootfs };
	rc = seapp_find_policy(fake_exists, &d, false, &p);
	CHECK(!rc && p.layout == SEAPP_LAYOUT_ROOTFS &&
	      !strcmp(policy_str(&p, false), "plat=/plat_file_contexts "
					     "vendor=/nonplat_file_contexts"),
	      "find_policy: root file system: %s", policy_str(&p, false));
	/* the vendor part's four names, in libselinux's order */
	const char *const nonplat[] = { "/plat_file_contexts", "/nonplat_file_contexts",
					"/vendor/etc/selinux/nonplat_file_contexts", NULL };
	d = (struct fakedev){ .have = nonplat };
	rc = seapp_find_policy(fake_exists, &d, false, &p);
	CHECK(!rc && !strcmp(policy_str(&p, false), "plat=/plat_file_contexts "
						    "vendor=/vendor/etc/selinux/nonplat_file_contexts"),
	      "find_policy: /vendor/etc/selinux before the root file system: %s", policy_str(&p, false));
	const char *const vendorfirst[] = { "/plat_file_contexts", "/nonplat_file_contexts",
					    "/vendor_file_contexts", NULL };
	d = (struct fakedev){ .have = vendorfirst };
	rc = seapp_find_policy(fake_exists, &d, false, &p);
	CHECK(!rc && !strcmp(policy_str(&p, false), "plat=/plat_file_contexts "
						    "vendor=/vendor_file_contexts"),
	      "find_policy: vendor_ before nonplat_: %s", policy_str(&p, false));
	/* a root file system without vendor: not Treble's layout, taken as it is */
	const char *const rootonly[] = { "/plat_file_contexts", NULL };
	d = (struct fakedev){ .have = rootonly };
	rc = seapp_find_policy(fake_exists, &d, false, &p);
	CHECK(!rc && p.nfc == 1, "find_policy: plat in the root file system alone is taken");

	/* before Treble: one file, the compiled one first; a stray vendor file is not read */
	const char *const n7[] = { "/file_contexts.bin", "/file_contexts", "/seapp_contexts",
				   "/vendor/etc/selinux/vendor_file_contexts", NULL };
	d = (struct fakedev){ .have = n7 };
	rc = seapp_find_policy(fake_exists, &d, true, &p);
	CHECK(!rc && p.layout == SEAPP_LAYOUT_LEGACY &&
	      !strcmp(policy_str(&p, false), "legacy=/file_contexts.bin") &&
	      !strcmp(policy_str(&p, true), "legacy=/seapp_contexts"),
	      "find_policy: Android 7: %s, %s", policy_str(&p, false), policy_str(&p, true));
	d = (struct fakedev){ .have = n7 + 1 };
	rc = seapp_find_policy(fake_exists, &d, false, &p);
	CHECK(!rc && !strcmp(policy_str(&p, false), "legacy=/file_contexts"),
	      "find_policy: Android 4.4 to 6: %s", policy_str(&p, false));

	/* incomplete sets: what is missing, and everything looked for */
	const char *const novendor[] = { "/system/etc/selinux/plat_file_contexts",
					 "/product/etc/selinux/product_file_contexts", NULL };
	d = (struct fakedev){ .have = novendor };
	rc = seapp_find_policy(fake_exists, &d, false, &p);
	CHECK(rc == ENOENT && !strcmp(p.missing, "vendor") && p.missing_kind == SEAPP_FILE_CONTEXTS &&
	      p.looked && !strcmp(p.looked[0], "/vendor/etc/selinux/vendor_file_contexts") &&
	      p.looked[3] && !p.looked[4], "find_policy: Treble without vendor: refused (%s)",
	      p.missing ? p.missing : "-");
	const char *const none[] = { "/vendor/etc/selinux/vendor_file_contexts", NULL };
	d = (struct fakedev){ .have = none };
	rc = seapp_find_policy(fake_exists, &d, false, &p);
	CHECK(rc == ENOENT && !strcmp(p.missing, "plat") && p.looked && p.looked[3] &&
	      !strcmp(p.looked[3], "/file_contexts"), "find_policy: no plat: refused (%s)",
	      p.missing ? p.missing : "-");
	const char *const noseapp[] = { "/system/etc/selinux/plat_file_contexts",
					"/vendor/etc/selinux/vendor_file_contexts",
					"/vendor/etc/selinux/vendor_seapp_contexts", NULL };
	d = (struct fakedev){ .have = noseapp };
	rc = seapp_find_policy(fake_exists, &d, true, &p);
	CHECK(rc == ENOENT && !strcmp(p.missing, "plat") && p.missing_kind == SEAPP_SEAPP_CONTEXTS,
	      "find_policy: no plat seapp_contexts: refused when asked for");
	rc = seapp_find_policy(fake_exists, &d, false, &p);
	CHECK(!rc, "find_policy: ... and not when not asked for");
	/* a failing lookup stops the search and names the path */
	d = (struct fakedev){ .have = a10, .fail = "/product/etc/selinux/product_file_contexts" };
	rc = seapp_find_policy(fake_exists, &d, false, &p);
	CHECK(rc == EIO && p.failed && !strcmp(p.failed, "/product/etc/selinux/product_file_contexts"),
	      "find_policy: a failing lookup stops the search (%d)", rc);
}

int main(int argc, char **argv)
{
	bool own_dir = argc < 2;
	const char *env;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((env = getenv("SEAPP_FIXTURES")))
		fixtures = env;
	if ((env = getenv("SEAPP_DATA")))
		data = env;
	if (own_dir) {
		snprintf(dir, sizeof(dir), "%s/seappunit.XXXXXX",
			 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
		if (!mkdtemp(dir)) {
			perror(dir);
			return 2;
		}
	} else {
		snprintf(dir, sizeof(dir), "%s", argv[1]);
		mkdir(dir, 0755);
	}

	test_keys_case();
	test_booleans();
	test_level_from_values();
	test_level_from_repeats();
	test_repeated_keys();
	test_min_sdk();
	test_bad_lines();
	test_blank_and_comments();
	test_neverallow();
	test_duplicates();
	test_partition_names();
	test_precedence();
	test_sort_order();
	test_platform_first();
	test_stable_ties();
	test_user_selector();
	test_seinfo_selector();
	test_name_selector();
	test_flag_selectors();
	test_v2_app();
	test_exact_flags();
	test_uids();
	test_apply();
	test_android14_fixture();
	test_real_files();
	test_real_sets();
	test_pkglist();
	test_pkglist_big();
	test_lookup_pkg();
	test_paths();
	test_init_walk();
	test_device_walks();
	test_build_flags();
	test_find_policy();
	test_threads();

	if (own_dir)
		nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	if (failures)
		printf("%d check(s) failed\n", failures);
	return failures ? 1 : 0;
}
