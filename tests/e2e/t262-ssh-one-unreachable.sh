#!/bin/sh
# t262: 1 of 4 workers unreachable (emulator event worker-down) is exit 8
# (some workers failed), not 9 (none reachable), both when the node's
# description is fetched fresh (sshpool_run's final status is what the
# command returns: catches the issue 19 mutation "nunreach == n" ->
# "> 0" in src/sshpool.c, which cmd/fanout.c's retry_fresh masked) and
# when it comes from the node cache (retry_fresh re-runs the failed
# worker and recomputes the status).  The three others run the command.
# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=300
fleet_api_setup
fleet_create_node t262 v4-32 90
full=$(jq -r .name "$T/node.json")
cache="$XDG_CACHE_HOME/tpuctl"

expect_rc 0 "$TPUCTL" ssh t262 --worker=all -- true
fleet_api POST /_emulator/events \
    "{\"event\":\"worker-down\",\"node\":\"$full\",\"worker\":2}" >/dev/null ||
    fail "worker-down event failed"

# check_run: exit 8, worker 2 named, the three others ran
check_run() {
	assert_grep '^worker 2: ' "$T/err"
	assert_no_grep 'no worker could be reached' "$T/err"
	assert_grep '3 of 4 workers succeeded' "$T/err"
	[ "$(grep -c '^\[w[013]\] hi$' "$T/out")" -eq 3 ] ||
	    fail "the other workers did not run: $(cat "$T/out")"
}

# a fresh description: no node cache, so no retry_fresh
rm -rf "$cache"
expect_rc 8 "$TPUCTL" ssh t262 --worker=all --connect-timeout 5 -- echo hi
check_run
[ -d "$cache" ] || fail "the run did not cache the description"

# a cached description: retry_fresh retries worker 2, still 8
expect_rc 8 "$TPUCTL" ssh t262 --worker=all --connect-timeout 5 -- echo hi
check_run
exit 0
