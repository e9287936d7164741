#!/bin/sh
# Helpers of the Cloud Storage tests (t160-t189): curl calls with the
# emulator's token, JSON fields, headers, independent crc32c/md5.
# Sourced after lib.sh and emu_start (it reads the emulator's token).
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
