/*
 * What an EROFS image says of itself, as ext4/identify.c reads an ext4 image's: its volume name
 * (mkfs.erofs -L) and the shape of its tree (a vendor image holds etc/selinux/
 * vendor_file_contexts, ...), through the same rules (ident_read_tree). AOSP builds its EROFS
 * partitions without a volume name: the shape is what tells a vendor image from a system one.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

/* The mode of rel ('/'-separated, from the root), following no symlink; 0 when absent. */
static unsigned ero_mode_at(void *arg, const char *rel, size_t len)
{
	struct erofs_img *ero = arg;
	uint64_t nid = erofs_root_nid(ero);
	unsigned mode = S_IFDIR;
	char why[256];

	while (len) {
		size_t n = 0;
		while (n < len && rel[n] != '/')
			n++;
		if (!S_ISDIR(mode) || !n || erofs_find(ero, nid, rel, n, &nid, &mode, why, sizeof(why)))
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

struct top {
	struct erofs_img *ero;
	struct img_identity *id;
};

static bool top_one(const char *name, size_t nlen, void *arg)
{
	struct top *t = arg;
	uint64_t nid;
	unsigned mode;
	char why[256];
	if (erofs_find(t->ero, erofs_root_nid(t->ero), name, nlen, &nid, &mode, why, sizeof(why)))
		return false;
	return !ident_top_add(t->id, name, nlen, mode);
}

static void ero_list_top(void *arg, struct img_identity *id)
{
	struct top t = { arg, id };
	char why[256];
	(void)erofs_list(t.ero, erofs_root_nid(t.ero), top_one, &t, why, sizeof(why));
}

int erofs_identify(const char *path, const struct img_part *part, struct img_identity *id)
{
	struct erofs_img *ero;
	char why[512], volume[17];

	memset(id, 0, sizeof(*id));
	if (erofs_open_range(path, part->set ? part->offset : 0, part->set ? part->size : 0, &ero,
			     why, sizeof(why)))
		return -1; /* (the run's own open says why) */
	erofs_volume_name(ero, volume);
	struct ident_tree t = { .arg = ero, .mode_at = ero_mode_at, .list_top = ero_list_top,
				.volume = volume };
	ident_read_tree(&t, id);
	erofs_close(ero);
	return 0;
}
