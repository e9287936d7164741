#!/bin/sh
# Issue 20: "data ls gs://" lists the project's buckets (buckets.list,
# every page), as gsutil ls gs://: one gs://NAME/ line each, -l with the
# creation time, location and storage class and a TOTAL line,
# --format json the bucket resources; none is "Listed 0 items." on
# stderr; -r, -a or another URL beside gs:// are refused.
# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"

expect_rc 0 "$TPUCTL" data ls gs://
[ ! -s "$T/out" ] || fail "no buckets: stdout $(cat "$T/out")"
assert_grep '^Listed 0 items\.$' "$T/err"
expect_rc 0 "$TPUCTL" -q data ls gs://
[ ! -s "$T/err" ] || fail "-q printed: $(cat "$T/err")"

mkbucket e2e-418b
mkbucket e2e-418a
mkbucket e2e-418c
# three pages of one bucket each
expect_rc 0 env TPUCTL_GCS_PAGE_SIZE=1 "$TPUCTL" data ls gs://
printf 'gs://e2e-418a/\ngs://e2e-418b/\ngs://e2e-418c/\n' | cmp -s - "$T/out" ||
    fail "ls gs://: $(cat "$T/out")"
n=$(emu_requests | jq -r 'select(.path == "/storage/v1/b" and .method == "GET") | .query' |
    grep -c 'maxResults=1&pageToken=' || true)
[ "$n" -eq 2 ] || fail "$n requests with a page token, want 2"

expect_rc 0 "$TPUCTL" data ls -l gs://
assert_grep '^20[0-9-]*T[0-9:]*Z +[A-Z0-9-]+ +STANDARD +gs://e2e-418a/$' "$T/out"
assert_grep '^TOTAL: 3 buckets$' "$T/out"

expect_rc 0 "$TPUCTL" data ls --format json gs://
[ "$(jq -r '[.[].name] | join(" ")' "$T/out")" = "e2e-418a e2e-418b e2e-418c" ] ||
    fail "json: $(cat "$T/out")"
[ "$(jq -r '.[0].kind' "$T/out")" = "storage#bucket" ] || fail "json kind: $(cat "$T/out")"

for a in "-r gs://" "-a gs://" "gs:// gs://e2e-418a"; do
	# shellcheck disable=SC2086
	expect_rc 2 "$TPUCTL" data ls $a
	assert_grep "^tpuctl: gs:// lists the project's buckets: give it alone, without -r or -a$" "$T/err"
done
