/* fclabel: the entry point, and the table of commands with what each needs (git.c). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <et/com_err.h>
#include <ext2fs/ext2fs.h>
#include <malloc.h>
#include <pcre2.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#ifndef FCLABEL_VERSION
#define FCLABEL_VERSION "unknown"
#endif
/* How the libraries were linked, for --version: `make static` defines both (mk/install.mk). */
#ifndef FCLABEL_STATIC_LIBS
#define FCLABEL_STATIC_LIBS ""
#endif
#ifndef FCLABEL_SHARED_LIBS
#define FCLABEL_SHARED_LIBS "libext2fs libcom_err libblkid libpcre2-8 libnettle libsepol libz libc"
#endif
/* What the binary runs on (the compiler's -dumpmachine): the Makefile, mk/install.mk and
 * mk/cross.mk define it. */
#ifndef FCLABEL_TARGET
#define FCLABEL_TARGET "unknown"
#endif

static const struct command commands[] = {
	{ "label", cmd_label, CMD_TARGET_RW | CMD_REPORT,
	  "write every file's SELinux label in an ext4 image" },
	{ "check", cmd_check, CMD_TARGET_RO | CMD_REPORT,
	  "list the files of an image whose label differs (read-only)" },
	{ "relabel", cmd_relabel, CMD_TARGET_RW | CMD_REPORT,
	  "after a policy change, relabel only what the change reaches" },
	{ "dump", cmd_dump, CMD_TARGET_RO,
	  "list every file of an image or a tree: path, mode, owner, label (read-only)" },
	{ "diff", cmd_diff, 0, "what changed between two file_contexts versions" },
	{ "lookup", cmd_lookup, 0, "print the context file_contexts gives paths" },
	{ "explain", cmd_explain, 0, "every spec that matches a path, and which one decides" },
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

static void on_stop(int sig)
{
	label_stop_signal = sig;
}

/* What a command needs before it reads its options. CMD_REPORT: whatever ends the run once
 * --json FILE is read, the report says it: what is said on stderr is kept for it, and SIGINT and
 * SIGTERM stop the walk at the next file; the summary and the report are completed, a copy is
 * discarded, then fclabel dies by the same signal (a second one kills at once). */
static void prepare(const struct command *c)
{
	if (c->needs & CMD_REPORT) {
		struct sigaction sa = { .sa_handler = on_stop,
					.sa_flags = SA_RESTART | SA_RESETHAND };
		rpt_capture_start(c->name);
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
}

int main(int argc, char **argv)
{
	/* The heap grows 2 MiB past what is asked (address space: pages cost only when touched):
	 * each brk takes the process's mmap lock for writing, and waits while the block-claims
	 * scan's thread holds it (its mapping of the image, its malloc arena). Measured in B1
	 * relabels: the run's thread waited 0.7-0.9 ms (once 9 ms) in brk in 5 of 8 runs, never
	 * with a 16 MiB pad (perf sched, 8 runs each). 2 MiB makes as few brk calls there (3, 8
	 * without), and a freed top kept by a pad counts in the peak: a full label's 61 MiB was 68
	 * with 16 MiB, 62 with 2. */
	mallopt(M_TOP_PAD, 2 << 20);
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
			prepare(&commands[i]);
			return commands[i].run(argc - 1, argv + 1, &commands[i]);
		}
	fprintf(stderr, "fclabel: '%s' is not a command\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
