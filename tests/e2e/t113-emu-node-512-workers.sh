#!/bin/sh
# A node of more than 256 workers (v4-4096: 512 hosts): networkEndpoints
# lists every worker in order, and getGuestAttributes takes any worker id
# of it.  The emulator once copied at most 256 workers into a buffer and
# read past it for larger nodes (caught here under ASan).  The workers'
# sshd is a stand-in that only sleeps: this test is about the API side.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

printf '#!/bin/sh\nexec sleep 600\n' >"$T/fake-sshd"
chmod +x "$T/fake-sshd"
emu_start --set tpu.create_ms=100 --set fleet.sshd="$T/fake-sshd"
fleet_api_setup
fleet_api POST "$NODES?nodeId=big" \
    '{"acceleratorType":"v4-4096","runtimeVersion":"tpu-ubuntu2204-base"}' \
    >"$T/op.json" || fail "nodes.create failed"
i=0
while :; do
	fleet_api GET "$NODES/big" >"$T/node.json" || fail "nodes.get failed"
	[ "$(jq '.networkEndpoints | length' "$T/node.json")" = 512 ] && break
	i=$((i + 1))
	[ $i -lt 600 ] || fail "no 512 endpoints: $(jq -c '.state, (.networkEndpoints|length)' "$T/node.json")"
	sleep 0.2
done
# In order, all distinct.
jq -r '.networkEndpoints[].ipAddress' "$T/node.json" >"$T/addrs"
[ "$(sort -u "$T/addrs" | wc -l)" -eq 512 ] || fail "duplicate addresses"
fleet_api POST "$NODES/big:getGuestAttributes" \
    '{"queryPath":"hostkeys/","workerIds":["511"]}' >"$T/ga.json" ||
    fail "getGuestAttributes of worker 511 refused"
jq -e '.guestAttributes | length == 1' "$T/ga.json" >/dev/null ||
    fail "worker 511: $(cat "$T/ga.json")"
code=$(curl -s -o "$T/bad.json" -w '%{http_code}' -X POST \
    -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    --data-binary '{"workerIds":["512"]}' "$API$NODES/big:getGuestAttributes")
[ "$code" = 400 ] || fail "worker 512 of 512: HTTP $code"
fleet_api DELETE "$NODES/big" >/dev/null || fail "nodes.delete failed"
echo "ok $TEST_NAME"
