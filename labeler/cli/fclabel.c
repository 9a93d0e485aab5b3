/* fclabel: entry point and the table of subcommands. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <stdint.h>
#include <et/com_err.h>
#include <ext2fs/ext2fs.h>
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

#ifndef FCLABEL_VERSION
#define FCLABEL_VERSION "unknown"
#endif
/* How the libraries were linked, for --version: `make static` defines both (mk/install.mk). */
#ifndef FCLABEL_STATIC_LIBS
#define FCLABEL_STATIC_LIBS ""
#endif
#ifndef FCLABEL_SHARED_LIBS
#define FCLABEL_SHARED_LIBS "libext2fs libcom_err libpcre2-8 libnettle libsepol libz libc"
#endif
/* What the binary runs on (the compiler's -dumpmachine): the Makefile, mk/install.mk and
 * mk/cross.mk define it. */
#ifndef FCLABEL_TARGET
#define FCLABEL_TARGET "unknown"
#endif

static const struct command commands[] = {
	{ "label", cmd_label, "write every file's SELinux label in an ext4 image" },
	{ "check", cmd_check, "list the files of an image whose label differs (read-only)" },
	{ "relabel", cmd_relabel, "after a policy change, relabel only what the change reaches" },
	{ "diff", cmd_diff, "what changed between two file_contexts versions" },
	{ "lookup", cmd_lookup, "print the context file_contexts gives paths" },
	{ "explain", cmd_explain, "every spec that matches a path, and which one decides" },
};

static void usage(FILE *to)
{
	fprintf(to, "usage: fclabel [--version] [--help] COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(to, "   %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(to, "\n'fclabel COMMAND --help' shows a command's options; man fclabel-COMMAND.\n");
}

static void version(void)
{
	char pcre[64] = "", jit[128] = "";
	uint32_t has_jit = 0;
	pcre2_config(PCRE2_CONFIG_VERSION, pcre);
	if (!pcre2_config(PCRE2_CONFIG_JIT, &has_jit) && has_jit)
		pcre2_config(PCRE2_CONFIG_JITTARGET, jit);
	const char *e2 = NULL;
	ext2fs_get_library_version(&e2, NULL);
	printf("fclabel %s\ntarget: %s\nlibext2fs %s\n", FCLABEL_VERSION, FCLABEL_TARGET,
	       e2 ? e2 : "?");
	printf("PCRE2 %s, %s%s\n", pcre, jit[0] ? "JIT for " : "no JIT", jit);
	printf("linked statically: %s\nlinked dynamically: %s\n",
	       FCLABEL_STATIC_LIBS[0] ? FCLABEL_STATIC_LIBS : "none",
	       FCLABEL_SHARED_LIBS[0] ? FCLABEL_SHARED_LIBS : "none");
}

/* imgfmt's fault injector (FCLABEL_FAULT) speaks through us */
static void say_imgfmt(void *arg, const char *msg)
{
	fprintf(stderr, "fclabel: %s\n", msg);
}

static void say_io_counts(void)
{
	char buf[256];
	if (imgfmt_io_counts(buf, sizeof(buf)))
		fprintf(stderr, "fclabel: %s\n", buf);
}

int main(int argc, char **argv)
{
	initialize_ext2_error_table();
	imgfmt_set_log(say_imgfmt, NULL);
	atexit(say_io_counts);
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		version();
		return EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name)) {
			/* getopt names the program in its messages: "fclabel label: ..." */
			static char name[64];
			snprintf(name, sizeof(name), "fclabel %s", argv[1]);
			argv[1] = name;
			return commands[i].run(argc - 1, argv + 1);
		}
	fprintf(stderr, "fclabel: '%s' is not a command\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}

/* ---- helpers shared by the subcommands ---- */

int fcfiles_add(struct fcfiles *f, const char *arg)
{
	const char *p = arg;

	for (;;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		if (n) {
			char **nv = realloc(f->v, (f->n + 1) * sizeof(*nv));
			if (!nv)
				return ENOMEM;
			f->v = nv;
			if (!(f->v[f->n] = strndup(p, n)))
				return ENOMEM;
			f->n++;
		}
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

void fcfiles_free(struct fcfiles *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->v[i]);
	free(f->v);
	f->v = NULL;
	f->n = 0;
}

fc_set *fc_loaded(const char *cmd, int rc, fc_set *set, const struct fc_error *err)
{
	if (!rc) {
		/* a compiled FC.bin (or FC) that did not load, and the other one that did */
		const char *w = fc_load_warning(set);
		while (w && *w) {
			const char *nl = strchr(w, '\n');
			int len = nl ? (int)(nl - w) : (int)strlen(w);
			fprintf(stderr, "fclabel %s: warning: %.*s\n", cmd, len, w);
			w = nl ? nl + 1 : NULL;
		}
		return set;
	}
	fprintf(stderr, "fclabel %s: ", cmd);
	if (err->file[0]) {
		fprintf(stderr, "%s:", err->file);
		if (err->line)
			fprintf(stderr, "%u:", err->line);
		if (err->column)
			fprintf(stderr, "%u:", err->column);
		fputc(' ', stderr);
	}
	fprintf(stderr, "%s\n", err->msg[0] ? err->msg : strerror(rc));
	return NULL;
}

fc_set *load_policy(const char *cmd, const struct fcfiles *f, unsigned flags)
{
	struct fc_error err;
	fc_set *set = NULL;
	int rc = fc_load(&set, (const char *const *)f->v, f->n, flags, &err);
	return fc_loaded(cmd, rc, set, &err);
}

bool parse_mode(const char *s, mode_t *mode)
{
	static const struct { char c; mode_t m; } letters[] = {
		{ 'f', S_IFREG }, { 'd', S_IFDIR }, { 'l', S_IFLNK }, { 'c', S_IFCHR },
		{ 'b', S_IFBLK }, { 'p', S_IFIFO }, { 's', S_IFSOCK },
	};
	char *end;
	unsigned long v;

	if (s[0] && !s[1])
		for (size_t i = 0; i < sizeof(letters) / sizeof(letters[0]); i++)
			if (s[0] == letters[i].c) {
				*mode = letters[i].m;
				return true;
			}
	if (!s[0] || s[0] == '-' || s[0] == '+')
		return false;
	errno = 0;
	v = strtoul(s, &end, 8);
	/* like libselinux, any mode_t: only its S_IFMT bits count */
	if (*end || errno || v > 0xffffffffUL)
		return false;
	*mode = (mode_t)v;
	return true;
}

bool policy_opt(int c, const char *arg, struct policy_opts *p, const char *cmd, const char *usage)
{
	switch (c) {
	case 'S':
		if (fcfiles_add(&p->files, arg)) {
			fprintf(stderr, "fclabel %s: out of memory\n", cmd);
			exit(EXIT_USAGE);
		}
		return true;
	case 'B':
		p->flags |= FC_BASE_ONLY;
		return true;
	case 'A':
		if (fcfiles_add(&p->seapp, arg)) {
			fprintf(stderr, "fclabel %s: out of memory\n", cmd);
			exit(EXIT_USAGE);
		}
		return true;
	case 'K':
		p->packages = arg;
		return true;
	case OPT_ANDROID_ROOT:
		p->aroot.root = arg;
		return true;
	case OPT_PARTITION:
		if (!aroot_partition(&p->aroot, cmd, arg))
			die_usage(cmd, usage);
		return true;
	case 'm':
		if (!parse_mode(arg, &p->mode)) {
			fprintf(stderr, "fclabel %s: bad mode '%s'\n", cmd, arg);
			die_usage(cmd, usage);
		}
		return true;
	case 'h':
		printf("usage: %s\n", usage);
		exit(EXIT_OK);
	default:
		return false;
	}
}

void usage_hint(const char *cmd, const char *usage_text)
{
	/* the synopsis's first line, and where the rest is */
	fprintf(stderr, "usage: %.*s\nsee 'fclabel %s --help'\n", (int)strcspn(usage_text, "\n"),
		usage_text, cmd);
}

void die_usage(const char *cmd, const char *usage_text)
{
	usage_hint(cmd, usage_text);
	exit(EXIT_USAGE);
}

static void seapp_report(const char *cmd, const struct seapp_error *err, int rc)
{
	fprintf(stderr, "fclabel %s: ", cmd);
	if (err->file[0]) {
		fprintf(stderr, "%s:", err->file);
		if (err->line)
			fprintf(stderr, "%u:", err->line);
		fputc(' ', stderr);
	}
	fprintf(stderr, "%s\n", err->msg[0] ? err->msg : strerror(rc));
}

seapp_set *seapp_loaded(const char *cmd, int rc, seapp_set *set, const struct seapp_error *err)
{
	if (rc) {
		seapp_report(cmd, err, rc);
		return NULL;
	}
	size_t nv = seapp_neverallow_count(set);
	if (nv)
		fprintf(stderr, "fclabel %s: note: %zu neverallow line(s) of a source seapp_contexts "
			"skipped (the build's checkseapp checks and strips them; a device's files "
			"have none)\n", cmd, nv);
	return set;
}

seapp_set *load_seapp(const char *cmd, const struct fcfiles *f)
{
	struct seapp_error err = { 0 };
	seapp_set *set = NULL;
	int rc = seapp_load(&set, (const char *const *)f->v, f->n, &err);
	return seapp_loaded(cmd, rc, set, &err);
}

pkg_list *load_packages(const char *cmd, const char *name, const char *buf, size_t len)
{
	struct seapp_error err = { 0 };
	pkg_list *list = NULL;
	int rc = buf ? pkglist_parse(&list, name, buf, len, &err) : pkglist_load(&list, name, &err);
	if (rc) {
		seapp_report(cmd, &err, rc);
		return NULL;
	}
	return list;
}

/* The app data rules once r->sa is loaded: packages.list, and what joins them. */
static int app_rules_finish(const char *cmd, const struct policy_opts *p, const fc_set *set,
			    struct app_rules *r)
{
	if (!(r->pkgs = load_packages(cmd, p->packages, NULL, 0)))
		return EXIT_USAGE;
	if (!(r->ad = appdata_new(r->sa, NULL, r->pkgs, set))) {
		fprintf(stderr, "fclabel %s: out of memory\n", cmd);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int app_rules_load(const char *cmd, const struct policy_opts *p, const fc_set *set,
		   struct app_rules *r)
{
	memset(r, 0, sizeof(*r));
	if (!p->seapp.n && !p->packages)
		return EXIT_OK;
	if (!p->seapp.n || !p->packages) {
		fprintf(stderr, "fclabel %s: --seapp and --packages go together\n", cmd);
		return EXIT_USAGE;
	}
	if (!(r->sa = load_seapp(cmd, &p->seapp)))
		return EXIT_USAGE;
	return app_rules_finish(cmd, p, set, r);
}

int policy_opts_load(const char *cmd, const char *usage, const struct policy_opts *p,
		     bool verbose, fc_set **set, struct app_rules *r)
{
	struct policy_origins pf;
	int status;

	*set = NULL;
	memset(r, 0, sizeof(*r));
	if (!aroot_given(&p->aroot)) {
		if (!p->files.n) {
			fprintf(stderr, "fclabel %s: -S FILE_CONTEXTS (or --android-root ROOT) is "
				"required\n", cmd);
			die_usage(cmd, usage);
		}
		if (!(*set = load_policy(cmd, &p->files, p->flags)))
			return EXIT_USAGE;
		return app_rules_load(cmd, p, *set, r);
	}
	if (p->files.n || p->seapp.n) {
		fprintf(stderr, "fclabel %s: --android-root takes the file_contexts and seapp_contexts "
			"from the device: %s cannot go with it\n", cmd, p->files.n ? "-S" : "--seapp");
		die_usage(cmd, usage);
	}
	/* with --packages, the device's seapp_contexts too; the files taken named with -v (standard
	 * error is no summary here) */
	struct aroot_args ar = p->aroot;
	ar.quiet = true;
	status = aroot_load(cmd, &ar, p->flags, LOCK_WAIT, verbose, set, p->packages ? &r->sa : NULL,
			    &pf);
	policy_origins_free(&pf);
	if (status == EXIT_OK && p->packages)
		status = app_rules_finish(cmd, p, *set, r);
	return status;
}

void app_rules_free(struct app_rules *r)
{
	appdata_free(r->ad);
	seapp_free(r->sa);
	pkglist_free(r->pkgs);
	memset(r, 0, sizeof(*r));
}

void policy_opts_free(struct policy_opts *p)
{
	fcfiles_free(&p->files);
	fcfiles_free(&p->seapp);
}
