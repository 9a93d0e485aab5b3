/*
 * fclabel dump: what an image or a live tree carries, a line per path (path, mode, owner, label),
 * sorted by path; as JSON; or as a file_contexts that gives every label back.
 *
 * The walk is the engine's (LM_DUMP: no policy, nothing written), so any struct label_src (an
 * ext4 image, a live tree, and the targets to come) is dumped the same way: the engine hands
 * each file to dump_one below, which keeps it; the records are sorted and written at the end,
 * since the walks go in directory order and a listing must not depend on it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "run.h"

static const char *const usage[] = {
	"fclabel dump IMAGE|DIR [-a MOUNTPOINT [--force-mount-point]] [--json]",
	"                   [--format text|json|file_contexts] [--cross-mounts] [-T N]",
	"                   [--lock[=yes|no|nonblock]] [--part N|NAME]",
	"",
	"Every path of IMAGE (or the tree at DIR), sorted by path (byte order), a line each:",
	"path, mode (octal), uid, gid and label ('-' for none), tab-separated.",
	"--format file_contexts writes one exact spec per path, with its file type, from which",
	"fclabel label (or mkfs.erofs) gives every file its label back, byte for byte.",
	NULL
};

enum { D_JSON = RO_END_, D_FORMAT };

static const struct cli_opt options[] = {
	RUN_OPT_MOUNT_POINT,
	RUN_OPT_FORCE_MOUNT_POINT,
	OPT_FLAG(0, "json", D_JSON, "a JSON array of objects (--format json)"),
	OPT_ARG(0, "format", D_FORMAT, "FORMAT",
		"text (the default), json, or file_contexts: exact, regex-escaped specs, one per "
		"path, that give each file its label (<<none>> when it has none)"),
	RUN_OPT_CROSS_MOUNTS,
	OPT_ARG('T', "threads", RO_THREADS, "N",
		"DIR: walk it with N threads (default: one per CPU, up to 8); the listing is the "
		"same"),
	RUN_OPT_LOCK,
	RUN_OPT_PART,
	OPT_HELP,
	OPT_END
};

static const struct cli_spec spec = { "dump", usage, options };

enum format { F_TEXT, F_JSON, F_FC };

/* One file, its strings in the arena (offsets: the arena moves as it grows). */
struct rec {
	size_t path, label;     /* label: NO_LABEL when the file has none */
	size_t labellen;        /* without the trailing NUL the label was stored with */
	unsigned mode, uid, gid;
};
#define NO_LABEL SIZE_MAX

struct dump {
	struct rec *v;
	size_t n, cap;
	char *arena;
	size_t used, acap;
	unsigned long nonul;    /* labels stored without their trailing NUL */
};

static size_t keep(struct dump *d, const char *s, size_t len)
{
	if (d->used + len + 1 > d->acap) {
		size_t nc = d->acap ? d->acap : 1 << 16;
		while (d->used + len + 1 > nc)
			nc *= 2;
		char *na = realloc(d->arena, nc);
		if (!na)
			return NO_LABEL;
		d->arena = na;
		d->acap = nc;
	}
	size_t at = d->used;
	memcpy(d->arena + at, s, len);
	d->arena[at + len] = 0;
	d->used += len + 1;
	return at;
}

/* The engine's dump callback: 0, or -1 when out of memory (the walk stops). */
static int dump_one(void *arg, const struct label_file *f, const char *label, size_t len)
{
	struct dump *d = arg;
	if (d->n == d->cap) {
		size_t nc = d->cap ? d->cap * 2 : 4096;
		struct rec *nv = realloc(d->v, nc * sizeof(*nv));
		if (!nv)
			return -1;
		d->v = nv;
		d->cap = nc;
	}
	struct rec *r = &d->v[d->n];
	r->mode = f->mode;
	r->uid = f->uid;
	r->gid = f->gid;
	r->label = NO_LABEL;
	r->labellen = 0;
	if ((r->path = keep(d, f->path, f->pathlen)) == NO_LABEL)
		return -1;
	if (label) {
		/* stored as the kernel and fclabel store it, with its NUL; or without one (a
		 * tool that wrote it so): the same context either way (label_same) */
		if (len && label[len - 1] == 0)
			len--;
		else
			d->nonul++;
		if ((r->label = keep(d, label, len)) == NO_LABEL)
			return -1;
		r->labellen = len;
	}
	d->n++;
	return 0;
}

static const char *sort_arena;

/* Byte order: strcmp compares as unsigned char. */
static int by_path(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	return strcmp(sort_arena + x->path, sort_arena + y->path);
}

static const char *label_of(const struct dump *d, const struct rec *r)
{
	return r->label == NO_LABEL ? NULL : d->arena + r->label;
}

static void write_text(const struct dump *d)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct rec *r = &d->v[i];
		const char *l = label_of(d, r);
		/* (qname: a name with a tab, a newline or bytes that are not UTF-8 is quoted, so
		 * that a line is a record) */
		printf("%s\t0%o\t%u\t%u\t%s\n", qname(d->arena + r->path), r->mode, r->uid, r->gid,
		       l ? qname(l) : "-");
	}
}

static void write_json(const struct dump *d)
{
	fputs("[", stdout);
	for (size_t i = 0; i < d->n; i++) {
		const struct rec *r = &d->v[i];
		const char *l = label_of(d, r);
		fputs(i ? ",\n  {\"path\": " : "\n  {\"path\": ", stdout);
		rpt_json_str(stdout, d->arena + r->path);
		printf(", \"mode\": \"0%o\", \"uid\": %u, \"gid\": %u, \"label\": ", r->mode, r->uid,
		       r->gid);
		if (l)
			rpt_json_str(stdout, l);
		else
			fputs("null", stdout);
		fputs("}", stdout);
	}
	fputs(d->n ? "\n]\n" : "]\n", stdout);
}

/* file_contexts's file type for a mode ("" when it has none). */
static const char *fc_type(unsigned mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR: return "-d";
	case S_IFREG: return "--";
	case S_IFLNK: return "-l";
	case S_IFCHR: return "-c";
	case S_IFBLK: return "-b";
	case S_IFIFO: return "-p";
	case S_IFSOCK: return "-s";
	}
	return "";
}

/*
 * Why a path or a label cannot be written as a file_contexts line, or NULL. A line is a spec
 * (the regex, up to the first whitespace, the type, the context): a newline ends it, and libselinux
 * and fclabel read it a line at a time, so a path with one has no spec that names it exactly
 * (the regex could say \x0a, but a spec for a name that a line-based list cannot hold would be
 * the one file a rebuild's own file_contexts could not carry either: refused, named). A context
 * is one word: whitespace or a control byte in it, an empty one, or "<<none>>" (which means no
 * label) cannot be said.
 */
static const char *fc_refusal(const struct rec *r, const char *path, const char *label)
{
	if (strchr(path, '\n'))
		return "its name holds a newline, which a file_contexts line cannot hold (a spec is "
		       "one line)";
	if (!*fc_type(r->mode))
		return "its file type is none file_contexts names";
	if (!label)
		return NULL;
	if (!r->labellen)
		return "its label is empty, which a file_contexts context cannot be";
	if (strlen(label) != r->labellen)
		return "its label holds a NUL byte, which a file_contexts context cannot hold";
	for (const unsigned char *p = (const unsigned char *)label; *p; p++)
		if (*p <= ' ' || *p == 0x7f)
			return "its label holds whitespace or a control byte, which a file_contexts "
			       "context (one word) cannot hold";
		else if (*p > 0x7f)
			return "its label holds a byte past ASCII, which libselinux refuses in a "
			       "file_contexts line";
	if (!strcmp(label, "<<none>>"))
		return "its label is the word <<none>>, which file_contexts reads as no label";
	return NULL;
}

/*
 * The path as an exact regex. `.^$?*+|[({` get a backslash. What else PCRE2 or the line reader
 * would take for something else (a backslash, `)`, `]`, `}`, whitespace, control bytes, bytes
 * past ASCII) is written as a class of that one character ("[\\]", "[)]", "[]]", "[}]",
 * "[\x20]"), not as
 * "\)" or "\x20": libselinux 3.4 (and fclabel, which gives its answers) take a spec's first
 * component, when it holds none of `.^$?*+|[({`, as a literal stem compared with the path's as a
 * string, so "/a\)b/c" would never be tried for "/a)b/c"; a class holds '[', so the stem is not
 * taken. Bytes from 0x80 up are written so too ("[\xc3]"): libselinux refuses a file_contexts
 * line with a byte past ASCII (fclabel too, as it), and PCRE2 without UTF, as both compile,
 * matches \xc3 as that byte.
 */
static void write_regex(FILE *f, const char *path)
{
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		int c = *p;
		if (strchr(".^$?*+|[({", c))
			fprintf(f, "\\%c", c);
		else if (c == '\\')
			fputs("[\\\\]", f);
		else if (c == ')' || c == ']' || c == '}')
			fprintf(f, "[%c]", c);
		else if (c <= ' ' || c >= 0x7f)
			fprintf(f, "[\\x%02x]", c);
		else
			fputc(c, f);
	}
}

/* All or nothing: every path and label is checked before a line is written. 0, or -1 after
 * naming each refused (the first 20). */
static int write_fc(const struct dump *d)
{
	unsigned long refused = 0;
	for (size_t i = 0; i < d->n; i++) {
		const struct rec *r = &d->v[i];
		const char *why = fc_refusal(r, d->arena + r->path, label_of(d, r));
		if (why && ++refused <= 20)
			fprintf(stderr, "fclabel dump: %s: cannot be written as file_contexts: %s\n",
				qname(d->arena + r->path), why);
	}
	if (refused) {
		fprintf(stderr, "fclabel dump: %lu path(s) refused%s; nothing written\n", refused,
			refused > 20 ? " (the first 20 are named above)" : "");
		return -1;
	}
	if (d->nonul)
		fprintf(stderr, "fclabel dump: note: %lu label(s) are stored without their trailing "
			"NUL; the file_contexts gives the same contexts, which labeling writes with "
			"it\n", d->nonul);
	for (size_t i = 0; i < d->n; i++) {
		const struct rec *r = &d->v[i];
		const char *l = label_of(d, r);
		write_regex(stdout, d->arena + r->path);
		printf("\t%s\t%s\n", fc_type(r->mode), l ? l : "<<none>>");
	}
	return 0;
}

/* The options, the target, and what walks it. */
struct dumpargs {
	const char *target;
	char *mp;               /* -a, clean ("" for /), or NULL */
	bool force_mp, tree;
	enum format fmt;
	struct img_params ip;
	struct label_opts o;
};

/* "/a//b/" -> "/a/b", "/" -> "": -a as label, check and relabel take it. NULL when not
 * absolute. */
static char *mount_arg(const char *p)
{
	size_t n = strlen(p), k = 0;
	char *o;

	if (p[0] != '/' || !(o = malloc(n + 1)))
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (p[i] != '/' || !k || o[k - 1] != '/')
			o[k++] = p[i];
	while (k && o[k - 1] == '/')
		k--;
	o[k] = 0;
	return o;
}

/* 0, 1 for --help, or -1 after saying why (the usage follows). */
static int dump_options(struct dumpargs *a, int argc, char **argv)
{
	struct cli_parser p;
	char *end;
	unsigned long n;
	int c;

	cli_start(&p, &spec);
	while ((c = cli_next(&p, argc, argv)) != -1) {
		switch (c) {
		case RO_MOUNT_POINT:
			free(a->mp);
			if (!(a->mp = mount_arg(optarg))) {
				fprintf(stderr, "fclabel dump: -a '%s': not an absolute path\n", optarg);
				return -1;
			}
			break;
		case RO_FORCE_MOUNT_POINT: a->force_mp = true; break;
		case D_JSON: a->fmt = F_JSON; break;
		case D_FORMAT:
			if (!strcmp(optarg, "text"))
				a->fmt = F_TEXT;
			else if (!strcmp(optarg, "json"))
				a->fmt = F_JSON;
			else if (!strcmp(optarg, "file_contexts"))
				a->fmt = F_FC;
			else {
				fprintf(stderr, "fclabel dump: --format '%s': want text, json or "
					"file_contexts\n", optarg);
				return -1;
			}
			break;
		case RO_CROSS_MOUNTS: a->o.cross_mounts = true; break;
		case RO_PART: a->ip.part = optarg; break;
		case RO_THREADS:
			errno = 0;
			n = strtoul(optarg, &end, 10);
			if (errno || *end || !*optarg || n < 1 || n > 256) {
				fprintf(stderr, "fclabel dump: -T '%s': want a number from 1 to 256\n",
					optarg);
				return -1;
			}
			a->o.threads = (unsigned)n;
			break;
		case RO_LOCK:
			if (!optarg || !strcmp(optarg, "yes"))
				a->ip.lock = LOCK_WAIT;
			else if (!strcmp(optarg, "no"))
				a->ip.lock = LOCK_NONE;
			else if (!strcmp(optarg, "nonblock"))
				a->ip.lock = LOCK_NONBLOCK;
			else {
				fprintf(stderr, "fclabel dump: --lock=%s: want yes, no or nonblock\n",
					optarg);
				return -1;
			}
			break;
		case CLI_HELP: cli_help(&spec); return 1;
		default: return -1;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "fclabel dump: give exactly one IMAGE or DIR\n");
		return -1;
	}
	struct stat sb;
	a->target = argv[optind];
	a->tree = !stat(a->target, &sb) && S_ISDIR(sb.st_mode);
	if (a->tree && a->force_mp) {
		fprintf(stderr, "fclabel dump: %s is a directory: --force-mount-point applies to "
			"images only\n", qname(a->target));
		return -1;
	}
	if (a->tree && a->ip.part) {
		fprintf(stderr, "fclabel dump: %s is a directory: --part applies to disk images "
			"only\n", qname(a->target));
		return -1;
	}
	if (!a->tree && (a->o.cross_mounts || a->o.threads)) {
		fprintf(stderr, "fclabel dump: %s is an image: %s applies to a directory only\n",
			qname(a->target), a->o.cross_mounts ? "--cross-mounts" : "-T");
		return -1;
	}
	return 0;
}

/* An EROFS image: its files as the image holds them. */
static int dump_erofs(struct dumpargs *a, struct label_stats *st)
{
	struct erofs_img *ero;
	char why[512];
	int rc;

	if (erofs_open_where(a->target, &a->ip.where, &ero, why, sizeof(why))) {
		fprintf(stderr, "fclabel dump: %s\n", why);
		return EXIT_USAGE;
	}
	rc = erofs_label(ero, NULL, &a->o, st);
	erofs_close(ero);
	return rc ? EXIT_USAGE : EXIT_OK;
}

/* Walks the target into d: 0, or the exit status after saying why. A tree with no -a is listed
 * as the root of what it holds (as -a /): a listing names no file on this system. An image
 * takes its own mount point as label does (identify.c), and refuses an -a it contradicts. */
static int dump_walk(struct dumpargs *a, struct label_stats *st)
{
	struct img_identity id = { 0 };
	struct image img = { 0 };
	const char *mp = a->mp;
	int rc;

	a->o.mountpoint = a->mp ? a->mp : "";
	if (a->tree)
		return label_dir(a->target, NULL, &a->o, st) ? EXIT_USAGE : EXIT_OK;
	a->ip.root = a->mp && !*a->mp;
	if (img_choose_part("dump", a->target, &a->ip))
		return EXIT_USAGE;
	if (a->ip.where.set)
		part_say("dump", a->target, &a->ip.where);
	bool erofs = a->ip.where.set ? a->ip.where.erofs : eroimg_probe(a->target) > 0;
	/* (one that cannot be read: the open says why) */
	if (erofs)
		(void)erofs_identify(a->target, &a->ip.where, &id);
	else
		(void)img_identify(a->target, &a->ip.where, &id);
	if (ident_choose("dump", a->target, &id, a->mp, a->force_mp, &mp) < 0) {
		ident_free(&id);
		return EXIT_USAGE;
	}
	if (mp && !a->mp)
		a->o.mountpoint = mp;
	ident_say(stderr, "dump", a->target, &id, "listed");
	if (erofs) {
		ident_free(&id);
		return dump_erofs(a, st);
	}
	if (img_open(&img, a->target, 0, &a->ip, "dump")) {
		ident_free(&id);
		return EXIT_USAGE;
	}
	rc = ext4_label(&img, NULL, &a->o, st);
	if (rc)
		img_abandon(&img);
	if (img_close(&img, "dump"))
		rc = -1;
	ident_free(&id);
	return rc ? EXIT_USAGE : EXIT_OK;
}

int cmd_dump(int argc, char **argv, const struct command *self)
{
	struct dumpargs a = { .fmt = F_TEXT };
	struct dump d = { 0 };
	struct label_stats st;
	int status, r;
	static char obuf[1 << 16];

	(void)self;
	a.o = (struct label_opts){ .mode = LM_DUMP, .cmd = "dump", .mountpoint = "",
				   .dump = dump_one, .dump_arg = &d };
	if ((r = dump_options(&a, argc, argv))) {
		free(a.mp);
		if (r > 0)
			return EXIT_OK;
		die_usage(&spec);
	}
	status = dump_walk(&a, &st);
	if (status == EXIT_OK && st.interrupted)
		status = EXIT_USAGE;
	if (status == EXIT_OK) {
		sort_arena = d.arena;
		if (d.n)
			qsort(d.v, d.n, sizeof(*d.v), by_path);
		setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
		if (a.fmt == F_TEXT)
			write_text(&d);
		else if (a.fmt == F_JSON)
			write_json(&d);
		else if (write_fc(&d))
			status = EXIT_USAGE;
		if (fflush(stdout) != 0) {
			perror("fclabel dump: stdout");
			status = EXIT_USAGE;
		}
	}
	if (status == EXIT_OK && st.errors) {
		fprintf(stderr, "fclabel dump: %lu file(s) could not be read (named above): they "
			"are not listed\n", st.errors);
		status = EXIT_DIFFERS;
	}
	if (status == EXIT_OK && st.encrypted)
		fprintf(stderr, "fclabel dump: %lu encrypted director%s listed, not entered (their "
			"names are ciphertext)\n", st.encrypted, st.encrypted == 1 ? "y" : "ies");
	free(d.v);
	free(d.arena);
	free(a.mp);
	return status;
}
