#!/bin/sh
# The workers' metadata listeners across an emulator restart: gone while
# the emulator is down, back on the (new) port at the next start, still
# answering as the same worker with the same name; a node created after
# the restart gets its own; metadata.port80=0 keeps port 80 closed.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set tpu.create_ms=300
fleet_api_setup
fleet_create_node t112 v4-16 60
a1=$(jq -r '.networkEndpoints[1].ipAddress' "$T/node.json")
# md PATH: worker 1's answer (empty on failure).
md() {
	curl -s -f --max-time 5 -H 'Metadata-Flavor: Google' \
	    "http://$a1:${GCE_METADATA_HOST##*:}/computeMetadata/v1/instance/$1" || true
}
[ "$(md attributes/agent-worker-number)" = 1 ] || fail "worker 1 before the restart"
name=$(md name)
printf '%s\n' "$name" | grep -Eq '^t1v-n-[0-9a-f]{8}-w-1$' || fail "name: $name"
old=$GCE_METADATA_HOST

kill -TERM "$EMU_PID"
i=0
while kill -0 "$EMU_PID" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "the emulator did not stop in 10 s"
	sleep 0.1
done
EMU_PID=
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 \
    -H 'Metadata-Flavor: Google' "http://$a1:${old##*:}/computeMetadata/v1/instance/name" || true)
[ "$code" = 000 ] || fail "worker 1 answered ($code) with the emulator down"

rm -f "$EMU_DIR/env"
emu_start --set tpu.create_ms=300 --set metadata.port80=0
fleet_api_setup
i=0
until [ "$(md attributes/agent-worker-number)" = 1 ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "worker 1 never answered after the restart"
	sleep 0.2
done
[ "$(md name)" = "$name" ] || fail "name changed across the restart: $(md name)"
md attributes/tpu-env >"$T/env"
assert_grep "^WORKER_ID: '1'\$" "$T/env"
# metadata.port80=0: no port-80 listener even as root.
# (Another emulator running at the same time may hold that address's
# port 80: only an answer naming our worker is ours.)
got80=$(curl -s --max-time 5 -H 'Metadata-Flavor: Google' \
    "http://$a1:80/computeMetadata/v1/instance/name" || true)
[ "$got80" != "$name" ] || fail "port 80 answered as $name with metadata.port80=0"

# A second node after the restart: its own addresses and answers.
fleet_create_node t112b v4-8 60
b0=$(jq -r '.networkEndpoints[0].ipAddress' "$T/node.json")
[ "$b0" != "$a1" ] || fail "two nodes share an address"
got=$(curl -s -H 'Metadata-Flavor: Google' \
    "http://$b0:${GCE_METADATA_HOST##*:}/computeMetadata/v1/instance/attributes/accelerator-type")
[ "$got" = v4-8 ] || fail "t112b worker 0: $got"
[ "$(md attributes/accelerator-type)" = v4-16 ] || fail "t112 worker 1 after t112b"
