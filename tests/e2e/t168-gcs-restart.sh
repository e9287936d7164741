#!/bin/sh
# t168: State survives an emulator restart: buckets, objects (data, checksums,
# generation) and a half-done resumable session, which then completes.

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

mkbucket e2e-keep
mkfile "$T/obj" 300000
sums "$T/obj"
req POST "$GCS/upload/storage/v1/b/e2e-keep/o?uploadType=media&name=k%2Fobj" \
    --data-binary "@$T/obj"
want 200 upload
gen=$(jf .generation)
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
