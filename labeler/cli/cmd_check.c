/* fclabel check: read-only; list every file whose label differs from what file_contexts wants. */

#include "internal.h"

int cmd_check(int argc, char **argv)
{
	return image_command(argc, argv, LM_CHECK);
}
