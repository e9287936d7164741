#!/bin/sh
# DIR/requests.jsonl: one JSON line per request with the fields tests
# assert on, and no secret ever written (tokens, refresh tokens,
# assertions, cookies, client secrets, subject tokens).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
U=$TPUCTL_EMULATOR_URL
AU="$EMU_DIR/authorized-user.json"
rt=$(jq -r .refresh_token "$AU")
cs=$(jq -r .client_secret "$AU")
curl -s -o "$T/body" "$U/token" --data-urlencode grant_type=refresh_token \
    --data-urlencode "client_id=$(jq -r .client_id "$AU")" \
    --data-urlencode "client_secret=$cs" --data-urlencode "refresh_token=$rt"
tok=$(jq -r .access_token "$T/body")
case $tok in "" | null) fail "no token" ;; esac
st=$(cat "$EMU_DIR/subject-token")
curl -s -o /dev/null "$U/v1/token?subject_token=$st&access_token=$tok" \
    --data-urlencode "subject_token=$st"
curl -s -o /dev/null -H "Authorization: Bearer $tok" -H "Cookie: SID=$tok" \
    -H "Proxy-Authorization: Basic c2VjcmV0OnNlY3JldA==" \
    "$U/v2/projects/tpuctl-emu/locations/us-central2-b/nodes?access_token=$tok&pageSize=5"
curl -s -o /dev/null "$U/no/such?refresh_token=$rt"

L="$EMU_DIR/requests.jsonl"
[ "$(wc -l <"$L")" -eq 4 ] || fail "want 4 log lines, got $(wc -l <"$L")"
for secret in "$tok" "$rt" "$cs" "$st" c2VjcmV0OnNlY3JldA==; do
	if grep -qF -- "$secret" "$L"; then
		fail "a secret reached the request log"
	fi
done
jq -e -s '.[2] | .method == "GET" and .status == 200 and
     .path == "/v2/projects/tpuctl-emu/locations/us-central2-b/nodes" and
     .headers.Authorization == "Bearer <redacted>" and
     .headers.Cookie == "<redacted>" and
     .headers["Proxy-Authorization"] == "Basic <redacted>" and
     .query == "access_token=<redacted>&pageSize=5" and
     .fault == null and (.duration_ms | type) == "number" and
     (.ts | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\\.[0-9]{9}Z$"))' \
    "$L" >/dev/null || fail "log line 3: $(sed -n 3p "$L")"
jq -e -s '.[0] | .method == "POST" and .path == "/token" and .status == 200 and
     .request_bytes > 0 and .response_bytes > 0' "$L" >/dev/null ||
    fail "log line 1: $(sed -n 1p "$L")"
jq -e -s '.[3] | .status == 404 and .query == "refresh_token=<redacted>"' \
    "$L" >/dev/null || fail "log line 4: $(sed -n 4p "$L")"
