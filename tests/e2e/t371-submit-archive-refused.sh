#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# A submitted job whose staged workdir archive is deleted (2 workers) or
# corrupted in the bucket (a byte changed in the emulator's stored file,
# same generation: 1 worker) while its queued resource waits for
# capacity (a stockout): when the capacity arrives every worker's
# startup-script refuses the archive (not in the bucket; checksum
# mismatch) and starts nothing.  logs --follow does not wait for a job
# that will never start: it shows each worker's reason, "exited 98"
# (the job could not start), and returns 8; jobs lists the same.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200
fleet_api_setup
expect_rc 0 "$TPUCTL" data mb gs://stg371
mkdir -p "$T/spec/src"
printf 'from the workdir\n' >"$T/spec/src/msg.txt"
"$EMULATOR" event --state-dir "$EMU_DIR" --zone us-central2-b stockout >/dev/null ||
    fail "stockout event failed"
cat >"$T/spec/gone.yaml" <<'END'
name: gone371
slice: {accelerator-type: v4-16, spot: true}
workdir: src
stage: gs://stg371/gone
command: 'cat msg.txt; echo never'
END
cat >"$T/spec/bad.yaml" <<'END'
name: bad371
slice: {accelerator-type: v4-8, spot: true}
workdir: src
stage: gs://stg371/bad
command: 'cat msg.txt; echo never'
END
expect_rc 0 "$TPUCTL" submit "$T/spec/gone.yaml"
expect_rc 0 "$TPUCTL" submit "$T/spec/bad.yaml"
expect_rc 0 "$TPUCTL" data ls gs://stg371/gone/
gone=$(grep '\.tar$' "$T/out")
expect_rc 0 "$TPUCTL" data rm "$gone"
expect_rc 0 "$TPUCTL" data ls gs://stg371/bad/
bad=$(grep '\.tar$' "$T/out")
key=$(printf %s "${bad#gs://stg371/}" | sha256sum | cut -d' ' -f1)
f="$EMU_DIR/gcs/buckets/stg371/objects/$key.data"
[ -f "$f" ] || fail "no stored file for $bad"
printf X | dd of="$f" bs=1 seek=200 conv=notrunc 2>/dev/null
"$EMULATOR" event --state-dir "$EMU_DIR" --zone us-central2-b --clear stockout >/dev/null ||
    fail "stockout clear failed"

h=$(basename "$gone" .tar)
rc=0
timeout 60 "$TPUCTL" logs --follow gone371 >"$T/l.out" 2>"$T/l.err" || rc=$?
[ "$rc" -eq 8 ] || fail "logs --follow of a refused archive: exit $rc: $(cat "$T/l.out" "$T/l.err")"
for w in 0 1; do
	assert_grep "^\\[w$w\\] tpuctl: cannot download the workdir from the bucket\$" "$T/l.err"
	assert_grep "^\\[w$w\\] tpuctl: workdir archive $h is not on this worker\$" "$T/l.err"
	assert_grep "^worker $w: exited 98\$" "$T/l.err"
done
assert_no_grep 'never|from the workdir' "$T/l.out"
[ ! -s "$T/l.out" ] || fail "output of a job that never started: $(cat "$T/l.out")"
assert_grep '^tpuctl: job gone371: 2 of 2 workers failed' "$T/l.err"
expect_rc 0 "$TPUCTL" jobs gone371 --format json
jq -e '[.[0].workers[].state] == ["exited 98", "exited 98"]' "$T/out" >/dev/null ||
    fail "jobs: $(cat "$T/out")"

h=$(basename "$bad" .tar)
rc=0
timeout 60 "$TPUCTL" logs --follow bad371 >"$T/l.out" 2>"$T/l.err" || rc=$?
[ "$rc" -eq 8 ] || fail "logs --follow of a corrupted archive: exit $rc: $(cat "$T/l.out" "$T/l.err")"
assert_grep "^\\[w0\\] tpuctl: workdir archive $h: checksum mismatch\$" "$T/l.err"
assert_grep "^\\[w0\\] tpuctl: workdir archive $h is not on this worker\$" "$T/l.err"
assert_no_grep 'cannot download' "$T/l.err"
assert_grep '^worker 0: exited 98$' "$T/l.err"
assert_no_grep 'never|from the workdir' "$T/l.out"
[ ! -s "$T/l.out" ] || fail "output of a job that never started: $(cat "$T/l.out")"
echo ok
