/* fclabel check: read-only; list every file whose label differs from what file_contexts wants. */
#include "run.h"

static const char *const usage[] = {
	"fclabel check IMAGE|DIR -S FC[,FC...]|--android-root ROOT [--partition NAME=PATH]...",
	"                    [-a MOUNTPOINT [--force-mount-point]] [-e PATH]... [--json FILE]",
	"                    [--base-only] [--policy SEPOLICY] [--cross-mounts] [-v]",
	"                    [--seapp SEAPP[,SEAPP...] [--packages FILE]] [--digests]",
	"                    [--as-device [--ignore-digests]] [--data-data-ignore[=yes|no]]",
	"                    [--lock[=yes|no|nonblock]] [-T N]",
	NULL
};

static const struct cli_opt options[] = {
	OPT_FILE_CONTEXTS(POPT_FILES),
	RUN_OPT_ANDROID_ROOT,
	OPT_PARTITION(POPT_PARTITION),
	RUN_OPT_MOUNT_POINT,
	RUN_OPT_PART,
	RUN_OPT_FORCE_MOUNT_POINT,
	OPT_ARG('e', "exclude", RO_EXCLUDE, "PATH",
		"leave PATH and everything below it out (repeatable)"),
	OPT_ARG(0, "json", RO_JSON, "FILE",
		"write a JSON report to FILE ('-': stdout) instead of the list"),
	RUN_OPT_BASE_ONLY,
	RUN_OPT_POLICY,
	RUN_OPT_CROSS_MOUNTS,
	RUN_OPT_THREADS,
	OPT_FLAG('v', "verbose", RO_VERBOSE, "name what is left as it is (--seapp)"),
	OPT_ARG(0, "seapp", POPT_SEAPP, "SEAPP[,...]",
		"Android userdata: app data checked from these seapp_contexts (plat, system_ext, "
		"product, vendor, odm order) as a device does"),
	RUN_OPT_PACKAGES,
	OPT_FLAG(0, "digests", RO_DIGESTS,
		 "also list missing or stale security.sehash on the directories restorecon checks"),
	OPT_FLAG(0, "as-device", RO_AS_DEVICE,
		 "a device's /data (-a /data, --seapp): list only what its own walks would change "
		 "(implies --digests); without it, on a /data that carries Android's digests, the "
		 "summary counts the differences that are levels the device keeps"),
	RUN_OPT_IGNORE_DIGESTS,
	RUN_OPT_DATA_DATA_IGNORE,
	RUN_OPT_LOCK,
	OPT_HELP,
	OPT_END
};

static const struct cli_spec spec = { "check", usage, options };

int cmd_check(int argc, char **argv, const struct command *self)
{
	return run_target(argc, argv, self, &spec, RUN_CHECK);
}
