#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# Issue 16: submit a multislice (slice.node-count 2): one queued resource
# of 2 nodes whose startup-script starts the job on every node with the
# env run gives a multislice: TPUCTL_SLICE/TPUCTL_SLICES, the global
# RANK/WORLD_SIZE, MEGASCALE_SLICE_ID/NUM_SLICES and, on every slice,
# slice 0's worker 0 as MASTER_ADDR and MEGASCALE_COORDINATOR_ADDRESS.
# submit --wait follows both slices and returns 0; delete-after leaves
# nothing.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200 --set tpu.qr_provision_ms=500
fleet_api_setup

cat >"$T/ms.yaml" <<'END'
name: sub472
slice: {accelerator-type: v4-8, node-count: 2, node-prefix: ms472}
command: 'echo "rank=$RANK/$WORLD_SIZE slice=$TPUCTL_SLICE/$TPUCTL_SLICES mss=$MEGASCALE_SLICE_ID/$MEGASCALE_NUM_SLICES master=$MASTER_ADDR coord=$MEGASCALE_COORDINATOR_ADDRESS"'
delete-after: true
END
"$TPUCTL" submit --wait "$T/ms.yaml" >"$T/s.out" 2>"$T/s.err" &
spid=$!
# slice 0's worker 0, while the slice exists
n=0
addr=
until [ -n "$addr" ] && [ "$addr" != null ]; do
	n=$((n + 1))
	[ $n -lt 300 ] || fail "node ms472-0 never READY: $(cat "$T/s.err")"
	sleep 0.2
	addr=$("$TPUCTL" describe ms472-0 --format json 2>/dev/null |
	    jq -r '.networkEndpoints[0].ipAddress' 2>/dev/null) || addr=
done
rc=0
wait "$spid" || rc=$?
[ "$rc" -eq 0 ] || fail "submit --wait of a multislice: exit $rc: $(cat "$T/s.err")"
assert_grep "^\\[s0/w0\\] rank=0/2 slice=0/2 mss=0/2 master=$addr coord=$addr\$" "$T/s.out"
assert_grep "^\\[s1/w0\\] rank=1/2 slice=1/2 mss=1/2 master=$addr coord=$addr\$" "$T/s.out"
assert_grep 'job sub472: 2 of 2 workers succeeded' "$T/s.err"
assert_no_slice sub472
assert_no_slice ms472
