#!/bin/sh
# t215: RELIABILITY.md R1/R3 and 4C rows for listing, stat and delete:
# 503s and reset connections are retried (a failed second page is
# re-fetched without duplicates), retries that run out are exit 5 with
# the attempts named, a 404 is final (one request), a 403 is exit 3.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"

put() {
	req POST "$GCS/upload/storage/v1/b/e2e-flt/o?uploadType=media&name=$(uri "$1")" \
	    -H 'Content-Type: application/octet-stream' --data-binary x
	want 200 "upload $1"
}
mkbucket e2e-flt
i=0
while [ $i -lt 15 ]; do
	put "o$i"
	i=$((i + 1))
done
LIST='/storage/v1/b/e2e-flt/o?maxResults'

# a 503 on the first page, then a reset on the second: all 15, once each
emu_inject --method GET --path "$LIST" --count 1 return-503
expect_rc 0 env TPUCTL_GCS_PAGE_SIZE=10 "$TPUCTL" data ls -r gs://e2e-flt
[ "$(wc -l <"$T/out")" -eq 15 ] || fail "ls after 503: $(cat "$T/out")"
emu_inject --method GET --path "$LIST=10&pageToken" --count 1 reset-connection
expect_rc 0 env TPUCTL_GCS_PAGE_SIZE=10 "$TPUCTL" data ls -r gs://e2e-flt
[ "$(wc -l <"$T/out")" -eq 15 ] || fail "ls after reset: $(wc -l <"$T/out")"
[ "$(sort -u "$T/out" | wc -l)" -eq 15 ] || fail "ls after reset: duplicates"

# retries run out: exit 5 naming the attempts
emu_inject --method GET --path "$LIST" --count 3 return-503
expect_rc 5 env TPUCTL_HTTP_MAX_ATTEMPTS=3 "$TPUCTL" data ls gs://e2e-flt
assert_grep 'attempt' "$T/err"

# stat: a 503 is retried
emu_inject --method GET --path /storage/v1/b/e2e-flt/o/o1 --count 2 return-503
expect_rc 0 "$TPUCTL" data stat gs://e2e-flt/o1
assert_grep 'Content-Length: +1$' "$T/out"

# delete: a 503 is retried (rm -r deletes carry ifGenerationMatch)
emu_inject --method DELETE --path /storage/v1/b/e2e-flt/o/o2 --count 1 return-503
expect_rc 0 "$TPUCTL" data rm gs://e2e-flt/o2
emu_inject --method DELETE --path /storage/v1/b/e2e-flt/o/o3 --count 2 return-503
expect_rc 0 "$TPUCTL" --quiet data rm -r 'gs://e2e-flt/**'
req GET "$GCS/storage/v1/b/e2e-flt/o"
[ "$(jf '.items | length')" = 0 ] || fail "rm -r left: $(cat "$T/body")"

# a 404 is final: exactly one request
before=$(emu_requests | wc -l)
expect_rc 4 "$TPUCTL" data stat gs://e2e-flt/gone
[ "$(emu_requests | tail -n +$((before + 1)) | wc -l)" -eq 1 ] ||
    fail "404 was retried"

# a bad token: exit 3
echo bogus >"$T/badtok"
chmod 600 "$T/badtok"
expect_rc 3 env CLOUDSDK_AUTH_ACCESS_TOKEN_FILE="$T/badtok" \
    "$TPUCTL" data ls gs://e2e-flt
exit 0
