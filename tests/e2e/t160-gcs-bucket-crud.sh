#!/bin/sh
# t160: Buckets: insert (name rules, 409 on a duplicate), get, list with prefix
# and paging in both the /storage/v1 and the bare /b form, delete (409 when
# not empty, then 204), and 401 without a token.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
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
