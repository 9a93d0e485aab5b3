# Helpers of tests/t_relabel*.sh (source after tests/lib.sh). POSIX sh.
#
# A "case" (rl_case) takes an image labeled with policy FROM, and checks `fclabel relabel
# --from FROM --to TO` on a copy against `fclabel label -S TO` on another copy, label by label
# (read back with debugfs, not with fclabel), plus --plan, --json, --verify, check and e2fsck.

: "${SHARED:=$TOP/../shared/data}"
: "${FC_SEED:=20261203}"
GEN="$TOP/tests/gen_edits.py"
# the interpreter itself, not a version manager's shim (each start counts)
PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || PY=python3
tab=$(printf '\t')

say() { printf '%s\n' "$*"; }

# rl_need: skip unless the tools are there.
rl_need() {
	for _t in python3 mke2fs debugfs e2fsck cksum; do
		command -v "$_t" >/dev/null 2>&1 || skip "$_t is not installed"
	done
	[ -x "$FCLABEL" ] || skip "fclabel is not built ($FCLABEL): run make"
}

# rl_mkimg TREE MANIFEST IMG: an ext4 image of TREE with 256-byte inodes (room for the label in
# the inode) and inodes to spare; /lost+found, which mke2fs adds, goes into MANIFEST.
rl_mkimg() {
	_n=$(wc -l <"$2")
	_ino=$((_n + _n / 4 + 256))
	_mb=$((_ino * 256 / 1048576 + _n * 2 / 1024 + 24))
	rm -f "$3"
	_rk=$(memo_key rl_mkimg "$("$PY" "$TOP/tests/treekey.py" "$1")" "$_ino" "$_mb")
	if ! memo_get "$_rk" "$3"; then
		mke2fs -q -t ext4 -I 256 -N "$_ino" -d "$1" "$3" "${_mb}M" >"$3.mkfs" 2>&1 ||
			{ cat "$3.mkfs"; say "FAIL: mke2fs -d $1 $3"; exit 1; }
		memo_put "$_rk" "$3"
	fi
	grep -q "^d${tab}/lost+found\$" "$2" || printf 'd\t/lost+found\n' >>"$2"
	"$PY" "$GEN" groups "$2" >"$2.groups"
	awk -F'\t' '{ print "testi " $2; print "ea_get " $2 " security.selinux" }' "$2" >"$2.cmds"
}

# rl_ndirs MANIFEST: the number of directories of the image (root and lost+found included).
rl_ndirs() { awk -F'\t' '$1 == "d"' "$1" | wc -l | tr -d ' '; }

# rl_dump IMG MANIFEST OUT: every path's security.selinux as debugfs reads it: "PATH<TAB>LABEL",
# "-" for no label, "?" for a path debugfs cannot find. Manifest order.
rl_dump() {
	_dk=$(memo_key rl_dump "$1" "$2.cmds")
	memo_get "$_dk" "$3" && return 0
	rl_dump_debugfs "$@" && memo_put "$_dk" "$3"
}
rl_dump_debugfs() {
	debugfs -f "$2.cmds" "$1" 2>"$3.err" | awk -F'\t' '
		FILENAME != "-" { order[++n] = $2; next }
		/^debugfs: testi / { cur = substr($0, 16); cmd = "testi"; got[cur] = "?"; next }
		/^debugfs: / { cmd = substr($0, 10, 6); next }
		cmd == "testi" && /^Inode [0-9]* is marked in use/ { got[cur] = "-"; next }
		cmd == "ea_get" && /^security\.selinux \([0-9]*\) = "/ && got[cur] == "-" {
			v = $0; sub(/^[^"]*"/, "", v); sub(/"$/, "", v); sub(/\\000$/, "", v); got[cur] = v; next }
		END { for (i = 1; i <= n; i++) print order[i] "\t" ((order[i] in got) ? got[order[i]] : "?") }' "$2" - >"$3"
}

# rl_digests IMG DIRLIST OUT: "PATH<TAB>HEX" (or "-") of each directory of DIRLIST (image paths,
# one a line) as debugfs reads its security.sehash
rl_digests() {
	awk -F'\t' '{ print "ea_get -x " $1 " security.sehash" }' "$2" >"$3.cmds"
	debugfs -f "$3.cmds" "$1" 2>&1 | awk -F'\t' '
		FILENAME != "-" { order[++n] = $1; next }
		/^debugfs: ea_get/ { cur = $0; sub(/^debugfs: ea_get -x /, "", cur); sub(/ security\.sehash$/, "", cur); got[cur] = "-"; next }
		/^security\.sehash \(20\) = / { v = $0; sub(/^[^=]*= /, "", v); gsub(/ /, "", v); got[cur] = v }
		END { for (i = 1; i <= n; i++) print order[i] "\t" got[order[i]] }' "$2" - >"$3"
}

# rl_cmp GOT WANT [MAX]: 0 when the two dumps are equal; else prints up to MAX differing paths.
rl_cmp() {
	if cmp -s "$1" "$2"; then return 0; fi
	paste "$1" "$2" | awk -F'\t' -v max="${3:-10}" '
		$1 != $3 { print "    path order differs at " $1 " / " $3; n++; exit }
		$2 != $4 { if (n < max) print "    " $1 ": got " $2 ", want " $4; n++ }
		END { print "    " n " path(s) differ" }'
	return 1
}

# rl_counts FILE: sets RL_ENTERED and RL_SKIPPED from relabel's summary ("" when missing).
rl_counts() {
	RL_ENTERED=$(sed -n 's/.*directories entered \([0-9]*\), skipped.*/\1/p' "$1")
	RL_SKIPPED=$(sed -n 's/.*skipped (no change can reach them) \([0-9]*\).*/\1/p' "$1")
}

# rl_summary FILE FIELD: a number from the "scanned N, changed N, ..." summary line.
rl_summary() {
	sed -n "s/.* $2 \\([0-9]*\\)[,)].*/\\1/p" "$1" | head -n 1
}

# rl_events JSON KIND MP MANIFEST: the hard-link groups of the files an --json report names in
# KIND events (mount point stripped), sorted, one a line.
rl_events() {
	rl_jsonev "$1" "$2" | awk -F'\t' -v mp="$3" '
		FILENAME == ARGV[1] { g[$1] = $2; next }
		{ p = $1
		  if (mp != "" && index(p, mp) == 1) { p = substr(p, length(mp) + 1); if (p == "") p = "/" }
		  print ((p in g) ? g[p] : "NOT-IN-IMAGE:" p) }' "$4.groups" - | sort -u
}

# rl_jsonev JSON KIND: "PATH<TAB>FILE:LINE<TAB>WANTS" of the KIND events of an --json report
#   (one event a line, as fclabel writes them; strings without escapes, as in these trees).
rl_jsonev() {
	awk -v kind="$2" '
		function str(key,   r) {
			if (!match($0, "\"" key "\": \"[^\"]*\"")) return "-"
			r = substr($0, RSTART, RLENGTH); sub(/^[^:]*: "/, "", r); sub(/"$/, "", r); return r }
		function num(key,   r) {
			if (!match($0, "\"" key "\": [0-9]+")) return "-"
			r = substr($0, RSTART, RLENGTH); sub(/^[^:]*: /, "", r); return r }
		index($0, "{\"event\": \"" kind "\"") { print str("path") "\t" str("spec") ":" num("line") "\t" str("wants") }' "$1"
}

# rl_changed BEFORE AFTER MANIFEST: the groups of the paths whose label differs, sorted.
rl_changed() {
	paste "$1" "$2" | awk -F'\t' 'FILENAME == ARGV[1] { g[$1] = $2; next } $2 != $4 { print g[$1] }' \
		"$3.groups" - | sort -u
}

# rl_label IMG FC MP LOG: `fclabel label`, dies on failure.
rl_label() {
	"$FCLABEL" label "$1" -S "$2" ${3:+-a "$3"} >"$4" 2>&1 ||
		{ cat "$4"; say "FAIL: fclabel label $1 -S $2 ${3:+-a $3} failed"; exit 1; }
}

# rl_case NAME BASE BASEDUMP MANIFEST MP FROM TO
#   BASE: an image labeled with FROM, BASEDUMP its rl_dump. Checks, each an ok/bad:
#   --plan writes nothing (same cksum) and plans exactly the files that then change; -n writes
#   nothing, lists nothing and counts them;
#   relabel --verify exits 0 and says all files are right; the labels equal those of
#   `label -S TO` on a copy of BASE, path for path; `check -S TO` prints nothing and exits 0;
#   e2fsck -fn is clean; the --json "changed" events name exactly the files whose label changed,
#   and the summary counts them. Sets RL_DIR (the case's folder: relabel.img, full.img and
#   their dumps relabel.dump, full.dump), RL_CHANGED, RL_ENTERED, RL_SKIPPED, RL_FAILED (0/1).
#   The images are removed when the case passes (RL_KEEP set: relabel.img stays, to go on from).
#   RL_EXCEPT, when set, is a file of image paths that may differ from the full label (files with
#   no label in directories relabel must not enter): check and --verify must list exactly those.
rl_case() {
	_n=$1 _base=$2 _bdump=$3 _man=$4 _mp=$5 _from=$6 _to=$7
	RL_DIR=$OUT/cases/$_n
	_fails0=$fails
	rm -rf "$RL_DIR"
	mkdir -p "$RL_DIR"
	_d=$RL_DIR
	cp --sparse=always "$_base" "$_d/relabel.img"
	cp --sparse=always "$_base" "$_d/full.img"
	_sum0=$(cksum <"$_d/relabel.img")

	"$FCLABEL" relabel "$_d/relabel.img" ${_mp:+-a "$_mp"} --from "$_from" --to "$_to" --plan \
		--json "$_d/plan.json" >"$_d/plan.out" 2>"$_d/plan.err"
	_rc=$?
	[ "$_rc" -eq 0 ] || { bad "$_n: relabel --plan exit $_rc: $(head -n 3 "$_d/plan.err")"; }
	[ "$(cksum <"$_d/relabel.img")" = "$_sum0" ] || bad "$_n: relabel --plan changed the image"
	# -n: the same, counted, not listed
	"$FCLABEL" relabel "$_d/relabel.img" ${_mp:+-a "$_mp"} --from "$_from" --to "$_to" -n \
		>"$_d/dry.out" 2>"$_d/dry.err"
	_rc=$?
	[ "$_rc" -eq 0 ] || { bad "$_n: relabel -n exit $_rc: $(head -n 3 "$_d/dry.err")"; }
	[ "$(cksum <"$_d/relabel.img")" = "$_sum0" ] || bad "$_n: relabel -n changed the image"
	[ ! -s "$_d/dry.out" ] || bad "$_n: relabel -n listed files: $(head -n 1 "$_d/dry.out")"

	"$FCLABEL" relabel "$_d/relabel.img" ${_mp:+-a "$_mp"} --from "$_from" --to "$_to" --verify \
		--json "$_d/relabel.json" >"$_d/relabel.out" 2>"$_d/relabel.err"
	_rc=$?
	# --verify's list: "PATH<TAB>has ...", paths with the mount point
	awk -F'\t' -v mp="$_mp" 'NF >= 3 && $2 ~ /^has / { p = $1; if (mp != "") p = substr(p, length(mp) + 1); print p }' \
		"$_d/relabel.err" | sort >"$_d/verify.list"
	if [ -z "${RL_EXCEPT:-}" ]; then
		[ "$_rc" -eq 0 ] || bad "$_n: relabel --verify exit $_rc: $(grep -v "$tab" "$_d/relabel.err" | head -n 3)"
		grep -q -- '--verify: all [0-9]* files have' "$_d/relabel.err" ||
			bad "$_n: relabel --verify did not report a clean check: $(grep -c "$tab" "$_d/relabel.err") listed, $(tail -n 1 "$_d/relabel.err")"
	else
		sort "$RL_EXCEPT" >"$_d/except.sorted"
		[ "$_rc" -eq 1 ] && cmp -s "$_d/verify.list" "$_d/except.sorted" ||
			bad "$_n: relabel --verify: exit $_rc (want 1), listed $(tr '\n' ' ' <"$_d/verify.list") (want exactly $(tr '\n' ' ' <"$_d/except.sorted"))"
	fi
	rl_counts "$_d/relabel.err"
	[ -n "$RL_ENTERED" ] && [ -n "$RL_SKIPPED" ] ||
		bad "$_n: no 'directories entered N, skipped M' line: $(cat "$_d/relabel.err")"
	RL_CHANGED=$(rl_summary "$_d/relabel.err" changed)

	rl_label "$_d/full.img" "$_to" "$_mp" "$_d/full.out"
	rl_dump "$_d/relabel.img" "$_man" "$_d/relabel.dump" &
	_pid=$!
	rl_dump "$_d/full.img" "$_man" "$_d/full.dump"
	wait "$_pid"

	# (a) the same labels as a full label with TO (but for the RL_EXCEPT paths)
	if [ -n "${RL_EXCEPT:-}" ]; then
		for _f in relabel full; do
			awk -F'\t' 'FILENAME == ARGV[1] { x[$1] = 1; next } !($1 in x)' "$RL_EXCEPT" "$_d/$_f.dump" >"$_d/$_f.cmpdump"
		done
	else
		ln -sf relabel.dump "$_d/relabel.cmpdump"
		ln -sf full.dump "$_d/full.cmpdump"
	fi
	if rl_cmp "$_d/relabel.cmpdump" "$_d/full.cmpdump" >"$_d/cmp.out"; then
		:
	else
		bad "$_n: relabel --from ${_from##*/} --to ${_to##*/} differs from label -S ${_to##*/}:"
		cat "$_d/cmp.out"
	fi
	grep -q "${tab}?\$" "$_d/relabel.dump" && bad "$_n: debugfs cannot find some paths (see $_d/relabel.dump)"
	# (b) check agrees (listing exactly the RL_EXCEPT paths, if any)
	"$FCLABEL" check "$_d/relabel.img" -S "$_to" ${_mp:+-a "$_mp"} >"$_d/check.out" 2>"$_d/check.err"
	_rc=$?
	awk -F'\t' -v mp="$_mp" '{ p = $1; if (mp != "") p = substr(p, length(mp) + 1); print p }' \
		"$_d/check.out" | sort >"$_d/check.list"
	if [ -z "${RL_EXCEPT:-}" ]; then
		if [ "$_rc" -ne 0 ] || [ -s "$_d/check.out" ]; then
			bad "$_n: check -S ${_to##*/} after relabel: exit $_rc, $(wc -l <"$_d/check.out") differing:"
			head -n 5 "$_d/check.out" | sed 's/^/    /'
		fi
	elif [ "$_rc" -ne 1 ] || ! cmp -s "$_d/check.list" "$_d/except.sorted"; then
		bad "$_n: check -S ${_to##*/} after relabel: exit $_rc (want 1), listed $(tr '\n' ' ' <"$_d/check.list") (want exactly $(tr '\n' ' ' <"$_d/except.sorted"))"
	fi
	# (c) the file system is intact
	e2fsck -fn "$_d/relabel.img" >"$_d/fsck.out" 2>&1 ||
		{ bad "$_n: e2fsck -fn after relabel:"; tail -n 5 "$_d/fsck.out" | sed 's/^/    /'; }
	# only what changes is written, all of it reported, as --plan said
	rl_changed "$_bdump" "$_d/relabel.dump" "$_man" >"$_d/changed.actual"
	rl_events "$_d/relabel.json" changed "$_mp" "$_man" >"$_d/changed.json"
	rl_events "$_d/plan.json" would-change "$_mp" "$_man" >"$_d/changed.plan"
	if ! cmp -s "$_d/changed.json" "$_d/changed.actual"; then
		bad "$_n: relabel's 'changed' events differ from the files whose label changed (< events, > image):"
		diff "$_d/changed.json" "$_d/changed.actual" | grep '^[<>]' | head -n 5 | sed 's/^/    /'
	fi
	if ! cmp -s "$_d/changed.plan" "$_d/changed.actual"; then
		bad "$_n: --plan's list differs from the files that then changed (< plan, > image):"
		diff "$_d/changed.plan" "$_d/changed.actual" | grep '^[<>]' | head -n 5 | sed 's/^/    /'
	fi
	_np=$(grep -c '^would relabel ' "$_d/plan.out")
	_na=$(wc -l <"$_d/changed.actual" | tr -d ' ')
	[ "$_np" = "$_na" ] || bad "$_n: --plan printed $_np 'would relabel' lines, $_na files changed"
	[ "$RL_CHANGED" = "$_na" ] || bad "$_n: relabel says changed $RL_CHANGED, $_na files changed"
	_rl_dry=$(sed -n 's/.*, would change \([0-9]*\),.*/\1/p' "$_d/dry.err")
	[ "$_rl_dry" = "$_na" ] || bad "$_n: relabel -n says would change '$_rl_dry', $_na files changed"
	RL_FAILED=0
	[ "$fails" -eq "$_fails0" ] || RL_FAILED=1
	# the images of a passing case go (the dumps stay), unless RL_KEEP wants relabel.img
	if [ "$RL_FAILED" -eq 0 ]; then
		rm -f "$_d/full.img"
		[ -n "${RL_KEEP:-}" ] || rm -f "$_d/relabel.img"
	fi
	return 0
}

# rl_case_line NAME NDIRS: one line about the last case.
rl_case_line() {
	say "  $1: changed $RL_CHANGED, directories entered $RL_ENTERED, skipped $RL_SKIPPED (image has $2)$( [ "$RL_FAILED" -eq 0 ] || printf ' FAILED')"
}

# rl_explain FC MP PATH TYPE: runs `fclabel explain -S FC -m TYPE PATH` into $RL_DIR/explain.out;
#   sets EX_DECIDES (the FILE:LINE of the first spec listed, "" if none) and EX_RESULT (the
#   context after "=>", "<<none>>" or "" for no match).
rl_explain() {
	"$FCLABEL" explain -S "$1" -m "$4" "$3" >"$RL_DIR/explain.out" 2>&1
	EX_RC=$?
	EX_DECIDES=$(sed -n "2s/^  decides \([^$tab]*\)$tab.*/\1/p" "$RL_DIR/explain.out")
	EX_RESULT=$(sed -n 's/^  => \([^ :]*:[^ ]*\)$/\1/p; s/^  => <<none>>.*/<<none>>/p' "$RL_DIR/explain.out")
}
