#!/bin/sh
# t162: Multipart uploads: the Node form (CRLF, unquoted boundary, name in the
# query) and the gcsfs form (LF, quoted boundary, name in the JSON part);
# checksums in the metadata are verified (400 with Google's message and
# nothing stored on a mismatch); custom metadata is kept.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-mp
# mp OUT META_JSON DATAFILE BOUNDARY crlf|lf
mp() {
	python3 - "$@" <<'PY'
import sys
out, meta, data, b, eol = sys.argv[1:6]
e = b'\r\n' if eol == 'crlf' else b'\n'
d = open(data, 'rb').read()
b = b'--' + b.encode()
body = (b + e + b'Content-Type: application/json; charset=UTF-8' + e + e +
        meta.encode() + e + b + e + b'Content-Type: application/x-mp' + e +
        e + d + e + b + b'--')
open(out, 'wb').write(body)
PY
}
for size in 0 1 262145; do
	f="$T/f$size"
	mkfile "$f" "$size"
	sums "$f"
	mp "$T/body.mp" '{"metadata":{"k":"v"}}' "$f" "b-$size-x" crlf
	req POST "$GCS/upload/storage/v1/b/e2e-mp/o?uploadType=multipart&name=node-$size" \
	    -H "Content-Type: multipart/related; boundary=b-$size-x" \
	    --data-binary "@$T/body.mp"
	want 200 "multipart $size (crlf)"
	[ "$(jf .size)" = "$size" ] || fail "size $(jf .size)"
	[ "$(jf .crc32c)" = "$CRC" ] || fail "crc32c $(jf .crc32c) want $1"
	[ "$(jf .md5Hash)" = "$MD5" ] || fail "md5 $(jf .md5Hash) want $2"
	[ "$(jf .metadata.k)" = v ] || fail "custom metadata lost"
	[ "$(jf .contentType)" = application/x-mp ] || fail "contentType $(jf .contentType)"
	req GET "$GCS/download/storage/v1/b/e2e-mp/o/node-$size?alt=media"
	want 200 "download $size"
	cmp -s "$T/body" "$f" || fail "multipart $size differs"

	mp "$T/body.mp" "{\"name\": \"gcsfs/$size\", \"contentType\": \"text/x-g\"}" \
	    "$f" "==0==" lf
	req POST "$GCS/upload/storage/v1/b/e2e-mp/o?uploadType=multipart" \
	    -H 'Content-Type: multipart/related; boundary="==0=="' \
	    --data-binary "@$T/body.mp"
	want 200 "multipart $size (lf, quoted)"
	[ "$(jf .name)" = "gcsfs/$size" ] || fail "name $(jf .name)"
	[ "$(jf .crc32c)" = "$CRC" ] || fail "crc32c (lf)"
	[ "$(jf .contentType)" = text/x-g ] || fail "contentType from JSON"
	req GET "$GCS/storage/v1/b/e2e-mp/o/gcsfs%2F$size?alt=media"
	cmp -s "$T/body" "$f" || fail "multipart $size (lf) differs"
done

# Data that contains the boundary text itself.
printf 'x\r\n--zz not the end\r\n--zz' >"$T/tricky"
mp "$T/body.mp" '{}' "$T/tricky" zz crlf
req POST "$GCS/upload/storage/v1/b/e2e-mp/o?uploadType=multipart&name=tricky" \
    -H 'Content-Type: multipart/related; boundary=zz' --data-binary "@$T/body.mp"
want 200 "multipart with the boundary in the data"
req GET "$GCS/b/e2e-mp/o/tricky?alt=media"
cmp -s "$T/body" "$T/tricky" || fail "tricky data differs"

sums "$T/f262145"
mp "$T/body.mp" "{\"crc32c\":\"$CRC\",\"md5Hash\":\"$MD5\"}" "$T/f262145" B crlf
req POST "$GCS/upload/storage/v1/b/e2e-mp/o?uploadType=multipart&name=sums-ok" \
    -H 'Content-Type: multipart/related; boundary=B' --data-binary "@$T/body.mp"
want 200 "multipart with the right checksums"
mp "$T/body.mp" '{"crc32c":"AAAAAA=="}' "$T/f262145" B crlf
req POST "$GCS/upload/storage/v1/b/e2e-mp/o?uploadType=multipart&name=bad-crc" \
    -H 'Content-Type: multipart/related; boundary=B' --data-binary "@$T/body.mp"
want 400 "multipart with a wrong crc32c"
[ "$(jf .error.message)" = "Provided CRC32C \"AAAAAA==\" doesn't match calculated CRC32C \"$CRC\"." ] ||
    fail "message: $(jf .error.message)"
req GET "$GCS/storage/v1/b/e2e-mp/o/bad-crc"
want 404 "nothing stored after a crc mismatch"
mp "$T/body.mp" '{"md5Hash":"1B2M2Y8AsgTpgAmY7PhCfg=="}' "$T/f262145" B crlf
req POST "$GCS/upload/storage/v1/b/e2e-mp/o?uploadType=multipart&name=bad-md5" \
    -H 'Content-Type: multipart/related; boundary=B' --data-binary "@$T/body.mp"
want 400 "multipart with a wrong md5"
jf .error.message | grep -q "Provided MD5 hash" || fail "md5 message"
req GET "$GCS/storage/v1/b/e2e-mp/o/bad-md5"
want 404 "nothing stored after an md5 mismatch"

req POST "$GCS/upload/storage/v1/b/e2e-mp/o?uploadType=multipart&name=x" \
    -H 'Content-Type: multipart/related; boundary=B' --data-binary 'junk'
want 400 "malformed multipart body"
req POST "$GCS/upload/storage/v1/b/e2e-mp/o?uploadType=multipart&name=x" \
    -H 'Content-Type: application/json' --data-binary '{}'
want 400 "multipart without a boundary"
