#!/bin/sh
# t165: Compose (crc32c by combination == the crc of the concatenation,
# componentCount, no md5Hash, 32 sources at most; the composite holds its
# components' bytes by reference), rewrite (one call, rewriteResponse)
# and copy; preconditions on sources and destination.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-cmp
mkbucket e2e-cmp-dst
i=0
for size in 1000 262145 7; do
	mkfile "$T/p$i" $size
	req POST "$GCS/upload/storage/v1/b/e2e-cmp/o?uploadType=media&name=part%2F$i" \
	    --data-binary "@$T/p$i"
	want 200 "upload part $i"
	i=$((i + 1))
done
gen1=$(jf .generation)
cat "$T/p0" "$T/p1" "$T/p2" >"$T/joined"
sums "$T/joined"
req POST "$GCS/storage/v1/b/e2e-cmp/o/joined/compose" \
    -H 'Content-Type: application/json' --data-binary \
    '{"sourceObjects":[{"name":"part/0"},{"name":"part/1"},{"name":"part/2"}],"destination":{"contentType":"application/x-joined"}}'
want 200 compose
[ "$(jf .crc32c)" = "$CRC" ] || fail "composite crc32c $(jf .crc32c) want $CRC"
[ "$(jf .componentCount)" = 3 ] || fail "componentCount $(jf .componentCount)"
[ "$(jf .md5Hash)" = null ] || fail "a composite has an md5Hash"
[ "$(jf .size)" = "$(wc -c <"$T/joined" | tr -d ' ')" ] || fail "composite size"
[ "$(jf .contentType)" = application/x-joined ] || fail "composite contentType"
req GET "$GCS/download/storage/v1/b/e2e-cmp/o/joined?alt=media"
want 200 "download composite"
cmp -s "$T/body" "$T/joined" || fail "composite differs"
[ "$(hdr x-goog-hash)" = "crc32c=$CRC" ] || fail "composite x-goog-hash '$(hdr x-goog-hash)'"

# A composite of a composite counts its components.
req POST "$GCS/b/e2e-cmp/o/joined2/compose" -H 'Content-Type: application/json' \
    --data-binary '{"sourceObjects":[{"name":"joined"},{"name":"part/0"}]}'
want 200 "compose a composite"
[ "$(jf .componentCount)" = 4 ] || fail "nested componentCount $(jf .componentCount)"
cat "$T/joined" "$T/p0" >"$T/joined2"
sums "$T/joined2"
[ "$(jf .crc32c)" = "$CRC" ] || fail "nested composite crc32c"

# A composite holds its components' bytes by reference (no copy): it
# stays whole when they are deleted or replaced, reads across their
# boundaries, composes into itself, never shows how it is stored, and
# leaves no file behind once deleted.
objs="$EMU_DIR/gcs/buckets/e2e-cmp/objects"
for n in 0 1 2; do
	req POST "$GCS/upload/storage/v1/b/e2e-cmp/o?uploadType=media&name=ref%2F$n" \
	    --data-binary "@$T/p$n"
	want 200 "upload ref/$n"
done
req POST "$GCS/storage/v1/b/e2e-cmp/o/refd/compose" -H 'Content-Type: application/json' \
    --data-binary '{"sourceObjects":[{"name":"ref/0"},{"name":"ref/1"},{"name":"ref/2"}]}'
want 200 "compose refd"
jq -e 'has("x-emulator-segments") | not' "$T/body" >/dev/null || fail "compose shows its segments"
req DELETE "$GCS/storage/v1/b/e2e-cmp/o/ref%2F0"
want 204 "delete a component"
printf 'other bytes' >"$T/other"
req POST "$GCS/upload/storage/v1/b/e2e-cmp/o?uploadType=media&name=ref%2F1" \
    --data-binary "@$T/other"
want 200 "replace a component"
req GET "$GCS/download/storage/v1/b/e2e-cmp/o/refd?alt=media"
want 200 "composite after its components changed"
cmp -s "$T/body" "$T/joined" || fail "composite changed with its components"
# 20 bytes across the boundary of the first two components (at 1000)
req GET "$GCS/download/storage/v1/b/e2e-cmp/o/refd?alt=media" -H 'Range: bytes=990-1009'
want 206 "range across components"
dd if="$T/joined" of="$T/want" bs=1 skip=990 count=20 2>/dev/null
cmp -s "$T/body" "$T/want" || fail "range across components differs"
# appended to itself, then to a composite of a composite
req POST "$GCS/storage/v1/b/e2e-cmp/o/refd/compose" -H 'Content-Type: application/json' \
    --data-binary '{"sourceObjects":[{"name":"refd"},{"name":"ref/2"}]}'
want 200 "compose a composite into itself"
cat "$T/joined" "$T/p2" >"$T/refd2"
sums "$T/refd2"
[ "$(jf .crc32c)" = "$CRC" ] || fail "self-compose crc32c"
[ "$(jf .componentCount)" = 4 ] || fail "self-compose componentCount $(jf .componentCount)"
req GET "$GCS/download/storage/v1/b/e2e-cmp/o/refd?alt=media"
cmp -s "$T/body" "$T/refd2" || fail "self-composed bytes differ"
req GET "$GCS/storage/v1/b/e2e-cmp/o?prefix=refd"
jq -e '[.items[] | has("x-emulator-segments")] | any | not' "$T/body" >/dev/null ||
    fail "a listing shows segments"
# a rewrite of a composite is a composite with the same bytes
req POST "$GCS/storage/v1/b/e2e-cmp/o/refd/rewriteTo/b/e2e-cmp-dst/o/refcopy" \
    -H 'Content-Type: application/json'
want 200 "rewrite a composite"
req GET "$GCS/download/storage/v1/b/e2e-cmp-dst/o/refcopy?alt=media"
cmp -s "$T/body" "$T/refd2" || fail "rewritten composite differs"
# the files: 4 segments of the live generation, none of the old one;
# then none at all once deleted
key=$(printf refd | sha256sum | cut -d' ' -f1)
[ "$(find "$objs" -name "$key.*.s*" | wc -l)" = 4 ] ||
    fail "segments on disk: $(find "$objs" -name "$key.*" | tr '\n' ' ')"
[ ! -e "$objs/$key.data" ] || fail "a composite has a data file"
req DELETE "$GCS/storage/v1/b/e2e-cmp/o/refd"
want 204 "delete the composite"
[ -z "$(find "$objs" -name "$key.*")" ] || fail "files left: $(find "$objs" -name "$key.*")"
# a plain object written over a composite drops its segments
req POST "$GCS/storage/v1/b/e2e-cmp/o/refp/compose" -H 'Content-Type: application/json' \
    --data-binary '{"sourceObjects":[{"name":"ref/2"},{"name":"ref/2"}]}'
want 200 "compose refp"
req POST "$GCS/upload/storage/v1/b/e2e-cmp/o?uploadType=media&name=refp" --data-binary "@$T/other"
want 200 "a plain object over a composite"
key=$(printf refp | sha256sum | cut -d' ' -f1)
[ "$(find "$objs" -name "$key.*" | sort | tr '\n' ' ')" = "$objs/$key.data $objs/$key.json " ] ||
    fail "files of refp: $(find "$objs" -name "$key.*")"

src=$(python3 -c 'import json; print(json.dumps({"sourceObjects": [{"name": "part/0"}] * 33}))')
req POST "$GCS/storage/v1/b/e2e-cmp/o/big/compose" \
    -H 'Content-Type: application/json' --data-binary "$src"
want 400 "33 sources"
jf .error.message | grep -q 33 || fail "400 does not name 33"
req POST "$GCS/storage/v1/b/e2e-cmp/o/none/compose" \
    -H 'Content-Type: application/json' --data-binary '{"sourceObjects":[]}'
want 400 "no sources"
req POST "$GCS/storage/v1/b/e2e-cmp/o/x/compose" -H 'Content-Type: application/json' \
    --data-binary '{"sourceObjects":[{"name":"part/0"},{"name":"nope"}]}'
want 404 "a missing source"
req POST "$GCS/storage/v1/b/e2e-cmp/o/x/compose" -H 'Content-Type: application/json' \
    --data-binary '{"sourceObjects":[{"name":"part/2","objectPreconditions":{"ifGenerationMatch":"1"}}]}'
want 412 "a source precondition"
req POST "$GCS/storage/v1/b/e2e-cmp/o/x/compose" -H 'Content-Type: application/json' \
    --data-binary "{\"sourceObjects\":[{\"name\":\"part/2\",\"objectPreconditions\":{\"ifGenerationMatch\":\"$gen1\"}}]}"
want 200 "a source precondition that holds"
req POST "$GCS/storage/v1/b/e2e-cmp/o/joined/compose?ifGenerationMatch=0" \
    -H 'Content-Type: application/json' --data-binary '{"sourceObjects":[{"name":"part/0"}]}'
want 412 "compose over an existing object with ifGenerationMatch=0"

sums "$T/p1"
req POST "$GCS/storage/v1/b/e2e-cmp/o/part%2F1/rewriteTo/b/e2e-cmp-dst/o/copy%2F1" \
    -H 'Content-Type: application/json'
want 200 rewrite
[ "$(jf .kind)" = storage#rewriteResponse ] || fail "rewrite kind"
[ "$(jf .done)" = true ] || fail "rewrite not done"
[ "$(jf .totalBytesRewritten)" = 262145 ] || fail "totalBytesRewritten"
[ "$(jf .objectSize)" = 262145 ] || fail "objectSize"
[ "$(jf .resource.crc32c)" = "$CRC" ] || fail "rewrite crc32c"
[ "$(jf .resource.md5Hash)" = "$MD5" ] || fail "rewrite md5Hash"
[ "$(jf .resource.bucket)" = e2e-cmp-dst ] || fail "rewrite bucket"
req GET "$GCS/storage/v1/b/e2e-cmp-dst/o/copy%2F1?alt=media"
cmp -s "$T/body" "$T/p1" || fail "rewritten data differs"
req POST "$GCS/storage/v1/b/e2e-cmp/o/part%2F1/rewriteTo/b/e2e-cmp-dst/o/copy%2F1?ifGenerationMatch=0" \
    -H 'Content-Type: application/json'
want 412 "rewrite onto an existing object with ifGenerationMatch=0"
req POST "$GCS/storage/v1/b/e2e-cmp/o/nope/rewriteTo/b/e2e-cmp-dst/o/x" \
    -H 'Content-Type: application/json'
want 404 "rewrite a missing source"
req POST "$GCS/storage/v1/b/e2e-cmp/o/part%2F1/rewriteTo/b/e2e-cmp-dst/o/x?ifSourceGenerationMatch=1" \
    -H 'Content-Type: application/json'
want 412 "rewrite with a failed source precondition"
req POST "$GCS/storage/v1/b/e2e-cmp/o/part%2F1/copyTo/b/e2e-cmp/o/copied" \
    -H 'Content-Type: application/json' --data-binary '{"contentType":"text/x-copy"}'
want 200 copy
[ "$(jf .kind)" = storage#object ] || fail "copy kind"
[ "$(jf .crc32c)" = "$CRC" ] || fail "copy crc32c"
[ "$(jf .contentType)" = text/x-copy ] || fail "copy metadata override"
req GET "$GCS/b/e2e-cmp/o/copied?alt=media"
cmp -s "$T/body" "$T/p1" || fail "copied data differs"

# The rewriteToken loop with maxBytesRewrittenPerCall (1 MiB steps).
mkfile "$T/r3" 3145735
sums "$T/r3"
req POST "$GCS/upload/storage/v1/b/e2e-cmp/o?uploadType=media&name=r3" \
    --data-binary "@$T/r3"
want 200 "upload r3"
RW="$GCS/storage/v1/b/e2e-cmp/o/r3/rewriteTo/b/e2e-cmp-dst/o/r3copy?maxBytesRewrittenPerCall=1048576"
calls=0
tok=
while :; do
	req POST "$RW${tok:+&rewriteToken=$tok}" -H 'Content-Type: application/json'
	want 200 "rewrite call $calls"
	calls=$((calls + 1))
	[ $calls -le 10 ] || fail "rewrite loop does not end"
	[ "$(jf .objectSize)" = 3145735 ] || fail "objectSize $(jf .objectSize)"
	[ "$(jf .done)" = true ] && break
	[ "$(jf .totalBytesRewritten)" = $((calls * 1048576)) ] ||
	    fail "progress $(jf .totalBytesRewritten) after $calls calls"
	tok=$(jf .rewriteToken)
	req GET "$GCS/storage/v1/b/e2e-cmp-dst/o/r3copy"
	want 404 "destination before the rewrite is done"
done
[ $calls -eq 4 ] || fail "$calls rewrite calls, want 4"
[ "$(jf .resource.crc32c)" = "$CRC" ] || fail "rewrite loop crc32c"
req GET "$GCS/download/storage/v1/b/e2e-cmp-dst/o/r3copy?alt=media"
cmp -s "$T/body" "$T/r3" || fail "rewrite loop data"
req POST "$RW&rewriteToken=$tok" -H 'Content-Type: application/json'
want 200 "replayed last token"
req POST "$RW&rewriteToken=abc" -H 'Content-Type: application/json'
want 400 "a bad rewriteToken"
req POST "$GCS/storage/v1/b/e2e-cmp/o/r3/rewriteTo/b/e2e-cmp-dst/o/x?maxBytesRewrittenPerCall=1000" \
    -H 'Content-Type: application/json'
want 400 "maxBytesRewrittenPerCall not a multiple of 1 MiB"
jf .error.message | grep -q 1048576 || fail "400 does not give the rule"
