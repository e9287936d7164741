#!/bin/sh
# --set auth.token_ttl_s: tokens expire (401 afterwards, expires_in tells
# the TTL); a second server on the same state dir is refused.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

emu_start --set auth.token_ttl_s=2
M="http://$GCE_METADATA_HOST/computeMetadata/v1"
api="$TPUCTL_EMULATOR_URL/v2/projects/tpuctl-emu/locations/us-central2-b/nodes"
curl -s -o "$T/tok" -H 'Metadata-Flavor: Google' "$M/instance/service-accounts/default/token"
jq -e '.expires_in == 2' "$T/tok" >/dev/null || fail "expires_in: $(cat "$T/tok")"
tok=$(jq -r .access_token "$T/tok")
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $tok" "$api")
[ "$code" != 401 ] || fail "fresh token rejected"
sleep 3
code=$(curl -s -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $tok" "$api")
[ "$code" = 401 ] || fail "expired token gave $code"
assert_grep "invalid authentication credentials" "$T/body"

# The same state dir cannot be served twice.
expect_rc 1 "$EMULATOR" serve --state-dir "$EMU_DIR"
assert_grep "state dir '.*' is in use by another tpuctl-emulator \(pid $EMU_PID\)" "$T/err"
# ... and the refused one did not touch the running server's env.
[ -s "$EMU_DIR/env" ] || fail "a refused second server removed DIR/env"
curl -sf "$TPUCTL_EMULATOR_URL/_emulator/health" >/dev/null || fail "server gone"
