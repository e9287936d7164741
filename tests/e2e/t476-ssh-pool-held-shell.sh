#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# jobs' status rounds on the connection holder's held shells (issue 18,
# SSHPOOL_F_SHELL): warm `tpuctl jobs` opens one long-lived sh per held
# session and reuses it from command to command; its output is byte for
# byte the cold one's; a held shell killed on the worker between two
# commands costs nothing but a new shell (the next answer is right); a
# job printing end-marker-like lines forges no status (they are its
# log, shown as they were written); cancel goes through them too.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

# shellcheck source=tests/e2e/lib_warm.sh
. "$(dirname "$0")/lib_warm.sh"

# held_shells: "wN PID" for each held shell of this test's workers: a
# process whose command line is exactly "sh" (the holder's "exec sh"),
# with HOME a worker's home under $T
held_shells() {
	for d in /proc/[0-9]*; do
		# a process may end meanwhile: its files are gone
		{ c=$(tr '\0' ' ' <"$d/cmdline"); } 2>/dev/null || continue
		[ "$c" = "sh " ] || continue
		{ h=$(tr '\0' '\n' <"$d/environ" | sed -n 's/^HOME=//p'); } \
		    2>/dev/null || continue
		case $h in "$T"/*) ;; *) continue ;; esac
		h=${h%/home}
		echo "w${h##*/w} ${d#/proc/}"
	done | LC_ALL=C sort
}

emu_start --set fleet.key_delay_ms=0
fleet_api_setup
fleet_create_node t476 v4-16 90

fake=tpuctl-end-0123456789abcdef0123456789abcdef
# end-marker-like lines on both streams (a status of 0 on stdout), then
# on until cancelled; and a job that ends with exit 3 everywhere
expect_rc 0 "$TPUCTL" run --detach --name j1 t476 --command \
    "printf '\\n%s 0\\n' $fake; printf '\\n%s\\n' $fake >&2; sleep 600"
expect_rc 0 "$TPUCTL" run --detach --name j2 t476 --command 'exit 3'
n=0
until "$TPUCTL" jobs t476 --format json >"$T/j.json" 2>/dev/null &&
    [ "$(jq -r '.[] | select(.name == "j2") | .state' "$T/j.json")" = \
        "2 exited 3" ]; do
	n=$((n + 1))
	[ $n -lt 100 ] || fail "j2 did not end: $(cat "$T/j.json")"
	sleep 0.1
done

# jobs' states without the durations (they go on)
jobs_snap() {
	expect_rc 0 "$TPUCTL" jobs t476 --format json
	jq -S 'map(del(.duration))' "$T/out" >"$T/jobs.json"
	cp "$T/jobs.json" "$T/out"
	warm_snap "$1"
}

jobs_snap cold
[ "$(jq -r '.[] | select(.name == "j1") | .state' "$T/out")" = "2 running" ] ||
    fail "j1 cold: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" jobs t476 --format 'value(name,state)'
warm_snap cold_table
"$TPUCTL" logs j1 >"$T/out" 2>"$T/err" || fail "logs j1 cold failed"
warm_snap logs_cold
assert_grep "^\[w0\] $fake 0\$" "$T/logs_cold.out"
[ -z "$(held_shells)" ] || fail "held shells before any holder: $(held_shells)"

# warm: the first jobs opens the held shells, the next reuses them
expect_rc 0 "$TPUCTL" ssh t476 --persist 30s --worker=all -- true
pid=$(holder_pid t476)
[ -n "$pid" ] || fail "no holder: $(cat "$T/list")"
[ -z "$(held_shells)" ] || fail "ssh opened held shells: $(held_shells)"
expect_rc 0 "$TPUCTL" -vv jobs t476 --format json
assert_grep "through connection holder $pid\$" "$T/err"
held_shells >"$T/held1"
[ "$(cut -d' ' -f1 "$T/held1" | tr '\n' ' ')" = "w0 w1 " ] ||
    fail "want one held shell per worker: $(cat "$T/held1")"
jobs_snap warm
warm_cmp cold warm
held_shells >"$T/held2"
cmp "$T/held1" "$T/held2" ||
    fail "held shells not reused: $(cat "$T/held1") then $(cat "$T/held2")"
expect_rc 0 "$TPUCTL" jobs t476 --format 'value(name,state)'
warm_snap warm_table
warm_cmp cold_table warm_table

# worker 0's held shell killed between two commands: the next answer is
# the same, from a new shell there; worker 1's is still the same
kill -9 "$(sed -n 's/^w0 //p' "$T/held1")"
jobs_snap warm_killed
warm_cmp cold warm_killed
held_shells >"$T/held3"
[ "$(sed -n 's/^w1 //p' "$T/held3")" = "$(sed -n 's/^w1 //p' "$T/held1")" ] ||
    fail "worker 1's held shell changed: $(cat "$T/held1") / $(cat "$T/held3")"
w0=$(sed -n 's/^w0 //p' "$T/held3")
if [ -z "$w0" ] || [ "$w0" = "$(sed -n 's/^w0 //p' "$T/held1")" ]; then
	fail "no new held shell on worker 0: $(cat "$T/held3")"
fi
[ "$(holder_pid t476)" = "$pid" ] || fail "the holder changed"

# logs: its status round on the held shells, the log as the job wrote it
"$TPUCTL" logs j1 >"$T/out" 2>"$T/err" || fail "logs j1 warm failed"
warm_snap logs_warm
warm_cmp logs_cold logs_warm

# cancel through them: j1 killed everywhere, as cold
expect_rc 0 "$TPUCTL" -vv cancel --grace 2 j1
assert_grep "through connection holder $pid\$" "$T/err"
assert_grep '^worker 0: killed by TERM$' "$T/err"
assert_grep '^worker 1: killed by TERM$' "$T/err"
expect_rc 0 "$TPUCTL" jobs t476 --format json
[ "$(jq -r '.[] | select(.name == "j1") | .state' "$T/out")" = \
    "2 killed by TERM" ] || fail "j1 after cancel: $(cat "$T/out")"
# the holder's stop ends the held shells with their sessions
expect_rc 0 "$TPUCTL" ssh-pool stop
n=0
until [ -z "$(held_shells)" ]; do
	n=$((n + 1))
	[ $n -lt 50 ] || fail "held shells left after stop: $(held_shells)"
	sleep 0.1
done
