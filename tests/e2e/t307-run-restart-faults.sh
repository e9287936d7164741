#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# run --max-restarts faults: the node deleted from outside during the
# job is recreated from the description read at the start (nothing to
# delete), even when the recreating POST's reply is lost (503: resolved
# by reading the node back, R4); the job runs again with
# TPUCTL_RESTART_COUNT 1 and finishes with 0.  With --stage the archive
# is uploaded once and the recreated workers pull it again.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200
fleet_api_setup
expect_rc 0 "$TPUCTL" create t307 --accelerator-type v4-8 \
    --version tpu-ubuntu2204-base --labels team=ml

job='echo "start r$TPUCTL_RESTART_COUNT"; [ "$TPUCTL_RESTART_COUNT" -ge 1 ] || sleep 60; echo "done r$TPUCTL_RESTART_COUNT"'
"$TPUCTL" run t307 --name gj --max-restarts 1 --command "$job" \
    >"$T/r.out" 2>"$T/r.err" &
rpid=$!
wait_for_grep "$T/r.out" 'start r0$' "" 120
emu_inject --method POST --path "$NODES" --count 1 return-503-after-0K
fleet_api DELETE "$NODES/t307" >/dev/null || fail "delete from outside failed"
rc=0
wait "$rpid" || rc=$?
[ "$rc" -eq 0 ] || fail "run after the node was deleted: exit $rc: $(cat "$T/r.err")"
assert_grep '^\[w0\] start r0$' "$T/r.out"
assert_grep '^\[w0\] start r1$' "$T/r.out"
assert_grep '^\[w0\] done r1$' "$T/r.out"
assert_grep 'job gj: attempt 1 ended: node t307 is gone; restart 1 of 1, recreating the node$' "$T/r.err"
assert_no_grep "deleting node 't307'" "$T/r.err"
assert_grep "recreating node 't307' in .*: v4-8, tpu-ubuntu2204-base, on-demand$" "$T/r.err"
assert_grep '^job gj: 1 of 1 worker succeeded$' "$T/r.err"
# the recreating POST met the 503 (its reply lost) and was resolved
emu_requests | jq -s '[.[] | select(.method == "POST" and
    (.path | endswith("/nodes")))] | .[1:]' >"$T/posts.json"
jq -e 'length >= 1 and .[0].fault == "return-503-after-0K"' \
    "$T/posts.json" >/dev/null || fail "recreate POSTs: $(cat "$T/posts.json")"
expect_rc 0 "$TPUCTL" list --format json
jq -e 'length == 1 and .[0].state == "READY" and .[0].labels.team == "ml"' \
    "$T/out" >/dev/null || fail "after recovery: $(cat "$T/out")"

# --stage: uploaded once, pulled again by the recreated node's worker.
expect_rc 0 "$TPUCTL" data mb gs://stg
mkdir "$T/wd"
echo staged-307 >"$T/wd/msg"
job='echo "start r$TPUCTL_RESTART_COUNT"; [ "$TPUCTL_RESTART_COUNT" -ge 1 ] || sleep 60; echo "done r$TPUCTL_RESTART_COUNT $(cat msg)"'
"$TPUCTL" -v run t307 --name sj --max-restarts 1 --stage gs://stg/j/ \
    --workdir "$T/wd" --command "$job" >"$T/s.out" 2>"$T/s.err" &
rpid=$!
wait_for_grep "$T/s.out" 'start r0$' "" 120
fleet_api DELETE "$NODES/t307" >/dev/null || fail "delete from outside failed"
rc=0
wait "$rpid" || rc=$?
[ "$rc" -eq 0 ] || fail "staged run after the node was deleted: exit $rc: $(cat "$T/s.err")"
assert_grep '^\[w0\] done r1 staged-307$' "$T/s.out"
[ "$(grep -c 'workdir staged as gs://stg/j/' "$T/s.err")" -eq 1 ] ||
	fail "staged more than once: $(cat "$T/s.err")"
assert_no_grep 'workdir sent' "$T/s.err"
echo ok
