#!/bin/sh
# The global --dry-run on every command that changes or runs something
# (issue 15: "tpuctl --dry-run install" installed for real): against a
# v4-32 whose key and host keys are already in place, each command exits
# 0 with what it would do, and afterwards the emulator's request log holds
# no mutating call (anything but GET/HEAD, token calls aside), no worker's
# sshd saw a connection, the bucket lists the same and no local file was
# written.  install, run (also --framework), notebook, cancel, ssh, scp
# print one "would ..." line per selected worker; create, delete, start,
# stop, update, apply, queued-resources create/delete print the request
# as JSON; data cp/mv/rm/sync/mb print the plan.  doctor and
# reset-workers are read-only probes and still run them over SSH (the
# documented exception): no mutating call, nothing stopped.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-339

expect_rc 0 "$TPUCTL" create pod --accelerator-type v4-32
# the key in the metadata, the host keys pinned: a real run needs nothing
expect_rc 0 "$TPUCTL" ssh pod --worker all -- true
printf 'one\n' >"$T/up"
expect_rc 0 "$TPUCTL" -q data cp "$T/up" gs://e2e-339/a
# a detached job for cancel --dry-run to leave alone
expect_rc 0 "$TPUCTL" run pod --name j339 --detach -- sleep 300
mkdir -p "$T/local"
printf 'two\n' >"$T/local/f"

conns() {
	cat "$EMU_DIR"/fleet/n*/w*/sshd.log 2>/dev/null |
	    grep -c 'Connection from' || true
}
objects() {
	curl -sS -H "Authorization: Bearer $TOKEN" \
	    "$GCS/storage/v1/b/e2e-339/o" | jq -c '[.items[]? | [.name, .generation]]'
}
# local files changed since $T/stamp (the node cache: reads, not changes)
changed() {
	find "$HOME" "$T/local" -newer "$T/stamp" ! -type d \
	    ! -path "$HOME/.cache/tpuctl/nodes/*" 2>/dev/null || true
}

# dry WHAT-LINES ARGS...: tpuctl --dry-run ARGS exits 0 and changes nothing;
# WHAT-LINES: the stdout lines (or "-": not counted)
dry() {
	dl=$1
	shift
	r0=$(emu_requests | wc -l)
	c0=$(conns)
	o0=$(objects)
	sleep 1.1 # find -newer: mtimes of a second's granularity on some fs
	: >"$T/stamp"
	expect_rc 0 "$TPUCTL" --dry-run "$@"
	m=$(emu_requests | tail -n +$((r0 + 1)) |
	    jq -c 'select(.method != "GET" and .method != "HEAD") |
	        select(.path | test("token") | not) | [.method, .path]')
	[ -z "$m" ] || fail "--dry-run $*: sent $m"
	[ "$(conns)" = "$c0" ] || fail "--dry-run $*: opened $(($(conns) - c0)) SSH sessions"
	[ "$(objects)" = "$o0" ] || fail "--dry-run $*: the bucket changed: $(objects)"
	[ -z "$(changed)" ] || fail "--dry-run $*: wrote $(changed)"
	if [ "$dl" != - ]; then
		[ "$(wc -l <"$T/out")" -eq "$dl" ] ||
		    fail "--dry-run $*: $(wc -l <"$T/out") lines, want $dl: $(cat "$T/out")"
	fi
}

# commands that run something on the workers: one line per worker
dry 4 install pod --framework jax
w=0
while [ $w -lt 4 ]; do
	assert_grep "^\[w$w\] [^ ]*@[0-9.]*:[0-9]*: would install jax 0\.6\.1 \(recipe jax\.sh\)$" "$T/out"
	w=$((w + 1))
done
dry 4 run pod -- touch /tmp/t339-marker
assert_grep "^\[w3\] .*: would run job touch-[0-9a-z-]*: 'touch' '/tmp/t339-marker'$" "$T/out"
dry 8 run pod --name j339b --detach --framework jax -- echo hi
assert_grep '^\[w0\] .*: would install jax 0\.6\.1 ' "$T/out"
assert_grep '^\[w0\] .*: would run job j339b \(detached\): '"'echo' 'hi'"'$' "$T/out"
expect_rc 0 "$TPUCTL" jobs
assert_no_grep 'j339b\|touch-' "$T/out"
dry 1 notebook pod --port 8899 --local-port 18899
assert_grep '^\[w0\] .*: would start Jupyter on port 8899, forwarded to 127\.0\.0\.1:18899$' "$T/out"
dry 4 cancel j339
assert_grep '^\[w2\] .*: would cancel job j339 \(SIGTERM, SIGKILL after 10s\)$' "$T/out"
dry 4 ssh pod --worker all -- touch /tmp/t339-marker
assert_grep "^\[w1\] .*: would run: 'touch' '/tmp/t339-marker'$" "$T/out"
dry 2 scp --worker 0,1 "$T/local/f" pod:f
dry 1 scp --worker 0 pod:f "$T/local/g"
[ ! -e "$T/local/g" ] || fail "scp --dry-run wrote $T/local/g"

# the Cloud TPU API: the request printed, not sent
dry 1 create n2 --accelerator-type v4-8
assert_grep '^{"dryRun":true,"method":"POST",' "$T/out"
dry 1 start pod
dry 1 stop pod
dry 1 update pod --update-labels a=b
assert_grep '"method":"PATCH"' "$T/out"
dry 1 delete pod --quiet
assert_grep '"method":"DELETE"' "$T/out"
cat >"$T/local/s.yaml" <<'END'
name: s339
slice:
  accelerator-type: v4-8
  zones: [us-central2-b]
END
dry - apply "$T/local/s.yaml"
assert_grep '"method":"POST"' "$T/out"
dry 1 queued-resources create qr339 --node-id qn --accelerator-type v4-8 \
    --runtime-version tpu-ubuntu2204-base
dry - queued-resources delete qr339 --quiet --force

# Cloud Storage: the plan, no object or local file changed
dry - data mb gs://e2e-339-new
dry - data cp "$T/local/f" gs://e2e-339/b
dry - data cp gs://e2e-339/a "$T/local/down"
[ ! -e "$T/local/down" ] || fail "data cp --dry-run wrote $T/local/down"
dry - data mv gs://e2e-339/a gs://e2e-339/c
dry - data mv "$T/local/f" gs://e2e-339/f
[ -e "$T/local/f" ] || fail "data mv --dry-run removed the local source"
dry - data rm gs://e2e-339/a
dry - data sync "$T/local" gs://e2e-339/d

# read-only probes: they run, nothing is sent or stopped
r0=$(emu_requests | wc -l)
expect_rc 0 "$TPUCTL" --dry-run doctor pod
expect_rc 0 "$TPUCTL" --dry-run reset-workers pod
assert_grep '^\[w0\] reset: nothing to do' "$T/out"
m=$(emu_requests | tail -n +$((r0 + 1)) |
    jq -c 'select(.method != "GET" and .method != "HEAD") |
        select(.path | test("token") | not) | [.method, .path]')
[ -z "$m" ] || fail "doctor/reset-workers --dry-run sent $m"

# the job is still running; the real cancel ends it
expect_rc 0 "$TPUCTL" cancel j339
assert_grep '^job j339: ended on 4 of 4 workers$' "$T/err"
