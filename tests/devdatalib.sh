# A small /data of a phone, for tests/t_device_slips.sh, t_device_walks.sh and t_man_examples.sh
# (source after tests/imglib.sh and tests/relabellib.sh). POSIX sh.
#
# dd_build DIR: in DIR
#   tree/      a phone's /data in little (image paths): two packages in /data/data, user 10's
#              and the DE data of one, its media directory, its profiles, the users' CE
#              directories (system_ce, misc_ce with sdksandbox, vendor_ce), /data/local/tmp and
#              system/packages.list
#   manifest   "TYPE<TAB>PATH" of each entry (lost+found included), manifest.cmds for rl_dump
#   dirs       the directories, for rl_digests
#   un.img     the tree as mke2fs made it: no label, no digest (a build's image)
#   L.img      un.img labeled in full with --seapp --digests (what a device's walks leave)
#   P.img      L.img with the levels a phone's own processes set (DD_LEVELS: an app's media
#              directory, vold's /data/user/10, a file its app made in its package directory)
#   L.dump, P.dump, L.dig, P.dig  their labels and digests as debugfs reads them
# The policy: DD_FC (fixtures/userdata/file_contexts) and DD_SEAPP (the fixture seapp_contexts).

DD_FC=$TOP/fixtures/userdata/file_contexts
DD_SEAPP=$TOP/fixtures/seapp/plat_seapp_contexts
DD_APP=com.example.app
DD_OLD=com.example.old
# PATH<TAB>LABEL: the levels set by hand on P.img
DD_LEVELS="/media/0/Android/data/$DD_APP	u:object_r:media_rw_data_file:s0:c170,c256,c512,c768
/user/10	u:object_r:system_data_file:s0:c522,c768
/data/$DD_APP/files/a	u:object_r:app_data_file:s0:c7,c256,c512,c768"

# dd_setl IMG PATH LABEL: a label set by hand (image paths)
dd_setl() {
	debugfs -w -R "ea_set $2 security.selinux $3" "$1" >/dev/null 2>&1 || bad "debugfs ea_set $2 on $1"
}

# dd_setx IMG PATH NAME HEX: any attribute set by hand, its value given in hex ("01")
dd_setx() {
	"$PY" -c 'import sys; open(sys.argv[1], "wb").write(bytes.fromhex(sys.argv[2]))' "$1.xval" "$4"
	debugfs -w -R "ea_set -f $1.xval $2 $3" "$1" >/dev/null 2>&1 || bad "debugfs ea_set $3 on $2 of $1"
	rm -f "$1.xval"
}

# dd_rmx IMG PATH NAME: an attribute removed by hand
dd_rmx() {
	debugfs -w -R "ea_rm $2 $3" "$1" >/dev/null 2>&1 || bad "debugfs ea_rm $3 on $2 of $1"
}

# dd_tree ROOT MANIFEST: the tree
dd_tree() {
	_r=$1
	rm -rf "$_r"
	mkdir -p "$_r/data/$DD_APP/files" "$_r/data/$DD_OLD/files" "$_r/user/10/$DD_APP/files" \
		"$_r/user_de/0/$DD_APP" "$_r/media/0/Android/data/$DD_APP/files" \
		"$_r/misc/profiles/cur/0/$DD_APP" "$_r/misc/profiles/cur/0/com.example.gone" \
		"$_r/misc/profiles/ref/$DD_APP" "$_r/misc_ce/0/sdksandbox" "$_r/misc_de/0/sdksandbox" \
		"$_r/system_ce/0/backup" "$_r/vendor_ce/0/facedata" "$_r/local/tmp" "$_r/system"
	for _f in "data/$DD_APP/files/a" "data/$DD_OLD/files/b" "user/10/$DD_APP/files/c" \
		"user_de/0/$DD_APP/d" "media/0/Android/data/$DD_APP/files/e" \
		"misc/profiles/cur/0/$DD_APP/primary.prof" "system_ce/0/backup/x" "local/tmp/t"; do
		echo x >"$_r/$_f"
	done
	printf '%s 10170 0 /data/user/0/%s default:targetSdkVersion=34 3003 0 34 1 @system\n%s 10100 0 /data/user/0/%s default:targetSdkVersion=29 3003 0 29 1 @system\n' \
		"$DD_APP" "$DD_APP" "$DD_OLD" "$DD_OLD" >"$_r/system/packages.list"
	(cd "$_r" && find . -mindepth 1 | sort | while read -r _p; do
		[ -d "$_p" ] && printf 'd\t%s\n' "${_p#.}" || printf 'f\t%s\n' "${_p#.}"
	done) >"$2.body"
	{ printf 'd\t/\n'; cat "$2.body"; printf 'd\t/lost+found\n'; } >"$2"
	rm -f "$2.body"
}

# dd_build DIR
dd_build() {
	_d=$1
	mkdir -p "$_d"
	dd_tree "$_d/tree" "$_d/manifest"
	awk -F'\t' '{ print "testi " $2; print "ea_get " $2 " security.selinux" }' "$_d/manifest" >"$_d/manifest.cmds"
	awk -F'\t' '$1 == "d" { print $2 }' "$_d/manifest" >"$_d/dirs"
	mke2fs -q -t ext4 -I 256 -N 256 -d "$_d/tree" "$_d/un.img" 8M >"$_d/mkfs.log" 2>&1 ||
		{ bad "mke2fs: $(tail -n 2 "$_d/mkfs.log")"; finish; }
	cp --sparse=always "$_d/un.img" "$_d/L.img"
	"$FCLABEL" label "$_d/L.img" -a /data -S "$DD_FC" --seapp "$DD_SEAPP" --digests >"$_d/L.out" 2>&1 ||
		{ bad "the full label of the small /data: $(tail -n 3 "$_d/L.out" | tr '\n' '|')"; finish; }
	cp --sparse=always "$_d/L.img" "$_d/P.img"
	printf '%s\n' "$DD_LEVELS" | while IFS='	' read -r _p _l; do dd_setl "$_d/P.img" "$_p" "$_l"; done
	for _v in L P; do # (not _i: rl_dump's memo_get uses it)
		rl_dump "$_d/$_v.img" "$_d/manifest" "$_d/$_v.dump"
		rl_digests "$_d/$_v.img" "$_d/dirs" "$_d/$_v.dig"
	done
}

# dd_differ DUMP1 DUMP2: the paths whose value differs, sorted, on one line
dd_differ() { paste "$1" "$2" | awk -F'\t' '$2 != $4 { print $1 }' | sort | tr '\n' ' '; }

# dd_levels: the paths of DD_LEVELS, sorted, on one line (as dd_differ prints them)
dd_levels() { printf '%s\n' "$DD_LEVELS" | cut -f1 | sort | tr '\n' ' '; }
