#!/bin/sh
# Every credential source of the chain obtains a token from the emulator
# and makes an authenticated call: service_account (JWT bearer),
# authorized_user, external_account (STS, with and without impersonation),
# impersonated_service_account, the gcloud ADC file, an access-token file,
# the metadata server, and --impersonate-service-account on top of one.
# Without any source, "no credentials found" names what was tried (EC 3).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
P=$CLOUDSDK_CORE_PROJECT
SA_FILE=$GOOGLE_APPLICATION_CREDENTIALS
unset GOOGLE_APPLICATION_CREDENTIALS
METADATA=$GCE_METADATA_HOST
export GCE_METADATA_HOST=127.0.0.1:9

# call WHAT TYPE: auth list names TYPE, a token comes out, the API answers.
call() {
	expect_rc 0 "$TPUCTL" auth list --format json
	jq -e --arg t "$2" '.type == $t' "$T/out" >/dev/null ||
	    fail "$1: auth list type is not $2: $(cat "$T/out")"
	expect_rc 0 "$TPUCTL" auth print-access-token
	grep -Eq '^[A-Za-z0-9._~+/-]+=*$' "$T/out" || fail "$1: token '$(cat "$T/out")'"
	expect_rc 0 "$TPUCTL" api "v2/projects/$P/locations" --format json
	jq -e '.locations | length > 0' "$T/out" >/dev/null ||
	    fail "$1: no locations: $(cat "$T/out")"
	"$TPUCTL" auth revoke >/dev/null
}

for f in service-account authorized-user external-account \
    external-account-impersonate impersonated-service-account; do
	case $f in
	service-account) type=service_account ;;
	authorized-user) type=authorized_user ;;
	impersonated-*) type=impersonated_service_account ;;
	*) type=external_account ;;
	esac
	GOOGLE_APPLICATION_CREDENTIALS="$EMU_DIR/$f.json" call "$f" "$type"
done

# The service account signed a JWT: the emulator saw the bearer grant.
emu_requests | jq -r 'select(.path == "/token") | .status' | grep -q 200 ||
    fail "no successful POST /token"
emu_requests | jq -r 'select(.path == "/v1/token") | .status' | grep -q 200 ||
    fail "no successful STS exchange"
emu_requests | jq -r 'select(.path | test(":generateAccessToken$")) | .status' |
    grep -q 200 || fail "no successful generateAccessToken"

# external_account with a URL-sourced subject token, as text and as JSON
# (credential_source.url, headers, format.subject_token_field_name).
mkdir "$T/www"
cp "$EMU_DIR/subject-token" "$T/www/text"
jq -Rn --arg t "$(cat "$EMU_DIR/subject-token")" '{id_token: $t}' >"$T/www/json"
wport=$((20000 + ($$ + 7) % 20000))
timeout 60 python3 -m http.server --bind 127.0.0.1 --directory "$T/www" "$wport" \
    >"$T/www.log" 2>&1 &
wpid=$!
i=0
until curl -sf -o /dev/null "http://127.0.0.1:$wport/text"; do
	i=$((i + 1))
	[ $i -lt 50 ] || fail "python http.server did not start"
	sleep 0.1
done
jq --arg u "http://127.0.0.1:$wport/text" \
    '.credential_source = {url: $u, headers: {"Metadata": "True"}}' \
    "$EMU_DIR/external-account.json" >"$T/ext-url-text.json"
jq --arg u "http://127.0.0.1:$wport/json" \
    '.credential_source = {url: $u, format: {type: "json", subject_token_field_name: "id_token"}}' \
    "$EMU_DIR/external-account.json" >"$T/ext-url-json.json"
GOOGLE_APPLICATION_CREDENTIALS="$T/ext-url-text.json" call ext-url-text external_account
GOOGLE_APPLICATION_CREDENTIALS="$T/ext-url-json.json" call ext-url-json external_account
grep -q 'GET /json' "$T/www.log" || fail "the JSON subject token URL was not read"
jq '.credential_source.format.subject_token_field_name = "nope"' \
    "$T/ext-url-json.json" >"$T/ext-bad.json"
expect_rc 3 env GOOGLE_APPLICATION_CREDENTIALS="$T/ext-bad.json" "$TPUCTL" auth print-access-token
assert_grep "no field 'nope'" "$T/err"
kill "$wpid" 2>/dev/null || true

# gcloud's ADC file, found through CLOUDSDK_CONFIG.
mkdir -p "$T/gcloud"
cp "$EMU_DIR/authorized-user.json" "$T/gcloud/application_default_credentials.json"
CLOUDSDK_CONFIG="$T/gcloud" call adc authorized_user
expect_rc 0 env CLOUDSDK_CONFIG="$T/gcloud" "$TPUCTL" auth list
assert_grep 'application_default_credentials.json' "$T/out"

# An access-token file wins over everything else, and is never cached.
expect_rc 0 env GOOGLE_APPLICATION_CREDENTIALS="$SA_FILE" \
    "$TPUCTL" --access-token-file "$EMU_DIR/access-token" auth list --format json
jq -e '.type == "access_token_file"' "$T/out" >/dev/null || fail "token file not first"
TPUCTL_ACCESS_TOKEN_FILE="$EMU_DIR/access-token" call token-file access_token_file
[ ! -d "$XDG_CACHE_HOME/tpuctl/tokens" ] ||
    [ -z "$(ls "$XDG_CACHE_HOME/tpuctl/tokens")" ] || fail "token file cached"

# The metadata server.
GCE_METADATA_HOST=$METADATA call metadata metadata_server
emu_requests | jq -r 'select(.path | test("service-accounts/default/token")) | .headers["Metadata-Flavor"]' |
    grep -qx Google || fail "metadata request without Metadata-Flavor"

# --impersonate-service-account wraps another source via iamcredentials.
export CLOUDSDK_API_ENDPOINT_OVERRIDES_IAMCREDENTIALS="$TPUCTL_EMULATOR_URL/"
n0=$(emu_requests | grep -c 'generateAccessToken' || true)
GOOGLE_APPLICATION_CREDENTIALS="$EMU_DIR/authorized-user.json" \
    call impersonate authorized_user
expect_rc 0 env GOOGLE_APPLICATION_CREDENTIALS="$EMU_DIR/authorized-user.json" \
    "$TPUCTL" --impersonate-service-account "$TPUCTL_EMULATOR_SA_EMAIL" \
    api "v2/projects/$P/locations"
n1=$(emu_requests | grep -c 'generateAccessToken' || true)
[ "$n1" -eq $((n0 + 1)) ] || fail "impersonation: $n0 -> $n1 generateAccessToken calls"

# Nothing anywhere: a fast, clear failure listing the chain.
start=$(date +%s)
expect_rc 3 "$TPUCTL" auth print-access-token
[ $(($(date +%s) - start)) -le 5 ] || fail "no-credentials took too long"
assert_grep 'no credentials found' "$T/err"
assert_grep 'GOOGLE_APPLICATION_CREDENTIALS' "$T/err"
assert_grep 'metadata server' "$T/err"
[ ! -s "$T/out" ] || fail "stdout not empty on failure"

# A broken credentials file is an error naming it, not a fall-through.
echo '{"type": "service_account"}' >"$T/bad.json"
expect_rc 3 env GOOGLE_APPLICATION_CREDENTIALS="$T/bad.json" "$TPUCTL" auth list
assert_grep "bad.json.*client_email" "$T/err"
