# Bad file_contexts input: a clear error naming file:line (and column), exit 2, nothing on stdout.
# What libselinux accepts and means clearly (CRLF, tabs, empty files, comments, extra fields) is
# accepted and answers like libselinux.
. "$TOP/tests/lib.sh"
cd "$OUT" || exit 1

# reject NAME EXPECTED-STDERR-GLOB   (the file is NAME, written before)
reject() {
	"$FCLABEL" lookup -S "$1" /a >stdout 2>stderr
	rc=$?
	expect_eq "$1: exit status" "$rc" 2
	expect_eq "$1: nothing on stdout" "$(cat stdout)" ""
	expect_match "$1: message" "$(cat stderr)" "$2"
}

printf '/a u:r:a_t:s0\n/b(c u:r:b_t:s0\n' >regex
reject regex "fclabel lookup: regex:2:5: bad regex '/b(c': missing closing parenthesis (PCRE2, at offset 4)"
printf '/a -x u:r:a_t:s0\n' >type
reject type "*type:1:4: bad file type '-x'*"
printf '/a --- u:r:a_t:s0\n' >type3
reject type3 "*type3:1:4: bad file type '---'*"
printf '# c\n\n   /lonely\n' >fields
reject fields "*fields:3:4: missing fields*"
printf '/a u:r:a_t:s0\n/b\0 u:r:b_t:s0\n' >nul
reject nul "*nul:2:3: NUL byte in line"
printf '/caf\303\251 u:r:a_t:s0\n' >nonascii
reject nonascii "*nonascii:1:5: non-ASCII byte 0xc3"
printf '/a u:r:a_t:s0\n' >ok_first
reject ok_first,missing "*missing: cannot open: No such file or directory"
mkdir -p dir
reject dir "*dir: not a regular file"
printf '/x ' >long
head -c 2000000 /dev/zero | tr '\0' a >>long
printf ' u:r:t:s0\n' >>long
reject long "*long:1: line is 2000012 bytes long, over the 1048576-byte limit"
printf '/a u:r:a_t:s0\n/b[x u:r:b_t:s0\n' >class
reject class "*class:2:5: bad regex*character class*"
# an unreadable file (root reads everything, so only as another user)
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	printf '/a u:r:a_t:s0\n' >unreadable
	chmod 000 unreadable
	setpriv --reuid=65534 --regid=65534 --clear-groups "$FCLABEL" lookup -S "$OUT/unreadable" /a >stdout 2>stderr
	expect_eq "unreadable: exit status" "$?" 2
	expect_match "unreadable: message" "$(cat stderr)" "*unreadable: cannot open: Permission denied"
fi

# Accepted as libselinux accepts them, with the same answers. A trailing backslash escapes the
# '$' that anchors the regex: '/e(x)\' matches the path '/ex$' in both.
need_oracle
printf '/a\tu:r:a_t:s0\r\n\t/b  --\t u:r:b_t:s0\r\n# comment \303\251\n/c -- u:r:c_t:s0 extra fields here\n/e(x)\\ u:r:e_t:s0\n/d -d u:r:d_t:s0' >accepted
: >empty
printf '#only a comment\n\n' >comments
for f in accepted empty comments; do
	printf '0100644 /a\0000100644 /b\0000040755 /b\0000 /c\0000040755 /d\0000100644 /d\0000 /ex$\0000 /ex\0' >q
	"$FCLABEL" lookup -S "$f" --batch -0 <q >ours 2>err
	rc=$?
	"$ORACLE" -0 "$f" <q >theirs 2>/dev/null
	expect_eq "$f: accepted" "$rc" 0
	expect_eq "$f: same answers as libselinux" "$(cat ours)" "$(cat theirs)"
done
expect_eq "accepted: answers" "$(tr '\n' ' ' <ours)" "<<none>> <<none>> <<none>> <<none>> <<none>> <<none>> <<none>> <<none>> "
printf '0100644 /a\0000100644 /b\0000040755 /b\0000 /c\0000040755 /d\0000100644 /d\0000 /ex$\0000 /ex\0' >q
"$FCLABEL" lookup -S accepted --batch -0 <q >ours
expect_eq "accepted: CRLF, tabs, extra fields, no final newline" "$(tr '\n' ' ' <ours)" \
	"u:r:a_t:s0 u:r:b_t:s0 <<none>> u:r:c_t:s0 u:r:d_t:s0 <<none>> u:r:e_t:s0 <<none>> "
finish
