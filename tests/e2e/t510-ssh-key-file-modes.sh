#!/bin/sh
# RELIABILITY.md S4 (the OpenSSH rule): an --ssh-key-file private key
# with any group or other permission bit (0644, 0640, 0604, 0660) is
# refused before anything is sent: exit 3, one line naming the mode, the
# file and the fix; no key pushed to the node, no connection to a
# worker. The same key at 0600 works.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=300
fleet_api_setup
fleet_create_node t510 v4-8 60
ssh-keygen -q -t ed25519 -N "" -C t510 -f "$T/key"
pub=$(cut -d' ' -f2 "$T/key.pub")

# how many PATCH requests the emulator logged so far
npatch() {
	emu_requests | jq -s '[.[] | select(.method == "PATCH")] | length'
}
for mode in 644 640 604 660; do
	chmod "$mode" "$T/key"
	before=$(npatch)
	expect_rc 3 "$TPUCTL" ssh t510 --ssh-key-file "$T/key" -- echo no
	assert_grep "^tpuctl: permissions 0$mode for ssh key '$T/key' are too open: .*chmod 600" "$T/err"
	[ "$(grep -c . "$T/err")" -eq 1 ] || fail "$mode: more than one line: $(cat "$T/err")"
	[ ! -s "$T/out" ] || fail "$mode: output: $(cat "$T/out")"
	[ "$(npatch)" -eq "$before" ] || fail "$mode: the node was patched"
	fleet_api GET "$NODES/t510" | jq -r '.metadata["ssh-keys"] // ""' >"$T/keys"
	! grep -qF "$pub" "$T/keys" || fail "$mode: the key was pushed"
	[ "$(stat -c %a "$T/key")" = "$mode" ] || fail "$mode: the key's mode was changed"
done

chmod 600 "$T/key"
expect_rc 0 "$TPUCTL" ssh t510 --ssh-key-file "$T/key" -- echo yes
assert_grep '^\[w0\] yes$' "$T/out"
fleet_api GET "$NODES/t510" | jq -r '.metadata["ssh-keys"]' >"$T/keys"
grep -qF "$pub" "$T/keys" || fail "0600: the key was not pushed: $(cat "$T/keys")"
exit 0
