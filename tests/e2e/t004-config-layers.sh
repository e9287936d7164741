#!/bin/sh
# Configuration precedence, layer by layer, as "config get/list" report it:
# flag > TPUCTL_* > CLOUDSDK_* > aliases > tpuctl's file (profile, then
# default sections) > gcloud's active configuration > default.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

unset CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE TPUCTL_CA_BUNDLE \
    CLOUDSDK_ACTIVE_CONFIG_NAME TPUCTL_COMPUTE_ZONE 2>/dev/null || true
CFG="$XDG_CONFIG_HOME/tpuctl/config"
GC="$T/gcloud"

# get_zone VALUE SOURCE-REGEX [tpuctl args...]: config get compute/zone.
get_zone() {
	zwant=$1
	zsrc=$2
	shift 2
	expect_rc 0 "$TPUCTL" "$@" config get compute/zone
	[ "$(cat "$T/out")" = "$zwant" ] ||
	    fail "compute/zone is '$(cat "$T/out")', want '$zwant'"
	expect_rc 0 "$TPUCTL" "$@" config get compute/zone --format json
	jq -e --arg s "$zsrc" '.source | test($s)' "$T/out" >/dev/null ||
	    fail "source $(jq .source "$T/out") does not match '$zsrc'"
}

# Nothing set: exit 4 with a message; defaults come from "default".
expect_rc 4 "$TPUCTL" config get compute/zone
assert_grep '^tpuctl: compute/zone is not set$' "$T/err"
[ ! -s "$T/out" ] || fail "stdout not empty for an unset key"
expect_rc 0 "$TPUCTL" config get core/log_http --format json
[ "$(jq -r .source "$T/out")" = default ] || fail "core/log_http not default"
[ "$(jq -r .value "$T/out")" = false ] || fail "core/log_http not false"

# Layer 5: gcloud's active configuration (active_config names it).
mkdir -p "$GC/configurations"
printf 'other\n' >"$GC/active_config"
printf '[core]\nproject = gc-project\naccount = a@b.c\n[compute]\nzone = asia-east1-c\n' \
    >"$GC/configurations/config_other"
printf '[compute]\nzone = us-west4-a\n' >"$GC/configurations/config_default"
export CLOUDSDK_CONFIG="$GC"
get_zone asia-east1-c "^gcloud configuration other \\("
expect_rc 0 "$TPUCTL" config get core/project
[ "$(cat "$T/out")" = gc-project ] || fail "gcloud project not read"
export CLOUDSDK_ACTIVE_CONFIG_NAME=default
get_zone us-west4-a "^gcloud configuration default"
unset CLOUDSDK_ACTIVE_CONFIG_NAME
expect_rc 0 env CLOUDSDK_ACTIVE_CONFIG_NAME=../../etc "$TPUCTL" config list
assert_grep "gcloud configuration ignored: invalid name" "$T/err"

# Layer 4: tpuctl's file beats gcloud; the profile beats the defaults.
expect_rc 0 "$TPUCTL" config set compute/zone us-central2-b
get_zone us-central2-b "^file $CFG\$"
expect_rc 0 "$TPUCTL" --profile ci config set compute/zone europe-west4-a
get_zone europe-west4-a "^file $CFG \\[profile ci\\]\$" --profile ci
export TPUCTL_PROFILE=ci
get_zone europe-west4-a "profile ci"
unset TPUCTL_PROFILE
expect_rc 0 "$TPUCTL" config set core/profile ci
get_zone europe-west4-a "profile ci"
get_zone us-central2-b "^file $CFG\$" --profile default
expect_rc 0 "$TPUCTL" config unset core/profile
# Keys a profile does not set fall back to the default sections.
expect_rc 0 "$TPUCTL" config set core/project file-project
expect_rc 0 "$TPUCTL" --profile ci config get core/project
[ "$(cat "$T/out")" = file-project ] || fail "profile did not fall back"
# An undefined profile is a warning, not an error.
expect_rc 0 "$TPUCTL" --profile nosuch config get compute/zone
assert_grep "profile 'nosuch' is not defined" "$T/err"
expect_rc 2 "$TPUCTL" --profile 'a/b' config list
assert_grep "invalid core/profile 'a/b'" "$T/err"

# Layer 3: the environment; TPUCTL_ beats CLOUDSDK_; the flag beats both.
export CLOUDSDK_COMPUTE_ZONE=us-east1-d
get_zone us-east1-d "^env CLOUDSDK_COMPUTE_ZONE\$"
export TPUCTL_COMPUTE_ZONE=us-east5-b
get_zone us-east5-b "^env TPUCTL_COMPUTE_ZONE\$"
get_zone me-west1-a "^flag --zone\$" --zone me-west1-a
get_zone me-west1-a "^flag --zone\$" --zone=me-west1-a
unset TPUCTL_COMPUTE_ZONE
# An empty variable is ignored.
export CLOUDSDK_COMPUTE_ZONE=''
get_zone us-central2-b "^file "
unset CLOUDSDK_COMPUTE_ZONE

# Aliases.
expect_rc 0 env STORAGE_EMULATOR_HOST=http://127.0.0.1:9 "$TPUCTL" \
    config get api_endpoint_overrides/storage --format json
[ "$(jq -r .value "$T/out")" = http://127.0.0.1:9 ] || fail "alias value"
[ "$(jq -r .source "$T/out")" = "env STORAGE_EMULATOR_HOST" ] ||
    fail "alias source"
expect_rc 0 env CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE=http://127.0.0.1:7/ \
    STORAGE_EMULATOR_HOST=http://127.0.0.1:9 "$TPUCTL" \
    config get api_endpoint_overrides/storage
[ "$(cat "$T/out")" = http://127.0.0.1:7/ ] ||
    fail "CLOUDSDK_ must beat the STORAGE_EMULATOR_HOST alias"
for pair in TPUCTL_CA_BUNDLE=core/custom_ca_certs_file \
    TPUCTL_ACCESS_TOKEN_FILE=auth/access_token_file \
    TPUCTL_PROFILE=core/profile; do
	var=${pair%%=*}
	key=${pair#*=}
	env "$var=xyz" "$TPUCTL" config get "$key" --format json \
	    >"$T/out" 2>"$T/err" || fail "$var: config get $key failed"
	[ "$(jq -r .source "$T/out")" = "env $var" ] ||
	    fail "$var does not set $key"
done
expect_rc 0 "$TPUCTL" --ca-file /x/ca.pem --access-token-file /x/tok \
    --impersonate-service-account sa@p.iam.gserviceaccount.com \
    --project flag-project config list --format json
for k in core/custom_ca_certs_file auth/access_token_file \
    auth/impersonate_service_account core/project; do
	jq -e --arg k "$k" '.[] | select(.key == $k) |
	    .source | startswith("flag --")' "$T/out" >/dev/null ||
	    fail "$k not from its flag"
done

# Bad values in flags and the environment: exit 2 before anything else.
expect_rc 2 "$TPUCTL" --zone us-central2 config list
assert_grep "^tpuctl: flag --zone: invalid compute/zone 'us-central2'" "$T/err"
expect_rc 2 env CLOUDSDK_CORE_PROJECT=Bad_Project "$TPUCTL" version
assert_grep "env CLOUDSDK_CORE_PROJECT: invalid core/project 'Bad_Project'" \
    "$T/err"
expect_rc 2 env TPUCTL_SSH_FANOUT=0 "$TPUCTL" version
assert_grep "from 1 to 1024" "$T/err"

# list: every key with a value and its source; --all adds the unset ones.
expect_rc 0 "$TPUCTL" config list
assert_grep '^KEY +VALUE +SOURCE$' "$T/out"
assert_grep "^compute/zone +us-central2-b +file $CFG\$" "$T/out"
assert_no_grep '^ssh/user' "$T/out"
expect_rc 0 "$TPUCTL" config list --all --format json
[ "$(jq length "$T/out")" -ge 14 ] || fail "list --all is short"
jq -e '.[] | select(.key == "ssh/user") | .value == null' "$T/out" \
    >/dev/null || fail "ssh/user should be listed as null"
