/*
 * A command's options, from one table in its file (git's parse-options): getopt_long's tables,
 * --help (the usage, then every option with its text, wrapped) and the usage line a wrong option
 * gets are all made from it, so that each option's help is typed once, and what a command takes
 * is what its --help shows.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* --help's layout: the options' text starts at column HELP_COL, lines are at most HELP_WIDTH
 * long */
#define HELP_COL 25
#define HELP_WIDTH 94
/* getopt_long's value for a long option without a letter: its index in the table, above this */
#define LONG_ONLY 0x10000

void cli_start(struct cli_parser *p, const struct cli_spec *spec)
{
	size_t k = 0, s = 0;

	memset(p, 0, sizeof(*p));
	p->spec = spec;
	for (int i = 0; spec->opts[i].id; i++) {
		const struct cli_opt *o = &spec->opts[i];
		if (i >= CLI_MAX_OPTS)
			abort(); /* (a table too long for CLI_MAX_OPTS: a build that never ran) */
		if (o->letter) {
			p->sopts[s++] = o->letter;
			if (o->arg != CLI_NOARG)
				p->sopts[s++] = ':';
			if (o->arg == CLI_OPTARG)
				p->sopts[s++] = ':';
		}
		if (o->name)
			p->lopts[k++] = (struct option){ o->name, o->arg == CLI_NOARG ? no_argument :
							 o->arg == CLI_ARG ? required_argument :
							 optional_argument, NULL,
							 o->letter ? o->letter : LONG_ONLY + i };
	}
}

int cli_next(struct cli_parser *p, int argc, char **argv)
{
	const struct cli_opt *opts = p->spec->opts, *o = NULL;
	int c = getopt_long(argc, argv, p->sopts, p->lopts, NULL);

	if (c == -1 || c == '?')
		return c;
	if (c >= LONG_ONLY)
		o = &opts[c - LONG_ONLY];
	for (int i = 0; !o && opts[i].id; i++)
		if (opts[i].letter == c)
			o = &opts[i];
	if (!o)
		return '?';
	if (o->refused) {
		fprintf(stderr, "fclabel %s: --%s %s\n", p->spec->name, o->name, o->refused);
		return '?';
	}
	return o->id;
}

/*
 * text from column col (the line so far), wrapped: each further line from HELP_COL. No further
 * line starts with '-': a reader (and tests/t_install.sh, reading --help as the completion's
 * lists are checked) takes a line that starts with "--digests)" for an option of its own, so a
 * word that would start one takes the word before it along.
 */
static void wrap(const char *text, size_t col)
{
	bool first = true; /* the line's first word: it goes there, however long */

	for (const char *p = text + strspn(text, " "); *p;) {
		size_t n = strcspn(p, " ");
		const char *next = p + n + strspn(p + n, " ");
		size_t nn = strcspn(next, " ");
		bool fits = first || col + 1 + n <= HELP_WIDTH;
		if (fits && !first && *next == '-' && col + 1 + n + 1 + nn > HELP_WIDTH)
			fits = false;
		if (!fits) {
			printf("\n%*s", HELP_COL, "");
			col = HELP_COL;
			first = true;
		}
		if (!first) {
			putchar(' ');
			col++;
		}
		printf("%.*s", (int)n, p);
		col += n;
		first = false;
		p = next;
	}
	putchar('\n');
}

/* "  -S, --file-contexts FC[,FC...]  text...": the option, its argument, its text */
static void help_line(const struct cli_opt *o)
{
	char left[128];
	size_t n;

	if (o->letter && o->name)
		snprintf(left, sizeof(left), "  -%c, --%s", o->letter, o->name);
	else if (o->letter)
		snprintf(left, sizeof(left), "  -%c", o->letter);
	else
		snprintf(left, sizeof(left), "      --%s", o->name);
	n = strlen(left);
	if (o->argh)
		snprintf(left + n, sizeof(left) - n, "%s%s", o->arg == CLI_OPTARG ? "" : " ", o->argh);
	n = strlen(left);
	/* the text in its column, or two spaces after an option too long for it */
	if (n + 2 <= HELP_COL) {
		printf("%-*s", HELP_COL, left);
		n = HELP_COL;
	} else {
		printf("%s  ", left);
		n += 2;
	}
	wrap(o->help, n);
}

void cli_help(const struct cli_spec *spec)
{
	const char *const *u = spec->usage;

	printf("usage: %s\n", *u);
	while (*++u && **u)
		printf("%s\n", *u);
	if (*u) /* "": the text that follows the synopsis */
		for (putchar('\n'); *++u;)
			printf("%s\n", *u);
	putchar('\n');
	for (const struct cli_opt *o = spec->opts; o->id; o++)
		if (o->help)
			help_line(o);
}

void usage_hint(const struct cli_spec *spec)
{
	/* the synopsis's first line, and where the rest is */
	fprintf(stderr, "usage: %s\nsee 'fclabel %s --help'\n", spec->usage[0], spec->name);
}

void die_usage(const struct cli_spec *spec)
{
	usage_hint(spec);
	exit(EXIT_USAGE);
}
