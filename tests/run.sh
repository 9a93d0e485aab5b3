#!/bin/sh
# Runs the test suite (tests/runner.py: every tests/t_*.sh, or those named, in parallel, plain
# and under AddressSanitizer/UBSan). Ends with "N passed, N failed, N skipped".
exec python3 "$(dirname "$0")/runner.py" "$@"
