/*
 * MMP, multiple mount protection (the mmp feature: images on storage that several machines
 * see). Its block says who holds the file system: a clean sequence (nobody), e2fsck's mark, or
 * the sequence a mounting kernel keeps changing. The image is opened without libext2fs's own
 * claim (EXT2_FLAG_SKIP_MMP), which writes the block at open, whatever follows, and waits twice
 * the update interval: a run that writes nothing (refused, nothing to change, a check) then leaves
 * the image byte for byte, and a copy (which never writes the original) does not claim it.
 * Nothing here prints.
 */
#include <errno.h>
#include <et/com_err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

/* "node NODE, device DEV, updated 2024-01-02 03:04:05 UTC" of an MMP block (in disk order) */
static void mmp_holder(const struct mmp_struct *m, char *out, size_t n)
{
	char when[40] = "at an unknown time";
	time_t t = (time_t)ext2fs_le64_to_cpu(m->mmp_time);
	struct tm tm;
	if (t && gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	snprintf(out, n, "node %.64s, device %.32s, updated %s",
		 *m->mmp_nodename ? (const char *)m->mmp_nodename : "(unnamed)",
		 *m->mmp_bdevname ? (const char *)m->mmp_bdevname : "(unnamed)", when);
}

int mmp_look(struct image *img, char *why, size_t n)
{
	ext2_filsys fs = img->fs;
	blk64_t blk = fs->super->s_mmp_block;
	struct mmp_struct *m;
	char who[200];
	int res = MMP_DAMAGED;

	if (!ext2fs_has_feature_mmp(fs->super))
		return MMP_NONE;
	if (blk <= fs->super->s_first_data_block || blk >= ext2fs_blocks_count(fs->super)) {
		snprintf(why, n, "its MMP block number %llu is outside the file system",
			 (unsigned long long)blk);
		return MMP_DAMAGED;
	}
	if (!(m = calloc(1, fs->blocksize)))
		return MMP_DAMAGED;
	/* Through the image's channel: every format's layout, and the image as it is on disk now
	 * (nothing has read this block before, so no cache holds it; a copy reads its input) */
	errcode_t rc = io_channel_read_blk64(fs->io, blk, -(int)sizeof(*m), m);
	uint32_t seq = ext2fs_le32_to_cpu(m->mmp_seq);
	if (rc) {
		snprintf(why, n, "its MMP block %llu cannot be read: %s", (unsigned long long)blk,
			 error_message(rc));
	} else if (ext2fs_le32_to_cpu(m->mmp_magic) != EXT4_MMP_MAGIC) {
		snprintf(why, n, "its MMP block %llu is not one (bad magic)",
			 (unsigned long long)blk);
	} else if (!ext2fs_mmp_csum_verify(fs, m)) {
		snprintf(why, n, "the checksum of its MMP block %llu does not match it",
			 (unsigned long long)blk);
	} else if (seq == EXT4_MMP_SEQ_CLEAN) {
		res = MMP_CLEAN;
		img->mmp_time = ext2fs_le64_to_cpu(m->mmp_time);
	} else {
		mmp_holder(m, who, sizeof(who));
		if (seq == EXT4_MMP_SEQ_FSCK)
			snprintf(why, n, "its MMP block says e2fsck (or another tool) has it open "
				 "on %s", who);
		else
			snprintf(why, n, "its MMP block says it is in use (mounted) on %s (sequence "
				 "%#x)", who, seq);
		res = MMP_HELD;
	}
	free(m);
	return res;
}

/* The claim before the first write in place: libext2fs's (a new sequence, a wait of twice the
 * update interval and a second, the sequence read back unchanged, then e2fsck's mark, which
 * another node's mount or e2fsck refuses); ext2fs_close2 then makes the sequence clean again. */
errcode_t mmp_claim(void *arg, char *why, size_t n)
{
	struct image *img = arg;
	ext2_filsys fs = img->fs;
	struct mmp_struct *m = calloc(1, fs->blocksize);
	char who[200];
	errcode_t rc;

	if (!m)
		return ENOMEM;
	/* (in place, the claim is written at once, below the writes held for a commit: it comes
	 * before the first of them) */
	io_channel held = fs->io;
	fs->io = imgfmt_overlay_lower(held);
	/* held since the open? (read past the channel's cache, as libext2fs reads it: where
	 * ext2fs_mmp_start would wait and take over a sequence that does not change, a node that
	 * took the image meanwhile is refused as at the open) */
	rc = ext2fs_mmp_read(fs, fs->super->s_mmp_block, m);
	if (!rc && ext2fs_le32_to_cpu(m->mmp_seq) != EXT4_MMP_SEQ_CLEAN) {
		mmp_holder(m, who, sizeof(who));
		snprintf(why, n, "its MMP block says another node took it during the run (%s); no "
			 "label written", who);
		rc = EXT2_ET_MMP_FAILED;
	} else if (!rc && (rc = ext2fs_mmp_start(fs))) {
		snprintf(why, n, "MMP: cannot claim it for writing (%s): another node took it "
			 "meanwhile; no label written", error_message(rc));
	} else if (rc) {
		snprintf(why, n, "MMP: cannot read its MMP block (%s); no label written",
			 error_message(rc));
	}
	free(m);
	if (rc) {
		fs->io = held;
		return rc;
	}
	fs->flags &= ~EXT2_FLAG_SKIP_MMP; /* (so that ext2fs_close2 stops it) */
	if (label_stop_signal) {
		/* SIGINT or SIGTERM cut the wait short: no label is written on a claim that did
		 * not wait its time; the sequence is made clean again */
		ext2fs_mmp_stop(fs);
		fs->io = held;
		fs->flags |= EXT2_FLAG_SKIP_MMP;
		snprintf(why, n, "interrupted while claiming it under MMP; no label written");
		return EXT2_ET_CANCEL_REQUESTED;
	}
	fs->io = held;
	img->mmp_started = true;
	return 0;
}
