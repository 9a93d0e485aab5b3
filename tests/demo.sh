#!/bin/sh
# make demo: look up a bundled set of paths in a bundled file_contexts, showing the deciding line.
top=$(cd "$(dirname "$0")/.." && pwd)
fc=$top/fixtures/demo/file_contexts
echo "fclabel demo: which SELinux context does $fc give these files?"
echo
printf '%-4s %-58s %-36s %s\n' TYPE PATH CONTEXT "DECIDED BY"
"$top/fclabel" lookup -S "$fc" --batch -v <"$top/fixtures/demo/paths" >"${TMPDIR:-/tmp}/fclabel-demo.$$" || exit 1
paste -d '\t' "$top/fixtures/demo/paths" "${TMPDIR:-/tmp}/fclabel-demo.$$" |
	while IFS="$(printf '\t')" read -r rec ctx where; do
		printf '%-4s %-58s %-36s %s\n' "${rec%% *}" "${rec#* }" "$ctx" "${where#"$top/"}"
	done
rm -f "${TMPDIR:-/tmp}/fclabel-demo.$$"
echo
echo "<<none>> means: leave the file unlabeled. Try: ./fclabel lookup -S $fc -v -m f /system/bin/init"
