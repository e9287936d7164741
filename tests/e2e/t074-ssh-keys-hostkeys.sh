#!/bin/sh
# tpuctl ssh key propagation and refusals: a 409 on the metadata PATCH is
# re-read and merged (other users' ssh-keys lines and other metadata keys
# survive), a node with enable-oslogin=TRUE goes to OS Login (--dry-run
# says so; nothing patched), a worker publishing no host key is refused
# (9) unless --strict-host-key-checking=no (a warning, then 0), and
# workers that never accept the key give "permission denied (publickey)"
# and exit 9 in bounded time.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

# npatch: how many PATCH requests the emulator logged so far.
npatch() {
	emu_requests | jq -s '[.[] | select(.method == "PATCH")] | length'
}

emu_start --set fleet.key_delay_ms=300 --set tpu.create_ms=300
fleet_api_setup
fleet_create_node t074 v4-16 60
fleet_create_node t074o v4-8 60
fleet_create_node t074h v4-16 60

# Another user's key line and another metadata entry, set beforehand.
ssh-keygen -q -t ed25519 -N "" -C alice -f "$T/alice"
alice="alice:$(cat "$T/alice.pub")"
body=$(jq -n --arg k "$alice" '{metadata: {"ssh-keys": $k, team: "ml"}}')
fleet_api PATCH "$NODES/t074?updateMask=metadata" "$body" >/dev/null ||
    fail "pre-set metadata failed"

# 1. The first metadata PATCH meets a 409: re-read, merged, ssh works.
emu_inject --method PATCH --path "$NODES/t074" --count 1 return-409
expect_rc 0 "$TPUCTL" ssh t074 --worker=all -- echo ok
[ "$(grep -c '^\[w[01]\] ok$' "$T/out")" -eq 2 ] ||
    fail "want 2 workers' output: $(cat "$T/out")"
"$EMULATOR" faults --state-dir "$EMU_DIR" >"$T/faults.json"
jq -e '.faults | length == 0' "$T/faults.json" >/dev/null ||
    fail "the 409 was never hit: $(cat "$T/faults.json")"
[ "$(npatch)" -ge 3 ] || fail "no PATCH retried after the 409"
fleet_api GET "$NODES/t074" >"$T/node2.json"
jq -r '.metadata["ssh-keys"]' "$T/node2.json" >"$T/keys"
assert_grep "^alice:ssh-ed25519 " "$T/keys"
assert_grep "^$SSH_USER:ssh-ed25519 " "$T/keys"
[ "$(grep -c . "$T/keys")" -eq 2 ] || fail "ssh-keys: $(cat "$T/keys")"
[ "$(jq -r .metadata.team "$T/node2.json")" = ml ] ||
    fail "metadata entry team lost: $(jq -c .metadata "$T/node2.json")"

# 2. enable-oslogin=TRUE: the OS Login path (t144), nothing patched.
# (Set after the boot: the workers read it at the next start.)
fleet_api PATCH "$NODES/t074o?updateMask=metadata" \
    '{"metadata":{"enable-oslogin":"TRUE"}}' >/dev/null ||
    fail "setting enable-oslogin failed"
before=$(npatch)
expect_rc 0 "$TPUCTL" --dry-run ssh t074o -- true
assert_grep "OS Login profile of .*(node 't074o' has enable-oslogin=TRUE)" "$T/out"
[ "$(npatch)" -eq "$before" ] || fail "an oslogin node was patched"
fleet_api GET "$NODES/t074o" >"$T/node3.json"
[ "$(jq -r '.metadata["ssh-keys"] // "none"' "$T/node3.json")" = none ] ||
    fail "ssh-keys added to an oslogin node"

# 3. Worker 0 publishes no host key: its getGuestAttributes item gets
# the namespace "Hostkeys" (corrupt-byte flips the case of the "h").
fleet_api POST "$NODES/t074h:getGuestAttributes" '{"queryPath":"hostkeys/"}' \
    >"$T/ga.json" || fail "getGuestAttributes failed"
m=$(grep -bo '"namespace":[[:space:]]*"hostkeys"' "$T/ga.json" | head -1)
[ -n "$m" ] || fail "no hostkeys namespace: $(cat "$T/ga.json")"
pos=${m%%:*}
str=${m#*:}
off=$((pos + ${#str} - 9))
emu_inject --method POST --path "$NODES/t074h:getGuestAttributes" \
    --count -1 "corrupt-byte-$off"
fleet_api POST "$NODES/t074h:getGuestAttributes" '{"queryPath":"hostkeys/"}' \
    >"$T/ga2.json" || fail "getGuestAttributes failed"
[ "$(jq '[.guestAttributes[0].queryValue.items[] |
    select(.namespace == "hostkeys")] | length' "$T/ga2.json")" -eq 0 ] ||
    fail "worker 0 still publishes its host key: $(cat "$T/ga2.json")"
# The strict run waits for the key (30 s); the other does not wait.
start=$(date +%s)
"$TPUCTL" ssh t074h --worker=all -- echo ok >"$T/out1" 2>"$T/err1" &
p1=$!
"$TPUCTL" ssh t074h --worker=all --strict-host-key-checking=no -- echo ok \
    >"$T/out2" 2>"$T/err2" &
p2=$!
rc2=0
wait $p2 || rc2=$?
[ $(($(date +%s) - start)) -lt 20 ] ||
    fail "--strict-host-key-checking=no waited for the missing host key"
rc1=0
wait $p1 || rc1=$?
[ $rc1 -eq 9 ] || fail "strict run gave $rc1: $(cat "$T/err1")"
assert_grep "1 worker published no host key .*refusing to connect" "$T/err1"
[ ! -s "$T/out1" ] || fail "strict run connected: $(cat "$T/out1")"
[ $rc2 -eq 0 ] || fail "--strict-host-key-checking=no gave $rc2: $(cat "$T/err2")"
assert_grep "1 worker of node 't074h' published no host key" "$T/err2"
[ "$(grep -c '^\[w[01]\] ok$' "$T/out2")" -eq 2 ] ||
    fail "want 2 workers' output: $(cat "$T/out2")"
"$EMULATOR" faults --state-dir "$EMU_DIR" --clear >/dev/null

# 4. Workers that never accept the key (its propagation takes an hour):
# the key is already in the metadata, so a few attempts, then 9.
kill -TERM "$EMU_PID"
wait "$EMU_PID" 2>/dev/null || true
EMU_PID=
rm -rf "$T/emu"
emu_start --set fleet.key_delay_ms=3600000 --set tpu.create_ms=300
fleet_api_setup
fleet_create_node t074d v4-16 60
KEY="$HOME/.ssh/google_compute_engine"
fleet_patch_key t074d
start=$(date +%s)
expect_rc 9 "$TPUCTL" ssh t074d --worker=all --connect-timeout 5 -- true
[ $(($(date +%s) - start)) -lt 30 ] || fail "denied workers took too long"
assert_grep '^worker 0: .*permission denied .publickey. for user' "$T/err"
assert_grep '^worker 1: .*permission denied .publickey. for user' "$T/err"
assert_no_grep 'exit 0' "$T/err"
