# Every command has a man page that renders without warnings and lists every option --help shows;
# so does the library's fcontexts(3) (without warnings).
. "$TOP/tests/lib.sh"
command -v groff >/dev/null || skip "groff is not installed"
for page in "$TOP"/man/*.1 "$TOP"/man/*.3 "$TOP"/man/*.5; do
	warn=$(groff -ww -man -Tutf8 "$page" 2>&1 >/dev/null)
	expect_eq "$(basename "$page") renders without warnings" "$warn" ""
done
for cmd in $("$FCLABEL" --help | awk '/^commands:/ {on=1; next} on && !NF {exit} on {print $1}'); do
	page="$TOP/man/fclabel-$cmd.1"
	[ -f "$page" ] || { bad "fclabel $cmd has no man page"; continue; }
	text=$(groff -man -Tutf8 "$page" 2>/dev/null | sed 's/.\x08//g')
	for opt in $("$FCLABEL" "$cmd" --help | grep -o -- '--[a-z][a-z-]*\|-[a-zA-Z0-9]\b' | sort -u); do
		case $text in *"$opt"*) ok "fclabel-$cmd(1) lists $opt" ;; *) bad "fclabel-$cmd(1) lacks $opt" ;; esac
	done
	grep -q "fclabel-$cmd" "$TOP/man/fclabel.1" || grep -q "fclabel\\\\-$cmd" "$TOP/man/fclabel.1" ||
		bad "fclabel(1) does not point to fclabel-$cmd(1)"
done
finish
