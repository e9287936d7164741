#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# A line that the job has written only in part when the SSH connections
# are cut (emulator ssh-cut) is shown whole after `logs --follow`
# reconnects, not as two pieces; a last line without a newline shows
# once when the job ends; the local log holds the bytes exactly once.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200
fleet_api_setup
fleet_create_node t311 v4-16 90
export XDG_STATE_HOME="$T/state"

# each line in two halves: the second once the test kills the sleep in
# between (workers have a private /tmp, not a private pid space), after
# the connections were cut
m=$$
job='for i in 0 1 2; do
	printf "line $i start-"
	sleep 3110$i.'"$m"'
	echo "end $i"
done
printf last'

cut() {
	"$EMULATOR" event --state-dir "$EMU_DIR" ssh-cut --node t311 >/dev/null \
	    --worker "$1" || fail "ssh-cut of worker $1 refused"
}

expect_rc 0 "$TPUCTL" run --format 'value(name)' --detach --name pl1 t311 \
    --command "$job"
"$TPUCTL" logs --follow pl1 >"$T/f.out" 2>"$T/f.err" &
fpid=$!
for i in 0 1 2; do
	k=0
	until [ "$(pgrep -fc "^sleep 3110$i.$m\$")" -ge 2 ]; do
		k=$((k + 1))
		[ $k -lt 400 ] || fail "the job did not reach line $i: $(cat "$T/f.out" "$T/f.err")"
		sleep 0.05
	done
	sleep 0.5 # the half line reaches the follower
	cut 0
	cut 1
	sleep 0.5
	for p in $(pgrep -f "^sleep 3110$i.$m\$"); do
		kill -PIPE "$p" # no "Terminated" from the shell
	done
done
set +e
wait "$fpid"
rc=$?
set -e
[ "$rc" -eq 0 ] || fail "logs --follow: exit $rc: $(cat "$T/f.err")"
printf '%s\n' 'line 0 start-end 0' 'line 1 start-end 1' \
    'line 2 start-end 2' last >"$T/want"
for w in 0 1; do
	grep "^\[w$w\] " "$T/f.out" | sed 's/^\[w.\] //' >"$T/got"
	cmp -s "$T/got" "$T/want" ||
		fail "worker $w: lines cut in pieces or lost: $(cat "$T/f.out" "$T/f.err")"
	# the local log: the bytes once, in order
	printf 'line 0 start-end 0\nline 1 start-end 1\nline 2 start-end 2\nlast' \
	    >"$T/want.log"
	cmp -s "$T/state/tpuctl/jobs/pl1/s0-w$w.out" "$T/want.log" ||
		fail "worker $w: local log: $(od -c "$T/state/tpuctl/jobs/pl1/s0-w$w.out")"
done
assert_grep '^job pl1: 2 of 2 workers succeeded$' "$T/f.err"

# the whole log again, from the local copy and the workers: the same
expect_rc 0 "$TPUCTL" logs pl1
for w in 0 1; do
	grep "^\[w$w\] " "$T/out" | sed 's/^\[w.\] //' >"$T/got"
	cmp -s "$T/got" "$T/want" || fail "logs pl1, worker $w: $(cat "$T/out")"
done
