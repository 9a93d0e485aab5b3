#!/bin/sh
# fclabel relabel after single-line policy edits: the result must be what a full `fclabel label`
# with the new policy gives, file for file, while directories no changed spec can reach are not
# entered.
#
# Two trees that resemble real systems, each in one ext4 image labeled with a real policy A:
#   refpolicy: Debian 12's file_contexts (+ .homedirs, .subs_dist) on /usr, /etc, /var, /home...
#   android:   Android 9's private_file_contexts on /system, /vendor, /data...
# For each of N edits (tests/gen_edits.py, deterministic per FC_SEED: insert, delete, change a
# context, move, change a type, add a <<none>> line) policy B = A with that edit, and rl_case
# (tests/relabellib.sh) checks relabel --from A --to B on a copy against label -S B on another
# copy, label by label, plus --plan/--json/--verify/check/e2fsck. Per edit also: `fclabel diff A B`
# names the edited line; `fclabel explain` lists the deciding spec first; an edit of a spec with
# a literal stem (/usr/...) leaves directories out.
# Then: --from none, an image never labeled, unlabeled files inside and outside the visited
# subtrees, hard links whose names are in different directories.
#
# FC_RELABEL_EDITS (default 30) and FC_RELABEL_ANDROID_EDITS (default 16) set the edit counts.
: "${TOP:=$(cd "$(dirname "$0")/.." && pwd)}"
. "$TOP/tests/lib.sh"
. "$TOP/tests/relabellib.sh"

rl_need
RP=$SHARED/refpolicy
AN9=$SHARED/android/android-9.0.0_r37/private_file_contexts
[ -f "$RP/file_contexts" ] || skip "no real policy data ($RP/file_contexts missing)"
N_RP=${FC_RELABEL_EDITS:-30}
N_AN=${FC_RELABEL_ANDROID_EDITS:-16}
t0=$(date +%s)
say "seed $FC_SEED, $N_RP refpolicy edits, $N_AN android edits"

# label_of DUMP PATH
label_of() { awk -F'\t' -v p="$2" '$1 == p { print $2; exit }' "$1"; }

# run_edits TAG ADIR MAIN MANIFEST BASE BASEDUMP MP NDIRS: every edit of $OUT/TAG/edits/edits.tsv.
run_edits() {
	_tag=$1 _adir=$2 _main=$3 _man=$4 _base=$5 _bdump=$6 _mp=$7 _ndirs=$8
	_edits=$OUT/$_tag/edits
	n_edits=0 n_changed=0 n_stem=0 n_pruned=0
	awk -F'\t' '$1 != $2 { print $1; print $2 }' "$_man.groups" | sort -u >"$OUT/$_tag/linked"
	while IFS=$tab read -r id kind file oldline newline stem regex probe ptype dkind decides <&3; do
		_b=$_edits/$id
		rl_case "$_tag-$id" "$_base" "$_bdump" "$_man" "$_mp" "$_adir/$_main" "$_b/$_main"
		n_edits=$((n_edits + 1))
		[ "${RL_CHANGED:-0}" -gt 0 ] && n_changed=$((n_changed + 1))
		[ "${RL_SKIPPED:-0}" -gt 0 ] && n_pruned=$((n_pruned + 1))
		# the counts add up: no directory is both, none counted twice
		[ $((RL_ENTERED + RL_SKIPPED)) -le "$_ndirs" ] ||
			bad "$_tag-$id: entered $RL_ENTERED + skipped $RL_SKIPPED > $_ndirs directories in the image"
		# (d) a spec with a literal stem cannot reach every directory
		if [ "$stem" != "-" ]; then
			n_stem=$((n_stem + 1))
			if [ "${RL_SKIPPED:-0}" -eq 0 ] || [ "${RL_ENTERED:-0}" -ge "$_ndirs" ]; then
				bad "$_tag-$id: the edited spec's regex has the literal stem $stem ($regex), yet relabel entered $RL_ENTERED of $_ndirs directories and skipped $RL_SKIPPED"
			fi
		fi
		# fclabel diff A B: exit 1, one change, of the right kind, naming the edited line
		"$FCLABEL" diff "$_adir/$_main" "$_b/$_main" >"$RL_DIR/diff.out" 2>&1
		_rc=$?
		_first=$(head -n 1 "$RL_DIR/diff.out")
		if [ "$dkind" = removed ]; then _want="$_adir/$file:$oldline "; else _want="$_b/$file:$newline "; fi
		if [ "$_rc" -ne 1 ]; then
			bad "$_tag-$id: fclabel diff exit $_rc, want 1"
		else
			case $_first in
			"$dkind "*"$_want"*"$regex"*) ;;
			*) bad "$_tag-$id: fclabel diff does not name the edit ($dkind ${_want}$regex): $_first" ;;
			esac
			case $(tail -n 1 "$RL_DIR/diff.out") in
			"1 change(s)"*) ;;
			*) bad "$_tag-$id: fclabel diff: $(tail -n 1 "$RL_DIR/diff.out"), want 1 change" ;;
			esac
		fi
		# fclabel explain: the first spec listed is the one that decided a changed file
		_ev=$(rl_jsonev "$RL_DIR/relabel.json" changed |
			awk -F'\t' -v mp="$_mp" 'FILENAME == ARGV[1] { l[$1] = 1; next }
				{ p = $1; if (mp != "") p = substr(p, length(mp) + 1); if (!(p in l)) { print; exit } }' \
				"$OUT/$_tag/linked" -)
		if [ -n "$_ev" ]; then
			_p=${_ev%%"$tab"*}
			_rest=${_ev#*"$tab"}
			_spec=${_rest%%"$tab"*}
			_wants=${_rest#*"$tab"}
			_ip=${_p#"$_mp"}
			_t=$(awk -F'\t' -v p="${_ip:-/}" '$2 == p { print $1; exit }' "$_man")
			rl_explain "$_b/$_main" "$_mp" "$_p" "$_t"
			[ "$EX_DECIDES" = "$_spec" ] && [ "$EX_RESULT" = "$_wants" ] ||
				bad "$_tag-$id: explain -m $_t $_p: first spec [$EX_DECIDES] => [$EX_RESULT], but relabel wrote [$_wants] from [$_spec]"
		fi
		# ... and agrees with the full label on the probe; an inserted plain spec decides
		if [ "$probe" != "-" ] && ! grep -q -F -x -- "${probe#"$_mp"}" "$OUT/$_tag/linked"; then
			rl_explain "$_b/$_main" "$_mp" "$probe" "$ptype"
			_ip=${probe#"$_mp"}
			_full=$(awk -F'\t' -v p="${_ip:-/}" '$1 == p { print $2; exit }' "$RL_DIR/full.dump")
			_old=$(awk -F'\t' -v p="${_ip:-/}" '$1 == p { print $2; exit }' "$_bdump")
			case $EX_RESULT in
			"" | "<<none>>") _exp=$_old ;;
			*) _exp=$EX_RESULT ;;
			esac
			[ "$EX_RC" -eq 0 ] ||
				bad "$_tag-$id: explain -m $ptype $probe failed: $(head -n 3 "$RL_DIR/explain.out")"
			[ "$_full" = "$_exp" ] ||
				bad "$_tag-$id: explain -m $ptype $probe says [$EX_RESULT] ($EX_DECIDES), label -S B wrote [$_full] (was [$_old])"
			if [ "$decides" = 1 ] && [ "$EX_DECIDES" != "$_b/$file:$newline" ]; then
				bad "$_tag-$id: explain -m $ptype $probe: the inserted plain spec $_b/$file:$newline must decide, explain lists [$EX_DECIDES] first"
			fi
		fi
		say "  $id $kind $file:$oldline->$newline $regex: changed $RL_CHANGED, entered $RL_ENTERED, skipped $RL_SKIPPED of $_ndirs dirs$( [ "$RL_FAILED" -eq 0 ] || printf ' FAILED')"
	done 3<"$_edits/edits.tsv"
	say "$_tag: $n_edits edits, $n_changed changed some file, $n_pruned skipped some directory, $n_stem had a literal stem"
	# not vacuous: the edits must reach the tree
	[ "$n_changed" -ge $((n_edits / 3)) ] ||
		bad "$_tag: only $n_changed of $n_edits edits changed a label: the edits miss the tree"
}

# make_base TAG KIND FC: the tree, its manifest, the unlabeled image, and BASE = labeled with A.
make_base() {
	_tag=$1 _kind=$2 _fc=$3
	mkdir -p "$OUT/$_tag"
	"$PY" "$GEN" tree --kind "$_kind" --seed "$FC_SEED" --root "$OUT/$_tag/tree" \
		--manifest "$OUT/$_tag/manifest" || { say "FAIL: gen_edits.py tree --kind $_kind"; exit 1; }
	rl_mkimg "$OUT/$_tag/tree" "$OUT/$_tag/manifest" "$OUT/$_tag/unlabeled.img"
	cp --sparse=always "$OUT/$_tag/unlabeled.img" "$OUT/$_tag/base.img"
	"$FCLABEL" label "$OUT/$_tag/base.img" -S "$_fc" --json "$OUT/$_tag/base.json" \
		>"$OUT/$_tag/base.out" 2>&1 || { cat "$OUT/$_tag/base.out"; say "FAIL: label base"; exit 1; }
	rl_dump "$OUT/$_tag/base.img" "$OUT/$_tag/manifest" "$OUT/$_tag/base.dump"
	rl_dump "$OUT/$_tag/unlabeled.img" "$OUT/$_tag/manifest" "$OUT/$_tag/unlabeled.dump"
	_ne=$(wc -l <"$OUT/$_tag/manifest" | tr -d ' ')
	_nl=$(awk -F'\t' '$2 != "-" && $2 != "?"' "$OUT/$_tag/base.dump" | wc -l | tr -d ' ')
	_nq=$(awk -F'\t' '$2 == "?"' "$OUT/$_tag/base.dump" | wc -l | tr -d ' ')
	_nu=$(awk -F'\t' '$2 != "-"' "$OUT/$_tag/unlabeled.dump" | wc -l | tr -d ' ')
	NDIRS=$(rl_ndirs "$OUT/$_tag/manifest")
	say "$_tag: $_ne entries, $NDIRS directories; labeled with ${_fc##*/}: $_nl have a label"
	# the reading back must work, or every comparison below is vacuous
	[ "$_nq" -eq 0 ] || bad "$_tag: debugfs cannot find $_nq paths of the manifest"
	[ "$_nl" -ge $((_ne * 9 / 10)) ] || bad "$_tag: only $_nl of $_ne entries labeled"
	[ "$_nu" -eq 0 ] || bad "$_tag: the unlabeled image has $_nu labels"
	sed "2s/$tab.*/${tab}mutated_u:object_r:mutated_t:s0/" "$OUT/$_tag/base.dump" >"$OUT/$_tag/mutated.dump"
	rl_cmp "$OUT/$_tag/mutated.dump" "$OUT/$_tag/base.dump" >/dev/null &&
		bad "$_tag: rl_cmp does not see a changed label"
	"$FCLABEL" check "$OUT/$_tag/base.img" -S "$_fc" >"$OUT/$_tag/base.check" 2>&1 ||
		bad "$_tag: check -S A right after label -S A fails"
}

# ------------------------------------------------------------------ refpolicy
A=$OUT/rp/A
mkdir -p "$A"
cp "$RP/file_contexts" "$RP/file_contexts.homedirs" "$RP/file_contexts.subs_dist" "$A/"
make_base rp refpolicy "$A/file_contexts"
RP_DIRS=$NDIRS
MAN=$OUT/rp/manifest
BASE=$OUT/rp/base.img
BDUMP=$OUT/rp/base.dump
"$PY" "$GEN" edits --seed "$FC_SEED" --n "$N_RP" --fc "$A/file_contexts" --extra "$A/file_contexts.homedirs" \
	--copy "$A/file_contexts.subs_dist" --subs "$A/file_contexts.subs_dist" --manifest "$MAN" \
	--out "$OUT/rp/edits" || { say "FAIL: gen_edits.py edits (refpolicy)"; exit 1; }
run_edits rp "$A" file_contexts "$MAN" "$BASE" "$BDUMP" "" "$RP_DIRS"
B0=$OUT/rp/edits/e00/file_contexts
FULL0=$OUT/cases/rp-e00/full.dump

say "refpolicy: special cases"
# --from none: a full label, every directory entered
rl_case rp-from-none "$BASE" "$BDUMP" "$MAN" "" none "$B0"
rl_case_line rp-from-none "$RP_DIRS"
grep -q '(a full label' "$RL_DIR/relabel.err" || bad "rp-from-none: the summary does not say it is a full label"
expect_eq "rp-from-none: directories entered" "$RL_ENTERED" "$RP_DIRS"
expect_eq "rp-from-none: directories skipped" "$RL_SKIPPED" 0
rl_cmp "$RL_DIR/relabel.dump" "$FULL0" || bad "rp-from-none: differs from rp-e00's full label"

# an image never labeled: a full label even with --from A
U=$OUT/rp/unlabeled.img
rl_case rp-never-labeled "$U" "$OUT/rp/unlabeled.dump" "$MAN" "" "$A/file_contexts" "$B0"
rl_case_line rp-never-labeled "$RP_DIRS"
grep -q 'has no labels' "$RL_DIR/relabel.err" || bad "rp-never-labeled: relabel does not say the image has no labels"
expect_eq "rp-never-labeled: directories entered" "$RL_ENTERED" "$RP_DIRS"
_nl=$(awk -F'\t' '$2 == "-"' "$RL_DIR/relabel.dump" | wc -l | tr -d ' ')
_nf=$(awk -F'\t' '$2 == "-"' "$RL_DIR/full.dump" | wc -l | tr -d ' ')
expect_eq "rp-never-labeled: files left without a label, as label -S B leaves them" "$_nl" "$_nf"

# unlabeled files: labeled inside the visited subtrees, left alone (not entered) outside them
P1=$OUT/rp/p1
mkdir -p "$P1"
cp "$A"/file_contexts* "$P1/"
printf '/usr/share/doc/bash/copyright\t--\tsystem_u:object_r:etc_t:s0\n' >>"$P1/file_contexts"
HOLE=$OUT/rp/holes.img
cp --sparse=always "$BASE" "$HOLE"
IN1=/usr/share/doc/bash/changelog.Debian.gz IN2=/usr/share/doc/bash
OUT1=/usr/share/doc/coreutils/copyright OUT2=/etc/ssh/sshd_config
for p in $IN1 $IN2 $OUT1 $OUT2; do
	debugfs -w -R "ea_rm $p security.selinux" "$HOLE" >/dev/null 2>&1
done
rl_dump "$HOLE" "$MAN" "$OUT/rp/holes.dump"
_nh=$(awk -F'\t' '$2 == "-"' "$OUT/rp/holes.dump" | wc -l | tr -d ' ')
_nb=$(awk -F'\t' '$2 == "-"' "$BDUMP" | wc -l | tr -d ' ')
expect_eq "rp-holes: debugfs removed 4 labels" "$((_nh - _nb))" 4
printf '%s\n' "$OUT1" "$OUT2" >"$OUT/rp/holes.except"
RL_EXCEPT=$OUT/rp/holes.except
rl_case rp-holes "$HOLE" "$OUT/rp/holes.dump" "$MAN" "" "$A/file_contexts" "$P1/file_contexts"
RL_EXCEPT=
rl_case_line rp-holes "$RP_DIRS"
expect_eq "rp-holes: the edited file" "$(label_of "$RL_DIR/relabel.dump" /usr/share/doc/bash/copyright)" system_u:object_r:etc_t:s0
for p in $IN1 $IN2; do
	expect_eq "rp-holes: unlabeled $p in a visited directory is labeled" \
		"$(label_of "$RL_DIR/relabel.dump" "$p")" "$(label_of "$BDUMP" "$p")"
done
for p in $OUT1 $OUT2; do
	expect_eq "rp-holes: unlabeled $p in a directory no change reaches is left alone (not entered)" \
		"$(label_of "$RL_DIR/relabel.dump" "$p")" "-"
done
[ "$RL_SKIPPED" -gt 0 ] && [ "$RL_ENTERED" -lt "$RP_DIRS" ] ||
	bad "rp-holes: one literal spec, yet entered $RL_ENTERED of $RP_DIRS, skipped $RL_SKIPPED"

# the same policy: nothing can change, nothing below the root is entered
rl_case rp-same "$BASE" "$BDUMP" "$MAN" "" "$A/file_contexts" "$A/file_contexts"
rl_case_line rp-same "$RP_DIRS"
expect_eq "rp-same: changed" "$RL_CHANGED" 0
expect_eq "rp-same: directories entered" "$RL_ENTERED" 0

# a spec for /usr/lib/... reaches /lib64/..., which file_contexts.subs_dist aliases to /usr/lib
P2=$OUT/rp/p2
mkdir -p "$P2"
cp "$A"/file_contexts* "$P2/"
printf '/usr/lib/ld-linux-x86-64\\.so\\.2\t--\tsystem_u:object_r:etc_t:s0\n' >>"$P2/file_contexts"
rl_case rp-subs-alias "$BASE" "$BDUMP" "$MAN" "" "$A/file_contexts" "$P2/file_contexts"
rl_case_line rp-subs-alias "$RP_DIRS"
expect_eq "rp-subs-alias: /lib64/ld-linux-x86-64.so.2 (aliased to /usr/lib/...)" \
	"$(label_of "$RL_DIR/relabel.dump" /lib64/ld-linux-x86-64.so.2)" system_u:object_r:etc_t:s0

# another substitution file: no pruning is possible, every directory is entered
P3=$OUT/rp/p3
mkdir -p "$P3"
cp "$A"/file_contexts* "$P3/"
printf '/srv /var/www\n' >>"$P3/file_contexts.subs_dist"
rl_case rp-subs-changed "$BASE" "$BDUMP" "$MAN" "" "$A/file_contexts" "$P3/file_contexts"
rl_case_line rp-subs-changed "$RP_DIRS"
expect_eq "rp-subs-changed: directories entered" "$RL_ENTERED" "$RP_DIRS"
[ "$RL_CHANGED" -gt 0 ] || bad "rp-subs-changed: aliasing /srv to /var/www changed nothing"

# an old policy whose changed line has a regex PCRE2 refuses: refused as a load refuses it (its
# file, line and column), nothing written. (The old policy is only compared, never indexed: the
# regexes checked are those of the specs that changed; the others are the new policy's.)
P4=$OUT/rp/p4
mkdir -p "$P4"
cp "$A"/file_contexts* "$P4/"
printf '/usr/share/fclabel-bad[(/.*)?\tsystem_u:object_r:etc_t:s0\n' >>"$P4/file_contexts"
_line=$(wc -l <"$P4/file_contexts" | tr -d ' ')
BADOLD=$OUT/rp/badold.img
cp --sparse=always "$BASE" "$BADOLD"
_sum=$(md5sum <"$BADOLD")
"$FCLABEL" relabel "$BADOLD" --from "$P4/file_contexts" --to "$A/file_contexts" \
	>"$OUT/rp/badold.out" 2>"$OUT/rp/badold.err"
expect_eq "rp-bad-old-regex: exit status" "$?" 2
grep -q "$P4/file_contexts:$_line:30: bad regex" "$OUT/rp/badold.err" ||
	bad "rp-bad-old-regex: the message does not name $P4/file_contexts:$_line:30: $(cat "$OUT/rp/badold.err")"
expect_eq "rp-bad-old-regex: the image is untouched" "$(md5sum <"$BADOLD")" "$_sum"
rm -f "$BADOLD"

# hard links whose names are in different directories: /usr/bin/git = /usr/lib/git-core/git.
# The name the walk reaches first decides (label, check); a change that reaches only the other
# name's directory must not relabel the inode.
FIRST=$(rl_jsonev "$OUT/rp/base.json" changed | cut -f1 | grep -x -e /usr/bin/git -e /usr/lib/git-core/git)
say "  hard link /usr/bin/git = /usr/lib/git-core/git: the walk reaches $FIRST first"
for name in /usr/lib/git-core/git /usr/bin/git; do
	H=$OUT/rp/hl$(echo "$name" | tr / _)
	mkdir -p "$H"
	cp "$A"/file_contexts* "$H/"
	printf '%s\t--\tsystem_u:object_r:httpd_sys_content_t:s0\n' "$name" >>"$H/file_contexts"
	rl_case "rp-hardlink-edit$(echo "$name" | tr / _)" "$BASE" "$BDUMP" "$MAN" "" "$A/file_contexts" "$H/file_contexts"
	rl_case_line "rp-hardlink: a spec for $name only" "$RP_DIRS"
done

# ------------------------------------------------------------------ android (one image at /)
if [ -f "$AN9" ]; then
	AA=$OUT/an/A
	mkdir -p "$AA"
	cp "$AN9" "$AA/"
	make_base an android "$AA/private_file_contexts"
	AN_DIRS=$NDIRS
	"$PY" "$GEN" edits --seed "$FC_SEED" --n "$N_AN" --fc "$AA/private_file_contexts" \
		--manifest "$OUT/an/manifest" --out "$OUT/an/edits" ||
		{ say "FAIL: gen_edits.py edits (android)"; exit 1; }
	run_edits an "$AA" private_file_contexts "$OUT/an/manifest" "$OUT/an/base.img" \
		"$OUT/an/base.dump" "" "$AN_DIRS"
else
	say "android: $AN9 missing: android edits not run"
fi

# ------------------------------------------------------------------ fclabel diff: prunable
# an added spec whose regex begins with .* may match below any directory: a relabel must enter
# them all, and diff says so (a literal one leaves the others out)
D=$OUT/prunable
mkdir -p "$D"
printf '/a\tu:r:a_t:s0\n' >"$D/old.fc"
printf '/a\tu:r:a_t:s0\n/.*\\.x\tu:r:x_t:s0\n' >"$D/all.fc"
printf '/a\tu:r:a_t:s0\n/b(/.*)?\tu:r:x_t:s0\n' >"$D/lit.fc"
"$FCLABEL" diff --base-only --json "$D/old.fc" "$D/all.fc" >"$D/all.json" 2>/dev/null
expect_match "diff --json: a spec beginning /.* is not prunable" "$(cat "$D/all.json")" '*"prunable": false*'
"$FCLABEL" diff --base-only --json "$D/old.fc" "$D/lit.fc" >"$D/lit.json" 2>/dev/null
expect_match "diff --json: a spec below /b is prunable" "$(cat "$D/lit.json")" '*"prunable": true*'
"$FCLABEL" diff --base-only "$D/old.fc" "$D/all.fc" >"$D/all.out" 2>/dev/null
expect_match "diff: says a relabel must enter every directory" "$(tail -n 1 "$D/all.out")" \
	"note: a change's regular expression begins with .*: a relabel must enter every directory"
"$FCLABEL" diff --base-only "$D/old.fc" "$D/lit.fc" >"$D/lit.out" 2>/dev/null
expect_match "diff: no such note for a spec below /b" "$(tail -n 1 "$D/lit.out")" "1 change(s): *"

say "time: $(( $(date +%s) - t0 )) s"
finish
