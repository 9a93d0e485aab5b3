/* The fclabel command: shared helpers of the subcommands. */
#ifndef LABELER_CLI_INTERNAL_H
#define LABELER_CLI_INTERNAL_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "fcontexts.h"
#include "android.h"
#include "engine/engine.h"
#include "ext4/ext4.h"
#include "policy/policy.h"
#include "tree/tree.h"

/* One subcommand: git style, one file each, cmd_NAME(argc, argv) with argv[0] the name. */
struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

int cmd_lookup(int argc, char **argv);
int cmd_label(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_relabel(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_explain(int argc, char **argv);

/* imgcmd.c: what label and check share; mode is an enum label_mode */
int image_command(int argc, char **argv, int mode);

/* ---- devdata.c ---- */
/* Whether the /data at target (mounted at mp) carries Android's digests: a 20-byte
 * security.sehash on its root or a top directory (named in where). 1, 0, or -1 after saying why
 * the target could not be read. An image is opened read-only (ip: its lock) and closed. */
int data_digested(const char *target, bool tree, const struct img_params *ip, const char *cmd,
		  const char *mp, char *where, size_t n);
/* The usage's first line and where the rest is, on stderr; die_usage then exits (EXIT_USAGE). */
void usage_hint(const char *cmd, const char *usage);
void die_usage(const char *cmd, const char *usage) __attribute__((noreturn));

#endif
