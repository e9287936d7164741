#!/bin/sh
# t229: RELIABILITY.md 4C row C2: the server rejects the crc32c tpuctl
# sent (400 'Provided CRC32C "..." doesn't match calculated CRC32C
# "..."') because a byte of the upload was corrupted on the way
# (gcs-corrupt-upload-byte-OFF), for a multipart upload and for the final
# chunk of a resumable one: exit 6, one line naming the object and the
# mismatch, not retried, no object left, the source untouched.  Without
# the fault the same uploads succeed (the fault, not the file, fails).
# The emulator's MD5 check (a client sending only md5Hash) answers the
# same way.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-crc
mkfile "$T/small" 100000
mkfile "$T/big" 9000000 # > 8 MiB: resumable, two chunks
cp "$T/small" "$T/small.orig"
cp "$T/big" "$T/big.orig"

# n_uploads WHAT: how many requests of the log match WHAT
n_uploads() {
	emu_requests | grep -c "$1" || true
}
# c2 FILE OBJECT MATCH: the upload of FILE fails with exit 6 and one line,
# with exactly one request matching MATCH, and leaves no object.
c2() {
	n0=$(n_uploads "$3")
	expect_rc 6 "$TPUCTL" data cp "$T/$1" "gs://e2e-crc/$2"
	n1=$(n_uploads "$3")
	[ $((n1 - n0)) = 1 ] ||
	    fail "$2: $((n1 - n0)) requests matching $3, want 1 (retried?)"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "$2: not one line: $(cat "$T/err")"
	assert_grep "gs://e2e-crc/$2" "$T/err"
	assert_grep "Provided CRC32C .* doesn't match calculated CRC32C" "$T/err"
	req GET "$GCS/storage/v1/b/e2e-crc/o/$2"
	want 404 "$2: an object was left"
	cmp -s "$T/$1" "$T/$1.orig" || fail "$2: the source changed"
	[ "$(emu_requests | grep -c '"status":400')" -ge 1 ] ||
	    fail "$2: no 400 in the request log"
}

# multipart (<= 8 MiB): the corrupted byte is in the media part
emu_inject --method POST --path /upload/storage/v1/b/e2e-crc --count 1 gcs-corrupt-upload-byte-5000
c2 small s 'uploadType=multipart'
# the emulator checked the body, not a canned reply: the same upload
# without the fault is stored, with the crc32c of the file
expect_rc 0 "$TPUCTL" data cp "$T/small" gs://e2e-crc/s
sums "$T/small"
req GET "$GCS/storage/v1/b/e2e-crc/o/s"
want 200 "multipart without the fault"
[ "$(jf .crc32c)" = "$CRC" ] || fail "multipart crc32c $(jf .crc32c), want $CRC"

# resumable: the first chunk is corrupted, GCS (and the emulator) reject
# the checksum when the final chunk completes the object
emu_inject --method PUT --path /upload/storage/v1/b/e2e-crc --count 1 gcs-corrupt-upload-byte-1000000
c2 big b '"method":"PUT".*upload_id=.*"status":400'
# the 400 answered the final chunk (bytes ...-8999999/9000000), and it
# was the last chunk sent
emu_requests | grep '"method":"PUT"' | grep 'upload_id=' >"$T/puts"
tail -1 "$T/puts" | grep -q '"status":400' ||
    fail "resumable: chunks after the 400: $(cat "$T/puts")"
tail -1 "$T/puts" | grep -qi '"content-range":"bytes [0-9]*-8999999/9000000"' ||
    fail "resumable: the 400 was not on the final chunk: $(tail -1 "$T/puts")"
expect_rc 0 "$TPUCTL" data cp "$T/big" gs://e2e-crc/b
sums "$T/big"
req GET "$GCS/storage/v1/b/e2e-crc/o/b"
want 200 "resumable without the fault"
[ "$(jf .crc32c)" = "$CRC" ] || fail "resumable crc32c $(jf .crc32c), want $CRC"

# the emulator's MD5 check, for a client that sends only md5Hash (curl)
printf 'hello world' >"$T/h"
sums "$T/h"
python3 - "$T/mp" "$MD5" <<'PY'
import sys
body = (b'--BND\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n' +
        ('{"name": "m", "md5Hash": "%s"}' % sys.argv[2]).encode() +
        b'\r\n--BND\r\nContent-Type: application/octet-stream\r\n\r\n' +
        b'hello world\r\n--BND--\r\n')
open(sys.argv[1], 'wb').write(body)
PY
emu_inject --method POST --path /upload/storage/v1/b/e2e-crc --count 1 gcs-corrupt-upload-byte-0
req POST "$GCS/upload/storage/v1/b/e2e-crc/o?uploadType=multipart" \
    -H 'Content-Type: multipart/related; boundary=BND' --data-binary "@$T/mp"
want 400 "md5Hash with a corrupt byte"
[ "$(jf '.error.errors[0].reason')" = invalid ] || fail "md5: reason $(jf '.error.errors[0].reason')"
jf .error.message | grep -q "^Provided MD5 hash \"$MD5\" doesn't match calculated MD5 hash \"" ||
    fail "md5: message $(jf .error.message)"
req POST "$GCS/upload/storage/v1/b/e2e-crc/o?uploadType=multipart" \
    -H 'Content-Type: multipart/related; boundary=BND' --data-binary "@$T/mp"
want 200 "md5Hash without the fault"
[ "$(jf .md5Hash)" = "$MD5" ] || fail "md5: stored $(jf .md5Hash)"
"$EMULATOR" faults --state-dir "$EMU_DIR" --clear >/dev/null
exit 0
