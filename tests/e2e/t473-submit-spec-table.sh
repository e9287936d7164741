#!/bin/sh
# Issue 16: submit's validation table for the keys it gained: each bad
# value is refused with exit 2 and one line naming the field and the
# rule, and nothing is sent (the emulator's request log stays empty):
# max-restarts (type, range, no --wait), restart-backoff (type, range,
# without max-restarts), slice.node-count (type, range),
# slice.node-prefix (without node-count, a node id too long),
# slice.preemptible (a queued resource's tier is its own field: spot),
# checkpoint (run --checkpoint's rule: a gs:// URL, a valid bucket, a
# string) and restart-on-failure (a boolean, with max-restarts).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

n=0
# case_ PATTERN SLICE-EXTRA TOP-LINES [SUBMIT-FLAGS]
case_() {
	n=$((n + 1))
	{
		printf 'name: v473\nslice:\n  accelerator-type: v4-8\n'
		[ -z "$2" ] || printf '%s\n' "$2"
		printf 'command: "true"\n'
		[ -z "$3" ] || printf '%s\n' "$3"
	} >"$T/s$n.yaml"
	# shellcheck disable=SC2086 # flags split on purpose
	expect_rc 2 "$TPUCTL" submit ${4:-} "$T/s$n.yaml"
	assert_grep "^tpuctl: $T/s$n.yaml: $1" "$T/err"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "case $n: more than one line: $(cat "$T/err")"
	[ ! -s "$T/out" ] || fail "case $n: printed on stdout"
}

case_ 'max-restarts: must be a whole number \(0 to 1000\), not a string' '' 'max-restarts: many' --wait
case_ 'max-restarts: -1 is out of range: 0 to 1000' '' 'max-restarts: -1' --wait
case_ 'max-restarts: 1001 is out of range: 0 to 1000' '' 'max-restarts: 1001' --wait
case_ 'max-restarts: needs --wait \(without a client attached nothing can recreate a preempted slice\)$' '' 'max-restarts: 1'
case_ 'restart-backoff: ' '' 'max-restarts: 1
restart-backoff: soon' --wait
case_ "restart-backoff: '2d' must be between 0 s and 1 day" '' 'max-restarts: 1
restart-backoff: 2d' --wait
case_ 'restart-backoff: must be a duration \(30s, 5m\), not an? ' '' 'max-restarts: 1
restart-backoff: [1s]' --wait
case_ 'restart-backoff: goes with max-restarts$' '' 'restart-backoff: 5s' --wait
case_ 'slice.node-count: 1 is out of range: 2 to 256' '  node-count: 1' ''
case_ 'slice.node-count: 257 is out of range: 2 to 256' '  node-count: 257' ''
case_ 'slice.node-count: must be a whole number' '  node-count: two' ''
case_ 'slice.node-prefix: goes with slice.node-count' '  node-prefix: p' ''
case_ "slice.node-prefix: node id '.*' would be longer than 63 characters" \
    "  node-count: 2
  node-prefix: $(printf 'p%.0s' $(seq 62))" ''
case_ 'slice.preemptible: submit queues a queued resource, whose tier is its own field \(QueuedResource spot, guaranteed or reservationName; queued-resources create has no --preemptible\): use spot$' \
    '  preemptible: true' '' --wait
case_ 'slice.preemptible: is for a single node created directly; a queued resource or multislice uses spot' \
    '  preemptible: true
  node-count: 2' ''
case_ "checkpoint: 's3://b/ck' must be a gs://BUCKET\\[/PREFIX\\] URL\$" '' 'checkpoint: s3://b/ck' --wait
case_ "checkpoint: invalid bucket name 'A_b'" '' 'checkpoint: gs://A_b/ck' --wait
case_ 'checkpoint: must be a string, not a list$' '' 'checkpoint: [gs://bkt/ck]' --wait
case_ 'checkpoint: must not be empty$' '' "checkpoint: ''"
case_ "restart-on-failure: must be true or false, not a string 'always'\$" '' 'max-restarts: 1
restart-on-failure: always' --wait
case_ 'restart-on-failure: goes with max-restarts$' '' 'restart-on-failure: true' --wait
case_ "unknown key 'restart-on-falure'; did you mean 'restart-on-failure'\\?\$" '' 'restart-on-falure: true' --wait
[ "$(emu_requests | wc -l)" -eq 0 ] ||
    fail "requests were sent: $(emu_requests | jq -c '[.method, .path]')"
assert_no_slice v473
