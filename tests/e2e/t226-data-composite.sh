#!/bin/sh
# t226: parallel composite uploads and sliced downloads: a 2 GiB sparse
# file goes up in parallel parts composed into one object whose crc32c
# equals crc32c_combine() of the parts (C12), the temporary parts are
# deleted, and it comes back in parallel ranged slices, byte-identical.
# A part that fails permanently (return-400) means no compose and no
# parts left behind.  Thresholds are the defaults (256 MiB up, 64 MiB
# down).

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-cmp
parts_left() {
	req GET "$GCS/storage/v1/b/e2e-cmp/o"
	jf '.items // [] | .[].name' | grep -c 'tpuctl-part' || true
}

# C12 first, on 257 MiB: a part upload fails for good
dd if=/dev/urandom of="$T/mid" bs=1048576 count=257 2>/dev/null
emu_inject --method PUT --path /upload/storage/v1/b/e2e-cmp --count 1 return-400
expect_rc 2 "$TPUCTL" data cp --parallel 4 "$T/mid" gs://e2e-cmp/mid
"$EMULATOR" faults --state-dir "$EMU_DIR" --clear >/dev/null
req GET "$GCS/storage/v1/b/e2e-cmp/o/mid"
want 404 "C12: composed despite a failed part"
[ "$(parts_left)" = 0 ] || fail "C12: parts left"
rm -f "$T/mid"

# 2 GiB sparse: up in parts, down in slices (the slices, the composed
# object and the local crc32c all agree, or the copy fails)
truncate -s 2G "$T/sparse"
printf 'head' | dd of="$T/sparse" conv=notrunc 2>/dev/null
printf 'tail' | dd of="$T/sparse" bs=1 seek=2147483640 conv=notrunc 2>/dev/null
start=$(date +%s)
expect_rc 0 "$TPUCTL" data cp --parallel 4 "$T/sparse" gs://e2e-cmp/2g
up=$(($(date +%s) - start))
req GET "$GCS/storage/v1/b/e2e-cmp/o/2g"
[ "$(jf .size)" = 2147483648 ] || fail "2 GiB size $(jf .size)"
[ "$(jf .componentCount)" -gt 1 ] || fail "not a composite: $(jf .componentCount)"
[ "$(parts_left)" = 0 ] || fail "2 GiB: parts left"
emu_requests | grep -q '/compose' || fail "no compose request"
# the emulator computed the crc32c of the composed bytes itself, and
# tpuctl compared it with crc32c_combine() of its parts; the sliced
# download below checks the crc32c again and cmp the bytes
start=$(date +%s)
expect_rc 0 "$TPUCTL" data cp --parallel 4 gs://e2e-cmp/2g "$T/2g"
down=$(($(date +%s) - start))
cmp -s "$T/sparse" "$T/2g" || fail "2 GiB round trip differs"
echo "2 GiB: upload $up s, download $down s"
exit 0
