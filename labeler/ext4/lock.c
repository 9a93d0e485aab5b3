/*
 * Who else has the image: a mount (the mount table, or a loop device backed by it), a lock of
 * another process (the BSD lock util-linux and systemd take, a byte-range one as QEMU takes), or
 * a rename during the run (its path no longer names the file opened). image.c asks as it opens
 * and closes the image, the image source (source.c) before each write.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "internal.h"

/* fn(path, its status, arg) for each loop device (/dev/loopN, Android's /dev/block/loopN) whose
 * backing file is st, until it returns true. */
static void each_loop(const struct stat *st,
		      bool (*fn)(const char *path, const struct loop_info64 *li, void *arg), void *arg)
{
	static const char *const dirs[] = { "/dev/block", "/dev" };
	bool done = false;
	for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]) && !done; d++) {
		DIR *dir = opendir(dirs[d]);
		struct dirent *de;
		while (dir && !done && (de = readdir(dir))) {
			struct loop_info64 li;
			char path[300];
			if (strncmp(de->d_name, "loop", 4) || !isdigit((unsigned char)de->d_name[4]))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dirs[d], de->d_name);
			int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
			if (fd < 0)
				continue;
			if (!ioctl(fd, LOOP_GET_STATUS64, &li) && li.lo_inode == st->st_ino &&
			    li.lo_device == (uint64_t)st->st_dev)
				done = fn(path, &li, arg);
			close(fd);
		}
		if (dir)
			closedir(dir);
	}
}

struct first_loop {
	char *dev;
	size_t n;
};

static bool take_first(const char *path, const struct loop_info64 *li, void *arg)
{
	struct first_loop *f = arg;
	(void)li;
	snprintf(f->dev, f->n, "%s", path);
	return true;
}

/* The loop device whose backing file is st, into dev ("" for none): how an image file is
 * mounted. */
static void loop_backed_by(const struct stat *st, char *dev, size_t n)
{
	struct first_loop f = { dev, n };
	dev[0] = 0;
	each_loop(st, take_first, &f);
}

/* No mount table to read (/proc not mounted, as in a bare chroot or an early ramdisk): a block
 * device is opened exclusively (EXT2_FLAG_EXCLUSIVE), which the kernel refuses while it is
 * mounted; an image file is refused when a loop device has it. -1: refused (printed). */
static int check_mounted_without_table(const char *name, const char *cmd)
{
	struct stat st;
	char dev[300] = "";
	if (stat(name, &st)) {
		fprintf(stderr, "fclabel %s: %s: %s\n", cmd, name, strerror(errno));
		return -1;
	}
	if (S_ISREG(st.st_mode))
		loop_backed_by(&st, dev, sizeof(dev));
	if (dev[0]) {
		fprintf(stderr, "fclabel %s: %s is the backing file of %s (mounted, perhaps); refusing "
			"to write to it (losetup -d %s detaches it)\n", cmd, name, dev, dev);
		return -1;
	}
	fprintf(stderr, "fclabel %s: note: no mount table (/proc/mounts, /etc/mtab: is /proc "
		"mounted?): %s\n", cmd, S_ISREG(st.st_mode) ? "the image backs no loop device"
		: "the device is opened exclusively, which the kernel refuses while it is mounted");
	return 0;
}

/* A mounted (or otherwise busy) image is not written; -1: refused (printed). *mounted: whether
 * it is mounted. */
int img_check_mounted(const char *name, bool rw, const char *cmd, bool *mounted)
{
	int mflags = 0;
	errcode_t rc = ext2fs_check_if_mounted(name, &mflags);
	if (rc == EXT2_ET_NO_MTAB_FILE)
		return rw ? check_mounted_without_table(name, cmd) : 0;
	if (rc) {
		fprintf(stderr, "fclabel %s: %s: cannot tell whether it is mounted: %s\n", cmd, name,
			error_message(rc));
		return -1;
	}
	*mounted = mflags & EXT2_MF_MOUNTED;
	if (rw && (mflags & EXT2_MF_MOUNTED)) {
		fprintf(stderr, "fclabel %s: %s is mounted%s; refusing to write to it (unmount it, or "
			"use 'fclabel check' to read it)\n", cmd, name,
			(mflags & EXT2_MF_READONLY) ? " read-only" : "");
		return -1;
	}
	if (rw && (mflags & EXT2_MF_BUSY)) {
		fprintf(stderr, "fclabel %s: %s is in use by the system; refusing to write to it\n",
			cmd, name);
		return -1;
	}
	return 0;
}

/*
 * A partition of a disk is mounted through a device of its own, which the whole disk's mount
 * check does not see: the disk's partition device (/dev/sda2: a block device's partition in
 * sysfs, starting at the partition's offset), or for a disk image a loop device over it (losetup
 * -P's /dev/loop0p2, or losetup -o OFFSET's /dev/loop1). Each such device is looked up in the
 * mount table (its major:minor in /proc/self/mountinfo).
 */
struct part_devs {
	uint64_t off;
	dev_t dev[16];
	char name[16][300];
	size_t n;
};

static void add_dev(struct part_devs *d, dev_t dev, const char *name)
{
	if (d->n < sizeof(d->dev) / sizeof(d->dev[0])) {
		d->dev[d->n] = dev;
		snprintf(d->name[d->n++], sizeof(d->name[0]), "%.280s", name);
	}
}

/* The partitions of block device whole (sysfs: /sys/dev/block/M:m/NAME/{partition,start,dev})
 * that start at d->off. */
static void sysfs_parts_at(dev_t whole, struct part_devs *d)
{
	char dir[128], f[512], buf[64];
	snprintf(dir, sizeof(dir), "/sys/dev/block/%u:%u", major(whole), minor(whole));
	DIR *dd = opendir(dir);
	struct dirent *de;
	while (dd && (de = readdir(dd))) {
		unsigned long long start;
		unsigned ma, mi;
		FILE *fp;
		if (de->d_name[0] == '.')
			continue;
		snprintf(f, sizeof(f), "%s/%s/start", dir, de->d_name);
		if (!(fp = fopen(f, "re")))
			continue;
		bool got = fgets(buf, sizeof(buf), fp) && sscanf(buf, "%llu", &start) == 1;
		fclose(fp);
		if (!got || start * 512 != d->off)
			continue;
		snprintf(f, sizeof(f), "%s/%s/dev", dir, de->d_name);
		if (!(fp = fopen(f, "re")))
			continue;
		got = fgets(buf, sizeof(buf), fp) && sscanf(buf, "%u:%u", &ma, &mi) == 2;
		fclose(fp);
		if (got) {
			snprintf(f, sizeof(f), "/dev/%.200s", de->d_name);
			add_dev(d, makedev(ma, mi), f);
		}
	}
	if (dd)
		closedir(dd);
}

static bool loop_at(const char *path, const struct loop_info64 *li, void *arg)
{
	struct part_devs *d = arg;
	struct stat ls;
	if (stat(path, &ls) || !S_ISBLK(ls.st_mode))
		return false;
	if (li->lo_offset == d->off)
		add_dev(d, ls.st_rdev, path); /* (losetup -o OFFSET: the partition alone) */
	else if (li->lo_offset == 0)
		sysfs_parts_at(ls.st_rdev, d); /* (losetup -P: its partitions' devices) */
	return false;
}

/* Where the device is mounted (its first mount point, into at), or false. */
static bool dev_mounted(dev_t dev, char *at, size_t n)
{
	FILE *fp = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	bool found = false;
	while (fp && !found && fgets(line, sizeof(line), fp)) {
		unsigned ma, mi;
		char mp[2048];
		/* "36 35 98:0 /mnt1 /mnt2 rw,noatime ..." */
		if (sscanf(line, "%*d %*d %u:%u %*s %2047s", &ma, &mi, mp) == 3 &&
		    makedev(ma, mi) == dev) {
			snprintf(at, n, "%s", mp);
			found = true;
		}
	}
	if (fp)
		fclose(fp);
	return found;
}

int img_check_part_mounted(const char *name, const struct img_part *part, bool rw,
			   const char *cmd, bool *mounted)
{
	struct part_devs d = { .off = part->offset };
	struct stat st;
	char at[2048];

	if (!part->set || stat(name, &st))
		return 0;
	if (S_ISBLK(st.st_mode))
		sysfs_parts_at(st.st_rdev, &d);
	else if (S_ISREG(st.st_mode))
		each_loop(&st, loop_at, &d);
	for (size_t i = 0; i < d.n; i++) {
		if (!dev_mounted(d.dev[i], at, sizeof(at)))
			continue;
		*mounted = true;
		if (rw) {
			fprintf(stderr, "fclabel %s: %s: partition %d is mounted (%s, at %s); refusing "
				"to write to it (unmount it, or use 'fclabel check' to read it)\n", cmd,
				name, part->number, d.name[i], at);
			return -1;
		}
		return 0; /* (read: img_open warns that what is read may be stale) */
	}
	return 0;
}

/* Whether a line of /proc/locks (or, after "lock:", of /proc/PID/fdinfo/FD) is a lock on the
 * file st: its kind (FLOCK, POSIX, OFDLCK) and the PID it gives. */
static bool lock_line_on(const char *line, const struct stat *st, char *kind, long *pid)
{
	unsigned maj, min;
	unsigned long long ino;
	/* "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF" (a waiter's "1: -> FLOCK ..." does not
	 * parse: it holds nothing) */
	return sscanf(line, "%*s %15s %*s %*s %ld %x:%x:%llu", kind, pid, &maj, &min, &ino) == 5 &&
	       ino == (unsigned long long)st->st_ino && makedev(maj, min) == st->st_dev;
}

/* The process one of whose open files holds an OFD lock on st (other than this one), or -1:
 * /proc/locks gives such a lock no PID (it belongs to an open file), so each process's
 * fdinfo is read for it, as lslocks(8) does. */
static long ofd_lock_holder(const struct stat *st)
{
	DIR *proc = opendir("/proc");
	struct dirent *de;
	long found = -1;

	while (proc && found < 0 && (de = readdir(proc))) {
		char *end, dir[64], kind[16];
		long pid = strtol(de->d_name, &end, 10), lp;
		if (*end || pid <= 0 || pid == (long)getpid())
			continue;
		snprintf(dir, sizeof(dir), "/proc/%ld/fdinfo", pid);
		DIR *fds = opendir(dir);
		struct dirent *fe;
		while (fds && found < 0 && (fe = readdir(fds))) {
			char path[320], line[256];
			if (fe->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, fe->d_name);
			FILE *f = fopen(path, "r");
			while (f && found < 0 && fgets(line, sizeof(line), f))
				if (!strncmp(line, "lock:", 5) &&
				    lock_line_on(line + 5, st, kind, &lp) && !strcmp(kind, "OFDLCK"))
					found = pid;
			if (f)
				fclose(f);
		}
		if (fds)
			closedir(fds);
	}
	if (proc)
		closedir(proc);
	return found;
}

/* Who holds a lock on the file (dev, ino) other than this process, from /proc/locks: a BSD lock
 * (bsd) or a byte-range one (POSIX, OFD); " (held by PID N, comm)", or "". */
static void lock_holder(const struct stat *st, bool bsd, char *out, size_t n)
{
	FILE *f = fopen("/proc/locks", "r");
	char line[256], kind[16];
	long pid = -1;
	*out = 0;
	while (f && pid < 0 && fgets(line, sizeof(line), f)) {
		long lp;
		if (!lock_line_on(line, st, kind, &lp) || !strcmp(kind, "FLOCK") != bsd ||
		    lp == (long)getpid())
			continue;
		pid = lp < 0 && !strcmp(kind, "OFDLCK") ? ofd_lock_holder(st) : lp;
		if (pid < 0)
			break; /* (an OFD lock whose holder we may not see) */
	}
	if (f)
		fclose(f);
	if (pid < 0)
		return;
	char path[64], comm[64] = "";
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	FILE *c = fopen(path, "r");
	if (c && fgets(comm, sizeof(comm), c))
		comm[strcspn(comm, "\n")] = 0;
	if (c)
		fclose(c);
	if (*comm)
		snprintf(out, n, " (held by PID %ld, %s)", pid, comm);
	else
		snprintf(out, n, " (held by PID %ld)", pid);
}

/*
 * A byte-range lock (fcntl) of another process on the image: QEMU holds OFD locks on the disks
 * of a running virtual machine (shared ones, on single bytes: any lock at all means the disk is
 * in use), other programs POSIX locks. A write lock over the whole file conflicts with any of
 * them; F_OFD_GETLK sees both kinds (F_GETLK before Linux 3.15, POSIX locks only). -1: one is
 * held (printed), 0: none, or the file system keeps no such locks.
 */
static int check_byte_range_locks(int fd, const char *name, const char *cmd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int r = fcntl(fd, F_OFD_GETLK, &fl);
	if (r < 0 && errno == EINVAL) {
		fl = (struct flock){ .l_type = F_WRLCK, .l_whence = SEEK_SET };
		r = fcntl(fd, F_GETLK, &fl);
	}
	if (r < 0 || fl.l_type == F_UNLCK)
		return 0;
	struct stat st;
	char who[128] = "", range[64];
	if (!fstat(fd, &st))
		lock_holder(&st, false, who, sizeof(who));
	if (!*who && fl.l_pid > 0)
		snprintf(who, sizeof(who), " (held by PID %ld)", (long)fl.l_pid);
	if (fl.l_len)
		snprintf(range, sizeof(range), "bytes %lld-%lld", (long long)fl.l_start,
			 (long long)(fl.l_start + fl.l_len - 1));
	else
		snprintf(range, sizeof(range), "bytes %lld to the end", (long long)fl.l_start);
	bool ofd = fl.l_pid <= 0; /* (F_OFD_GETLK gives -1 for an OFD lock) */
	fprintf(stderr, "fclabel %s: %s is locked by another process%s: a%s %s lock on %s%s; "
		"refusing to write to it: nothing written\n", cmd, qname(name), who,
		fl.l_type == F_RDLCK ? " shared" : "n exclusive", ofd ? "OFD" : "POSIX", range,
		ofd ? ", as QEMU takes on the disks of a running virtual machine" : "");
	return -1;
}

/*
 * The BSD lock util-linux and systemd use on block devices (udev holds off while one is held):
 * exclusive to write, shared to read, taken before anything is read that will be written back
 * and held until the result is on disk (renamed into place). A run that waited while another
 * replaced the image (copy and rename) finds the path naming another file: it locks that one.
 */
int img_lock(struct image *img, const char *name, bool rw, int how, const char *cmd)
{
	int op = rw ? LOCK_EX : LOCK_SH;
	bool said = false;

	img->lockfd = -1;
	if (how == LOCK_NONE)
		return 0;
	for (int tries = 0; tries < 100; tries++) {
		struct stat a, b;
		int fd = open(name, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "fclabel %s: %s: %s\n", cmd, qname(name), strerror(errno));
			return -1;
		}
		if (flock(fd, op | LOCK_NB) < 0) {
			if (errno != EWOULDBLOCK && errno != EINTR) {
				fprintf(stderr, "fclabel %s: %s: cannot lock it: %s\n", cmd, qname(name),
					strerror(errno));
				close(fd);
				return -1;
			}
			char who[128] = "";
			if (!fstat(fd, &a))
				lock_holder(&a, true, who, sizeof(who));
			if (how == LOCK_NONBLOCK) {
				fprintf(stderr, "fclabel %s: %s is locked by another process%s; "
					"--lock=nonblock: nothing done\n", cmd, qname(name), who);
				close(fd);
				return -1;
			}
			if (!said)
				fprintf(stderr, "fclabel %s: waiting for the lock on %s%s "
					"(--lock=nonblock: do not wait)\n", cmd, qname(name),
					*who ? who : " (held by another process)");
			said = true;
			/* waited for in steps, so that SIGINT and SIGTERM end the wait */
			int r;
			while ((r = flock(fd, op | LOCK_NB)) < 0 &&
			       (errno == EWOULDBLOCK || errno == EINTR) && !label_stop_signal)
				usleep(20000);
			if (r < 0 && label_stop_signal) {
				fprintf(stderr, "fclabel %s: %s: interrupted while waiting for its lock; "
					"nothing done\n", cmd, qname(name));
				close(fd);
				return -1;
			}
			if (r < 0) {
				fprintf(stderr, "fclabel %s: %s: cannot lock it: %s\n", cmd, qname(name),
					strerror(errno));
				close(fd);
				return -1;
			}
		}
		if (!fstat(fd, &a) && !stat(name, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
			/* (looked at once our lock is held: a writer that honours either kind waits
			 * for ours from now on) */
			if (rw && check_byte_range_locks(fd, name, cmd)) {
				close(fd);
				return -1;
			}
			img->lockfd = fd;
			return 0;
		}
		close(fd); /* replaced while we waited: the new file */
	}
	fprintf(stderr, "fclabel %s: %s: replaced again and again while being locked\n", cmd,
		qname(name));
	return -1;
}

void img_unlock(struct image *img)
{
	if (img->lockfd >= 0)
		close(img->lockfd);
	img->lockfd = -1;
}

/* What the path names as the image is opened, for img_still_target: the file locked, when it
 * is (img_lock made sure the path named it). */
int img_note_target(struct image *img, const char *name, const char *cmd)
{
	struct stat st;
	if (img->lockfd >= 0 ? fstat(img->lockfd, &st) : stat(name, &st)) {
		fprintf(stderr, "fclabel %s: %s: %s\n", cmd, qname(name), strerror(errno));
		return -1;
	}
	img->dev = st.st_dev;
	img->ino = st.st_ino;
	return 0;
}

int img_still_target(const struct image *img, char *why, size_t n)
{
	struct stat st;
	if (!stat(img->name, &st)) {
		if (st.st_dev == img->dev && st.st_ino == img->ino)
			return 1;
		snprintf(why, n, "%s was replaced by another file during the run", qname(img->name));
	} else {
		snprintf(why, n, "%s was moved or removed during the run (%s)", qname(img->name),
			 strerror(errno));
	}
	return 0;
}

/* After the open: the file libext2fs opened by name is the one noted (and locked). */
bool img_still_target_open(const struct image *img, const char *cmd)
{
	char why[512];
	if (img_still_target(img, why, sizeof(why)))
		return true;
	fprintf(stderr, "fclabel %s: %s; nothing written\n", cmd, why);
	return false;
}
