# The library API: threads, FC_NO_DUPS, fc_explain order, all-or-nothing loads, loads from memory
# (fc_load_bufs), long paths.
"$TOP/tests/fcunit" "$OUT"
