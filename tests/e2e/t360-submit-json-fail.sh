#!/bin/sh
# tpuctl submit of a JSON spec whose command is a list (each item
# shell-quoted), under another job name (--name), with no workdir (no
# bucket needed): the job fails on worker 1 only, and logs --follow
# returns 8 with the per-worker summary; --format json of submit gives
# the name, queued resource and zone.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200
fleet_api_setup
cat >"$T/j.json" <<'END'
{"name": "q360",
 "slice": {"accelerator-type": "v4-16", "spot": true},
 "command": ["sh", "-c", "echo \"it's w$TPUCTL_WORKER\"; [ \"$TPUCTL_WORKER\" = 0 ]"]}
END
expect_rc 0 "$TPUCTL" submit --name job-360 --format json "$T/j.json"
jq -e '.name == "job-360" and .queuedResource == "q360" and
    .zone == "us-central2-b"' "$T/out" >/dev/null || fail "submit json: $(cat "$T/out")"
expect_rc 8 "$TPUCTL" logs --follow job-360
assert_grep "^\\[w0\\] it's w0\$" "$T/out"
assert_grep "^\\[w1\\] it's w1\$" "$T/out"
assert_grep '^worker 1: exited 1$' "$T/err"
assert_grep '^job job-360: 1 of 2 workers succeeded$' "$T/err"
expect_rc 0 "$TPUCTL" jobs q360
assert_grep 'exited 1' "$T/out"
