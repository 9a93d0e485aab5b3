# fclabel lookup's command line: paths and --batch, -v, -0, modes, exit codes, usage errors.
. "$TOP/tests/lib.sh"
cd "$OUT" || exit 1
printf '/.*\tu:r:default_t:s0\n/bin(/.*)?\tu:r:bin_t:s0\n/bin/sh\t-l\tu:r:shlink_t:s0\n/tmp/.*\t<<none>>\n' >fc
printf '/opt(/.*)?\tu:r:opt_t:s0\n' >fc2

expect_eq "paths" "$("$FCLABEL" lookup -S fc /bin/ls /tmp/x /etc)" \
"u:r:bin_t:s0
<<none>>
u:r:default_t:s0"
expect_eq "-v names the deciding spec" "$("$FCLABEL" lookup -S fc -v -m l /bin/sh /tmp/x)" \
"u:r:shlink_t:s0	fc:3
<<none>>	fc:4"
expect_eq "mode letters and octal agree" "$("$FCLABEL" lookup -S fc -m f /bin/sh)" \
	"$("$FCLABEL" lookup -S fc -m 0100644 /bin/sh)"
expect_eq "mode 0 lets a typed spec match" "$("$FCLABEL" lookup -S fc /bin/sh)" "u:r:shlink_t:s0"
expect_eq "several files, comma-separated" "$("$FCLABEL" lookup -S fc,fc2 -v /opt/x)" "u:r:opt_t:s0	fc2:1"
expect_eq "several -S" "$("$FCLABEL" lookup -S fc -S fc2 /opt/x)" "u:r:opt_t:s0"
expect_eq "no match with one file" "$("$FCLABEL" lookup -S fc2 -v /etc)" "<<none>>	-"

printf '0120777 /bin/sh\n040755 /bin\n0100644 /tmp/a b\n' >q
expect_eq "--batch" "$("$FCLABEL" lookup -S fc --batch <q)" \
"u:r:shlink_t:s0
u:r:bin_t:s0
<<none>>"
printf '0 /bin/x\ny\0f /bin\0' >q0
expect_eq "--batch -0 keeps newlines in paths" "$("$FCLABEL" lookup -S fc --batch -0 -v <q0)" \
"u:r:bin_t:s0	fc:2
u:r:bin_t:s0	fc:2"

# bad records: an <<error>> line in place, a message naming the record, exit 1
printf '0 /bin\nzz /bin\n0 relative\n0 \n0 /bin\n' >qbad
"$FCLABEL" lookup -S fc --batch <qbad >out 2>err
expect_eq "bad records: exit 1" "$?" 1
expect_eq "bad records: one line each" "$(cat out)" \
"u:r:bin_t:s0
<<error>>
<<error>>
<<error>>
u:r:bin_t:s0"
expect_match "bad records: messages" "$(cat err)" "*record 2:*record 3: 'relative': not an absolute path*record 4: '': not an absolute path*"
"$FCLABEL" lookup -S fc relative >out 2>err
expect_eq "relative path: exit 1" "$?" 1
expect_eq "relative path: <<error>>" "$(cat out)" "<<error>>"

# usage errors: exit 2 and the usage text
for args in "" "-S fc" "-S fc --batch /x" "-S fc -m 9 /x" "-S fc --bogus /x" "-m f /x"; do
	# shellcheck disable=SC2086
	"$FCLABEL" lookup $args </dev/null >out 2>err
	expect_eq "usage error [$args]: exit 2" "$?" 2
	expect_match "usage error [$args]: usage shown" "$(cat err)" "*usage: fclabel lookup*"
done
"$FCLABEL" lookup --help >out
expect_eq "--help: exit 0" "$?" 0
expect_match "--help text" "$(cat out)" "usage: fclabel lookup*--batch*"
"$FCLABEL" nosuch >out 2>err
expect_eq "unknown command: exit 2" "$?" 2
expect_match "unknown command: message" "$(cat err)" "*'nosuch' is not a command*"
expect_match "--version" "$("$FCLABEL" --version)" "fclabel *PCRE2 *"
finish
