/* fclabel label: write every file's label in an image or a mounted tree. */
#include "run.h"

static const char *const usage[] = {
	"fclabel label IMAGE|DIR -S FC[,FC...]|--android-root ROOT [--partition NAME=PATH]...",
	"                    [-a MOUNTPOINT [--force-mount-point]] [-n] [-e PATH]... [-v] [--json FILE]",
	"                    [--strict] [--force] [--base-only] [-z UNDO_FILE] [-o OUT] [--no-sync]",
	"                    [--atomic|--in-place] [--no-crash-safety] [--policy SEPOLICY]",
	"                    [--cross-mounts]",
	"                    [--seapp SEAPP[,SEAPP...] [--packages FILE]] [--digests]",
	"                    [--as-device [--ignore-digests]|--full-label]",
	"                    [--data-data-ignore[=yes|no]] [--lock[=yes|no|nonblock]] [-T N]",
	"",
	"  IMAGE is an ext2/3/4 image or block device; DIR a mounted tree, labeled in place",
	NULL
};

static const struct cli_opt options[] = {
	OPT_FILE_CONTEXTS(POPT_FILES),
	RUN_OPT_ANDROID_ROOT,
	OPT_PARTITION(POPT_PARTITION),
	RUN_OPT_MOUNT_POINT,
	RUN_OPT_PART,
	RUN_OPT_FORCE_MOUNT_POINT,
	RUN_OPT_DRY_RUN,
	RUN_OPT_EXCLUDE,
	RUN_OPT_VERBOSE,
	RUN_OPT_JSON,
	OPT_FLAG(0, "strict", RO_STRICT,
		 "a hard link whose paths want different labels is an error, found before anything "
		 "is written"),
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
	RUN_OPT_THREADS,
	OPT_ARG(0, "seapp", POPT_SEAPP, "SEAPP[,...]",
		"Android userdata: app data labeled from these seapp_contexts (plat, system_ext, "
		"product, vendor, odm order) as a device does"),
	RUN_OPT_PACKAGES,
	RUN_OPT_DIGESTS,
	OPT_FLAG(0, "as-device", RO_AS_DEVICE,
		 "a device's /data (-a /data, --seapp): change only what its own walks would (init "
		 "at boot, vold and installd at unlock), where they would: not below a matching "
		 "digest, nor below a package directory whose label is right (implies --digests)"),
	RUN_OPT_IGNORE_DIGESTS,
	OPT_FLAG(0, "full-label", RO_FULL_LABEL,
		 "a device's /data (it carries Android's digests): label it all the same, "
		 "stripping the levels the device keeps (without it, or --as-device, such a /data "
		 "is refused)"),
	RUN_OPT_DATA_DATA_IGNORE,
	RUN_OPT_LOCK,
	OPT_HELP,
	OPT_END
};

static const struct cli_spec spec = { "label", usage, options };

int cmd_label(int argc, char **argv, const struct command *self)
{
	return run_target(argc, argv, self, &spec, RUN_LABEL);
}
