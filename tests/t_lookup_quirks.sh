# The libselinux 3.4 quirks that docs/file_contexts-semantics.md lists, each pinned down by its
# documented answer AND by the oracle (libselinux itself) on the same query.
. "$TOP/tests/lib.sh"
need_oracle
cd "$OUT" || exit 1
cat >fc <<'FC'
/.*		u:r:default_t:s0
/x/c/?		u:r:xc_t:s0
/e\-dge/h	u:r:edge_t:s0
/x/f\d		u:r:fdigit_t:s0
/x/f.*		u:r:fany_t:s0
/a/b|/c/d	u:r:alt_t:s0
/usr/lib(/.*)?	u:r:lib_t:s0
/usr		u:r:usr_t:s0
/p/lain		u:r:plain_t:s0
/p/lai.		u:r:regex_t:s0
/t/win	--	u:r:typed_t:s0
/t/win		u:r:untyped_t:s0
/n/one(/.*)?	u:r:n_t:s0
/n/one/x	<<none>>
/(vendor|system/vendor)/bin(/.*)?	u:r:vendor_exec_t:s0
/nl		u:r:nl_t:s0
FC
# query  mode  documented answer
while IFS='|' read -r path mode want why; do
	[ -n "$path" ] || continue
	printf '%s %s\0' "$mode" "$path" >q
	got=$("$FCLABEL" lookup -S fc --batch -0 <q)
	ref=$("$ORACLE" -0 fc <q)
	expect_eq "$why: $path ($mode) documented" "$got" "$want"
	expect_eq "$why: $path ($mode) libselinux" "$got" "$ref"
done <<'Q'
/x/c|0|u:r:xc_t:s0|/x/c/? matches /x/c in 3.4 (3.8 misses it)
/x/c/|0|u:r:xc_t:s0|the trailing slash is dropped first
/e-dge/h|0|u:r:default_t:s0|a backslash in the stem makes a spec unreachable
/x/f1|0|u:r:fdigit_t:s0|\d keeps a spec plain, and plain specs are tried first
/c/d|0|u:r:default_t:s0|top-level alternation: stem /a never equals /c
/a/b/anything|0|u:r:alt_t:s0|^a|b$: the first branch is not anchored at the end
/usr|040000|u:r:usr_t:s0|/usr/lib(/.*)? is never tried for /usr
/usr/lib|040000|u:r:lib_t:s0|the same spec for /usr/lib
/p/lain|0|u:r:plain_t:s0|plain wins over a later regex
/t/win|0100000|u:r:untyped_t:s0|the later untyped twin wins
/t/win|040000|u:r:untyped_t:s0|untyped twin for a directory
/n/one/x|0100000|<<none>>|<<none>> decides: no label
/n/one/y|0100000|u:r:n_t:s0|a subtree spec
/vendor/bin/sh|0100000|u:r:vendor_exec_t:s0|no literal stem: still found
/system/vendor/bin/sh|0100000|u:r:vendor_exec_t:s0|no literal stem, the other branch
//usr///lib//x|0|u:r:lib_t:s0|runs of slashes become one
/|040000|u:r:default_t:s0|the root
Q
# '$' matches before a final newline: "/nl\n" is /nl
printf '0 /nl\n\0' >q
expect_eq "a final newline is matched by \$" "$("$FCLABEL" lookup -S fc --batch -0 <q)" "u:r:nl_t:s0"
expect_eq "a final newline: libselinux" "$("$ORACLE" -0 fc <q)" "u:r:nl_t:s0"

# Regressions: quantifiers and numeric escapes are not literal text; any mode_t is accepted
cat >fc2 <<'FC'
/.*		u:r:default_t:s0
/a/b{2}		u:r:b2_t:s0
/a/x{1,9}	u:r:x_t:s0
/b/\d{1,3}	u:r:d3_t:s0
/a/\x61b	u:r:hex_t:s0
/c/\141		u:r:oct_t:s0
/lib64/\x61x	u:r:plainhex_t:s0
/lib64(/[^/]+)*	u:r:lib_t:s0
/a/br{ace}	u:r:brace_t:s0
FC
printf '0 /a/bb\0000 /a/x\0000 /b/1\0000 /a/ab\0000 /c/a\0000 /lib64/ax\0000 /a/br{ace}\0000300644 /a/bb\0' >q2
expect_eq "regressions: {n,m}, \\x61, \\141, 0300644" "$("$FCLABEL" lookup -S fc2 --batch -0 <q2 | tr '\n' ' ')" \
	"u:r:b2_t:s0 u:r:x_t:s0 u:r:d3_t:s0 u:r:hex_t:s0 u:r:oct_t:s0 u:r:plainhex_t:s0 u:r:brace_t:s0 u:r:b2_t:s0 "
expect_eq "regressions: libselinux agrees" "$("$FCLABEL" lookup -S fc2 --batch -0 <q2)" "$("$ORACLE" -0 fc2 <q2)"
finish
