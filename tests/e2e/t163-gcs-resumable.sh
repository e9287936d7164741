#!/bin/sh
# t163: Resumable uploads: session start (Location with upload_id), 256 KiB
# chunks answered 308 with Range, status queries (bytes */*, bytes */N),
# re-sent overlapping chunks, the 256 KiB rule, a gap, a dropped
# connection (the session busy meanwhile, nothing of the chunk kept) then
# resume, single-request, empty and Node-style chunked
# "bytes 0-*/*" uploads, cancel (499, then 410), unknown session (404),
# and checksums carried by the session metadata.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-rs
# start NAME [JSON]: open a session, its URL in $LOC.
start() {
	req POST "$GCS/upload/storage/v1/b/e2e-rs/o?uploadType=resumable&name=$1" \
	    -H 'X-Upload-Content-Type: application/x-rs' \
	    -H 'Content-Type: application/json; charset=UTF-8' \
	    --data-binary "${2:-"{}"}"
	want 200 "start session $1"
	LOC=$(hdr location)
	echo "$LOC" | grep -Eq 'upload_id=[0-9a-f]{32}' || fail "Location '$LOC'"
}
# put RANGE FILE OFF LEN [curl args]: PUT LEN bytes of FILE from OFF.
put() {
	cr=$1
	dd if="$2" of="$T/chunk" bs=65536 iflag=skip_bytes,count_bytes \
	    skip="$3" count="$4" 2>/dev/null
	shift 4
	req PUT "$LOC" -H "Content-Range: $cr" --data-binary "@$T/chunk" "$@"
}
# query RANGE: a status query.
query() {
	req PUT "$LOC" -H "Content-Range: $1" -H 'Content-Length: 0'
}

size=1048676
f="$T/big"
mkfile "$f" $size
sums "$f"
start big
put "bytes 0-262143/*" "$f" 0 262144
want 308 "chunk 1"
[ "$(hdr range)" = "bytes=0-262143" ] || fail "chunk 1 Range '$(hdr range)'"
query "bytes */*"
want 308 "status query"
[ "$(hdr range)" = "bytes=0-262143" ] || fail "query Range '$(hdr range)'"
put "bytes 0-262143/*" "$f" 0 262144
want 308 "re-sent chunk 1"
[ "$(hdr range)" = "bytes=0-262143" ] || fail "re-sent Range '$(hdr range)'"
put "bytes 262144-262243/*" "$f" 262144 100
want 400 "a non-final chunk that is not a multiple of 256 KiB"
jf .error.message | grep -q 262144 || fail "256 KiB message"
# (that chunk was written in place, then cut off again)
query "bytes */*"
[ "$(hdr range)" = "bytes=0-262143" ] || fail "Range after a refused chunk '$(hdr range)'"
# so is one whose URL never reaches the session (404)
dd if="$f" of="$T/chunk" bs=262144 skip=1 count=1 2>/dev/null
req PUT "$(echo "$LOC" | sed 's|/o?|/o/extra/x?|')" \
    -H "Content-Range: bytes 262144-524287/*" --data-binary "@$T/chunk"
want 404 "a chunk sent to a path that is no upload"
query "bytes */*"
[ "$(hdr range)" = "bytes=0-262143" ] || fail "Range after a chunk sent nowhere '$(hdr range)'"
put "bytes 524288-786431/*" "$f" 524288 262144
want 400 "a chunk past the persisted end"
put "bytes 0-9/*" "$f" 0 20
want 400 "Content-Range and body length disagree"
req PUT "$LOC" -H "Content-Range: bytes zero/*" --data-binary x
want 400 "malformed Content-Range"
jf .error.message | grep -q "bytes zero" || fail "400 does not name the value"

# A dropped connection: the client dies in the middle of a chunk.  The
# chunk streams straight into the session's file, so the session is busy
# meanwhile (another request on it gets 503 "busy ... retry"), and
# nothing of the broken chunk is kept (no fault cut it in 256 KiB units).
dd if="$f" of="$T/chunk2" bs=262144 skip=1 count=2 2>/dev/null
curl -sS -o /dev/null -X PUT --limit-rate 64K \
    -H "Authorization: Bearer $TOKEN" \
    -H "Content-Range: bytes 262144-786431/*" \
    --data-binary "@$T/chunk2" "$LOC" 2>/dev/null &
slow=$!
sleep 0.5
query "bytes */$size"
want 503 "status query while a chunk streams in"
jf .error.message | grep -q busy || fail "503 message '$(jf .error.message)'"
kill $slow
wait $slow 2>/dev/null || true
i=0
while query "bytes */$size" && [ "$ST" = 503 ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
want 308 "status after a dropped connection"
[ "$(hdr range)" = "bytes=0-262143" ] || fail "Range after the drop '$(hdr range)'"
next=262144
put "bytes $next-$((size - 1))/$size" "$f" $next $((size - next))
want 200 "final chunk"
[ "$(jf .size)" = $size ] || fail "size $(jf .size)"
[ "$(jf .crc32c)" = "$CRC" ] || fail "crc32c $(jf .crc32c) want $CRC"
[ "$(jf .md5Hash)" = "$MD5" ] || fail "md5Hash"
[ "$(jf .contentType)" = application/x-rs ] || fail "contentType"
gen=$(jf .generation)
query "bytes */$size"
want 200 "status of a finished upload"
[ "$(jf .generation)" = "$gen" ] || fail "finished session resource"
req GET "$GCS/download/storage/v1/b/e2e-rs/o/big?alt=media"
want 200 "download"
cmp -s "$T/body" "$f" || fail "resumable upload differs"

# Nothing persisted yet: 308 without Range.
start nothing
query "bytes */*"
want 308 "query of an empty session"
[ -z "$(hdr range)" ] || fail "Range on an empty session"
# Cancel: 499, then the session is gone.
req DELETE "$LOC"
want 499 "cancel"
query "bytes */*"
want 410 "use after cancel"
LOC=$(echo "$LOC" | sed 's/upload_id=[0-9a-f]*/upload_id=0123456789abcdef0123456789abcdef/')
query "bytes */*"
want 404 "unknown session"
LOC=$(echo "$LOC" | sed 's/upload_id=[0-9a-f]*/upload_id=..%2F..%2Fx/')
query "bytes */*"
want 404 "malformed session id"

# Empty object: finalise with bytes */0.
start empty
query "bytes */0"
want 200 "empty object"
[ "$(jf .size)" = 0 ] || fail "empty size"
[ "$(jf .crc32c)" = AAAAAA== ] || fail "empty crc32c $(jf .crc32c)"
[ "$(jf .md5Hash)" = 1B2M2Y8AsgTpgAmY7PhCfg== ] || fail "empty md5"

# One request: bytes 0-9/10.
printf aaaaaaaaaa >"$T/ten"
start ten
put "bytes 0-9/10" "$T/ten" 0 10
want 200 "single-request upload"
[ "$(jf .crc32c)" = 5yZkMA== ] || fail "ten crc32c $(jf .crc32c)"
[ "$(jf .md5Hash)" = 4JyAxC/aVfnZkuWcprMwfQ== ] || fail "ten md5"

# One PUT without Content-Range: the body is the whole object.
start whole
req PUT "$LOC" --data-binary "@$f"
want 200 "single PUT without Content-Range"
[ "$(jf .crc32c)" = "$CRC" ] || fail "whole-object PUT crc32c"
[ "$(jf .size)" = $size ] || fail "whole-object PUT size"

# The Node client: one chunked PUT with bytes 0-*/*, ends with the body.
start node
req PUT "$LOC" -H 'Content-Range: bytes 0-*/*' \
    -H 'Transfer-Encoding: chunked' --data-binary "@$f"
want 200 "chunked bytes 0-*/* upload"
[ "$(jf .crc32c)" = "$CRC" ] || fail "node-style crc32c"
[ "$(jf .size)" = $size ] || fail "node-style size"

# Checksums from the session metadata are verified at the end.
start badsum '{"crc32c":"AAAAAA=="}'
put "bytes 0-9/10" "$T/ten" 0 10
want 400 "session with a wrong crc32c"
[ "$(jf .error.message)" = 'Provided CRC32C "AAAAAA==" doesn'"'"'t match calculated CRC32C "5yZkMA==".' ] ||
    fail "message $(jf .error.message)"
req GET "$GCS/storage/v1/b/e2e-rs/o/badsum"
want 404 "nothing stored after a session crc mismatch"
start goodsum '{"crc32c":"5yZkMA==","md5Hash":"4JyAxC/aVfnZkuWcprMwfQ=="}'
put "bytes 0-9/10" "$T/ten" 0 10
want 200 "session with the right checksums"

req POST "$GCS/upload/storage/v1/b/e2e-rs/o?uploadType=resumable" \
    --data-binary '{}' -H 'Content-Type: application/json'
want 400 "session without a name"
