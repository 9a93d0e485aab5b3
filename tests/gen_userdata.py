#!/usr/bin/env python3
"""Userdata trees for tests/t_userdata.sh, with what a phone's labels would be.

  gen_userdata.py tree ROOT OUT [--unknown] [--failed]
      A tree shaped like a phone's /data (mounted at /data: paths here are the image's) with a
      few hundred packages of every kind in /data/data (user 0), /data/user/10 (user 10) and
      /data/user_de/{0,10}, SDK sandbox data, and the usual system directories; its
      system/packages.list. In OUT: manifest ("TYPE<TAB>PATH", d f), packages.list, expect.tsv
      ("PATH<TAB>HOW": fc, left, or "seapp TYPE LEVEL", LEVEL a range or "keep"), digests.tsv
      ("PATH<TAB>yes|no": whether Android's boot-time restorecon of /data, or vold's of the
      users' CE directories at unlock, digests the directory) and queries ("MODE /data/PATH" for `fclabel lookup --batch`, manifest order).
      --unknown adds package directories packages.list does not know; --failed a package whose
      uid has no name (Android's lookup fails: left as it is).
  gen_userdata.py bench ROOT NFILES NPACKAGES
      make bench-data's tree: NPACKAGES packages sharing about NFILES files, and system
      directories; its system/packages.list.
  gen_userdata.py withheld EXPECT DIGESTS OUT
      digests.tsv with the directories at or above a path left as it is marked "withheld".
  gen_userdata.py compose EXPECT FC_ANSWERS OUT
      The labels a phone ends with: "PATH<TAB>LABEL" ("-" for none), from file_contexts'
      answers (in manifest order) and expect.tsv.

The expectations of the seapp part are written here by hand, kind by kind, from the lines of
fixtures/seapp/plat_seapp_contexts and Android's rules (precedence, levels: app id categories
c(A & 255),c(256 + (A >> 8 & 255)) with A = uid - 10000, user categories c(512 + U),c(768)),
not computed by a second seapp implementation.
"""
import os
import sys

# (seinfo, expected type, levelFrom) for app ids 10000..: levelFrom None keeps the fc range
TARGETS = [23, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35]
APP_KINDS = [("untrusted%d" % t, "default:targetSdkVersion=%d" % t, "app_data_file",
              "all" if t >= 28 else "user") for t in TARGETS]
APP_KINDS += [
    # seinfo=platform sorts before the isPrivApp line: platform_app's type and user level
    ("platform", "platform:targetSdkVersion=34", "app_data_file", "user"),
    ("platformpriv", "platform:privapp:targetSdkVersion=34:partition=system", "app_data_file",
     "user"),
    ("priv", "default:privapp:targetSdkVersion=34:partition=product", "privapp_data_file",
     "user"),
    ("media", "media:targetSdkVersion=34", "app_data_file", "user"),
]
# (name, uid, seinfo, type or None (no line with a type: the fc label), levelFrom)
NAMED = [
    ("com.google.android.gms", 10100, "default:privapp:targetSdkVersion=34:partition=product",
     "privapp_data_file", "user"),
    ("com.google.android.gms.policy_sidecar", 10101, "default:privapp:targetSdkVersion=34",
     "privapp_data_file", "user"),
    ("com.google.android.permissioncontroller", 10102, "default:privapp:targetSdkVersion=34",
     "privapp_data_file", "all"),
    ("com.android.permissioncontroller", 10103, "platform:privapp:targetSdkVersion=34",
     "privapp_data_file", "all"),
    ("com.android.traceur", 10104, "platform:targetSdkVersion=34", "app_data_file", "all"),
    ("com.android.providers.media.module", 10105, "media:privapp:targetSdkVersion=34",
     "privapp_data_file", "all"),
    ("com.android.settings", 1000, "platform:privapp:targetSdkVersion=34",
     "system_app_data_file", None),
    ("com.android.providers.settings", 1000, "platform:privapp:targetSdkVersion=34",
     "system_app_data_file", None),
    ("com.android.phone", 1001, "platform:privapp:targetSdkVersion=34", "radio_data_file", None),
    ("com.android.bluetooth", 1002, "bluetooth:privapp:targetSdkVersion=34",
     "bluetooth_data_file", None),
    ("com.android.nfc", 1027, "platform:privapp:targetSdkVersion=34", "nfc_data_file", None),
    ("com.android.networkstack", 1073, "network_stack:privapp:targetSdkVersion=34",
     "radio_data_file", None),
    ("com.android.shell", 2000, "platform:privapp:targetSdkVersion=34", "shell_data_file", None),
    # uid shell, another name: the shell line wants com.android.shell; nothing else matches
    ("com.android.shellhelper", 2000, "platform:privapp:targetSdkVersion=34", None, None),
    # secure_element's line has a domain and no type
    ("com.android.se", 1068, "platform:privapp:targetSdkVersion=34", None, None),
]
PER_KIND = 18          # packages of each app kind
USER10_EVERY = 3       # every third package also has user 10's data
SANDBOX_EVERY = 29     # and every 29th SDK sandbox data


def levels(uid, user, level_from):
    """Android's categories for levelFrom (set_range_from_level)."""
    appid = uid % 100000
    if appid >= 20000 and appid < 90000:
        appid -= 20000
    elif appid >= 10000:
        appid -= 10000
    app = "c%d,c%d" % (appid & 0xff, 256 + (appid >> 8 & 0xff))
    usr = "c%d,c%d" % (512 + (user & 0xff), 768 + (user >> 8 & 0xff))
    return {"app": "s0:" + app, "user": "s0:" + usr, "all": "s0:%s,%s" % (app, usr)}[level_from]


class Tree:
    def __init__(self, root):
        self.root = root
        self.manifest = []   # (type, path)
        self.expect = {}     # path -> how

    def add(self, kind, path, how="fc"):
        full = self.root + path
        if kind == "d":
            os.makedirs(full, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(path + "\n")
        parts = path.strip("/").split("/")
        for i in range(1, len(parts)):
            p = "/" + "/".join(parts[:i])
            if p not in self.expect:
                self.manifest.append(("d", p))
                self.expect[p] = "fc"
        if path not in self.expect:
            self.manifest.append((kind, path))
        self.expect[path] = how


def seapp_how(typ, uid, user, level_from):
    if typ is None:
        return "fc"
    return "seapp %s %s" % (typ, levels(uid, user, level_from) if level_from else "keep")


def add_package(t, name, uid, how_for, users):
    """CE and DE data of one package for each user."""
    for user in users:
        ce = "/data/%s" % name if user == 0 else "/user/%d/%s" % (user, name)
        de = "/user_de/%d/%s" % (user, name)
        how = how_for(user)
        for p, k in [(ce, "d"), (ce + "/files", "d"), (ce + "/files/state.bin", "f"),
                     (ce + "/cache", "d"), (ce + "/code_cache", "d"),
                     (ce + "/shared_prefs", "d"), (ce + "/shared_prefs/prefs.xml", "f"),
                     (de, "d"), (de + "/databases", "d"), (de + "/databases/de.db", "f")]:
            t.add(k, p, how)


def cmd_tree(root, out, unknown, failed):
    t = Tree(root)
    t.add("d", "/user/0")   # a directory of its own on disk (the device bind-mounts /data/data)
    pkgs = []
    n = 0
    for kind, seinfo, typ, lf in APP_KINDS:
        for i in range(PER_KIND):
            uid = 10200 + n
            name = "com.example.%s.app%02d" % (kind, i)
            pkgs.append((name, uid, seinfo, typ, lf, n))
            n += 1
    for j, (name, uid, seinfo, typ, lf) in enumerate(NAMED):
        pkgs.append((name, uid, seinfo, typ, lf, n + j))
    lines = []
    for name, uid, seinfo, typ, lf, idx in pkgs:
        users = [0, 10] if idx % USER10_EVERY == 0 else [0]
        add_package(t, name, uid, lambda u, typ=typ, uid=uid, lf=lf: seapp_how(typ, uid, u, lf),
                    users)
        lines.append("%s %d 0 /data/user/0/%s %s %s 0 %d 1 @system" %
                     (name, uid, name, seinfo, "3003" if uid >= 10000 else "1065,3002", 34))
        if uid >= 10000 and idx % SANDBOX_EVERY == 0:
            for top in ("misc_ce", "misc_de"):
                base = "/%s/0/sdksandbox/%s" % (top, name)
                # the package directory: the sdksandbox directory's label; below it, the
                # sandbox uid's (the app id + 10000: the same categories)
                t.add("d", base, "fc-of /data/%s/0/sdksandbox" % top)
                for p, k in [(base + "/shared", "d"), (base + "/shared/s.dat", "f"),
                             (base + "/sdk@1", "d")]:
                    t.add(k, p, seapp_how("sdk_sandbox_data_file", uid + 10000, 0, "all"))
    if failed:
        # app id 1999 has no name on Android: the lookup fails, the files stay as they are
        name = "com.example.nameless"
        lines.append("%s 1999 0 /data/user/0/%s default:targetSdkVersion=34 none 0 1 1 @null" %
                     (name, name))
        add_package(t, name, 1999, lambda u: "left", [0])
    if unknown:
        for name in ("com.example.uninstalled", "com.example.gone"):
            add_package(t, name, 0, lambda u: "left", [0, 10])
    # the rest of /data, labeled from file_contexts alone
    for k, p in [("d", "/app/~~k9dQ==/com.example.platform.app00-Zq==/oat"),
                 ("f", "/app/~~k9dQ==/com.example.platform.app00-Zq==/base.apk"),
                 ("d", "/dalvik-cache/arm64"), ("f", "/local/tmp/shell.sh"),
                 ("d", "/media/0/Download"), ("f", "/media/0/Download/photo.jpg"),
                 ("d", "/misc/profiles/cur/0/com.example.platform.app00"),
                 ("f", "/misc/profiles/cur/0/com.example.platform.app00/primary.prof"),
                 ("d", "/misc/profiles/cur/10"),
                 ("d", "/misc/profiles/ref/com.example.platform.app00"),
                 ("d", "/system_ce/0/backup"), ("d", "/vendor_ce/0/facedata"),
                 ("d", "/vendor_de/0/fpdata"), ("d", "/misc/wifi"), ("d", "/system/users/0"),
                 ("f", "/system/users/0/settings.xml")]:
        t.add(k, p)
    os.makedirs(root + "/system", exist_ok=True)
    text = "".join(l + "\n" for l in lines)
    with open(root + "/system/packages.list", "w") as f:
        f.write(text)
    t.add("f", "/system/packages.list")
    with open(root + "/system/packages.list", "w") as f:
        f.write(text)
    with open(os.path.join(out, "packages.list"), "w") as f:
        f.write(text)
    t.manifest.insert(0, ("d", "/"))
    t.expect["/"] = "fc"
    t.manifest.append(("d", "/lost+found"))
    t.expect["/lost+found"] = "fc"
    with open(os.path.join(out, "manifest"), "w") as f:
        for k, p in t.manifest:
            f.write("%s\t%s\n" % (k, p))
    with open(os.path.join(out, "expect.tsv"), "w") as f:
        for k, p in t.manifest:
            f.write("%s\t%s\n" % (p, t.expect[p]))
    with open(os.path.join(out, "queries"), "w") as f:
        for k, p in t.manifest:
            f.write("%s %s\n" % ("040755" if k == "d" else "0100644", data_path(p)))
    with open(os.path.join(out, "digests.tsv"), "w") as f:
        for k, p in t.manifest:
            if k == "d":
                f.write("%s\t%s\n" % (p, "yes" if device_digests(data_path(p)) else "no"))


def data_path(p):
    return "/data" if p == "/" else "/data" + p


def app_data_path(p):
    """libselinux's is_app_data_path (Android 14)."""
    if p.startswith(("/data/data/", "/data/user/", "/data/user_de/")):
        return True
    parts = p.split("/")
    return (len(parts) >= 5 and parts[1] == "data" and parts[2] in ("misc_ce", "misc_de") and
            parts[4] == "sdksandbox")


def init_descends(p):
    return not app_data_path(p) and not p.startswith(("/data/system_ce", "/data/misc_ce",
                                                       "/data/vendor_ce"))


def profiles_cur(p):
    parts = p.split("/")
    return len(parts) == 6 and parts[1:5] == ["data", "misc", "profiles", "cur"]


def init_digests(p):
    """Whether `restorecon --recursive --skip-ce /data` reaches directory p and digests it:
    every ancestor below /data descended into, and not /data/misc/profiles/cur/N."""
    parts = p.split("/")
    for i in range(3, len(parts)):
        if not init_descends("/".join(parts[:i])):
            return False
    return not profiles_cur(p)


def vold_digests(p):
    """Whether vold's walk at unlock (restorecon --recursive of /data/system_ce/N,
    /data/vendor_ce/N, /data/misc_ce/N) reaches directory p and digests it: each directory in
    them, but below /data/misc_ce/N/sdksandbox."""
    parts = p.split("/")
    if len(parts) < 4 or parts[1] != "data" or parts[2] not in ("system_ce", "vendor_ce",
                                                                 "misc_ce"):
        return False
    return not (parts[2] == "misc_ce" and len(parts) > 5 and parts[4] == "sdksandbox")


def device_digests(p):
    return init_digests(p) or vold_digests(p)


def cmd_compose(expect, answers, out):
    with open(expect) as f:
        rows = [l.rstrip("\n").split("\t") for l in f]
    with open(answers) as f:
        fc = [l.rstrip("\n") for l in f]
    assert len(fc) == len(rows), "%d answers for %d paths" % (len(fc), len(rows))
    by_path = {r[0]: a for r, a in zip(rows, fc)}
    with open(out, "w") as f:
        for (path, how), ans in zip(rows, fc):
            if how == "left" or ans == "<<none>>":
                label = "-"
            elif how == "fc":
                label = ans
            elif how.startswith("fc-of "):
                label = by_path[how[len("fc-of /data"):]]
            else:
                _, typ, level = how.split(" ")
                f4 = ans.split(":", 3)
                label = "%s:%s:%s:%s" % (f4[0], f4[1], typ, f4[3] if level == "keep" else level)
            f.write("%s\t%s\n" % (path, label))


def cmd_bench(root, nfiles, npkgs):
    """make bench-data's tree: npkgs packages of the kinds above (most of them untrusted) sharing
    nfiles files, a tenth of them with user 10's data too, and system directories; returns
    nothing, writes ROOT/system/packages.list."""
    kinds = APP_KINDS
    per_pkg = max(8, nfiles * 9 // 10 // npkgs)
    lines = []
    made = 0
    for i in range(npkgs):
        kind, seinfo = kinds[i % len(kinds)][:2]
        name = "com.bench.%s.app%04d" % (kind, i)
        uid = 10000 + 200 + i
        lines.append("%s %d 0 /data/user/0/%s %s 3003 0 1 1 @system" % (name, uid, name, seinfo))
        users = [0, 10] if i % 10 == 0 else [0]
        for user in users:
            ce = "%s/data/%s" % (root, name) if user == 0 else "%s/user/%d/%s" % (root, user, name)
            de = "%s/user_de/%d/%s" % (root, user, name)
            for d in ("files/a/b", "files/c", "cache", "code_cache", "databases", "shared_prefs"):
                os.makedirs(os.path.join(ce, d), exist_ok=True)
            os.makedirs(os.path.join(de, "databases"), exist_ok=True)
            n = per_pkg if user == 0 else per_pkg // 4
            subs = ("files/a/b", "files/c", "cache", "databases", "shared_prefs", "files")
            for j in range(n):
                open(os.path.join(ce, subs[j % len(subs)], "f%05d" % j), "w").close()
            for j in range(4):
                open(os.path.join(de, "databases", "d%d" % j), "w").close()
            made += n + 4 + 9
    # system directories: the rest
    j = 0
    while made < nfiles:
        d = "%s/%s/g%03d" % (root, ("misc/apexdata/x", "system/users/0", "app/~~b%02d==" % (j % 50),
                                       "media/0/Pictures", "local/tmp")[j % 5], j // 5)
        os.makedirs(d, exist_ok=True)
        for k in range(100):
            open(os.path.join(d, "s%03d" % k), "w").close()
        made += 101
        j += 1
    os.makedirs(root + "/system", exist_ok=True)
    with open(root + "/system/packages.list", "w") as f:
        f.write("".join(l + "\n" for l in lines))


def cmd_withheld(expect, digests, out):
    """digests.tsv with "withheld" for each digested directory at or above a path left as it
    is (a digest promises that every label below is right)."""
    with open(expect) as f:
        left = [l.split("\t")[0] for l in f if l.rstrip("\n").endswith("\tleft")]
    with open(digests) as f, open(out, "w") as o:
        for line in f:
            p, want = line.rstrip("\n").split("\t")
            pre = p.rstrip("/") + "/"
            if want == "yes" and any(x == p or x.startswith(pre) or p == "/" for x in left):
                want = "withheld"
            o.write("%s\t%s\n" % (p, want))


def main():
    a = sys.argv[1:]
    # the folders it writes into are made, not assumed
    for d in {"tree": a[1:3], "bench": a[1:2]}.get(a[0] if a else "", []):
        os.makedirs(d, exist_ok=True)
    for f in {"compose": a[3:4], "withheld": a[3:4]}.get(a[0] if a else "", []):
        if os.path.dirname(f):
            os.makedirs(os.path.dirname(f), exist_ok=True)
    if a and a[0] == "tree" and len(a) >= 3:
        cmd_tree(a[1], a[2], "--unknown" in a, "--failed" in a)
    elif a and a[0] == "compose" and len(a) == 4:
        cmd_compose(a[1], a[2], a[3])
    elif a and a[0] == "bench" and len(a) == 4:
        cmd_bench(a[1], int(a[2]), int(a[3]))
    elif a and a[0] == "withheld" and len(a) == 4:
        cmd_withheld(a[1], a[2], a[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
