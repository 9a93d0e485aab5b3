/*
 * labeler/erofs/: an EROFS image, read only (EROFS is written once, by mkfs.erofs, and never
 * changed in place: its labels come from `mkfs.erofs --file-contexts`). Our own reader, from the
 * published on-disk format (the kernel's fs/erofs/erofs_fs.h): the superblock, compact and
 * extended inodes, plain, inline and compressed directories, inline and shared xattrs with long
 * name prefixes, data uncompressed, chunked or compressed (LZ4, LZMA, DEFLATE, Zstandard; tail
 * packing, fragments, dedupe). Through struct label_src the engine checks an EROFS image as it
 * checks ext4.
 */
#ifndef LABELER_EROFS_H
#define LABELER_EROFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fcontexts.h"
#include "engine/engine.h"

struct erofs_img;

/* Whether the file at path holds an EROFS superblock (its magic at byte 1024): 1, 0 (it does
 * not, or it is too short), -1 when it cannot be read (errno). */
int erofs_probe(const char *path);
/* Whether the 4 bytes at byte 1024 of an image are EROFS's magic. */
bool erofs_is_magic(const unsigned char *m);
/* Opens the image read-only and checks its superblock: 0, or -1 with why (naming the image)
 * in why. */
int erofs_open(const char *path, struct erofs_img **out, char *why, size_t n);
/* ... the EROFS file system len bytes long at byte off of the file (a partition of a disk
 * image; len 0: to the end of the file). */
int erofs_open_range(const char *path, uint64_t off, uint64_t len, struct erofs_img **out,
		     char *why, size_t n);
/* The same for an image already open as fd (named name in messages), which the image takes
 * (closed by erofs_close, or at once when the open fails). */
int erofs_open_fd(const char *name, int fd, struct erofs_img **out, char *why, size_t n);
void erofs_close(struct erofs_img *img);
/* Checks (or, in a dry run, lists) every file of the image through the engine; a write is
 * refused (LSET_REFUSED). 0 when the walk completed. */
int erofs_label(struct erofs_img *img, const fc_set *set, const struct label_opts *o,
		struct label_stats *st);
/* The regular file at path (from the image's root), at most max bytes, into a NUL-terminated
 * malloc'd *buf: 0, or -1 with why. */
int erofs_read_file(struct erofs_img *img, const char *path, char **buf, size_t *len, size_t max,
		    char *why, size_t n);
/* ---- by inode, for --android-root's walk of a device's tree (nids: erofs_fs.h's inode
 * numbers). Errors are errnos: EUCLEAN (as the kernel's EFSCORRUPTED) for a damaged image,
 * with why in why. ---- */
uint64_t erofs_root_nid(const struct erofs_img *img);
/* name (nlen bytes) in directory dir: 0 with *nid and *mode, ENOENT when it is not there. */
int erofs_find(struct erofs_img *img, uint64_t dir, const char *name, size_t nlen,
	       uint64_t *nid, unsigned *mode, char *why, size_t n);
/* A symlink's target, NUL-terminated (at most cap - 1 bytes, else ENAMETOOLONG). */
int erofs_readlink(struct erofs_img *img, uint64_t nid, char *buf, size_t cap, char *why,
		   size_t n);
/* A regular file's bytes, as erofs_read_file. */
int erofs_read_nid(struct erofs_img *img, uint64_t nid, char **buf, size_t *len, size_t max,
		   char *why, size_t n);
/* fn(name, nlen, arg) for each entry of directory dir but "." and "..", until it returns
 * true. */
int erofs_list(struct erofs_img *img, uint64_t dir, bool (*fn)(const char *name, size_t nlen,
							     void *arg),
	       void *arg, char *why, size_t n);
/* The volume name mkfs.erofs -L gave it ("" when none), NUL-terminated. */
void erofs_volume_name(const struct erofs_img *img, char out[17]);
/* Whether the root directory carries a label. */
bool erofs_is_labeled(struct erofs_img *img);
/* What `label` and `relabel` say when given an EROFS image. */
#define EROFS_REFUSAL "an EROFS image is read-only: its labels are set when it is built, by " \
	"mkfs.erofs --file-contexts FILE; fclabel can check it, not write it"

#endif
