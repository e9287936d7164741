#!/bin/sh
# t164: Ranged and conditional reads, as in the recorded exchange: 206 with
# Content-Range for bytes=1-9, 1-, 0-0 and a suffix; 416 past the end;
# generation pinning; 304 for ifGenerationNotMatch; 412 for a failed match.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
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
