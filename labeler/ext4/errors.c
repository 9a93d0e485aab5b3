/*
 * The ext4 room's own error codes say themselves here, as com_err's tables do for libext2fs's:
 * they are negative (no errno is, and no libext2fs code is: com_err's are large positive
 * numbers), so that one errcode_t carries any of the three, and ext4_strerror names each.
 */
#include <et/com_err.h>

#include "internal.h"

const char *ext4_strerror(errcode_t rc)
{
	switch (rc) {
	case CLAIMS_E_INTERRUPTED:
		return "interrupted (SIGINT or SIGTERM)";
	case XATTR_E_CLAIMS:
		return "the image's block claims cannot be trusted (a block claimed twice, or claimed "
		       "and free): nothing more is allocated in it";
	case XATTR_E_INLINE_SYMLINK:
		return "an inline-data symlink with no room left in its inode: it is not given an "
		       "attribute block (e2fsck's pass 1 does not count one there, and frees it)";
	case XATTR_E_EA_INODE:
		return "it has attribute values stored in EA inodes (ea_inode), which a rewrite of "
		       "its attributes would change";
	case XATTR_E_TOO_BIG:
		return "its attributes would not fit in the inode and one attribute block, and "
		       "fclabel does not write EA inodes (ea_inode)";
	}
	return error_message(rc); /* an errno, or libext2fs's */
}
