#!/bin/sh
# The metadata server as seen from a TPU worker: each worker's own address
# (its GCE_METADATA_HOST, the emulator's port) answers as that worker:
# agent-worker-number, worker-network-endpoints (t1v-n-X-w-N:id:addr, in
# worker order), accelerator-type, tpu-env, the node's metadata keys, the
# listing and ?recursive=true forms, instance/ hostname, name, id,
# network-interfaces/0/ip, preempted and maintenance-event; a metadata
# update answers a wait_for_change on its key.  The main
# address stays the host's view (no worker attributes); a header naming a
# worker changes nothing; a deleted node's addresses stop answering.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

emu_start --set tpu.create_ms=300
tok=$(cat "$EMU_DIR/access-token")
parent="projects/tpuctl-emu/locations/us-central2-b"
code=$(curl -s -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $tok" \
    -H 'Content-Type: application/json' \
    -d '{"acceleratorType":"v4-16","runtimeVersion":"tpu-ubuntu2204-base","metadata":{"team":"ml","startup-script":"echo hi"}}' \
    "$TPUCTL_EMULATOR_URL/v2/$parent/nodes?nodeId=wmd")
[ "$code" = 200 ] || fail "node create gave $code: $(cat "$T/body")"
i=0
while :; do
	curl -s -H "Authorization: Bearer $tok" \
	    "$TPUCTL_EMULATOR_URL/v2/$parent/nodes/wmd" >"$T/node.json"
	[ "$(jq -r '.networkEndpoints | length' "$T/node.json")" = 2 ] && break
	i=$((i + 1))
	[ $i -lt 100 ] || fail "node never got its endpoints: $(cat "$T/node.json")"
	sleep 0.2
done
a0=$(jq -r '.networkEndpoints[0].ipAddress' "$T/node.json")
a1=$(jq -r '.networkEndpoints[1].ipAddress' "$T/node.json")
id=$(jq -r .id "$T/node.json")
port=${GCE_METADATA_HOST##*:}

# md ADDR PATH [curl args]: the status; the body in $T/body.
md() {
	a=$1 p=$2
	shift 2
	curl -s -D "$T/hdr" -o "$T/body" -w '%{http_code}' \
	    -H 'Metadata-Flavor: Google' "$@" \
	    "http://$a:$port/computeMetadata/v1/$p"
}
body() { cat "$T/body"; }

[ "$(md "$a1" instance/attributes/agent-worker-number)" = 200 ] ||
    fail "worker 1 agent-worker-number: $(body)"
[ "$(body)" = 1 ] || fail "agent-worker-number: $(body)"
assert_grep '^Metadata-Flavor: Google' "$T/hdr"
assert_grep '^ETag: [0-9a-f]{16}' "$T/hdr"
md "$a0" instance/attributes/agent-worker-number >/dev/null
[ "$(body)" = 0 ] || fail "worker 0 number: $(body)"
# A header naming another worker changes nothing.
md "$a0" instance/attributes/agent-worker-number -H 'X-Emulator-Worker: wmd/1' >/dev/null
[ "$(body)" = 0 ] || fail "a header moved worker 0: $(body)"
md "$a1" instance/attributes/accelerator-type >/dev/null
[ "$(body)" = v4-16 ] || fail "accelerator-type: $(body)"
md "$a1" instance/attributes/team >/dev/null
[ "$(body)" = ml ] || fail "user metadata key: $(body)"
md "$a1" instance/attributes/startup-script >/dev/null
[ "$(body)" = 'echo hi' ] || fail "startup-script: $(body)"

md "$a1" instance/attributes/worker-network-endpoints >/dev/null
eps=$(body)
h0=$(printf '%s' "$eps" | cut -d, -f1 | cut -d: -f1)
printf '%s' "$eps" | grep -Eq "^t1v-n-[0-9a-f]{8}-w-0:[0-9]{19}:$a0,t1v-n-[0-9a-f]{8}-w-1:[0-9]{19}:$a1\$" ||
    fail "worker-network-endpoints: $eps"
md "$a0" instance/attributes/worker-network-endpoints >/dev/null
[ "$(body)" = "$eps" ] || fail "workers disagree on the endpoints: $(body)"

md "$a1" instance/attributes/tpu-env >/dev/null
cat >"$T/want" <<EOT
ACCELERATOR_TYPE: 'v4-16'
CHIPS_PER_HOST_BOUNDS: '2,2,1'
HOST_BOUNDS: '1,1,2'
NODE_ID: 'wmd'
TOPOLOGY: '2x2x2'
TPU_CHIPS_PER_PROCESS_BOUNDS: '2,2,1'
TPU_PROCESS_BOUNDS: '1,1,2'
WORKER_ID: '1'
ZONE: 'us-central2-b'
EOT
diff "$T/want" "$T/body" >&2 || fail "tpu-env of worker 1"

# Listing and recursive forms.
[ "$(md "$a0" instance/attributes/)" = 200 ] || fail "attribute listing"
printf 'accelerator-type\nagent-worker-number\nstartup-script\nteam\ntpu-env\nworker-network-endpoints\n' >"$T/want"
diff "$T/want" "$T/body" >&2 || fail "attribute listing"
[ "$(md "$a0" 'instance/attributes/?recursive=true')" = 200 ] || fail "recursive"
jq -e --arg eps "$eps" '.["agent-worker-number"] == "0" and .team == "ml"
    and .["worker-network-endpoints"] == $eps
    and (.["tpu-env"] | contains("WORKER_ID: '"'0'"'"))' "$T/body" >/dev/null ||
    fail "recursive attributes: $(body)"
md "$a1" 'instance/?recursive=true' >/dev/null
jq -e --arg a "$a1" '.networkInterfaces[0].ip == $a and .preempted == "FALSE"
    and .maintenanceEvent == "NONE" and .attributes["agent-worker-number"] == "1"' \
    "$T/body" >/dev/null || fail "recursive instance: $(body)"

# instance/ values.
md "$a1" instance/name >/dev/null
name1=$(body)
printf '%s' "$name1" | grep -Eq '^t1v-n-[0-9a-f]{8}-w-1$' || fail "name: $name1"
[ "${name1%-w-1}" = "${h0%-w-0}" ] || fail "name $name1 vs endpoint host $h0"
md "$a1" instance/hostname >/dev/null
[ "$(body)" = "$name1.us-central2-b.c.tpuctl-emu.internal" ] || fail "hostname: $(body)"
md "$a1" instance/id >/dev/null
printf '%s' "$eps" | grep -q "w-1:$(body):" || fail "id $(body) not in the endpoints"
md "$a1" instance/network-interfaces/0/ip >/dev/null
[ "$(body)" = "$a1" ] || fail "ip: $(body)"
md "$a1" instance/preempted >/dev/null
[ "$(body)" = FALSE ] || fail "preempted: $(body)"
md "$a1" instance/maintenance-event >/dev/null
[ "$(body)" = NONE ] || fail "maintenance-event: $(body)"
md "$a1" instance/zone >/dev/null
assert_grep '^projects/[0-9]*/zones/us-central2-b$' "$T/body"
[ "$(md "$a1" instance/attributes/no-such-key)" = 404 ] || fail "unknown key"
# A worker address serves the metadata server only.
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $tok" \
    "http://$a1:$port/v2/$parent/nodes")
[ "$code" = 404 ] || fail "the TPU API on a worker address gave $code"

# The main address: the host's view.
[ "$(md "${GCE_METADATA_HOST%:*}" instance/attributes/agent-worker-number)" = 404 ] ||
    fail "the host has a worker number: $(body)"

# Node metadata changes show at once (the agent's view), and answer a
# wait_for_change on the key.
(
	curl -s -H 'Metadata-Flavor: Google' \
	    "http://$a0:$port/computeMetadata/v1/instance/attributes/team?wait_for_change=true&timeout_sec=30" \
	    >"$T/team-wait"
) &
waiter=$!
sleep 1
kill -0 $waiter 2>/dev/null || fail "the attribute waiter did not wait: $(cat "$T/team-wait")"
curl -s -o /dev/null -X PATCH -H "Authorization: Bearer $tok" \
    -H 'Content-Type: application/json' -d '{"metadata":{"team":"infra"}}' \
    "$TPUCTL_EMULATOR_URL/v2/$parent/nodes/wmd?updateMask=metadata"
wait $waiter
[ "$(cat "$T/team-wait")" = infra ] || fail "attribute waiter: $(cat "$T/team-wait")"
md "$a0" instance/attributes/team >/dev/null
[ "$(body)" = infra ] || fail "patched key: $(body)"

# recursive JSON keeps the 19-digit id exact.
md "$a1" instance/id >/dev/null
id1=$(body)
md "$a1" 'instance/?recursive=true' >/dev/null
grep -q "\"id\":$id1," "$T/body" || fail "recursive id, want $id1: $(body)"

# Gone with the node; a waiter of a deleted worker is answered (503).
md "$a1" 'instance/preempted?wait_for_change=true&timeout_sec=60' >/dev/null &
waiter=$!
sleep 1
kill -0 $waiter 2>/dev/null || fail "the waiter did not wait"
curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $tok" \
    "$TPUCTL_EMULATOR_URL/v2/$parent/nodes/wmd"
wait $waiter
assert_grep '^HTTP/1.1 503' "$T/hdr"
i=0
while md "$a0" instance/attributes/agent-worker-number --max-time 2 >/dev/null; do
	[ "$(cat "$T/body" 2>/dev/null)" = 0 ] || break
	i=$((i + 1))
	[ $i -lt 100 ] || fail "worker 0 still answers after delete"
	sleep 0.2
done
: "$id"
