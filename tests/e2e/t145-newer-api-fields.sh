#!/bin/sh
# Issue 17: queued-resources create's gcloud flags on the fields of the
# newer tpu.v2alpha1 revision (tpu-api.json 20250410): --max-run-duration
# (QueuedResource.runDuration.maxRunDuration) and --workload-type
# (MultiNodeParams.workloadType) and --provisioning-model flex-start
# (QueuedResource.provisioningModel), and create's --reservation
# (SchedulingConfig.reservationName) are sent on v2alpha1, stored and read
# back by describe; the emulator refuses the field on v2; bad
# values are one line, exit 2, and send nothing.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_tpu.sh
. "$(dirname "$0")/lib_tpu.sh"
emu_start --set tpu.create_ms=20 --set tpu.qr_accept_ms=10 \
    --set tpu.qr_provision_ms=20
tpu_setup

# the body tpuctl would send, and the version it goes to
expect_rc 0 "$TPUCTL" --dry-run queued-resources create q1 \
    --accelerator-type v4-8 --node-id n1 --max-run-duration 1h30m
jq -r 'select(.method == "POST") | "\(.url | split("?")[0] |
    split("/")[-6]) \(.body.runDuration | tojson)"' "$T/out" >"$T/dry"
[ "$(cat "$T/dry")" = 'v2alpha1 {"maxRunDuration":"5400s"}' ] ||
    fail "--max-run-duration body: $(cat "$T/dry") ($(cat "$T/out"))"

# sent for real: a v2alpha1 POST, stored, read back by describe
expect_rc 0 "$TPUCTL" queued-resources create q1 \
    --accelerator-type v4-8 --node-id n1 --max-run-duration 1h30m
emu_requests | jq -r 'select(.method == "POST") | "\(.path) \(.status)"' \
    >"$T/posts"
grep -q "^/v2alpha1/$P/queuedResources 200$" "$T/posts" ||
    fail "no v2alpha1 create: $(cat "$T/posts")"
expect_rc 0 "$TPUCTL" queued-resources describe q1 \
    --format 'value(runDuration.maxRunDuration)'
[ "$(cat "$T/out")" = 5400s ] || fail "stored runDuration: '$(cat "$T/out")'"

# --provisioning-model flex-start: QueuedResource.provisioningModel
expect_rc 0 "$TPUCTL" --dry-run queued-resources create q5 \
    --accelerator-type v4-8 --node-id n5 --provisioning-model FLEX_START
jq -r 'select(.method == "POST") | "\(.url | split("?")[0] |
    split("/")[-6]) \(.body.provisioningModel) \(.body.spot // "-")"' \
    "$T/out" >"$T/dry"
[ "$(cat "$T/dry")" = 'v2alpha1 FLEX_START -' ] ||
    fail "flex-start body: $(cat "$T/dry") ($(cat "$T/out"))"
expect_rc 0 "$TPUCTL" queued-resources create q5 --accelerator-type v4-8 \
    --node-id n5 --provisioning-model flex-start --max-run-duration 2h
expect_rc 0 "$TPUCTL" queued-resources describe q5 \
    --format 'value(provisioningModel,runDuration.maxRunDuration)'
[ "$(cat "$T/out")" = "$(printf 'FLEX_START\t7200s')" ] ||
    fail "stored flex-start: '$(cat "$T/out")'"

# --workload-type: MultiNodeParams.workloadType, a multislice on v2alpha1
expect_rc 0 "$TPUCTL" --dry-run queued-resources create q4 \
    --accelerator-type v4-8 --node-count 2 --workload-type availability-optimized
jq -r 'select(.method == "POST") | "\(.url | split("?")[0] |
    split("/")[-6]) \(.body.tpu.nodeSpec[0].multiNodeParams | tojson)"' \
    "$T/out" >"$T/dry"
[ "$(cat "$T/dry")" = 'v2alpha1 {"nodeCount":2,"nodeIdPrefix":"q4","workloadType":"AVAILABILITY_OPTIMIZED"}' ] ||
    fail "--workload-type body: $(cat "$T/dry") ($(cat "$T/out"))"
expect_rc 0 "$TPUCTL" queued-resources create q4 \
    --accelerator-type v4-8 --node-count 2 --workload-type throughput-optimized
expect_rc 0 "$TPUCTL" queued-resources describe q4 --format json
jq -r '.tpu.nodeSpec[0] | .multiNodeParams // .multisliceParams |
    .workloadType' "$T/out" >"$T/wt"
[ "$(cat "$T/wt")" = THROUGHPUT_OPTIMIZED ] ||
    fail "stored workloadType: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" queued-resources list
assert_grep '^q4 .* 2 ' "$T/out"
# gcloud's spelling: the API's enum name (what gcloud compares against)
for wt in AVAILABILITY_OPTIMIZED THROUGHPUT_OPTIMIZED; do
	expect_rc 0 "$TPUCTL" --dry-run queued-resources create q6 \
	    --accelerator-type v4-8 --node-count 2 --workload-type "$wt"
	jq -r 'select(.method == "POST") |
	    .body.tpu.nodeSpec[0].multiNodeParams.workloadType' "$T/out" >"$T/dry"
	[ "$(cat "$T/dry")" = "$wt" ] ||
	    fail "--workload-type $wt body: $(cat "$T/out")"
done
expect_rc 0 "$TPUCTL" queued-resources create q6 \
    --accelerator-type v4-8 --node-count 2 --workload-type AVAILABILITY_OPTIMIZED
expect_rc 0 "$TPUCTL" queued-resources describe q6 --format json
jq -e '.tpu.nodeSpec[0] | (.multiNodeParams // .multisliceParams) |
    .workloadType == "AVAILABILITY_OPTIMIZED"' \
    "$T/out" >/dev/null || fail "stored q6 workloadType: $(cat "$T/out")"

# create --reservation: a node's SchedulingConfig.reservationName
expect_rc 0 "$TPUCTL" --dry-run create c1 --accelerator-type v4-8 \
    --provisioning-model reservation-bound --reservation r1
jq -r 'select(.method == "POST") | "\(.url | split("?")[0] |
    split("/")[-6]) \(.body.schedulingConfig | tojson)"' "$T/out" >"$T/dry"
[ "$(cat "$T/dry")" = "v2alpha1 {\"reserved\":true,\"reservationName\":\"projects/$PROJECT/reservations/r1\"}" ] ||
    fail "--reservation body: $(cat "$T/dry") ($(cat "$T/out"))"
expect_rc 0 "$TPUCTL" create c1 --accelerator-type v4-8 --reserved \
    --reservation "projects/other-p/reservations/r2"
expect_rc 0 "$TPUCTL" describe c1 --format 'value(schedulingConfig.reservationName)'
[ "$(cat "$T/out")" = projects/other-p/reservations/r2 ] ||
    fail "stored reservationName: '$(cat "$T/out")'"

# the emulator: runDuration is v2alpha1's only
N='"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"'
expect_api 400 POST "/v2/$P/queuedResources?queuedResourceId=q2" \
    "{\"tpu\":{\"nodeSpec\":[{\"nodeId\":\"n2\",\"parent\":\"$P\",\"node\":{$N}}]},\"runDuration\":{\"maxRunDuration\":\"60s\"}}"
expect_jq .error.message \
    "Invalid JSON payload received. Unknown name \"runDuration\" at 'queued_resource': Cannot find field."
expect_api 400 POST "/v2/$P/nodes?nodeId=c2" \
    "{$N,\"schedulingConfig\":{\"reserved\":true,\"reservationName\":\"r\"}}"
expect_jq .error.message \
    "Invalid JSON payload received. Unknown name \"reservationName\" at 'node.scheduling_config': Cannot find field."
expect_api 400 POST "/v2/$P/queuedResources?queuedResourceId=q2" \
    "{\"tpu\":{\"nodeSpec\":[{\"nodeId\":\"n2\",\"parent\":\"$P\",\"node\":{$N}}]},\"provisioningModel\":\"FLEX_START\"}"
expect_jq .error.message \
    "Invalid JSON payload received. Unknown name \"provisioningModel\" at 'queued_resource': Cannot find field."
expect_api 400 POST "/v2alpha1/$P/queuedResources?queuedResourceId=q2" \
    "{\"tpu\":{\"nodeSpec\":[{\"nodeId\":\"n2\",\"parent\":\"$P\",\"node\":{$N}}]},\"provisioningModel\":\"CHEAP\"}"
expect_jq .error.message \
    "Invalid value at 'queued_resource.provisioning_model' (type.googleapis.com/google.cloud.tpu.v2alpha1.QueuedResource.ProvisioningModel), \"CHEAP\""
expect_api 404 GET "/v2alpha1/$P/queuedResources/q2"

# bad values: one line naming the value and the rule, exit 2, no request
n0=$(emu_requests | wc -l)
for bad in 0 -5m 1x soon; do
	expect_rc 2 "$TPUCTL" queued-resources create q3 \
	    --accelerator-type v4-8 --node-id n3 --max-run-duration "$bad"
	assert_grep "'$bad'.*--max-run-duration|--max-run-duration '$bad'" "$T/err"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "'$bad': $(cat "$T/err")"
done
for bad in fast THROUGHPUT-OPTIMIZED availability_optimized ''; do
	expect_rc 2 "$TPUCTL" queued-resources create q3 \
	    --accelerator-type v4-8 --node-count 2 --workload-type "$bad"
	assert_grep "invalid --workload-type '$bad': one of throughput-optimized, availability-optimized \(or THROUGHPUT_OPTIMIZED, AVAILABILITY_OPTIMIZED\)$" "$T/err"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "'$bad': $(cat "$T/err")"
done
expect_rc 2 "$TPUCTL" queued-resources create q3 --accelerator-type v4-8 \
    --node-id n3 --provisioning-model cheap
assert_grep "^tpuctl: invalid --provisioning-model 'cheap': one of standard, spot, reservation-bound, flex-start$" "$T/err"
expect_rc 2 "$TPUCTL" queued-resources create q3 --accelerator-type v4-8 \
    --node-id n3 --provisioning-model flex-start --spot
assert_grep "^tpuctl: --provisioning-model excludes --spot" "$T/err"
expect_rc 2 "$TPUCTL" create n3 --accelerator-type v4-8 \
    --provisioning-model flex-start
assert_grep "^tpuctl: --provisioning-model=flex-start is not supported for a node" "$T/err"
expect_rc 2 "$TPUCTL" create c3 --accelerator-type v4-8 --reservation r1
assert_grep "^tpuctl: --reservation goes with --reserved or --provisioning-model reservation-bound$" "$T/err"
for bad in R_1 projects/p/reservations/ projects/p/locations/z/reservations/r; do
	expect_rc 2 "$TPUCTL" create c3 --accelerator-type v4-8 --reserved \
	    --reservation "$bad"
	assert_grep "^tpuctl: invalid --reservation '$bad': a reservation id" "$T/err"
done
expect_rc 2 "$TPUCTL" queued-resources create q3 --accelerator-type v4-8 \
    --node-id n3 --workload-type throughput-optimized
assert_grep "^tpuctl: --workload-type goes with --node-count$" "$T/err"
[ "$(emu_requests | wc -l)" = "$n0" ] || fail "a bad value sent a request"
