#!/usr/bin/env python3
"""Validates fclabel's JSON reports against man/fclabel-report.schema.json.

validate_reports.py SCHEMA DIR...   every file below the DIRs that is a report (it begins with
                                    the report's first key, "schema": "fclabel-report/...)
validate_reports.py SCHEMA -f FILE...  the given files, each of which must be a report

Prints one line per bad report and a last line "N reports, M bad"; exits 1 when any is bad, 77
when the jsonschema module is missing."""
import json
import os
import stat
import sys

try:
    import jsonschema
except ImportError:
    print("the jsonschema module is not installed (python3-jsonschema)")
    sys.exit(77)

HEAD = b'{\n  "schema": "fclabel-report/'


def reports(dirs):
    for d in dirs:
        for root, _, files in os.walk(d):
            for f in files:
                p = os.path.join(root, f)
                try:
                    st = os.lstat(p)
                    # regular files only (a test's tree holds fifos and devices too)
                    if not stat.S_ISREG(st.st_mode) or st.st_size > 256 << 20:
                        continue
                    with open(p, "rb") as fh:
                        if fh.read(len(HEAD)) != HEAD:
                            continue
                except OSError:
                    continue
                yield p


def main():
    a = sys.argv[1:]
    with open(a[0]) as f:
        schema = json.load(f)
    validator = jsonschema.Draft202012Validator(schema)
    files = a[2:] if len(a) > 1 and a[1] == "-f" else list(reports(a[1:]))
    bad = 0
    for p in files:
        try:
            # strict UTF-8, as any JSON parser reads it: a file name's bytes that are not
            # UTF-8 are escaped in the report (\udcXX), never written raw
            with open(p, "rb") as f:
                doc = json.loads(f.read().decode("utf-8"))
        except (OSError, ValueError) as e:
            print("%s: not valid JSON: %s" % (p, e))
            bad += 1
            continue
        errs = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
        if errs:
            bad += 1
            e = errs[0]
            print("%s: %s at %s (%d error(s))" % (p, e.message[:200], "/".join(map(str, e.path)), len(errs)))
    print("%d reports, %d bad" % (len(files), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
