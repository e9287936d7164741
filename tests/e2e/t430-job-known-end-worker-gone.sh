#!/bin/sh
# A job's end, once recorded by the client (exited N, killed by SIG),
# stays what it was when its worker goes away later: `logs --follow`,
# `logs` and `jobs` still read "exited 0" for a worker whose sshd is
# down now (emulator worker-down), exit 0; "lost" only where the end was
# never known (a detached job whose worker went down mid-run: 8).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"
# shellcheck source=tests/e2e/lib_job.sh
. "$(dirname "$0")/lib_job.sh"

emu_start --set fleet.key_delay_ms=200
job_node t430

# ended (exit 0 recorded on both workers), and a detached one still
# running on both when worker 1 goes down
expect_rc 0 "$TPUCTL" run --name ok1 t430 -- sh -c 'echo a; echo b >&2'
assert_grep '^worker 1: exited 0$' "$T/err"
expect_rc 0 "$TPUCTL" run --detach --name run1 t430 -- \
    sh -c 'echo up; sleep 1; echo end'
i=0
until "$TPUCTL" logs run1 2>/dev/null | grep -q '^\[w1\] up$'; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "run1 never started"
	sleep 0.05
done
job_worker_event worker-down 1

expect_rc 0 "$TPUCTL" logs --follow ok1
assert_grep '^\[w1\] a$' "$T/out"
assert_grep '^\[w0\] a$' "$T/out"
[ "$(grep -c '^\[w1\] a$' "$T/out")" -eq 1 ] || fail "ok1 lines twice: $(cat "$T/out")"
assert_grep '^\[w1\] b$' "$T/err"
assert_grep '^worker 1: exited 0$' "$T/err"
assert_grep '^job ok1: 2 of 2 workers succeeded$' "$T/err"
assert_no_grep lost "$T/err"
expect_rc 0 "$TPUCTL" logs ok1
assert_grep '^\[w1\] a$' "$T/out"

# never known: lost, 8; worker 0's end is read
expect_rc 8 "$TPUCTL" logs --follow run1
assert_grep '^worker 1: lost$' "$T/err"
assert_grep '^worker 0: exited 0$' "$T/err"
assert_grep '^\[w0\] end$' "$T/out"

# jobs: the recorded ends stay, the lost one is lost
expect_rc 0 "$TPUCTL" jobs --format json
[ "$(jq -r '.[] | select(.name == "ok1") | .state' "$T/out")" = "2 exited 0" ] ||
	fail "jobs ok1: $(cat "$T/out")"
[ "$(jq -r '.[] | select(.name == "run1") | .workers[1].state' "$T/out")" = lost ] ||
	fail "jobs run1: $(cat "$T/out")"
[ "$(jq -r '.[] | select(.name == "run1") | .workers[0].state' "$T/out")" = "exited 0" ] ||
	fail "jobs run1 w0: $(cat "$T/out")"
# an ended job's duration stops at its end (was: growing with the clock
# for a job followed to exit 0, whose end time was never recorded)
d1=$(jq -r '.[] | select(.name == "ok1") | .duration' "$T/out")
sleep 1.1
expect_rc 0 "$TPUCTL" jobs --format json
[ "$(jq -r '.[] | select(.name == "ok1") | .duration' "$T/out")" = "$d1" ] ||
	fail "ok1's duration grows: $d1, then $(cat "$T/out")"
# and once more, following ended jobs: nothing changes
expect_rc 0 "$TPUCTL" logs --follow ok1
assert_grep '^worker 1: exited 0$' "$T/err"
