#!/bin/sh
# t243: a sliced download (--parallel 4, an object of 64 MiB and more)
# checks the crc32c of the whole object combined from its slices (issue
# 19, surviving mutation "skipping the crc32c check for sliced
# downloads"): one byte flipped by the emulator in one slice's reply
# (corrupt-byte-OFF) is exit 6 naming the mismatch, the destination is
# untouched and no temp file is left; without the fault the same
# download is byte-identical.  (Caught with the check skipped for n > 1.)

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-sl
mkfile "$T/big" 70000000
expect_rc 0 "$TPUCTL" data cp "$T/big" gs://e2e-sl/big
printf 'precious\n' >"$T/dest"

slices() {
	emu_requests | jq -r 'select(.method == "GET" and
	    .path == "/storage/v1/b/e2e-sl/o/big" and
	    ((.query // "") | test("alt=media")) and
	    (((.headers.Range // .headers.range) // "") != "")) | .path' |
	    grep -c . || true
}

# the fault flips a byte of the first slice reply it matches, near its
# start and 1 MB in
for off in 5 1000000; do
	s0=$(slices)
	emu_inject --method GET --path '/storage/v1/b/e2e-sl/o/big?alt=media' \
	    --count 1 "corrupt-byte-$off"
	expect_rc 6 "$TPUCTL" data cp --parallel 4 gs://e2e-sl/big "$T/dest"
	assert_grep 'crc32c mismatch' "$T/err"
	[ "$(slices)" -ge $((s0 + 2)) ] ||
	    fail "offset $off: not a sliced download ($(($(slices) - s0)) ranged GETs)"
	[ "$(cat "$T/dest")" = precious ] || fail "offset $off: the destination changed"
	[ ! -e "$T/dest.tpuctl-tmp" ] || fail "offset $off: temp file left"
	"$EMULATOR" faults --state-dir "$EMU_DIR" --clear >/dev/null
done

expect_rc 0 "$TPUCTL" data cp --parallel 4 gs://e2e-sl/big "$T/dest"
cmp -s "$T/big" "$T/dest" || fail "the sliced download differs"
exit 0
