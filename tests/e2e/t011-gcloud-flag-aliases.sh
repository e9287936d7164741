#!/bin/sh
# gcloud's flag names that are pure aliases of tpuctl's: --runtime-version
# (queued-resources create requires it in gcloud) sets the same field as
# --version, on create and queued-resources create.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

expect_rc 0 "$TPUCTL" --dry-run queued-resources create qr \
    --runtime-version tpu-vm-base --accelerator-type v4-8 --node-id n1
jq -e 'select(.method == "POST") | .body.tpu.nodeSpec[0].node.runtimeVersion == "tpu-vm-base"' \
    "$T/out" >/dev/null || fail "qr create --runtime-version: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" --dry-run create n2 --runtime-version tpu-vm-base \
    --accelerator-type v4-8
jq -e 'select(.method == "POST") | .body.runtimeVersion == "tpu-vm-base"' \
    "$T/out" >/dev/null || fail "create --runtime-version: $(cat "$T/out")"
# The same checks as --version: the same refusal for a bad value.
expect_rc 2 "$TPUCTL" queued-resources create qr --version 'bad version!' \
    --accelerator-type v4-8 --node-id n1
cp "$T/err" "$T/err.version"
expect_rc 2 "$TPUCTL" queued-resources create qr \
    --runtime-version 'bad version!' --accelerator-type v4-8 --node-id n1
cmp -s "$T/err" "$T/err.version" ||
    fail "--runtime-version and --version differ: $(cat "$T/err") / $(cat "$T/err.version")"
