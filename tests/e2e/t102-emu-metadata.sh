#!/bin/sh
# The metadata server: Metadata-Flavor required, the values clients read
# (token, email, project, zone), the "GET /" detection probe, and the
# host's view on the main address (no worker attributes, wait_for_change).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
M="http://$GCE_METADATA_HOST/computeMetadata/v1"

md() {
	curl -s -D "$T/hdr" -o "$T/body" -w '%{http_code}' -H 'Metadata-Flavor: Google' "$@"
}

# Without the header: 403, and no token leaks.
code=$(curl -s -o "$T/body" -w '%{http_code}' "$M/instance/service-accounts/default/token")
[ "$code" = 403 ] || fail "token without Metadata-Flavor gave $code"
assert_no_grep access_token "$T/body"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Metadata-Flavor: Nope' "$M/project/project-id")
[ "$code" = 403 ] || fail "wrong Metadata-Flavor gave $code"

code=$(md "http://$GCE_METADATA_HOST/")
[ "$code" = 200 ] || fail "probe gave $code"
[ "$(cat "$T/body")" = ok ] || fail "probe body: $(cat "$T/body")"
assert_grep '^Metadata-Flavor: Google' "$T/hdr"

code=$(md "$M/instance/service-accounts/default/token?scopes=x")
[ "$code" = 200 ] || fail "token gave $code"
jq -e '(.access_token | startswith("ya29.emu-")) and .token_type == "Bearer"
     and .expires_in > 0' "$T/body" >/dev/null || fail "token: $(cat "$T/body")"
tok=$(jq -r .access_token "$T/body")
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $tok" \
    "$TPUCTL_EMULATOR_URL/v2/projects/$CLOUDSDK_CORE_PROJECT/locations/$CLOUDSDK_COMPUTE_ZONE/nodes")
[ "$code" != 401 ] || fail "metadata token rejected by the API"

md "$M/instance/service-accounts/default/email" >/dev/null
[ "$(cat "$T/body")" = "emu-sa@tpuctl-emu.iam.gserviceaccount.com" ] ||
    fail "email: $(cat "$T/body")"
md "$M/project/project-id" >/dev/null
[ "$(cat "$T/body")" = tpuctl-emu ] || fail "project-id: $(cat "$T/body")"
md "$M/project/numeric-project-id" >/dev/null
num=$(cat "$T/body")
case $num in
'' | *[!0-9]*) fail "numeric-project-id: $num" ;;
esac
md "$M/instance/zone" >/dev/null
[ "$(cat "$T/body")" = "projects/$num/zones/us-central2-b" ] ||
    fail "zone: $(cat "$T/body")"
jq -e --arg n "$num" '.audience | contains("/projects/" + $n + "/")' \
    "$EMU_DIR/external-account.json" >/dev/null ||
    fail "project number differs between metadata and external-account.json"
code=$(md "$M/instance/service-accounts/")
[ "$code" = 200 ] || fail "service-accounts listing gave $code"
assert_grep '^default/$' "$T/body"
code=$(md "$M/instance/attributes/no-such-attribute")
[ "$code" = 404 ] || fail "unknown attribute gave $code"
# The main address is the host, not a worker: no worker attributes (a
# header naming a worker changes nothing), the host's own instance values.
code=$(md "$M/instance/attributes/agent-worker-number" -H 'X-Emulator-Worker: no-such-node/0')
[ "$code" = 404 ] || fail "worker attribute on the host gave $code"
code=$(md "$M/instance/attributes/")
[ "$code" = 200 ] || fail "host attributes gave $code"
[ ! -s "$T/body" ] || fail "host attributes: $(cat "$T/body")"
md "$M/instance/preempted" >/dev/null
[ "$(cat "$T/body")" = FALSE ] || fail "host preempted: $(cat "$T/body")"
md "$M/instance/maintenance-event" >/dev/null
[ "$(cat "$T/body")" = NONE ] || fail "host maintenance-event: $(cat "$T/body")"
md "$M/instance/hostname" >/dev/null
[ "$(cat "$T/body")" = tpuctl-emu.internal ] || fail "host hostname: $(cat "$T/body")"
# wait_for_change with a stale last_etag answers at once; with the
# current one it waits for timeout_sec (nothing changes on the host).
code=$(md "$M/instance/preempted?wait_for_change=true&last_etag=0000000000000000")
[ "$code" = 200 ] || fail "wait_for_change with a stale etag gave $code"
etag=$(sed -n 's/^ETag: \([0-9a-f]*\).*/\1/p' "$T/hdr")
[ -n "$etag" ] || fail "no ETag: $(cat "$T/hdr")"
start=$(date +%s)
code=$(md "$M/instance/preempted?wait_for_change=true&last_etag=$etag&timeout_sec=2")
[ "$code" = 200 ] || fail "timed-out wait gave $code"
[ "$(cat "$T/body")" = FALSE ] || fail "timed-out wait: $(cat "$T/body")"
[ $(($(date +%s) - start)) -ge 1 ] || fail "wait_for_change did not wait"
code=$(md "$M/instance/preempted?wait_for_change=true&timeout_sec=0")
[ "$code" = 400 ] || fail "timeout_sec=0 gave $code"
code=$(md "$M/no/such/thing")
[ "$code" = 404 ] || fail "unknown metadata path gave $code"
