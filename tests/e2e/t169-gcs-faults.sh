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
