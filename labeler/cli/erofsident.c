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

/* name in directory *dir: its mode, *dir its nid; 0 when absent. */
static unsigned ero_lookup(void *arg, uint64_t *dir, const char *name, size_t n)
{
	unsigned mode;
	char why[256];
	return erofs_find(arg, *dir, name, n, dir, &mode, why, sizeof(why)) ? 0 : mode;
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

int erofs_open_where(const char *path, const struct img_part *part, struct erofs_img **ero,
		     char *why, size_t n)
{
	/* (an EROFS partition of a sparse disk was refused by img_choose_part) */
	if (part->set)
		return erofs_open_range(path, part->offset, part->size, ero, why, n);
	return eroimg_open(path, ero, NULL, why, n);
}

int erofs_identify(const char *path, const struct img_part *part, struct img_identity *id)
{
	struct erofs_img *ero;
	char why[512], volume[17];

	memset(id, 0, sizeof(*id));
	if (erofs_open_where(path, part, &ero, why, sizeof(why)))
		return -1; /* (the run's own open says why) */
	erofs_volume_name(ero, volume);
	struct ident_tree t = { .arg = ero, .root = erofs_root_nid(ero), .lookup = ero_lookup,
				.list_top = ero_list_top, .volume = volume };
	ident_read_tree(&t, id);
	erofs_close(ero);
	return 0;
}
