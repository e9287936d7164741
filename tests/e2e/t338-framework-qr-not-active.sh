#!/bin/sh
# install, doctor and reset-workers on a queued resource that is not
# ACTIVE yet: refused with exit 4 naming its state, before anything runs
# on a worker (the emulator's log has only reads: no ssh-keys patch, no
# guest attributes, no key made); once ACTIVE, doctor reaches its node.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fw.sh
. "$(dirname "$0")/lib_fw.sh"
emu_start --set tpu.qr_provision_ms=4000

expect_rc 0 "$TPUCTL" queued-resources create pend --node-id pn \
    --accelerator-type v4-8 --async
fw_refused pend \
    "^tpuctl: queued resource 'pend' is [A-Z_]+, not ACTIVE: its nodes are not ready\$" \
    '/queuedResources/pend$'

# once ACTIVE, the same name reaches the node's worker
n=0
until "$TPUCTL" queued-resources describe pend --format 'value(state.state)' 2>/dev/null |
    grep -qx ACTIVE; do
	n=$((n + 1))
	[ $n -lt 100 ] || fail "pend never became ACTIVE"
	sleep 0.2
done
expect_rc 0 "$TPUCTL" doctor pend
assert_grep '^\[s0/w0\] doctor: clean$' "$T/out"
assert_grep '^doctor: 1 of 1 worker succeeded \(1 node\)$' "$T/err"
