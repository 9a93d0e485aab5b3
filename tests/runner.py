#!/usr/bin/env python3
"""Runs the test suite: every tests/t_*.sh (or those named), in parallel, twice where the
sanitizers can be built: once against fclabel as built, once against a copy built with
AddressSanitizer and UndefinedBehaviorSanitizer (make SANITIZE=1), where any sanitizer report
fails the test that caused it.

A test exits 0 to pass, 77 to skip (its last line of output says why), anything else to fail.
Each test gets its own scratch folder, $OUT (tests/out/NAME, tests/out/asan/NAME), and its
whole output in $OUT/log. Prints a line per test as it ends, the slowest five at the end, and
last "N passed, N failed, N skipped".

  tests/run.sh [-j N] [--no-sanitizers] [--only-sanitizers] [tests/t_x.sh ...]

FC_JOBS sets -j (default: the number of CPUs plus one: the tests wait on the disk, mke2fs and
python as much as on the CPU). FC_NO_SANITIZERS=1 leaves the sanitized runs out.
"""
import json
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTBASE = os.path.join(TOP, "tests", "out")
ASAN = os.path.join(OUTBASE, "asan")
ASAN_SRC = os.path.join(ASAN, "src")
TIMES = os.path.join(OUTBASE, "times.json")
# the test programs the Makefile builds (TEST_BINS there): built sanitized too
TEST_BINS = ["tests/oracle", "tests/fcunit", "tests/seappunit", "tests/engineunit",
             "tests/fcdigest", "tests/erofscat"]

# Not run sanitized: they check something a sanitized build cannot stand for (valgrind's own
# view of the plain binary, the symbols of the plain binary) or build sanitized code themselves,
# or other binaries (t_cross: the cross builds under qemu).
PLAIN_ONLY = {"t_valgrind", "t_symbols", "t_fuzz_regress", "t_cross"}

# What a run of each takes here (seconds, plain and sanitized), to start the longest first on a
# machine with no tests/out/times.json yet; a finished run writes that file, which wins.
DEFAULT_TIMES = {
    "t_image_label": 125, "t_relabel": 65, "t_image_corrupt": 60, "t_crash": 50,
    "t_diff_refpolicy": 32, "t_fcbin": 30, "t_diff_adversarial": 30, "t_tree": 30,
    "t_diff_walkorder": 40,
    "t_image_android": 18, "t_image_refpolicy": 18, "t_image_setfiles": 17,
    "t_diff_android": 17, "t_image_sparse": 16, "t_relabel_android": 16, "t_fuzz_regress": 12,
    "t_digest": 30, "t_userdata": 15, "t_device": 20, "t_cross": 70, "t_nogetxattrat": 20,
    "t_killwalk": 100, "t_faults_fsck": 80, "t_do_no_harm": 10,
}


def log(msg):
    sys.stdout.write(msg + "\n")
    sys.stdout.flush()


class Job:
    def __init__(self, script, asan):
        self.script = script
        self.name = os.path.basename(script)[:-3]
        self.asan = asan
        self.key = self.name + (" [asan]" if asan else "")
        self.out = os.path.join(ASAN if asan else OUTBASE, self.name)
        self.status = None  # "PASS", "FAIL", "SKIP"
        self.secs = 0.0
        self.detail = ""


def build_asan():
    """A copy of the tree built with the sanitizers; returns None or why it failed."""
    shutil.rmtree(ASAN, ignore_errors=True)
    os.makedirs(ASAN_SRC)
    skip_dirs = {"./tests/out", "./.git", "./build"}

    def keep(info):
        name = info.name
        if any(name == d or name.startswith(d + "/") for d in skip_dirs):
            return None
        if name.endswith((".o", ".a")) or name in ("./fclabel", "./fclabel-static"):
            return None
        if name in ["./" + b for b in TEST_BINS]:
            return None
        return info

    tmp = os.path.join(ASAN, "src.tar")
    with tarfile.open(tmp, "w") as t:
        t.add(TOP, arcname=".", filter=keep)
    with tarfile.open(tmp) as t:
        t.extractall(ASAN_SRC)
    os.unlink(tmp)
    blog = os.path.join(ASAN, "build.log")
    with open(blog, "w") as f:
        r = subprocess.run(["make", "-s", "-C", ASAN_SRC, "SANITIZE=1", "fclabel"] + TEST_BINS,
                           stdout=f, stderr=subprocess.STDOUT)
    if r.returncode:
        with open(blog) as f:
            return "sanitized build failed:\n" + f.read()[-3000:]
    return None


def sanitizers_work():
    try:
        r = subprocess.run(["cc", "-fsanitize=address,undefined", "-x", "c", "-o",
                            os.path.join(OUTBASE, ".san-probe"), "-"],
                           input=b"int main(void) { return 0; }\n",
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return r.returncode == 0
    except OSError:
        return False


def job_env(job):
    env = dict(os.environ)
    env["OUT"] = job.out
    if job.asan:
        env["TOP"] = ASAN_SRC
        env["FCLABEL"] = os.path.join(ASAN_SRC, "fclabel")
        rep = os.path.join(job.out, "reports")
        os.makedirs(rep, exist_ok=True)
        # a report is written to a file (and the process fails with a code no test expects)
        env["ASAN_OPTIONS"] = "log_path=%s/asan:exitcode=86:detect_leaks=1:abort_on_error=0" % rep
        env["UBSAN_OPTIONS"] = ("log_path=%s/ubsan:halt_on_error=1:exitcode=87:"
                                "print_stacktrace=1" % rep)
        env["LSAN_OPTIONS"] = ("exitcode=86:suppressions=%s/tests/lsan.supp:"
                               "print_suppressions=0" % TOP)
        # the reference, libselinux: not ours to check, and slow under ASan's allocator
        if os.access(os.path.join(TOP, "tests", "oracle"), os.X_OK):
            env["ORACLE"] = os.path.join(TOP, "tests", "oracle")
    else:
        env["TOP"] = TOP
        env["FCLABEL"] = os.path.join(TOP, "fclabel")
    return env


def last_line(path):
    try:
        with open(path, "rb") as f:
            lines = f.read().decode("utf-8", "replace").rstrip("\n").split("\n")
        return lines
    except OSError:
        return [""]


def run_job(job):
    shutil.rmtree(job.out, ignore_errors=True)
    os.makedirs(job.out)
    env = job_env(job)
    script = job.script if not job.asan else os.path.join(ASAN_SRC, "tests", job.name + ".sh")
    start = time.monotonic()
    with open(os.path.join(job.out, "log"), "wb") as logf:
        rc = subprocess.run(["sh", script], stdout=logf, stderr=subprocess.STDOUT, env=env,
                            cwd=env["TOP"]).returncode
    job.secs = time.monotonic() - start
    lines = last_line(os.path.join(job.out, "log"))
    reports = []
    if job.asan:
        rep = os.path.join(job.out, "reports")
        reports = sorted(os.listdir(rep)) if os.path.isdir(rep) else []
    if rc == 77 and not reports:
        job.status, job.detail = "SKIP", lines[-1]
    elif rc == 0 and not reports:
        job.status = "PASS"
    else:
        job.status = "FAIL"
        d = ["(exit %d, %.0fs); last lines of %s/log:" % (rc, job.secs, job.out)]
        d += ["    " + l for l in lines[-25:]]
        for r in reports[:5]:
            d.append("    == sanitizer report " + r)
            d += ["    " + l for l in last_line(os.path.join(job.out, "reports", r))[:40]]
        job.detail = "\n".join(d)


def main():
    args = sys.argv[1:]
    jobs_n = int(os.environ.get("FC_JOBS") or (os.cpu_count() or 1) + 1)
    sanitize = not os.environ.get("FC_NO_SANITIZERS")
    plain = True
    scripts = []
    while args:
        a = args.pop(0)
        if a == "-j":
            jobs_n = int(args.pop(0))
        elif a.startswith("-j"):
            jobs_n = int(a[2:])
        elif a == "--no-sanitizers":
            sanitize = False
        elif a == "--only-sanitizers":
            plain = False
        else:
            scripts.append(a)
    os.chdir(TOP)
    os.makedirs(OUTBASE, exist_ok=True)
    if not scripts:
        scripts = sorted(os.path.join("tests", f) for f in os.listdir("tests")
                         if f.startswith("t_") and f.endswith(".sh"))
    scripts = [os.path.abspath(s) for s in scripts]
    os.environ.setdefault("SHARED", os.path.join(os.path.dirname(TOP), "shared", "data"))
    # python3 as this runner runs it, found first on PATH: a version manager's shim (pyenv's is a
    # shell script) costs a tenth of a second or more for each of the thousands of calls
    pybin = os.path.join(OUTBASE, "bin")
    os.makedirs(pybin, exist_ok=True)
    link = os.path.join(pybin, "python3")
    if os.path.realpath(link) != os.path.realpath(sys.executable):
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(sys.executable, link)
    os.environ["PATH"] = pybin + os.pathsep + os.environ.get("PATH", "")
    os.environ.setdefault("FC_SEED", "20261203")
    # what the plain and the sanitized run of a test can share (tests/lib.sh memo_*): fresh
    # for every run of the suite
    cache = os.path.join(OUTBASE, "cache")
    shutil.rmtree(cache, ignore_errors=True)
    os.makedirs(cache)
    os.environ["FC_CACHE"] = cache

    jobs = [Job(s, False) for s in scripts] if plain else []
    san_note = None if sanitize else "asked for (make check-full runs them)"
    if sanitize and not sanitizers_work():
        san_note = "the C compiler cannot build with -fsanitize=address,undefined"
        sanitize = False
    if sanitize:
        jobs += [Job(s, True) for s in scripts
                 if os.path.basename(s)[:-3] not in PLAIN_ONLY]
    try:
        with open(TIMES) as f:
            known = json.load(f)
    except (OSError, ValueError):
        known = {}

    def expected(j):
        if j.key in known:
            return known[j.key]
        t = DEFAULT_TIMES.get(j.name, 5)
        return t * 1.5 if j.asan else t

    jobs.sort(key=expected, reverse=True)
    lock = threading.Lock()
    cond = threading.Condition(lock)
    state = {"asan": "pending" if sanitize else "none", "asan_err": None}
    pending = list(jobs)
    done = []
    t0 = time.monotonic()

    plain_left = {j.name for j in jobs if not j.asan}

    def take():
        """The next runnable job, or None when none is left; called with the lock held. A
        sanitized run waits for its build, and for its test's plain run, whose results it can
        take from the cache (tests/lib.sh memo_*) instead of working them out again."""
        while True:
            for i, j in enumerate(pending):
                if not j.asan or (state["asan"] in ("ok", "failed") and
                                  j.name not in plain_left):
                    return pending.pop(i)
            if not pending:
                return None
            cond.wait()

    def worker():
        while True:
            with lock:
                j = take()
            if j is None:
                return
            if j.asan and state["asan"] == "failed":
                j.status, j.detail = "FAIL", "(not run: the sanitized build failed)"
            else:
                run_job(j)
            with lock:
                done.append(j)
                plain_left.discard(j.name if not j.asan else None)
                cond.notify_all()
                if j.status == "FAIL":
                    log("FAIL %s %s" % (j.key, j.detail))
                elif j.status == "SKIP":
                    log("SKIP %s: %s" % (j.key, j.detail))
                else:
                    log("PASS %s (%.0fs)" % (j.key, j.secs))

    def builder():
        err = build_asan()
        with lock:
            state["asan"] = "failed" if err else "ok"
            state["asan_err"] = err
            if err:
                log("FAIL sanitized build: " + err)
            cond.notify_all()

    threads = []
    if state["asan"] == "pending":
        b = threading.Thread(target=builder)
        b.start()
        threads.append(b)
    for _ in range(max(1, jobs_n)):
        t = threading.Thread(target=worker)
        t.start()
        threads.append(t)
    for t in threads:
        t.join()

    # every JSON report the tests wrote, against the documented schema (fclabel-report(5))
    rep = Job(os.path.join(TOP, "tests", "validate_reports.py"), False)
    rep.key = rep.name = "json reports"
    outs = [j.out for j in done if os.path.isdir(j.out)]
    py = sys.executable
    if subprocess.run([py, "-c", "import jsonschema"], capture_output=True).returncode:
        py = "/usr/bin/python3"
    t1 = time.monotonic()
    res = subprocess.run([py, os.path.join(TOP, "tests", "validate_reports.py"),
                          os.path.join(TOP, "man", "fclabel-report.schema.json")] + outs,
                         capture_output=True, text=True)
    rep.secs = time.monotonic() - t1
    lines = res.stdout.strip().splitlines() or [res.stderr.strip()[-300:]]
    if res.returncode == 77 or not os.path.exists(py):
        rep.status, rep.detail = "SKIP", lines[-1]
        log("SKIP json reports: %s" % lines[-1])
    elif res.returncode == 0:
        rep.status = "PASS"
        log("PASS json reports: %s, each valid against man/fclabel-report.schema.json" % lines[-1])
    else:
        rep.status = "FAIL"
        log("FAIL json reports: %s" % "\n    ".join(lines[-20:]))
    done.append(rep)

    wall = time.monotonic() - t0
    if san_note:
        log("(sanitized runs left out: %s)" % san_note)
    ran = [j for j in done if j.status != "SKIP" and j.secs > 0]
    for j in ran:
        known[j.key] = round(j.secs, 1)
    try:
        with open(TIMES, "w") as f:
            json.dump(known, f, indent=0, sort_keys=True)
    except OSError:
        pass
    slow = sorted(ran, key=lambda j: j.secs, reverse=True)[:5]
    log("slowest: " + ", ".join("%s %.0fs" % (j.key, j.secs) for j in slow))
    log("%d jobs on %d workers in %.0fs (%.0fs of test time)" %
        (len(done), jobs_n, wall, sum(j.secs for j in done)))
    npass = sum(j.status == "PASS" for j in done)
    nfail = sum(j.status == "FAIL" for j in done) + (1 if state["asan"] == "failed" else 0)
    nskip = sum(j.status == "SKIP" for j in done)
    log("%d passed, %d failed, %d skipped" % (npass, nfail, nskip))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
