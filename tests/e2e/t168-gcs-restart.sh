#!/bin/sh
# t168: State survives an emulator restart: buckets, objects (data, checksums,
# generation), a composite (held by reference to its components' bytes)
# and a half-done resumable session, which then completes.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-keep
mkfile "$T/obj" 300000
sums "$T/obj"
req POST "$GCS/upload/storage/v1/b/e2e-keep/o?uploadType=media&name=k%2Fobj" \
    --data-binary "@$T/obj"
want 200 upload
gen=$(jf .generation)
req POST "$GCS/storage/v1/b/e2e-keep/o/comp/compose" -H 'Content-Type: application/json' \
    --data-binary '{"sourceObjects":[{"name":"k/obj"},{"name":"k/obj"}]}'
want 200 compose
cat "$T/obj" "$T/obj" >"$T/comp"
req POST "$GCS/upload/storage/v1/b/e2e-keep/o?uploadType=resumable&name=later" \
    -H 'Content-Type: application/json' --data-binary '{"metadata":{"m":"1"}}'
want 200 "start session"
id=$(hdr location | sed 's/.*upload_id=\([0-9a-f]*\).*/\1/')
mkfile "$T/later" 600000
dd if="$T/later" of="$T/c1" bs=262144 count=1 2>/dev/null
req PUT "$(hdr location)" -H 'Content-Range: bytes 0-262143/*' --data-binary "@$T/c1"
want 308 "first chunk"

kill -TERM "$EMU_PID"
wait "$EMU_PID" 2>/dev/null || true
EMU_PID=
rm -f "$EMU_DIR/env"
# shellcheck disable=SC2119
emu_start
TOKEN=$(cat "$EMU_DIR/access-token")
GCS=${STORAGE_EMULATOR_HOST%/}

req GET "$GCS/storage/v1/b/e2e-keep"
want 200 "bucket after restart"
req GET "$GCS/storage/v1/b/e2e-keep/o/k%2Fobj"
want 200 "object after restart"
[ "$(jf .generation)" = "$gen" ] || fail "generation changed"
[ "$(jf .crc32c)" = "$CRC" ] || fail "crc32c changed"
jf .mediaLink | grep -qF "$GCS/download/" || fail "mediaLink not on the new address"
req GET "$GCS/download/storage/v1/b/e2e-keep/o/k%2Fobj?alt=media"
cmp -s "$T/body" "$T/obj" || fail "data changed"
[ "$(hdr x-goog-hash)" = "crc32c=$CRC,md5=$MD5" ] || fail "x-goog-hash after restart"
req GET "$GCS/download/storage/v1/b/e2e-keep/o/comp?alt=media" -H 'Range: bytes=299990-300009'
want 206 "composite range after restart"
dd if="$T/comp" of="$T/want" bs=1 skip=299990 count=20 2>/dev/null
cmp -s "$T/body" "$T/want" || fail "composite range after restart"
req GET "$GCS/download/storage/v1/b/e2e-keep/o/comp?alt=media"
cmp -s "$T/body" "$T/comp" || fail "composite after restart"

LOC="$GCS/upload/storage/v1/b/e2e-keep/o?uploadType=resumable&upload_id=$id"
req PUT "$LOC" -H 'Content-Range: bytes */*' -H 'Content-Length: 0'
want 308 "session status after restart"
[ "$(hdr range)" = bytes=0-262143 ] || fail "Range after restart '$(hdr range)'"
dd if="$T/later" of="$T/c2" bs=262144 skip=1 2>/dev/null
req PUT "$LOC" -H 'Content-Range: bytes 262144-599999/600000' --data-binary "@$T/c2"
want 200 "finish the session after restart"
sums "$T/later"
[ "$(jf .crc32c)" = "$CRC" ] || fail "resumed crc32c"
[ "$(jf .metadata.m)" = 1 ] || fail "session metadata lost"
# New generations stay above the old ones.
req POST "$GCS/upload/storage/v1/b/e2e-keep/o?uploadType=media&name=k%2Fobj" \
    --data-binary x
[ "$(jf .generation)" -gt "$gen" ] || fail "generation went backwards"
