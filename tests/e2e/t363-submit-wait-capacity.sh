#!/bin/sh
# submit --wait while the capacity does not come: a queued resource still
# WAITING_FOR_RESOURCES at its valid-until (the zone stocked out) turns
# FAILED, submit deletes it and exits 7; Ctrl-C (and SIGTERM) while it
# waits deletes the queued resource (130, 143) and nothing of the job is
# left; the spec's timeout during the wait: 124, deleted.  While it
# waits, jobs and logs show the job queued; afterwards jobs shows it as
# never started (no such job).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_sig.sh
. "$(dirname "$0")/lib_sig.sh"

emu_start --set tpu.qr_provision_ms=300
ZONE=us-central2-b
"$EMULATOR" event --state-dir "$EMU_DIR" --zone $ZONE stockout >/dev/null ||
    fail "stockout event"

cat >"$T/v.yaml" <<'END'
name: sub363
slice: {accelerator-type: v4-8, valid-until-duration: 2s}
command: 'echo never'
END
expect_rc 7 "$TPUCTL" submit --wait "$T/v.yaml"
assert_grep "job sub363: waiting for the capacity \(queued resource 'sub363' is (ACCEPTED|WAITING_FOR_RESOURCES)\)" "$T/err"
assert_grep "job sub363: queued resource 'sub363' is FAILED: .*the capacity never came" "$T/err"
assert_no_grep never "$T/out"
assert_no_slice sub363
expect_rc 0 "$TPUCTL" jobs --format json
jq -e '.[] | select(.name == "sub363") | .workers[0].state == "no such job"' \
    "$T/out" >/dev/null || fail "jobs: $(cat "$T/out")"

# interrupted while waiting: the queued resource is deleted
for sig in INT TERM; do
	l=$(echo $sig | tr '[:upper:]' '[:lower:]')
	sed "s/sub363/sub363$l/; s/, valid-until-duration: 2s//" "$T/v.yaml" >"$T/$sig.yaml"
	"$TPUCTL" submit --wait "$T/$sig.yaml" >"$T/$sig.out" 2>"$T/$sig.err" &
	pid=$!
	wait_for_grep "$T/$sig.err" 'waiting for the capacity' "" 10
	if [ $sig = INT ]; then
		# queued: jobs and logs say so
		expect_rc 0 "$TPUCTL" jobs --format json
		jq -e '.[] | select(.name == "sub363int") | .workers[0].state == "queued"' \
		    "$T/out" >/dev/null || fail "jobs while queued: $(cat "$T/out")"
		expect_rc 0 "$TPUCTL" logs sub363int
		assert_grep "job sub363int is queued" "$T/err"
	fi
	sig_stop $sig $pid "$T/$sig.err"
	assert_grep "deleting queued resource 'sub363$l' \(interrupted\)" "$T/$sig.err"
	assert_no_slice "sub363$l"
done

# the spec's timeout while waiting
printf 'timeout: 2s\n' >>"$T/INT.yaml"
sed -i 's/sub363int/sub363t/' "$T/INT.yaml"
expect_rc 124 "$TPUCTL" submit --wait "$T/INT.yaml"
assert_grep "job sub363t: timeout: the capacity did not come within 2s" "$T/err"
assert_no_slice sub363t
