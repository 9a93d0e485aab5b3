/* labeler/policy/: what androidroot.c, devtree.c and devcheck.c share: the device's tree. */
#ifndef LABELER_POLICY_INTERNAL_H
#define LABELER_POLICY_INTERNAL_H

#include <stdbool.h>
#include <stdio.h>

#include "policy.h"
#include "erofs/erofs.h"
#include "ext4/ext4.h"

#define AROOT_MAX_FILE (256u << 20)
#define AROOT_MAX_LINKS 40
#define AROOT_PATH_MAX 4096

/* "system", "system_ext", "product", "vendor", "odm": what --partition NAME= names */
extern const char *const dt_part_names[AROOT_PARTS];
enum { P_SYSTEM, P_SYSTEM_EXT, P_PRODUCT, P_VENDOR, P_ODM };

/* Where a partition, or ROOT, is read from. */
struct src {
	char *label;    /* its path, as messages name it */
	bool image;
	bool empty;     /* a directory with nothing in it: a mount point with nothing mounted */
	int fd;         /* a directory: an O_PATH descriptor */
	struct image img;
	struct erofs_img *ero; /* an EROFS image (image is true): read by erofs/, not img */
	struct img_part where; /* the partition of a disk image it is (where.set), or none */
	bool ero_sparse;       /* ... in Android's sparse format */
	bool open;
};

/* The device's tree: what is mounted at "/" and at "/NAME". */
struct ns {
	const char *cmd;
	const char *ropt, *popt;      /* the options' names: --android-root, --partition */
	const char *policy;           /* what lines call the policy: "policy" */
	struct src rootdir;           /* ROOT (a directory) */
	struct src part[AROOT_PARTS];
	bool none[AROOT_PARTS];       /* --partition NAME=none: nothing mounted at /NAME */
	struct src *root;             /* at "/": the system partition when it is system-as-root,
				       * else ROOT, else none */
	bool sar;
	char *sysguess;               /* ROOT/system_root (or ROOT/mnt/system), not empty: where a
				       * recovery mounts the device's system, when not given */
	errcode_t err;                /* the last lookup's error, when not an errno */
};

enum kind { K_NONE, K_DIR, K_FILE, K_LINK, K_OTHER };

/* One directory of the walk: its source, and the path inside that source (inner[0..in_len),
 * from in_start) or its inode. */
struct level {
	struct src *src;
	ext2_ino_t ino;
	size_t in_start, in_len;
};

struct walk {
	struct level lv[AROOT_PATH_MAX / 2];
	size_t depth;
	char inner[AROOT_PATH_MAX * 2]; /* the levels' paths inside their sources, one after another */
	char link[AROOT_PATH_MAX];
};

/* ---- devtree.c: the tree, and paths resolved in it ---- */
/* Says so ("fclabel CMD: out of memory"): -1. */
int dt_oom(const char *cmd);
/* dir/name, malloc'd; NULL when out of memory. */
char *dt_join(const char *dir, const char *name);
/* Whether path is a directory with nothing in it. */
bool dt_dir_empty(const char *path);
/* The tree from the options: ROOT and the partitions opened (images read-only, with lock).
 * -1 after saying why. */
int dt_build(struct ns *ns, const struct aroot_args *a, int lock);
void dt_close(struct ns *ns);
/*
 * The device's path in this tree, resolved from top (the device's "/": ns->root) as its kernel
 * would: components from "/", a mount's root at "/NAME", symlinks followed (an absolute target
 * from "/", at most AROOT_MAX_LINKS), ".." back up. *kind is what is there (K_NONE: nothing, or
 * a file in the middle of the path); w's top level is it. 0, or an errno / errcode_t.
 */
errcode_t dt_resolve_in(struct ns *ns, struct src *top, struct walk *w, const char *path,
			enum kind *kind);
errcode_t dt_resolve(struct ns *ns, struct walk *w, const char *path, enum kind *kind);
/* Where a resolved file was read from, as messages name it: a path, or IMAGE:/PATH; malloc'd,
 * NULL when out of memory. */
char *dt_from_name(const struct walk *w, const struct level *l);
/* seapp_find_policy's exists(): 1 when the device has something at path, 0 when not, -errno. */
int dt_exists(void *ns, const char *path);
/* Reads the device's file at path (resolved from top) into *buf (*len bytes); *from says where
 * it was. 0, or -1 after saying why. */
int dt_read_in(struct ns *ns, struct src *top, const char *path, char **buf, size_t *len,
	       char **from);
int dt_read(struct ns *ns, const char *path, char **buf, size_t *len, char **from);
/* fn(name, nlen, arg) for each entry of a directory but "." and "..", until it returns true */
typedef bool (*entry_fn)(const char *name, size_t nlen, void *arg);
/* The entries of the directory at level l (of w): 0, or an errno / errcode_t. */
errcode_t dt_list(const struct walk *w, const struct level *l, entry_fn fn, void *arg);
/* "/ = ROOT (directory), /system = ROOT/system.img (raw image), ..." */
void dt_describe(const struct ns *ns, FILE *f);

/* ---- devcheck.c: is it the device's tree? ---- */
/* A recovery's own policy files at ROOT's root, taken for the device's: -1 after saying why. */
int dt_ramdisk_check(struct ns *ns, struct walk *w, const struct seapp_policy *pol);
/* A partition's mount point that is an empty directory: -1 after saying why. legacy: before
 * Treble (only /system matters). */
int dt_mounts_check(struct ns *ns, struct walk *w, bool legacy);
/* An incomplete set: says what is missing, what was looked for, and where. */
void dt_refuse(const struct ns *ns, const struct seapp_policy *pol);

#endif
