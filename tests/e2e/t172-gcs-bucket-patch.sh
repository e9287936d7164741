#!/bin/sh
# t172: buckets.patch: labels merge (null deletes one), versioning
# {enabled:false}, metageneration bumps and survives a restart; what is
# not emulated (versioning on, ACLs, lifecycle, IAM, batch) answers the
# API's error JSON (501 notImplemented; 405 for buckets.update) and changes nothing;
# projection=full renders the fixed project-team ACLs and owner.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-patch
[ "$(jf .softDeletePolicy.retentionDurationSeconds)" = 604800 ] ||
    fail "softDeletePolicy: $(cat "$T/body")"
B="$GCS/storage/v1/b/e2e-patch"
J='Content-Type: application/json'

req PATCH "$B" -H "$J" --data-binary '{"labels":{"team":"ml","env":"dev"}}'
want 200 "patch labels"
[ "$(jf .labels.team),$(jf .labels.env)" = ml,dev ] || fail "labels: $(cat "$T/body")"
[ "$(jf .metageneration)" = 2 ] || fail "metageneration $(jf .metageneration)"
req PATCH "$B" -H "$J" --data-binary '{"labels":{"env":null,"x":"y"}}'
want 200 "merge labels"
[ "$(jf '.labels | keys | join(",")')" = team,x ] || fail "merge: $(cat "$T/body")"
req PATCH "$B" -H "$J" --data-binary '{"versioning":{"enabled":false}}'
want 200 "versioning off"
[ "$(jf .versioning.enabled)" = false ] || fail "versioning: $(cat "$T/body")"
[ "$(jf .labels.team)" = ml ] || fail "labels lost"
[ "$(jf .metageneration)" = 4 ] || fail "metageneration $(jf .metageneration)"

# Not emulated: the API's error shape, nothing changed.
for body in '{"versioning":{"enabled":true}}' '{"lifecycle":{"rule":[]}}' \
    '{"acl":[]}' '{"labels":{"a":"b"},"cors":[]}'; do
	req PATCH "$B" -H "$J" --data-binary "$body"
	want 501 "patch $body"
	[ "$(jf .error.code)" = 501 ] || fail "error code: $(cat "$T/body")"
	[ "$(jf '.error.errors[0].reason')" = notImplemented ] ||
	    fail "reason: $(cat "$T/body")"
done
for body in '{"labels":{"a":1}}' '{"labels":"x"}' '{"versioning":{"enabled":"yes"}}' '[1]'; do
	req PATCH "$B" -H "$J" --data-binary "$body"
	want 400 "patch $body"
done
for u in "$B/iam" "$B/acl" "$B/defaultObjectAcl" "$GCS/b/e2e-patch/iam" \
    "$GCS/storage/v1/projects/$PROJECT/hmacKeys" "$B/o/x/acl"; do
	req GET "$u"
	want 501 "GET $u"
	[ "$(jf '.error.errors[0].reason')" = notImplemented ] ||
	    fail "501 shape: $(cat "$T/body")"
done
req POST "$GCS/batch/storage/v1" -H 'Content-Type: multipart/mixed; boundary=x' --data-binary ''
want 501 "batch"
req PUT "$B" -H "$J" --data-binary '{}'
want 405 "buckets.update (PUT)"
[ "$(jf .error.code)" = 405 ] || fail "405 shape: $(cat "$T/body")"
req PATCH "$GCS/storage/v1/b/no-such-bkt" -H "$J" --data-binary '{"labels":{}}'
want 404 "patch a missing bucket"

req GET "$B?projection=full"
want 200 "get full"
[ "$(jf '.acl | length')" = 3 ] || fail "acl: $(cat "$T/body")"
jf .owner.entity | grep -Eq '^project-owners-[0-9]+$' || fail "owner: $(cat "$T/body")"
[ "$(jf '.defaultObjectAcl[0].role')" = OWNER ] || fail "defaultObjectAcl"
req GET "$B"
[ "$(jf 'has("acl")')" = false ] || fail "acl without projection=full"

# State survives a restart.
kill -TERM "$EMU_PID"
wait "$EMU_PID" || fail "stop failed"
EMU_PID=
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
B="$GCS/storage/v1/b/e2e-patch"
req GET "$B"
want 200 "get after restart"
[ "$(jf '.labels | keys | join(",")'),$(jf .metageneration)" = team,x,4 ] ||
    fail "after restart: $(cat "$T/body")"
