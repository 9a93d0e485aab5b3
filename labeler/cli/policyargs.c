/* The policy options of lookup, explain, label, check and relabel, read into a struct
 * policy_opts (policy/ loads what they name), and -m's file mode. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

int policy_arg(struct policy_opts *p, const char *cmd, int id, const char *arg)
{
	switch (id) {
	case POPT_FILES:
	case POPT_SEAPP:
		if (fcfiles_add(id == POPT_FILES ? &p->files : &p->seapp, arg)) {
			fprintf(stderr, "fclabel %s: out of memory\n", cmd);
			return -1;
		}
		return 1;
	case POPT_BASE_ONLY:
		p->flags |= FC_BASE_ONLY;
		return 1;
	case POPT_PACKAGES:
		p->packages = arg;
		return 1;
	case POPT_ANDROID_ROOT:
		p->aroot.root = arg;
		return 1;
	case POPT_PARTITION:
		return aroot_partition(&p->aroot, cmd, arg) ? 1 : -1;
	default:
		return 0;
	}
}

bool policy_args_check(const struct policy_opts *p, const char *cmd)
{
	if (!aroot_given(&p->aroot)) {
		if (p->files.n)
			return true;
		fprintf(stderr, "fclabel %s: -S FILE_CONTEXTS (or --android-root ROOT) is required\n",
			cmd);
		return false;
	}
	if (!p->files.n && !p->seapp.n)
		return true;
	fprintf(stderr, "fclabel %s: --android-root takes the file_contexts and seapp_contexts from "
		"the device: %s cannot go with it\n", cmd, p->files.n ? "-S" : "--seapp");
	return false;
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
