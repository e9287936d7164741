#!/bin/sh
# OAuth2 token grants against the emulator with every credential file it
# writes: a service-account JWT signed here with openssl, refresh tokens,
# STS token exchange, impersonation; then 401/403 on the API routes.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

emu_start --set auth.projects=extra-proj-1
U=$TPUCTL_EMULATOR_URL
SA="$EMU_DIR/service-account.json"

b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }

# jwt IAT EXP [AUD] [SCOPE]: a JWT signed with the service-account key.
jwt() {
	jq -r .private_key "$SA" >"$T/key.pem"
	kid=$(jq -r .private_key_id "$SA")
	iss=$(jq -r .client_email "$SA")
	aud=${3:-$U/token}
	scope=${4-https://www.googleapis.com/auth/cloud-platform}
	h=$(printf '{"alg":"RS256","typ":"JWT","kid":"%s"}' "$kid" | b64url)
	if [ -n "$scope" ]; then
		p=$(printf '{"iss":"%s","scope":"%s","aud":"%s","iat":%s,"exp":%s}' \
		    "$iss" "$scope" "$aud" "$1" "$2" | b64url)
	else
		p=$(printf '{"iss":"%s","aud":"%s","iat":%s,"exp":%s}' \
		    "$iss" "$aud" "$1" "$2" | b64url)
	fi
	s=$(printf '%s.%s' "$h" "$p" | openssl dgst -sha256 -sign "$T/key.pem" | b64url)
	printf '%s.%s.%s' "$h" "$p" "$s"
}

# post_token URL ARGS...: POST a form; body in $T/body, status echoed.
post_form() {
	url=$1
	shift
	curl -s -o "$T/body" -w '%{http_code}' "$@" "$url"
}

api="$U/v2/projects/$CLOUDSDK_CORE_PROJECT/locations/$CLOUDSDK_COMPUTE_ZONE/nodes"

# 1. Service account JWT bearer grant.
now=$(date +%s)
a=$(jwt "$now" $((now + 3600)))
code=$(post_form "$U/token" \
    --data-urlencode "grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer" \
    --data-urlencode "assertion=$a")
[ "$code" = 200 ] || fail "jwt grant gave $code: $(cat "$T/body")"
jq -e '.token_type == "Bearer" and .expires_in == 3599 and
     (.access_token | startswith("ya29.emu-"))' "$T/body" >/dev/null ||
    fail "jwt grant body: $(cat "$T/body")"
tok=$(jq -r .access_token "$T/body")
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $tok" "$api")
case $code in 401 | 403) fail "SA token rejected ($code)" ;; esac

# Bad JWTs: too long-lived, in the future, expired, wrong audience,
# no scope, tampered signature.
for pair in "$now $((now + 7200))" "$((now + 1000)) $((now + 2000))" \
    "$((now - 7200)) $((now - 3700))"; do
	# shellcheck disable=SC2086
	a=$(jwt $pair)
	code=$(post_form "$U/token" \
	    --data-urlencode "grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer" \
	    --data-urlencode "assertion=$a")
	[ "$code" = 400 ] || fail "bad iat/exp ($pair) gave $code"
	jq -e '.error == "invalid_grant" and (.error_description |
	     startswith("Invalid JWT: Token must be a short-lived token (60 minutes)"))' \
	    "$T/body" >/dev/null || fail "iat/exp error: $(cat "$T/body")"
done
a=$(jwt "$now" $((now + 600)) "https://evil.example/token")
code=$(post_form "$U/token" --data-urlencode "grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer" --data-urlencode "assertion=$a")
[ "$code" = 400 ] || fail "wrong aud gave $code"
assert_grep invalid_grant "$T/body"
a=$(jwt "$now" $((now + 600)) "$U/token" "")
code=$(post_form "$U/token" --data-urlencode "grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer" --data-urlencode "assertion=$a")
[ "$code" = 400 ] || fail "no scope gave $code"
assert_grep invalid_scope "$T/body"
a=$(jwt "$now" $((now + 600)))
# Flip the first character of the signature (the last one may only
# carry padding bits).
hp=${a%.*}
sig=${a##*.}
first=$(printf %s "$sig" | cut -c1)
rest=$(printf %s "$sig" | cut -c2-)
if [ "$first" = A ]; then first=B; else first=A; fi
a="$hp.$first$rest"
code=$(post_form "$U/token" --data-urlencode "grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer" --data-urlencode "assertion=$a")
[ "$code" = 400 ] || fail "tampered JWT gave $code"
assert_grep "Invalid JWT Signature" "$T/body"
code=$(post_form "$U/token" --data-urlencode "grant_type=password")
[ "$code" = 400 ] || fail "unknown grant gave $code"
assert_grep unsupported_grant_type "$T/body"

# 2. Refresh token (authorized_user), also the impersonated SA's source.
AU="$EMU_DIR/authorized-user.json"
code=$(post_form "$U/token" --data-urlencode grant_type=refresh_token \
    --data-urlencode "client_id=$(jq -r .client_id "$AU")" \
    --data-urlencode "client_secret=$(jq -r .client_secret "$AU")" \
    --data-urlencode "refresh_token=$(jq -r .refresh_token "$AU")")
[ "$code" = 200 ] || fail "refresh grant gave $code: $(cat "$T/body")"
utok=$(jq -r .access_token "$T/body")
code=$(post_form "$U/token" --data-urlencode grant_type=refresh_token \
    --data-urlencode "client_id=$(jq -r .client_id "$AU")" \
    --data-urlencode "client_secret=wrong" \
    --data-urlencode "refresh_token=$(jq -r .refresh_token "$AU")")
[ "$code" = 401 ] || fail "wrong client secret gave $code"
assert_grep invalid_client "$T/body"
code=$(post_form "$U/token" --data-urlencode grant_type=refresh_token \
    --data-urlencode "client_id=$(jq -r .client_id "$AU")" \
    --data-urlencode "client_secret=$(jq -r .client_secret "$AU")" \
    --data-urlencode "refresh_token=1//revoked")
[ "$code" = 400 ] || fail "wrong refresh token gave $code"
assert_grep invalid_grant "$T/body"

# impersonated_service_account: source token -> generateAccessToken.
IMP="$EMU_DIR/impersonated-service-account.json"
src=$(jq -r .source_credentials.refresh_token "$IMP")
[ "$src" = "$(jq -r .refresh_token "$AU")" ] || fail "impersonation source"
iurl=$(jq -r .service_account_impersonation_url "$IMP")
code=$(curl -s -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $utok" \
    -H 'Content-Type: application/json' \
    -d '{"scope":["https://www.googleapis.com/auth/cloud-platform"],"lifetime":"600s"}' "$iurl")
[ "$code" = 200 ] || fail "generateAccessToken gave $code: $(cat "$T/body")"
jq -e '(.accessToken | startswith("ya29.emu-")) and
     (.expireTime | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$"))' \
    "$T/body" >/dev/null || fail "generateAccessToken body: $(cat "$T/body")"
itok=$(jq -r .accessToken "$T/body")
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $itok" "$api")
[ "$code" != 401 ] || fail "impersonated token rejected"
code=$(curl -s -o /dev/null -w '%{http_code}' \
    -d '{"scope":["x"]}' "$iurl")
[ "$code" = 401 ] || fail "generateAccessToken without a token gave $code"

# 3. STS (external_account, and the impersonating variant).
EA="$EMU_DIR/external-account.json"
code=$(post_form "$(jq -r .token_url "$EA")" \
    --data-urlencode "grant_type=urn:ietf:params:oauth:grant-type:token-exchange" \
    --data-urlencode "audience=$(jq -r .audience "$EA")" \
    --data-urlencode "subject_token_type=$(jq -r .subject_token_type "$EA")" \
    --data-urlencode "requested_token_type=urn:ietf:params:oauth:token-type:access_token" \
    --data-urlencode "scope=https://www.googleapis.com/auth/cloud-platform" \
    --data-urlencode "subject_token=$(cat "$(jq -r .credential_source.file "$EA")")")
[ "$code" = 200 ] || fail "STS gave $code: $(cat "$T/body")"
jq -e '.issued_token_type == "urn:ietf:params:oauth:token-type:access_token" and
     .token_type == "Bearer" and .expires_in > 0' "$T/body" >/dev/null ||
    fail "STS body: $(cat "$T/body")"
stok=$(jq -r .access_token "$T/body")
# The JSON form of the same request (sts.v1 accepts both).
jq -n --arg a "$(jq -r .audience "$EA")" --arg s "$(cat "$EMU_DIR/subject-token")" \
    '{grantType: "x", grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
      audience: $a, subject_token_type: "urn:ietf:params:oauth:token-type:jwt",
      subject_token: $s}' >"$T/sts.json"
code=$(curl -s -o "$T/body" -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary @"$T/sts.json" "$U/v1/token")
[ "$code" = 200 ] || fail "STS (JSON) gave $code: $(cat "$T/body")"
code=$(post_form "$U/v1/token" \
    --data-urlencode "grant_type=urn:ietf:params:oauth:grant-type:token-exchange" \
    --data-urlencode "audience=$(jq -r .audience "$EA")" \
    --data-urlencode "subject_token_type=urn:ietf:params:oauth:token-type:jwt" \
    --data-urlencode "subject_token=forged")
[ "$code" = 400 ] || fail "forged subject token gave $code"
assert_grep invalid_grant "$T/body"
code=$(post_form "$U/v1/token" \
    --data-urlencode "grant_type=urn:ietf:params:oauth:grant-type:token-exchange" \
    --data-urlencode "audience=//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/x/providers/y" \
    --data-urlencode "subject_token_type=urn:ietf:params:oauth:token-type:jwt" \
    --data-urlencode "subject_token=$(cat "$EMU_DIR/subject-token")")
[ "$code" = 400 ] || fail "wrong audience gave $code"
EAI="$EMU_DIR/external-account-impersonate.json"
code=$(curl -s -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $stok" \
    -H 'Content-Type: application/json' \
    -d '{"scope":["https://www.googleapis.com/auth/cloud-platform"]}' \
    "$(jq -r .service_account_impersonation_url "$EAI")")
[ "$code" = 200 ] || fail "STS + impersonation gave $code: $(cat "$T/body")"
code=$(curl -s -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $stok" \
    -H 'Content-Type: application/json' -d '{"scope":["x"]}' \
    "$U/v1/projects/-/serviceAccounts/nobody@x.iam.gserviceaccount.com:generateAccessToken")
[ "$code" = 404 ] || fail "unknown SA gave $code"

# 4. The long-lived access-token file.
atok=$(cat "$TPUCTL_EMULATOR_ACCESS_TOKEN_FILE")
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $atok" "$api")
[ "$code" != 401 ] || fail "access-token file rejected"

# 5. 401 without or with a bad token, with WWW-Authenticate.
code=$(curl -s -D "$T/hdr" -o "$T/body" -w '%{http_code}' "$api")
[ "$code" = 401 ] || fail "no token gave $code"
assert_grep '^WWW-Authenticate: Bearer realm="https://accounts.google.com/"' "$T/hdr"
jq -e '.error.status == "UNAUTHENTICATED"' "$T/body" >/dev/null || fail "401 body"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer ya29.emu-forged" "$api")
[ "$code" = 401 ] || fail "forged token gave $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Basic Zm9vOmJhcg==" "$api")
[ "$code" = 401 ] || fail "basic auth gave $code"

# 6. 403 for a project that is not ours; --set auth.projects adds one.
code=$(curl -s -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $tok" \
    "$U/v2/projects/someone-else/locations/us-central2-b/nodes")
[ "$code" = 403 ] || fail "other project gave $code"
jq -e '.error.status == "PERMISSION_DENIED" and
     (.error.message | contains("someone-else"))' "$T/body" >/dev/null ||
    fail "403 body: $(cat "$T/body")"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $tok" \
    "$U/v2/projects/extra-proj-1/locations/us-central2-b/nodes")
case $code in 401 | 403) fail "auth.projects project gave $code" ;; esac

# 7. Token endpoint faults (A13): 500, then the grant works again.
emu_inject return-500 --path /token --method POST
code=$(post_form "$U/token" --data-urlencode grant_type=refresh_token \
    --data-urlencode "client_id=$(jq -r .client_id "$AU")" \
    --data-urlencode "client_secret=$(jq -r .client_secret "$AU")" \
    --data-urlencode "refresh_token=$(jq -r .refresh_token "$AU")")
[ "$code" = 500 ] || fail "token fault gave $code"
code=$(post_form "$U/token" --data-urlencode grant_type=refresh_token \
    --data-urlencode "client_id=$(jq -r .client_id "$AU")" \
    --data-urlencode "client_secret=$(jq -r .client_secret "$AU")" \
    --data-urlencode "refresh_token=$(jq -r .refresh_token "$AU")")
[ "$code" = 200 ] || fail "token after the fault gave $code"

# Methods: GET /token is 405.
code=$(curl -s -o /dev/null -w '%{http_code}' "$U/token")
[ "$code" = 405 ] || fail "GET /token gave $code"
