# make install / uninstall into staging directories, the installed library used through
# pkg-config by the fcontexts(3) example (taken from the staged page itself, compiled, linked
# against the staged libfcontexts.a, run on fixtures/demo/file_contexts and checked against
# fclabel lookup), the staged man pages, the bash completion (loads; its option lists equal each
# command's --help), and make static (fclabel-static: --version says what is static; labels an
# image exactly as fclabel does). Skips the static part with a reason when no static archive is
# there.
. "${TOP:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"
PATH=$PATH:/usr/sbin:/sbin
[ -x "$FCLABEL" ] || skip "fclabel is not built ($FCLABEL): run make"
command -v pkg-config >/dev/null || skip "pkg-config is not installed"
cd "$TOP" || exit 1
VERSION=$(sed -n 's/^VERSION *:= *//p' Makefile)

# ---- make install DESTDIR=$OUT/root PREFIX=/usr ----------------------------------------------
root=$OUT/root
if make -s install DESTDIR="$root" PREFIX=/usr >"$OUT/install.log" 2>&1; then
	ok "make install DESTDIR=... PREFIX=/usr"
else
	bad "make install failed: $(tail -n 3 "$OUT/install.log" | tr '\n' '|')"
fi
man3_links="fc_load fc_load_opts fc_free fc_lookup fc_count fc_spec_at fc_explain fc_spec_prefix
	fc_diff fc_diff_free fc_diff_count fc_diff_at fc_diff_everything fc_diff_reaches"
# expected_files PREFIX-DIRS...: the list make install must produce, sorted
expected_files() { # BINDIR MANDIR LIBDIR INCLUDEDIR PKGCONFIGDIR BASHCOMPDIR
	{
		echo "$1/fclabel"
		for p in man/*.1; do echo "$2/man1/${p#man/}"; done
		for p in man/*.3; do echo "$2/man3/${p#man/}"; done
		for p in man/*.5; do echo "$2/man5/${p#man/}"; done
		for f in $man3_links; do echo "$2/man3/$f.3"; done
		echo "$3/libfcontexts.a"
		echo "$4/fcontexts.h"
		echo "$5/fcontexts.pc"
		echo "$6/fclabel"
		echo "${6%/bash-completion/completions}/fclabel/fclabel-report.schema.json"
	} | sort
}
want=$(expected_files /usr/bin /usr/share/man /usr/lib /usr/include /usr/lib/pkgconfig \
	/usr/share/bash-completion/completions)
got=$(cd "$root" && find . ! -type d | sed 's|^\.||' | sort)
expect_eq "make install puts every file in place, nothing else" "$got" "$want"
[ -x "$root/usr/bin/fclabel" ] && ok "fclabel is executable" || bad "fclabel is not executable"
cmp -s "$root/usr/lib/libfcontexts.a" fcontexts/libfcontexts.a && ok "libfcontexts.a installed" ||
	bad "installed libfcontexts.a differs"
cmp -s "$root/usr/include/fcontexts.h" fcontexts/fcontexts.h && ok "fcontexts.h installed" ||
	bad "installed fcontexts.h differs"
cmp -s "$root/usr/share/bash-completion/completions/fclabel" completions/fclabel.bash &&
	ok "completion installed" || bad "installed completion differs"
for f in $man3_links; do
	expect_eq "man3/$f.3 points to fcontexts(3)" "$(cat "$root/usr/share/man/man3/$f.3")" \
		".so man3/fcontexts.3"
done

# ---- fcontexts.pc ----------------------------------------------------------------------------
pc=$root/usr/lib/pkgconfig/fcontexts.pc
if grep -q "$root" "$pc"; then bad "fcontexts.pc names the staging dir: $(cat "$pc")"; else
	ok "fcontexts.pc has the installed paths, not DESTDIR's"; fi
expect_eq "fcontexts.pc prefix" "$(sed -n 's/^prefix=//p' "$pc")" "/usr"
# pkgconf: the staged tree as a sysroot, and -I/usr/include not dropped as a system directory
PKG_CONFIG_PATH=$root/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root
PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1
export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_ALLOW_SYSTEM_CFLAGS PKG_CONFIG_ALLOW_SYSTEM_LIBS
expect_eq "pkg-config --modversion fcontexts" "$(pkg-config --modversion fcontexts 2>&1)" "$VERSION"
flags=$(pkg-config --cflags --libs fcontexts 2>"$OUT/pc.err")
expect_match "pkg-config --cflags --libs fcontexts" "$flags" "*-I$root/usr/include*-L$root/usr/lib*-lfcontexts*-lpcre2-8*"
sflags=$(pkg-config --static --cflags --libs fcontexts 2>>"$OUT/pc.err")
expect_match "pkg-config --static --libs fcontexts" "$sflags" "*-lfcontexts*-lpcre2-8*"

# ---- the fcontexts(3) example, from the staged page ------------------------------------------
page3=$root/usr/share/man/man3/fcontexts.3
# ex_block N: the Nth .EX block of the EXAMPLES section, troff escapes undone
ex_block() {
	sed -n '/^\.SH EXAMPLES/,/^\.SH SEE ALSO/p' "$page3" |
		awk -v n="$1" '/^\.EX/ {k++; on = 1; next} /^\.EE/ {on = 0; next} on && k == n' |
		sed -e 's/\\-/-/g' -e 's/\\e/\\/g'
}
ex_block 1 >"$OUT/fclookup.c"
grep -q 'fc_load(' "$OUT/fclookup.c" && grep -q 'fc_lookup(' "$OUT/fclookup.c" &&
	grep -q 'fc_free(' "$OUT/fclookup.c" && ok "the example loads, looks up and frees" ||
	bad "the example lacks fc_load, fc_lookup or fc_free"
# a sanitized build (make check-full runs every test on one too) needs its runtime in the example too
san=""
nm fcontexts/libfcontexts.a 2>/dev/null | grep -q __asan_ && san="-fsanitize=address,undefined"
# shellcheck disable=SC2086
if cc -Wall -Wextra -Werror $san -o "$OUT/fclookup" "$OUT/fclookup.c" $flags \
	-Wl,--trace >"$OUT/cc.log" 2>&1; then
	ok "the example compiles and links with pkg-config's flags, without warnings"
else
	bad "the example does not build: $(grep -v '^/' "$OUT/cc.log" | head -n 5 | tr '\n' '|')"
fi
grep -q "^$root/usr/lib/libfcontexts.a" "$OUT/cc.log" && ok "linked against the staged libfcontexts.a" ||
	bad "the example was not linked against $root/usr/lib/libfcontexts.a"
# the page shows a run: "$ ./fclookup FC \" then paths, then the output
ex_block 2 >"$OUT/run.txt"
fc=$(sed -n 's/^\$ \.\/fclookup \([^ ]*\).*/\1/p' "$OUT/run.txt")
paths=$(sed -n '/^\$ \.\/fclookup/{n;p;}' "$OUT/run.txt")
sed -n '/^\$/!p' "$OUT/run.txt" | sed '/^ /d' >"$OUT/run.want"
expect_eq "the page's run uses the demo file_contexts" "$fc" "fixtures/demo/file_contexts"
if [ -x "$OUT/fclookup" ]; then
	# shellcheck disable=SC2086
	"$OUT/fclookup" $fc $paths >"$OUT/run.got" 2>"$OUT/run.err"
	expect_eq "the example exits 0" "$?" 0
	expect_eq "the example prints what its page shows" "$(cat "$OUT/run.got")" "$(cat "$OUT/run.want")"
	# and agrees with fclabel lookup -v for regular files
	for p in $paths /system/bin/toybox /vendor/bin/hw/android.hardware.power@1.2-service \
		/data/local/tmp/a//b/ /nowhere; do
		ex=$("$OUT/fclookup" "$fc" "$p" | cut -d' ' -f2-)
		fl=$("$FCLABEL" lookup -S "$fc" -m f -v "$p" | tr '\t' ' ')
		expect_eq "example and fclabel lookup agree on $p" "$ex" "$fl"
	done
	printf '/a(\tu:object_r:x:s0\n' >"$OUT/bad_fc"
	"$OUT/fclookup" "$OUT/bad_fc" /a >/dev/null 2>"$OUT/bad.err"
	expect_eq "the example exits 2 on a bad file" "$?" 2
	expect_match "the example names file, line and column" "$(cat "$OUT/bad.err")" \
		"$OUT/bad_fc:1:*: *"
fi

# ---- the staged man pages ----------------------------------------------------------------------
if command -v groff >/dev/null; then
	for p in "$root"/usr/share/man/man1/*.1 "$page3"; do
		warn=$(groff -ww -man -Tutf8 "$p" 2>&1 >/dev/null)
		expect_eq "groff -ww -man ${p#"$root"} renders without warnings" "$warn" ""
	done
else
	echo "groff is not installed: staged pages not rendered"
fi
if command -v man >/dev/null; then
	for p in "$root"/usr/share/man/man1/*.1 "$page3"; do
		err=$(MANWIDTH=80 man --warnings=w -l "$p" 2>&1 >"$OUT/man.out")
		expect_eq "man -l ${p#"$root"}: no warnings" "$err" ""
		grep -q . "$OUT/man.out" || bad "man -l ${p#"$root"} printed nothing"
	done
	for f in fclabel fcontexts fc_lookup fc_diff_reaches; do
		w=$(MANPATH=$root/usr/share/man man -w "$f" 2>&1)
		case $f in fclabel) sec=1 ;; *) sec=3 ;; esac
		case $f in fc_*) f=fcontexts ;; esac
		expect_eq "man -w finds $f($sec) in the staged tree" "$w" "$root/usr/share/man/man$sec/$f.$sec"
	done
	text=$(MANPATH=$root/usr/share/man MANWIDTH=80 man fc_load 2>&1)
	expect_match "man fc_load shows fcontexts(3)" "$text" "*FCONTEXTS(3)*fc_load*"
else
	echo "man is not installed: man -l not tried"
fi

# ---- bash completion ---------------------------------------------------------------------------
comp=$root/usr/share/bash-completion/completions/fclabel
if command -v bash >/dev/null; then
	expect_eq "the completion loads in bash" \
		"$(bash -c ". '$comp' && complete -p fclabel" 2>&1)" "complete -F _fclabel fclabel"
	cmds=$("$FCLABEL" --help | awk '/^commands:/ {on=1; next} on && !NF {exit} on {print $1}')
	expect_eq "the completion's commands are fclabel --help's" \
		"$(bash -c ". '$comp' && printf '%s\n' \$_fclabel_commands" | sort)" "$(echo "$cmds" | sort)"
	for cmd in $cmds; do
		help=$("$FCLABEL" "$cmd" --help)
		# as tests/t_man.sh reads them
		hopts=$(echo "$help" | grep -o -- '--[a-z][a-z-]*\|-[a-zA-Z0-9]\b' | sort -u)
		# the options of help lines that name an argument ("  -S, --x FC[,FC...]  text"): the
		# name follows the options after one space, the text comes after two or more
		hargs=$(echo "$help" | awk '/^ +-/ {
			sub(/^ +/, ""); sub(/  .*/, ""); n = split($0, w, / /)
			if (w[n] ~ /^-/) next
			for (i = 1; i < n; i++) { sub(/,$/, "", w[i]); print w[i] } }' | sort -u)
		copts=$(bash -c ". '$comp' && v=_fclabel_opts_$cmd && printf '%s\n' \${!v}" | sort -u)
		cargs=$(bash -c ". '$comp' && v=_fclabel_args_$cmd && printf '%s\n' \${!v}" | sort -u)
		expect_eq "completion: fclabel $cmd options = --help's" "$copts" "$hopts"
		expect_eq "completion: fclabel $cmd options with an argument = --help's" "$cargs" "$hargs"
	done
	# complete WORDS...: what _fclabel offers for the last word
	complete_words() {
		bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
			_fclabel; ((${#COMPREPLY[@]})) && printf "%s\n" "${COMPREPLY[@]}"' - "$comp" "$@" | sort | tr '\n' ' '
	}
	expect_eq "complete: fclabel re" "$(complete_words fclabel re)" "relabel "
	expect_eq "complete: fclabel --v" "$(complete_words fclabel --v)" "--version "
	expect_eq "complete: fclabel label x --js" "$(complete_words fclabel label x --js)" "--json "
	expect_eq "complete: fclabel diff --" "$(complete_words fclabel diff --)" \
		"--android-root --base-only --help --json --old-partition --old-root --partition "
	expect_eq "complete: diff --old-partition offers the partitions" \
		"$(complete_words fclabel diff --old-partition s)" "system= system_ext= "
	expect_eq "complete: fclabel lookup -m" "$(complete_words fclabel lookup -m '')" "b c d f l p s "
	expect_eq "complete: fclabel explain --mode=" "$(complete_words fclabel explain --mode = d)" "d "
	expect_eq "complete: fclabel label x -a (inside the image: nothing)" \
		"$(complete_words fclabel label x -a /sy)" ""
	expect_eq "complete: fclabel check x -e (nothing)" "$(complete_words fclabel check x -e /sy)" ""
	expect_eq "complete: fclabel label x -S fixtures/demo/f" \
		"$(complete_words fclabel label x -S fixtures/demo/f)" "fixtures/demo/file_contexts "
	expect_eq "complete: -S a list, after the comma" \
		"$(complete_words fclabel lookup -S a,fixtures/demo/f)" "a,fixtures/demo/file_contexts "
	expect_eq "complete: --json FILE" "$(complete_words fclabel check x --json fixtures/demo/f)" \
		"fixtures/demo/file_contexts "
	expect_eq "complete: --partition offers the partitions" \
		"$(complete_words fclabel label x --partition v)" "vendor= "
	expect_eq "complete: --android-root a directory" \
		"$(complete_words fclabel lookup --android-root fixtures/de)" "fixtures/demo "
	expect_eq "complete: --from offers none" "$(complete_words fclabel relabel x --from no)" "none "
	expect_eq "complete: diff --json takes no argument: an operand follows" "$(complete_words fclabel diff --json fixtures/demo/f)" \
		"fixtures/demo/file_contexts "
	expect_eq "complete: an image" "$(complete_words fclabel label fixtures/demo/f)" \
		"fixtures/demo/file_contexts "
else
	echo "bash is not installed: completion not tried"
fi

# ---- make uninstall ------------------------------------------------------------------------------
if make -s uninstall DESTDIR="$root" PREFIX=/usr >"$OUT/uninstall.log" 2>&1; then
	ok "make uninstall"
else
	bad "make uninstall failed: $(tail -n 3 "$OUT/uninstall.log" | tr '\n' '|')"
fi
expect_eq "make uninstall leaves no file" "$(cd "$root" && find . ! -type d)" ""

# ---- the directory variables, and the default PREFIX ----------------------------------------------
r2=$OUT/root2
make -s install DESTDIR="$r2" PREFIX=/opt/fc BINDIR=/opt/fc/sbin MANDIR=/opt/man LIBDIR=/opt/fc/lib64 \
	INCLUDEDIR=/opt/inc PKGCONFIGDIR=/opt/pc DATADIR=/opt/data >"$OUT/install2.log" 2>&1 ||
	bad "make install with every directory set failed: $(tail -n 3 "$OUT/install2.log" | tr '\n' '|')"
want=$(expected_files /opt/fc/sbin /opt/man /opt/fc/lib64 /opt/inc /opt/pc \
	/opt/data/bash-completion/completions)
expect_eq "BINDIR MANDIR LIBDIR INCLUDEDIR PKGCONFIGDIR DATADIR are honored" \
	"$(cd "$r2" && find . ! -type d | sed 's|^\.||' | sort)" "$want"
expect_eq "fcontexts.pc follows LIBDIR and INCLUDEDIR" \
	"$(sed -n 's/^\(libdir\|includedir\)=//p' "$r2/opt/pc/fcontexts.pc" | tr '\n' ' ')" "/opt/fc/lib64 /opt/inc "
make -s uninstall DESTDIR="$r2" PREFIX=/opt/fc BINDIR=/opt/fc/sbin MANDIR=/opt/man LIBDIR=/opt/fc/lib64 \
	INCLUDEDIR=/opt/inc PKGCONFIGDIR=/opt/pc DATADIR=/opt/data >>"$OUT/install2.log" 2>&1
expect_eq "and uninstall with them leaves no file" "$(cd "$r2" && find . ! -type d)" ""
r3=$OUT/root3
make -s install DESTDIR="$r3" >"$OUT/install3.log" 2>&1
expect_eq "the default PREFIX is /usr/local" "$(cd "$r3" && find . ! -type d | sed 's|^\.||' | sort)" \
	"$(expected_files /usr/local/bin /usr/local/share/man /usr/local/lib /usr/local/include \
		/usr/local/lib/pkgconfig /usr/local/share/bash-completion/completions)"

# ---- fclabel --version ------------------------------------------------------------------------------
v=$("$FCLABEL" --version)
expect_match "fclabel --version: versions" "$v" "fclabel $VERSION*libext2fs [0-9]*PCRE2 [0-9]*"
expect_match "fclabel --version: linked dynamically" "$v" "*linked statically: none*linked dynamically: *libext2fs*"

# ---- make static ------------------------------------------------------------------------------------
have="" missing=""
for l in ext2fs com_err blkid pcre2-8 nettle sepol lz4 lzma zstd z; do
	case $(cc -print-file-name="lib$l.a") in
	/*) have="$have lib$l" ;;
	*) missing="$missing lib$l" ;;
	esac
done
have=${have# } missing=${missing# }
[ -n "$missing" ] || case $(cc -print-file-name=libc.a) in /*) have="$have libc" ;; *) missing=libc ;; esac
[ -n "$missing" ] || missing=none
if [ -z "$have" ]; then
	[ "$fails" -eq 0 ] || finish
	skip "make static not tried: no static archive of libext2fs, libcom_err, libblkid, libpcre2-8, libnettle, libsepol or libz (Debian: libext2fs-dev comerr-dev libblkid-dev libpcre2-dev nettle-dev libsepol-dev zlib1g-dev)"
fi
if make -s static >"$OUT/static.log" 2>&1; then ok "make static"; else
	bad "make static failed: $(tail -n 5 "$OUT/static.log" | tr '\n' '|')"; finish; fi
st=$TOP/fclabel-static
v=$("$st" --version)
expect_eq "fclabel-static --version: statically" "$(echo "$v" | sed -n 's/^linked statically: //p')" "$have"
expect_eq "fclabel-static --version: dynamically" "$(echo "$v" | sed -n 's/^linked dynamically: //p')" "$missing"
expect_match "fclabel-static --version: versions" "$v" "fclabel $VERSION*libext2fs [0-9]*PCRE2 [0-9]*"
echo "$v" | sed 's/^/    /'
if [ "$missing" = none ]; then
	if readelf -d "$st" 2>&1 | grep -q 'no dynamic section'; then ok "fclabel-static has no dynamic section"
	else bad "fclabel-static is dynamic: $(readelf -d "$st" | grep NEEDED | tr '\n' ' ')"; fi
else
	echo "linked dynamically (no static archive here): $missing"
fi
# it labels an image exactly as fclabel does
if command -v mke2fs >/dev/null && command -v debugfs >/dev/null; then
	mkdir -p "$OUT/tree"
	sh tests/mktree.sh fixtures/demo/tree "$OUT/tree"
	mke2fs -q -F -t ext4 -I 128 -d "$OUT/tree" "$OUT/a.img" 8M >"$OUT/mke2fs.log" 2>&1 ||
		bad "mke2fs failed: $(cat "$OUT/mke2fs.log")"
	cp "$OUT/a.img" "$OUT/b.img"
	"$st" label "$OUT/a.img" -a /system -S fixtures/demo/file_contexts >"$OUT/sa.out" 2>&1
	expect_eq "fclabel-static label exits 0" "$?" 0
	"$FCLABEL" label "$OUT/b.img" -a /system -S fixtures/demo/file_contexts >"$OUT/sb.out" 2>&1
	expect_eq "fclabel-static reports what fclabel reports" \
		"$(sed 's/a\.img:.*, [0-9.]* s$//' "$OUT/sa.out")" "$(sed 's/b\.img:.*, [0-9.]* s$//' "$OUT/sb.out")"
	cmp -s "$OUT/a.img" "$OUT/b.img" && ok "fclabel-static and fclabel write the same image" ||
		bad "fclabel-static and fclabel labeled the image differently"
	"$FCLABEL" check "$OUT/a.img" -a /system -S fixtures/demo/file_contexts >"$OUT/check.out" 2>&1
	expect_eq "fclabel check of fclabel-static's image exits 0" "$?" 0
	l=$(debugfs -R "ea_get /bin/sh security.selinux" "$OUT/a.img" 2>/dev/null | tr -d '\n')
	expect_match "/system/bin/sh labeled shell_exec" "$l" "*u:object_r:shell_exec:s0*"
	e2fsck -fn "$OUT/a.img" >"$OUT/fsck.log" 2>&1 && ok "e2fsck -fn clean" ||
		bad "e2fsck -fn: $(tail -n 3 "$OUT/fsck.log" | tr '\n' '|')"
else
	echo "mke2fs/debugfs not installed: fclabel-static not tried on an image"
fi
finish
