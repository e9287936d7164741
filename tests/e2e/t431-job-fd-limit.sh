#!/bin/sh
# shellcheck disable=SC2016 # remote shells and sh -c expand these
# The job commands keep every worker's session and its two local log
# files open for the whole command, as many descriptors as ssh's
# --output-dir: a low soft RLIMIT_NOFILE is raised toward the hard one
# (run, logs --follow succeed under `ulimit -Sn 16`), and a hard limit
# too low is one line naming the need, exit 1, before any worker is
# contacted (no job record, nothing started).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200
fleet_api_setup
fleet_create_node t431 v4-32 90

lim='ulimit -S -n "$1" && shift && exec "$@"'

expect_rc 0 sh -c "$lim" sh 16 "$TPUCTL" run --name lo1 t431 -- \
    sh -c 'echo "w$TPUCTL_WORKER"'
for w in 0 1 2 3; do
	assert_grep "^\[w$w\] w$w\$" "$T/out"
done
assert_grep '^job lo1: 4 of 4 workers succeeded$' "$T/err"
expect_rc 0 sh -c "$lim" sh 16 "$TPUCTL" logs --follow lo1
assert_grep '^\[w3\] w3$' "$T/out"

# the hard limit too low: refused before anything starts
hard='ulimit -n "$1" && shift && exec "$@"'
expect_rc 1 sh -c "$hard" sh 40 "$TPUCTL" run --name lo2 t431 -- true
assert_grep 'a job on 4 workers' "$T/err"
assert_grep '40' "$T/err"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "more than one line: $(cat "$T/err")"
expect_rc 0 "$TPUCTL" jobs --format 'value(name)'
assert_no_grep '^lo2$' "$T/out"
