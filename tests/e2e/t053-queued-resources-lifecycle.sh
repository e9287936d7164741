#!/bin/sh
# tpuctl queued-resources through a whole life against the emulator: a
# single spot node (create waits for ACTIVE + READY + healthy workers;
# list table and json, --zone -, --filter; describe is the API's JSON;
# delete needs --force while nodes exist), a 2-slice multislice of
# v5litepod-16 (4 workers each) on guaranteed capacity, a reserved one,
# and reset of a FAILED queued resource.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_tpu.sh
. "$(dirname "$0")/lib_tpu.sh"
emu_start
tpu_setup
Z=us-central2-b
Q=projects/tpuctl-emu/locations/$Z/queuedResources

expect_rc 0 "$TPUCTL" queued-resources create qr1 --node-id n1 \
    --accelerator-type v4-8 --spot --labels env=ci \
    --valid-until-duration 1h
assert_grep "queued resource 'qr1' is ACTIVE in $Z: 1 node of v4-8 \(1 worker each\)" "$T/err"
[ ! -s "$T/out" ] || fail "create printed on stdout in table mode"

expect_rc 0 "$TPUCTL" queued-resources list
assert_grep '^NAME +ZONE +ACCELERATOR_TYPE +NODES +TIER +STATE' "$T/out"
assert_grep "^qr1 +$Z +v4-8 +1 +spot +ACTIVE" "$T/out"
expect_rc 0 "$TPUCTL" queued-resources list --zone - --filter state.state=ACTIVE \
    --format 'value(name)'
[ "$(cat "$T/out")" = "$Q/qr1" ] || fail "list --zone -: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" queued-resources list --filter state.state=FAILED \
    --format json
[ "$(tr -d ' \n' <"$T/out")" = "[]" ] || fail "--filter kept: $(cat "$T/out")"

expect_rc 0 "$TPUCTL" queued-resources describe qr1 --format json
python3 - "$T/out" <<'PY' || fail "describe is not the API's queued resource"
import json, sys
q = json.load(open(sys.argv[1]))
assert q["name"].endswith("/queuedResources/qr1"), q["name"]
assert q["state"]["state"] == "ACTIVE", q["state"]
assert q["spot"] == {}, q
assert q["queueingPolicy"] == {"validUntilDuration": "3600s"}, q
spec = q["tpu"]["nodeSpec"][0]
assert spec["parent"] == "projects/tpuctl-emu/locations/us-central2-b", spec
assert spec["nodeId"] == "n1", spec
n = spec["node"]
assert n["acceleratorType"] == "v4-8" and n["runtimeVersion"], n
assert n["labels"]["env"] == "ci" and len(n["labels"]["tpuctl-run-id"]) == 16
assert "_api" not in q and "@type" not in q
PY
expect_rc 0 "$TPUCTL" describe n1 --format 'value(state,health)'
assert_grep '^READY	HEALTHY$' "$T/out"

# With its node still there, delete needs --force.
expect_rc 4 "$TPUCTL" queued-resources delete qr1
assert_grep 'still has 1 node' "$T/err"
assert_grep 'pass --force' "$T/err"
expect_rc 0 "$TPUCTL" queued-resources delete qr1 --force
assert_grep "deleted queued resource 'qr1'" "$T/err"
expect_rc 4 "$TPUCTL" queued-resources describe qr1
assert_grep "queued resource 'qr1' not found in zone $Z" "$T/err"
expect_rc 4 "$TPUCTL" describe n1
expect_rc 4 "$TPUCTL" queued-resources delete qr1

# A 2-slice multislice of v5litepod-16 (4 workers each), guaranteed.
expect_rc 0 "$TPUCTL" queued-resources create ms --node-count 2 \
    --type v5litepod --topology 4x4 --guaranteed --min-duration 2h \
    --zone us-west4-a --format json
assert_grep "queued resource 'ms' is ACTIVE in us-west4-a: 2 nodes of v5litepod-16 \(4 workers each\)" "$T/err"
python3 - "$T/out" <<'PY' || fail "create --format json is not the ACTIVE queued resource"
import json, sys
q = json.load(open(sys.argv[1]))
assert q["state"]["state"] == "ACTIVE", q["state"]
assert q["guaranteed"] == {"minDuration": "7200s"}, q
spec = q["tpu"]["nodeSpec"][0]
assert spec["multisliceParams"] == {"nodeCount": 2, "nodeIdPrefix": "ms"}, spec
assert "nodeId" not in spec
assert spec["node"]["acceleratorConfig"]["topology"] == "4x4", spec
PY
for n in ms-0 ms-1; do
	expect_rc 0 "$TPUCTL" describe "$n" --zone us-west4-a --format json
	python3 - "$T/out" <<'PY' || fail "$n is not a ready slice of ms"
import json, sys
n = json.load(open(sys.argv[1]))
assert n["state"] == "READY" and n["health"] == "HEALTHY", n
assert n["multisliceNode"] is True, n
assert n["queuedResource"].endswith("/queuedResources/ms"), n
assert len(n["networkEndpoints"]) == 4, n["networkEndpoints"]
PY
done
expect_rc 0 "$TPUCTL" queued-resources list --zone -
assert_grep '^ms +us-west4-a +v5litepod-16 +2 +guaranteed +ACTIVE' "$T/out"
expect_rc 0 "$TPUCTL" queued-resources delete ms --force --zone us-west4-a \
    --async --format 'value(name)'
assert_grep '/operations/operation-' "$T/out"

# Reserved capacity, a short reservation id expanded to its full name.
expect_rc 0 "$TPUCTL" queued-resources create rs --node-id rs1 \
    --accelerator-type v4-8 --reserved --reservation res1 --async \
    --format 'value(name)'
assert_grep "/operations/operation-" "$T/out"
expect_rc 0 "$TPUCTL" queued-resources describe rs --format json
python3 - "$T/out" <<'PY' || fail "the reserved queued resource"
import json, sys
q = json.load(open(sys.argv[1]))
assert q["reservationName"] == \
    "projects/tpuctl-emu/locations/us-central2-b/reservations/res1", q
assert q["tpu"]["nodeSpec"][0]["node"]["schedulingConfig"] == \
    {"reserved": True}, q
assert "spot" not in q and "guaranteed" not in q
PY

# --reservation alone (gcloud's way): reserved capacity, the same body
expect_rc 0 "$TPUCTL" --dry-run queued-resources create rt --node-id rt1 \
    --accelerator-type v4-8 --reservation res1
jq -c 'select(.method == "POST") | [(.url | split("?")[0] | split("/")[-6]),
    .body.reservationName, .body.tpu.nodeSpec[0].node.schedulingConfig,
    .body.spot, .body.guaranteed]' "$T/out" >"$T/dry"
[ "$(cat "$T/dry")" = '["v2","projects/tpuctl-emu/locations/us-central2-b/reservations/res1",{"reserved":true},null,null]' ] ||
    fail "--reservation alone: $(cat "$T/dry") ($(cat "$T/out"))"
expect_rc 0 "$TPUCTL" queued-resources create rt --node-id rt1 \
    --accelerator-type v4-8 --reservation res1 --async
expect_rc 0 "$TPUCTL" queued-resources describe rt --format json
jq -c '[.reservationName, .tpu.nodeSpec[0].node.schedulingConfig, .spot,
    .guaranteed]' "$T/out" >"$T/got"
[ "$(cat "$T/got")" = '["projects/tpuctl-emu/locations/us-central2-b/reservations/res1",{"reserved":true},null,null]' ] ||
    fail "--reservation alone, stored: $(cat "$T/got")"

# FAILED (its validity ends in a stockout): exit 7 with the reason; the
# failed queued resource stays for reset, which queues it again.
"$EMULATOR" event --state-dir "$EMU_DIR" --zone $Z stockout >/dev/null ||
    fail "stockout event"
expect_rc 7 "$TPUCTL" queued-resources create qf --node-id f1 \
    --accelerator-type v4-8 --valid-until-duration 2s
assert_grep "queued resource 'qf' in zone $Z FAILED: .*no more capacity.*\(code 8\)" "$T/err"
expect_rc 0 "$TPUCTL" queued-resources describe qf --format 'value(state.state)'
[ "$(cat "$T/out")" = FAILED ] || fail "qf is $(cat "$T/out")"
emu_event '{"event":"stockout","zone":"us-central2-b","clear":true}'
[ "$CODE" = 200 ] || fail "clearing the stockout: HTTP $CODE"
expect_rc 0 "$TPUCTL" queued-resources reset qf
assert_grep "reset queued resource 'qf': ACCEPTED, queued again" "$T/err"
expect_rc 4 "$TPUCTL" queued-resources reset qf
assert_grep 'only FAILED or SUSPENDED' "$T/err"
expect_rc 4 "$TPUCTL" queued-resources reset nope

expect_rc 0 "$TPUCTL" queued-resources delete qf rs rt --force
expect_rc 0 "$TPUCTL" queued-resources list --zone - --format json
[ "$(tr -d ' \n' <"$T/out")" = "[]" ] || fail "left: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" list --zone - --format json
[ "$(tr -d ' \n' <"$T/out")" = "[]" ] || fail "nodes left: $(cat "$T/out")"
