#!/usr/bin/env python3
"""Trees, images listings and policy edits for the relabel tests (tests/t_relabel*.sh).

Standard library only. Every random choice comes from --seed, so a run is reproducible.

  gen_edits.py tree --kind refpolicy|android|data --seed S --root DIR --manifest FILE
        Creates a tree that resembles a real system (refpolicy: /usr, /etc, /var, /home...;
        android: /system, /vendor, /data...; data: the contents of an Android /data partition)
        in DIR, with empty regular files, symlinks, hard links, fifos, sockets and (as root)
        device nodes. FILE lists every entry (see MANIFEST below).
  gen_edits.py tsvtree --tsv TREE.tsv --part P [--labels LABELS.tsv] --root DIR --manifest FILE
        Creates the part P/ of a firmware listing (type f/x/l/d, git mode, size, path, link target)
        as empty files and prints the mount point it belongs at ("/" or "/P"), found from where
        LABELS.tsv (the libselinux answers for the same listing) puts its paths.
  gen_edits.py edits --seed S --n N --fc FILE [--extra FILE]... [--subs FILE] --manifest FILE
                     [--mp MOUNTPOINT] --out DIR
        N single edits of the policy FILE (and its extras, e.g. FILE.homedirs), each applied to a
        fresh copy: DIR/eNN/ holds the edited policy (same file names; untouched files copied)
        and edit.txt (what was done). DIR/edits.tsv has one line per edit:
          id kind file oldline newline stem regex probe probetype diffkind decides
        kind: insert, delete, context, move, retype, none (a <<none>> line); file: the base name
        of the edited file; oldline/newline: the 1-based line in the old/new file (0: none);
        stem: the regex's literal first component (libselinux's stem) or "-"; probe: a path
        (mount point included) the edited spec matches, or "-"; diffkind: what `fclabel diff`
        must call it; decides: for an inserted plain (literal) spec, 1 when it must decide the
        probe's lookup (no plain spec loaded after it matches), else 0 or "-". Edits are biased towards specs that decide some file of the tree.
  gen_edits.py dump MANIFEST < debugfs-output     "PATH<TAB>LABEL" ("-" no label, "?" missing)
  gen_edits.py events JSON KIND                    "PATH<TAB>FILE:LINE<TAB>WANTS" of --json events
  gen_edits.py groups MANIFEST                     "PATH<TAB>GROUP": hard links share a group
  gen_edits.py mustskip --manifest M [--mp MP] --diff-json F
        How many directories of the image no change listed by `fclabel diff --json` (F) can reach
        below, judged from each regex's literal prefix (0 when the diff says it is not prunable):
        relabel can enter at most (directories - that many).

MANIFEST: one entry a line, "TYPE<TAB>PATH[<TAB>EXTRA]", PATH relative to the image root ("/" is the
root). TYPE is f d l c b p s (as `fclabel explain -m`), or h for a second name of a hard link
(EXTRA: the first name).
"""
import argparse
import bisect
import json
import os
import random
import re
import shutil
import signal
import socket
import stat
import sys
import warnings

warnings.simplefilter("ignore")

TYPE_OF_FIELD = {"--": "f", "-d": "d", "-l": "l", "-c": "c", "-b": "b", "-p": "p", "-s": "s"}
FIELD_OF_TYPE = {v: k for k, v in TYPE_OF_FIELD.items()}
META = set(".^$?*+|[({")


# ---------------------------------------------------------------- trees

class Tree:
    """Creates entries under a host directory and records the manifest."""

    def __init__(self, root):
        self.root = root
        self.entries = [("d", "/", "")]
        self.seen = {"/"}
        self.types = {"/": "d"}
        self.root_user = os.geteuid() == 0
        os.makedirs(root, exist_ok=True)

    def host(self, p):
        return os.path.join(self.root, p.lstrip("/"))

    def _add(self, t, p, extra=""):
        self.entries.append((t, p, extra))
        self.seen.add(p)
        self.types[p] = t

    def d(self, p):
        p = p.rstrip("/") or "/"
        if p in self.seen:
            return
        parent = os.path.dirname(p)
        if parent not in self.seen:
            self.d(parent)
        os.makedirs(self.host(p), exist_ok=True)
        self._add("d", p)

    def _parent(self, p):
        parent = os.path.dirname(p)
        if parent not in self.seen:
            self.d(parent)
        return p not in self.seen

    def f(self, p, mode=0o644):
        if not self._parent(p):
            return
        with open(self.host(p), "wb"):
            pass
        os.chmod(self.host(p), mode)
        self._add("f", p)

    def x(self, p):
        self.f(p, 0o755)

    def l(self, p, target):
        if not self._parent(p):
            return
        os.symlink(target, self.host(p))
        self._add("l", p)

    def h(self, p, first):
        """A second name of the regular file first."""
        if not self._parent(p) or self.types.get(first) != "f":
            return
        os.link(self.host(first), self.host(p))
        self._add("h", p, first)

    def p(self, p):
        if not self._parent(p):
            return
        os.mkfifo(self.host(p))
        self._add("p", p)

    def s(self, p):
        if not self._parent(p):
            return
        cwd = os.getcwd()
        try:
            os.chdir(os.path.dirname(self.host(p)))
            sk = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sk.bind(os.path.basename(p))
            sk.close()
        except OSError:
            return
        finally:
            os.chdir(cwd)
        self._add("s", p)

    def dev(self, p, kind, major, minor):
        if not self._parent(p) or not self.root_user:
            return
        try:
            os.mknod(self.host(p), (stat.S_IFCHR if kind == "c" else stat.S_IFBLK) | 0o660,
                     os.makedev(major, minor))
        except OSError:
            return
        self._add(kind, p)

    def write_manifest(self, path):
        with open(path, "w") as f:
            for t, p, extra in self.entries:
                f.write("%s\t%s%s\n" % (t, p, "\t" + extra if extra else ""))


USR_BIN = """awk base64 basename bash bunzip2 bzip2 cat chattr chcon chgrp chmod chown chsh cmp cp
crontab curl cut dash date dd df diff dig dirname dmesg du echo env expr false file find flock gawk
gcc getfacl git gpasswd gpg gpg-agent grep groups gunzip gzip head hostname htop id install ionice
ip journalctl kill killall last less ln locale loginctl logger ls lsattr lsblk lsof make man md5sum
mkdir mknod mktemp more mount mv nano nc netstat newgrp nice nohup nproc openssl passwd paste patch
perl pgrep ping pkill pr printf ps pwd python3.11 readlink realpath rm rmdir rsync runcon scp screen
sed seq setfacl sftp sh sha256sum sleep sort split ssh ssh-add ssh-agent ssh-keygen stat strace su
sudo sync systemctl tail tar tee test time timeout tmux top touch tr true tty umount uname uniq unzip
uptime users vim.basic w wc wget which who whoami xargs xz yes zcat zip chfn crontab-helper dbus-daemon
dbus-send Xorg Xwayland startx xinit xterm firefox-esr mysql mysqldump psql pg_dump rpm dpkg dpkg-query
apt apt-get apt-cache apt-mark apt-key newrole semanage setfiles restorecon sestatus getenforce
setenforce audit2allow chkcon checkmodule semodule_package sepolicy-gen vncserver vncviewer qemu-system-x86_64
virsh docker containerd runc kubectl node npm java javac keytool mono gnome-shell nautilus evince
totem gedit thunderbird pulseaudio pactl mpd mplayer vlc cdrecord growisofs lpr lpq lprm cupsd-helper
ntpq ntpdate chronyc fetchmail procmail mutt spamc spamassassin clamscan freshclam amavisd sa-learn
nmap tcpdump wireshark tshark ethtool iw iwconfig nmcli bluetoothctl hciconfig pppd rfkill""".split()

USR_SBIN = """sshd cron anacron rsyslogd syslog-ng useradd userdel usermod groupadd adduser chpasswd
apache2 httpd nginx mysqld postgres postfix sendmail exim4 dovecot named dhclient dhcpd iptables
ip6tables nft fdisk parted mkfs.ext4 e2fsck tune2fs fsck lvm vgchange cryptsetup mdadm smartd
hdparm auditd ausearch load_policy setsebool getsebool semodule restorecond avahi-daemon cupsd
ntpd chronyd squid slapd smbd nmbd winbindd rpcbind rpc.mountd rpc.nfsd exportfs xinetd inetd
logrotate modprobe insmod rmmod depmod udevadm agetty getty sulogin shutdown reboot halt init
runlevel telinit hwclock visudo vipw pwck grpck unix_chkpwd pam_timestamp_check""".split()

DOC_PKGS = """adduser apt base-files base-passwd bash bsdutils coreutils cron dash debconf debianutils
diffutils dpkg e2fsprogs findutils gcc-12-base gpgv grep gzip hostname init-system-helpers libacl1
libapt-pkg6.0 libattr1 libaudit1 libblkid1 libbz2-1.0 libc-bin libc6 libcap-ng0 libcap2 libcom-err2
libcrypt1 libdb5.3 libdebconfclient0 libext2fs2 libffi8 libgcc-s1 libgcrypt20 libgmp10 libgnutls30
libgpg-error0 libhogweed6 libidn2-0 liblz4-1 liblzma5 libmd0 libmount1 libnettle8 libp11-kit0
libpam-modules libpam-runtime libpam0g libpcre2-8-0 libseccomp2 libselinux1 libsemanage2 libsepol2
libsmartcols1 libss2 libssl3 libstdc++6 libsystemd0 libtasn1-6 libtinfo6 libudev1 libunistring2
libuuid1 libxxhash0 libzstd1 login logsave mawk mount ncurses-base ncurses-bin openssh-client
openssh-server openssl passwd perl-base policycoreutils procps python3 python3.11 readline-common
rsyslog sed selinux-basics selinux-policy-default selinux-utils sensible-utils sudo systemd
systemd-sysv sysvinit-utils tar tzdata util-linux vim-common vim-tiny zlib1g git mailman ghc
apache2 mariadb-server postfix nginx""".split()

LIBS = """libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1 libresolv.so.2 libcrypt.so.1
libselinux.so.1 libsepol.so.2 libsemanage.so.2 libaudit.so.1 libpam.so.0 libpam_misc.so.0
libssl.so.3 libcrypto.so.3 libz.so.1 libbz2.so.1.0 liblzma.so.5 libzstd.so.1 liblz4.so.1
libpcre2-8.so.0 libsystemd.so.0 libudev.so.1 libdbus-1.so.3 libglib-2.0.so.0 libgio-2.0.so.0
libgobject-2.0.so.0 libffi.so.8 libstdc++.so.6 libgcc_s.so.1 libncursesw.so.6 libtinfo.so.6
libreadline.so.8 libhistory.so.8 libgmp.so.10 libnettle.so.8 libhogweed.so.6 libgnutls.so.30
libp11-kit.so.0 libtasn1.so.6 libidn2.so.0 libunistring.so.2 libuuid.so.1 libblkid.so.1
libmount.so.1 libsmartcols.so.1 libcap.so.2 libcap-ng.so.0 libacl.so.1 libattr.so.1
libexpat.so.1 libxml2.so.2 libsqlite3.so.0 libcurl.so.4 libkrb5.so.3 libgssapi_krb5.so.2
libk5crypto.so.3 libcom_err.so.2 libkeyutils.so.1 libldap-2.5.so.0 liblber-2.5.so.0 libsasl2.so.2
libGL.so.1 libEGL.so.1 libX11.so.6 libxcb.so.1 libXext.so.6 libfreetype.so.6 libfontconfig.so.1
libpng16.so.16 libjpeg.so.62 libasound.so.2 libpulse.so.0 libmysqlclient.so.21 libpq.so.5
libjvm.so libpython3.11.so.1.0 libperl.so.5.36 libruby-3.1.so.3.1 libtcl8.6.so libtk8.6.so""".split()

UNITS = """ssh.service cron.service rsyslog.service apache2.service nginx.service mariadb.service
postfix.service systemd-journald.service systemd-logind.service systemd-udevd.service dbus.service
getty@.service serial-getty@.service auditd.service restorecond.service networking.service
systemd-networkd.service systemd-resolved.service systemd-timesyncd.service avahi-daemon.service
cups.service bluetooth.service NetworkManager.service ModemManager.service polkit.service
accounts-daemon.service udisks2.service upower.service colord.service gdm.service lightdm.service
multi-user.target graphical.target basic.target sysinit.target sockets.target timers.target
dbus.socket ssh.socket systemd-journald.socket apt-daily.timer logrotate.timer man-db.timer
fstrim.timer e2scrub_all.timer tmp.mount home.mount dev-hugepages.mount""".split()

MAN1 = USR_BIN[:120]
LOCALES = "de es fr it ja ko nl pl pt_BR ru sv tr uk zh_CN zh_TW".split()
PYMODS = "requests urllib3 idna certifi chardet six yaml setuptools pkg_resources dbus gi selinux sepolicy semanage apt debian".split()


def pick(rng, seq, k):
    k = min(k, len(seq))
    return sorted(rng.sample(seq, k), key=seq.index)


def refpolicy_tree(rng, T):
    """A Debian 12 box with SELinux: what refpolicy labels, plus the usual clutter."""
    for d in ("/boot", "/etc", "/home", "/media", "/mnt", "/opt", "/proc", "/root", "/run",
              "/srv", "/sys", "/tmp", "/usr", "/var", "/dev"):
        T.d(d)
    for name, target in (("bin", "usr/bin"), ("sbin", "usr/sbin"), ("lib", "usr/lib")):
        T.l("/" + name, target)
    # /lib64 as a directory: the subs_dist alias /lib64 -> /usr/lib applies below it
    T.x("/lib64/ld-linux-x86-64.so.2")
    T.l("/lib64/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6")
    bins = pick(rng, USR_BIN, 240)
    for b in bins:
        T.x("/usr/bin/" + b)
    for i in range(rng.randint(30, 50)):
        T.x("/usr/bin/tool-%03d" % i)
    T.l("/usr/bin/python3", "python3.11")
    T.l("/usr/bin/vi", "/etc/alternatives/vi")
    T.l("/usr/bin/pager", "/etc/alternatives/pager")
    T.x("/usr/bin/perl")
    T.h("/usr/bin/perl5.36.0", "/usr/bin/perl")
    T.x("/usr/bin/git")
    T.h("/usr/lib/git-core/git", "/usr/bin/git")   # as Debian's git package has it
    for g in ("git-daemon", "git-shell", "git-upload-pack", "git-receive-pack", "git-http-backend"):
        T.x("/usr/lib/git-core/" + g)
    T.f("/usr/bin/sudo", 0o4755)
    T.f("/usr/bin/passwd", 0o4755)
    for s in pick(rng, USR_SBIN, 90):
        T.x("/usr/sbin/" + s)
    arch = "/usr/lib/x86_64-linux-gnu/"
    for lib in pick(rng, LIBS, 80):
        T.f(arch + lib)
        base = lib.split(".so")[0]
        if rng.random() < 0.3:
            T.l(arch + base + ".so", lib)
    T.x(arch + "ld-linux-x86-64.so.2")
    for m in ("pam_unix.so", "pam_selinux.so", "pam_systemd.so", "pam_env.so", "pam_limits.so"):
        T.f(arch + "security/" + m)
    for u in UNITS:
        T.f("/usr/lib/systemd/system/" + u)
    for x in ("systemd", "systemd-journald", "systemd-logind", "systemd-udevd", "systemd-networkd",
              "systemd-resolved", "systemd-timesyncd", "systemd-fsck", "systemd-shutdown"):
        T.x("/usr/lib/systemd/" + x)
    T.f("/usr/lib/systemd/user/pulseaudio.service")
    T.f("/usr/lib/os-release")
    for m in pick(rng, PYMODS, 12):
        for f in ("__init__.py", "core.py", "util.py"):
            T.f("/usr/lib/python3/dist-packages/%s/%s" % (m, f))
        T.f("/usr/lib/python3/dist-packages/%s/__pycache__/__init__.cpython-311.pyc" % m)
    for f in ("os.py", "re.py", "json/__init__.py", "encodings/utf_8.py", "lib-dynload/_ssl.so"):
        T.f("/usr/lib/python3.11/" + f)
    for m in ("mod_ssl.so", "mod_rewrite.so", "mod_cgi.so", "mod_php.so", "mod_proxy.so"):
        T.f("/usr/lib/apache2/modules/" + m)
    T.x("/usr/lib/apache2/suexec")
    T.x("/usr/lib/openssh/sftp-server")
    T.x("/usr/lib/openssh/ssh-keysign")
    T.x("/usr/lib/firefox-esr/firefox-esr")
    T.f("/usr/lib/firefox-esr/libxul.so")
    T.x("/usr/lib/cups/filter/pstops")
    T.x("/usr/lib/cups/backend/ipp")
    T.f("/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so")
    T.x("/usr/lib/jvm/java-17-openjdk-amd64/bin/java")
    T.x("/usr/lib/mysql/plugin/auth_pam.so")
    T.x("/usr/lib/postfix/sbin/master")
    T.x("/usr/lib/postfix/sbin/smtpd")
    T.x("/usr/lib/dbus-1.0/dbus-daemon-launch-helper")
    T.x("/usr/libexec/polkitd")
    T.x("/usr/libexec/gnome-session-binary")
    T.x("/usr/local/bin/backup.sh")
    T.x("/usr/local/sbin/fix-perms")
    T.f("/usr/local/lib/python3.11/dist-packages/local_tool.py")
    T.f("/usr/local/share/ca-certificates/corp.crt")
    for h in ("stdio.h", "stdlib.h", "string.h", "selinux/selinux.h", "linux/fs.h", "sys/types.h"):
        T.f("/usr/include/" + h)
    for p in pick(rng, DOC_PKGS, 110) + ["bash", "coreutils"]:
        T.f("/usr/share/doc/%s/copyright" % p)
        T.f("/usr/share/doc/%s/changelog.Debian.gz" % p)
        if rng.random() < 0.25:
            T.f("/usr/share/doc/%s/README.Debian" % p)
        if rng.random() < 0.1:
            T.f("/usr/share/doc/%s/examples/example.conf" % p)
    T.f("/usr/share/doc/ghc/html/index.html")
    T.x("/usr/share/doc/mailman/mm-handler")
    for b in MAN1:
        if rng.random() < 0.7:
            T.f("/usr/share/man/man1/%s.1.gz" % b)
    for s in pick(rng, USR_SBIN, 50):
        T.f("/usr/share/man/man8/%s.8.gz" % s)
    for c in ("passwd", "shadow", "fstab", "crontab", "sshd_config", "sudoers"):
        T.f("/usr/share/man/man5/%s.5.gz" % c)
    for loc in LOCALES:
        for dom in ("coreutils", "bash", "apt", "dpkg", "sudo"):
            if rng.random() < 0.6:
                T.f("/usr/share/locale/%s/LC_MESSAGES/%s.mo" % (loc, dom))
    for z in ("UTC", "Europe/Berlin", "Europe/Paris", "America/New_York", "Asia/Tokyo"):
        T.f("/usr/share/zoneinfo/" + z)
    # bulk: what a desktop install drags in
    for i in range(rng.randint(180, 240)):
        T.f("/usr/lib/x86_64-linux-gnu/libextra%03d.so.%d" % (i, rng.randint(0, 9)))
    for m in ("Text", "File", "IO", "Net", "Data", "Encode", "Getopt", "Time", "List", "Scalar"):
        for i in range(rng.randint(15, 30)):
            T.f("/usr/lib/x86_64-linux-gnu/perl/5.36/%s/Mod%02d.pm" % (m, i))
            if rng.random() < 0.3:
                T.f("/usr/share/perl5/%s/Util%02d.pm" % (m, i))
    for i in range(rng.randint(80, 120)):
        T.f("/usr/share/i18n/charmaps/CP%04d.gz" % (1000 + i))
    for i in range(rng.randint(60, 100)):
        T.f("/usr/share/fonts/truetype/dejavu/Font%03d.ttf" % i)
    T.f("/usr/share/selinux/default/base.pp")
    T.f("/usr/share/X11/xkb/symbols/us")
    T.f("/usr/share/applications/firefox-esr.desktop")
    for i in range(rng.randint(20, 40)):
        T.f("/usr/share/icons/hicolor/48x48/apps/app%02d.png" % i)
    # /etc
    for f in ("passwd", "group", "hosts", "hostname", "resolv.conf", "fstab", "mtab", "issue",
              "motd", "os-release", "ld.so.cache", "ld.so.conf", "nsswitch.conf", "login.defs",
              "crontab", "machine-id", "adjtime", "aliases", "services", "protocols", "shells",
              "environment", "profile", "bash.bashrc", "inputrc", "locale.gen", "timezone"):
        T.f("/etc/" + f)
    T.f("/etc/shadow", 0o640)
    T.f("/etc/gshadow", 0o640)
    T.f("/etc/shadow-", 0o600)
    T.f("/etc/passwd-")
    T.f("/etc/sudoers", 0o440)
    T.f("/etc/sudoers.d/README", 0o440)
    T.l("/etc/localtime", "/usr/share/zoneinfo/UTC")
    T.l("/etc/mtab.lnk", "../proc/self/mounts")
    for f in ("sshd_config", "ssh_config", "moduli", "ssh_host_rsa_key", "ssh_host_rsa_key.pub",
              "ssh_host_ed25519_key", "ssh_host_ed25519_key.pub"):
        T.f("/etc/ssh/" + f, 0o600 if f.endswith("key") else 0o644)
    for f in ("e2scrub_all", "php", "sysstat"):
        T.f("/etc/cron.d/" + f)
    for f in ("apt-compat", "dpkg", "logrotate", "man-db"):
        T.x("/etc/cron.daily/" + f)
    for s in ("ssh", "cron", "rsyslog", "apache2", "nginx", "mariadb", "postfix", "procps",
              "networking", "udev", "auditd", "dbus"):
        T.x("/etc/init.d/" + s)
        T.l("/etc/rc2.d/S01" + s, "../init.d/" + s)
        T.l("/etc/rc0.d/K01" + s, "../init.d/" + s)
    for u in UNITS[:12]:
        T.l("/etc/systemd/system/multi-user.target.wants/" + u, "/lib/systemd/system/" + u)
    T.f("/etc/systemd/system/local-fix.service")
    T.f("/etc/systemd/journald.conf")
    T.f("/etc/systemd/user/default.target.wants/.keep")
    T.f("/etc/selinux/config")
    T.f("/etc/selinux/semanage.conf")
    for f in ("file_contexts", "file_contexts.homedirs", "file_contexts.subs_dist"):
        T.f("/etc/selinux/default/contexts/files/" + f)
    T.f("/etc/selinux/default/policy/policy.33")
    for f in ("apache2.conf", "ports.conf", "envvars", "sites-available/000-default.conf",
              "mods-available/ssl.load"):
        T.f("/etc/apache2/" + f)
    T.l("/etc/apache2/sites-enabled/000-default.conf", "../sites-available/000-default.conf")
    T.f("/etc/nginx/nginx.conf")
    T.f("/etc/mysql/my.cnf")
    T.f("/etc/mysql/debian.cnf", 0o600)
    T.f("/etc/postfix/main.cf")
    T.f("/etc/postfix/master.cf")
    for f in ("sources.list", "trusted.gpg.d/debian-archive-bookworm-automatic.gpg",
              "apt.conf.d/70debconf", "preferences.d/.keep"):
        T.f("/etc/apt/" + f)
    for f in ("common-auth", "common-account", "common-session", "sshd", "login", "sudo", "su",
              "cron", "passwd", "other"):
        T.f("/etc/pam.d/" + f)
    T.f("/etc/security/limits.conf")
    T.f("/etc/security/namespace.conf")
    for f in ("rsyslog", "apt", "dpkg", "apache2", "nginx", "mariadb", "wtmp", "btmp"):
        T.f("/etc/logrotate.d/" + f)
    T.f("/etc/network/interfaces")
    T.x("/etc/network/if-up.d/openssh-server")
    T.f("/etc/default/grub")
    T.f("/etc/default/locale")
    T.f("/etc/default/useradd")
    T.f("/etc/X11/xorg.conf.d/10-keyboard.conf")
    T.x("/etc/X11/Xsession")
    T.f("/etc/skel/.bashrc")
    T.f("/etc/skel/.profile")
    T.f("/etc/profile.d/bash_completion.sh")
    T.l("/etc/alternatives/vi", "/usr/bin/vim.basic")
    T.l("/etc/alternatives/pager", "/usr/bin/less")
    T.f("/etc/audit/auditd.conf")
    T.f("/etc/audit/rules.d/audit.rules")
    T.f("/etc/ssl/certs/ca-certificates.crt")
    T.f("/etc/ssl/private/ssl-cert-snakeoil.key", 0o640)
    T.f("/etc/dhcp/dhclient.conf")
    T.f("/etc/udev/rules.d/70-persistent-net.rules")
    T.f("/etc/dbus-1/system.d/org.freedesktop.login1.conf")
    # /var
    for f in ("syslog", "auth.log", "kern.log", "daemon.log", "messages", "dpkg.log",
              "alternatives.log", "bootstrap.log", "faillog", "lastlog", "wtmp", "btmp", "mail.log"):
        T.f("/var/log/" + f, 0o640)
    for i in range(1, rng.randint(3, 6)):
        T.f("/var/log/syslog.%d.gz" % i, 0o640)
    T.f("/var/log/apt/history.log")
    T.f("/var/log/apt/term.log")
    T.f("/var/log/apt/eipp.log.xz")
    mid = "%032x" % rng.getrandbits(128)
    T.f("/var/log/journal/%s/system.journal" % mid)
    T.f("/var/log/journal/%s/user-1000.journal" % mid)
    T.f("/var/log/apache2/access.log")
    T.f("/var/log/apache2/error.log")
    T.f("/var/log/nginx/access.log")
    T.f("/var/log/mysql/error.log")
    T.f("/var/log/audit/audit.log", 0o600)
    T.f("/var/log/installer/syslog")
    T.f("/var/log/private/.keep")
    for p in pick(rng, DOC_PKGS, 120):
        T.f("/var/lib/dpkg/info/%s.list" % p)
        if rng.random() < 0.5:
            T.f("/var/lib/dpkg/info/%s.md5sums" % p)
        if rng.random() < 0.2:
            T.x("/var/lib/dpkg/info/%s.postinst" % p)
    T.f("/var/lib/dpkg/status")
    T.f("/var/lib/dpkg/lock", 0o640)
    for i in range(rng.randint(8, 16)):
        T.f("/var/lib/apt/lists/deb.debian.org_debian_dists_bookworm_main_i18n_%02d" % i)
    T.f("/var/lib/mysql/ibdata1")
    T.f("/var/lib/mysql/mysql/user.frm")
    T.f("/var/lib/mysql/mysql.sock.lock")
    T.f("/var/lib/systemd/random-seed", 0o600)
    T.f("/var/lib/systemd/timers/stamp-apt-daily.timer")
    T.f("/var/lib/dhcp/dhclient.eth0.leases")
    T.f("/var/lib/sudo/lectured/.keep")
    T.f("/var/lib/private/.keep")
    T.f("/var/lib/selinux/default/active/commit_num")
    T.f("/var/lib/postfix/master.lock")
    T.f("/var/lib/dbus/machine-id")
    for i in range(rng.randint(15, 30)):
        T.f("/var/cache/apt/archives/pkg%02d_1.0-1_amd64.deb" % i)
    T.f("/var/cache/apt/pkgcache.bin")
    T.f("/var/cache/man/index.db")
    T.f("/var/cache/debconf/config.dat")
    T.f("/var/spool/cron/crontabs/root", 0o600)
    T.f("/var/spool/postfix/pid/master.pid")
    T.p("/var/spool/postfix/public/pickup")
    T.s("/var/spool/postfix/private/smtp")
    T.f("/var/mail/u")
    T.f("/var/www/html/index.html")
    T.f("/var/www/cgi-bin/test.cgi", 0o755)
    T.f("/var/tmp/systemd-private-x/tmp/.keep")
    T.l("/var/run", "/run")
    T.l("/var/lock", "/run/lock")
    T.f("/var/backups/passwd.bak")
    # /run, /tmp, /dev
    T.f("/run/sshd.pid")
    T.f("/run/crond.pid")
    T.s("/run/dbus/system_bus_socket")
    T.s("/run/systemd/journal/socket")
    T.f("/run/utmp")
    T.d("/run/lock/subsys")
    T.d("/run/user/1000/systemd")
    T.s("/tmp/.X11-unix/X0")
    T.d("/tmp/.ICE-unix")
    T.f("/tmp/tmp.abcdef")
    T.p("/tmp/fifo.1")
    T.dev("/dev/null", "c", 1, 3)
    T.dev("/dev/zero", "c", 1, 5)
    T.dev("/dev/random", "c", 1, 8)
    T.dev("/dev/urandom", "c", 1, 9)
    T.dev("/dev/tty", "c", 5, 0)
    T.dev("/dev/console", "c", 5, 1)
    T.dev("/dev/ptmx", "c", 5, 2)
    for i in range(4):
        T.dev("/dev/tty%d" % i, "c", 4, i)
    T.dev("/dev/sda", "b", 8, 0)
    T.dev("/dev/sda1", "b", 8, 1)
    T.dev("/dev/sda2", "b", 8, 2)
    T.dev("/dev/loop0", "b", 7, 0)
    T.dev("/dev/dm-0", "b", 253, 0)
    T.dev("/dev/kvm", "c", 10, 232)
    T.dev("/dev/fuse", "c", 10, 229)
    T.l("/dev/stdin", "/proc/self/fd/0")
    T.l("/dev/disk/by-uuid/0a1b2c3d", "../../sda1")
    T.d("/dev/pts")
    T.d("/dev/shm")
    T.d("/dev/mqueue")
    T.s("/dev/log")
    T.p("/dev/initctl")
    # homes
    for user in ("u", "v"):
        h = "/home/" + user
        for f in (".bashrc", ".profile", ".bash_history", ".Xauthority", ".xsession-errors"):
            T.f(h + "/" + f)
        T.f(h + "/.ssh/authorized_keys", 0o600)
        T.f(h + "/.ssh/id_ed25519", 0o600)
        T.f(h + "/.ssh/known_hosts")
        T.f(h + "/.gnupg/pubring.kbx")
        T.f(h + "/.config/pulse/cookie")
        T.f(h + "/.local/share/keyrings/login.keyring")
        T.f(h + "/.mozilla/firefox/abc.default/prefs.js")
        T.f(h + "/.cache/thumbnails/normal/x.png")
        T.x(h + "/bin/hello")
        T.f(h + "/public_html/index.html")
        T.x(h + "/public_html/cgi-bin/run.cgi")
        for d in ("Documents", "Music", "Pictures", "Videos", "Downloads", "Desktop"):
            for i in range(rng.randint(2, 8)):
                T.f("%s/%s/file%02d.dat" % (h, d, i))
    T.f("/root/.bashrc")
    T.f("/root/.profile")
    T.f("/root/.ssh/authorized_keys", 0o600)
    T.f("/root/.ssh/known_hosts")
    T.f("/root/.gnupg/trustdb.gpg")
    # /boot, /opt, /srv
    T.f("/boot/vmlinuz-6.1.0-13-amd64")
    T.f("/boot/initrd.img-6.1.0-13-amd64")
    T.f("/boot/config-6.1.0-13-amd64")
    T.f("/boot/System.map-6.1.0-13-amd64")
    T.f("/boot/grub/grub.cfg")
    T.f("/boot/grub/grubenv")
    for m in ("normal.mod", "ext2.mod", "linux.mod", "part_gpt.mod"):
        T.f("/boot/grub/x86_64-efi/" + m)
    T.x("/opt/vendorapp/bin/vendorapp")
    T.f("/opt/vendorapp/lib/libvendor.so")
    T.f("/opt/vendorapp/share/doc/README")
    T.f("/srv/www/site/index.html")
    T.f("/srv/ftp/pub/README")
    T.d("/media/cdrom")
    T.d("/mnt/data")


ANDROID_BIN = """sh toybox toolbox app_process64 app_process32 surfaceflinger servicemanager hwservicemanager
vndservicemanager vold netd installd lmkd logd logcat init ueventd adbd dumpsys dumpstate cmd am pm
wm settings input bootanimation cameraserver audioserver mediaserver mediadrmserver mediaextractor
mediametrics keystore gatekeeperd storaged statsd incidentd traced traced_probes perfetto wificond
wpa_supplicant hostapd dnsmasq iptables ip6tables ip tc ping ping6 netutils-wrapper-1.0 racoon mtpd
pppd clatd rild thermalserviced update_engine update_verifier recovery-persist recovery-refresh
uncrypt blank_screen e2fsck fsck.f2fs mke2fs make_f2fs sload_f2fs resize2fs tune2fs sgdisk
vdc fsck_msdos newfs_msdos dex2oat dexoptanalyzer profman patchoat otapreopt otapreopt_chroot
crash_dump64 crash_dump32 debuggerd tombstoned linker linker64 llkd bpfloader idmap idmap2
secilc sepolicy-check checkpolicy restorecon_recursive apexd gsid mdnsd bugreport bugreportz
screencap screenrecord uiautomator monkey content bmgr ime svc appops dpm locksettings""".split()

ANDROID_LIBS = """libc.so libm.so libdl.so liblog.so libcutils.so libutils.so libbinder.so libhidlbase.so
libhidltransport.so libhwbinder.so libbase.so libc++.so libz.so libcrypto.so libssl.so libsqlite.so
libicuuc.so libicui18n.so libandroid_runtime.so libandroid.so libart.so libart-compiler.so
libnativehelper.so libui.so libgui.so libEGL.so libGLESv2.so libGLESv1_CM.so libvulkan.so
libmedia.so libmediandk.so libstagefright.so libaudioclient.so libcamera_client.so libsensor.so
libinput.so libnetd_client.so libselinux.so libpackagelistparser.so libprocessgroup.so
libsync.so libion.so libhardware.so libhardware_legacy.so libpower.so libvintf.so libjsoncpp.so
libexpat.so libxml2.so libpcre2.so libprotobuf-cpp-lite.so libkeystore_binder.so libsoftkeymasterdevice.so
libwifi-system.so libwilhelm.so libOpenSLES.so libaaudio.so libRS.so libbcinfo.so libjnigraphics.so
libwebviewchromium_loader.so libfilterfw.so libdrmframework.so libmtp.so libusbhost.so""".split()

APPS = """Bluetooth BluetoothMidiService CertInstaller Chrome DocumentsUI Gallery2 KeyChain Music
NfcNci PacProcessor PrintSpooler Stk Traceur WallpaperBackup webview CaptivePortalLogin
BasicDreams BookmarkProvider CompanionDeviceManager EasterEgg HTMLViewer LiveWallpapersPicker""".split()
PRIV_APPS = """Settings SystemUI Launcher3 Phonesky GmsCore TeleService Telecom Contacts Dialer
ContactsProvider MediaProvider DownloadProvider ExternalStorageProvider Shell SettingsProvider
InputDevices ManagedProvisioning MtpDocumentsProvider ProxyHandler SharedStorageBackup
StatementService VpnDialogs WallpaperCropper CellBroadcastReceiver BackupRestoreConfirmation""".split()
PKGS = """com.android.settings com.android.systemui com.android.phone com.android.providers.contacts
com.android.providers.media com.android.providers.downloads com.android.providers.settings
com.android.bluetooth com.android.nfc com.android.shell com.android.launcher3 com.android.chrome
com.google.android.gms com.google.android.gsf com.android.vending com.whatsapp com.spotify.music
org.mozilla.firefox com.example.notes com.example.bank""".split()
MISC = """adb apns audio audioserver bluetooth bluedroid camera dhcp gatekeeper incidents keychain
keystore logd media net netd profiles recovery shared_relro sms systemkeys textclassifier
update_engine user vold wifi zoneinfo wmtrace perfetto-traces""".split()


def data_tree(rng, T, base):
    """The contents of an Android /data partition; base is "" (an image mounted at /data) or
    "/data" (inside a whole-system tree)."""
    b = base
    T.d(b or "/")
    T.f(b + "/.layout_version")
    used = pick(rng, PKGS, 16)
    for p in used:
        app = "%s/app/%s-%s==" % (b, p, "".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEF0123456789")
                                              for _ in range(10)))
        T.f(app + "/base.apk")
        if rng.random() < 0.6:
            T.f(app + "/lib/arm64/libnative%d.so" % rng.randint(1, 9))
        T.f(app + "/oat/arm64/base.odex")
        T.f(app + "/oat/arm64/base.vdex")
        d = "%s/data/%s" % (b, p)
        for sub in ("cache", "code_cache"):
            T.d(d + "/" + sub)
        for i in range(rng.randint(1, 4)):
            T.f(d + "/databases/db%d.db" % i)
            T.f(d + "/databases/db%d.db-journal" % i)
        for i in range(rng.randint(1, 4)):
            T.f(d + "/shared_prefs/prefs%d.xml" % i)
        for i in range(rng.randint(0, 6)):
            T.f(d + "/files/f%02d" % i)
        T.f("%s/user_de/0/%s/files/boot.dat" % (b, p))
        T.f("%s/misc/profiles/cur/0/%s/primary.prof" % (b, p))
        T.f("%s/misc/profiles/ref/%s/primary.prof" % (b, p))
        T.d("%s/media/0/Android/data/%s/files" % (b, p))
    T.f(b + "/app/vmdl12345.tmp/base.apk")
    T.l(b + "/user/0", b + "/data" if b else "/data/data")
    for m in MISC:
        if rng.random() < 0.8:
            T.d("%s/misc/%s" % (b, m))
    T.f(b + "/misc/wifi/wpa_supplicant.conf")
    T.f(b + "/misc/wifi/WifiConfigStore.xml")
    T.f(b + "/misc/bluedroid/bt_config.conf")
    T.s(b + "/misc/bluedroid/.a2dp_ctrl")
    T.f(b + "/misc/keystore/user_0/.masterkey")
    T.f(b + "/misc/vold/bench")
    T.f(b + "/misc/logd/logcat")
    T.f(b + "/misc/net/rt_tables")
    T.f(b + "/misc/zoneinfo/current/tzdata")
    T.f(b + "/misc/recovery/ro.build.fingerprint")
    T.f(b + "/misc/shared_relro/libwebviewchromium32.relro")
    for f in ("packages.xml", "packages.list", "users/0.xml", "users/userlist.xml",
              "dropbox/system_server_crash@1.txt", "sync/accounts.xml", "netstats/dev.1",
              "graphicsstats/0/x", "procstats/state.bin", "usagestats/0/daily/1", "locksettings.db",
              "gatekeeper.password.key", "batterystats.bin", "appops.xml", "heapdump/.keep"):
        T.f("%s/system/%s" % (b, f))
    T.s(b + "/system/ndebugsocket")
    T.f(b + "/system_ce/0/accounts_ce.db")
    T.f(b + "/system_de/0/accounts_de.db")
    T.f(b + "/misc_ce/0/vold/.keep")
    T.f(b + "/misc_de/0/apexdata/.keep")
    T.f(b + "/vendor_ce/0/.keep")
    T.f(b + "/vendor_de/0/.keep")
    for d in ("DCIM/Camera", "Download", "Pictures", "Music", "Movies", "Documents"):
        for i in range(rng.randint(1, 8)):
            T.f("%s/media/0/%s/IMG_%04d.jpg" % (b, d, i))
    T.f(b + "/local/tmp/test.sh")
    T.d(b + "/local/traces")
    for i in range(rng.randint(20, 40)):
        T.f("%s/dalvik-cache/arm64/system@framework@f%02d.jar@classes.dex" % (b, i))
    T.f(b + "/property/persistent_properties")
    T.f(b + "/anr/traces.txt")
    for i in range(rng.randint(1, 5)):
        T.f("%s/tombstones/tombstone_%02d" % (b, i))
    T.f(b + "/vendor/wifi/wpa/wpa_supplicant.conf")
    T.f(b + "/vendor/tombstones/wifi/x")
    T.f(b + "/nfc/param/nfc.bin")
    T.f(b + "/adb/.keep")
    T.f(b + "/resource-cache/overlays.list")
    T.f(b + "/ota/update.zip")
    T.f(b + "/ota_package/.keep")
    T.f(b + "/backup/pending/journal")
    T.f(b + "/unencrypted/key/version")
    T.f(b + "/drm/.keep")
    T.f(b + "/bootchart/enabled")
    T.f(b + "/cache/recovery/last_log")
    T.f(b + "/ss/.keep")
    T.f(b + "/preloads/media/x.mp4")


def android_tree(rng, T):
    """A phone's / with system, vendor and data in one tree."""
    for d in ("/acct", "/cache", "/config", "/mnt/vendor", "/odm", "/oem", "/proc", "/sys",
              "/storage", "/sbin", "/dev", "/debug_ramdisk", "/apex", "/metadata", "/product"):
        T.d(d)
    for f in ("init", "init.rc", "init.usb.rc", "init.zygote64_32.rc", "ueventd.rc", "default.prop",
              "plat_file_contexts", "plat_property_contexts", "sepolicy", "vendor_file_contexts"):
        T.f("/" + f, 0o750 if f == "init" else 0o644)
    T.l("/sdcard", "/storage/self/primary")
    T.l("/d", "/sys/kernel/debug")
    T.l("/etc", "/system/etc")
    T.l("/bugreports", "/data/user_de/0/com.android.shell/files/bugreports")
    T.x("/sbin/charger")
    T.x("/sbin/adbd")
    for b in pick(rng, ANDROID_BIN, 150):
        T.x("/system/bin/" + b)
    for t in ("ls", "cat", "cp", "mv", "rm", "ps", "top", "grep", "sed", "mount", "chmod",
              "chown", "getprop", "setprop", "start", "stop", "id", "ln", "mkdir", "dd"):
        T.l("/system/bin/" + t, "toybox")
    for h in ("android.hidl.allocator@1.0-service", "android.system.suspend@1.0-service"):
        T.x("/system/bin/hw/" + h)
    T.x("/system/xbin/su")
    for lib in pick(rng, ANDROID_LIBS, 70):
        T.f("/system/lib64/" + lib)
        if rng.random() < 0.6:
            T.f("/system/lib/" + lib)
    for lib in ("gralloc.default.so", "audio.primary.default.so", "sensors.default.so"):
        T.f("/system/lib64/hw/" + lib)
    T.f("/system/lib64/vndk-28/libhidlbase.so")
    T.f("/system/lib64/vndk-sp-28/libc++.so")
    for i, rc in enumerate(("surfaceflinger.rc", "vold.rc", "netd.rc", "installd.rc", "logd.rc",
                            "servicemanager.rc", "lmkd.rc", "cameraserver.rc", "audioserver.rc")):
        T.f("/system/etc/init/" + rc)
    for f in ("hosts", "mkshrc", "event-log-tags", "fs_config_dirs", "fs_config_files",
              "ld.config.28.txt", "public.libraries.txt", "prop.default", "build.prop"):
        T.f("/system/etc/" + f)
    for f in ("plat_file_contexts", "plat_property_contexts", "plat_sepolicy.cil",
              "plat_service_contexts", "mapping/28.0.cil"):
        T.f("/system/etc/selinux/" + f)
    for i in range(rng.randint(20, 40)):
        T.f("/system/etc/permissions/android.hardware.feature%02d.xml" % i)
    T.f("/system/etc/vintf/manifest.xml")
    T.f("/system/etc/security/cacerts/00673b5b.0")
    T.f("/system/build.prop")
    for i in range(rng.randint(150, 250)):
        T.f("/system/usr/share/zoneinfo/Zone%03d" % i)
    for i in range(rng.randint(100, 160)):
        T.f("/system/lib64/libextra%03d.so" % i)
        T.f("/system/lib/libextra%03d.so" % i)
    for j in ("framework.jar", "services.jar", "ext.jar", "telephony-common.jar", "core-oj.jar",
              "core-libart.jar", "okhttp.jar", "bouncycastle.jar", "apache-xml.jar", "ims-common.jar"):
        T.f("/system/framework/" + j)
        T.f("/system/framework/oat/arm64/" + j.replace(".jar", ".odex"))
    for f in ("boot.art", "boot.oat", "boot.vdex", "boot-core-libart.art"):
        T.f("/system/framework/arm64/" + f)
    for a in APPS:
        T.f("/system/app/%s/%s.apk" % (a, a))
        T.f("/system/app/%s/oat/arm64/%s.odex" % (a, a))
    for a in PRIV_APPS:
        T.f("/system/priv-app/%s/%s.apk" % (a, a))
        T.f("/system/priv-app/%s/oat/arm64/%s.odex" % (a, a))
    for i in range(rng.randint(30, 60)):
        T.f("/system/fonts/Font%02d-Regular.ttf" % i)
    for i in range(rng.randint(10, 30)):
        T.f("/system/media/audio/ui/Effect%02d.ogg" % i)
    T.f("/system/media/bootanimation.zip")
    T.f("/system/usr/share/zoneinfo/tzdata")
    T.f("/system/usr/keylayout/Generic.kl")
    T.f("/system/usr/icu/icudt60l.dat")
    T.x("/system/usr/bin/tool")
    T.l("/system/vendor", "/vendor")
    T.l("/system/bin/sh-alias", "sh")
    # vendor
    for h in ("android.hardware.audio@2.0-service", "android.hardware.camera.provider@2.4-service",
              "android.hardware.graphics.composer@2.1-service", "android.hardware.wifi@1.0-service",
              "android.hardware.bluetooth@1.0-service", "android.hardware.keymaster@3.0-service",
              "android.hardware.gatekeeper@1.0-service", "android.hardware.power@1.0-service",
              "android.hardware.sensors@1.0-service", "android.hardware.drm@1.0-service"):
        T.x("/vendor/bin/hw/" + h)
        T.f("/vendor/etc/init/%s.rc" % h)
    for b in ("qseecomd", "rmt_storage", "tftp_server", "pd-mapper", "irsc_util", "thermal-engine",
              "sh", "toybox_vendor", "vndservice"):
        T.x("/vendor/bin/" + b)
    for lib in pick(rng, ANDROID_LIBS, 40):
        T.f("/vendor/lib64/" + lib)
        if rng.random() < 0.5:
            T.f("/vendor/lib/" + lib)
    for lib in ("gralloc.msm8998.so", "hwcomposer.msm8998.so", "audio.primary.msm8998.so",
                "android.hardware.camera.provider@2.4-impl.so", "vulkan.msm8998.so"):
        T.f("/vendor/lib64/hw/" + lib)
        T.f("/vendor/lib/hw/" + lib)
    T.f("/vendor/lib64/egl/libEGL_adreno.so")
    for i in range(rng.randint(10, 25)):
        T.f("/vendor/firmware/fw%02d.bin" % i)
    for f in ("vintf/manifest.xml", "selinux/vendor_file_contexts", "selinux/vendor_sepolicy.cil",
              "wifi/wpa_supplicant.conf", "audio_policy_configuration.xml", "fstab.qcom"):
        T.f("/vendor/etc/" + f)
    T.f("/vendor/app/Qti/Qti.apk")
    T.f("/vendor/overlay/FrameworksRes.apk")
    T.f("/vendor/build.prop")
    T.f("/vendor/default.prop")
    T.f("/odm/etc/build.prop")
    T.f("/product/build.prop")
    T.f("/cache/recovery/.keep")
    T.d("/mnt/runtime/default")
    T.d("/storage/emulated")
    T.d("/metadata/vold")
    T.dev("/dev/null", "c", 1, 3)
    T.dev("/dev/zero", "c", 1, 5)
    T.dev("/dev/binder", "c", 10, 60)
    T.dev("/dev/hwbinder", "c", 10, 61)
    T.dev("/dev/ashmem", "c", 10, 58)
    T.dev("/dev/block/mmcblk0", "b", 179, 0)
    T.dev("/dev/block/mmcblk0p1", "b", 179, 1)
    T.l("/dev/block/by-name/system", "/dev/block/mmcblk0p1")
    T.s("/dev/socket/property_service")
    T.s("/dev/socket/zygote")
    T.s("/dev/socket/logd")
    T.d("/dev/__properties__")
    T.d("/dev/pts")
    data_tree(rng, T, "/data")


def cmd_tree(a):
    rng = random.Random("%s:tree:%s" % (a.seed, a.kind))
    if os.path.exists(a.root):
        shutil.rmtree(a.root)
    T = Tree(a.root)
    if a.kind == "refpolicy":
        refpolicy_tree(rng, T)
    elif a.kind == "android":
        android_tree(rng, T)
    else:
        data_tree(rng, T, "")
    T.write_manifest(a.manifest)
    return 0


def cmd_tsvtree(a):
    part = a.part.strip("/")
    rows = []
    with open(a.tsv) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            col = line.rstrip("\n").split("\t")
            while len(col) < 5:
                col.append("")
            typ, gm, size, path, target = col[:5]
            if not path.startswith(part + "/"):
                continue
            rows.append((typ, gm, path[len(part):], target))
    if not rows:
        print("no entries under %s/ in %s" % (part, a.tsv), file=sys.stderr)
        return 1
    mp = "/" + part
    if a.labels:
        labeled = set()
        with open(a.labels) as f:
            for line in f:
                if line.startswith("#"):
                    continue
                col = line.rstrip("\n").split("\t")
                if len(col) >= 2:
                    labeled.add(col[1])
        at_root = sum(1 for r in rows if r[2] in labeled)
        at_part = sum(1 for r in rows if "/" + part + r[2] in labeled)
        mp = "/" if at_root > at_part else "/" + part
    if os.path.exists(a.root):
        shutil.rmtree(a.root)
    T = Tree(a.root)
    for typ, gm, path, target in rows:
        if typ == "d":
            T.d(path)
        elif typ in ("f", "x"):
            # the listing's sizes are not needed for labels: every file is created empty
            T.f(path, 0o755 if typ == "x" or gm == "100755" else 0o644)
        elif typ == "l":
            T.l(path, target or "missing")
    T.write_manifest(a.manifest)
    print(mp)
    return 0


# ---------------------------------------------------------------- policies

class Spec:
    __slots__ = ("fi", "li", "regex", "type", "ctx", "prio", "meta", "rx", "prefix", "ordinal")


def has_meta(regex):
    """libselinux 3.4's spec_hasMetaChars: an escaped character is not one."""
    i = 0
    while i < len(regex):
        c = regex[i]
        if c == "\\":
            i += 2
            continue
        if c in META:
            return True
        i += 1
    return False


def stem(regex):
    """libselinux 3.4's get_stem_from_spec: "/comp" when regex is "/comp/..." with a literal comp."""
    if not regex.startswith("/"):
        return ""
    j = regex.find("/", 1)
    if j < 0:
        return ""
    for c in regex[:j]:
        if c in META:
            return ""
    return regex[:j]


def literal_prefix(regex):
    """A string every match of regex starts with (conservative)."""
    depth = 0
    i = 0
    while i < len(regex):  # a top-level alternative: no prefix
        c = regex[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            j = regex.find("]", i + 2)
            i = j + 1 if j > 0 else len(regex)
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            return ""
        i += 1
    out = []
    i = 0
    while i < len(regex):
        c = regex[i]
        if c == "\\":
            if i + 1 < len(regex) and not regex[i + 1].isalnum():
                out.append(regex[i + 1])
                i += 2
                continue
            break
        if c in META or c in ")}":
            if c in "?*{" and out:
                out.pop()
            break
        out.append(c)
        i += 1
    return "".join(out)


def parse_policy(path, fi):
    lines = open(path, encoding="latin-1").read().splitlines(True)
    specs = []
    for li, line in enumerate(lines):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        fields = s.split()
        if len(fields) < 2:
            continue
        sp = Spec()
        sp.fi, sp.li = fi, li
        sp.regex = fields[0]
        sp.type = fields[1] if len(fields) >= 3 else ""
        sp.ctx = fields[-1]
        specs.append(sp)
    return lines, specs


def read_subs(path):
    subs = []
    if not path or not os.path.exists(path):
        return subs
    for line in open(path, encoding="latin-1"):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        f = s.split()
        if len(f) >= 2:
            subs.append((f[0].rstrip("/") or "/", f[1].rstrip("/") or "/"))
    return subs


def apply_subs(subs, path):
    for src, dst in reversed(subs):
        if path.startswith(src) and (len(path) == len(src) or path[len(src)] == "/"):
            rest = path[len(src):]
            if dst == "/" and rest.startswith("/"):
                return rest
            return dst + rest
    return path


def read_manifest(path):
    out = []
    for line in open(path, encoding="latin-1"):
        col = line.rstrip("\n").split("\t")
        if len(col) >= 2:
            out.append((col[0], col[1], col[2] if len(col) > 2 else ""))
    return out


def full_path(mp, p):
    if not mp or mp == "/":
        return p
    return mp if p == "/" else mp + p


def esc(path):
    return "".join("\\" + c if c in ".^$?*+|[](){}\\" else c for c in path)


def type_ok(spec_type, t):
    return not spec_type or TYPE_OF_FIELD.get(spec_type) == t


def overlapping(specs, regex, typ, skip=None):
    for s in specs:
        if s is skip or s.regex != regex:
            continue
        if not s.type or not typ or s.type == typ:
            return True
    return False


def spec_text(regex, typ, ctx):
    return "%s\t%s%s\n" % (regex, typ + "\t" if typ else "", ctx)


def cmd_edits(a):
    files = [a.fc] + list(a.extra or [])
    all_specs = []
    texts = []
    for fi, path in enumerate(files):
        lines, specs = parse_policy(path, fi)
        texts.append(lines)
        for o, s in enumerate(specs):
            s.ordinal = o
        all_specs.extend(specs)
    for prio, s in enumerate(all_specs):
        s.prio = prio
        s.meta = has_meta(s.regex)
        try:
            s.rx = re.compile(s.regex)
        except re.error:
            s.rx = None
        s.prefix = literal_prefix(s.regex)
    subs = []
    for sf in a.subs or []:
        subs.extend(read_subs(sf))
    entries = [e for e in read_manifest(a.manifest) if e[0] != "h"]
    mp = a.mp or ""
    keys = []
    for t, p, _ in entries:
        fp = full_path(mp, p)
        keys.append((apply_subs(subs, fp), fp, t))
    order = sorted(range(len(keys)), key=lambda i: keys[i][0])
    skeys = [keys[i][0] for i in order]
    matches = [[] for _ in keys]      # spec indexes (prio) matching each entry
    matched_by = {}                   # prio -> entry indexes
    for s in all_specs:
        if s.rx is None:
            continue
        lo = bisect.bisect_left(skeys, s.prefix)
        hi = bisect.bisect_left(skeys, s.prefix + "\U0010ffff") if s.prefix else len(skeys)
        for k in range(lo, hi):
            i = order[k]
            if type_ok(s.type, keys[i][2]) and s.rx.fullmatch(keys[i][0]):
                matches[i].append(s.prio)
                matched_by.setdefault(s.prio, []).append(i)
    decider = [None] * len(keys)
    decides = {}
    for i, ms in enumerate(matches):
        if not ms:
            continue
        plain = [m for m in ms if not all_specs[m].meta]
        d = max(plain) if plain else max(ms)
        decider[i] = d
        decides.setdefault(d, []).append(i)
    ctx_pool = sorted({s.ctx for s in all_specs if s.ctx != "<<none>>"})
    main = [s for s in all_specs if s.fi == 0]
    by_file = [[s for s in all_specs if s.fi == fi] for fi in range(len(files))]
    relevant = sorted(matched_by)
    deciders = sorted(decides)
    kinds = ["insert", "delete", "context", "move", "retype", "none"]
    plan = [kinds[i % len(kinds)] for i in range(a.n)]
    random.Random("%s:plan" % a.seed).shuffle(plan)
    os.makedirs(a.out, exist_ok=True)
    tsv = open(os.path.join(a.out, "edits.tsv"), "w")
    diffkind = {"insert": "added", "none": "added", "delete": "removed", "context": "context",
                "move": "moved", "retype": "retyped"}

    def choose(rng, primary, secondary, p_primary):
        if primary and rng.random() < p_primary:
            return all_specs[rng.choice(primary)]
        if secondary and rng.random() < 0.7:
            return all_specs[rng.choice(secondary)]
        return rng.choice(all_specs)

    def probe_for(s, rng):
        cands = decides.get(s.prio) or matched_by.get(s.prio) or []
        if not cands:
            return "-", "-"
        i = rng.choice(cands)
        return keys[i][1], keys[i][2]

    for n in range(a.n):
        kind = plan[n]
        rng = random.Random("%s:edit:%d" % (a.seed, n))
        new_texts = [list(t) for t in texts]
        for attempt in range(200):
            fi, oldline, newline, regex, probe, ptype, dec = 0, 0, 0, "", "-", "-", "-"
            desc = ""
            if kind in ("insert", "none"):
                i = rng.randrange(len(keys))
                key, fp, t = keys[i]
                if key == "/" or (t == "d" and rng.random() < 0.5) or rng.random() < 0.35:
                    # a subtree: the entry's directory (itself when it is one)
                    dkey = key if t == "d" else os.path.dirname(key)
                    if dkey == "/":
                        continue
                    regex, typ = esc(dkey) + "(/.*)?", ""
                else:
                    regex = esc(key)
                    typ = FIELD_OF_TYPE[t] if rng.random() < 0.6 else ""
                if overlapping(all_specs, regex, typ):
                    continue
                if kind == "none":
                    ctx = "<<none>>"
                else:
                    cur = all_specs[decider[i]].ctx if decider[i] is not None else None
                    ctx = rng.choice([c for c in ctx_pool if c != cur] or ctx_pool)
                lines = new_texts[0]
                spec_lines = [s.li for s in main]
                if has_meta(regex) and rng.random() < 0.5:
                    pos = len(lines)
                else:
                    pos = rng.choice(spec_lines + [len(lines)])
                lines.insert(pos, spec_text(regex, typ, ctx))
                newline = pos + 1
                # a plain spec decides unless a plain one loaded after it matches too
                dec = "0"
                if not has_meta(regex):
                    later = [s for s in all_specs if not s.meta and s.rx is not None and
                             (s.fi > 0 or s.li >= pos) and type_ok(s.type, t) and s.rx.fullmatch(key)]
                    dec = "0" if later else "1"
                probe, ptype = fp, t
                desc = "insert at line %d: %s" % (newline, spec_text(regex, typ, ctx).strip())
            else:
                if kind == "delete":
                    s = choose(rng, deciders, relevant, 0.7)
                elif kind == "context":
                    s = choose(rng, deciders, relevant, 0.8)
                elif kind == "move":
                    s = choose(rng, deciders, relevant, 0.6)
                else:
                    s = choose(rng, deciders, relevant, 0.7)
                fi, regex = s.fi, s.regex
                lines = new_texts[fi]
                oldline = s.li + 1
                probe, ptype = probe_for(s, rng)
                old_text = lines[s.li].strip()
                if kind == "delete":
                    del lines[s.li]
                    desc = "delete line %d: %s" % (oldline, old_text)
                elif kind == "context":
                    ctx = rng.choice([c for c in ctx_pool if c != s.ctx])
                    lines[s.li] = spec_text(s.regex, s.type, ctx)
                    newline = oldline
                    desc = "line %d: context %s -> %s: %s" % (oldline, s.ctx, ctx, old_text)
                elif kind == "retype":
                    types = [""] + list(TYPE_OF_FIELD)
                    want = [FIELD_OF_TYPE[keys[i][2]] for i in matched_by.get(s.prio, [])]
                    cands = [t for t in set(want + ["", "--", "-d"]) if t != s.type]
                    cands = [t for t in sorted(cands) if not overlapping(all_specs, s.regex, t, s)]
                    if not cands:
                        cands = [t for t in types if t != s.type and
                                 not overlapping(all_specs, s.regex, t, s)]
                    if not cands:
                        continue
                    typ = rng.choice(cands)
                    lines[s.li] = spec_text(s.regex, typ, s.ctx)
                    newline = oldline
                    desc = "line %d: type %s -> %s: %s" % (oldline, s.type or "(any)", typ or "(any)",
                                                         old_text)
                else:  # move, across at least two other specs of the same file
                    peers = by_file[fi]
                    comp = []
                    for i in matched_by.get(s.prio, []):
                        comp.extend(p for p in matches[i] if all_specs[p].fi == fi
                                    and all_specs[p].meta == s.meta)
                    comp = [all_specs[p] for p in set(comp)]
                    far = [p for p in (comp if comp and rng.random() < 0.6 else peers)
                           if abs(p.ordinal - s.ordinal) >= 2]
                    if not far:
                        far = [p for p in peers if abs(p.ordinal - s.ordinal) >= 2]
                    if not far:
                        continue
                    t = rng.choice(far)
                    text = lines[s.li]
                    if t.ordinal > s.ordinal:
                        pos = t.li  # after t, once s is gone
                    else:
                        pos = t.li  # before t
                    del lines[s.li]
                    lines.insert(pos, text)
                    newline = pos + 1
                    desc = "move line %d to line %d (%s spec %d): %s" % (
                        oldline, newline, "after" if t.ordinal > s.ordinal else "before",
                        t.ordinal + 1, old_text)
            break
        else:
            print("could not make edit %d (%s)" % (n, kind), file=sys.stderr)
            return 1
        eid = "e%02d" % n
        d = os.path.join(a.out, eid)
        os.makedirs(d, exist_ok=True)
        for k, path in enumerate(files):
            with open(os.path.join(d, os.path.basename(path)), "w", encoding="latin-1") as f:
                f.writelines(new_texts[k])
        for path in a.copy or []:
            shutil.copy(path, os.path.join(d, os.path.basename(path)))
        with open(os.path.join(d, "edit.txt"), "w") as f:
            f.write("%s: %s: %s\n" % (eid, os.path.basename(files[fi]), desc))
        tsv.write("\t".join([eid, kind, os.path.basename(files[fi]), str(oldline), str(newline),
                             stem(regex) or "-", regex, probe, ptype, diffkind[kind], dec]) + "\n")
    tsv.close()
    return 0


# ---------------------------------------------------------------- reports

def cmd_dump(a):
    """debugfs -f output of "testi PATH" + "ea_get PATH security.selinux" command pairs (in
    manifest order) -> PATH<TAB>LABEL. testi says whether the path exists."""
    paths = [p for _, p, _ in read_manifest(a.manifest)]
    got = {}
    cur, cmd = None, None
    for line in sys.stdin.buffer.read().decode("latin-1").splitlines():
        if line.startswith("debugfs: testi "):
            cur, cmd = line[len("debugfs: testi "):], "list"
            got[cur] = "?"
        elif line.startswith("debugfs: ea_get "):
            cmd = "get"
        elif cmd == "list" and line.startswith("Inode ") and "in use" in line:
            got[cur] = "-"
        elif cmd == "get" and line.startswith("security.selinux (") and " = " in line:
            v = line.split(" = ", 1)[1].strip()
            if v.startswith('"') and v.endswith('"'):
                v = v[1:-1]
            if v.endswith("\\000"):
                v = v[:-4]
            if got.get(cur) == "-":
                got[cur] = v
    for p in paths:
        print("%s\t%s" % (p, got.get(p, "?")))
    return 0


def cmd_events(a):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    with open(a.json) as f:
        doc = json.load(f)
    for ev in doc.get("events", []):
        if ev.get("event") == a.kind:
            print("%s\t%s:%s\t%s" % (ev["path"], ev.get("spec", "-"), ev.get("line", "-"),
                                     ev.get("wants", "-")))
    return 0


def cmd_mustskip(a):
    """Directories relabel must leave out: no regex that `fclabel diff --json` lists (old or new
    side) can match a path below them, judged from the regex's literal prefix alone."""
    with open(a.diff_json) as f:
        doc = json.load(f)
    if not doc.get("prunable", True):
        print(0)
        return 0
    prefixes = set()
    for ch in doc.get("changes", []):
        for side in ("old", "new"):
            if ch.get(side):
                prefixes.add(literal_prefix(ch[side]["regex"]))
    n = 0
    for t, p, _ in read_manifest(a.manifest):
        if t != "d":
            continue
        below = full_path(a.mp, p).rstrip("/") + "/"
        if not any(q.startswith(below) or below.startswith(q) for q in prefixes):
            n += 1
            if a.verbose:
                print(p, file=sys.stderr)
    print(n)
    return 0


def cmd_groups(a):
    for t, p, extra in read_manifest(a.manifest):
        print("%s\t%s" % (p, extra if t == "h" else p))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("tree")
    p.add_argument("--kind", choices=("refpolicy", "android", "data"), required=True)
    p.add_argument("--seed", required=True)
    p.add_argument("--root", required=True)
    p.add_argument("--manifest", required=True)
    p = sub.add_parser("tsvtree")
    p.add_argument("--tsv", required=True)
    p.add_argument("--part", required=True)
    p.add_argument("--labels")
    p.add_argument("--root", required=True)
    p.add_argument("--manifest", required=True)
    p = sub.add_parser("edits")
    p.add_argument("--seed", required=True)
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--fc", required=True)
    p.add_argument("--extra", action="append")
    p.add_argument("--copy", action="append")
    p.add_argument("--subs", action="append")
    p.add_argument("--manifest", required=True)
    p.add_argument("--mp", default="")
    p.add_argument("--out", required=True)
    p = sub.add_parser("dump")
    p.add_argument("manifest")
    p = sub.add_parser("events")
    p.add_argument("json")
    p.add_argument("kind")
    p = sub.add_parser("mustskip")
    p.add_argument("--manifest", required=True)
    p.add_argument("--mp", default="")
    p.add_argument("--diff-json", required=True)
    p.add_argument("-v", "--verbose", action="store_true")
    p = sub.add_parser("groups")
    p.add_argument("manifest")
    a = ap.parse_args()
    return {"tree": cmd_tree, "tsvtree": cmd_tsvtree, "edits": cmd_edits, "dump": cmd_dump,
            "events": cmd_events, "groups": cmd_groups, "mustskip": cmd_mustskip}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
