# Android sparse images: labeled without expanding them, the result equal to labeling the raw
# image; CRC32 chunks verified and written; damaged images refused with the chunk and offset and
# left untouched; -o; interruption leaves the original or the complete result; undo files.
. "$TOP/tests/lib.sh"
cd "$OUT" || exit 1
for t in img2simg simg2img e2undo python3; do
	command -v $t >/dev/null || skip "$t is not installed (android-sdk-libsparse-utils, e2fsprogs)"
done
SP="python3 $TOP/tests/sparse.py"
FC=$TOP/fixtures/demo/file_contexts
mkdir tree
sh "$TOP/tests/mktree.sh" "$TOP/fixtures/demo/tree" tree
# enough files that a run takes a while (for the interruption trials)
mkdir -p tree/data
i=0
while [ $i -lt 3000 ]; do : >"tree/data/f$i"; i=$((i + 1)); done
for isz in 128 256; do
	rm -f raw.img
	mke2fs -q -t ext4 -I $isz -N 4000 -d tree raw.img 32M >/dev/null 2>&1 || { bad "mke2fs"; continue; }
	cp raw.img want.img
	# (as a copy, as a sparse image is written: in place the labels pass through the journal,
	# whose blocks then differ)
	"$FCLABEL" label want.img -S "$FC" -a /system --atomic >/dev/null 2>&1
	expect_eq "$isz: raw labeling works" "$?" 0

	# img2simg's RAW and FILL chunks
	img2simg raw.img s.img
	"$FCLABEL" label s.img -S "$FC" -a /system >out 2>err
	expect_eq "$isz: img2simg image labeled" "$?" 0
	simg2img s.img s.raw
	cmp -s s.raw want.img && ok "$isz: simg2img(result) == raw result, byte for byte" ||
		bad "$isz: simg2img(result) differs from the raw result"
	expect_eq "$isz: e2fsck -fn clean" "$(e2fsck -fn s.raw >/dev/null 2>&1; echo $?)" 0
	expect_match "$isz: chunks" "$($SP chunks s.img | tr '\n' ' ')" "*RAW*"

	# DONT_CARE and CRC32 chunks
	$SP write raw.img c.img --crc
	cp c.img c.orig
	"$FCLABEL" label c.img -S "$FC" -a /system -o c2.img >out 2>err
	expect_eq "$isz: -o: labeled" "$?" 0
	cmp -s c.img c.orig && ok "$isz: -o leaves the input as it was" || bad "$isz: -o changed the input"
	simg2img c2.img c2.raw
	cmp -s c2.raw want.img && ok "$isz: CRC image: result == raw result" || bad "$isz: CRC image: result differs"
	ch=$($SP chunks c2.img)
	expect_match "$isz: the result keeps DONT_CARE chunks" "$ch" "*DONT_CARE*"
	expect_match "$isz: the result has a CRC32 chunk" "$ch" "*CRC32 1*"
	"$FCLABEL" check c2.img -S "$FC" -a /system >/dev/null 2>&1
	expect_eq "$isz: our CRC verifies on read (check passes)" "$?" 0
	[ "$(stat -c %s c2.img)" -lt 4000000 ] && ok "$isz: the result stays sparse" || bad "$isz: the result grew: $(stat -c %s c2.img)"
	"$FCLABEL" label c2.img -S "$FC" -a /system >out 2>&1
	expect_match "$isz: a second run changes nothing" "$(cat out)" "*changed 0,*"
done

# damaged images: refused, naming chunk and offset, untouched
for kind in truncate overrun crc type blocksize; do
	cp c.orig d.img
	$SP damage d.img $kind
	cp d.img d.before
	"$FCLABEL" label d.img -S "$FC" >out 2>err
	expect_eq "damaged ($kind): exit 2" "$?" 2
	case $kind in
	truncate) want="*chunk * at offset *truncated*" ;;
	overrun) want="*chunk * at offset *overrun the declared*" ;;
	crc) want="*CRC32 chunk * at offset *recorded*" ;;
	type) want="*chunk 0 at offset 28: unknown chunk type 0xcac9*" ;;
	blocksize) want="*sparse block size 4100 is not valid*" ;;
	esac
	expect_match "damaged ($kind): message" "$(cat err)" "$want"
	cmp -s d.img d.before && ok "damaged ($kind): untouched" || bad "damaged ($kind): changed"
	[ -z "$(ls -A . | grep '^\.fclabel-')" ] && ok "damaged ($kind): no temporary files left" ||
		bad "damaged ($kind): temporary files left: $(ls -A | grep '^\.fclabel-')"
done

# interruption: SIGKILL at random points; the image is the original or the complete result,
# and (nearly) never a temporary file left behind. Twice: an image with CRC32 chunks (rewritten
# whole at the end) and one without (copied in the background from the first write, patched).
kill_trials() { # NAME ORIGINAL EXPECTED_FULL_IMAGE
	expect=$(md5sum <"$3")
	orig=$(md5sum <"$2")
	trials=0 intact=0 done_=0 left=0 i=0
	while [ $i -lt 24 ]; do
		cp "$2" k.img
		# (no leak check under LeakSanitizer for a run killed anyway: a kill that lands in the
		# check makes it report that it could not read the killed thread)
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
			"$FCLABEL" label k.img -S "$FC" -a /system >/dev/null 2>&1 &
		pid=$!
		sleep "0.0$(( (i * 37) % 10 ))$(( (i * 11) % 10 ))"
		kill -9 $pid 2>/dev/null
		wait $pid 2>/dev/null
		trials=$((trials + 1))
		now=$(md5sum <k.img)
		if [ "$now" = "$orig" ]; then
			intact=$((intact + 1))
		elif simg2img k.img k.full 2>/dev/null && [ "$(md5sum <k.full)" = "$expect" ]; then
			done_=$((done_ + 1))
		else
			bad "$1: interruption trial $i: the image is neither the original nor the result"
		fi
		left=$((left + $(ls -A . | grep -c '^\.fclabel-')))
		rm -f .fclabel-* 2>/dev/null
		i=$((i + 1))
	done
	expect_eq "$1: interruption: $trials trials ($intact left intact, $done_ complete)" \
		"$((intact + done_))" "$trials"
	# the unnamed result file gets a name only just before the rename
	[ "$left" -le 1 ] && ok "$1: temporary files left by $trials killed runs: $left" ||
		bad "$1: temporary files left by $trials killed runs: $left"
}
simg2img c2.img c2.full
kill_trials "crc" c.orig c2.full
img2simg raw.img n.orig
kill_trials "no crc" n.orig want.img

# --no-sync: the same result
cp n.orig ns.img
"$FCLABEL" label ns.img -S "$FC" -a /system --no-sync >/dev/null 2>&1
expect_eq "--no-sync: labeled" "$?" 0
simg2img ns.img ns.full && cmp -s ns.full want.img && ok "--no-sync (sparse): same result" ||
	bad "--no-sync (sparse): the result differs"
cp raw.img nr.img
"$FCLABEL" label nr.img -S "$FC" -a /system --no-sync --atomic >/dev/null 2>&1
cmp -s nr.img want.img && ok "--no-sync (raw): same result" || bad "--no-sync (raw): differs"

# memory grows with the blocks that change, not with the image: a 4 GiB declared image
rm -f big.raw
truncate -s 4G big.raw
if mke2fs -q -t ext4 -N 8000 -d tree big.raw >/dev/null 2>&1 && $SP holes big.raw big.simg; then
	rm -f big.raw
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f '%M' -o big.kb "$FCLABEL" label big.simg -S "$FC" -a /system >out 2>err
		expect_eq "4 GiB declared: labeled" "$?" 0
		kb=$(tail -n 1 big.kb)
		[ "$kb" -lt 65536 ] && ok "4 GiB declared: peak memory $((kb / 1024)) MiB (< 64 MiB)" ||
			bad "4 GiB declared: peak memory $((kb / 1024)) MiB"
	else
		"$FCLABEL" label big.simg -S "$FC" -a /system >out 2>err
		expect_eq "4 GiB declared: labeled (no /usr/bin/time to measure memory)" "$?" 0
	fi
	[ "$(stat -c %s big.simg)" -lt 67108864 ] && ok "4 GiB declared: the result stays small" ||
		bad "4 GiB declared: the result grew to $(stat -c %s big.simg) bytes"
	rm -f big.simg
else
	bad "could not build the 4 GiB declared image"
fi

# undo files: e2undo gives the original back, byte for byte
cp raw.img u.img
"$FCLABEL" label u.img -S "$FC" -a /system -z u.undo >/dev/null 2>&1
expect_eq "undo: labeled with -z" "$?" 0
cmp -s u.img raw.img && bad "undo: labeling changed nothing?" || ok "undo: labeling changed the image"
e2undo u.undo u.img >/dev/null 2>&1
expect_eq "undo: e2undo succeeds" "$?" 0
cmp -s u.img raw.img && ok "undo: e2undo restores the original byte for byte" || bad "undo: not restored"
"$FCLABEL" label c.orig -S "$FC" -z x.undo >/dev/null 2>err
expect_eq "undo on a sparse image: refused" "$?" 2
# -o on a raw image: the labeled copy goes to OUT, the input stays as it was
cp raw.img o.img
"$FCLABEL" label o.img -S "$FC" -a /system -o o.out >/dev/null 2>err
expect_eq "-o on a raw image: labeled" "$?" 0
cmp -s o.img raw.img && ok "-o on a raw image: the input is untouched" || bad "-o on a raw image: the input changed"
cp raw.img o2.img
"$FCLABEL" label o2.img -S "$FC" -a /system --atomic >/dev/null 2>&1
cmp -s o.out o2.img && ok "-o on a raw image: OUT equals the image labeled as a copy" ||
	bad "-o on a raw image: OUT differs from the image labeled as a copy"
"$FCLABEL" label o.img -S "$FC" -o o.out --in-place >/dev/null 2>err
expect_eq "-o with --in-place: refused" "$?" 2
"$FCLABEL" label c.orig -S "$FC" --in-place >/dev/null 2>err
expect_eq "--in-place on a sparse image: refused" "$?" 2
finish
