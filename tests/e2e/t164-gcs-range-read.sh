#!/bin/sh
# t164: Ranged and conditional reads, as in the recorded exchange: 206 with
# Content-Range for bytes=1-9, 1-, 0-0 and a suffix; 416 past the end;
# generation pinning; 304 for ifGenerationNotMatch; 412 for a failed match.

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

mkbucket e2e-range
printf '{"amount": 100, "name": "Alice"}\n{"amount": 200, "name": "Bob"}\n{"amount": 300, "name": "Charlie"}\n{"amount": 400, "name": "Dennis"}\n' >"$T/acc"
[ "$(wc -c <"$T/acc")" -eq 133 ] || fail "fixture is not 133 bytes"
req POST "$GCS/upload/storage/v1/b/e2e-range/o?uploadType=media&name=test%2Faccounts.1.json" \
    --data-binary "@$T/acc"
want 200 upload
[ "$(jf .md5Hash)" = xK7pmJz/Oj5HGIyfQpYTig== ] || fail "md5 of the sample"
[ "$(jf .crc32c)" = 6wJAgQ== ] || fail "crc32c of the sample"
gen=$(jf .generation)
U="$GCS/download/storage/v1/b/e2e-range/o/test%2Faccounts.1.json?alt=media"

# rng SPEC WANT_CONTENT_RANGE OFF LEN
rng() {
	req GET "$U" -H "Range: $1"
	want 206 "Range $1"
	[ "$(hdr content-range)" = "$2" ] || fail "$1: Content-Range '$(hdr content-range)'"
	dd if="$T/acc" of="$T/want" bs=1 skip="$3" count="$4" 2>/dev/null
	cmp -s "$T/body" "$T/want" || fail "$1: wrong bytes"
}
rng bytes=1-9 "bytes 1-9/133" 1 9
[ "$(cat "$T/body")" = '"amount":' ] || fail "bytes=1-9 content"
rng bytes=1- "bytes 1-132/133" 1 132
rng bytes=0-0 "bytes 0-0/133" 0 1
rng bytes=-10 "bytes 123-132/133" 123 10
rng bytes=100-999 "bytes 100-132/133" 100 33
req GET "$U" -H 'Range: bytes=133-'
want 416 "range past the end"
[ "$(hdr content-range)" = "bytes */133" ] || fail "416 Content-Range"
req GET "$U" -H 'Range: bytes=9-1'
want 200 "an invalid range is ignored"
cmp -s "$T/body" "$T/acc" || fail "ignored range: body"

req GET "$U&generation=$gen"
want 200 "pinned to the live generation"
req GET "$U&generation=1"
want 404 "pinned to another generation"
req GET "$U&ifGenerationNotMatch=$gen"
want 304 "ifGenerationNotMatch on the live generation"
req GET "$U&ifGenerationNotMatch=1"
want 200 "ifGenerationNotMatch on another generation"
req GET "$U&ifGenerationMatch=1"
want 412 "ifGenerationMatch mismatch"
[ "$(jf '.error.errors[0].reason')" = conditionNotMet ] || fail "412 reason"
req GET "$U&ifMetagenerationMatch=1" -H 'Range: bytes=0-3'
want 206 "ifMetagenerationMatch and a range"
req GET "$U&generation=abc"
want 400 "a non-numeric generation"
jf .error.message | grep -q abc || fail "400 does not name abc"
