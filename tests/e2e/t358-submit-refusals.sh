#!/bin/sh
# tpuctl submit refusals: a bad spec, no command, a workdir without a
# bucket, the fields that need --wait (timeout and delete-after: or a
# stage bucket), a spec's own
# startup-script, a bad --name: exit 2 naming the field, and nothing is
# sent (the emulator's request log stays empty).  Then a job name already
# recorded and a slice of the spec's name that exists: exit 4, nothing
# created.  A queued resource whose creation fails (403 on its POST)
# leaves no staged archive, no queued resource and no job record.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

mkdir -p "$T/wd"
echo x >"$T/wd/f"
refuse() { # FILE PATTERN [ARGS]
	_f=$1 _p=$2
	shift 2
	expect_rc 2 "$TPUCTL" submit "$@" "$_f"
	assert_grep "$_p" "$T/err"
}
base='name: r358
slice: {accelerator-type: v4-16}'
printf '%s\nslcie: 1\ncommand: "true"\n' "$base" >"$T/a.yaml"
refuse "$T/a.yaml" "unknown key 'slcie'; did you mean 'slice'"
printf '%s\n' "$base" >"$T/b.yaml"
refuse "$T/b.yaml" 'b.yaml: command: is required: submit runs a job'
printf '%s\nworkdir: %s\ncommand: "true"\n' "$base" "$T/wd" >"$T/c.yaml"
refuse "$T/c.yaml" "workdir: needs 'stage' \\(or config run/staging_bucket\\)"
printf '%s\nmax-restarts: 2\ncommand: "true"\n' "$base" >"$T/e.yaml"
refuse "$T/e.yaml" 'max-restarts: needs --wait'
printf '%s\ndelete-after: true\ncommand: "true"\n' "$base" >"$T/f.yaml"
refuse "$T/f.yaml" 'delete-after: needs --wait or a stage bucket'
printf '%s\ntimeout: 1h\ncommand: "true"\n' "$base" >"$T/t.yaml"
refuse "$T/t.yaml" 'timeout: needs --wait or a stage bucket'
printf 'name: r358\nslice:\n  accelerator-type: v4-16\n  metadata: {startup-script: "echo"}\ncommand: "true"\n' >"$T/g.yaml"
refuse "$T/g.yaml" "slice.metadata: startup-script and startup-script-url are submit's own"
printf '%s\ncommand: "true"\n' "$base" >"$T/ok.yaml"
refuse "$T/ok.yaml" "'-bad'" --name -bad
refuse "$T/ok.yaml" "unexpected operand '$T/ok.yaml'" extra
expect_rc 2 "$TPUCTL" submit - <"$T/ok.yaml"
assert_grep "'-': submit reads a spec file, not standard input" "$T/err"
[ "$(emu_requests | wc -l)" -eq 0 ] ||
    fail "requests were sent: $(emu_requests | jq -c '[.method, .path]')"

# a slice of that name exists: only GETs, exit 4
expect_rc 0 "$TPUCTL" create r358 --accelerator-type v4-8 --version tpu-ubuntu2204-base
before=$(emu_tpu_mutations)
expect_rc 4 "$TPUCTL" submit "$T/ok.yaml"
assert_grep "node 'r358' exists already in us-central2-b" "$T/err"
[ "$(emu_tpu_mutations)" = "$before" ] || fail "sent $(emu_tpu_mutations)"

# the queued resource's POST fails: the archive it staged is removed,
# nothing queued, no record
expect_rc 0 "$TPUCTL" data mb gs://b358
cat >"$T/h.yaml" <<END
name: h358
slice: {accelerator-type: v4-16, spot: true}
workdir: $T/wd
stage: gs://b358/jobs
command: cat f
END
emu_inject --method POST --path /v2/projects/tpuctl-emu/locations/us-central2-b/queuedResources \
    --count 1 return-403
expect_rc 3 "$TPUCTL" -v submit "$T/h.yaml"
assert_grep 'workdir staged as gs://b358/jobs/' "$T/err"
assert_grep '403' "$T/err"
expect_rc 0 "$TPUCTL" data ls gs://b358/
[ ! -s "$T/out" ] || fail "left in the bucket: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" queued-resources list --format 'value(name)'
[ ! -s "$T/out" ] || fail "queued resources left: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" jobs --format 'value(name)'
assert_no_grep 'h358' "$T/out"
# the same spec once the API answers: queued, a record
expect_rc 0 "$TPUCTL" submit "$T/h.yaml"
[ "$(cat "$T/out")" = h358 ] || fail "submit: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" data ls gs://b358/jobs/
[ "$(grep -c '\.tar$' "$T/out")" -eq 1 ] || fail "staged: $(cat "$T/out")"
# a second submit of the same job name: 4, nothing more
before=$(emu_tpu_mutations)
expect_rc 4 "$TPUCTL" submit "$T/h.yaml"
assert_grep "job 'h358' exists already" "$T/err"
[ "$(emu_tpu_mutations)" = "$before" ] || fail "sent $(emu_tpu_mutations)"
