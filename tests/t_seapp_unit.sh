# The android library's unit tests (tests/seappunit.c): seapp_contexts parsing and precedence,
# each selector and levelFrom, uid names and ranges, packages.list, app data paths, the device's
# walks of /data (a table: which walks reach, label and digest each entry), which policy files a
# device loads (seapp_find_policy), every seapp_contexts in ../shared/data. Expectations from
# reading Android's code (see the file).
. "$TOP/tests/lib.sh"
cd "$TOP" || exit 1
SEAPP_DATA=$SHARED SEAPP_FIXTURES=$TOP/fixtures/seapp
export SEAPP_DATA SEAPP_FIXTURES
unit_run seappunit 301 "$OUT/scratch"
finish
