/* labeler/cli/: the fclabel command. What main.c, the commands and their shared parts share. */
#ifndef LABELER_CLI_INTERNAL_H
#define LABELER_CLI_INTERNAL_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "fcontexts.h"
#include "android.h"
#include "engine/engine.h"
#include "erofs/erofs.h"
#include "ext4/ext4.h"
#include "policy/policy.h"
#include "tree/tree.h"

/* ---- main.c: the table of commands ---- */

/* What a command needs before it runs, and how it opens its target (git.c's RUN_SETUP ...). */
enum {
	CMD_TARGET_RO = 1 << 0, /* takes IMAGE|DIR and only reads it */
	CMD_TARGET_RW = 1 << 1, /* takes IMAGE|DIR and writes it (read-only when told to change
				 * nothing: -n, --plan) */
	CMD_REPORT = 1 << 2,    /* --json FILE says what ended the run, whatever did: what is said
				 * on stderr is kept from the start (the options' errors too), and
				 * SIGINT and SIGTERM finish the run rather than kill it */
};

/* One subcommand: git style, one file each, cmd_NAME(argc, argv, self) with argv[0]
 * "fclabel NAME" and self its entry in the table. */
struct command {
	const char *name;
	int (*run)(int argc, char **argv, const struct command *self);
	unsigned needs; /* CMD_* */
	const char *summary;
};

/* What an EROFS image (part: a partition of a disk, or unset) says of itself (erofsident.c):
 * 0, or -1 when it cannot be read (id left empty: the run's open says why). */
int erofs_identify(const char *path, const struct img_part *part, struct img_identity *id);
/* Opens the EROFS image at path: the partition part says (set), else the whole file, raw or
 * Android sparse. 0, or -1 with why. */
int erofs_open_where(const char *path, const struct img_part *part, struct erofs_img **ero,
		     char *why, size_t n);

int cmd_label(int argc, char **argv, const struct command *self);
int cmd_check(int argc, char **argv, const struct command *self);
int cmd_relabel(int argc, char **argv, const struct command *self);
int cmd_dump(int argc, char **argv, const struct command *self);
int cmd_diff(int argc, char **argv, const struct command *self);
int cmd_lookup(int argc, char **argv, const struct command *self);
int cmd_explain(int argc, char **argv, const struct command *self);

/* ---- parseopt.c: a command's options, from its table (git's parse-options) ---- */

enum cli_arg { CLI_NOARG, CLI_ARG, CLI_OPTARG };

/* One option of a command: what getopt takes, and its line in --help. */
struct cli_opt {
	char letter;          /* -X, or 0 */
	const char *name;     /* --NAME, or NULL */
	int id;               /* what cli_next returns for it (> 0) */
	enum cli_arg arg;
	const char *argh;     /* the argument as --help names it ("FC[,FC...]"; CLI_OPTARG:
			       * "[=yes|no]") */
	const char *help;     /* its text in --help (wrapped there); NULL: not shown */
	const char *refused;  /* an option of a sibling command this one refuses, and why
			       * ("is for label and check (...)") */
};
#define OPT_FLAG(l, n, id, help) { l, n, id, CLI_NOARG, NULL, help, NULL }
#define OPT_ARG(l, n, id, argh, help) { l, n, id, CLI_ARG, argh, help, NULL }
#define OPT_OPTARG(n, id, argh, help) { 0, n, id, CLI_OPTARG, argh, help, NULL }
#define OPT_REFUSED(n, id, why) { 0, n, id, CLI_NOARG, NULL, NULL, why }
#define OPT_HELP OPT_FLAG('h', "help", CLI_HELP, "show this help")
#define OPT_END { 0, NULL, 0, CLI_NOARG, NULL, NULL, NULL }
enum { CLI_HELP = 1 };

/* A command's usage and options: what --help shows, and the error a wrong option gets. */
struct cli_spec {
	const char *name;            /* "label" */
	const char *const *usage;    /* the synopsis, a line each (the first is what a wrong option
				      * shows); then "" and lines of text before the options; NULL */
	const struct cli_opt *opts;  /* OPT_END */
};

#define CLI_MAX_OPTS 48
struct cli_parser {
	const struct cli_spec *spec;
	struct option lopts[CLI_MAX_OPTS + 1]; /* getopt_long's tables, made from spec */
	char sopts[3 * CLI_MAX_OPTS + 1];
};
/* Reads argv's options by getopt_long, as spec takes them. */
void cli_start(struct cli_parser *p, const struct cli_spec *spec);
/* The next option's id (its argument in optarg); -1 when there are no more (optind: the first
 * operand); '?' for one that is not the command's (getopt said so) or that it refuses (said
 * why). */
int cli_next(struct cli_parser *p, int argc, char **argv);
/* --help: the usage and every option with its text, on stdout. */
void cli_help(const struct cli_spec *spec);
/* The usage's first line and where the rest is, on stderr; die_usage then exits (EXIT_USAGE). */
void usage_hint(const struct cli_spec *spec);
void die_usage(const struct cli_spec *spec) __attribute__((noreturn));

/* ---- policyargs.c: the policy options of lookup and explain ---- */

/* The ids of the options struct policy_opts holds. */
enum {
	POPT_FILES = 0x100, /* -S */
	POPT_BASE_ONLY,
	POPT_SEAPP,
	POPT_PACKAGES,
	POPT_ANDROID_ROOT,
	POPT_PARTITION,
	POPT_END_ /* the commands' own ids follow */
};
#define HELP_FILE_CONTEXTS "file_contexts files, in order (repeatable)"
#define HELP_PARTITION                                                                             \
	"where partition NAME (system, system_ext, product, vendor, odm) is: a directory, an image, " \
	"or none (repeatable)"
#define OPT_FILE_CONTEXTS(id) OPT_ARG('S', "file-contexts", id, "FC[,FC...]", HELP_FILE_CONTEXTS)
#define OPT_PARTITION(id) OPT_ARG(0, "partition", id, "NAME=PATH", HELP_PARTITION)
/* One of them (id, with its argument) into p: 1 when taken, 0 when it is not one of them, -1
 * after saying why it is bad (the usage follows). */
int policy_arg(struct policy_opts *p, const char *cmd, int id, const char *arg);
/* Whether they go together: -S or --android-root, not both; false after saying why. */
bool policy_args_check(const struct policy_opts *p, const char *cmd);
/* A file mode for lookups: octal digits, or one letter f d l c b p s. */
bool parse_mode(const char *s, mode_t *mode);

/* ---- devdata.c ---- */
/* Whether the /data at target (mounted at mp) carries Android's digests: a 20-byte
 * security.sehash on its root or a top directory (named in where). 1, 0, or -1 after saying why
 * the target could not be read. An image is opened read-only (ip: its lock) and closed. */
int data_digested(const char *target, bool tree, const struct img_params *ip, const char *cmd,
		  const char *mp, char *where, size_t n);

#endif
