#!/bin/sh
# t212: "tpuctl data mb" (project from the configuration, --location,
# 409 -> exit 4 "already exists") and "tpuctl data stat" (table of fields,
# --format json = the API's resource; 0 B, 1 B and special names;
# missing -> exit 4).

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"

expect_rc 0 "$TPUCTL" data mb gs://e2e-mb --location us-central2
req GET "$GCS/storage/v1/b/e2e-mb"
want 200 "bucket created"
[ "$(jf .location | tr '[:lower:]' '[:upper:]')" = US-CENTRAL2 ] ||
    fail "location: $(jf .location)"
emu_requests | grep '"POST"' | grep -q "project=$PROJECT" ||
    fail "mb did not send project=$PROJECT"
expect_rc 4 "$TPUCTL" data mb gs://e2e-mb
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "mb twice: $(cat "$T/err")"
assert_grep 'gs://e2e-mb: already exists' "$T/err"
# no project: exit 2, nothing sent
before=$(emu_requests | wc -l)
expect_rc 2 env -u CLOUDSDK_CORE_PROJECT CLOUDSDK_CONFIG="$T/nocfg" \
    TPUCTL_CONFIG_DIR="$T/nocfg" "$TPUCTL" data mb gs://e2e-mb2
assert_grep 'no project' "$T/err"
[ "$(emu_requests | wc -l)" -eq "$before" ] || fail "mb without project sent"

put() {
	req POST "$GCS/upload/storage/v1/b/e2e-mb/o?uploadType=media&name=$(uri "$1")" \
	    -H 'Content-Type: text/plain' --data-binary @"$2"
	want 200 "upload $1"
}
: >"$T/zero"
printf 'A' >"$T/one"
put 'a?b#c%2F' "$T/one"
put 'ünï/zero' "$T/zero"
sums "$T/one"

expect_rc 0 "$TPUCTL" data stat 'gs://e2e-mb/a?b#c%2F'
assert_grep '^gs://e2e-mb/a\?b#c%2F:$' "$T/out"
assert_grep '^    Content-Length: +1$' "$T/out"
assert_grep '^    Content-Type: +text/plain$' "$T/out"
[ "$(sed -n 's/^    Hash (crc32c): *//p' "$T/out")" = "$CRC" ] || fail "stat crc32c"
[ "$(sed -n 's/^    Hash (md5): *//p' "$T/out")" = "$MD5" ] || fail "stat md5"
assert_grep '^    Generation: +[1-9][0-9]*$' "$T/out"
assert_grep '^    Metageneration: +1$' "$T/out"

expect_rc 0 "$TPUCTL" data stat 'gs://e2e-mb/ünï/zero'
assert_grep '^    Content-Length: +0$' "$T/out"

expect_rc 0 "$TPUCTL" --format json data stat 'gs://e2e-mb/a?b#c%2F'
[ "$(jq -r .name "$T/out")" = 'a?b#c%2F' ] || fail "json name"
[ "$(jq -r .size "$T/out")" = 1 ] || fail "json size"
[ "$(jq -r .crc32c "$T/out")" = "$CRC" ] || fail "json crc32c"
[ "$(jq -r .kind "$T/out")" = storage#object ] || fail "json kind"
expect_rc 0 "$TPUCTL" --format json data stat 'gs://e2e-mb/a?b#c%2F' \
    'gs://e2e-mb/ünï/zero'
[ "$(jq -r 'map(.size) | join(",")' "$T/out")" = 1,0 ] || fail "json list"

expect_rc 4 "$TPUCTL" data stat gs://e2e-mb/missing
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "stat missing: $(cat "$T/err")"
assert_grep 'gs://e2e-mb/missing: not found' "$T/err"
exit 0
