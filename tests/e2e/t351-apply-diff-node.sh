#!/bin/sh
# tpuctl apply / diff of a single-node spec against the emulator: diff of
# a missing node (exit 1), apply creates it (one POST, the spec's labels,
# metadata with commas and newlines, description), a second apply sends
# no mutation and says so, diff exits 0; changed labels: diff lines
# "~ / + / -", apply sends one PATCH with updateMask=labels and leaves
# tpuctl-run-id and the metadata alone; a changed metadata value and
# description: updateMask=description,metadata; a changed accelerator type
# or runtime version: diff marks it, apply refuses (exit 4) naming the field
# and the reason, and sends nothing but GETs; --dry-run prints the PATCH and
# sends none; --format json gives records.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start
N=/v2/projects/tpuctl-emu/locations/us-central2-b/nodes/a1

cat >"$T/a.yaml" <<'END'
name: a1
slice:
  accelerator-type: v4-8
  zones: [us-central2-b]
  labels:
    env: dev
    team: a
  metadata:
    startup-script: |
      #!/bin/sh
      echo one, two
  description: first
END

expect_rc 1 "$TPUCTL" diff "$T/a.yaml"
[ "$(cat "$T/out")" = "+ node: a1 (v4-8 in us-central2-b)" ] ||
    fail "diff of a missing node: $(cat "$T/out")"
[ "$(emu_tpu_mutations)" = "[]" ] || fail "diff sent $(emu_tpu_mutations)"

# --dry-run of a creation: the POST printed (body from the spec), none sent.
expect_rc 0 "$TPUCTL" --dry-run apply "$T/a.yaml"
jq -e 'select(.method == "POST") | (.url | endswith("/nodes?nodeId=a1")) and
    .body.acceleratorType == "v4-8" and .body.labels.env == "dev" and
    .body.description == "first" and
    .body.metadata["startup-script"] == "#!/bin/sh\necho one, two\n"' \
    "$T/out" >/dev/null || fail "dry-run POST: $(cat "$T/out")"
[ "$(emu_tpu_mutations)" = "[]" ] || fail "--dry-run sent $(emu_tpu_mutations)"

expect_rc 0 "$TPUCTL" apply "$T/a.yaml"
assert_grep "created node 'a1' \(v4-8, 1 worker\) in us-central2-b" "$T/err"
[ "$(emu_tpu_mutations)" = '[["POST","/v2/projects/tpuctl-emu/locations/us-central2-b/nodes","nodeId=a1"]]' ] ||
    fail "apply of a missing node: $(emu_tpu_mutations)"
expect_rc 0 "$TPUCTL" describe a1 --format json
jq -e '.labels.env == "dev" and .labels.team == "a" and
    (.labels | has("tpuctl-run-id")) and .description == "first" and
    .metadata == {"startup-script": "#!/bin/sh\necho one, two\n"}' \
    "$T/out" >/dev/null || fail "created node: $(cat "$T/out")"

# Idempotent: nothing but GETs, and it says so.
before=$(emu_tpu_mutations)
expect_rc 0 "$TPUCTL" apply "$T/a.yaml"
assert_grep "node 'a1' in us-central2-b matches $T/a.yaml: nothing to do" "$T/err"
[ "$(emu_tpu_mutations)" = "$before" ] || fail "second apply sent $(emu_tpu_mutations)"
expect_rc 0 "$TPUCTL" diff "$T/a.yaml"
[ ! -s "$T/out" ] || fail "diff of a matching node printed $(cat "$T/out")"
expect_rc 0 "$TPUCTL" apply -q "$T/a.yaml"
[ ! -s "$T/err" ] || fail "apply -q printed $(cat "$T/err")"

# ssh-keys added by tpuctl ssh is not a difference.
expect_rc 0 "$TPUCTL" update a1 --metadata-raw \
    --metadata 'ssh-keys=root:ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGc= x'
expect_rc 0 "$TPUCTL" diff "$T/a.yaml"

# Labels: one changed, one added, one removed.
sed 's/env: dev/env: prod/; s/team: a/owner: me/' "$T/a.yaml" >"$T/b.yaml"
expect_rc 1 "$TPUCTL" diff "$T/b.yaml"
printf '%s\n' '~ labels.env: dev -> prod' '+ labels.owner: me' '- labels.team' \
    >"$T/want"
diff "$T/want" "$T/out" >/dev/null || fail "label diff: $(cat "$T/out")"
expect_rc 1 "$TPUCTL" --format json diff "$T/b.yaml"
jq -e 'length == 3 and .[0] == {"op": "~", "field": "labels.env",
    "from": "dev", "to": "prod"} and .[2].op == "-"' "$T/out" >/dev/null ||
    fail "diff --format json: $(cat "$T/out")"

# --dry-run: the PATCH is printed, not sent.
before=$(emu_tpu_mutations)
expect_rc 0 "$TPUCTL" --dry-run apply "$T/b.yaml"
jq -e 'select(.method == "PATCH") |
    (.url | endswith("/nodes/a1?updateMask=labels")) and
    .body.labels.env == "prod" and .body.labels.owner == "me" and
    (.body.labels | has("team") | not) and
    (.body.labels | has("tpuctl-run-id"))' "$T/out" >/dev/null ||
    fail "dry-run PATCH: $(cat "$T/out")"
[ "$(emu_tpu_mutations)" = "$before" ] || fail "--dry-run sent $(emu_tpu_mutations)"

expect_rc 0 "$TPUCTL" apply "$T/b.yaml"
assert_grep '^tpuctl: apply: ~ labels.env: dev -> prod$' "$T/err"
assert_grep "updated node 'a1' \(labels\)" "$T/err"
emu_requests | jq -e -s --arg p "$N" '[.[] | select(.method == "PATCH")] |
    length == 2 and .[1].path == $p and .[1].query == "updateMask=labels"' \
    >/dev/null || fail "PATCH log: $(emu_tpu_mutations)"
expect_rc 0 "$TPUCTL" describe a1 --format json
jq -e '.labels.env == "prod" and .labels.owner == "me" and
    (.labels | has("team") | not) and (.labels | has("tpuctl-run-id")) and
    (.metadata | has("ssh-keys"))' "$T/out" >/dev/null ||
    fail "after label apply: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" diff "$T/b.yaml"

# Metadata value and description: one PATCH with both in the mask.
sed 's/echo one, two/echo three/; s/description: first/description: second/' \
    "$T/b.yaml" >"$T/c.yaml"
expect_rc 1 "$TPUCTL" diff "$T/c.yaml"
printf '%s\n' '~ description: "first" -> "second"' '~ metadata.startup-script' \
    >"$T/want"
diff "$T/want" "$T/out" >/dev/null || fail "metadata diff: $(cat "$T/out")"
mkdir "$T/tmp"
expect_rc 0 env TMPDIR="$T/tmp" "$TPUCTL" apply "$T/c.yaml"
# The metadata values went through files of a private directory, removed.
[ -z "$(ls -A "$T/tmp")" ] || fail "apply left $(ls -A "$T/tmp")"
emu_requests | jq -e -s '[.[] | select(.method == "PATCH")] | length == 3 and
    .[2].query == "updateMask=description,metadata"' >/dev/null ||
    fail "mask: $(emu_tpu_mutations)"
expect_rc 0 "$TPUCTL" describe a1 --format json
jq -e '.description == "second" and
    .metadata["startup-script"] == "#!/bin/sh\necho three\n" and
    (.metadata | has("ssh-keys"))' "$T/out" >/dev/null ||
    fail "after metadata apply: $(cat "$T/out")"

# What the API cannot change in place: marked by diff, refused by apply
# (exit 4) with the field and the reason; nothing but GETs is sent.
sed 's/v4-8/v4-16/; s/env: prod/env: qa/' "$T/c.yaml" >"$T/d.yaml"
expect_rc 1 "$TPUCTL" diff "$T/d.yaml"
assert_grep '^~ accelerator-type: v4-8 -> v4-16 \[cannot change in place: the API fixes it at creation: delete and recreate\]$' "$T/out"
assert_grep '^~ labels.env: prod -> qa$' "$T/out"
before=$(emu_tpu_mutations)
expect_rc 4 "$TPUCTL" apply "$T/d.yaml"
assert_grep "^tpuctl: cannot apply $T/d.yaml: accelerator-type of node 'a1' is v4-8, the spec says v4-16: the API fixes it at creation: delete and recreate; nothing changed$" "$T/err"
[ "$(emu_tpu_mutations)" = "$before" ] || fail "refused apply sent $(emu_tpu_mutations)"
printf 'name: a1\nslice:\n  accelerator-type: v4-8\n  version: v2-alpha-tpuv5\n' \
    >"$T/e.yaml"
expect_rc 1 "$TPUCTL" diff "$T/e.yaml"
assert_grep '^~ version: .* -> v2-alpha-tpuv5 \[cannot change in place: ' "$T/out"
expect_rc 4 "$TPUCTL" apply "$T/e.yaml"
assert_grep "version of node 'a1' is .*, the spec says v2-alpha-tpuv5" "$T/err"
[ "$(emu_tpu_mutations)" = "$before" ] || fail "refused apply sent $(emu_tpu_mutations)"

# A spec without labels, metadata or description leaves them alone.
printf 'name: a1\nslice: {accelerator-type: v4-8}\n' >"$T/f.yaml"
expect_rc 0 "$TPUCTL" diff "$T/f.yaml"

# type + topology: created with acceleratorConfig, then compared by topology.
printf 'name: a2\nslice: {type: v4, topology: 2x2x1}\n' >"$T/g.yaml"
expect_rc 0 "$TPUCTL" apply "$T/g.yaml"
expect_rc 0 "$TPUCTL" diff "$T/g.yaml"
printf 'name: a2\nslice: {type: v4, topology: 2x2x2}\n' >"$T/h.yaml"
expect_rc 1 "$TPUCTL" diff "$T/h.yaml"
assert_grep '^~ topology: 2x2x1 -> 2x2x2 \[cannot change in place: ' "$T/out"
expect_rc 4 "$TPUCTL" apply "$T/h.yaml"

# Trouble is more than 1 (diff(1)): an unreadable reply 2, a 403 3.
emu_inject --method GET --path "$N" --count 1 corrupt-byte-0
expect_rc 2 "$TPUCTL" diff "$T/f.yaml"
assert_grep '^tpuctl: .*TPU API reply' "$T/err"
emu_inject --method GET --path "$N" --count 1 return-403
expect_rc 3 "$TPUCTL" diff "$T/f.yaml"
echo "ok: apply and diff of a node"
