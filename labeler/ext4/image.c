/* Opening an ext2/3/4 image with libext2fs, refusing what must not be written. */
#include <et/com_err.h>
#include <stdint.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <fcntl.h>
#include <libgen.h>
#include <unistd.h>

#include "internal.h"

/* The first group whose block bitmap disagrees with the free count of its descriptor (a bitmap
 * read from the wrong place, or with bits flipped: allocating from it could hand out blocks in
 * use), with the count the bitmap gives; -1 when all agree. */
static long bitmap_disagrees(ext2_filsys fs, unsigned long long *counted)
{
	blk64_t per = EXT2_CLUSTERS_PER_GROUP(fs->super);
	unsigned char *bits = malloc(per / 8 + 1);
	long bad = -1;

	if (!bits)
		return -1;
	for (dgrp_t g = 0; g < fs->group_desc_count && bad < 0; g++) {
		/* the bitmap counts clusters (blocks but under bigalloc), as the descriptor does */
		blk64_t first = EXT2FS_B2C(fs, ext2fs_group_first_block2(fs, g));
		blk64_t n = EXT2FS_B2C(fs, ext2fs_group_last_block2(fs, g)) - first + 1, used = 0;
		if (n > per || ext2fs_get_block_bitmap_range2(fs->block_map, first, (unsigned)n, bits))
			continue;
		for (blk64_t i = 0; i < n / 8; i++)
			used += (blk64_t)__builtin_popcount(bits[i]);
		for (blk64_t i = n / 8 * 8; i < n; i++)
			used += (bits[i / 8] >> (i % 8)) & 1;
		if (n - used != ext2fs_bg_free_blocks_count(fs, g)) {
			bad = (long)g;
			*counted = n - used;
		}
	}
	free(bits);
	return bad;
}

/* The inode size the superblock gives (0: cannot tell; ext2fs_open2 will say why). */
static unsigned inode_size_of(const char *name, uint64_t offset)
{
	unsigned char sb[1024];
	int fd = open(name, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : pread(fd, sb, sizeof(sb), (off_t)(offset + 1024));
	if (fd >= 0)
		close(fd);
	if (n != (ssize_t)sizeof(sb) || (sb[0x38] | sb[0x39] << 8) != EXT2_SUPER_MAGIC)
		return 0;
	unsigned rev = sb[0x4c] | sb[0x4d] << 8 | sb[0x4e] << 16 | (unsigned)sb[0x4f] << 24;
	return rev == EXT2_GOOD_OLD_REV ? EXT2_GOOD_OLD_INODE_SIZE : (unsigned)(sb[0x58] | sb[0x59] << 8);
}

/* Whether a labeled copy of raw image name can be made beside out: why not, or NULL. */
static const char *no_room_for_copy(const char *name, const char *out, char *why, size_t len)
{
	struct stat st;
	struct statvfs vfs;
	char *d = strdup(out);
	const char *dir = d ? dirname(d) : ".";
	const char *res = NULL;

	if (stat(name, &st) < 0) {
		snprintf(why, len, "%s", strerror(errno));
		res = why;
	} else if (access(dir, W_OK | X_OK) < 0) {
		snprintf(why, len, "%s: %s", dir, strerror(errno));
		res = why;
	} else if (statvfs(dir, &vfs) == 0 &&
		   (unsigned long long)vfs.f_bavail * vfs.f_frsize < (unsigned long long)st.st_blocks * 512) {
		snprintf(why, len, "%s has %llu KiB free, the copy needs %llu KiB", dir,
			 (unsigned long long)vfs.f_bavail * vfs.f_frsize >> 10,
			 (unsigned long long)st.st_blocks * 512 >> 10);
		res = why;
	}
	free(d);
	return res;
}

/* Whether raw image name is written as a labeled copy renamed over it (or over -o): on asking,
 * or by default with 128-byte inodes, whose labels take blocks whose writes no order makes
 * crash-safe in place. -1: refused (printed). */
static int choose_replace(const char *name, const struct img_params *p, const char *cmd)
{
	char why[512];
	const char *no;
	int mode = p ? p->replace : REPLACE_AUTO;
	const char *out = p && p->output ? p->output : name;
	struct stat st;

	if (p && p->output && mode == REPLACE_NEVER) {
		fprintf(stderr, "fclabel %s: %s: -o writes a new image; --in-place cannot go with it\n",
			cmd, name);
		return -1;
	}
	if (mode == REPLACE_ALWAYS || (p && p->output)) {
		if ((no = no_room_for_copy(name, out, why, sizeof(why)))) {
			fprintf(stderr, "fclabel %s: %s: cannot make the labeled copy: %s\n", cmd, name,
				no);
			return -1;
		}
		return 1;
	}
	if (mode == REPLACE_NEVER ||
	    inode_size_of(name, p->where.set ? p->where.offset : 0) != EXT2_GOOD_OLD_INODE_SIZE)
		return 0;
	if (stat(name, &st) == 0 && st.st_nlink > 1) {
		fprintf(stderr, "fclabel %s: warning: %s has %lu hard links: written in place, so that "
			"all of them see it (with 128-byte inodes, a killed run can leave a count that "
			"e2fsck corrects; --in-place silences this)\n", cmd, name,
			(unsigned long)st.st_nlink);
		return 0;
	}
	if ((no = no_room_for_copy(name, out, why, sizeof(why)))) {
		fprintf(stderr, "fclabel %s: warning: %s: no labeled copy can be made beside it (%s): "
			"written in place (with 128-byte inodes, a killed run can leave a count that "
			"e2fsck corrects; --in-place silences this)\n", cmd, name, no);
		return 0;
	}
	return 1;
}

/* Which io_manager reads (and writes) the image, by its format and the options; -1: refused
 * (printed). */
static int choose_manager(struct image *img, const char *name, bool rw, const struct img_params *p,
			  const char *cmd, io_manager *io)
{
	*io = unix_io_manager;
	if (p && img->fmt == IMGFMT_BLOCKDEV && (p->output || p->replace == REPLACE_ALWAYS)) {
		fprintf(stderr, "fclabel %s: %s: %s is for image files; a block device is written in "
			"place\n", cmd, name, p->output ? "-o" : "--atomic");
		return -1;
	}
	if (p && img->fmt == IMGFMT_SPARSE && p->replace == REPLACE_NEVER) {
		fprintf(stderr, "fclabel %s: %s: --in-place is for raw images; a sparse image is "
			"replaced whole, only when complete\n", cmd, name);
		return -1;
	}
	if (rw && img->fmt == IMGFMT_RAW) {
		int r = choose_replace(name, p, cmd);
		if (r < 0)
			return -1;
		img->replaced = r;
	}
	if (img->fmt == IMGFMT_SPARSE || img->replaced) {
		imgfmt_set_output(p ? p->output : NULL);
		imgfmt_set_sync(!(p && p->no_sync));
		imgfmt_set_image(name);
	}
	if (img->fmt == IMGFMT_SPARSE && rw) {
		char why[512];
		const char *no = no_room_for_copy(name, p && p->output ? p->output : name, why,
						  sizeof(why));
		if (no) {
			fprintf(stderr, "fclabel %s: %s: cannot make the labeled sparse image: %s\n",
				cmd, name, no);
			return -1;
		}
	}
	if (img->fmt == IMGFMT_SPARSE) {
		if (p && p->undo) {
			fprintf(stderr, "fclabel %s: %s: -z is for raw images and block devices; a sparse "
				"image is replaced whole, only when complete\n", cmd, name);
			return -1;
		}
		*io = imgfmt_sparse_manager;
	} else if (img->replaced) {
		*io = imgfmt_replace_manager;
	}
	/* A partition of a disk image: right above the format's manager, so that everything above
	 * (undo_io's records, the tracked manager, the overlay and its journal) sees the file
	 * system alone, and nothing reaches outside its range (part.c) */
	if (p && p->where.set) {
		imgfmt_set_part(*io, name, p->where.offset, p->where.size);
		*io = imgfmt_part_manager;
	}
	if (rw && p && p->undo && img->fmt != IMGFMT_SPARSE) {
		/* like tune2fs -z: a fresh undo file that e2undo replays */
		if (unlink(p->undo) < 0 && errno != ENOENT) {
			fprintf(stderr, "fclabel %s: -z %s: %s\n", cmd, p->undo, strerror(errno));
			return -1;
		}
		set_undo_io_backing_manager(*io);
		set_undo_io_backup_file((char *)p->undo);
		*io = undo_io_manager;
	}
	/* every I/O is seen: the first error stops the run (tracked.c) */
	imgfmt_set_tracked_inner(*io);
	*io = imgfmt_tracked_manager;
	/* written in place: held, and made durable as a crash needs it (overlay.c, inplace.c) */
	if (rw && img->fmt != IMGFMT_SPARSE && !img->replaced) {
		imgfmt_set_overlay_inner(*io);
		*io = imgfmt_overlay_manager;
	}
	return 0;
}

/* The file system, as quiet and reproducible as its input allows. */
static int open_fs(struct image *img, const char *name, bool rw, io_manager io, const char *cmd)
{
	/* (MMP is looked at and claimed here, only when a write comes: mmp.c) */
	errcode_t rc = ext2fs_open2(name, NULL, EXT2_FLAG_64BITS | EXT2_FLAG_SKIP_MMP |
				    (rw ? EXT2_FLAG_RW | EXT2_FLAG_EXCLUSIVE : 0), 0, 0, io, &img->fs);
	if (rc) {
		const char *detail = img->fmt == IMGFMT_SPARSE ? imgfmt_error() : NULL;
		if (detail)
			fprintf(stderr, "fclabel %s: %s\n", cmd, detail);
		else
			fprintf(stderr, "fclabel %s: %s: cannot open as an ext2/3/4 file system (%s "
				"image): %s\n", cmd, name, imgfmt_name(img->fmt), error_message(rc));
		img->fs = NULL;
		return -1;
	}
	/* The tracked manager keeps no I/O statistics, so ext2fs_close leaves s_kbytes_written
	 * alone: every format gives the same bytes (a sparse image's result equals the raw one's),
	 * and the superblock keeps what it said but for the blocks the labels need. */
	/* Reproducible results: the superblock's write time stays as it was (or becomes
	 * SOURCE_DATE_EPOCH), so the same input always gives the same bytes. */
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	img->fs->now = sde && *sde ? (time_t)strtoll(sde, NULL, 10) : (time_t)img->fs->super->s_wtime;
	return 0;
}

/* MMP: an image another node holds (mounted there, or e2fsck's mark) is not written, nor one
 * whose MMP block is damaged; read, with a warning. -1: refused (printed). */
static int check_mmp(struct image *img, const char *name, const char *cmd)
{
	char why[400];
	int r = mmp_look(img, why, sizeof(why));
	if (r == MMP_NONE || r == MMP_CLEAN)
		return 0;
	if (!img->rw)
		fprintf(stderr, "fclabel %s: warning: %s: %s: what is read may be stale\n", cmd,
			qname(name), why);
	else if (r == MMP_HELD)
		fprintf(stderr, "fclabel %s: %s: %s; refusing to write to it: nothing written (if "
			"no node uses it, 'tune2fs -f -E clear_mmp' makes it clean)\n", cmd,
			qname(name), why);
	else
		fprintf(stderr, "fclabel %s: %s: %s; refusing to write to it (run e2fsck first)\n",
			cmd, qname(name), why);
	return img->rw ? -1 : 0;
}

/* What the superblock says about the file system's state: written only with --force. */
static int check_state(struct image *img, const char *name, unsigned flags, const char *cmd)
{
	struct ext2_super_block *sb = img->fs->super;
	const char *problem = NULL;
	if (sb->s_state & EXT2_ERROR_FS)
		problem = "its superblock says the file system has errors (run e2fsck first)";
	else if (ext2fs_has_feature_journal_needs_recovery(sb))
		problem = "its journal needs recovery (mount it once, or run e2fsck first)";
	else if (!(sb->s_state & EXT2_VALID_FS))
		problem = "its superblock says it was not cleanly unmounted (run e2fsck first)";
	if (img->mounted && !img->rw) {
		/* a mounted file system's journal, state and blocks are the kernel's, on their way */
		char part[48] = "";
		if (img->part.set)
			snprintf(part, sizeof(part), "partition %d of ", img->part.number);
		fprintf(stderr, "fclabel %s: warning: %s%s is mounted%s: what is read may be stale "
			"(the kernel may not have written everything back yet)\n", cmd, part, name,
			problem ? ", and its superblock says it is in use" : "");
		return 0;
	}
	if (!problem)
		return 0;
	/* written in crash order, not through a journal: what an interrupted write leaves there is
	 * a leak, which is looked for and repaired before the first label (repair.c) */
	if (img->rw && img->ov_mode == IMGFMT_OV_ORDERED && !(flags & IMG_FORCE) &&
	    !(sb->s_state & EXT2_ERROR_FS) && !ext2fs_has_feature_journal_needs_recovery(sb)) {
		img->repair = true;
		return 0;
	}
	if (!img->rw) {
		fprintf(stderr, "fclabel %s: warning: %s: %s\n", cmd, name, problem);
	} else if (!(flags & IMG_FORCE)) {
		fprintf(stderr, "fclabel %s: %s: %s; refusing to write (--force to write anyway)\n",
			cmd, name, problem);
		return -1;
	} else {
		fprintf(stderr, "fclabel %s: warning: %s: %s; writing anyway (--force)\n", cmd, name,
			problem);
	}
	return 0;
}

/*
 * Damage everything else rests on, refused as e2fsck refuses it: a file shorter than its file
 * system (truncated), group descriptors that put bitmaps or inode tables outside the file system
 * or on top of other metadata, descriptor checksums that fail. A write would allocate over live
 * blocks (a bitmap read from the wrong place calls them free); a read would report on garbage.
 */
static int check_damage(struct image *img, const char *name, const char *cmd)
{
	ext2_filsys fs = img->fs;
	const char *damage = NULL;
	char dbuf[256];
	blk64_t dev_blocks = 0;
	errcode_t rc;

	/* (a partition of a disk image: what its range holds; the partition's own bounds against
	 * the disk's were checked when it was chosen, part.c) */
	if (img->part.set)
		dev_blocks = img->part.size / fs->blocksize;
	if ((img->part.set || (img->fmt != IMGFMT_SPARSE &&
			       !ext2fs_get_device_size2(name, (int)fs->blocksize, &dev_blocks) &&
			       dev_blocks)) &&
	    dev_blocks < ext2fs_blocks_count(fs->super)) {
		snprintf(dbuf, sizeof(dbuf), "%s %llu blocks of %u bytes but its file system "
			 "has %llu%s", img->part.set ? "its partition holds" : "it holds",
			 (unsigned long long)dev_blocks, fs->blocksize,
			 (unsigned long long)ext2fs_blocks_count(fs->super),
			 img->part.set ? "" : " (truncated?)");
		damage = dbuf;
	} else if ((rc = ext2fs_check_desc(fs))) {
		snprintf(dbuf, sizeof(dbuf), "its group descriptors are corrupt (%s)",
			 error_message(rc));
		damage = dbuf;
	} else if (ext2fs_has_group_desc_csum(fs)) {
		for (dgrp_t g = 0; g < fs->group_desc_count && !damage; g++)
			if (!ext2fs_group_desc_csum_verify(fs, g)) {
				snprintf(dbuf, sizeof(dbuf), "the checksum of group descriptor %u does "
					 "not match it", g);
				damage = dbuf;
			}
	}
	if (!damage)
		return 0;
	fprintf(stderr, "fclabel %s: %s: %s; refusing to %s it (run e2fsck first)\n", cmd, name,
		damage, img->rw ? "write" : "read");
	return -1;
}

/* Features e2fsck calls invalid together: it repairs such an image by dropping one (so the
 * blocks the other describes change hands), and a write before that may be undone or made
 * worse by it. Read, not written. */
static int check_features(struct image *img, const char *name, const char *cmd)
{
	struct ext2_super_block *sb = img->fs->super;
	if (!img->rw || !ext2fs_has_feature_resize_inode(sb) || !ext2fs_has_feature_meta_bg(sb))
		return 0;
	fprintf(stderr, "fclabel %s: %s: its features resize_inode and meta_bg are enabled together, "
		"which e2fsck calls invalid; refusing to write (run e2fsck first)\n", cmd, name);
	return -1;
}

static void release_order(struct image *img);

/* The bitmaps a walk needs: to tell a free inode (read-only too), to allocate (read-write). */
static int read_bitmaps(struct image *img, const char *name, const char *cmd)
{
	ext2_filsys fs = img->fs;
	if (!img->rw) {
		(void)ext2fs_read_inode_bitmap(fs);
		return 0;
	}
	/* (a bitmap an interrupted write left with a stale checksum is read, and recounted) */
	if (img->repair)
		fs->flags |= EXT2_FLAG_IGNORE_CSUM_ERRORS;
	errcode_t rc = ext2fs_read_bitmaps(fs);
	if (img->repair)
		fs->flags &= ~EXT2_FLAG_IGNORE_CSUM_ERRORS;
	if (rc) {
		fprintf(stderr, "fclabel %s: %s: cannot read the allocation bitmaps: %s\n", cmd, name,
			error_message(rc));
		return -1;
	}
	unsigned long long counted = 0;
	long g = img->repair ? -1 : bitmap_disagrees(fs, &counted);
	if (g >= 0) {
		fprintf(stderr, "fclabel %s: %s: the block bitmap of group %ld has %llu free blocks but "
			"its descriptor says %u (a damaged bitmap could hand out blocks in use); "
			"refusing to write (run e2fsck first)\n", cmd, name, g, counted,
			ext2fs_bg_free_blocks_count(fs, (dgrp_t)g));
		return -1;
	}
	return 0;
}

int img_open(struct image *img, const char *name, unsigned flags, const struct img_params *p,
	     const char *cmd)
{
	bool rw = flags & IMG_RW;
	char why[256] = "";
	io_manager io;

	memset(img, 0, sizeof(*img));
	img->name = name;
	img->lockfd = -1;
	if (p)
		img->part = p->where;
	if (imgfmt_detect(name, &img->fmt, why, sizeof(why))) {
		fprintf(stderr, "fclabel %s: %s: %s\n", cmd, name, why);
		return -1;
	}
	/* with -o, the image is only read: others may read it too */
	if (img_lock(img, name, rw && !(p && p->output), p ? p->lock : LOCK_WAIT, cmd))
		return -1;
	if (choose_manager(img, name, rw, p, cmd, &io) ||
	    img_check_mounted(name, rw, cmd, &img->mounted) ||
	    img_check_part_mounted(name, &img->part, rw, cmd, &img->mounted) ||
	    img_note_target(img, name, cmd) ||
	    open_fs(img, name, rw, io, cmd)) {
		img_unlock(img);
		return -1;
	}
	img->rw = rw;
	img->no_sync = p && p->no_sync;
	if (check_mmp(img, name, cmd)) {
		ext2fs_free(img->fs);
		img->fs = NULL;
		img_unlock(img);
		return -1;
	}
	/* in place, the first write claims the image under MMP (a replay of its journal too); a
	 * copy never writes the original (img_close looks at its MMP block again before the
	 * result replaces it) */
	bool claim = rw && ext2fs_has_feature_mmp(img->fs->super) && !img_whole_or_nothing(img);
	imgfmt_set_before_write(claim ? mmp_claim : NULL, img);
	bool reopen = false;
	if (rw && img_recover(img, cmd, &reopen)) {
		ext2fs_free(img->fs);
		img->fs = NULL;
		imgfmt_set_before_write(NULL, NULL);
		img_unlock(img);
		return -1;
	}
	if (reopen) {
		/* what was read of it came before the replay: read again, over the same channel
		 * (a copy being made holds the replay) */
		io_channel ch = img->fs->io;
		ch->refcount++;
		ext2fs_free(img->fs);
		img->fs = NULL;
		imgfmt_set_reuse(ch);
		if (open_fs(img, name, rw, imgfmt_reuse_manager, cmd)) {
			imgfmt_set_reuse(NULL);
			io_channel_close(ch);
			imgfmt_set_before_write(NULL, NULL);
			img_unlock(img);
			return -1;
		}
	}
	if ((rw && !(p && p->unsafe) && img_begin_writes(img, !img->no_sync, cmd, false)) ||
	    check_state(img, name, flags, cmd) || check_features(img, name, cmd) ||
	    check_damage(img, name, cmd) ||
	    read_bitmaps(img, name, cmd) || (rw && !img_still_target_open(img, cmd)) ||
	    (img->repair && img_repair(img, cmd))) {
		/* (refused before anything was written: nothing of it is) */
		if (imgfmt_overlay_active(img->fs->io))
			imgfmt_overlay_discard(img->fs->io);
		if (img->mmp_started)
			ext2fs_mmp_stop(img->fs);
		release_order(img);
		ext2fs_free(img->fs);
		img->fs = NULL;
		imgfmt_set_before_write(NULL, NULL);
		img_release(img);
		img_unlock(img);
		return -1;
	}
	return 0;
}

/* What classifies the ordered writes: it goes before the file system it was read from. */
static void release_order(struct image *img)
{
	if (img->fs)
		imgfmt_overlay_set_order(img->fs->io, NULL, NULL);
	free(img->itab);
	img->itab = NULL;
	img->nitab = 0;
	if (img->records)
		ext2fs_free_block_bitmap(img->records);
	img->records = NULL;
}

void img_release(struct image *img)
{
	release_order(img);
	imgfmt_journal_free(img->journal);
	img->journal = NULL;
}

void img_abandon(struct image *img)
{
	if (img->fs && (img->fmt == IMGFMT_SPARSE || img->replaced))
		imgfmt_discard(img->fs->io); /* (through undo_io's channel too) */
	/* in place, what the last commit made durable stands; what was held since is dropped, and
	 * so is what libext2fs holds in memory of it (the close writes none of it) */
	if (img->fs && imgfmt_overlay_active(img->fs->io)) {
		imgfmt_overlay_discard(img->fs->io);
		img->abandoned = true;
	}
}

bool image_is_labeled(struct image *img)
{
	struct ext2_xattr_handle *h;
	void *val = NULL;
	size_t len = 0;
	bool labeled = false;

	if (ext2fs_xattrs_open(img->fs, EXT2_ROOT_INO, &h))
		return true; /* cannot tell: assume it is, and prune */
	if (ext2fs_xattrs_read(h))
		labeled = true; /* cannot tell */
	else
		labeled = !ext2fs_xattr_get(h, "security.selinux", &val, &len);
	free(val);
	ext2fs_xattrs_close(&h);
	return labeled;
}

/* A copy's original taken by another node during the run: its MMP block is no longer the clean
 * one seen at the open (a mount there changes it, even one that has ended). */
static bool mmp_taken(struct image *img, char *why, size_t n)
{
	uint64_t then = img->mmp_time;
	char what[400];
	int r;

	if (!ext2fs_has_feature_mmp(img->fs->super))
		return false;
	r = mmp_look(img, what, sizeof(what));
	if (r == MMP_CLEAN && img->mmp_time == then)
		return false;
	if (r == MMP_CLEAN)
		snprintf(what, sizeof(what), "its MMP block was written during the run (another "
			 "node mounted it)");
	snprintf(why, n, "%s: %s", qname(img->name), what);
	return true;
}

int img_close(struct image *img, const char *cmd)
{
	errcode_t rc;
	char moved[512];

	if (!img->fs) {
		img_unlock(img);
		return 0;
	}
	/* The path names another file now: a copy is not put over it (the copy writer looks
	 * again, race-free, as it renames), and in place what is not written yet is not written;
	 * a copy of an image another node took during the run (MMP) is not put over it either */
	bool gone = img->rw && !img_still_target(img, moved, sizeof(moved));
	if ((gone && (img_whole_or_nothing(img) || !imgfmt_written())) ||
	    (img->rw && !gone && img_whole_or_nothing(img) && imgfmt_written() &&
	     mmp_taken(img, moved, sizeof(moved)))) {
		img_abandon(img);
		ext2fs_free(img->fs); /* (closes the channel: nothing is written) */
		imgfmt_set_before_write(NULL, NULL);
		img->fs = NULL;
		img->lost = gone;
		img_unlock(img);
		fprintf(stderr, "fclabel %s: %s; nothing written\n", cmd, moved);
		return -1;
	}
	/* What was written reaches the disk before we say it is done: the inodes first, then
	 * (when blocks were allocated) ext2fs_close writes and syncs the bitmaps and superblock.
	 * A copy (sparse, or renamed over the image) is written, synced and renamed by its
	 * channel's close: ext2fs_close2 throws that close's error away, so the channel is kept
	 * open through it (one more reference) and closed here, where its error is seen. */
	io_channel io = img->fs->io;
	bool overlay = imgfmt_overlay_active(io);
	rc = 0;
	/* (a run that wrote nothing in place has nothing to wait for: no sync, which costs a
	 * device cache flush; in place, the overlay's commits sync what they write) */
	if (img->rw && !img->no_sync && !overlay &&
	    (imgfmt_written() ||
	     imgfmt_inner_channel(imgfmt_overlay_lower(io))->manager != unix_io_manager))
		rc = io_channel_flush(io);
	if (!rc && overlay && img->abandoned) {
		/* the file system as the last commit left it: nothing of memory written */
		io->refcount++;
		release_order(img);
		if (img->mmp_started)
			ext2fs_mmp_stop(img->fs); /* (the sequence clean again, in the last commit) */
		ext2fs_free(img->fs);
		img->fs = NULL;
		if (img->keep_marker)
			imgfmt_overlay_abort(io);
		else
			rc = imgfmt_overlay_end(io, &img->ovst);
		errcode_t rc2 = io_channel_close(io);
		if (!rc)
			rc = rc2;
		img_release(img); /* (the journal, once the overlay is done with it) */
		img_unlock(img);
		goto said;
	}
	if (!rc) {
		/* what the close writes is allocation records only (the labels were committed):
		 * their order among themselves is free, and the classifier goes with the file
		 * system */
		release_order(img);
		io->refcount++;
		rc = ext2fs_close2(img->fs, img->no_sync ? EXT2_FLAG_FLUSH_NO_SYNC : 0);
		if (rc)
			io->refcount--;
		else
			img->fs = NULL;
	}
	if (rc) {
		img_abandon(img);
		if (img->mmp_started)
			ext2fs_mmp_stop(img->fs); /* (best effort: the sequence clean again) */
		ext2fs_free(img->fs); /* (closes the channel: nothing is written) */
	} else {
		/* the last commit, then the superblock's marker taken off */
		if (overlay)
			rc = imgfmt_overlay_end(io, &img->ovst);
		errcode_t rc2 = io_channel_close(io);
		if (!rc)
			rc = rc2;
	}
	imgfmt_set_before_write(NULL, NULL);
	img->fs = NULL;
	img_release(img);
	img_unlock(img); /* the result is on disk, renamed into place */
	/* in place: what was written went to the file opened, wherever the path now points */
	if (!rc && img->rw && !img_whole_or_nothing(img) &&
	    !img_still_target(img, moved, sizeof(moved))) {
		img->lost = true;
		fprintf(stderr, "fclabel %s: %s: what was written went to the file that was opened, "
			"which that path no longer names (the file there now is untouched)\n", cmd,
			moved);
		return -1;
	}
said:
	if (!rc)
		return 0;
	const char *why = imgfmt_error();
	if (!why)
		why = imgfmt_io_error();
	if (why)
		fprintf(stderr, "fclabel %s: %s\n", cmd, why);
	else
		fprintf(stderr, "fclabel %s: %s: %s failed: %s\n", cmd, img->name,
			img->rw ? "writing the result (flush and close)" : "closing", error_message(rc));
	return -1;
}

bool img_whole_or_nothing(const struct image *img)
{
	return img->fmt == IMGFMT_SPARSE || img->replaced;
}

errcode_t img_read_ino(struct image *img, ext2_ino_t ino, char **buf, size_t *len, size_t max)
{
	ext2_filsys fs = img->fs;
	ext2_file_t file;
	struct ext2_inode inode;
	errcode_t rc;
	char *b = NULL;

	*buf = NULL;
	*len = 0;
	if ((rc = ext2fs_read_inode(fs, ino, &inode)))
		return rc;
	if (!LINUX_S_ISREG(inode.i_mode))
		return EXT2_ET_FILE_NOT_FOUND;
	unsigned long long size = EXT2_I_SIZE(&inode);
	if (size > max)
		return EXT2_ET_FILE_TOO_BIG;
	if (!(b = malloc((size_t)size + 1)))
		return ENOMEM;
	if ((rc = ext2fs_file_open(fs, ino, 0, &file))) {
		free(b);
		return rc;
	}
	unsigned int got = 0;
	size_t done = 0;
	while (done < size) {
		rc = ext2fs_file_read(file, b + done, (unsigned)(size - done), &got);
		if (rc || !got)
			break;
		done += got;
	}
	errcode_t rc2 = ext2fs_file_close(file);
	if (!rc && done < size)
		rc = EXT2_ET_SHORT_READ;
	if (rc || rc2) {
		free(b);
		return rc ? rc : rc2;
	}
	b[done] = 0;
	*buf = b;
	*len = done;
	return 0;
}

errcode_t img_read_file(struct image *img, const char *path, char **buf, size_t *len,
			size_t max)
{
	ext2_ino_t ino;
	errcode_t rc;

	*buf = NULL;
	*len = 0;
	/* namei follows no symlink in the last component: a packages.list that is one is refused */
	if ((rc = ext2fs_namei(img->fs, EXT2_ROOT_INO, EXT2_ROOT_INO, path, &ino)))
		return rc;
	return img_read_ino(img, ino, buf, len, max);
}
