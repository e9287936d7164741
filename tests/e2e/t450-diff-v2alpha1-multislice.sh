#!/bin/sh
# A multislice created on v2alpha1 (here by --workload-type, which only
# v2alpha1 has) stores its node count as multiNodeParams.nodeCount, the
# v2alpha1 name of v2's multisliceParams.nodeCount: diff and apply of the
# unchanged spec read either and see no change (exit 0, nothing sent); a
# spec with another node count still differs (exit 1).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

expect_rc 0 "$TPUCTL" queued-resources create ma --accelerator-type v4-16 \
    --node-count 2 --node-prefix ma --spot --labels env=dev \
    --workload-type availability-optimized
expect_rc 0 "$TPUCTL" queued-resources describe ma --format json
jq -e '.tpu.nodeSpec[0].multiNodeParams.nodeCount == 2 and
    .tpu.nodeSpec[0].multisliceParams == null' "$T/out" >/dev/null ||
    fail "not a v2alpha1 multislice: $(jq -c .tpu "$T/out")"

cat >"$T/ms.yaml" <<'END'
name: ma
slice:
  accelerator-type: v4-16
  node-count: 2
  node-prefix: ma
  spot: true
  zones: us-central2-b
  labels: {env: dev}
END
before=$(emu_tpu_mutations)
expect_rc 0 "$TPUCTL" diff "$T/ms.yaml"
[ ! -s "$T/out" ] || fail "diff of the unchanged spec: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" apply "$T/ms.yaml"
assert_grep "queued resource 'ma' in us-central2-b matches .*: nothing to do" "$T/err"
[ "$(emu_tpu_mutations)" = "$before" ] || fail "apply sent $(emu_tpu_mutations)"

sed 's/node-count: 2/node-count: 3/' "$T/ms.yaml" >"$T/ms3.yaml"
expect_rc 1 "$TPUCTL" diff "$T/ms3.yaml"
assert_grep '^~ node-count: 2 -> 3' "$T/out"
