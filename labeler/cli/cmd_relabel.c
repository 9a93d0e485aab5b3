/* fclabel relabel: after a policy change, relabel only what the change can reach. */

#include "internal.h"

int cmd_relabel(int argc, char **argv)
{
	return image_command(argc, argv, LM_RELABEL);
}
