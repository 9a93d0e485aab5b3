#!/bin/sh
# Compiled file_contexts (file_contexts.bin, as sefcontext_compile writes it) given to -S: the
# answers must be those of the text file, and libselinux 3.4's (tests/oracle) opened on the .bin.
#   - fixtures/fcbin/quirks compiled by Debian's sefcontext_compile (format 5), and the format 6
#     files fixtures/fcbin/quirks.v6*.bin made by libselinux 3.8.1's;
#   - libselinux's choice between FILE and FILE.bin (and FILE.homedirs(.bin), FILE.local(.bin)),
#     by modification time, against the oracle;
#   - refpolicy ($SHARED/refpolicy; skipped when absent) and the Android file_contexts under
#     $SHARED/android, compiled (with and without serialized patterns);
#   - random policies (tests/gen_fc.py adversarial), compiled;
#   - the older layouts 1 to 4 and PCRE1's (written by tests/fcbin.py);
#   - damaged files: named damages must be refused naming the byte offset, and random flips and
#     truncations must give exit status 0 or 2, nothing else; small files, and refpolicy's, which
#     are large enough to have their specs analysed on a thread (fcontexts/ahead.c).
# With a libselinux 3.8 sefcontext_compile ($SEFCONTEXT_COMPILE_NEW, default
# ~/.cache/libselinux-new/sefcontext_compile: build utils/sefcontext_compile from the source that
# ../shared/tools/build-libselinux-new downloads, linked with src/libselinux.a), refpolicy,
# Android and the random policies are also compiled to format 6. Format 6 does not keep the text
# order of literal specs; fclabel's order (the regex specs by source line, then the literal specs
# as the file lists them) is checked against the oracle on that order written out as text
# (tests/fcbin.py totext), and against the text file where no two plain lines share a path.
#   FC_FCBIN_POLICIES  random policies (default 40)
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/difflib.sh"

need_tools
SEFC=${SEFCONTEXT_COMPILE:-/usr/sbin/sefcontext_compile}
[ -x "$SEFC" ] || skip "no sefcontext_compile at $SEFC (Debian package selinux-utils)"
SEFC_NEW=${SEFCONTEXT_COMPILE_NEW:-$HOME/.cache/libselinux-new/sefcontext_compile}
[ -x "$SEFC_NEW" ] || SEFC_NEW=""
FCBIN="$TOP/tests/fcbin.py"
FIX=$TOP/fixtures/fcbin
start=$(date +%s)

check() { # check WHAT GOT WANT
	if [ "$2" = "$3" ]; then
		say "ok   $1"
	else
		say "FAIL $1: got [$2] want [$3]"
		DIFF_FAILED=$((DIFF_FAILED + 1))
		[ -n "$DIFF_FIRST" ] || DIFF_FIRST="$1"
	fi
}
check_match() { # check_match WHAT TEXT GLOB
	case $2 in
	$3) say "ok   $1" ;;
	*) check "$1" "$2" "$3" ;;
	esac
}
# lookup FC MODE PATH [OPTS]: fclabel's answer (MODE in octal)
lookup() { "$FCLABEL" lookup -S "$1" -m "$2" $4 "$3" 2>&1; }
# ask FC MODE PATH [-b]: libselinux 3.4's
ask() { printf '%s %s\0' "$2" "$3" | "$ORACLE" $4 -0 "$1" 2>&1; }
# both WHAT FC MODE PATH WANT: fclabel and the oracle both answer WANT
both() {
	check "$1 (fclabel)" "$(lookup "$2" "$3" "$4")" "$5"
	check "$1 (libselinux 3.4)" "$(ask "$2" "$3" "$4")" "$5"
}
# both_quiet: the same, warnings (standard error) aside
both_quiet() {
	check "$1 (fclabel)" "$("$FCLABEL" lookup -S "$2" -m "$3" "$4" 2>/dev/null)" "$5"
	check "$1 (libselinux 3.4)" "$(printf '%s %s\0' "$3" "$4" | "$ORACLE" -0 "$2" 2>/dev/null)" "$5"
}
# diff_all NAME FC QUERIES REF...: fclabel on FC must give each REF file's answers
diff_all() {
	_n=$1 _fc=$2 _q=$3
	shift 3
	_ok=0
	ours "" "$_fc" "$_q" "$OUT/cur.out" || _ok=1
	for _r in "$@"; do
		compare "$_n vs ${_r##*/}" "$_fc" "$_q" "$OUT/cur.out" "$_r" "$_ok"
	done
}

# ---- the small policy: format 5 from Debian's tool, format 6 from the fixtures ----
mkdir -p "$OUT/small"
cp "$FIX/quirks" "$OUT/small/text"
"$SEFC" -o "$OUT/small/v5.bin" "$OUT/small/text" 2>"$OUT/small/sefc.err" || die "sefcontext_compile failed: $(cat "$OUT/small/sefc.err")"
"$SEFC" -r -o "$OUT/small/v5r.bin" "$OUT/small/text" 2>/dev/null || die "sefcontext_compile -r failed"
check "format 5 magic and version" "$(od -An -tx1 -N8 "$OUT/small/v5.bin" | tr -d ' ')" "8aff7cf905000000"
"$PY" "$FCBIN" queries --seed "$FC_SEED" "$OUT/small/q" "$OUT/small/text" || die "fcbin.py queries"
ours "" "$OUT/small/text" "$OUT/small/q" "$OUT/small/text.out" || die "fclabel on the text"
oracle "" "$OUT/small/v5.bin" "$OUT/small/q" "$OUT/small/oracle-v5.out"
diff_all "small v5" "$OUT/small/v5.bin" "$OUT/small/q" "$OUT/small/text.out" "$OUT/small/oracle-v5.out"
diff_all "small v5 -r" "$OUT/small/v5r.bin" "$OUT/small/q" "$OUT/small/text.out"
check_match "lookup -v names the .bin and the spec's ordinal" \
	"$("$FCLABEL" lookup -S "$OUT/small/v5.bin" -m f -v /etc/passwd)" "*:passwd_t:s0	$OUT/small/v5.bin:[0-9]*"
for v6 in quirks.v6.bin quirks.v6r.bin; do
	cp "$FIX/$v6" "$OUT/small/$v6"
	check "$v6: format 6 magic and version" "$(od -An -tx1 -N8 "$OUT/small/$v6" | tr -d ' ')" "f97cff8a00000006"
	"$PY" "$FCBIN" totext "$OUT/small/$v6" "$OUT/small/$v6.txt" || die "fcbin.py totext $v6"
	oracle "" "$OUT/small/$v6.txt" "$OUT/small/q" "$OUT/small/$v6.oracle"
	diff_all "small $v6" "$OUT/small/$v6" "$OUT/small/q" "$OUT/small/$v6.oracle"
done
# the text order that format 6 loses: same-type lines keep theirs, a typed line comes before an
# untyped one for the same path
v6=$OUT/small/quirks.v6.bin
check "v6: typed then untyped, as in the text" "$(lookup "$v6" 0100644 /t/typed-then-untyped)" "u:object_r:untyped_t:s0"
check "v6: untyped then typed, the typed line first (the text gives typed_t)" \
	"$(lookup "$v6" 0100644 /t/untyped-then-typed)" "u:object_r:untyped_t:s0"
check "v6: two untyped lines, the later wins as in the text" "$(lookup "$v6" 0 /t/same)" "u:object_r:second_t:s0"
"$PY" "$FCBIN" filter --real-modes --exclude untyped-then-typed "$OUT/small/q" "$OUT/small/q.untie" ||
	die "fcbin.py filter"
ours "" "$OUT/small/text" "$OUT/small/q.untie" "$OUT/small/text-untie.out" || die "fclabel on the text"
diff_all "small v6 (real modes)" "$v6" "$OUT/small/q.untie" "$OUT/small/text-untie.out"

# ---- libselinux's choice between FILE and FILE.bin ----
b=$OUT/base
mkdir -p "$b"
sed 's/:passwd_t:/:binpasswd_t:/' "$FIX/quirks" >"$b/for-bin"
"$SEFC" -o "$b/compiled" "$b/for-bin" 2>/dev/null || die "sefcontext_compile failed"
printf '/home/u/x u:object_r:hd_text_t:s0\n' >"$b/hd-text"
printf '/home/u/x u:object_r:hd_bin_t:s0\n' >"$b/hd-bin"
"$SEFC" -o "$b/hd-compiled" "$b/hd-bin" 2>/dev/null || die "sefcontext_compile failed"
printf '/srv/l u:object_r:local_bin_t:s0\n' >"$b/local-bin"
"$SEFC" -o "$b/local-compiled" "$b/local-bin" 2>/dev/null || die "sefcontext_compile failed"
T=1700000000
setup() { # setup TEXT_MTIME BIN_MTIME (empty: absent)
	rm -f "$b"/fc*
	if [ -n "$1" ]; then cp "$FIX/quirks" "$b/fc"; touch -d "@$1" "$b/fc"; fi
	if [ -n "$2" ]; then cp "$b/compiled" "$b/fc.bin"; touch -d "@$2" "$b/fc.bin"; fi
}
setup $T $((T + 10))
both "FILE.bin newer: read" "$b/fc" 0100644 /etc/passwd u:object_r:binpasswd_t:s0
check_match "FILE.bin newer: -v names it" "$("$FCLABEL" lookup -S "$b/fc" -m f -v /etc/passwd)" "*	$b/fc.bin:[0-9]*"
setup $((T + 10)) $T
both "FILE.bin older: FILE read" "$b/fc" 0100644 /etc/passwd u:object_r:passwd_t:s0
setup $T $T
both "same second: FILE.bin read" "$b/fc" 0100644 /etc/passwd u:object_r:binpasswd_t:s0
touch -d "@$T.9" "$b/fc"
both "FILE newer by a fraction of the same second: FILE.bin read" "$b/fc" 0100644 /etc/passwd u:object_r:binpasswd_t:s0
setup "" $T
both "only FILE.bin: read" "$b/fc" 0100644 /etc/passwd u:object_r:binpasswd_t:s0
setup $((T + 10)) $T
both "-S FILE.bin itself" "$b/fc.bin" 0100644 /etc/passwd u:object_r:binpasswd_t:s0
check "several files: no FILE.bin choice" "$(lookup "$b/fc,$b/hd-text" 0100644 /etc/passwd)" "u:object_r:passwd_t:s0"
check "several files: a compiled one by its magic" "$(lookup "$b/hd-text,$b/fc.bin" 0100644 /etc/passwd)" "u:object_r:binpasswd_t:s0"
cp "$b/hd-text" "$b/fc.homedirs"
cp "$b/hd-compiled" "$b/fc.homedirs.bin"
touch -d "@$T" "$b/fc.homedirs"; touch -d "@$((T + 5))" "$b/fc.homedirs.bin"
both "FILE.homedirs.bin newer: read" "$b/fc" 0100644 /home/u/x u:object_r:hd_bin_t:s0
touch -d "@$((T + 9))" "$b/fc.homedirs"
both "FILE.homedirs.bin older: FILE.homedirs read" "$b/fc" 0100644 /home/u/x u:object_r:hd_text_t:s0
check "--base-only: no FILE.homedirs(.bin)" "$(lookup "$b/fc" 0100644 /home/u/x --base-only)" "$(ask "$b/fc" 0100644 /home/u/x -b)"
cp "$b/local-compiled" "$b/fc.local.bin"
both "only FILE.local.bin: read" "$b/fc" 0 /srv/l u:object_r:local_bin_t:s0
cp "$FIX/quirks" "$b/text-named.bin"
both "a text file named .bin: read as text" "$b/text-named.bin" 0100644 /etc/passwd u:object_r:passwd_t:s0
# a newer FILE.bin that does not load: FILE is read instead, as libselinux reads it, with a
# warning naming FILE.bin and the offset
setup $T $((T + 10))
head -c 100 "$b/compiled" >"$b/fc.bin"
touch -d "@$((T + 10))" "$b/fc.bin"
both_quiet "damaged newer FILE.bin: FILE read" "$b/fc" 0100644 /etc/passwd u:object_r:passwd_t:s0
"$FCLABEL" lookup -S "$b/fc" /etc/passwd >"$b/stdout" 2>"$b/stderr"
check "damaged newer FILE.bin: exit status" "$?" 0
check_match "damaged newer FILE.bin: a warning names it, with the offset" "$(cat "$b/stderr")" \
	"fclabel lookup: warning: $b/fc.bin: compiled file_contexts: at byte offset * truncated: *; $b/fc is used instead*"
# and the other way: a newer FILE with a bad line, an older FILE.bin that loads
setup $((T + 10)) $T
printf '/bad\t-x\tu:object_r:x_t:s0\n' >>"$b/fc"
touch -d "@$((T + 10))" "$b/fc"
both_quiet "bad newer FILE: FILE.bin read" "$b/fc" 0100644 /etc/passwd u:object_r:binpasswd_t:s0
# neither loads: an error naming the newer one
head -c 100 "$b/compiled" >"$b/fc.bin"
touch -d "@$T" "$b/fc.bin"
"$FCLABEL" lookup -S "$b/fc" /etc/passwd >"$b/stdout" 2>"$b/stderr"
check "neither FILE nor FILE.bin loads: exit status" "$?" 2
check_match "neither loads: the newer one's error" "$(cat "$b/stderr")" "fclabel lookup: $b/fc:*: bad file type*"
printf '0100644 /etc/passwd\0' | "$ORACLE" -0 "$b/fc" >/dev/null 2>&1
check "neither loads: libselinux 3.4 fails too (exit 2)" "$?" 2

# ---- older layouts, written by tests/fcbin.py from the format 5 file ----
for v in 1 2 3 4; do
	for p in "" --pcre1; do
		[ "$v" = 1 ] && [ -z "$p" ] && continue # version 1 predates PCRE2
		f=$OUT/small/v$v${p:+-pcre1}.bin
		"$PY" "$FCBIN" downgrade --version $v $p "$OUT/small/v5.bin" "$f" || die "fcbin.py downgrade"
		diff_all "small, format $v${p:+ (PCRE1 layout)}" "$f" "$OUT/small/q" "$OUT/small/text.out"
	done
done
for v in 2 3 4; do
	oracle "" "$OUT/small/v$v.bin" "$OUT/small/q" "$OUT/small/oracle-v$v.out"
	compare "libselinux 3.4 on format $v" "$OUT/small/v$v.bin" "$OUT/small/q" "$OUT/small/oracle-v$v.out" "$OUT/small/text.out"
done

# ---- damaged files ----
# damaged F: F's named damages (tests/fcbin.py corrupt) refused, naming the byte offset
damaged() {
	_d=$1.damaged
	rm -rf "$_d"
	"$PY" "$FCBIN" corrupt "$1" "$_d" >"$_d.list" || die "fcbin.py corrupt"
	while read -r name off; do
		"$FCLABEL" lookup -S "$_d/$name" /etc/passwd >"$_d/$name.stdout" 2>"$_d/$name.stderr"
		rc=$?
		check "${1##*/} $name: refused" "$rc" 2
		check "${1##*/} $name: nothing on stdout" "$(cat "$_d/$name.stdout")" ""
		[ "$off" = - ] && off="[0-9]*"
		check_match "${1##*/} $name: message" "$(cat "$_d/$name.stderr")" \
			"fclabel lookup: $_d/$name: compiled file_contexts: at byte offset $off[: ]*"
	done <"$_d.list"
}
# mutants F COUNT: random damage to F gives a clean refusal (2) or a load that answers (0),
# never a crash
mutants() {
	_d=$1.mutants
	rm -rf "$_d"
	"$PY" "$FCBIN" mutate --seed "$FC_SEED" --count "$2" "$1" "$_d" || die "fcbin.py mutate"
	n0=0 n2=0 nbad=0
	for m in "$_d"/m*; do
		"$FCLABEL" lookup -S "$m" /usr/bin/ls >"$m.stdout" 2>"$m.stderr"
		rc=$?
		case $rc in
		0) [ "$(wc -l <"$m.stdout")" -eq 1 ] && n0=$((n0 + 1)) || { nbad=$((nbad + 1)); say "  $m: exit 0 without one answer"; } ;;
		2) grep -q "^fclabel lookup: $m:" "$m.stderr" && n2=$((n2 + 1)) || { nbad=$((nbad + 1)); say "  $m: exit 2 without naming the file: $(head -n 2 "$m.stderr")"; } ;;
		*) nbad=$((nbad + 1)); say "  $m: exit status $rc: $(head -n 3 "$m.stderr")" ;;
		esac
	done
	say "${1##*/}: $2 damaged copies: $n0 loaded, $n2 refused, $nbad otherwise"
	check "${1##*/}: $2 damaged copies, each loaded or refused" "$nbad" 0
}
for f in "$OUT/small/v5.bin" "$OUT/small/quirks.v6.bin"; do
	damaged "$f"
done
for f in "$OUT/small/v5.bin" "$OUT/small/v5r.bin" "$OUT/small/quirks.v6.bin"; do
	mutants "$f" 200
done
# analysed on a thread (FCLABEL_AHEAD=thread: as a file of a MiB or more is on a machine with a
# core free), the same answers and the same refusals
export FCLABEL_AHEAD=thread
diff_all "small v5, analysed on a thread" "$OUT/small/v5.bin" "$OUT/small/q" "$OUT/small/text.out"
damaged "$OUT/small/v5.bin"
# format 6's specs are analysed on the thread while its tree is read, then put in order
diff_all "small quirks.v6.bin, analysed on a thread" "$OUT/small/quirks.v6.bin" "$OUT/small/q" \
	"$OUT/small/quirks.v6.bin.oracle"
diff_all "small v6 (real modes), analysed on a thread" "$v6" "$OUT/small/q.untie" \
	"$OUT/small/text-untie.out"
damaged "$OUT/small/quirks.v6.bin"
unset FCLABEL_AHEAD

# ---- refpolicy ----
fc=$SHARED/refpolicy/file_contexts
if [ -f "$fc" ]; then
	r=$OUT/ref
	mkdir -p "$r/full" "$r/base"
	cp "$fc" "$fc".* "$r/full/" 2>/dev/null
	cp "$fc" "$r/base/file_contexts"
	"$SEFC" -o "$r/full/file_contexts.bin" "$r/full/file_contexts" 2>/dev/null || die "sefcontext_compile refpolicy"
	if [ -f "$r/full/file_contexts.homedirs" ]; then
		"$SEFC" -o "$r/full/file_contexts.homedirs.bin" "$r/full/file_contexts.homedirs" 2>/dev/null ||
			die "sefcontext_compile refpolicy homedirs"
	fi
	"$SEFC" -r -o "$r/base.bin" "$fc" 2>/dev/null || die "sefcontext_compile -r refpolicy"
	find /etc /usr/bin /usr/lib/systemd /var /dev /root /home /run /opt /srv -xdev -printf '%m %y %p\000' \
		>"$r/tree" 2>/dev/null
	"$PY" "$GEN" refpolicy --seed "$FC_SEED" --fc "$fc" --tree "$r/tree" --out "$r" --min-queries 1000 \
		--per-dir 100 --max-tree 5000 --every-mode-paths 1000 >/dev/null || die "gen_fc.py refpolicy"
	"$PY" "$FCBIN" filter --seed "$FC_SEED" --sample 25000 "$r/queries" "$r/q" || die "fcbin.py filter"
	"$PY" "$FCBIN" filter --seed "$FC_SEED" --sample 8000 "$r/queries" "$r/q8" || die "fcbin.py filter"
	check_match "refpolicy: file_contexts.bin read" \
		"$("$FCLABEL" lookup -S "$r/full/file_contexts" -m d -v /etc)" "*	$r/full/file_contexts.bin:*"
	check_match "refpolicy: file_contexts.homedirs.bin read" \
		"$("$FCLABEL" lookup -S "$r/full/file_contexts" -m d -v /root/.ssh)" "*:ssh_home_t:*	$r/full/file_contexts.homedirs.bin:*"
	ours "" "$fc" "$r/q" "$r/text.out" || die "fclabel on refpolicy"
	oracle "" "$r/full/file_contexts" "$r/q" "$r/oracle-bin.out" parallel
	sanity "$r/q" "$r/oracle-bin.out"
	diff_all "refpolicy .bin + .homedirs.bin" "$r/full/file_contexts" "$r/q" "$r/text.out" "$r/oracle-bin.out"
	ours "" "$r/base/file_contexts" "$r/q8" "$r/base-text.out" || die "fclabel on refpolicy"
	oracle "" "$r/base.bin" "$r/q8" "$r/oracle-base.out" parallel
	diff_all "refpolicy -r, alone" "$r/base.bin" "$r/q8" "$r/base-text.out" "$r/oracle-base.out"
	# a file of a MiB or more has its specs analysed on a thread of its own (fcontexts/ahead.c)
	# when a core is free: forced here both ways, the same answers, and damages found where they
	# are
	check "refpolicy .bin: large enough for the thread" \
		"$([ "$(wc -c <"$r/full/file_contexts.bin")" -ge 1048576 ] && echo yes)" yes
	for ahead in thread none; do
		export FCLABEL_AHEAD=$ahead
		diff_all "refpolicy .bin + .homedirs.bin (FCLABEL_AHEAD=$ahead)" "$r/full/file_contexts" \
			"$r/q" "$r/text.out"
		damaged "$r/full/file_contexts.bin"
		mutants "$r/full/file_contexts.bin" 40
	done
	unset FCLABEL_AHEAD
	if [ -n "$SEFC_NEW" ]; then
		"$SEFC_NEW" -o "$r/v6.bin" "$fc" 2>/dev/null || die "$SEFC_NEW refpolicy"
		"$PY" "$FCBIN" totext "$r/v6.bin" "$r/v6.txt" || die "fcbin.py totext"
		oracle "" "$r/v6.txt" "$r/q8" "$r/oracle-v6.out" parallel
		diff_all "refpolicy v6" "$r/v6.bin" "$r/q8" "$r/oracle-v6.out"
		for ahead in thread none; do
			export FCLABEL_AHEAD=$ahead
			diff_all "refpolicy v6 (FCLABEL_AHEAD=$ahead)" "$r/v6.bin" "$r/q8" "$r/oracle-v6.out"
			damaged "$r/v6.bin"
			mutants "$r/v6.bin" 40
		done
		unset FCLABEL_AHEAD
		"$PY" "$FCBIN" filter --real-modes "$r/q" "$r/q.real" || die "fcbin.py filter"
		ours "" "$r/base/file_contexts" "$r/q.real" "$r/text-real.out" || die "fclabel on refpolicy"
		diff_all "refpolicy v6 (real modes)" "$r/v6.bin" "$r/q.real" "$r/text-real.out"
	fi
else
	say "refpolicy: skipped (no $fc)"
fi

# ---- Android ----
if [ -d "$SHARED/android" ]; then
	a=$OUT/android
	"$PY" "$GEN" android --seed "$FC_SEED" --shared "$SHARED" --out "$a" --listing-sample 1500 \
		--every-mode-paths 150 >/dev/null || die "gen_fc.py android"
	n=0
	for d in "$a"/[0-9]*-*; do
		fcs=$(cat "$d/fcarg")
		case $fcs in "$SHARED/android/"*) ;; *) continue ;; esac
		bins="" i=0
		for f in $(echo "$fcs" | tr ',' ' '); do
			i=$((i + 1))
			# half without serialized patterns
			if [ $((n % 2)) = 0 ]; then r=""; else r=-r; fi
			"$SEFC" $r -o "$d/$i.bin" "$f" 2>/dev/null || die "sefcontext_compile $f"
			bins=${bins:+$bins,}$d/$i.bin
		done
		ours "" "$fcs" "$d/queries" "$d/text.out" || die "fclabel on $fcs"
		case $fcs in
		*,*) diff_all "${d##*/} (.bin files, concatenated)" "$bins" "$d/queries" "$d/text.out" ;;
		*)
			oracle "" "$bins" "$d/queries" "$d/oracle-bin.out"
			diff_all "${d##*/} .bin" "$bins" "$d/queries" "$d/text.out" "$d/oracle-bin.out"
			if [ -n "$SEFC_NEW" ]; then
				"$SEFC_NEW" -o "$d/v6.bin" "$fcs" 2>/dev/null || die "$SEFC_NEW $fcs"
				"$PY" "$FCBIN" totext "$d/v6.bin" "$d/v6.txt" || die "fcbin.py totext"
				oracle "" "$d/v6.txt" "$d/queries" "$d/oracle-v6.out"
				diff_all "${d##*/} v6" "$d/v6.bin" "$d/queries" "$d/text.out" "$d/oracle-v6.out"
			fi
			;;
		esac
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || die "no Android policy under $SHARED/android"
	say "android: $n policies compiled and compared"
else
	say "android: skipped (no $SHARED/android)"
fi

# ---- random policies ----
npol=${FC_FCBIN_POLICIES:-40}
"$PY" "$GEN" adversarial --seed "$FC_SEED" --policies "$npol" --queries 1000 --out "$OUT/adv" >/dev/null ||
	die "gen_fc.py adversarial"
n=0
for d in "$OUT"/adv/p*; do
	fc=$(cat "$d/fcarg")
	case $fc in *,*) continue ;; esac
	if [ -e "$d/baseonly" ]; then oo=-b fo=--base-only; else oo="" fo=""; fi
	c=$d/compiled
	mkdir -p "$c"
	cp "$d"/file_contexts* "$c/"
	for f in file_contexts file_contexts.homedirs file_contexts.local; do
		[ -f "$c/$f" ] || continue
		"$SEFC" -o "$c/$f.bin" "$c/$f" 2>"$c/$f.err" || die "sefcontext_compile $d/$f: $(cat "$c/$f.err")"
	done
	ours "$fo" "$fc" "$d/queries" "$d/text.out" || die "fclabel on $fc"
	oracle "$oo" "$c/file_contexts" "$d/queries" "$d/oracle-bin.out"
	_ok=0
	ours "$fo" "$c/file_contexts" "$d/queries" "$d/bin.out" || _ok=1
	compare "${d##*/} .bin${fo:+ $fo} vs text" "$c/file_contexts" "$d/queries" "$d/bin.out" "$d/text.out" "$_ok"
	compare "${d##*/} .bin${fo:+ $fo} vs libselinux" "$c/file_contexts" "$d/queries" "$d/bin.out" "$d/oracle-bin.out" "$_ok"
	if [ -n "$SEFC_NEW" ]; then
		if "$SEFC_NEW" -o "$d/v6.bin" "$fc" 2>"$d/v6.err"; then
			"$PY" "$FCBIN" totext "$d/v6.bin" "$d/v6.txt" || die "fcbin.py totext"
			oracle "" "$d/v6.txt" "$d/queries" "$d/oracle-v6.out"
			diff_all "${d##*/} v6" "$d/v6.bin" "$d/queries" "$d/oracle-v6.out"
		else
			say "${d##*/}: libselinux 3.8 does not compile it: $(tail -n 1 "$d/v6.err")"
		fi
	fi
	n=$((n + 1))
done
say "random policies: $n compiled and compared"
[ -n "$SEFC_NEW" ] || say "format 6 from libselinux 3.8: fixtures only (no sefcontext_compile 3.8: set SEFCONTEXT_COMPILE_NEW)"
finish t_fcbin $(($(date +%s) - start))
