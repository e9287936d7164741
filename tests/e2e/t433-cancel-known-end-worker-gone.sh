#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# cancel leaves a worker whose job's end is recorded (exited N, killed
# by SIG) alone: not contacted, its state kept, even when its sshd is
# down now (emulator worker-down); only the others are cancelled.  Was:
# every worker set running first, the gone one then "lost", exit 8.
# The exit contract is the fan-out's (tpuctl-cancel(1)): 0 when the job
# ended everywhere, 8 when some worker could not be cancelled ("job J:
# 1 of 2 workers could not be cancelled"), a recorded end counting as
# ended, not as unreachable (9 only when no worker could be reached).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"
# shellcheck source=tests/e2e/lib_job.sh
. "$(dirname "$0")/lib_job.sh"

emu_start --set fleet.key_delay_ms=0
job_node t433

# two jobs: worker 0 exits 0 at once, worker 1 runs on
m=433.$$
for j in a433 b433; do
	expect_rc 0 "$TPUCTL" run --detach --name "$j" t433 --command \
	    "[ \"\$TPUCTL_WORKER\" = 0 ] && exit 0; echo up; exec sleep $m"
done
# until a logs call has recorded worker 0's end (jobs reads the
# record; worker 1 runs on)
for j in a433 b433; do
	i=0
	until { "$TPUCTL" logs "$j" >"$T/l.out" 2>"$T/l.err" || true; } &&
	    grep -q '^\[w1\] up$' "$T/l.out" &&
	    "$TPUCTL" jobs t433 --format json >"$T/j.json" 2>"$T/j.err" &&
	    jq -e --arg j "$j" '.[] | select(.name == $j) |
	        [.workers[].state] == ["exited 0", "running"]' \
	        "$T/j.json" >/dev/null; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "$j: $(cat "$T/l.out" "$T/l.err" "$T/j.json")"
		sleep 0.1
	done
done
job_worker_event worker-down 0

# worker 0 is gone: not contacted, still "exited 0"; worker 1 killed
expect_rc 0 "$TPUCTL" cancel --grace 2s a433
assert_grep '^worker 0: exited 0$' "$T/err"
assert_grep '^worker 1: killed by TERM$' "$T/err"
assert_grep '^job a433: ended on 2 of 2 workers$' "$T/err"
assert_no_grep lost "$T/err"
expect_rc 0 "$TPUCTL" jobs t433 --format json
jq -e '.[] | select(.name == "a433") | [.workers[].state] == ["exited 0", "killed by TERM"]' \
    "$T/out" >/dev/null || fail "jobs after cancel: $(cat "$T/out")"

# both gone: worker 0 still "exited 0", worker 1 lost: 8, not 9
job_worker_event worker-down 1
expect_rc 8 "$TPUCTL" cancel --grace 2s b433
assert_grep '^worker 0: exited 0$' "$T/err"
assert_grep '^worker 1: lost$' "$T/err"
assert_grep '^tpuctl: job b433: 1 of 2 workers could not be cancelled$' "$T/err"
# worker 1 back: the lost one is asked again; worker-down may or may not
# have ended its job (the emulator's sweep of a down worker's daemons is
# best effort): cancelled (0) or still lost (8), nothing left running
job_worker_event worker-up 1
rc=0
"$TPUCTL" cancel --grace 2s b433 >"$T/out" 2>"$T/err" || rc=$?
assert_grep '^worker 0: exited 0$' "$T/err"
case $rc in
0) assert_grep '^worker 1: killed by TERM$' "$T/err" ;;
8)
	assert_grep '^worker 1: lost$' "$T/err"
	# its sshd may still be starting: a job that lived on is cancelled
	# once the worker answers
	i=0
	while pgrep -f "^sleep $m\$" >/dev/null && [ $i -lt 50 ]; do
		"$TPUCTL" cancel --grace 2s b433 >/dev/null 2>&1 || true
		i=$((i + 1))
		sleep 0.2
	done
	;;
*) fail "cancel after worker-up: exit $rc: $(cat "$T/err")" ;;
esac
if pgrep -f "^sleep $m\$" >/dev/null; then
	fail "left after cancel: $(pgrep -af "sleep $m")"
fi
echo ok
