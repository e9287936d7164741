#!/bin/sh
# A v4-32 pod (4 workers) and a v5litepod-16 through their whole life with
# the real commands: create (waits for READY + healthy), list (table and
# json, --zone -, --filter), describe (one endpoint per worker), stop (refused
# for the pod, as on Google) and start of a v4-8, delete of two nodes at
# once; accelerator-types, versions,
# locations and operations list.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

expect_rc 0 "$TPUCTL" create pod --accelerator-type v4-32 --labels env=ci
assert_grep "created node 'pod' \(v4-32, 4 workers\) in us-central2-b" "$T/err"
[ ! -s "$T/out" ] || fail "create printed on stdout in table mode"

expect_rc 2 "$TPUCTL" create lite --type v5litepod --topology 4x4
assert_grep 'zone us-central2-b does not offer v5litepod' "$T/err"
expect_rc 0 "$TPUCTL" create lite --type v5litepod --topology 4x4 \
    --zone us-west4-a --format json --description "a v5e slice"
python3 - "$T/out" <<'PY' || fail "create --format json is not the ready node"
import json, sys
n = json.load(open(sys.argv[1]))
assert n["state"] == "READY", n["state"]
assert n["acceleratorConfig"]["topology"] == "4x4", n
assert len(n["networkEndpoints"]) == 4, n["networkEndpoints"]
assert len(n["labels"]["tpuctl-run-id"]) == 16
PY

expect_rc 0 "$TPUCTL" list
assert_grep '^NAME +ZONE +ACCELERATOR_TYPE +STATE +HEALTH' "$T/out"
assert_grep '^pod +us-central2-b +v4-32 +READY +HEALTHY' "$T/out"
expect_rc 0 "$TPUCTL" list --zone us-west4-a
assert_grep '^lite +us-west4-a +v5litepod-16 +READY' "$T/out"

expect_rc 0 "$TPUCTL" list --zone - --filter labels.env=ci \
    --format 'value(name)'
[ "$(cat "$T/out")" = "projects/tpuctl-emu/locations/us-central2-b/nodes/pod" ] ||
    fail "list --zone - --filter: $(cat "$T/out")"

expect_rc 0 "$TPUCTL" describe pod --format json
python3 - "$T/out" <<'PY' || fail "describe is not the API node"
import json, sys
n = json.load(open(sys.argv[1]))
eps = n["networkEndpoints"]
assert len(eps) == 4 and all(e["ipAddress"].startswith("127.") for e in eps)
assert n["health"] == "HEALTHY" and n["acceleratorType"] == "v4-32"
PY
expect_rc 0 "$TPUCTL" describe pod
assert_grep '^acceleratorType: v4-32' "$T/out"

# A multi-host slice is not stopped (the server refuses, as Google does).
expect_rc 4 "$TPUCTL" stop pod
assert_grep "multi-host" "$T/err"

expect_rc 0 "$TPUCTL" accelerator-types list
assert_grep '^v4-32$' "$T/out"
expect_rc 0 "$TPUCTL" versions list --format 'value(version)'
assert_grep '^tpu-ubuntu2204-base$' "$T/out"
expect_rc 0 "$TPUCTL" locations list
assert_grep '^us-central2-b$' "$T/out"
expect_rc 0 "$TPUCTL" operations list --format json
assert_grep '"verb": *"create"' "$T/out"

# delete takes several nodes; without a terminal it does not prompt.
expect_rc 0 "$TPUCTL" list --zone - --format 'value(name)'
[ "$(wc -l <"$T/out")" -eq 2 ] || fail "list --zone -: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" delete lite --zone us-west4-a
expect_rc 0 "$TPUCTL" create pod2 --accelerator-type v4-8
expect_rc 0 "$TPUCTL" stop pod2
expect_rc 0 "$TPUCTL" describe pod2 --format 'value(state)'
[ "$(cat "$T/out")" = STOPPED ] || fail "state after stop: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" start pod2 --format 'value(state,health)'
assert_grep '^READY	HEALTHY$' "$T/out"
expect_rc 0 "$TPUCTL" delete pod pod2
assert_grep "deleted 2 nodes: pod, pod2" "$T/err"
expect_rc 0 "$TPUCTL" list --zone - --format json
[ "$(tr -d ' \n' <"$T/out")" = "[]" ] || fail "nodes left: $(cat "$T/out")"

expect_rc 4 "$TPUCTL" describe pod
assert_grep "node 'pod' not found in zone us-central2-b" "$T/err"
expect_rc 4 "$TPUCTL" delete pod
