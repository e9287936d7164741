#!/bin/sh
# A spec's framework is installed on every worker as run --framework does
# (same recipe, same matrix, resolved for the spec's generation and
# runtime), first in the submitted job: its lines are in the job's
# output and the command sees it; a framework or version the matrix
# refuses is refused before anything is created (exit 2, the field
# named, no request that changes anything).
# Real pip against the offline wheel index of tests/frameworks/
# build_index.sh (PIP_NO_INDEX in the spec's env: no traffic off
# loopback).
# shellcheck disable=SC2016 # the job's shell expands these
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200 --set tpu.qr_provision_ms=300
fleet_api_setup
offline_wheel_index

# refusals: exit 2 naming the field, nothing created
printf 'name: sub364x\nslice: {accelerator-type: v4-8}\nframework: mxnet\ncommand: "true"\n' >"$T/x.yaml"
expect_rc 2 "$TPUCTL" submit "$T/x.yaml"
assert_grep "x.yaml: framework: framework 'mxnet' cannot run on a TPU" "$T/err"
printf 'name: sub364v\nslice: {accelerator-type: v4-8}\nframework: {name: jax, version: "9.9"}\ncommand: "true"\n' >"$T/v.yaml"
expect_rc 2 "$TPUCTL" submit "$T/v.yaml"
assert_grep "v.yaml: framework: jax 9.9 is not in tpuctl's compatibility matrix: use framework.version 0.6.1" "$T/err"
[ "$(emu_tpu_mutations)" = "[]" ] || fail "sent: $(emu_tpu_mutations)"

cat >"$T/job.yaml" <<'END'
name: sub364
slice: {accelerator-type: v4-16}
framework: jax
env: {PIP_NO_INDEX: "1"}
command: python3 -c 'from importlib import metadata; print("job sees", metadata.version("jax"))'
delete-after: true
END
expect_rc 0 "$TPUCTL" submit --wait "$T/job.yaml"
for w in 0 1; do
	assert_grep "^\[w$w\] jax 0\.6\.1 installed \(jax 0\.6\.1, jaxlib 0\.6\.1, libtpu 0\.0\.15\)$" "$T/out"
	assert_grep "^\[w$w\] job sees 0\.6\.1$" "$T/out"
done
assert_grep '^job sub364: 2 of 2 workers succeeded$' "$T/err"
assert_no_slice sub364
