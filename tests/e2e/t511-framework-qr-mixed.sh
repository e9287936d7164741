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

emu_start --set tpu.qr_provision_ms=300 --set tpu.create_ms=300
fleet_api_setup
expect_rc 0 "$TPUCTL" queued-resources create mix --node-count 2 \
    --node-prefix mx --accelerator-type v4-8

# recreate NODE TYPE RUNTIME: the node deleted and made again, same name
recreate() {
	fleet_delete_node "$1"
	fleet_create_node "$1" "$2" 60 "{\"runtimeVersion\":\"$3\"}"
}

refused() {
	before=$(emu_requests | wc -l)
	for cmd in "install mix --framework jax" "doctor mix" "reset-workers mix"; do
		# shellcheck disable=SC2086 # $cmd is words on purpose
		expect_rc 4 "$TPUCTL" $cmd
		[ "$(wc -l <"$T/err")" -eq 1 ] || fail "$cmd: not one line: $(cat "$T/err")"
		assert_grep "^tpuctl: queued resource 'mix': its nodes differ \\(mx-0: v4, runtime tpu-ubuntu2204-base; mx-1: $1, runtime $2\\); install on each node$" "$T/err"
		# (doctor's local checks come first; nothing of a worker)
		assert_no_grep '^\[s[0-9]' "$T/out"
	done
	emu_requests | tail -n +$((before + 1)) >"$T/req"
	jq -e -s 'all(.method == "GET" or .path == "/token") and
	    all(.path | test("getGuestAttributes") | not) and
	    any(.path | test("/nodes/mx-1$"))' "$T/req" >/dev/null ||
		fail "a refusal reached the workers' side: $(cat "$T/req")"
	[ ! -e "$HOME/.ssh/google_compute_engine" ] || fail "a refusal generated an SSH key"
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
