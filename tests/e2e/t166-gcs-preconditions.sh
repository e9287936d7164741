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
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
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
