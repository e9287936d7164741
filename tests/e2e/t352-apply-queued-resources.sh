#!/bin/sh
# tpuctl apply / diff of specs that need a queued resource: a 2-slice
# multislice (node-count 2, spot) is created as one queued resource with
# multisliceParams.nodeCount 2 and its nodes carry the spec's labels; a
# second apply is a no-op; a label change PATCHes each node of the
# multislice (updateMask=labels) and diff names the node on each line; a
# changed node count or tier is refused (exit 4, nothing sent); a
# single-node spot spec becomes a queued resource with nodeId = name; a
# queued resource still waiting has no nodes to update yet.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start
Q=/v2/projects/tpuctl-emu/locations/us-central2-b/queuedResources
NP=/v2/projects/tpuctl-emu/locations/us-central2-b/nodes

cat >"$T/ms.yaml" <<'END'
name: ms1
slice:
  accelerator-type: v4-16
  node-count: 2
  node-prefix: ms
  spot: true
  zones: us-central2-b
  labels: {env: dev}
END
expect_rc 1 "$TPUCTL" diff "$T/ms.yaml"
[ "$(cat "$T/out")" = "+ queued-resource: ms1 (2 x v4-16 in us-central2-b)" ] ||
    fail "diff of a missing multislice: $(cat "$T/out")"

expect_rc 0 "$TPUCTL" apply "$T/ms.yaml"
assert_grep "queued resource 'ms1' is ACTIVE in us-central2-b: 2 nodes of v4-16" "$T/err"
emu_requests | jq -e -s --arg q "$Q" '[.[] | select(.method == "POST" and (.path | startswith("/v2/")))] |
    length == 1 and .[0].path == $q and .[0].query == "queuedResourceId=ms1"' \
    >/dev/null || fail "queued resource POST: $(emu_tpu_mutations)"
expect_rc 0 "$TPUCTL" queued-resources describe ms1 --format json
jq -e '.tpu.nodeSpec[0].multisliceParams.nodeCount == 2 and
    .tpu.nodeSpec[0].multisliceParams.nodeIdPrefix == "ms" and
    .spot == {} and .tpu.nodeSpec[0].node.acceleratorType == "v4-16" and
    .tpu.nodeSpec[0].node.labels.env == "dev"' "$T/out" >/dev/null ||
    fail "queued resource: $(cat "$T/out")"
for n in ms-0 ms-1; do
	expect_rc 0 "$TPUCTL" describe "$n" --format 'value(labels.env)'
	[ "$(cat "$T/out")" = dev ] || fail "$n labels: $(cat "$T/out")"
done

before=$(emu_tpu_mutations)
expect_rc 0 "$TPUCTL" apply "$T/ms.yaml"
assert_grep "queued resource 'ms1' in us-central2-b matches .*: nothing to do" "$T/err"
expect_rc 0 "$TPUCTL" diff "$T/ms.yaml"
[ "$(emu_tpu_mutations)" = "$before" ] || fail "second apply sent $(emu_tpu_mutations)"

# Labels: every node of the multislice, one PATCH each.
sed 's/env: dev/env: prod/' "$T/ms.yaml" >"$T/ms2.yaml"
expect_rc 1 "$TPUCTL" diff "$T/ms2.yaml"
printf '%s\n' '~ labels.env: dev -> prod (node ms-0)' \
    '~ labels.env: dev -> prod (node ms-1)' >"$T/want"
diff "$T/want" "$T/out" >/dev/null || fail "multislice diff: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" apply "$T/ms2.yaml"
emu_requests | jq -e -s --arg n "$NP" '[.[] | select(.method == "PATCH")] |
    length == 2 and .[0].path == ($n + "/ms-0") and
    .[1].path == ($n + "/ms-1") and
    all(.[]; .query == "updateMask=labels")' >/dev/null ||
    fail "multislice PATCHes: $(emu_tpu_mutations)"
expect_rc 0 "$TPUCTL" diff "$T/ms2.yaml"

# The queued resource itself cannot change: node count, tier.
before=$(emu_tpu_mutations)
sed 's/node-count: 2/node-count: 3/' "$T/ms2.yaml" >"$T/ms3.yaml"
expect_rc 1 "$TPUCTL" diff "$T/ms3.yaml"
assert_grep '^~ node-count: 2 -> 3 \[cannot change in place: a queued resource cannot be changed: delete and recreate\]$' "$T/out"
expect_rc 4 "$TPUCTL" apply "$T/ms3.yaml"
assert_grep "cannot apply .*ms3.yaml: node-count of queued resource 'ms1' is 2, the spec says 3" "$T/err"
sed 's/spot: true/guaranteed: true/' "$T/ms2.yaml" >"$T/ms4.yaml"
expect_rc 4 "$TPUCTL" apply "$T/ms4.yaml"
assert_grep "spot of queued resource 'ms1' is true, the spec says false" "$T/err"
[ "$(emu_tpu_mutations)" = "$before" ] || fail "refused apply sent $(emu_tpu_mutations)"

# One spot node: a queued resource whose node id is the spec's name.
printf 'name: sp1\nslice: {accelerator-type: v4-8, spot: true}\n' >"$T/sp.yaml"
expect_rc 0 "$TPUCTL" apply "$T/sp.yaml"
emu_requests | jq -e -s '[.[] | select(.method == "POST" and (.path | startswith("/v2/")))] | last |
    .query == "queuedResourceId=sp1"' >/dev/null ||
    fail "spot POST: $(emu_tpu_mutations)"
expect_rc 0 "$TPUCTL" queued-resources describe sp1 --format json
jq -e '.tpu.nodeSpec[0].nodeId == "sp1" and .spot == {}' "$T/out" \
    >/dev/null || fail "spot queued resource: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" diff "$T/sp.yaml"

# A queued resource still waiting: its nodes do not exist yet, nothing is
# sent and apply says why.
expect_rc 0 "$TPUCTL" queued-resources create qw --node-id qw \
    --accelerator-type v4-8 --spot --valid-after-duration 1h --async
printf 'name: qw\nslice: {accelerator-type: v4-8, spot: true}\n' >"$T/qw.yaml"
before=$(emu_tpu_mutations)
expect_rc 0 "$TPUCTL" apply "$T/qw.yaml"
assert_grep "queued resource 'qw' in us-central2-b is [A-Z_]+: 1 of its nodes do not exist yet; nothing to do" "$T/err"
expect_rc 0 "$TPUCTL" diff "$T/qw.yaml"
[ "$(emu_tpu_mutations)" = "$before" ] || fail "apply of a waiting one sent $(emu_tpu_mutations)"
echo "ok: apply and diff of queued resources"
