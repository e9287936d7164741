#!/bin/sh
# t169: GCS fault hooks: "gcs-rewrite-crc" makes the emulator store a wrong
# crc32c (for the clients' integrity checks) once; "gcs-drop-after-NK"
# keeps only N KiB of a resumable chunk and answers 308 with that Range,
# and a client that rewinds still ends with the right object.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-flt
mkfile "$T/f" 700000
sums "$T/f"
emu_inject --path /upload/storage/v1/b/e2e-flt --count 1 gcs-rewrite-crc
req POST "$GCS/upload/storage/v1/b/e2e-flt/o?uploadType=media&name=lie" \
    --data-binary "@$T/f"
want 200 "upload with gcs-rewrite-crc"
[ "$(jf .crc32c)" != "$CRC" ] || fail "the stored crc32c was not rewritten"
[ "$(jf .md5Hash)" = "$MD5" ] || fail "md5 changed too"
req GET "$GCS/download/storage/v1/b/e2e-flt/o/lie?alt=media"
cmp -s "$T/body" "$T/f" || fail "data changed"
hdr x-goog-hash | grep -q "crc32c=$CRC" && fail "x-goog-hash has the true crc32c"
req POST "$GCS/upload/storage/v1/b/e2e-flt/o?uploadType=media&name=true" \
    --data-binary "@$T/f"
want 200 "upload after the fault was consumed"
[ "$(jf .crc32c)" = "$CRC" ] || fail "fault applied twice"

req POST "$GCS/upload/storage/v1/b/e2e-flt/o?uploadType=resumable&name=drop" \
    -H 'Content-Type: application/json' --data-binary '{}'
want 200 "start session"
LOC=$(hdr location)
emu_inject --path /upload/storage/v1/b/e2e-flt --count 1 gcs-drop-after-100K
dd if="$T/f" of="$T/c" bs=262144 count=2 2>/dev/null
req PUT "$LOC" -H 'Content-Range: bytes 0-524287/*' --data-binary "@$T/c"
want 308 "chunk with gcs-drop-after-100K"
[ "$(hdr range)" = bytes=0-102399 ] || fail "Range after the drop '$(hdr range)'"
dd if="$T/f" of="$T/c" bs=1 skip=102400 count=421888 2>/dev/null
req PUT "$LOC" -H 'Content-Range: bytes 102400-524287/*' --data-binary "@$T/c"
want 308 "rewound chunk"
[ "$(hdr range)" = bytes=0-524287 ] || fail "Range after the rewind '$(hdr range)'"
dd if="$T/f" of="$T/c" bs=262144 skip=2 2>/dev/null
req PUT "$LOC" -H 'Content-Range: bytes 524288-699999/700000' --data-binary "@$T/c"
want 200 "final chunk"
[ "$(jf .crc32c)" = "$CRC" ] || fail "crc32c after the rewind"
req GET "$GCS/download/storage/v1/b/e2e-flt/o/drop?alt=media"
cmp -s "$T/body" "$T/f" || fail "data after the rewind"

# The connection breaks 300 KiB into a 512 KiB chunk (return-503-after-300K):
# whole 256 KiB units of what arrived are kept, and the client resumes
# from the Range of a status query (RELIABILITY C6).
req POST "$GCS/upload/storage/v1/b/e2e-flt/o?uploadType=resumable&name=cut" \
    -H 'Content-Type: application/json' --data-binary '{}'
want 200 "start session"
LOC=$(hdr location)
emu_inject --method PUT --path /upload/storage/v1/b/e2e-flt --count 1 \
    return-503-after-300K
dd if="$T/f" of="$T/c" bs=262144 count=2 2>/dev/null
req PUT "$LOC" -H 'Content-Range: bytes 0-524287/*' --data-binary "@$T/c"
want 503 "chunk cut after 300 KiB"
req PUT "$LOC" -H 'Content-Range: bytes */700000' -H 'Content-Length: 0'
want 308 "status after the cut"
[ "$(hdr range)" = bytes=0-262143 ] || fail "Range after the cut '$(hdr range)'"
dd if="$T/f" of="$T/c" bs=262144 skip=1 2>/dev/null
req PUT "$LOC" -H 'Content-Range: bytes 262144-699999/700000' --data-binary "@$T/c"
want 200 "resume after the cut"
[ "$(jf .crc32c)" = "$CRC" ] || fail "crc32c after the cut"
