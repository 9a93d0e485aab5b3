# The house's rules (tests/layout.py): the rooms, who includes whom, an engine that names no
# image format, no circle of calls between objects, Android's /data knowledge only in android/,
# libraries that neither print nor exit, no .c over 900 lines, no benchmark in tests/. Then each
# rule is shown to catch what it forbids: a copy of the sources and objects gets one planted
# violation at a time, and the rule must fail on it, and only that copy.
. "$TOP/tests/lib.sh"
command -v nm >/dev/null 2>&1 || skip "nm is not installed (binutils)"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
[ -x "$FCLABEL" ] || skip "fclabel is not built"
cd "$TOP" || exit 1

python3 tests/layout.py --root "$TOP" >"$OUT/layout" 2>&1
while IFS= read -r line; do
	case $line in
	"ok   "*) ok "${line#ok   }" ;;
	"FAIL "*) bad "${line#FAIL }" ;;
	*) bad "$line" ;;
	esac
done <"$OUT/layout"

# ---- each rule fails on a planted violation ----
rooms="fcontexts android imgfmt labeler bench"
mkdir -p "$OUT/clean/tests"
for d in $rooms; do cp -r "$d" "$OUT/clean/"; done
cp tests/layout.py "$OUT/clean/tests/"
cppflags=$(make -s --no-print-directory print-cppflags)
cc=${CC:-cc}

# plant RULE WHAT CMD...: in a fresh copy, CMD plants the violation; the rule must fail
plant() {
	rule=$1 what=$2
	shift 2
	rm -rf "$OUT/p"
	cp -r "$OUT/clean" "$OUT/p"
	(cd "$OUT/p" && eval "$@") >"$OUT/plant.err" 2>&1 || {
		bad "$rule: could not plant $what: $(tail -n 3 "$OUT/plant.err")"
		return
	}
	# what the rule says of the copy that it did not say of the clean one
	python3 "$OUT/p/tests/layout.py" --root "$OUT/p" --only "$rule" >"$OUT/plant.out" 2>&1
	grep "^FAIL $rule: " "$OUT/plant.out" | grep -vxF -f "$OUT/clean.out" >"$OUT/plant.new"
	if [ ! -s "$OUT/plant.new" ]; then
		bad "$rule: a planted violation ($what) passes"
	elif grep -q "^FAIL $rule: " "$OUT/plant.out"; then
		ok "$rule catches $what: $(head -n 1 "$OUT/plant.new" | cut -c 6- | cut -c 1-140)"
	else
		bad "$rule: on $what: $(head -n 3 "$OUT/plant.out")"
	fi
}
# recompile FILE.c in the copy, with the build's flags
recompile() {
	# shellcheck disable=SC2086
	$cc $cppflags -c -o "${1%.c}.o" "$1"
}

# the copy as it is says what the tree says (a rule the tree breaks is no proof of a plant)
python3 "$OUT/clean/tests/layout.py" --root "$OUT/clean" >"$OUT/clean.out" 2>&1
sed "s|$OUT/clean|$TOP|g" "$OUT/clean.out" | diff - "$OUT/layout" >/dev/null &&
	ok "the copy of the sources and objects says what the tree says" ||
	bad "the copy says otherwise than the tree: $(sed "s|$OUT/clean|$TOP|g" "$OUT/clean.out" | diff - "$OUT/layout" | head -n 3)"

plant rooms "a seapp/ room" 'mkdir seapp && echo "int x;" >seapp/x.c'
plant rooms "a source outside the rooms" 'echo "int x;" >labeler/planted.c'
plant includes "the engine including ext4's internal.h" \
	'printf "#include \"ext4/internal.h\"\n" >>labeler/engine/report.c'
plant includes "android/ including the engine's header" \
	'printf "#include \"engine/engine.h\"\n" >>android/walks.c'
plant engine "the engine naming errcode_t" 'printf "static long planted(void) { return sizeof(errcode_t); }\n" >>labeler/engine/device.c'
plant engine "the engine calling an ext4 function" \
	'printf "void ext4_label(void);\nvoid planted_call(void);\nvoid planted_call(void) { ext4_label(); }\n" >labeler/engine/planted_c.c &&
	 recompile labeler/engine/planted_c.c'
plant circles "report.c calling back into digests.c" \
	'printf "void planted_call(struct run *r);\nvoid planted_call(struct run *r) { dig_wrong(r); }\n" >>labeler/engine/report.c && recompile labeler/engine/report.c'
plant android "a /data literal in device.c" \
	'printf "const char *planted_path = \"/data/app\";\n" >>labeler/engine/device.c'
plant android "an AID_ name in the tree room" 'printf "enum { AID_PLANTED = 1 };\n" >>labeler/tree/io.c'
plant quiet "fcontexts printing to stderr" \
	'printf "#include <stdio.h>\nvoid planted_say(void);\nvoid planted_say(void) { fprintf(stderr, \"x\\\\n\"); }\n" >>fcontexts/diff.c && recompile fcontexts/diff.c'
plant quiet "imgfmt calling exit" \
	'printf "void planted_exit(void);\nvoid planted_exit(void) { exit(3); }\n" >>imgfmt/tracked.c && recompile imgfmt/tracked.c'
plant size "a .c of 901 lines" 'seq 901 | sed "s|.*|/* planted */|" >labeler/tree/planted.c'
plant bench "a benchmark in tests/" 'touch tests/bench_planted.sh'
finish
