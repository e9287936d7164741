#!/bin/sh
# tpuctl-emulator serve: the env file, "env", the state dir layout and
# modes, loopback-only --listen, unknown paths as Google 404 JSON.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# Refused before anything starts: non-loopback and malformed addresses.
expect_rc 2 "$EMULATOR" serve --state-dir "$T/x" --listen 10.1.2.3:0
assert_grep "only loopback" "$T/err"
expect_rc 2 "$EMULATOR" serve --state-dir "$T/x" --listen 0.0.0.0:8080
expect_rc 2 "$EMULATOR" serve --state-dir "$T/x" --listen 127.0.0.1:70000
assert_grep "invalid --listen '127.0.0.1:70000'" "$T/err"
expect_rc 2 "$EMULATOR" serve --state-dir "$T/x" --project BAD_P
assert_grep "invalid --project 'BAD_P'" "$T/err"
expect_rc 2 "$EMULATOR" serve --state-dir "$T/x" --set novalue
assert_grep "invalid --set 'novalue'" "$T/err"
expect_rc 2 "$EMULATOR" serve
expect_rc 2 "$EMULATOR" frobnicate
expect_rc 1 "$EMULATOR" env --state-dir "$T/nothing-here"
assert_grep "is the emulator running" "$T/err"

emu_start --project my-emu-proj --zone europe-west4-a
port=${TPUCTL_EMULATOR_URL##*:}
[ "$TPUCTL_EMULATOR_URL" = "http://127.0.0.1:$port" ] ||
    fail "TPUCTL_EMULATOR_URL=$TPUCTL_EMULATOR_URL"
[ "$CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU" = "http://127.0.0.1:$port/" ] ||
    fail "TPU override $CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU"
[ "$STORAGE_EMULATOR_HOST" = "http://127.0.0.1:$port" ] ||
    fail "STORAGE_EMULATOR_HOST=$STORAGE_EMULATOR_HOST"
[ "$GCE_METADATA_HOST" = "127.0.0.1:$port" ] ||
    fail "GCE_METADATA_HOST=$GCE_METADATA_HOST"
[ "$GOOGLE_APPLICATION_CREDENTIALS" = "$(cd "$EMU_DIR" && pwd -P)/service-account.json" ] ||
    fail "GOOGLE_APPLICATION_CREDENTIALS=$GOOGLE_APPLICATION_CREDENTIALS"
[ "$CLOUDSDK_CORE_PROJECT" = my-emu-proj ] || fail "project"
[ "$CLOUDSDK_COMPUTE_ZONE" = europe-west4-a ] || fail "zone"
assert_no_grep TPUCTL_CA_BUNDLE "$EMU_DIR/env"

# "env" prints the same file.
expect_rc 0 "$EMULATOR" env --state-dir "$EMU_DIR"
cmp -s "$T/out" "$EMU_DIR/env" || fail "env output differs from DIR/env"

# The pid file names the running server.
[ "$(cat "$EMU_DIR/emulator.pid")" = "$EMU_PID" ] || fail "emulator.pid"

# Credential files exist and are private.
for f in service-account.json authorized-user.json subject-token \
    external-account.json external-account-impersonate.json \
    impersonated-service-account.json access-token; do
	[ -s "$EMU_DIR/$f" ] || fail "missing $f"
	[ "$(stat -c %a "$EMU_DIR/$f")" = 600 ] || fail "$f is not 0600"
done
jq -e --arg u "$TPUCTL_EMULATOR_URL/token" \
    '.type == "service_account" and .token_uri == $u and
     .client_email == "emu-sa@my-emu-proj.iam.gserviceaccount.com" and
     (.private_key | startswith("-----BEGIN PRIVATE KEY-----")) and
     .project_id == "my-emu-proj"' \
    "$EMU_DIR/service-account.json" >/dev/null || fail "service-account.json"
jq -e '.type == "authorized_user" and .refresh_token != null and
     .quota_project_id == "my-emu-proj"' \
    "$EMU_DIR/authorized-user.json" >/dev/null || fail "authorized-user.json"
jq -e --arg u "$TPUCTL_EMULATOR_URL/v1/token" --arg f "$(cd "$EMU_DIR" && pwd -P)/subject-token" \
    '.type == "external_account" and .token_url == $u and
     .credential_source.file == $f and
     .subject_token_type == "urn:ietf:params:oauth:token-type:jwt" and
     (.audience | test("^//iam.googleapis.com/projects/[0-9]+/locations/global/workloadIdentityPools/emu-pool/providers/emu-provider$"))' \
    "$EMU_DIR/external-account.json" >/dev/null || fail "external-account.json"
jq -e '.service_account_impersonation_url |
     endswith("/v1/projects/-/serviceAccounts/emu-sa@my-emu-proj.iam.gserviceaccount.com:generateAccessToken")' \
    "$EMU_DIR/external-account-impersonate.json" >/dev/null ||
    fail "external-account-impersonate.json"
jq -e '.type == "impersonated_service_account" and
     .source_credentials.type == "authorized_user" and .delegates == []' \
    "$EMU_DIR/impersonated-service-account.json" >/dev/null ||
    fail "impersonated-service-account.json"

# Unknown paths: Google's error JSON.
code=$(curl -s -o "$T/body" -w '%{http_code}' "$TPUCTL_EMULATOR_URL/no/such/api")
[ "$code" = 404 ] || fail "unknown path gave $code"
jq -e '.error.code == 404 and .error.status == "NOT_FOUND" and
     .error.errors[0].reason == "notFound" and
     .error.errors[0].domain == "global"' "$T/body" >/dev/null ||
    fail "404 body is not Google's error shape"

# Control endpoint health.
curl -sf "$TPUCTL_EMULATOR_URL/_emulator/health" | jq -e '.status == "ok"' \
    >/dev/null || fail "health"
