# --policy SEPOLICY (label, check, relabel, lookup): every context of the file_contexts set is
# checked against a binary SELinux policy with libsepol before anything is written.
# fixtures/policy/policy.conf is compiled here with checkpolicy, with MLS (-M) and without.
# Valid contexts: the labels are the same as without --policy (the images are compared byte for
# byte). An unknown type, role or user, a level or category the policy lacks, a role that may not
# have the type or user that may not have the role, MLS on a non-MLS policy and none on an MLS
# one: each is an error naming file:line and the context, all of them (20, then a count), exit 1,
# the image unchanged (cmp), no --json report written; .homedirs specs are checked too. A policy
# file that is missing, a directory, empty, not a policy or truncated: exit 2, named.
# With refpolicy's policy.33 (selinux-policy-default) and ../shared/data/refpolicy/file_contexts:
# the whole set is valid, a copy with one context mangled (and one in .homedirs) is not.
. "$TOP/tests/lib.sh"
PATH=$PATH:/usr/sbin:/sbin
[ -x "$FCLABEL" ] || skip "fclabel is not built ($FCLABEL): run make"
command -v checkpolicy >/dev/null 2>&1 || skip "checkpolicy is not installed (Debian package checkpolicy)"
command -v mke2fs >/dev/null 2>&1 || skip "mke2fs is not installed (Debian package e2fsprogs)"
cd "$OUT" || exit 1
SRC=$TOP/fixtures/policy/policy.conf

# ---- the policies -----------------------------------------------------------------------------
sed '/#NOMLS$/d' "$SRC" >mls.conf
sed '/#MLS$/d' "$SRC" >nomls.conf
checkpolicy -M -c 33 -o mls.33 mls.conf >checkpolicy.log 2>&1 || { cat checkpolicy.log; bad "checkpolicy -M"; finish; }
checkpolicy -c 33 -o nomls.33 nomls.conf >>checkpolicy.log 2>&1 || { cat checkpolicy.log; bad "checkpolicy"; finish; }
ok "fixture policy compiled, with and without MLS"

# ---- an image and a valid set -----------------------------------------------------------------
mkdir -p tree/etc tree/bin tree/data/app tree/dev
printf 'root:x:0:0::/root:/bin/sh\n' >tree/etc/passwd
printf 'root:*::::::\n' >tree/etc/shadow
printf '#!/bin/sh\n' >tree/bin/sh
ln -s sh tree/bin/ls
printf 'x' >tree/data/app/a
printf 'y' >tree/data/b
mke2fs -q -F -t ext4 -b 1024 -d tree base.img 2M >mke2fs.log 2>&1 || { cat mke2fs.log; bad "mke2fs"; finish; }
export SOURCE_DATE_EPOCH=1700000000

cat >good.fc <<'EOF'
# a set the fixture policy (MLS) defines
/			system_u:object_r:root_t:s0
/etc(/.*)?		system_u:object_r:etc_t:s0
/etc/shadow	--	system_u:object_r:shadow_t:s1:c0.c3
/bin(/.*)?		system_u:object_r:bin_t:s0
/data(/.*)?		system_u:object_r:data_t:s0-s1:c0,c2
/data/app(/.*)?		app_u:object_r:app_t:s0:c0.c1
/dev(/.*)?		system_u:object_r:device_t:s0
/data/b		--	<<none>>
/lost\+found(/.*)?	system_u:object_r:unlabeled_t:s0
EOF
sed 's/:s[0-9][-:.,cs0-9]*$//' good.fc >good_nomls.fc

# run NAME CMD...: stdout in NAME.out, stderr in NAME.err, status in $rc
run() {
	_n=$1; shift
	"$@" >"$_n.out" 2>"$_n.err"
	rc=$?
}
expect_rc() {
	if [ "$rc" = "$2" ]; then ok "$1 (exit $rc)"; else bad "$1: exit $rc, want $2: $(head -n 3 "$_n.err" | tr '\n' '|')"; fi
}

for kind in mls nomls; do
	fc=good.fc
	[ $kind = nomls ] && fc=good_nomls.fc
	cp base.img plain.img
	cp base.img pol.img
	run plain "$FCLABEL" label plain.img -S $fc
	expect_rc "$kind: label without --policy" 0
	run pol "$FCLABEL" label pol.img -S $fc --policy $kind.33
	expect_rc "$kind: label with --policy, every context valid" 0
	grep -q 'not valid' pol.err && bad "$kind: a valid set is reported invalid: $(cat pol.err)"
	if cmp -s plain.img pol.img; then ok "$kind: same image with and without --policy"
	else bad "$kind: the image labeled with --policy differs from the one without"; fi
	cmp -s base.img pol.img && bad "$kind: label wrote nothing"
	run chk "$FCLABEL" check pol.img -S $fc --policy $kind.33
	expect_rc "$kind: check with --policy on the labeled image" 0
	run lk1 "$FCLABEL" lookup -S $fc -v / /etc/shadow /data/app/a /data/b /dev/null
	run lk2 "$FCLABEL" lookup -S $fc --policy $kind.33 -v / /etc/shadow /data/app/a /data/b /dev/null
	expect_rc "$kind: lookup with --policy" 0
	expect_eq "$kind: lookup answers the same with --policy" "$(cat lk2.out)" "$(cat lk1.out)"
	cp base.img rl.img
	run rl "$FCLABEL" relabel rl.img --from none --to $fc --policy $kind.33
	expect_rc "$kind: relabel with --policy" 0
	if cmp -s plain.img rl.img; then ok "$kind: relabel --policy labels as label does"
	else bad "$kind: relabel --policy gives another image"; fi
done

# ---- invalid contexts -------------------------------------------------------------------------
# reject WHAT POLICY CONTEXT REASON-GLOB: CONTEXT is added as the last line of the valid set
reject() {
	if [ "$2" = nomls.33 ]; then cp good_nomls.fc bad.fc; else cp good.fc bad.fc; fi
	printf '/extra\t--\t%s\n' "$3" >>bad.fc
	n=$(wc -l <bad.fc)
	cp base.img t.img
	rm -f report.json
	for cmd in label check relabel lookup; do
		case $cmd in
		label) run rej "$FCLABEL" label t.img -S bad.fc --policy "$2" --json report.json ;;
		check) run rej "$FCLABEL" check t.img -S bad.fc --policy "$2" ;;
		relabel) run rej "$FCLABEL" relabel t.img --from none --to bad.fc --policy "$2" ;;
		lookup) run rej "$FCLABEL" lookup -S bad.fc --policy "$2" /etc/passwd ;;
		esac
		expect_rc "$1: $cmd refuses" 1
		expect_match "$1: $cmd names file:line and context" "$(head -n 1 rej.err)" \
			"fclabel $cmd: bad.fc:$n: context $3 is not valid in policy $2 ($4)"
		expect_eq "$1: $cmd: one invalid line" "$(grep -c 'not valid in policy' rej.err)" 1
		expect_eq "$1: $cmd: nothing on stdout" "$(cat rej.out)" ""
	done
	if cmp -s base.img t.img; then ok "$1: image unchanged"; else bad "$1: the image changed"; fi
	# (a report is written whatever ends the run: this one says the policy stopped it)
	expect_eq "$1: the --json report says the policy stopped the run, nothing written" \
		"$(python3 -c 'import json, sys; s = json.load(open("report.json"))["summary"]; print(s["failure"]["stage"], s["result"])' 2>&1)" \
		"policy not-written"
	return 0
}
reject "unknown type" mls.33 'system_u:object_r:bogus_t:s0' 'type bogus_t is not defined'
reject "unknown role" mls.33 'system_u:bogus_r:bin_t:s0' 'role bogus_r is not defined'
reject "unknown user" mls.33 'bogus_u:object_r:bin_t:s0' 'user bogus_u is not defined'
reject "unknown sensitivity" mls.33 'system_u:object_r:bin_t:s7' '*MLS*s7*'
reject "unknown category" mls.33 'system_u:object_r:bin_t:s0:c9' '*MLS*s0:c9*'
reject "range high below low" mls.33 'system_u:object_r:bin_t:s1-s0' '*high level does not dominate the low one'
reject "role without the type" mls.33 'system_u:system_r:bin_t:s0' 'role system_r may not have type bin_t'
reject "user without the role" mls.33 'app_u:system_r:kernel_t:s0' 'user app_u may not have role system_r'
reject "level outside the user's range" mls.33 'app_u:app_r:app_t:s1' "s1 is outside user app_u's range s0-s0:c0,c1"
reject "no level on an MLS policy" mls.33 'system_u:object_r:bin_t' '*MLS is enabled*'
reject "a level on a non-MLS policy" nomls.33 'system_u:object_r:bin_t:s0' '*MLS is disabled*'
reject "unknown type, non-MLS" nomls.33 'system_u:object_r:nope_t' 'type nope_t is not defined'
reject "not a context" mls.33 'garbage' '*USER:ROLE:TYPE*'

# every invalid line is reported (the same context on several lines too), 20 then a count
cp good.fc many.fc
i=0
while [ $i -lt 25 ]; do
	printf '/many%d\tsystem_u:object_r:bad%d_t:s0\n' $i $((i % 3)) >>many.fc
	i=$((i + 1))
done
cp base.img t.img
run many "$FCLABEL" label t.img -S many.fc --policy mls.33
expect_rc "25 invalid lines: refused" 1
expect_eq "25 invalid lines: 20 listed" "$(grep -c 'not valid in policy' many.err)" 20
expect_match "25 invalid lines: first is line 11" "$(head -n 1 many.err)" \
	"fclabel label: many.fc:11: context system_u:object_r:bad0_t:s0 is not valid*"
expect_match "25 invalid lines: line 14 repeats line 11's context" "$(sed -n 4p many.err)" \
	"fclabel label: many.fc:14: context system_u:object_r:bad0_t:s0 is not valid*"
expect_eq "25 invalid lines: then a count" "$(sed -n 21p many.err)" "fclabel label: ... and 5 more"
expect_match "25 invalid lines: total" "$(sed -n 22p many.err)" "fclabel label: 25 of 34 *"
if cmp -s base.img t.img; then ok "25 invalid lines: image unchanged"; else bad "25 invalid lines: the image changed"; fi

# .homedirs (and .local) companions are checked; --base-only leaves them out
cp good.fc hd.fc
printf '/home/[^/]+\tsystem_u:object_r:home_t:s0\n' >hd.fc.homedirs
printf '/opt(/.*)?\tsystem_u:object_r:bin_t:s0\n/opt/x\tsystem_u:object_r:opt_t:s0\n' >hd.fc.local
cp base.img t.img
run hd "$FCLABEL" label t.img -S hd.fc --policy mls.33
expect_rc "invalid contexts in .homedirs and .local: refused" 1
expect_eq "invalid contexts in .homedirs and .local: named" "$(grep 'not valid' hd.err | cut -d' ' -f3-4)" \
"hd.fc.homedirs:1: context
hd.fc.local:2: context"
run hd2 "$FCLABEL" label t.img -S hd.fc --base-only --policy mls.33
expect_rc "with --base-only the companions are not read" 0

# ---- policy files that cannot be read -----------------------------------------------------------
mkdir -p adir
: >empty.33
head -c 1000 mls.33 >trunc.33
head -c 20 mls.33 >trunc20.33
printf 'not a policy\n' >text.33
# bad_policy FILE GLOB
bad_policy() {
	cp base.img t.img
	for cmd in label check lookup; do
		case $cmd in
		lookup) run bp "$FCLABEL" lookup -S good.fc --policy "$1" /etc/passwd ;;
		*) run bp "$FCLABEL" $cmd t.img -S good.fc --policy "$1" ;;
		esac
		expect_rc "--policy $1: $cmd refuses" 2
		expect_match "--policy $1: $cmd says why, naming it" "$(cat bp.err)" "fclabel $cmd: --policy $1: $2"
	done
	if cmp -s base.img t.img; then ok "--policy $1: image unchanged"; else bad "--policy $1: the image changed"; fi
}
bad_policy missing.33 "No such file or directory"
bad_policy adir "Is a directory"
bad_policy empty.33 "an empty file*"
bad_policy text.33 "not a binary SELinux policy*(policydb magic number*"
bad_policy good.fc "not a binary SELinux policy*"
bad_policy trunc.33 "not a binary SELinux policy*"
bad_policy trunc20.33 "not a binary SELinux policy*"
bad_policy base.img "not a binary SELinux policy*"
run opt "$FCLABEL" label base.img -S good.fc --policy
expect_rc "--policy without an argument" 2

# ---- refpolicy ----------------------------------------------------------------------------------
REFPOL=/etc/selinux/default/policy/policy.33
RFC=$SHARED/refpolicy/file_contexts
if [ ! -f "$REFPOL" ]; then
	echo "refpolicy part skipped: $REFPOL is missing (Debian package selinux-policy-default)"
elif [ ! -f "$RFC" ]; then
	echo "refpolicy part skipped: $RFC is missing"
else
	mkdir -p rp
	cp "$RFC" rp/file_contexts
	[ -f "$RFC.homedirs" ] && cp "$RFC.homedirs" rp/file_contexts.homedirs
	[ -f "$RFC.subs_dist" ] && cp "$RFC.subs_dist" rp/file_contexts.subs_dist
	nspecs=$(cat rp/file_contexts rp/file_contexts.homedirs 2>/dev/null | grep -c '^/')
	start=$(date +%s)
	run rpok "$FCLABEL" lookup -S rp/file_contexts --policy "$REFPOL" /etc/passwd /root/.ssh
	expect_rc "refpolicy: $nspecs specs (with .homedirs) valid in $REFPOL" 0
	expect_eq "refpolicy: nothing on stderr" "$(cat rpok.err)" ""
	expect_eq "refpolicy: /etc/passwd" "$(head -n 1 rpok.out)" "system_u:object_r:etc_t:s0"
	echo "refpolicy: checked in $(($(date +%s) - start)) s"
	cp base.img t.img
	run rplabel "$FCLABEL" label -n t.img -S rp/file_contexts --policy "$REFPOL"
	expect_rc "refpolicy: label -n with --policy" 0
	# one context mangled in file_contexts, one in .homedirs
	ln=$(grep -n ':object_r:[a-z_]*_t:s0$' rp/file_contexts | sed -n 200p | cut -d: -f1)
	want=$(sed -n "${ln}p" rp/file_contexts | sed 's/:object_r:[a-z_]*_t:/:object_r:mangled_t:/' | awk '{print $NF}')
	sed -i "${ln}s/:object_r:[a-z_]*_t:/:object_r:mangled_t:/" rp/file_contexts
	run rpbad "$FCLABEL" label t.img -S rp/file_contexts --policy "$REFPOL"
	expect_rc "refpolicy: a mangled context is refused" 1
	expect_eq "refpolicy: the mangled line is named" "$(head -n 1 rpbad.err)" \
		"fclabel label: rp/file_contexts:$ln: context $want is not valid in policy $REFPOL (type mangled_t is not defined)"
	expect_eq "refpolicy: only that line" "$(grep -c 'not valid' rpbad.err)" 1
	if [ -f rp/file_contexts.homedirs ]; then
		hl=$(grep -n ':s0$' rp/file_contexts.homedirs | sed -n 3p | cut -d: -f1)
		sed -i "${hl}s/:s0\$/:s99/" rp/file_contexts.homedirs
		run rpbad2 "$FCLABEL" check t.img -S rp/file_contexts --policy "$REFPOL"
		expect_rc "refpolicy: and a mangled level in .homedirs" 1
		expect_match "refpolicy: the .homedirs line is named" "$(sed -n 2p rpbad2.err)" \
			"fclabel check: rp/file_contexts.homedirs:$hl: context *:s99 is not valid in policy $REFPOL (*s99*)"
	fi
	if cmp -s base.img t.img; then ok "refpolicy: image unchanged"; else bad "refpolicy: the image changed"; fi
fi
finish
