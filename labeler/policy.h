/* --policy: every context of a file_contexts set checked against a binary SELinux policy. */
#ifndef POLICY_H
#define POLICY_H

#include "fcontexts.h"
#include "android.h"

/* How many invalid specs are printed one per line before the rest are only counted. */
#define POLICY_MAX_REPORTED 20

/*
 * Reads the binary policy at path (a kernel policy as checkpolicy, secilc or semodule write it:
 * refpolicy's policy.33, Android's sepolicy) with libsepol and checks the context of every spec
 * of set, each distinct context once, as setfiles -c and AOSP's checkfc do; "<<none>>" passes.
 * Prints each spec whose context the policy rejects, "fclabel CMD: FILE:LINE: context CTX is not
 * valid in policy PATH (why)", the first POLICY_MAX_REPORTED of them, then how many in all.
 * Returns EXIT_OK, EXIT_DIFFERS when some context is invalid, or EXIT_USAGE (after saying why,
 * naming the file) when the policy cannot be read.
 * With sa, its seapp_contexts too, as AOSP's checkseapp checks them: each domain= and type= a
 * type of the policy (not an attribute), each level= a level ("FILE:LINE: type X is not defined
 * in policy PATH").
 */
int policy_check(const char *cmd, const char *path, const fc_set *set, const seapp_set *sa);

#endif
