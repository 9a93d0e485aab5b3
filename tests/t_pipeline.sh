# Results a pipeline can trust (issue 25): each way a CI system wired to fclabel's exit code and
# report was misled, now caught.
#   1  a mount point no spec matches (-a /sytem): label and check exit 1 naming what is covered
#   2  a directory other than / needs -a: `fclabel label /etc` never labels /etc as /
#   3  digests: right, withheld (left to the device), missing or stale; check after label exits 0
#   4  seapp_contexts checked against --policy: a type that is not there is refused, file and line
#   5  the report: schema, summary, has null for a file with no label (every report the suite
#      writes is validated against man/fclabel-report.schema.json by the runner)
#   6  summaries on stderr; one usage line for an unknown option; hard links counted as links;
#      a read-only tree stops at the first write; check on a mounted image says so
. "$TOP/tests/lib.sh"
cd "$OUT" || exit 1
for t in mke2fs debugfs getfattr setfattr python3; do command -v $t >/dev/null || skip "$t is not installed"; done
export PATH="$PATH:/usr/sbin:/sbin"

mkdir -p tree/system/bin tree/system/etc tree/data
for i in 1 2 3; do echo $i >tree/system/bin/b$i; echo $i >tree/system/etc/e$i; done
ln tree/system/bin/b1 tree/system/bin/b1-link
ln tree/system/bin/b1 tree/system/etc/b1-link
printf '/\t\tu:object_r:rootfs:s0\n/system(/.*)?\t\tu:object_r:system_file:s0\n/system/bin(/.*)?\t--\tu:object_r:exec_t:s0\n/vendor(/.*)?\t\tu:object_r:vendor_file:s0\n/data(/.*)?\t\tu:object_r:data_t:s0\n' >fc
mke2fs -q -F -t ext4 -d tree/system sys.img 8M >/dev/null 2>&1 || { bad "mke2fs"; finish; }
cp sys.img sys.orig

# ---- 1: a mount point no spec matches ----
"$FCLABEL" check sys.img -S fc -a /sytem >c1.out 2>c1.err
expect_eq "1: check -a /sytem exits 1" "$?" 1
expect_match "1: says no spec matches, and what the specs cover" "$(cat c1.err)" \
	"*no spec matches /sytem*the specs cover /system, /data, /vendor*nothing done*"
"$FCLABEL" label sys.img -S fc -a /sytem >l1.out 2>l1.err
expect_eq "1: label -a /sytem exits 1" "$?" 1
expect_eq "1: label -a /sytem wrote nothing" "$(cmp -s sys.img sys.orig && echo same)" same
mkdir -p t1 && cp -a tree/system/. t1/
"$FCLABEL" label t1 -S fc -a /sytem >t1.out 2>t1.err
expect_eq "1: on a tree too: exit 1" "$?" 1
expect_match "1: on a tree too: names what is covered" "$(cat t1.err)" "*no spec matches /sytem*/system*"
"$FCLABEL" label sys.img -S fc -a /system >/dev/null 2>&1
expect_eq "1: the right mount point labels (exit 0)" "$?" 0

# ---- 2: a directory other than / ----
mkdir -p etccopy/rc2.d
echo x >etccopy/passwd
getfattr -R -d -m - etccopy >e0.dump 2>/dev/null
"$FCLABEL" label etccopy -S fc >d1.out 2>d1.err
expect_eq "2: label DIR without -a: exit 2" "$?" 2
expect_match "2: shows both commands" "$(cat d1.err)" \
	"*is a directory other than /*-a $OUT/etccopy*restorecon -R*-a / *setfiles -r*"
getfattr -R -d -m - etccopy >e1.dump 2>/dev/null
expect_eq "2: nothing written" "$(cmp -s e0.dump e1.dump && echo same)" same
"$FCLABEL" check etccopy -S fc >/dev/null 2>&1
expect_eq "2: check DIR without -a: exit 2 too" "$?" 2
mkdir -p sysroot
cp -a tree/system/. sysroot/
"$FCLABEL" label sysroot -S fc -a /system >d2.out 2>d2.err
expect_eq "2: -a /system labels it where it would be: exit 0" "$?" 0
expect_eq "2: ... as /system/bin/b2" "$(getfattr -n security.selinux --only-values sysroot/bin/b2 2>/dev/null | tr -d '\0')" \
	"u:object_r:exec_t:s0"
expect_eq "2: ... and its root as /system" "$(getfattr -n security.selinux --only-values sysroot 2>/dev/null | tr -d '\0')" \
	"u:object_r:system_file:s0"

# ---- 3: digests: withheld is not missing ----
cp "$TOP/fixtures/userdata/file_contexts" ufc
SEAPP=$TOP/fixtures/seapp/plat_seapp_contexts
python3 "$TOP/tests/gen_userdata.py" tree ud/tree ud/meta --unknown >/dev/null || bad "gen_userdata.py"
n=$(wc -l <ud/meta/manifest)
mke2fs -q -F -t ext4 -I 256 -N $((n + 512)) -d ud/tree ud.img 64M >/dev/null 2>&1 || bad "mke2fs userdata"
"$FCLABEL" label ud.img -a /data -S ufc --seapp "$SEAPP" --digests >u1.out 2>u1.err
expect_eq "3: label --seapp --digests with an unknown package: exit 0" "$?" 0
expect_match "3: it withheld digests" "$(cat u1.err)" "*withheld [1-9]*"
"$FCLABEL" check ud.img -a /data -S ufc --seapp "$SEAPP" --digests --json u2.json >u2.out 2>u2.err
expect_eq "3: check right after, same options: exit 0" "$?" 0
expect_match "3: check says withheld apart from missing" "$(cat u2.err)" "*digests: 0 missing or stale, * right, [1-9]* withheld*"
expect_eq "3: the report keeps them apart" "$(python3 -c '
import json; r = json.load(open("u2.json"))
k = [e["event"] for e in r["events"] if e["event"].startswith("digest")]
d = r["summary"]["digests"]
print(d["withheld"] > 0, d["missing_or_stale"], k.count("digest-missing"), k.count("digest-withheld") == d["withheld"], r["summary"]["exit_status"])')" \
	"True 0 0 True 0"
cp ud.img ud2.img
"$FCLABEL" relabel ud2.img -a /data --from ufc --to ufc --seapp "$SEAPP" --digests --verify --full-label \
	>u3.out 2>u3.err
expect_eq "3: relabel --verify, same rule: exit 0" "$?" 0
# a digest label would write, taken away: missing, exit 1 (and relabel --verify says so too)
d=""
for p in $(awk -F'\t' '$2 == "yes" && $1 != "/" { print $1 }' ud/meta/digests.tsv); do
	case $(debugfs -R "ea_list $p" ud2.img 2>/dev/null) in *security.sehash*) d=$p; break ;; esac
done
expect_match "3: a directory with a digest found" "$d" "/?*"
debugfs -w -R "ea_rm $d security.sehash" ud2.img >/dev/null 2>&1
"$FCLABEL" check ud2.img -a /data -S ufc --seapp "$SEAPP" --digests >u4.out 2>u4.err
expect_eq "3: a missing digest: check exits 1" "$?" 1
expect_match "3: ... and lists it" "$(cat u4.out)" "*digest missing*"

# ---- 4: seapp_contexts against the policy ----
if command -v checkpolicy >/dev/null; then
	sed '/#NOMLS$/d' "$TOP/fixtures/policy/policy.conf" >p.conf
	checkpolicy -M -c 33 -o p.33 p.conf >cp.log 2>&1 || { cat cp.log; bad "checkpolicy"; }
	printf 'user=_app seinfo=default domain=app_t type=data_t levelFrom=none\n' >good_seapp
	printf '# a typo\nuser=_app seinfo=default domain=app_t type=data_tt levelFrom=none\nuser=system seinfo=platform domain=nosuch_t type=data_t\n' >bad_seapp
	printf '/\t\tsystem_u:object_r:root_t:s0\n/data(/.*)?\t\tsystem_u:object_r:data_t:s0\n' >pfc
	"$FCLABEL" lookup -S pfc --seapp good_seapp --packages ud/meta/packages.list --policy p.33 /data >s1.out 2>s1.err
	expect_eq "4: a seapp_contexts whose types the policy has passes" "$?" 0
	cp ud.img ud3.img
	"$FCLABEL" label ud3.img -a /data -S pfc --seapp bad_seapp --policy p.33 >s2.out 2>s2.err
	expect_eq "4: a type the policy lacks: refused, exit 1" "$?" 1
	expect_match "4: names file, line and type" "$(cat s2.err)" "*bad_seapp:2: type data_tt is not defined in policy p.33*"
	expect_match "4: and the domain on the next line" "$(cat s2.err)" "*bad_seapp:3: domain nosuch_t is not defined*"
	expect_eq "4: nothing written" "$(cmp -s ud.img ud3.img && echo same)" same
else
	echo "checkpolicy is not installed: the seapp_contexts policy check is not run"
fi

# ---- 5: the report ----
cp sys.orig r.img
"$FCLABEL" check r.img -S fc -a /system --json r.json >/dev/null 2>&1
expect_eq "5: check's report: schema, command, has null for a file never labeled, differ" "$(python3 -c '
import json; r = json.load(open("r.json"))
e = [x for x in r["events"] if x["path"] == "/system/bin/b2"][0]
print(r["schema"], r["command"], r["mode"], e["event"], e["has"], r["summary"]["differ"] > 0, r["summary"]["result"], r["summary"]["exit_status"])')" \
	"fclabel-report/1 check check differs None True checked 1"
expect_match "5: valid against the schema" "$(reports_valid r.json)" "1 reports, 0 bad"

# ---- 6: smaller things ----
cp sys.orig s6.img
"$FCLABEL" label s6.img -S fc -a /system >s6.out 2>s6.err
expect_eq "6: label's summary goes to stderr (stdout is data)" "$(cat s6.out)" ""
expect_match "6: ... as check's does" "$(cat s6.err)" "*scanned*"
expect_match "6: hard links counted as links, not unchanged" "$(cat s6.err)" "*unchanged 0, hard links 2,*"
"$FCLABEL" label s6.img -S fc --frobnicate >o6.out 2>o6.err
expect_eq "6: an unknown option: exit 2" "$?" 2
expect_eq "6: an unknown option: three lines, not the whole help" "$(wc -l <o6.err | tr -d ' ')" 3
expect_match "6: ... under fclabel label:, pointing to --help" "$(cat o6.err)" \
	"fclabel label: unrecognized option '--frobnicate'*usage: fclabel label IMAGE*see 'fclabel label --help'"
python3 "$TOP/tests/gen_userdata.py" tree new/a/b/root new/a/b/meta >/dev/null 2>g.err
expect_eq "6: gen_userdata.py makes its output folder" "$? $(ls new/a/b/meta/manifest 2>/dev/null)" "0 new/a/b/meta/manifest"
for w in --strict --force --cross-mounts --lock '-T N' SHARED; do
	grep -q -e "$w" "$TOP/README.md" && ok "6: README names $w" || bad "6: README lacks $w"
done
# a read-only tree, and a mounted image (a mount namespace of our own)
if command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
	cat >ns.sh <<EOF
cd "$OUT"
mkdir -p ro mnt
mount -t tmpfs none ro || exit 77
cp -a tree/system/. ro/
mount -o remount,ro ro
"$FCLABEL" label ro -S fc -a /system >ro.out 2>ro.err
echo "ro \$?"
cp sys.orig m.img
if mount -o loop,ro m.img mnt 2>/dev/null; then
	"$FCLABEL" check m.img -S fc -a /system >m.out 2>m.err
	echo "mounted \$?"
	umount mnt
fi
umount ro
EOF
	unshare -m sh ns.sh >ns.log 2>&1
	if [ $? = 77 ]; then
		echo "cannot mount a tmpfs here: the read-only tree case is not run"
	else
		expect_match "6: a read-only tree: exit 2" "$(grep '^ro ' ns.log)" "ro 2"
		expect_eq "6: a read-only tree: one error, not one per file" "$(grep -c 'read-only' ro.err)" 1
		expect_match "6: ... naming where" "$(cat ro.err)" "*ro: /system is on a read-only file system; stopped at the first write*"
		if grep -q '^mounted' ns.log; then
			expect_match "6: check on a mounted image says so" "$(cat m.err)" "*m.img is mounted*may be stale*"
			case $(cat m.err) in *"mount it once"*) bad "6: check on a mounted image advises mounting it";; *) ok "6: no advice to mount what is mounted" ;; esac
		else
			echo "no loop mount here: the mounted-image case is not run"
		fi
	fi
else
	echo "no mount namespace here (unshare -m): the read-only and mounted cases are not run"
fi
finish
