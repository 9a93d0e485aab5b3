# The library API: threads, FC_NO_DUPS, fc_explain order, all-or-nothing loads, long paths.
"$TOP/tests/fcunit" "$OUT"
