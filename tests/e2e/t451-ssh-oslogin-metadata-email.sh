#!/bin/sh
# Issue 17: OS Login with credentials of the metadata server, which name
# no account: tpuctl asks the metadata server for its default service
# account's email (instance/service-accounts/default/email, with
# Metadata-Flavor: Google, on GCE_METADATA_HOST), imports the key as it
# and logs in as its POSIX user (also --dry-run names it).  An access
# token file still names no account: exit 4 in one line, nothing sent.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start --set tpu.create_ms=50 --set fleet.key_delay_ms=200
EMAIL=$TPUCTL_EMULATOR_SA_EMAIL
KEY="$T/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$KEY" || fail "ssh-keygen failed"
expect_rc 0 "$TPUCTL" create o1 --accelerator-type v4-16 \
    --metadata enable-oslogin=TRUE

unset GOOGLE_APPLICATION_CREDENTIALS
expect_rc 0 "$TPUCTL" auth list --format json
jq -e '.type == "metadata_server"' "$T/out" >/dev/null ||
    fail "not the metadata server's credentials: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" --dry-run ssh o1 --ssh-key-file "$KEY" -- id -un
assert_grep "^would import $KEY.pub into the OS Login profile of $EMAIL " "$T/out"
expect_rc 0 "$TPUCTL" ssh o1 --worker=all --ssh-key-file "$KEY" -- id -un
emu_requests | jq -r 'select(.path | endswith("/service-accounts/default/email")) |
    .headers["Metadata-Flavor"]' >"$T/md"
grep -qx Google "$T/md" || fail "no email request with Metadata-Flavor: $(cat "$T/md")"
emu_requests | jq -r 'select(.path | endswith(":importSshPublicKey")) | .path' |
    tail -1 >"$T/imp"
[ "$(cat "$T/imp")" = "/v1/users/$EMAIL:importSshPublicKey" ] ||
    fail "imported as: $(cat "$T/imp")"
U=$(sed -n 's/^\[w0\] //p' "$T/out")
{ [ -n "$U" ] && [ "$U" != root ]; } || fail "logged in as '$U': $(cat "$T/out")"
assert_grep "^\[w1\] $U\$" "$T/out"
emu_tpu_mutations | jq -e '[.[] | select(.[0] == "PATCH")] | length == 0' \
    >/dev/null || fail "metadata patched: $(emu_tpu_mutations)"

# an access token file names no account: refused in one line, exit 4
n0=$(emu_requests | grep -c importSshPublicKey || true)
expect_rc 4 "$TPUCTL" --access-token-file "$TPUCTL_EMULATOR_ACCESS_TOKEN_FILE" \
    ssh o1 --ssh-key-file "$KEY" -- true
assert_grep "^tpuctl: OS Login needs the account's email, which access_token_file credentials do not name" "$T/err"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "not one line: $(cat "$T/err")"
[ "$(emu_requests | grep -c importSshPublicKey || true)" = "$n0" ] ||
    fail "a key was imported"
