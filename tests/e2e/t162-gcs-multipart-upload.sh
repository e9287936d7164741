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
TOKEN=$(cat "$EMU_DIR/access-token")
GCS=${STORAGE_EMULATOR_HOST:?the emulator env has no STORAGE_EMULATOR_HOST}
GCS=${GCS%/}
PROJECT=${CLOUDSDK_CORE_PROJECT:-e2e-project}

# req METHOD URL [curl args...]: body in $T/body, headers in $T/hdr,
# status in $ST.
req() {
	m=$1
	u=$2
	shift 2
	ST=$(curl -sS -X "$m" -o "$T/body" -D "$T/hdr" -w '%{http_code}' \
	    -H "Authorization: Bearer $TOKEN" "$@" "$u") ||
	    fail "curl $m $u failed"
}
# want STATUS WHAT: the last req answered STATUS.
want() {
	[ "$ST" = "$1" ] || {
		cat "$T/body" >&2
		fail "$2: HTTP $ST, want $1"
	}
}
# jf FILTER: a jq filter over the last body.
jf() {
	jq -r "$1" "$T/body"
}
# hdr NAME: a response header of the last req ("" when absent).
hdr() {
	tr -d '\r' <"$T/hdr" | sed -n "s/^$1: //Ip" | tail -1
}
# uri S: percent-encode S as one path segment.
uri() {
	jq -rn --arg s "$1" '$s|@uri'
}
# hashes FILE: "CRC32C_B64 MD5_B64", computed independently in Python.
hashes() {
	python3 - "$1" <<'PY'
import base64, hashlib, struct, sys
t = [[0] * 256 for _ in range(8)]
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    t[0][i] = c
for k in range(1, 8):
    for i in range(256):
        t[k][i] = t[0][t[k - 1][i] & 0xFF] ^ (t[k - 1][i] >> 8)
t0, t1, t2, t3, t4, t5, t6, t7 = t
d = open(sys.argv[1], 'rb').read()
n8 = len(d) // 8 * 8
c = 0xFFFFFFFF
for (w,) in struct.iter_unpack('<Q', d[:n8]):
    w ^= c
    c = (t7[w & 0xFF] ^ t6[(w >> 8) & 0xFF] ^ t5[(w >> 16) & 0xFF] ^
         t4[(w >> 24) & 0xFF] ^ t3[(w >> 32) & 0xFF] ^ t2[(w >> 40) & 0xFF] ^
         t1[(w >> 48) & 0xFF] ^ t0[w >> 56])
for b in d[n8:]:
    c = t0[(c ^ b) & 0xFF] ^ (c >> 8)
c ^= 0xFFFFFFFF
print(base64.b64encode(c.to_bytes(4, 'big')).decode(),
      base64.b64encode(hashlib.md5(d).digest()).decode())
PY
}
# mkfile PATH SIZE: SIZE pseudo-random bytes (deterministic).
mkfile() {
	python3 -c 'import random,sys; random.seed(int(sys.argv[1])); sys.stdout.buffer.write(random.randbytes(int(sys.argv[1])))' "$2" >"$1"
}
# mkbucket NAME: create a bucket in $PROJECT.
mkbucket() {
	req POST "$GCS/storage/v1/b?project=$PROJECT" \
	    -H 'Content-Type: application/json' --data-binary "{\"name\":\"$1\"}"
	want 200 "create bucket $1"
}
# sums FILE: $CRC and $MD5 of FILE.
# shellcheck disable=SC2034
sums() {
	h=$(hashes "$1")
	CRC=${h% *}
	MD5=${h#* }
}

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
