#!/bin/sh
# t160: Buckets: insert (name rules, 409 on a duplicate), get, list with prefix
# and paging in both the /storage/v1 and the bare /b form, delete (409 when
# not empty, then 204), and 401 without a token.

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

mkbucket e2e-bkt-1
[ "$(jf .kind)" = storage#bucket ] || fail "bucket kind is $(jf .kind)"
[ "$(jf .name)" = e2e-bkt-1 ] || fail "bucket name is $(jf .name)"
[ "$(jf .id)" = e2e-bkt-1 ] || fail "bucket id is $(jf .id)"
[ "$(jf .metageneration)" = 1 ] || fail "metageneration $(jf .metageneration)"
[ "$(jf .storageClass)" = STANDARD ] || fail "storageClass $(jf .storageClass)"
[ "$(jf .location)" = US ] || fail "location $(jf .location)"
[ "$(jf .iamConfiguration.uniformBucketLevelAccess.enabled)" = false ] ||
    fail "iamConfiguration missing"
jf .projectNumber | grep -Eq '^[0-9]+$' || fail "projectNumber not numeric"
jf .timeCreated | grep -Eq '^20[0-9]{2}-[0-9]{2}-[0-9]{2}T' ||
    fail "timeCreated $(jf .timeCreated)"
jf .selfLink | grep -q '/storage/v1/b/e2e-bkt-1$' || fail "selfLink $(jf .selfLink)"

req POST "$GCS/storage/v1/b?project=$PROJECT" \
    -H 'Content-Type: application/json' --data-binary '{"name":"e2e-bkt-1"}'
want 409 "duplicate bucket"
[ "$(jf '.error.errors[0].reason')" = conflict ] || fail "409 reason"
[ "$(jf .error.code)" = 409 ] || fail "409 code"

for n in ab My-Bkt -bkt bkt- 192.168.5.4 goog-bkt bad/name; do
	req POST "$GCS/storage/v1/b?project=$PROJECT" \
	    -H 'Content-Type: application/json' --data-binary "{\"name\":\"$n\"}"
	want 400 "bucket name '$n'"
	jf .error.message | grep -qF -- "$n" || fail "400 does not name '$n'"
done
req POST "$GCS/storage/v1/b" -H 'Content-Type: application/json' \
    --data-binary '{"name":"e2e-noproject"}'
want 400 "bucket insert without project"
jf .error.message | grep -q project || fail "400 does not name project"

mkbucket e2e-bkt-2
mkbucket other-bkt
# Paging through the bare form (what STORAGE_EMULATOR_HOST clients use).
req GET "$GCS/b?project=$PROJECT&prefix=e2e-&maxResults=1"
want 200 "list page 1"
[ "$(jf '.items|length')" = 1 ] || fail "page 1 has $(jf '.items|length') items"
[ "$(jf '.items[0].name')" = e2e-bkt-1 ] || fail "page 1 item"
tok=$(jf .nextPageToken)
case $tok in "" | null) fail "no nextPageToken" ;; esac
req GET "$GCS/b?project=$PROJECT&prefix=e2e-&maxResults=1&pageToken=$tok"
want 200 "list page 2"
[ "$(jf '.items[0].name')" = e2e-bkt-2 ] || fail "page 2 item"
[ "$(jf .nextPageToken)" = null ] || fail "page 2 has a nextPageToken"
req GET "$GCS/storage/v1/b?project=$PROJECT"
want 200 "list all"
[ "$(jf '[.items[].name]|join(",")')" = e2e-bkt-1,e2e-bkt-2,other-bkt ] ||
    fail "list all: $(jf '[.items[].name]|join(",")')"
req GET "$GCS/storage/v1/b?project=someone-else"
want 403 "list another project's buckets"
jf .error.message | grep -q storage.buckets.list || fail "403 message"
req POST "$GCS/storage/v1/b?project=someone-else" \
    -H 'Content-Type: application/json' --data-binary '{"name":"e2e-other"}'
want 403 "create a bucket in another project"
req GET "$GCS/storage/v1/b?project=$PROJECT&prefix=zzz"
want 200 "empty bucket list"
[ "$(jf .items)" = null ] || fail "an empty list has items"
[ "$(jf .kind)" = storage#buckets ] || fail "list kind"

req GET "$GCS/b/e2e-bkt-2"
want 200 "get bucket (bare)"
[ "$(jf .name)" = e2e-bkt-2 ] || fail "get name"

req POST "$GCS/upload/storage/v1/b/e2e-bkt-1/o?uploadType=media&name=x" \
    -H 'Content-Type: text/plain' --data-binary hello
want 200 "upload into bucket"
req DELETE "$GCS/storage/v1/b/e2e-bkt-1"
want 409 "delete non-empty bucket"
jf .error.message | grep -q "not empty" || fail "409 message"
req DELETE "$GCS/storage/v1/b/e2e-bkt-1/o/x"
want 204 "delete object"
req DELETE "$GCS/storage/v1/b/e2e-bkt-1"
want 204 "delete bucket"
[ ! -s "$T/body" ] || fail "204 with a body"
req GET "$GCS/storage/v1/b/e2e-bkt-1"
want 404 "get deleted bucket"
[ "$(jf '.error.errors[0].reason')" = notFound ] || fail "404 reason"
req DELETE "$GCS/storage/v1/b/e2e-bkt-1"
want 404 "delete deleted bucket"

st=$(curl -s -o /dev/null -w '%{http_code}' "$GCS/storage/v1/b/e2e-bkt-2")
[ "$st" = 401 ] || fail "no token: HTTP $st, want 401"
st=$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer nope' \
    "$GCS/b/e2e-bkt-2/o")
[ "$st" = 401 ] || fail "bad token: HTTP $st, want 401"
