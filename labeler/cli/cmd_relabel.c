/* fclabel relabel: after a policy change, relabel only what the change reaches. */
#include "run.h"

static const char *const usage[] = {
	"fclabel relabel IMAGE|DIR --from OLD_FC[,...]|none --to NEW_FC[,...]|--android-root ROOT",
	"                      [--partition NAME=PATH]... [-a MOUNTPOINT [--force-mount-point]]",
	"                      [-e PATH]... [-v] [-n|--plan] [--verify] [--json FILE] [--force]",
	"                      [--base-only] [-z UNDO_FILE] [-o OUT] [--no-sync]",
	"                      [--atomic|--in-place] [--no-crash-safety] [--policy SEPOLICY]",
	"                      [--cross-mounts]",
	"                      [--seapp NEW_SEAPP[,...] [--from-seapp OLD_SEAPP[,...]]",
	"                      [--packages FILE]] [--digests] [--full-label]",
	"                      [--data-data-ignore[=yes|no]] [--lock[=yes|no|nonblock]]",
	NULL
};

/* what relabel says of label's and check's --as-device and --ignore-digests */
#define NOT_AS_DEVICE                                                                              \
	"is for label and check (a relabel is told what changed; --as-device finds it from the "  \
	"digests)"

static const struct cli_opt options[] = {
	OPT_ARG(0, "from", RO_FROM, "OLD_FC[,...]",
		"the file_contexts the image was labeled with ('none': label all)"),
	OPT_ARG(0, "to", POPT_FILES, "NEW_FC[,...]", "the file_contexts to label it with now"),
	OPT_ARG(0, "android-root", POPT_ANDROID_ROOT, "ROOT",
		"instead of --to: the device's own file_contexts, and its seapp_contexts for "
		"-a /data or with --packages (the new ones), found in ROOT as the device finds them"),
	OPT_PARTITION(POPT_PARTITION),
	RUN_OPT_MOUNT_POINT,
	RUN_OPT_PART,
	RUN_OPT_FORCE_MOUNT_POINT,
	RUN_OPT_EXCLUDE,
	RUN_OPT_VERBOSE,
	RUN_OPT_DRY_RUN,
	OPT_FLAG(0, "plan", RO_PLAN,
		 "change nothing; list each file that would change, its old and new label and the "
		 "deciding spec"),
	OPT_FLAG(0, "verify", RO_VERIFY,
		 "after relabeling, check every file and fail on any difference"),
	RUN_OPT_JSON,
	RUN_OPT_FORCE,
	RUN_OPT_BASE_ONLY,
	RUN_OPT_UNDO,
	RUN_OPT_OUTPUT,
	RUN_OPT_NO_SYNC,
	RUN_OPT_ATOMIC,
	RUN_OPT_IN_PLACE,
	RUN_OPT_NO_CRASH_SAFETY,
	RUN_OPT_POLICY,
	RUN_OPT_CROSS_MOUNTS,
	OPT_ARG(0, "seapp", POPT_SEAPP, "SEAPP[,...]",
		"Android userdata: app data labeled from these seapp_contexts (plat, system_ext, "
		"product, vendor, odm order): the new ones"),
	RUN_OPT_PACKAGES,
	RUN_OPT_DIGESTS,
	OPT_ARG(0, "from-seapp", RO_FROM_SEAPP, "OLD_SEAPP[,...]",
		"the seapp_contexts the image was labeled with: only packages whose answer changed "
		"are walked whole (without it, every package is)"),
	OPT_FLAG(0, "full-label", RO_FULL_LABEL,
		 "a device's /data (it carries Android's digests): relabel it all the same, "
		 "stripping the levels the device keeps where the change reaches (without it, such "
		 "a /data is refused: see AS THE DEVICE in fclabel-label(1))"),
	RUN_OPT_DATA_DATA_IGNORE,
	RUN_OPT_LOCK,
	OPT_HELP,
	OPT_REFUSED("as-device", RO_AS_DEVICE, NOT_AS_DEVICE),
	OPT_REFUSED("ignore-digests", RO_IGNORE_DIGESTS, NOT_AS_DEVICE),
	OPT_END
};

static const struct cli_spec spec = { "relabel", usage, options };

int cmd_relabel(int argc, char **argv, const struct command *self)
{
	return run_target(argc, argv, self, &spec, RUN_RELABEL);
}
