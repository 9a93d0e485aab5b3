/* fclabel label: give every file of an image the label file_contexts wants. */

#include "internal.h"

int cmd_label(int argc, char **argv)
{
	return image_command(argc, argv, LM_LABEL);
}
