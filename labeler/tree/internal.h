/* Private to the live-tree walk (tree.c, treepool.c, io.c): its state, and the steps both walks
 * use. tree.c calls treepool.c; both call io.c, which calls neither. */
#ifndef TREE_H
#define TREE_H

#include <stdio.h>
#include <sys/stat.h>

#include "tree.h"

#define SELINUX_XATTR "security.selinux"
#define TREE_PROC_LEN 32 /* "/proc/self/fd/N" */

struct ahead;

/* The walk's handle on one inode (label_file.h). */
struct handle {
	int fd;
	bool opath;                /* an O_PATH descriptor: reached through /proc/self/fd */
	const struct ahead *ahead; /* a threaded walk: what a thread read and wrote, no fd */
};

/* A directory being listed by the one-thread walk. */
struct frame {
	int fd;
	dev_t dev;
	ino_t ino;
	size_t pathlen;
	char *ents; /* packed: d_type (1 byte), name, NUL */
	size_t size, cap, pos;
};

struct tree {
	const char *root;
	const struct label_opts *o;
	const fc_set *set;
	unsigned threads;
	char *val;
	size_t valcap;
	char proc[TREE_PROC_LEN];
	char *path;
	size_t pathlen, pathcap;
	unsigned long mounts;  /* mount points not entered */
	char *first_mount;
	/* the walk: the directories being listed, each with its descriptor */
	struct frame *stack;
	size_t depth, cap;
	dev_t rootdev;
	char msg[512];
};

/* ---- io.c: one entry's I/O ---- */

/* path[0..at) + "/" + name (n bytes): the path of an entry; 0 or ENOMEM. */
int tree_path_set(struct tree *t, size_t at, const char *name, size_t n);
/* The whole listing of f->fd into f->ents, in getdents order: 0 or an errno (what was read
 * before an error is kept). */
int tree_read_dir(struct frame *f);
/* Opens name in dfd (never through a symlink; O_PATH for what is neither a regular file nor a
 * directory) and fstat()s it: 0 or an errno. */
int tree_open_entry(int dfd, const char *name, unsigned char type, struct handle *h,
		    struct stat *sb);
/* The label through h into *val (grown as needed; NUL-terminated), its length in *len: 0,
 * ENODATA when there is none, or an errno. proc: TREE_PROC_LEN bytes of room. */
int tree_read_label(const struct handle *h, char *proc, char **val, size_t *cap, size_t *len);
/* Writes ctx and its NUL through h: 0 or an errno. */
int tree_write_label(const struct handle *h, char *proc, const char *ctx);
/* ... only when there is no label yet: 0, EEXIST when there is one, or another errno. */
int tree_create_label(const struct handle *h, char *proc, const char *ctx);
/* The label of name in the directory dfd by name (getxattrat, never through a symlink), as
 * tree_read_label; ENOSYS before Linux 6.13. */
int tree_read_label_at(int dfd, const char *name, char **val, size_t *cap, size_t *len);
/* Why a label could not be read (errno e). */
void tree_label_error(char *why, size_t n, bool opath, int e);
bool tree_encrypted(const struct handle *h);
/* Whether tree_open_dir_fast may use openat2 and statx here (see io.c): once per walk. */
void tree_fast_init(void);
/* Opens the directory name of dfd, where no other file system is mounted (never through a
 * symlink, nor triggering an automount), with its stat and encrypt flag: 0, or -1 when it did
 * not (a mount point, not a directory, an error, no such calls here): then the plain calls
 * (fstatat, tree_open_entry) do it, and say why. */
int tree_open_dir_fast(int dfd, const char *name, struct handle *h, struct stat *sb,
		       bool *encrypted);
/* A mount point not entered: counted, named with -v. t->path is its path. */
void tree_other_fs(struct tree *t);

/* twice.c: whether a walk of root (entering other file systems with cross) can meet an inode
 * twice through mounts: a device mounted twice within it, the two showing overlapping parts of
 * it; then the two mount points (malloc'd; either may be NULL when out of memory). */
bool tree_mounted_twice(const char *root, bool cross, char **first, char **second);

/* treepool.c: the walk with t->threads threads: the entries of each directory opened, stat'ed,
 * their labels read, looked up and (label_writes_ahead) written by whichever thread lists the
 * directory; the engine still sees every entry in the one-thread walk's order. */
long tree_walk_threads(struct tree *t, struct label_run *run, int rootfd, const struct stat *sb);
/* The engine's get and set on an entry a thread handled. */
int ahead_get(const struct ahead *a, const char **val, size_t *len, char *why, size_t n);
int ahead_set(struct tree *t, const struct ahead *a, const char *ctx);

#endif
