/*
 * What an image says of itself, read before label, check or relabel work on it: its volume name
 * (AOSP's build_image.py gives mke2fs -L the partition's mount point: "system", "vendor", "data",
 * or "/" for a system-as-root system image), where it was last mounted (s_last_mounted, which
 * the kernel records on a device: "/data", "/vendor") and the shape of its tree (a vendor image
 * holds etc/selinux/vendor_file_contexts, userdata holds system/packages.list, ...).
 *
 * A wrong mount point labels every file as another path (a system-as-root image given -a /system
 * makes /system/bin/init system_file, not init_exec; a system image given -a /data makes every
 * file system_data_file), and nothing else in a run can tell: each label is what the policy
 * gives the path it was asked about. So a mount point the image contradicts is refused, and with
 * no -a the image's own is taken.
 *
 * ident_read and img_identify read and decide, and print nothing; the ident_* functions below
 * them are the command's words about it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

/* Partition names AOSP gives mke2fs -L (build_image.py's mount_point), and where each is
 * mounted. system_other holds /system's odex files and is labeled as /system. */
static const struct {
	const char *name, *mp;
} partitions[] = {
	{ "system", "/system" },
	{ "system_other", "/system" },
	{ "vendor", "/vendor" },
	{ "product", "/product" },
	{ "system_ext", "/system_ext" },
	{ "odm", "/odm" },
	{ "oem", "/oem" },
	{ "vendor_dlkm", "/vendor_dlkm" },
	{ "odm_dlkm", "/odm_dlkm" },
	{ "system_dlkm", "/system_dlkm" },
	{ "cache", "/cache" },
	{ "metadata", "/metadata" },
	{ "data", ANDROID_DATA },
	{ "userdata", ANDROID_DATA },
};

/*
 * The shapes of a partition's tree: each a few paths at its root. A path ending in '/' is a
 * directory, one ending in '*' a regular file or a symlink (/init is a symlink to
 * /system/bin/init since Android 10; Debian's etc/os-release one to ../usr/lib/os-release), any
 * other a regular file; '|' separates alternatives. The first shape whose paths are all there
 * decides, so the more specific come first: a vendor image has build.prop, bin/ and etc/ as a
 * system image has, and a system-as-root image holds a whole system image in system/.
 */
static const struct shape {
	const char *mp, *what;
	const char *need[4];
} shapes[] = {
	{ "/", "a system-as-root image", { "system/build.prop", "init*" } },
	/* (Android 8.x named it nonplat_file_contexts) */
	{ "/vendor", "a vendor image",
	  { "etc/selinux/vendor_file_contexts|etc/selinux/nonplat_file_contexts", "build.prop" } },
	{ "/odm", "an odm image", { "etc/selinux/odm_file_contexts", "etc/build.prop|build.prop" } },
	{ "/product", "a product image",
	  { "etc/selinux/product_file_contexts", "etc/build.prop|build.prop" } },
	{ "/system_ext", "a system_ext image",
	  { "etc/selinux/system_ext_file_contexts", "etc/build.prop|build.prop" } },
	/* (framework/: a vendor image of before Treble may have build.prop, bin/ and etc/ too) */
	{ "/system", "a system image", { "build.prop", "bin/", "etc/", "framework/" } },
	{ ANDROID_DATA, "userdata", { ANDROID_PACKAGES_LIST_IN_DATA } },
	{ ANDROID_DATA, "userdata", { "misc/", "media/", "app/" } },
	{ "/", "a Linux root file system", { "etc/os-release*|usr/lib/os-release" } },
};

/* The mount points a hint may name besides those the specs' stems give: Android's are written
 * as "/(vendor|system/vendor)(/.*)?", with no literal stem. */
static const char *const android_mps[] = {
	"/system", "/vendor", "/product", "/system_ext", "/odm", ANDROID_DATA,
};

#define TOP_MAX 64 /* the root's entries kept for the hints */

/* The mode of the file at rel (components separated by '/') below the root, following no
 * symlink (an image's symlinks name paths on the device, not in the image); 0 when absent. */
static unsigned mode_at(const struct ident_tree *t, const char *rel, size_t len)
{
	uint64_t dir = t->root;
	unsigned mode = S_IFDIR;

	while (len) {
		size_t n = 0;
		while (n < len && rel[n] != '/')
			n++;
		if (!S_ISDIR(mode) || !n || !(mode = t->lookup(t->arg, &dir, rel, n)))
			return 0;
		rel += n;
		len -= n;
		if (len) {
			rel++;
			len--;
		}
	}
	return mode;
}

/* name in directory *dir of an ext2/3/4 file system: its mode, *dir its inode; 0 when absent. */
static unsigned ext_lookup(void *arg, uint64_t *dir, const char *name, size_t n)
{
	ext2_filsys fs = arg;
	ext2_ino_t ino;
	struct ext2_inode in;
	if (ext2fs_lookup(fs, (ext2_ino_t)*dir, name, (int)n, NULL, &ino) ||
	    ext2fs_read_inode(fs, ino, &in))
		return 0;
	*dir = ino;
	return in.i_mode;
}

/* Whether one path of a shape (as written there: a trailing '/' or '*') is there. */
static bool has(const struct ident_tree *t, const char *p, size_t len)
{
	char last = len ? p[len - 1] : 0;
	unsigned mode = mode_at(t, p, last == '/' || last == '*' ? len - 1 : len);
	if (last == '/')
		return S_ISDIR(mode);
	if (last == '*')
		return S_ISREG(mode) || S_ISLNK(mode);
	return S_ISREG(mode);
}

/* The first alternative of need that is there, into out ("" when none). */
static bool has_any(const struct ident_tree *t, const char *need, char *out, size_t n)
{
	for (const char *a = need; *a;) {
		size_t len = strcspn(a, "|");
		if (has(t, a, len)) {
			size_t k = a[len - 1] == '*' ? len - 1 : len;
			snprintf(out, n, "%.*s", (int)k, a);
			return true;
		}
		a += len + (a[len] == '|');
	}
	return false;
}

/* The shape of the tree: its mount point and why ("it holds A and B, as a vendor image does"). */
static const char *read_shape(const struct ident_tree *t, char *why, size_t n)
{
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		char found[4][96];
		size_t k = 0;
		while (k < 4 && shapes[s].need[k] &&
		       has_any(t, shapes[s].need[k], found[k], sizeof(found[k])))
			k++;
		if (k < 4 && shapes[s].need[k])
			continue;
		size_t w = (size_t)snprintf(why, n, "it holds ");
		for (size_t i = 0; i < k && w < n; i++)
			w += (size_t)snprintf(why + w, n - w, "%s%s", i == 0 ? "" : i + 1 == k ?
					      " and " : ", ", found[i]);
		if (w < n)
			snprintf(why + w, n - w, ", as %s does", shapes[s].what);
		return shapes[s].mp;
	}
	return NULL;
}

/* The mount point a volume name or s_last_mounted names, or NULL. */
static const char *named_mp(const char *s, bool last_mounted)
{
	if (!strcmp(s, "/") || (last_mounted && !strcmp(s, "/system_root")))
		return "/"; /* (a recovery mounts a system-as-root system at /system_root) */
	/* a volume name is the bare partition name (with a '/' when someone wrote one); a mount
	 * point on the device is the name with its '/' */
	if (*s == '/')
		s++;
	else if (last_mounted)
		return NULL;
	for (size_t i = 0; i < sizeof(partitions) / sizeof(partitions[0]); i++)
		if (!strcmp(s, partitions[i].name))
			return last_mounted && strcmp(partitions[i].mp + 1, s) ? NULL : partitions[i].mp;
	return NULL;
}

/* One entry of the root into id->top (not lost+found, nor . and ..): false when full. */
bool ident_top_add(struct img_identity *id, const char *name, size_t len, unsigned mode)
{
	if ((len == 1 && name[0] == '.') || (len == 2 && !memcmp(name, "..", 2)) ||
	    (len == 10 && !memcmp(name, "lost+found", 10)))
		return true;
	if (!id->top || id->ntop == TOP_MAX)
		return false;
	char *n = malloc(len + 1);
	if (!n)
		return false;
	memcpy(n, name, len);
	n[len] = 0;
	id->top[id->ntop].name = n;
	id->top[id->ntop++].mode = mode;
	return true;
}

struct top_ctx {
	ext2_filsys fs;
	struct img_identity *id;
};

static int top_entry(struct ext2_dir_entry *de, int offset, int blocksize, char *buf, void *arg)
{
	struct top_ctx *t = arg;
	struct ext2_inode in;

	if (!de->inode || ext2fs_read_inode(t->fs, de->inode, &in))
		return 0;
	return ident_top_add(t->id, de->name, (size_t)ext2fs_dirent_name_len(de), in.i_mode) ? 0
											  : DIRENT_ABORT;
}

/* A name of the superblock (not NUL-terminated when it fills its field), as text. */
static void field(char *out, const void *in, size_t n)
{
	memcpy(out, in, n);
	out[n] = 0;
}

/* What the three say together: the shape is what is in the image, and decides between a
 * volume name and it only when they agree ("system" is the system partition, mounted at /
 * when it is system-as-root); s_last_mounted, which a mount on a host sets too, counts only
 * when nothing else says anything. */
static void decide(struct img_identity *id)
{
	const char *s = id->by_shape, *v = id->by_volume;
	size_t n = sizeof(id->why);

	if (s && v && strcmp(s, v) && !(!strcmp(v, "/system") && !strcmp(s, "/"))) {
		id->conflict = true;
		snprintf(id->why, n, "its volume name is '%s' (%s), but %s (%s)", qname(id->volume),
			 v, id->shape_why, s);
		return;
	}
	if (s && v) {
		id->mountpoint = s;
		snprintf(id->why, n, "its volume name is '%s' and %s", qname(id->volume),
			 id->shape_why);
	} else if (s) {
		id->mountpoint = s;
		snprintf(id->why, n, "%s", id->shape_why);
	} else if (v) {
		id->mountpoint = v;
		snprintf(id->why, n, "its volume name is '%s'", qname(id->volume));
	} else if (id->by_last) {
		id->mountpoint = id->by_last;
		snprintf(id->why, n, "it was last mounted at %s", qname(id->last_mounted));
	}
}

void ident_read_tree(const struct ident_tree *t, struct img_identity *id)
{
	memset(id, 0, sizeof(*id));
	snprintf(id->volume, sizeof(id->volume), "%s", t->volume ? t->volume : "");
	snprintf(id->last_mounted, sizeof(id->last_mounted), "%s",
		 t->last_mounted ? t->last_mounted : "");
	id->by_volume = *id->volume ? named_mp(id->volume, false) : NULL;
	id->by_last = *id->last_mounted ? named_mp(id->last_mounted, true) : NULL;
	id->by_shape = read_shape(t, id->shape_why, sizeof(id->shape_why));
	decide(id);
	if ((id->top = calloc(TOP_MAX, sizeof(*id->top))) && t->list_top)
		t->list_top(t->arg, id);
	id->read = true;
}

static void ext_list_top(void *arg, struct img_identity *id)
{
	struct top_ctx t = { arg, id };
	(void)ext2fs_dir_iterate(t.fs, EXT2_ROOT_INO, 0, NULL, top_entry, &t);
}

void ident_read(ext2_filsys fs, struct img_identity *id)
{
	const struct ext2_super_block *sb = fs->super;
	char volume[sizeof(sb->s_volume_name) + 1], last[sizeof(sb->s_last_mounted) + 1];
	field(volume, sb->s_volume_name, sizeof(sb->s_volume_name));
	field(last, sb->s_last_mounted, sizeof(sb->s_last_mounted));
	struct ident_tree t = { .arg = fs, .root = EXT2_ROOT_INO, .lookup = ext_lookup,
				.list_top = ext_list_top, .volume = volume, .last_mounted = last };
	ident_read_tree(&t, id);
}

/* A raw image in a plain file is read through imgfmt's copy-and-rename manager, which opened
 * read-only does no more than pread: libext2fs's unix manager fsyncs the file at every open, even
 * read-only (1.47: to clear the stale write errors of a block device), and that flush costs a
 * relabel of a few hundredths of a second 3-6 ms on a virtual disk, before any work. A block
 * device (whose size fstat does not give) keeps the unix manager. */
static io_manager plain_reader(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) ? imgfmt_replace_manager
							    : unix_io_manager;
}

errcode_t img_identify(const char *path, const struct img_part *part, struct img_identity *id)
{
	enum img_format fmt;
	ext2_filsys fs = NULL;
	char why[256];
	errcode_t rc;

	memset(id, 0, sizeof(*id));
	/* read-only, straight through the format's own manager: no lock (nothing is written), no
	 * journal replayed (what the log holds is the run's to replay; a name it changes is rarely
	 * one read here), and none of the run's I/O (FCLABEL_FAULT's Nth I/O stays the run's) */
	imgfmt_fault_hold(true);
	rc = imgfmt_detect(path, &fmt, why, sizeof(why));
	io_manager io = fmt == IMGFMT_SPARSE ? imgfmt_sparse_manager : plain_reader(path);
	/* (a partition of a disk image: its range only) */
	if (part && part->set) {
		imgfmt_set_part(io, path, part->offset, part->size);
		io = imgfmt_part_manager;
	}
	if (!rc)
		rc = ext2fs_open2(path, NULL, EXT2_FLAG_64BITS | EXT2_FLAG_SKIP_MMP, 0, 0, io, &fs);
	if (!rc)
		ident_read(fs, id);
	if (fs)
		ext2fs_close_free(&fs);
	imgfmt_fault_hold(false);
	return rc;
}

void ident_free(struct img_identity *id)
{
	for (size_t i = 0; id->top && i < id->ntop; i++)
		free(id->top[i].name);
	free(id->top);
	id->top = NULL;
	id->ntop = 0;
}

/* ---- the command's words ---- */

/* Whether the image may be mounted at given too: a vendor, product, system_ext or odm
 * partition is also reached as /system/NAME (file_contexts write "/(vendor|system/vendor)"). */
static bool same_place(const char *mp, const char *given)
{
	if (!strcmp(mp, given))
		return true;
	return strcmp(mp, "/system") && strcmp(mp, ANDROID_DATA) && strcmp(mp, "/") &&
	       !strncmp(given, "/system/", 8) && !strcmp(given + 7, mp);
}

int ident_choose(const char *cmd, const char *target, struct img_identity *id, const char *given,
		 bool force, const char **mp)
{
	const char *a = given && !*given ? "/" : given;

	*mp = NULL;
	if (force && !a) {
		fprintf(stderr, "fclabel %s: --force-mount-point goes with -a: it labels the image as "
			"mounted where -a says, whatever the image says of itself\n", cmd);
		return -1;
	}
	if (!id->read || (!id->mountpoint && !id->conflict))
		return 0;
	if (id->conflict) {
		if (a && (!strcmp(a, id->by_shape) || !strcmp(a, id->by_volume)))
			return 0; /* -a says which of the two */
		if (a && force) {
			id->forced = a;
			return 0;
		}
		if (!a) {
			fprintf(stderr, "fclabel %s: %s says two things of itself: %s; give -a with the "
				"mount point it has on the device; nothing done\n", cmd, qname(target),
				id->why);
			return -1;
		}
		fprintf(stderr, "fclabel %s: %s says it is mounted at %s or %s, not -a %s: %s; give "
			"-a %s or -a %s, or --force-mount-point to %s it as %s anyway; nothing done\n",
			cmd, qname(target), id->by_shape, id->by_volume, a, id->why, id->by_shape,
			id->by_volume, cmd, a);
		return -1;
	}
	if (!a) {
		/* (the root is where an image is labeled without -a anyway: nothing to say) */
		id->taken = strcmp(id->mountpoint, "/");
		*mp = id->taken ? id->mountpoint : NULL;
		return 0;
	}
	if (same_place(id->mountpoint, a))
		return 0;
	if (force) {
		id->forced = a;
		return 0;
	}
	fprintf(stderr, "fclabel %s: %s says it is %s (%s), but -a says %s: every file would get the "
		"label of another path; give -a %s (or no -a), or --force-mount-point to %s it as %s "
		"anyway; nothing done\n", cmd, qname(target), id->mountpoint, id->why, a,
		id->mountpoint, cmd, a);
	return -1;
}

void ident_say(FILE *f, const char *cmd, const char *target, const struct img_identity *id,
	       const char *verb)
{
	if (id->taken)
		fprintf(f, "fclabel %s: %s: %s as %s (%s)\n", cmd, qname(target), verb,
			id->mountpoint, id->why);
	else if (id->forced && id->conflict)
		fprintf(f, "fclabel %s: %s: %s as %s (-a, --force-mount-point), though %s\n", cmd,
			qname(target), verb, id->forced, id->why);
	else if (id->forced)
		fprintf(f, "fclabel %s: %s: %s as %s (-a, --force-mount-point), though it says it is "
			"%s (%s)\n", cmd, qname(target), verb, id->forced, id->mountpoint, id->why);
}

const char *ident_not_userdata(const struct img_identity *id, char *buf, size_t n)
{
	if (!id->read || !id->mountpoint || !strcmp(id->mountpoint, ANDROID_DATA))
		return NULL;
	snprintf(buf, n, "it says it is %s (%s), not userdata", id->mountpoint, id->why);
	return buf;
}

/* A mount point the hint weighs: how many top-level names get a label there, and how many of
 * those from a spec of their own (not the one that would label any name put there, such as
 * "/system(/.*)?"'s). */
struct cand {
	char mp[64];
	size_t labeled, own;
};

static int by_fit(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->own != y->own)
		return x->own < y->own ? 1 : -1;
	if (x->labeled != y->labeled)
		return x->labeled < y->labeled ? 1 : -1;
	return strcmp(x->mp, y->mp);
}

static void cand_add(struct cand *v, size_t *nv, size_t max, const char *mp, size_t len)
{
	if (len >= sizeof(v->mp) || *nv == max)
		return;
	for (size_t i = 0; i < *nv; i++)
		if (strlen(v[i].mp) == len && !memcmp(v[i].mp, mp, len))
			return;
	snprintf(v[(*nv)++].mp, sizeof(v->mp), "%.*s", (int)len, mp);
}

/* The mount points, other than cur, at which the specs label most of the image's top-level
 * names, those that fit best first, into out ("" when none). */
static void fitting(const fc_set *set, const struct img_identity *id, const char *cur, char *out,
		    size_t n)
{
	enum { MOST = 256, SHOWN = 8 };
	struct cand *v = calloc(MOST, sizeof(*v));
	size_t nv = 0, k = 0, shown = 0;
	char path[64 + 256 + 2];

	out[0] = 0;
	if (!v)
		return;
	for (size_t i = 0; i < sizeof(android_mps) / sizeof(android_mps[0]); i++)
		cand_add(v, &nv, MOST, android_mps[i], strlen(android_mps[i]));
	for (size_t i = 0; i < fc_count(set); i++) {
		size_t len, c = 1;
		const char *p = fc_spec_prefix(set, fc_spec_at(set, i), &len);
		if (!p || len < 2 || p[0] != '/')
			continue;
		while (c < len && p[c] != '/')
			c++;
		if (c < len) /* (a stem that goes on below its first component) */
			cand_add(v, &nv, MOST, p, c);
	}
	for (size_t i = 0; i < nv; i++) {
		for (size_t t = 0; t < id->ntop && strcmp(v[i].mp, cur); t++) {
			struct fc_result r, any;
			mode_t mode = id->top[t].mode & S_IFMT;
			snprintf(path, sizeof(path), "%s/%s", v[i].mp, id->top[t].name);
			if (fc_lookup(set, path, mode, &r) || r.status != FC_LABEL)
				continue;
			v[i].labeled++;
			/* (no file has this name: what labels it labels whatever is put there) */
			snprintf(path, sizeof(path), "%s/\x7f", v[i].mp);
			v[i].own += fc_lookup(set, path, mode, &any) || r.spec != any.spec;
		}
		if (v[i].labeled * 2 <= id->ntop)
			v[i].labeled = v[i].own = 0;
	}
	qsort(v, nv, sizeof(*v), by_fit);
	/* (where some have specs of their own for these names, the catch-alls say little) */
	bool own = nv && v[0].own;
	for (size_t i = 0; i < nv && v[i].labeled && (!own || v[i].own) && shown <= SHOWN && k < n;
	     i++, shown++)
		k += (size_t)snprintf(out + k, n - k, "%s%s", shown ? ", " : "",
				      shown < SHOWN ? v[i].mp : "...");
	free(v);
}

bool ident_most_unlabeled(const char *cmd, const char *target, const struct img_identity *id,
			  const fc_set *set, const char *mp, unsigned long scanned,
			  unsigned long nomatch)
{
	const char *at = *mp ? mp : "/";
	char names[256], fit[400];
	size_t k = 0;

	if (!id->read || id->mountpoint || id->conflict || !scanned || nomatch * 2 <= scanned)
		return false;
	names[0] = 0;
	for (size_t t = 0; t < id->ntop && t < 8 && k < sizeof(names); t++)
		k += (size_t)snprintf(names + k, sizeof(names) - k, "%s%s", t ? ", " : "",
				      qname(id->top[t].name));
	if (id->ntop > 8 && k < sizeof(names))
		snprintf(names + k, sizeof(names) - k, ", ...");
	fitting(set, id, at, fit, sizeof(fit));
	fprintf(stderr, "fclabel %s: %s: %lu of %lu files got no label at %s (no spec matches them) "
		"and nothing in the image says where it is mounted; ", cmd, qname(target), nomatch,
		scanned, at);
	if (*fit)
		fprintf(stderr, "the specs label most of its top-level names (%s) at %s: give -a with "
			"the one it has\n", names, fit);
	else
		fprintf(stderr, "no mount point the specs cover labels most of its top-level names "
			"(%s): is the policy this image's?\n", names);
	return true;
}
