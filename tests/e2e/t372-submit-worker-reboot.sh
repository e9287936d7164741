#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# A worker of a running submitted job reboots (emulator event reboot:
# every process of it ended, sshd and the startup-script run again): the
# startup-script finds the job's directory and launches nothing (exit 97
# in its log, the job's stdout has its first start only); the job reads
# truthfully: lost on the rebooted worker, running on the other; cancel
# then ends it there (exit 8: worker 1 stays lost, not "killed by TERM")
# and nothing of it runs anywhere.  A bad event is refused.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"
# shellcheck source=tests/e2e/lib_job.sh
. "$(dirname "$0")/lib_job.sh"

emu_start --set fleet.key_delay_ms=200
fleet_api_setup
cat >"$T/job.yaml" <<'END'
name: rb372
slice: {accelerator-type: v4-16}
command: 'echo "started w$TPUCTL_WORKER"; sleep 300; echo never'
END
expect_rc 0 "$TPUCTL" submit "$T/job.yaml"
job_wait_started rb372
if "$EMULATOR" event --state-dir "$EMU_DIR" --node rb372 --worker 7 reboot 2>"$T/e"; then
	fail "reboot of worker 7 of 2 accepted"
fi
"$EMULATOR" event --state-dir "$EMU_DIR" --node rb372 --worker 1 reboot ||
    fail "reboot event failed"
# the startup-script ran again on worker 1 and refused to launch twice
n=0
until "$TPUCTL" ssh rb372 --worker=1 -- sh -c \
    'grep -q "a job named rb372 exists on this worker already" "$HOME/../startup-script.log"' \
    >/dev/null 2>&1; do
	n=$((n + 1))
	[ $n -lt 150 ] || fail "no second boot: $(cat "$T/err")"
	sleep 0.2
done
expect_rc 0 "$TPUCTL" ssh rb372 --worker=1 -- sh -c 'cat "$HOME/../startup-script.log"'
assert_grep 'startup-script exit status 97' "$T/out"
[ "$(grep -c 'Finished running startup scripts' "$T/out")" -eq 2 ] ||
    fail "two boots expected: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" ssh rb372 --worker=all -- sh -c \
    'grep -c started .tpuctl/jobs/rb372/stdout; p=$(cat .tpuctl/jobs/rb372/pgid); if kill -0 -"$p" 2>/dev/null; then echo alive; else echo gone; fi'
assert_grep '^\[w0\] 1$' "$T/out"
assert_grep '^\[w1\] 1$' "$T/out"
assert_grep '^\[w0\] alive$' "$T/out"
assert_grep '^\[w1\] gone$' "$T/out"
expect_rc 0 "$TPUCTL" jobs rb372 --format json
jq -e '[.[0].workers[].state] == ["running", "lost"]' "$T/out" >/dev/null ||
    fail "jobs after the reboot: $(cat "$T/out")"
# cancel ends it on worker 0; worker 1's job was lost, not cancelled
expect_rc 8 "$TPUCTL" cancel --grace 2s rb372
assert_grep '^worker 0: killed by TERM$' "$T/err"
assert_grep '^worker 1: lost$' "$T/err"
expect_rc 0 "$TPUCTL" jobs rb372 --format json
jq -e '[.[0].workers[].state] == ["killed by TERM", "lost"]' "$T/out" >/dev/null ||
    fail "jobs after cancel: $(cat "$T/out")"
expect_rc 8 "$TPUCTL" logs rb372
assert_no_grep never "$T/out"
[ "$(grep -c '^\[w[01]\] started' "$T/out")" -eq 2 ] || fail "logs: $(cat "$T/out")"
echo ok
