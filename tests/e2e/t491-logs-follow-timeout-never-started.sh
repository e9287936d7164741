#!/bin/sh
# logs --follow --timeout of a submitted job whose queued resource is
# ACTIVE but whose job never starts: the download of its staged workdir
# stalls on the worker, and the SSH key takes a minute to reach the
# workers (the wait for the start rides out unreachable workers): exit
# 124 after the timeout, one line, the queued resource left ACTIVE.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=60000 --set tpu.qr_provision_ms=300
fleet_api_setup

# submitted, ACTIVE, never started: the download of the archive its
# startup-script pulls stalls
expect_rc 0 "$TPUCTL" data mb gs://stg491
mkdir -p "$T/spec/src"
echo x >"$T/spec/src/f"
cat >"$T/spec/job.yaml" <<'END'
name: sub491
slice: {accelerator-type: v4-8}
workdir: src
stage: gs://stg491/jobs
command: 'echo never'
END
expect_rc 0 "$TPUCTL" submit "$T/spec/job.yaml"
emu_inject stall-60s-after-0K --method GET --path /storage/v1/b/stg491/o/ \
    --count 8
i=0
until "$TPUCTL" queued-resources describe sub491 --format 'value(state.state)' \
    2>/dev/null | grep -qx ACTIVE; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "sub491 never ACTIVE"
	sleep 0.2
done
t0=$(date +%s)
expect_rc 124 "$TPUCTL" logs --follow --timeout 5s sub491
t1=$(date +%s)
[ $((t1 - t0)) -lt 15 ] || fail "--timeout 5s took $((t1 - t0)) s"
assert_grep 'job sub491: --timeout reached' "$T/err"
[ "$(grep -c 'timeout reached' "$T/err")" -eq 1 ] || fail "$(cat "$T/err")"
assert_no_grep never "$T/out"
expect_rc 0 "$TPUCTL" queued-resources describe sub491 --format 'value(state.state)'
[ "$(cat "$T/out")" = ACTIVE ] || fail "state: $(cat "$T/out")"
