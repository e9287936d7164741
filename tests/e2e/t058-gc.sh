#!/bin/sh
# tpuctl gc: a PREEMPTED spot node, a TERMINATED node, a SUSPENDED queued resource (its spot
# node preempted: the node goes with it) and a FAILED one in another zone
# are found with --zone -; a READY node is never touched.  --dry-run (the
# global flag) lists them and sends only GETs.  A DELETE refused for one
# item gives exit 8 with every other item deleted and reported; queued
# resources are deleted with force; a second run finishes the job.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start
Z=us-central2-b
Z2=us-central1-a

expect_rc 0 "$TPUCTL" create keep --accelerator-type v4-8
expect_rc 0 "$TPUCTL" create sp1 --accelerator-type v4-8 --spot
"$EMULATOR" event --state-dir "$EMU_DIR" preempt --node sp1 --zone $Z \
    >/dev/null || fail "preempt sp1"
expect_rc 0 "$TPUCTL" queued-resources create qs --node-id qsn \
    --accelerator-type v4-8 --spot
"$EMULATOR" event --state-dir "$EMU_DIR" preempt --node qsn --zone $Z \
    >/dev/null || fail "preempt qsn"
"$EMULATOR" event --state-dir "$EMU_DIR" stockout --zone $Z2 >/dev/null ||
    fail "stockout"
expect_rc 0 "$TPUCTL" queued-resources create qf --node-id qfn --zone $Z2 \
    --accelerator-type v3-8 --valid-until-duration 1s --async
sleep 2
expect_rc 0 "$TPUCTL" queued-resources describe qf --zone $Z2 \
    --format 'value(state.state)'
assert_grep '^FAILED$' "$T/out"

# --dry-run: the table, nothing but GETs.
writes=$(emu_requests | grep -vc '"method": *"GET"')
expect_rc 0 "$TPUCTL" gc --zone - --dry-run
assert_grep '^KIND +NAME +ZONE +STATE' "$T/out"
assert_grep "^node +sp1 +$Z +PREEMPTED +v4-8" "$T/out"
assert_grep "^queued-resource +qs +$Z +SUSPENDED +v4-8" "$T/out"
assert_grep "^queued-resource +qf +$Z2 +FAILED +v3-8" "$T/out"
assert_no_grep 'keep|qsn' "$T/out"
[ "$(wc -l <"$T/out")" -eq 4 ] || fail "dry run listed: $(cat "$T/out")"
assert_grep 'dry run: would delete 3 resources; nothing was deleted' "$T/err"
[ "$(emu_requests | grep -vc '"method": *"GET"')" -eq "$writes" ] ||
    fail "--dry-run sent a write: $(emu_requests | tail -3)"
# Only the default zone without --zone -.
expect_rc 0 "$TPUCTL" gc --dry-run --format json
jq -e 'length == 2 and all(.[]; .result == "would delete")' "$T/out" \
    >/dev/null || fail "zonal dry run: $(cat "$T/out")"

# One DELETE refused: exit 8, the rest deleted and reported.
emu_inject --method DELETE --path "/v2/projects/tpuctl-emu/locations/$Z/nodes/sp1" \
    --count 1 return-403
expect_rc 8 "$TPUCTL" gc --zone - --format json
jq -e 'length == 3 and
    ([.[] | select(.result == "deleted") | .name] | sort) == ["qf", "qs"] and
    (.[] | select(.name == "sp1") | .result | test("403|ermission"))' \
    "$T/out" >/dev/null || fail "partial: $(cat "$T/out")"
assert_grep "deleted queued-resource 'qs' in $Z \(SUSPENDED\)" "$T/err"
assert_grep "could not delete node 'sp1'" "$T/err"
assert_grep 'deleted 2 of 3' "$T/err"
emu_requests | jq -e -s '[.[] | select(.method == "DELETE" and
    (.path | test("/queuedResources/")))] |
    length == 2 and all(.[]; .query == "force=true")' >/dev/null ||
    fail "queued resources not deleted with force"
expect_rc 4 "$TPUCTL" describe qsn
expect_rc 0 "$TPUCTL" describe sp1 --format 'value(state)'
assert_grep '^PREEMPTED$' "$T/out"

# A second run finishes; the third finds nothing; keep is untouched.
expect_rc 0 "$TPUCTL" gc --quiet
expect_rc 4 "$TPUCTL" describe sp1
expect_rc 0 "$TPUCTL" gc --zone -
assert_grep 'nothing to collect in any zone' "$T/err"
[ ! -s "$T/out" ] || fail "output with nothing to collect: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" describe keep --format 'value(state)'
assert_grep '^READY$' "$T/out"
if emu_requests | grep '"method": *"DELETE"' | grep -q 'nodes/keep'; then
	fail "the READY node was deleted"
fi

# A TERMINATED node holds quota too.
expect_rc 0 "$TPUCTL" create tm1 --accelerator-type v4-8
"$EMULATOR" event --state-dir "$EMU_DIR" terminate --node tm1 --zone $Z \
    >/dev/null || fail "terminate tm1"
expect_rc 0 "$TPUCTL" gc --quiet --format json
jq -e 'length == 1 and .[0].name == "tm1" and .[0].result == "deleted"' \
    "$T/out" >/dev/null || fail "terminated node: $(cat "$T/out")"
expect_rc 4 "$TPUCTL" describe tm1
expect_rc 0 "$TPUCTL" describe keep --format 'value(state)'
assert_grep '^READY$' "$T/out"

# Bad input: no request.
before=$(emu_requests | wc -l)
expect_rc 2 "$TPUCTL" gc extra
expect_rc 2 "$TPUCTL" gc --timeout 0
expect_rc 2 "$TPUCTL" gc --zone 'Not A Zone'
[ "$(emu_requests | wc -l)" -eq "$before" ] || fail "bad gc sent a request"

# --timeout: one deadline for every wait; exit 124, nothing cancelled,
# and a later run finds the nodes gone.
for n in t1 t2; do
	expect_rc 0 "$TPUCTL" create $n --accelerator-type v4-8 --spot
	"$EMULATOR" event --state-dir "$EMU_DIR" preempt --node $n --zone $Z \
	    >/dev/null || fail "preempt $n"
done
emu_inject --method GET --path "/v2/projects/tpuctl-emu/locations/$Z/operations/" \
    --count -1 lro-pending-1000
expect_rc 124 "$TPUCTL" gc --timeout 2s
assert_grep 'timed out after deleting 0 of 2' "$T/err"
assert_grep 'tpuctl operations wait operation-' "$T/err"
"$EMULATOR" faults --state-dir "$EMU_DIR" --clear >/dev/null
if emu_requests | grep -q ':cancel'; then
	fail "an operation was cancelled"
fi
