#!/bin/sh
# logs --follow of a submitted job waits for its capacity, not forever: a
# queued resource that turns FAILED (still WAITING at its valid-until, the
# zone stocked out) ends the wait with exit 7 naming it; the queued
# resource is left as it is (deleting it is the user's call: cancel).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

emu_start --set tpu.qr_provision_ms=300
"$EMULATOR" event --state-dir "$EMU_DIR" --zone us-central2-b stockout >/dev/null ||
    fail "stockout event"
cat >"$T/v.yaml" <<'END'
name: sub365
slice: {accelerator-type: v4-8, valid-until-duration: 3s}
command: 'echo never'
END
expect_rc 0 "$TPUCTL" submit "$T/v.yaml"
expect_rc 7 "$TPUCTL" logs --follow sub365
assert_grep 'job sub365 \(submitted\): waiting for it to start' "$T/err"
assert_grep "job sub365: queued resource 'sub365' is FAILED: .*the capacity never came" "$T/err"
assert_no_grep never "$T/out"
expect_rc 0 "$TPUCTL" queued-resources describe sub365 --format 'value(state.state)'
[ "$(cat "$T/out")" = FAILED ] || fail "state: $(cat "$T/out")"
# cancel deletes it; nothing left
expect_rc 0 "$TPUCTL" cancel sub365
expect_rc 0 "$TPUCTL" queued-resources list --format 'value(name)'
assert_no_grep sub365 "$T/out"
