#!/bin/sh
# Issue 17: a node whose metadata has enable-oslogin=TRUE: tpuctl imports
# the key through the OS Login API (users/EMAIL:importSshPublicKey, as the
# credentials' service account) and logs in as the profile's POSIX user on
# every worker, whose sshd takes keys from the emulator's OS Login store
# (AuthorizedKeysCommand); no ssh-keys metadata is written; a second run
# imports the same key again (idempotent: still one key in the profile);
# --dry-run says what it would import and sends nothing.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start --set tpu.create_ms=50 --set tpu.update_ms=0 \
    --set fleet.key_delay_ms=200

KEY="$T/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$KEY" || fail "ssh-keygen failed"
expect_rc 0 "$TPUCTL" create o1 --accelerator-type v4-32 \
    --metadata enable-oslogin=TRUE
EMAIL=$TPUCTL_EMULATOR_SA_EMAIL
TOKEN=$(cat "$TPUCTL_EMULATOR_ACCESS_TOKEN_FILE")

# --dry-run: the plan, nothing imported
expect_rc 0 "$TPUCTL" --dry-run ssh o1 --worker=all --ssh-key-file "$KEY" -- id -un
assert_grep "^would import $KEY.pub into the OS Login profile of $EMAIL \(node 'o1' has enable-oslogin=TRUE\) and log in as its POSIX user\$" "$T/out"
[ "$(emu_requests | jq -s '[.[] | select(.path | contains("importSshPublicKey"))] | length')" -eq 0 ] ||
    fail "--dry-run imported a key"

expect_rc 0 "$TPUCTL" ssh o1 --worker=all --ssh-key-file "$KEY" -- id -un
curl -sf -H "Authorization: Bearer $TOKEN" \
    "$TPUCTL_EMULATOR_URL/v1/users/$EMAIL/loginProfile" >"$T/prof" ||
    fail "loginProfile failed"
U=$(jq -r '.posixAccounts[] | select(.primary) | .username' "$T/prof")
[ -n "$U" ] || fail "no primary POSIX account: $(cat "$T/prof")"
if [ "$(id -u)" -eq 0 ]; then
	case $U in
	sa_[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]) ;;
	*) fail "service account username '$U' is not sa_ and 21 digits" ;;
	esac
fi
for w in 0 1 2 3; do
	assert_grep "^\[w$w\] $U\$" "$T/out"
done
[ "$(wc -l <"$T/out")" -eq 4 ] || fail "not 4 lines: $(cat "$T/out")"
jq -e --arg k "$(cut -d' ' -f1-2 "$KEY.pub")" \
    '[.sshPublicKeys[] | select(.key | startswith($k))] | length == 1' \
    "$T/prof" >/dev/null || fail "key not imported once: $(cat "$T/prof")"

# again: the same key, still one in the profile; never a metadata write
expect_rc 0 "$TPUCTL" ssh o1 --worker=0 --ssh-key-file "$KEY" -- id -un
assert_grep "^\[w0\] $U\$" "$T/out"
curl -sf -H "Authorization: Bearer $TOKEN" \
    "$TPUCTL_EMULATOR_URL/v1/users/$EMAIL/loginProfile" >"$T/prof" ||
    fail "loginProfile failed"
[ "$(jq '.sshPublicKeys | length' "$T/prof")" -eq 1 ] ||
    fail "the second run added a key: $(cat "$T/prof")"
emu_tpu_mutations | jq -e '[.[] | select(.[0] == "PATCH")] | length == 0' \
    >/dev/null || fail "metadata patched: $(emu_tpu_mutations)"
[ "$(emu_requests | jq -s '[.[] | select(.path | endswith(":importSshPublicKey"))] | length')" -eq 2 ] ||
    fail "not one import per run"
expect_rc 0 "$TPUCTL" describe o1 --format json
jq -e '.metadata["ssh-keys"] == null' "$T/out" >/dev/null ||
    fail "ssh-keys written to o1: $(jq -c .metadata "$T/out")"

# the API: another account's profile is not ours; a bad key is refused
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
    "$TPUCTL_EMULATOR_URL/v1/users/someone@example.com/loginProfile")
[ "$code" = 403 ] || fail "another user's profile: HTTP $code"
code=$(curl -s -o "$T/b" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: application/json' -d '{"key":"not a key"}' \
    "$TPUCTL_EMULATOR_URL/v1/users/$EMAIL:importSshPublicKey")
[ "$code" = 400 ] || fail "a bad key: HTTP $code"
