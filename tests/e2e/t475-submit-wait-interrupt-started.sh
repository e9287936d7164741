#!/bin/sh
# Issue 16: Ctrl-C (SIGINT) or SIGTERM during submit --wait once the job
# runs: the job is cancelled on its workers ("interrupted: cancelling
# it", 130 or 143, jobs then shows it killed by TERM, nothing of it left
# running) and the queued resource is kept: the capacity is the user's
# to reuse; with delete-after: true it is deleted (its nodes too).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"
# shellcheck source=tests/e2e/lib_sig.sh
. "$(dirname "$0")/lib_sig.sh"

emu_start --set fleet.key_delay_ms=200 --set tpu.qr_provision_ms=300
fleet_api_setup

for sig in INT TERM; do
	id=sub475$(echo $sig | tr '[:upper:]' '[:lower:]')
	printf 'name: %s\nslice: {accelerator-type: v4-8}\ncommand: %s\n' \
	    "$id" "'echo started; exec sleep 475'" >"$T/$sig.yaml"
	[ $sig = INT ] || printf 'delete-after: true\n' >>"$T/$sig.yaml"
	"$TPUCTL" submit --wait "$T/$sig.yaml" >"$T/$sig.out" 2>"$T/$sig.err" &
	pid=$!
	wait_for_grep "$T/$sig.out" 'started$' $pid
	sig_stop $sig $pid "$T/$sig.err"
	assert_grep "^job $id: interrupted: cancelling it\$" "$T/$sig.err"
	if [ $sig = INT ]; then
		# the queued resource and its node stay; the job is over
		expect_rc 0 "$TPUCTL" queued-resources describe "$id" \
		    --format 'value(state.state)'
		assert_grep '^ACTIVE$' "$T/out"
		expect_rc 0 "$TPUCTL" jobs --format json
		jq -e --arg n "$id" '.[] | select(.name == $n) |
		    [.workers[].state] | all(. == "killed by TERM")' \
		    "$T/out" >/dev/null || fail "jobs after INT: $(cat "$T/out")"
		expect_rc 0 "$TPUCTL" ssh "$id" --worker=all -- \
		    'pgrep -f "[s]leep 475" || echo none'
		assert_grep '^\[w0\] none$' "$T/out"
	else
		assert_grep "deleting queued resource '$id'" "$T/$sig.err"
		assert_no_slice "$id"
	fi
done
