#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# run --output prefix|raw|jsonl renders the attached job's lines as ssh
# and logs do (one renderer, cmd/fanout.c): jsonl objects with the job's
# name on stdout for both streams, raw lines without prefix; the summary
# stays on stderr; a bad mode is refused before anything starts (2).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200
fleet_api_setup
fleet_create_node t432 v4-16 90

job='echo "o$TPUCTL_WORKER"; echo "e$TPUCTL_WORKER" >&2'

expect_rc 0 "$TPUCTL" run --output jsonl --name j1 t432 --command "$job"
jq -e . "$T/out" >/dev/null || fail "not JSON lines: $(cat "$T/out")"
for w in 0 1; do
	assert_grep "^\\{\"job\":\"j1\",\"node\":\"t432\",\"worker\":$w,\"stream\":\"stdout\",\"line\":\"o$w\"\\}\$" "$T/out"
	assert_grep "^\\{\"job\":\"j1\",\"node\":\"t432\",\"worker\":$w,\"stream\":\"stderr\",\"line\":\"e$w\"\\}\$" "$T/out"
done
[ "$(wc -l <"$T/out")" -eq 4 ] || fail "jsonl: $(cat "$T/out")"
assert_grep '^job j1: 2 of 2 workers succeeded$' "$T/err"
# the same as logs renders from the local copy
expect_rc 0 "$TPUCTL" logs --output jsonl j1
sort "$T/out" >"$T/logs.jsonl"
expect_rc 0 "$TPUCTL" run --output jsonl --name j2 t432 --command "$job"
sed 's/"job":"j2"/"job":"j1"/' "$T/out" | sort >"$T/run.jsonl"
cmp -s "$T/logs.jsonl" "$T/run.jsonl" ||
	fail "run and logs jsonl differ: $(cat "$T/run.jsonl" "$T/logs.jsonl")"

expect_rc 0 "$TPUCTL" run --output raw --name r1 t432 --command "$job"
[ "$(sort "$T/out")" = "$(printf 'o0\no1')" ] || fail "raw: $(cat "$T/out")"
assert_grep '^e1$' "$T/err"

expect_rc 2 "$TPUCTL" run --output xml --name x1 t432 -- true
[ "$(cat "$T/err")" = "tpuctl: --output 'xml': expected prefix, raw or jsonl" ] ||
	fail "bad --output: $(cat "$T/err")"
expect_rc 4 "$TPUCTL" logs x1

# A detached launch refused on every worker it reached (a job of that
# name there already, its local record gone): 8 as a fan-out whose
# commands failed, not 9 (no worker could be reached)
rm -rf "${XDG_STATE_HOME:-$HOME/.local/state}/tpuctl/jobs/r1"
expect_rc 8 "$TPUCTL" run --detach --name r1 t432 -- true
assert_grep '^\[w1\] tpuctl: a job named r1 exists on this worker already$' "$T/err"
assert_grep '^worker 1: not started: exit 97$' "$T/err"
assert_grep '^tpuctl: job r1: 2 of 2 workers not started$' "$T/err"
