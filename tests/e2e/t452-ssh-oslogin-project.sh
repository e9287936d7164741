#!/bin/sh
# Issue 17: OS Login turned on for the whole project (commonInstanceMetadata
# enable-oslogin=TRUE, read through Compute projects.get, as gcloud does):
# a node without the key is an OS Login node: ssh --worker=all logs in as
# the profile's POSIX user on every worker, no ssh-keys PATCH; --dry-run
# names the project; the project is read once per invocation; the node's
# own enable-oslogin=FALSE overrides the project's TRUE (metadata keys,
# no Compute call); a Compute 403 is one line at -v and the metadata keys.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_tpu.sh
. "$(dirname "$0")/lib_tpu.sh"
emu_start --set tpu.create_ms=50 --set tpu.update_ms=0 \
    --set fleet.key_delay_ms=200
tpu_setup
EMAIL=$TPUCTL_EMULATOR_SA_EMAIL
KEY="$T/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$KEY" || fail "ssh-keygen failed"
ncompute() { emu_requests | grep -c '"/compute/v1/projects/' || true; }

# the emulator's projects.get: no items yet, then the project's metadata
api GET "/compute/v1/projects/$PROJECT"
[ "$CODE" = 200 ] || fail "projects.get: HTTP $CODE"
jq -e '.commonInstanceMetadata.kind == "compute#metadata" and
    (.commonInstanceMetadata | has("items") | not)' "$T/resp" >/dev/null ||
    fail "projects.get: $(cat "$T/resp")"
emu_event '{"event":"project-metadata","metadata":{"enable-oslogin":"TRUE"}}'
[ "$CODE" = 200 ] || fail "project-metadata event: HTTP $CODE $(cat "$T/resp")"
api GET "/compute/v1/projects/$PROJECT"
jq -e '.commonInstanceMetadata.items == [{"key":"enable-oslogin","value":"TRUE"}]' \
    "$T/resp" >/dev/null || fail "project metadata: $(cat "$T/resp")"
api GET "/compute/v1/projects/other-project"
[ "$CODE" = 403 ] || [ "$CODE" = 404 ] || fail "another project: HTTP $CODE"

# a node without the key, booted in the OS Login project
expect_rc 0 "$TPUCTL" create o1 --accelerator-type v4-16
expect_rc 0 "$TPUCTL" create o2 --accelerator-type v4-8 \
    --metadata enable-oslogin=FALSE
n0=$(ncompute)
expect_rc 0 "$TPUCTL" --dry-run ssh o1 --worker=all --ssh-key-file "$KEY" -- id -un
assert_grep "^would import $KEY.pub into the OS Login profile of $EMAIL \(project '$PROJECT' has enable-oslogin=TRUE\) and log in as its POSIX user\$" "$T/out"
[ "$(emu_requests | grep -c importSshPublicKey || true)" -eq 0 ] ||
    fail "--dry-run imported a key"
expect_rc 0 "$TPUCTL" ssh o1 --worker=all --ssh-key-file "$KEY" -- id -un
[ "$(ncompute)" -eq $((n0 + 2)) ] ||
    fail "not one projects.get per invocation: $n0 -> $(ncompute)"
curl -sf -H "Authorization: Bearer $(cat "$EMU_DIR/access-token")" \
    "$TPUCTL_EMULATOR_URL/v1/users/$EMAIL/loginProfile" >"$T/prof" ||
    fail "loginProfile failed"
U=$(jq -r '.posixAccounts[] | select(.primary) | .username' "$T/prof")
[ -n "$U" ] || fail "no primary POSIX account: $(cat "$T/prof")"
assert_grep "^\[w0\] $U\$" "$T/out"
assert_grep "^\[w1\] $U\$" "$T/out"
emu_tpu_mutations | jq -e '[.[] | select(.[0] == "PATCH")] | length == 0' \
    >/dev/null || fail "an OS Login node was patched: $(emu_tpu_mutations)"
expect_rc 0 "$TPUCTL" describe o1 --format json
jq -e '.metadata["ssh-keys"] == null' "$T/out" >/dev/null ||
    fail "ssh-keys written to o1: $(jq -c .metadata "$T/out")"

# the node's FALSE wins over the project's TRUE: metadata keys, no Compute
n0=$(ncompute)
expect_rc 0 "$TPUCTL" ssh o2 --ssh-key-file "$KEY" -- id -un
assert_grep "^\[w0\] $(id -un)\$" "$T/out"
expect_rc 0 "$TPUCTL" describe o2 --format 'value(metadata.ssh-keys)'
grep -qF "$(cut -d' ' -f2 "$KEY.pub")" "$T/out" || fail "key not in ssh-keys: $(cat "$T/out")"
[ "$(ncompute)" -eq "$n0" ] || fail "project read for a node that decides"

# Compute 403 (API disabled, permission missing): one line at -v, then
# the project is taken as OS Login off: the metadata-keys path (which
# the OS Login workers of o1 then refuse: authentication fails)
emu_event '{"event":"project-metadata","metadata":{}}'
expect_rc 0 "$TPUCTL" create o3 --accelerator-type v4-8
emu_inject --count 1 --path /compute/ return-403
expect_rc 0 "$TPUCTL" -v ssh o3 --ssh-key-file "$KEY" -- id -un
assert_grep "^\[w0\] $(id -un)\$" "$T/out"
assert_grep "cannot read project $PROJECT's metadata \(Compute projects.get: .*\): taking OS Login as off for the project" "$T/err"
expect_rc 0 "$TPUCTL" describe o3 --format 'value(metadata.ssh-keys)'
grep -qF "$(cut -d' ' -f2 "$KEY.pub")" "$T/out" || fail "key not in ssh-keys: $(cat "$T/out")"
# another error (a 5xx after its retries, here a 400) fails the command,
# naming the call
emu_inject --count 1 --path /compute/ return-400
expect_rc 2 "$TPUCTL" ssh o3 --ssh-key-file "$KEY" -- true
assert_grep "project $PROJECT's metadata \(Compute projects.get, for enable-oslogin\)" "$T/err"

# the api_endpoint_overrides/compute setting names the endpoint as the
# variable does (unset, the default endpoint is unreachable here: the read
# would fail the command)
CUR=$CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE
unset CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE
expect_rc 0 "$TPUCTL" config set api_endpoint_overrides/compute "$CUR"
n0=$(ncompute)
expect_rc 0 "$TPUCTL" ssh o3 --ssh-key-file "$KEY" -- id -un
assert_grep "^\[w0\] $(id -un)\$" "$T/out"
[ "$(ncompute)" -eq $((n0 + 1)) ] ||
    fail "the setting's endpoint was not asked: $n0 -> $(ncompute)"
