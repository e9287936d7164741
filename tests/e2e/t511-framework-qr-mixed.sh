#!/bin/sh
# F8 (tests/reliability/README.md): install, doctor and reset-workers on
# an ACTIVE queued resource whose nodes differ in generation or in
# runtime (a slice deleted and recreated behind tpuctl's back as another
# type, then with another runtime): refused with exit 4 in one line
# naming both nodes with their generation and runtime, before anything
# runs on a worker (the emulator's log has only reads: no ssh-keys
# patch, no guest attributes, no key made).  Once the slices agree
# again, doctor reaches both.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"
# shellcheck source=tests/e2e/lib_fw.sh
. "$(dirname "$0")/lib_fw.sh"

emu_start --set tpu.qr_provision_ms=300 --set tpu.create_ms=300
fleet_api_setup
expect_rc 0 "$TPUCTL" queued-resources create mix --node-count 2 \
    --node-prefix mx --accelerator-type v4-8

# recreate NODE TYPE RUNTIME: the node deleted and made again, same name
recreate() {
	fleet_delete_node "$1"
	fleet_create_node "$1" "$2" 60 "{\"runtimeVersion\":\"$3\"}"
}

# refused GEN RUNTIME: mx-1 (GEN, RUNTIME) differs from mx-0
refused() {
	fw_refused mix "^tpuctl: queued resource 'mix': its nodes differ \\(mx-0: v4, runtime tpu-ubuntu2204-base; mx-1: $1, runtime $2\\); install on each node\$" \
	    '/nodes/mx-1$'
}

# [ the queued resource is still ACTIVE: the refusal is not t338's ]
[ "$("$TPUCTL" queued-resources describe mix --format 'value(state.state)')" = ACTIVE ] ||
	fail "mix is not ACTIVE"
recreate mx-1 v6e-8 v2-alpha-tpuv6e
refused v6e v2-alpha-tpuv6e
recreate mx-1 v4-8 tpu-vm-v4-base
refused v4 tpu-vm-v4-base

# agreeing again: doctor reaches both slices
recreate mx-1 v4-8 tpu-ubuntu2204-base
expect_rc 0 "$TPUCTL" doctor mix
assert_grep '^doctor: 2 of 2 workers succeeded \(2 nodes\)$' "$T/err"
exit 0
