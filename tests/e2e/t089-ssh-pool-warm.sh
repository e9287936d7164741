#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# The warm pool (issue 18): tpuctl ssh --persist starts a connection
# holder that keeps the workers' sessions; the next commands run through
# it with output and exit statuses byte-identical to a cold run (0, the
# command's own, 8 for a worker down); ssh-pool list shows the holder,
# ssh-pool stop ends it.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

# shellcheck source=tests/e2e/lib_warm.sh
. "$(dirname "$0")/lib_warm.sh"

emu_start
fleet_api_setup
fleet_create_node t089 v4-32 90
full=$(jq -r .name "$T/node.json")

# the key propagated first: its progress line is no part of a command's
expect_rc 0 "$TPUCTL" ssh t089 --persist no --worker=all -- true

cmd='h=${HOME%/home}; echo "out ${h##*/w}"; echo "err ${h##*/w}" >&2'
warm_same 0 t089 --worker=all -- "$cmd"
[ "$(grep -c '^\[w[0-3]\] out [0-3]$' "$T/out")" -eq 4 ] ||
    fail "not every worker ran: $(cat "$T/out")"

# the holder keeps the four sessions, and the warm runs go through it
expect_rc 0 "$TPUCTL" ssh-pool list
assert_grep "/t089 .* 4 " "$T/out"
pid=$(holder_pid t089)
expect_rc 0 "$TPUCTL" -vv ssh t089 --persist 30s --worker=all -- true
assert_grep "through connection holder $pid\$" "$T/err"

# warm again (sessions reused), then the command's own status
warm_same 0 t089 --worker=all -- "$cmd"
warm_same 3 t089 --worker=1 -- 'echo x; exit 3'
warm_same 8 t089 --worker=all -- 'h=${HOME%/home}; [ "${h##*/w}" != 2 ]'
# raw: a last line without newline on one worker (on several, where it
# lands among the others' lines differs from run to run, cold or warm)
warm_same 0 t089 --worker=1 --output raw -- 'printf "a\nb"'
warm_same 0 t089 --worker=all --output raw -- 'printf "a\nb\n"'
warm_same 0 t089 --worker=0-1 --output jsonl -- "$cmd"

# a worker down: 8 both ways, the others still run
fleet_api POST /_emulator/events \
    "{\"event\":\"worker-down\",\"node\":\"$full\",\"worker\":3}" >/dev/null ||
    fail "worker-down event failed"
warm_same 8 t089 --worker=all -- "$cmd"
assert_grep '^worker 3: ' "$T/err"

expect_rc 0 "$TPUCTL" ssh-pool stop t089
expect_rc 0 "$TPUCTL" ssh-pool list
assert_no_grep "/t089 " "$T/out"
expect_rc 4 "$TPUCTL" ssh-pool stop t089
expect_rc 2 "$TPUCTL" ssh t089 --persist 25h --worker=0 -- true
assert_grep "persist '25h'" "$T/err"
