#!/bin/sh
# t263 (issue 19, defect 3): six `tpuctl ssh NODE --worker=all -- true`
# started at once from six HOMEs with distinct keys all exit 0 within
# 60 s, and all six key lines end in the node's ssh-keys metadata.  The
# TPU API has no metadata fingerprint, so two PATCHes merged from the same
# read both get 200 and the later drops the other's line.  To make that
# lost update certain rather than a matter of timing, the first six GETs
# of the node are stalled 2 s after the emulator built their reply: all six
# processes then merge into the same (key-less) metadata, and every PATCH
# but the last loses.  tpuctl must read the node back after its operation,
# see its line gone and merge and PATCH again.  The retries are bounded:
# a node whose metadata keeps changing (8 PATCHes, all 409) is exit 4.
# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=300 --set tpu.create_ms=300
fleet_api_setup
fleet_create_node t263 v4-16 60

# Six HOMEs, each with its own key (made here: defect 4's first-use race
# is another test's business).
for i in 1 2 3 4 5 6; do
	h="$T/home$i"
	mkdir -p "$h/.ssh" "$h/.config" "$h/.cache"
	chmod 700 "$h" "$h/.ssh"
	ssh-keygen -q -t ed25519 -N "" -C "t263-$i" \
	    -f "$h/.ssh/google_compute_engine"
done

emu_inject --method GET --path "$NODES/t263" --count 6 stall-2s-after-0K
start=$(date +%s)
pids=
for i in 1 2 3 4 5 6; do
	h="$T/home$i"
	HOME="$h" XDG_CONFIG_HOME="$h/.config" XDG_CACHE_HOME="$h/.cache" \
	    timeout 60 "$TPUCTL" ssh t263 --worker=all -- true \
	    >"$T/out$i" 2>"$T/err$i" &
	pids="$pids $!"
done
i=0
bad=
for p in $pids; do
	i=$((i + 1))
	rc=0
	wait "$p" || rc=$?
	[ "$rc" -eq 0 ] || bad="$bad home$i:rc=$rc($(tail -1 "$T/err$i"))"
done
elapsed=$(($(date +%s) - start))
"$EMULATOR" faults --state-dir "$EMU_DIR" >"$T/faults.json"
jq -e '.faults | length == 0' "$T/faults.json" >/dev/null ||
    fail "the stalls were not all hit: $(cat "$T/faults.json")"

fleet_api GET "$NODES/t263" >"$T/node2.json"
jq -r '.metadata["ssh-keys"] // ""' "$T/node2.json" >"$T/keys"
missing=
for i in 1 2 3 4 5 6; do
	b64=$(cut -d' ' -f2 "$T/home$i/.ssh/google_compute_engine.pub")
	grep -q "^$SSH_USER:ssh-ed25519 $b64" "$T/keys" || missing="$missing $i"
done
[ -z "$missing" ] || fail "keys of HOMEs$missing lost from ssh-keys: $(cat "$T/keys")"
[ -z "$bad" ] || fail "not every ssh exited 0:$bad"
[ "$elapsed" -lt 60 ] || fail "the six ssh took $elapsed s"
[ "$(grep -c . "$T/keys")" -eq 6 ] || fail "want 6 ssh-keys lines: $(cat "$T/keys")"
# The lost updates happened and were repaired, not avoided by luck: more
# PATCHes than the six first ones.
np=$(emu_requests | jq -s --arg p "$NODES/t263" \
    '[.[] | select(.method == "PATCH" and .path == $p)] | length')
[ "$np" -gt 6 ] || fail "only $np PATCHes: no lost update was repaired"

# A seventh key meets 8 conflicts in a row: it gives up with exit 4.
h="$T/home7"
mkdir -p "$h/.config" "$h/.cache"
chmod 700 "$h"
emu_inject --method PATCH --path "$NODES/t263" --count 8 return-409
start=$(date +%s)
expect_rc 4 env HOME="$h" XDG_CONFIG_HOME="$h/.config" \
    XDG_CACHE_HOME="$h/.cache" timeout 60 "$TPUCTL" ssh t263 --worker=all -- true
assert_grep "node 't263': the metadata kept changing while adding the SSH key .8 attempts.$" "$T/err"
[ $(($(date +%s) - start)) -lt 30 ] || fail "8 conflicts took too long"
"$EMULATOR" faults --state-dir "$EMU_DIR" >"$T/faults.json"
jq -e '.faults | length == 0' "$T/faults.json" >/dev/null ||
    fail "fewer than 8 PATCHes: $(cat "$T/faults.json")"
echo "ok $TEST_NAME"
