#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# The job commands stop on a stdout they cannot write, as the ssh
# fan-out does (t086, K3): `tpuctl logs JOB --follow | head -1` of a job
# printing forever ends at once with head's line, quietly by SIGPIPE
# (141, nothing on stderr), and the job goes on running on every worker
# (tpuctl jobs); `logs --follow >/dev/full` exits 1 with one line; an
# attached `tpuctl run ... | head -1` (or >/dev/full) ends the same way
# and, like the remote commands of `tpuctl ssh ... | head -1`, its job is
# cancelled on every worker (tpuctl-run(1)); a worker its launch had not
# reached yet when the output failed never starts it (no such job there,
# and none later).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200
fleet_api_setup
fleet_create_node t312 v4-16 90

forever='i=0; while :; do echo "line $i"; i=$((i + 1)); sleep 0.02; done'

# closed WHAT CMD...: CMD | head -1 ends within 15 s, 141, stderr empty,
# head got a prefixed line
closed() {
	what=$1
	shift
	rm -f "$T/rc"
	start=$(date +%s)
	{
		set +e
		timeout 60 "$@" 2>"$T/err"
		echo $? >"$T/rc"
	} | head -1 >"$T/first"
	[ $(($(date +%s) - start)) -lt 15 ] || fail "$what | head -1: went on"
	[ "$(cat "$T/rc")" -eq 141 ] ||
	    fail "$what | head -1: exit $(cat "$T/rc"): $(cat "$T/err")"
	[ ! -s "$T/err" ] || fail "$what | head -1: stderr: $(cat "$T/err")"
	assert_grep '^\[w[01]\] line [0-9][0-9]*$' "$T/first"
}

# state NAME: the job's summary state from `tpuctl jobs`
state() {
	expect_rc 0 "$TPUCTL" jobs t312 --format json
	jq -r --arg n "$1" '.[] | select(.name == $n) | .state' "$T/out"
}

expect_rc 0 "$TPUCTL" run --detach --name p1 t312 --command "$forever"
i=0
until "$TPUCTL" logs p1 2>/dev/null | grep -q '^\[w1\] line 3$'; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "p1 never started"
	sleep 0.1
done

# logs --follow into a closed pipe: stops, the job does not
closed "logs --follow" "$TPUCTL" logs --follow p1
# and with the local copy already holding lines (replayed first)
closed "logs --follow (again)" "$TPUCTL" logs --follow p1
[ "$(state p1)" = "2 running" ] || fail "p1 after the closed pipe: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" logs --output raw --worker 0 p1
n1=$(wc -l <"$T/out")
sleep 1
expect_rc 0 "$TPUCTL" logs --output raw --worker 0 p1
[ "$(wc -l <"$T/out")" -gt "$n1" ] || fail "p1 stopped printing"

# a full stdout: one line, exit 1, still not cancelled
start=$(date +%s)
rc=0
timeout 60 "$TPUCTL" logs --follow p1 >/dev/full 2>"$T/err" || rc=$?
[ $rc -eq 1 ] || fail "logs --follow >/dev/full: exit $rc: $(cat "$T/err")"
[ $(($(date +%s) - start)) -lt 15 ] || fail "logs >/dev/full: went on"
assert_grep '^tpuctl: write error on standard output: No space left on device$' "$T/err"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "logs >/dev/full: not one line: $(cat "$T/err")"
[ "$(state p1)" = "2 running" ] || fail "p1 after /dev/full: $(cat "$T/out")"

# cancelled NAME: the attached job NAME ended by its cancel: killed by
# TERM on every worker it started on (at least the one whose line was
# read), no such job on one its launch had not reached yet when the
# output failed, and still so a second later (no launch came late)
cancelled() {
	expect_rc 0 "$TPUCTL" jobs t312 --format json
	jq -e --arg n "$1" '[.[] | select(.name == $n) | .workers[].state] |
	    length == 2 and any(. == "killed by TERM") and
	    all(. == "killed by TERM" or . == "no such job")' "$T/out" \
	    >/dev/null || fail "$1 after the output failed: $(cat "$T/out")"
	cp "$T/out" "$T/$1.jobs"
	sleep 1
	expect_rc 0 "$TPUCTL" jobs t312 --format json
	[ "$(jq -c --arg n "$1" '.[] | select(.name == $n) | .workers' "$T/out")" = \
	    "$(jq -c --arg n "$1" '.[] | select(.name == $n) | .workers' "$T/$1.jobs")" ] ||
	    fail "$1 changed after its cancel: $(cat "$T/$1.jobs") then $(cat "$T/out")"
}

# an attached run: quiet 141, and its job cancelled on every worker
closed "run" "$TPUCTL" run --name a1 t312 --command "$forever"
cancelled a1

# an attached run >/dev/full: one line, exit 1, the job cancelled
rc=0
timeout 60 "$TPUCTL" run --name f1 t312 --command "$forever" \
    >/dev/full 2>"$T/err" || rc=$?
[ $rc -eq 1 ] || fail "run >/dev/full: exit $rc: $(cat "$T/err")"
assert_grep '^tpuctl: write error on standard output: No space left on device; job f1 cancelled$' "$T/err"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "run >/dev/full: not one line: $(cat "$T/err")"
cancelled f1

expect_rc 0 "$TPUCTL" cancel p1
[ "$(state p1)" = "2 killed by TERM" ] || fail "p1 after cancel: $(cat "$T/out")"
echo "ok: $TEST_NAME"
