/* labeler/tree/: a live directory tree, labeled where it is. */
#ifndef LABELER_TREE_H
#define LABELER_TREE_H

#include <stdbool.h>

#include "fcontexts.h"
#include "engine/engine.h"

/* ---- tree.c ---- */
/* Labels (or checks) the live tree at dir with openat/fstatat, never following a symlink. */
int label_dir(const char *dir, const fc_set *set, const struct label_opts *o,
	      struct label_stats *st);
/* Whether the directory itself carries a label. */
bool dir_is_labeled(const char *dir);
#endif
