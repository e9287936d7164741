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

XDG_RUNTIME_DIR=$T/run
export XDG_RUNTIME_DIR
mkdir -m 700 "$XDG_RUNTIME_DIR"
# the holders go with the test (they would exit after --persist anyway)
pool_cleanup() {
	st=$?
	"$TPUCTL" ssh-pool stop >/dev/null 2>&1 || true
	(exit "$st")
	cleanup
}
trap pool_cleanup EXIT

emu_start
fleet_api_setup
fleet_create_node t089 v4-32 90
full=$(jq -r .name "$T/node.json")

# The summary's durations differ from run to run, and so does the
# interleaving of lines of different workers (between two cold runs
# too): compare each file's lines sorted, the durations taken out.
norm() {
	sed 's/ ([0-9.]* s)$//' "$1" | LC_ALL=C sort
}

# cold vs warm: same stdout, same stderr, same status
same() {
	want=$1
	shift
	expect_rc "$want" "$TPUCTL" ssh t089 --persist no "$@"
	norm "$T/out" >"$T/cold.out"
	norm "$T/err" >"$T/cold.err"
	expect_rc "$want" "$TPUCTL" ssh t089 --persist 30s "$@"
	norm "$T/out" >"$T/warm.out"
	cmp "$T/warm.out" "$T/cold.out" ||
	    fail "warm stdout differs: $(diff "$T/cold.out" "$T/warm.out")"
	norm "$T/err" >"$T/warm.err"
	cmp "$T/warm.err" "$T/cold.err" ||
	    fail "warm stderr differs: $(diff "$T/cold.err" "$T/warm.err")"
}

# the key propagated first: its progress line is no part of a command's
expect_rc 0 "$TPUCTL" ssh t089 --persist no --worker=all -- true

cmd='h=${HOME%/home}; echo "out ${h##*/w}"; echo "err ${h##*/w}" >&2'
same 0 --worker=all -- "$cmd"
[ "$(grep -c '^\[w[0-3]\] out [0-3]$' "$T/out")" -eq 4 ] ||
    fail "not every worker ran: $(cat "$T/out")"

# the holder keeps the four sessions
expect_rc 0 "$TPUCTL" ssh-pool list
assert_grep "/t089 .* 4 " "$T/out"

# warm again (sessions reused), then the command's own status
same 0 --worker=all -- "$cmd"
same 3 --worker=1 -- 'echo x; exit 3'
same 8 --worker=all -- 'h=${HOME%/home}; [ "${h##*/w}" != 2 ]'
# raw: a last line without newline on one worker (on several, where it
# lands among the others' lines differs from run to run, cold or warm)
same 0 --worker=1 --output raw -- 'printf "a\nb"'
same 0 --worker=all --output raw -- 'printf "a\nb\n"'
same 0 --worker=0-1 --output jsonl -- "$cmd"

# a worker down: 8 both ways, the others still run
fleet_api POST /_emulator/events \
    "{\"event\":\"worker-down\",\"node\":\"$full\",\"worker\":3}" >/dev/null ||
    fail "worker-down event failed"
same 8 --worker=all -- "$cmd"
assert_grep '^worker 3: ' "$T/err"

expect_rc 0 "$TPUCTL" ssh-pool stop t089
expect_rc 0 "$TPUCTL" ssh-pool list
assert_no_grep "/t089 " "$T/out"
expect_rc 4 "$TPUCTL" ssh-pool stop t089
expect_rc 2 "$TPUCTL" ssh t089 --persist 25h --worker=0 -- true
assert_grep "persist '25h'" "$T/err"
