#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# Issue 16: a submitted job with max-restarts gets the preemption notice
# as run --max-restarts gives it: when the worker's instance/preempted
# turns TRUE (the emulator's notice, 3 s before the VM stops), one line in
# the job's stderr and SIGTERM to its group; the job's TERM trap runs
# (it could save a checkpoint), then the restart runs the job again.
# Without max-restarts or checkpoint no watcher is started (as run).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_job.sh
. "$(dirname "$0")/lib_job.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200 --set tpu.qr_provision_ms=500 \
    --set tpu.preempt_notice_ms=3000
fleet_api_setup

cat >"$T/r.yaml" <<'END'
name: sub461
slice: {accelerator-type: v4-8, spot: true}
command: 'trap "echo notice r$TPUCTL_RESTART_COUNT; exit 143" TERM; echo "start r$TPUCTL_RESTART_COUNT"; [ "$TPUCTL_RESTART_COUNT" -ge 1 ] || { sleep 60 & wait; }; echo "done r$TPUCTL_RESTART_COUNT"'
max-restarts: 1
delete-after: true
END
"$TPUCTL" submit --wait "$T/r.yaml" >"$T/s.out" 2>"$T/s.err" &
spid=$!
job_preempt_when "$T/s.out" 0 sub461
wait_rc "$spid" 120 submit "$T/s.err"
[ "$rc" -eq 0 ] || fail "submit --wait after a preemption: exit $rc: $(cat "$T/s.err")"
assert_grep '^\[w0\] start r0$' "$T/s.out"
assert_grep '^\[w0\] notice r0$' "$T/s.out"
assert_grep '^\[w0\] tpuctl: preemption notice \(instance/preempted is TRUE\): SIGTERM to the job$' "$T/s.err"
assert_no_grep 'done r0' "$T/s.out"
assert_grep '^\[w0\] done r1$' "$T/s.out"
assert_no_slice sub461

# without max-restarts (or checkpoint): the boot script starts no watcher
# (the job lists the processes of its own session)
cat >"$T/p.yaml" <<'END'
name: sub461p
slice: {accelerator-type: v4-8}
command: 'ps -o args= -s "$(ps -o sid= -p $$)"; echo listed'
delete-after: true
END
expect_rc 0 "$TPUCTL" submit --wait "$T/p.yaml"
assert_grep '^\[w0\] listed$' "$T/out"
assert_no_grep 'tpuctl-notice' "$T/out"
assert_no_slice sub461p
