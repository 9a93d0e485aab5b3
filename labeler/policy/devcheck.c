/*
 * Is the tree --android-root and --partition describe the device's? A partition's mount point
 * that is an empty directory (not mounted) is refused unless --partition NAME=none or the
 * device's fstab says it has none, and so are a recovery's own copies of the policy at its root
 * unless --partition system=ROOT names them; a set with a part missing is refused, saying what
 * was looked for, where.
 */
#include <errno.h>
#include <fcntl.h>
#include <et/com_err.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

static bool not_empty(const char *name, size_t nlen, void *arg)
{
	(void)name, (void)nlen;
	*(bool *)arg = false;
	return true;
}

/* What the device's fstabs say is mounted: fstab_read. */
struct fstab {
	bool any;                    /* one was read that lists the system or the vendor partition */
	bool listed[AROOT_PARTS];
	char *from[AROOT_PARTS];     /* the first that lists each */
	char read[512];              /* those read, for messages */
};

#define FSTAB_MAX 16

struct fstab_names {
	char *v[FSTAB_MAX];
	size_t n;
	bool oom; /* a name could not be kept: the listing stopped */
};

static bool fstab_name(const char *name, size_t nlen, void *arg)
{
	struct fstab_names *fn = arg;
	if (nlen <= 6 || strncmp(name, "fstab.", 6) || fn->n == FSTAB_MAX)
		return false;
	if (!(fn->v[fn->n] = strndup(name, nlen)))
		return fn->oom = true;
	fn->n++;
	return false;
}

/* The partitions an fstab mounts: by its mount points' last component ("/vendor/odm" is odm;
 * "/" is the system, as Android 9's system-as-root fstabs have it). */
static void fstab_parse(const char *buf, bool listed[AROOT_PARTS])
{
	for (const char *p = buf; *p;) {
		const char *end = p + strcspn(p, "\n");
		p += strspn(p, " \t");
		if (*p != '#' && p < end) {
			p += strcspn(p, " \t\n");          /* the device */
			p += strspn(p, " \t");
			size_t n = strcspn(p, " \t\n");    /* the mount point */
			const char *last = p;
			for (size_t k = 0; k < n; k++)
				if (p[k] == '/')
					last = p + k + 1;
			size_t ln = n - (size_t)(last - p);
			for (int i = 0; i < AROOT_PARTS && n && *p == '/'; i++)
				if ((n == 1 && i == P_SYSTEM) || (ln == strlen(dt_part_names[i]) &&
								  !strncmp(last, dt_part_names[i], ln)))
					listed[i] = true;
		}
		p = *end ? end + 1 : end;
	}
}

/* The fstab.* files of the device's directory dir (in the tree from top), into fs; -1 after
 * saying why one could not be read. */
static int fstab_dir(struct ns *ns, struct src *top, struct walk *w, const char *dir,
		     struct fstab *fs)
{
	struct fstab_names names = { 0 };
	enum kind k;
	int status = 0;

	/* a directory that cannot be listed holds no fstab that can be read */
	if (!dt_resolve_in(ns, top, w, dir, &k) && k == K_DIR)
		dt_list(w, &w->lv[w->depth - 1], fstab_name, &names);
	if (names.oom)
		status = dt_oom(ns->cmd);
	for (size_t i = 0; i < names.n && !status; i++) {
		char *path = dt_join(dir, names.v[i]), *buf = NULL, *from = NULL;
		bool listed[AROOT_PARTS] = { 0 };
		size_t len;
		if (!path)
			status = dt_oom(ns->cmd);
		else if (!dt_resolve_in(ns, top, w, path, &k) && k == K_FILE &&
			 !(status = dt_read_in(ns, top, path, &buf, &len, &from)))
			fstab_parse(buf, listed);
		if (listed[P_SYSTEM] || listed[P_VENDOR]) {
			size_t at = strlen(fs->read);
			snprintf(fs->read + at, sizeof(fs->read) - at, "%s%s", at ? ", " : "",
				 qname(from));
			fs->any = true;
			for (int p = 0; p < AROOT_PARTS && !status; p++) {
				if (listed[p] && !fs->from[p] && !(fs->from[p] = strdup(from)))
					status = dt_oom(ns->cmd);
				fs->listed[p] |= listed[p];
			}
		}
		free(buf);
		free(from);
		free(path);
	}
	for (size_t i = 0; i < names.n; i++)
		free(names.v[i]);
	return status;
}

/*
 * The device's fstabs: /vendor/etc/fstab.* (Android 10 and later list every partition there,
 * the first-stage ones too), the first-stage ramdisk's /first_stage_ramdisk/fstab.* and /fstab.*
 * (in ROOT too when "/" is the system). One that lists neither the system nor the vendor
 * partition does not count: before Android 10 those were mounted from the device tree's fstab,
 * and what the file leaves out says nothing. -1 after saying why one could not be read.
 */
static int fstab_read(struct ns *ns, struct walk *w, struct fstab *fs)
{
	static const char *const dirs[] = { "/vendor/etc", "/first_stage_ramdisk", "/" };

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (fstab_dir(ns, ns->root, w, dirs[i], fs) ||
		    (i && ns->rootdir.open && ns->root != &ns->rootdir &&
		     fstab_dir(ns, &ns->rootdir, w, dirs[i], fs)))
			return -1;
	return 0;
}

static void fstab_free(struct fstab *fs)
{
	for (int i = 0; i < AROOT_PARTS; i++)
		free(fs->from[i]);
}

/* The partitions whose mount point in the tree is an empty directory: where each is (where[i],
 * malloc'd), and how many (*n). 0, or -1 after saying why. */
static int empty_mounts(struct ns *ns, struct walk *w, bool legacy, char *where[AROOT_PARTS],
			int *n)
{
	for (int i = 0; i < AROOT_PARTS; i++) {
		char path[32];
		enum kind k;
		bool empty = true;
		errcode_t rc;
		if (ns->none[i] || (i == P_SYSTEM && ns->sar) || (legacy && i != P_SYSTEM))
			continue;
		snprintf(path, sizeof(path), "/%s", dt_part_names[i]);
		if (!(rc = dt_resolve(ns, w, path, &k)) && k == K_DIR)
			rc = dt_list(w, &w->lv[w->depth - 1], not_empty, &empty);
		if (rc && rc != ELOOP) {
			fprintf(stderr, "fclabel %s: looking at %s in the device's tree: %s\n", ns->cmd,
				path, error_message(rc));
			return -1;
		}
		if (!rc && k == K_DIR && empty && w->lv[w->depth - 1].src) {
			if (!(where[i] = dt_from_name(w, &w->lv[w->depth - 1])))
				return dt_oom(ns->cmd);
			(*n)++;
		}
	}
	return 0;
}

/* Partition i's mount point (at where) is an empty directory: whether that is refused (said
 * why), or the fstab says the device has no such partition (said). *none_ok: NAME=none would
 * do. */
static bool refuse_empty(const struct ns *ns, int i, const char *where, const struct fstab *fs,
			 int *none_ok)
{
	char at[AROOT_PATH_MAX + 64]; /* "/NAME (where it is)", or "/NAME" when it is there */
	bool here = where[0] == '/' && !strcmp(where + 1, dt_part_names[i]);
	snprintf(at, sizeof(at), "/%s%s%s%s", dt_part_names[i], here ? "" : " (",
		 here ? "" : qname(where), here ? "" : ")");
	if (fs->any && !fs->listed[i]) {
		fprintf(stderr, "fclabel %s: %s is an empty directory, and the device's fstab "
			"(%s) mounts nothing there: no %s partition\n", ns->cmd, at, fs->read,
			dt_part_names[i]);
		return false;
	}
	fprintf(stderr, "fclabel %s: %s is an empty directory: the %s partition is not "
		"mounted there", ns->cmd, at, dt_part_names[i]);
	if (fs->listed[i])
		fprintf(stderr, ", and the device mounts it (%s)", qname(fs->from[i]));
	else
		(*none_ok)++;
	if (i == P_SYSTEM && ns->sysguess)
		fprintf(stderr, "; the device's system is probably at %s: give %s system=%s",
			qname(ns->sysguess), ns->popt, qname(ns->sysguess));
	fprintf(stderr, "; without its files the device's policy would be taken in part\n");
	return true;
}

/*
 * A partition whose mount point is an empty directory (a recovery that did not mount it, an
 * extracted ramdisk) would silently drop out of the policy: its files are the device's and
 * missing here. Refused, unless --partition NAME=none says the device has no such partition, or
 * the device's fstab does not mount it (said). Before Treble (one /file_contexts) only /system
 * matters. -1 after saying why.
 */
int dt_mounts_check(struct ns *ns, struct walk *w, bool legacy)
{
	char *where[AROOT_PARTS] = { 0 };
	struct fstab fs = { 0 };
	int nempty = 0, refused = 0, none_ok = 0;
	int status = empty_mounts(ns, w, legacy, where, &nempty);

	if (!status && nempty)
		status = fstab_read(ns, w, &fs);
	for (int i = 0; i < AROOT_PARTS && !status; i++)
		if (where[i] && refuse_empty(ns, i, where[i], &fs, &none_ok))
			refused++;
	if (!status && refused) {
		fprintf(stderr, "fclabel %s: nothing was done (%s NAME=PATH says where a partition is",
			ns->cmd, ns->popt);
		if (none_ok)
			fprintf(stderr, "; %s NAME=none, that the device has no such partition",
				ns->popt);
		fputs(")\n", stderr);
		status = -1;
	}
	for (int i = 0; i < AROOT_PARTS; i++)
		free(where[i]);
	fstab_free(&fs);
	return status;
}

/* Whether ROOT is a recovery's root, and why (into why): /system/bin/recovery or /sbin/recovery
 * there, or the system found only in ROOT/system_root. */
static bool recovery_mark(const struct ns *ns, char *why, size_t n)
{
	static const char *const marks[] = { "system/bin/recovery", "sbin/recovery" };
	struct stat st;

	for (size_t i = 0; ns->rootdir.open && i < sizeof(marks) / sizeof(marks[0]); i++)
		if (!fstatat(ns->rootdir.fd, marks[i], &st, AT_SYMLINK_NOFOLLOW)) {
			snprintf(why, n, "/%s is there", marks[i]);
			return true;
		}
	if (ns->sysguess)
		snprintf(why, n, "the system is in %s", qname(ns->sysguess));
	return ns->sysguess != NULL;
}

/* --partition system=ROOT: the recovery's own files asked for. */
static bool system_is_root(const struct ns *ns)
{
	struct stat a, b;
	const struct src *s = &ns->part[P_SYSTEM];
	return s->open && !s->image && !fstat(s->fd, &a) && !fstat(ns->rootdir.fd, &b) &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/*
 * A recovery's ramdisk has its own plat_file_contexts, plat_seapp_contexts (and vendor_...) at
 * its root: the recovery's policy, built with it, not the device's. The device's libselinux
 * takes them only when /system/etc/selinux has none: a recovery with its system not mounted at
 * /system. Refused, naming where the system probably is, unless --partition system=ROOT.
 */
int dt_ramdisk_check(struct ns *ns, struct walk *w, const struct seapp_policy *pol)
{
	const struct seapp_policy_file *own = NULL;
	char why[AROOT_PATH_MAX + 64];
	enum kind k;

	if (ns->root != &ns->rootdir || !recovery_mark(ns, why, sizeof(why)) || system_is_root(ns))
		return 0;
	for (size_t i = 0; i < pol->nfc + pol->nseapp && !own; i++) {
		const struct seapp_policy_file *f = i < pol->nfc ? &pol->fc[i]
								  : &pol->seapp[i - pol->nfc];
		if (!dt_resolve(ns, w, f->path, &k) && k != K_NONE &&
		    w->lv[w->depth - 1].src == &ns->rootdir)
			own = f;
	}
	if (!own)
		return 0;
	const char *part = !strcmp(own->part, "plat") || !strcmp(own->part, "legacy") ? "system"
										    : own->part;
	fprintf(stderr, "fclabel %s: %s is a recovery's root (%s), and its %s is the recovery's own, "
		"not the device's policy: ", ns->cmd, qname(ns->rootdir.label), why, own->path);
	if (!strcmp(part, "system") && ns->sysguess)
		fprintf(stderr, "the device's system is probably at %s: give %s system=%s\n",
			qname(ns->sysguess), ns->popt, qname(ns->sysguess));
	else
		fprintf(stderr, "mount the device's %s partition and give %s %s=PATH\n", part,
			ns->popt, part);
	if (!strcmp(own->part, "legacy"))
		fprintf(stderr, "fclabel %s: (before Treble the device's file_contexts is in its boot "
			"image's ramdisk: %s the unpacked ramdisk)\n", ns->cmd, ns->ropt);
	fprintf(stderr, "fclabel %s: nothing was done (%s system=%s takes the recovery's own files)\n",
		ns->cmd, ns->popt, qname(ns->rootdir.label));
	return -1;
}

void dt_refuse(const struct ns *ns, const struct seapp_policy *pol)
{
	const char *kind = pol->missing_kind == SEAPP_FILE_CONTEXTS ? "file_contexts"
								    : "seapp_contexts";
	fprintf(stderr, "fclabel %s: no %s %s: ", ns->cmd, pol->missing, kind);
	if (!strcmp(pol->missing, "vendor"))
		fprintf(stderr, "plat_file_contexts is in /system/etc/selinux (a Treble device), and "
			"without the vendor's file_contexts its files would be labeled wrong; ");
	fputs("looked for", stderr);
	for (size_t i = 0; pol->looked && pol->looked[i]; i++)
		fprintf(stderr, "%s %s", i ? "," : "", pol->looked[i]);
	fprintf(stderr, "\nfclabel %s: in the device's tree: ", ns->cmd);
	dt_describe(ns, stderr);
	char why[AROOT_PATH_MAX + 64];
	if (ns->root == &ns->rootdir && ns->sysguess && recovery_mark(ns, why, sizeof(why)))
		fprintf(stderr, "\nfclabel %s: %s is a recovery's root (%s): the device's system is "
			"probably at %s: give %s system=%s", ns->cmd, qname(ns->rootdir.label), why,
			qname(ns->sysguess), ns->popt, qname(ns->sysguess));
	fprintf(stderr, "\nfclabel %s: nothing was done (%s NAME=PATH says where a partition is)\n",
		ns->cmd, ns->popt);
}

