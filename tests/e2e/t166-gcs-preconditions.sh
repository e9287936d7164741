#!/bin/sh
# t166: Preconditions on writes, metadata updates and deletes: ifGenerationMatch
# (0 = must not exist), ifGenerationNotMatch, ifMetagenerationMatch and
# ifMetagenerationNotMatch answer 412 conditionNotMet and change nothing;
# PATCH merges metadata and bumps the metageneration; PUT replaces.

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

mkbucket e2e-pre
U="$GCS/upload/storage/v1/b/e2e-pre/o?uploadType=media&name=x"
O="$GCS/storage/v1/b/e2e-pre/o/x"
req POST "$U&ifGenerationMatch=0" --data-binary one
want 200 "create with ifGenerationMatch=0"
g1=$(jf .generation)
req POST "$U&ifGenerationMatch=0" --data-binary two
want 412 "no-clobber over an existing object"
[ "$(jf '.error.errors[0].reason')" = conditionNotMet ] || fail "412 reason"
[ "$(jf .error.message)" = "At least one of the pre-conditions you specified did not hold." ] ||
    fail "412 message"
req GET "$O?alt=media"
[ "$(cat "$T/body")" = one ] || fail "object changed by a failed write"
req POST "$U&ifGenerationMatch=$g1" --data-binary two
want 200 "overwrite with the right generation"
g2=$(jf .generation)
[ "$g2" -gt "$g1" ] || fail "generation did not grow: $g1 -> $g2"
req POST "$U&ifGenerationMatch=$g1" --data-binary three
want 412 "overwrite with a stale generation"
req POST "$U&ifGenerationNotMatch=$g2" --data-binary three
want 412 "ifGenerationNotMatch on the live generation"
req POST "$U&ifMetagenerationMatch=2" --data-binary three
want 412 "ifMetagenerationMatch mismatch"
req POST "$U&ifGenerationMatch=abc" --data-binary three
want 400 "non-numeric precondition"
jf .error.message | grep -q ifGenerationMatch || fail "400 does not name the parameter"
req GET "$O?alt=media"
[ "$(cat "$T/body")" = two ] || fail "object changed by failed writes"

req PATCH "$O" -H 'Content-Type: application/json' \
    --data-binary '{"metadata":{"a":"1","b":"2"},"contentType":"text/x-p"}'
want 200 patch
[ "$(jf .metageneration)" = 2 ] || fail "metageneration after patch $(jf .metageneration)"
[ "$(jf .generation)" = "$g2" ] || fail "patch changed the generation"
[ "$(jf .metadata.a)" = 1 ] || fail "patch metadata"
[ "$(jf .contentType)" = text/x-p ] || fail "patch contentType"
req PATCH "$O?ifMetagenerationMatch=1" -H 'Content-Type: application/json' \
    --data-binary '{"metadata":{"c":"3"}}'
want 412 "patch with a stale metageneration"
req PATCH "$O?ifMetagenerationMatch=2" -H 'Content-Type: application/json' \
    --data-binary '{"metadata":{"a":null,"c":"3"}}'
want 200 "patch merge"
[ "$(jf '.metadata|keys|join(",")')" = b,c ] || fail "merge: $(jf '.metadata|keys|join(",")')"
req PUT "$O" -H 'Content-Type: application/json' --data-binary '{"metadata":{"z":"9"}}'
want 200 "update (PUT) replaces"
[ "$(jf '.metadata|keys|join(",")')" = z ] || fail "update: $(jf '.metadata|keys|join(",")')"
[ "$(jf .metageneration)" = 4 ] || fail "metageneration after update"
req GET "$O?ifMetagenerationNotMatch=4"
want 304 "ifMetagenerationNotMatch on a read"

req POST "$GCS/upload/storage/v1/b/e2e-pre/o?uploadType=resumable&name=x&ifGenerationMatch=0" \
    -H 'Content-Type: application/json' --data-binary '{}'
want 412 "resumable start with no-clobber over an existing object"
req DELETE "$O?ifGenerationMatch=$g1"
want 412 "delete with a stale generation"
req DELETE "$O?ifMetagenerationMatch=1"
want 412 "delete with a stale metageneration"
req DELETE "$O?ifGenerationMatch=$g2"
want 204 "delete with the right generation"
req GET "$O"
want 404 "deleted object"
req DELETE "$O"
want 404 "delete a deleted object"
