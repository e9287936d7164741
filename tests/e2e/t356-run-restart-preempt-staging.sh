#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# run --max-restarts --stage: the spot node is preempted while its worker
# is still pulling the staged workdir from the bucket (the download is
# stalled by the emulator): the attempt ends with the worker lost, the
# node is deleted and recreated, the new worker pulls the archive again
# (checked by its sha256) and the job runs once, with the right workdir.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200 --set tpu.preempt_notice_ms=300
fleet_api_setup
expect_rc 0 "$TPUCTL" create t356 --accelerator-type v4-8 --spot \
    --version tpu-ubuntu2204-base
expect_rc 0 "$TPUCTL" data mb gs://stg
mkdir -p "$T/wd/d"
head -c 400000 /dev/urandom >"$T/wd/d/blob"
sum=$(sha256sum <"$T/wd/d/blob" | cut -c1-64)

# stage it once, then drop the worker's copy so the next run pulls it
expect_rc 0 "$TPUCTL" -v run --name s0 --stage gs://stg/jobs/ \
    --workdir "$T/wd" t356 -- true
sha=$(sed -n 's|.*workdir staged as gs://stg/jobs/\([0-9a-f]\{64\}\)\.tar.*|\1|p' "$T/err" | head -1)
[ -n "$sha" ] || fail "no staged archive named: $(cat "$T/err")"
expect_rc 0 "$TPUCTL" ssh t356 -- sh -c 'rm -f .tpuctl/wd/*.tar'
# the object's GETs stall after 100 KiB (the client's check, the pull)
emu_inject --method GET --path "/storage/v1/b/stg/o/jobs%2F$sha.tar" \
    --count 2 stall-15s-after-100K

"$TPUCTL" run t356 --name pj --max-restarts 1 --stage gs://stg/jobs/ \
    --workdir "$T/wd" \
    --command 'echo "r$TPUCTL_RESTART_COUNT $(sha256sum <d/blob | cut -c1-64)"' \
    >"$T/r.out" 2>"$T/r.err" &
rpid=$!
# once the worker is inside the download (a .part file), preempt
n=0
until "$TPUCTL" ssh t356 -- sh -c 'ls .tpuctl/wd/' 2>/dev/null | grep -q '\.part$'; do
	n=$((n + 1))
	[ $n -lt 150 ] || fail "the worker never started pulling: $(cat "$T/r.err")"
	sleep 0.2
done
"$EMULATOR" event --state-dir "$EMU_DIR" preempt --node t356 || fail "preempt failed"
rc=0
wait "$rpid" || rc=$?
[ "$rc" -eq 0 ] || fail "preempted while staging: exit $rc: $(cat "$T/r.out" "$T/r.err")"
assert_grep 'job pj: attempt 1 ended: node t356 is PREEMPTED; restart 1 of 1, recreating the node$' "$T/r.err"
assert_grep "node 't356' is READY again" "$T/r.err"
[ "$(cat "$T/r.out")" = "[w0] r1 $sum" ] || fail "output: $(cat "$T/r.out")"
expect_rc 0 "$TPUCTL" list --format json
jq -e 'length == 1 and .[0].state == "READY"' "$T/out" >/dev/null ||
	fail "after recovery: $(cat "$T/out")"
echo ok
