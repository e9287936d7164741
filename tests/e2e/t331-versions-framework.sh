#!/bin/sh
# tpuctl versions list --framework F: the compatibility matrix in every
# --format, local (no emulator, no credentials: a request would fail);
# frameworks without a TPU backend exit 2 with the reason; the matrix is
# found through TPUCTL_CONFIG_DIR too, and its absence is one line.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

expect_rc 0 "$TPUCTL" versions list --framework jax
assert_grep '^FRAMEWORK +VERSION +GENERATION +RUNTIME_VERSION +PYTHON +REQUIREMENTS$' "$T/out"
assert_grep '^jax +0\.6\.1 +v5p +v2-alpha-tpuv5 +3\.10 +jax\[tpu\]==0\.6\.1' "$T/out"
assert_no_grep '^(pytorch|tensorflow) ' "$T/out"

expect_rc 0 "$TPUCTL" versions list --framework=pytorch --format json
jq -e 'length == 36 and all(.framework == "pytorch") and
    (.[0].requirements | index("torch_xla[tpu]==2.6.0")) != null and
    (.[0].findLinks | length) == 2 and (.[0].source | length) > 0' \
    "$T/out" >/dev/null || fail "pytorch json: $(head -c 600 "$T/out")"

expect_rc 0 "$TPUCTL" versions list --framework tensorflow --format yaml
assert_grep 'runtimeVersion: tpu-vm-tf-2\.16\.1-pjrt' "$T/out"
expect_rc 0 "$TPUCTL" versions list --framework all --format jsonl
[ "$(wc -l <"$T/out")" -eq $((72 + 36 + 12)) ] ||
    fail "all: $(wc -l <"$T/out") lines"
jq -e -s 'map(.framework) | unique == ["jax", "pytorch", "tensorflow"]' \
    "$T/out" >/dev/null || fail "jsonl frameworks"
expect_rc 0 "$TPUCTL" versions list --framework tensorflow \
    --format 'value(version,runtimeVersion)'
assert_grep "^2\.15\.0	tpu-vm-tf-2\.15\.0-pod-pjrt$" "$T/out"

for fw in mxnet MXNet cntk caffe chainer theano; do
	expect_rc 2 "$TPUCTL" versions list --framework "$fw"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "$fw: not one line"
done
expect_rc 2 "$TPUCTL" versions list --framework mxnet
assert_grep "framework 'mxnet' cannot run on a TPU: Apache MXNet has no TPU backend.*use jax, pytorch or tensorflow" "$T/err"
expect_rc 2 "$TPUCTL" versions list --framework keras
assert_grep "unknown framework 'keras'" "$T/err"
expect_rc 2 "$TPUCTL" versions list --framework jax --filter version=1
expect_rc 2 "$TPUCTL" versions list --framework

mkdir "$T/cfg"
cp "$SRCDIR/config/compat.json" "$T/cfg/"
TPUCTL_CONFIG_DIR="$T/cfg" expect_rc 0 "$TPUCTL" versions list --framework jax
TPUCTL_CONFIG_DIR="$T/nothing" expect_rc 4 "$TPUCTL" versions list --framework jax
assert_grep 'TPUCTL_CONFIG_DIR=.*has no compat.json' "$T/err"
