#!/bin/sh
# --log-http and --dry-run (S3): a full trace with -vv shows requests and
# replies but no secret: canary access token, refresh token, client
# secret, private key, upload_id, and the real token the emulator issued
# (read back from its 0600 cache file, the one place meant to hold it).
# --dry-run prints mutating requests as JSON lines and sends none.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
P=$CLOUDSDK_CORE_PROJECT
Z=$CLOUDSDK_COMPUTE_ZONE
export GCE_METADATA_HOST=127.0.0.1:9
LOG="$T/logs"
mkdir "$LOG"
# run NAME ARGS...: run tpuctl with the trace on, keep stdout and stderr.
run() {
	i=$1
	shift
	set +e
	"$TPUCTL" --log-http -vv "$@" >"$LOG/out.$i" 2>"$LOG/err.$i"
	set -e
}
SA=$GOOGLE_APPLICATION_CREDENTIALS

# 1. a real exchange (service account): the trace is there, redacted.
run sa api "v2/projects/$P/locations"
assert_grep '^> GET /v2/projects/' "$LOG/err.sa"
assert_grep '^< HTTP/1.1 200' "$LOG/err.sa"
assert_grep '^> Authorization: Bearer <redacted>$' "$LOG/err.sa"
assert_grep 'assertion=<redacted>' "$LOG/err.sa"
assert_grep '"access_token":[[:space:]]*"<redacted>"' "$LOG/err.sa"
tok=$(jq -r .access_token "$XDG_CACHE_HOME"/tpuctl/tokens/*.json)
if [ -z "$tok" ] || [ "$tok" = null ]; then
	fail "no cached token"
fi
key=$(jq -r .private_key "$GOOGLE_APPLICATION_CREDENTIALS" | sed -n 3p)
[ -n "$key" ] || fail "no key line"

# 2. canary secrets of every kind.
printf 'ya29.CANARYTOKEN\n' >"$T/token"
chmod 600 "$T/token"
run tokfile --access-token-file "$T/token" api "v2/projects/$P/locations"
jq '.refresh_token = "1//CANARYREFRESH" | .client_secret = "CANARYSECRET"' \
    "$EMU_DIR/authorized-user.json" >"$T/au.json"
export GOOGLE_APPLICATION_CREDENTIALS="$T/au.json"
run user auth print-access-token
export GOOGLE_APPLICATION_CREDENTIALS="$SA"
run upload --access-token-file "$T/token" api --service storage \
    "upload/storage/v1/b/bkt/o?uploadType=resumable&upload_id=CANARYUPLOAD"
run upload2 --access-token-file "$T/token" api --method PUT --data '{}' --service storage \
    "upload/storage/v1/b/bkt/o?uploadType=resumable&upload_id=CANARYUPLOAD"
jq '.private_key_id = "CANARYKID"' "$GOOGLE_APPLICATION_CREDENTIALS" >"$T/sa.json"
chmod 600 "$T/sa.json"
export GOOGLE_APPLICATION_CREDENTIALS="$T/sa.json"
run kid auth print-access-token
run list auth list --format json
export GOOGLE_APPLICATION_CREDENTIALS="$SA"

# the canaries went out (the trace shows where), but never in clear
assert_grep 'upload_id=<redacted>' "$LOG/err.upload"
assert_grep 'refresh_token=<redacted>' "$LOG/err.user"
if grep -rl -e CANARY -e "$tok" -e "$key" "$LOG"; then
	grep -rn -e CANARY -e "$tok" -e "$key" "$LOG" | head -5 >&2
	fail "a secret leaked into stdout or stderr"
fi
# nor into any file tpuctl wrote besides the token cache entries
find "$HOME" -type f ! -path "*/tpuctl/tokens/*" >"$T/files"
while IFS= read -r f; do
	! grep -q -e CANARY -e "$tok" "$f" || fail "secret in $f"
done <"$T/files"
for f in "$XDG_CACHE_HOME"/tpuctl/tokens/*; do
	[ "$(stat -c %a "$f")" = 600 ] || fail "$f is not 0600"
done

# 3. --dry-run: the POST is printed, not sent; GETs still go out.
n=$(emu_requests | grep -c '"method":"POST"' || true)
expect_rc 0 "$TPUCTL" --dry-run api --data '{"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"}' \
    "v2/projects/$P/locations/$Z/nodes?nodeId=n1"
[ "$(wc -l <"$T/out")" -eq 1 ] || fail "dry run: want one line"
jq -e '.dryRun == true and .method == "POST" and (.url | endswith("/nodes?nodeId=n1"))
    and .body.acceleratorType == "v4-8"' "$T/out" >/dev/null ||
    fail "dry run line: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" --dry-run api --method DELETE "v2/projects/$P/locations/$Z/nodes/n1"
jq -e '.method == "DELETE"' "$T/out" >/dev/null || fail "dry-run DELETE"
[ "$(emu_requests | grep -c '"method":"POST"' || true)" -eq "$n" ] ||
    fail "dry run sent a POST"
emu_requests | grep -q '"method":"DELETE"' && fail "dry run sent a DELETE"
expect_rc 0 "$TPUCTL" --dry-run api "v2/projects/$P/locations" --format json
jq -e '.locations' "$T/out" >/dev/null || fail "dry run did not send the GET"

# 4. bad input is refused before anything is sent (R12).
n=$(emu_requests | wc -l)
expect_rc 2 "$TPUCTL" api --data '{bad' "v2/x"
assert_grep '^tpuctl: --data' "$T/err"
expect_rc 2 "$TPUCTL" api --method TRACE "v2/x"
assert_grep "invalid --method 'TRACE'" "$T/err"
expect_rc 2 "$TPUCTL" api --service compute "v2/x"
assert_grep "invalid --service 'compute'" "$T/err"
expect_rc 2 "$TPUCTL" api "v2/a b"
expect_rc 2 "$TPUCTL" api --timeout 0 "v2/x"
expect_rc 2 env CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU=http://10.1.2.3/ "$TPUCTL" api v2/x
assert_grep 'plain http is allowed only to loopback' "$T/err"
expect_rc 2 env CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU=file:///etc/ "$TPUCTL" api v2/x
[ "$(emu_requests | wc -l)" -eq "$n" ] || fail "bad input reached the server"
