#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# jobs and cancel through the warm pool (issue 18): while a connection
# holder keeps the node's sessions, `tpuctl jobs` reads the states of
# jobs not yet over through it (and `tpuctl logs` its status round),
# and `tpuctl cancel` stops a job through it, with the same output and
# exit status as cold (no holder); with ssh/persist a duration, jobs
# starts the holder itself.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

# shellcheck source=tests/e2e/lib_warm.sh
. "$(dirname "$0")/lib_warm.sh"

emu_start --set fleet.key_delay_ms=0
fleet_api_setup
fleet_create_node t093 v4-16 90

# a job that runs on until cancelled; one with worker 1 ended (exit 3)
long='sleep 60'
mixed='h=${HOME%/home}; [ "${h##*/w}" = 0 ] || exit 3; sleep 60'
for j in j1 j3; do
	expect_rc 0 "$TPUCTL" run --detach --name "$j" t093 --command "$long"
done
expect_rc 0 "$TPUCTL" run --detach --name j2 t093 --command "$mixed"
# until worker 1 of j2 has ended (a loaded machine may take a while)
n=0
until "$TPUCTL" jobs t093 --format 'value(name,state)' 2>/dev/null |
    grep -q '^j2	1 running, 1 exited 3$'; do
	n=$((n + 1))
	[ $n -lt 100 ] || fail "j2 did not reach its states"
	sleep 0.1
done

# jobs' states without the durations (they go on)
jobs_snap() {
	expect_rc 0 "$TPUCTL" jobs t093 --format json
	jq -S 'map(del(.duration))' "$T/out" >"$T/jobs.json"
	cp "$T/jobs.json" "$T/out"
	warm_snap "$1"
}

# cold: no holder
jobs_snap cold
[ "$(jq -r '.[] | select(.name == "j2") | .state' "$T/out")" = \
    "1 running, 1 exited 3" ] || fail "j2 cold: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" -vv jobs t093
assert_no_grep 'through connection holder' "$T/err"
# warm: a holder started by ssh --persist is used
expect_rc 0 "$TPUCTL" ssh t093 --persist 30s --worker=all -- true
pid=$(holder_pid t093)
[ -n "$pid" ] || fail "no holder: $(cat "$T/list")"
expect_rc 0 "$TPUCTL" -vv jobs t093
assert_grep "through connection holder $pid\$" "$T/err"
jobs_snap warm
warm_cmp cold warm
expect_rc 0 "$TPUCTL" jobs t093 --format 'value(name,state)'
warm_snap warm_table
expect_rc 0 "$TPUCTL" ssh-pool stop
expect_rc 0 "$TPUCTL" jobs t093 --format 'value(name,state)'
warm_snap cold_table
warm_cmp cold_table warm_table

# logs (their status round goes through the holder too): same both ways
rc_cold=0
"$TPUCTL" logs j2 >"$T/out" 2>"$T/err" || rc_cold=$?
warm_snap logs_cold
expect_rc 0 "$TPUCTL" ssh t093 --persist 30s --worker=all -- true
rc_warm=0
"$TPUCTL" logs j2 >"$T/out" 2>"$T/err" || rc_warm=$?
warm_snap logs_warm
[ "$rc_cold" -eq "$rc_warm" ] ||
    fail "logs: cold exit $rc_cold, warm exit $rc_warm"
warm_cmp logs_cold logs_warm
expect_rc 0 "$TPUCTL" ssh-pool stop

# cancel: j1 cold, j3 warm (the same shape): same lines, same status
expect_rc 0 "$TPUCTL" cancel --grace 2 j1
sed 's/j1/JOB/g' "$T/out" >"$T/o" && mv "$T/o" "$T/out"
sed 's/j1/JOB/g' "$T/err" >"$T/e" && mv "$T/e" "$T/err"
warm_snap cancel_cold
assert_grep '^worker 1: killed by TERM$' "$T/err"
expect_rc 0 "$TPUCTL" ssh t093 --persist 30s --worker=all -- true
pid=$(holder_pid t093)
expect_rc 0 "$TPUCTL" -vv cancel --grace 2 j3
assert_grep "through connection holder $pid\$" "$T/err"
# without -vv's lines ("tpuctl: function: ...")
grep -v -E '^tpuctl: [a-z_0-9]+: ' "$T/err" | sed 's/j3/JOB/g' >"$T/e" &&
    mv "$T/e" "$T/err"
sed 's/j3/JOB/g' "$T/out" >"$T/o" && mv "$T/o" "$T/out"
warm_snap cancel_warm
warm_cmp cancel_cold cancel_warm

# ssh/persist a duration: jobs starts the holder itself
expect_rc 0 "$TPUCTL" ssh-pool stop
expect_rc 0 "$TPUCTL" config set ssh/persist 30s
expect_rc 0 "$TPUCTL" -vv jobs t093
assert_grep 'through connection holder [0-9]*$' "$T/err"
[ -n "$(holder_pid t093)" ] || fail "jobs started no holder: $(cat "$T/list")"
expect_rc 0 "$TPUCTL" cancel --grace 2 j2
assert_grep '^worker 0: killed by TERM$' "$T/err"
assert_grep '^worker 1: exited 3$' "$T/err"
