#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# After a preemption notice (instance/preempted TRUE; the watcher beside
# the job SIGTERMs its process group, the job's shell included) the
# job's shell records how the job ended: on a spot v4-16 (2 workers)
# worker 0's job traps SIGTERM and exits 7, worker 1's dies of it.
# run --max-restarts 0 ends with 8 (budget used up) and `jobs` / `logs`
# --follow read "exited 7" and "killed by TERM" from the workers, still up
# during the long notice, not "lost".
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200 --set tpu.preempt_notice_ms=30000
fleet_api_setup
expect_rc 0 "$TPUCTL" create t373 --accelerator-type v4-16 --spot \
    --version tpu-ubuntu2204-base

job='[ "$TPUCTL_WORKER" != 0 ] || trap "echo saved; exit 7" TERM
echo up
sleep 40 &
wait
echo never'
"$TPUCTL" run t373 --name nj --max-restarts 0 --command "$job" \
    >"$T/r.out" 2>"$T/r.err" &
rpid=$!
wait_for_grep -c 2 "$T/r.out" '\] up$'
"$EMULATOR" event --state-dir "$EMU_DIR" preempt --node t373 || fail "preempt failed"
rc=0
wait "$rpid" || rc=$?
[ "$rc" -eq 8 ] || fail "run after a preemption: exit $rc: $(cat "$T/r.err")"
assert_grep 'tpuctl: preemption notice \(instance/preempted is TRUE\): SIGTERM to the job$' "$T/r.err"
assert_grep '^\[w0\] saved$' "$T/r.out"
assert_no_grep never "$T/r.out"

expect_rc 0 "$TPUCTL" jobs --format json
[ "$(jq -r '.[] | select(.name == "nj") | .workers[0].state' "$T/out")" = "exited 7" ] ||
	fail "jobs nj worker 0: $(cat "$T/out")"
[ "$(jq -r '.[] | select(.name == "nj") | .workers[1].state' "$T/out")" = "killed by TERM" ] ||
	fail "jobs nj worker 1: $(cat "$T/out")"
assert_no_grep lost "$T/out"
expect_rc 8 "$TPUCTL" logs --follow nj
assert_grep '^\[w0\] saved$' "$T/out"
assert_grep '^worker 0: exited 7$' "$T/err"
assert_grep '^worker 1: killed by TERM$' "$T/err"
assert_no_grep lost "$T/err"
echo ok
