#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# install, doctor and reset-workers on queued resources: a queued
# resource's name resolves to its node(s), a multislice one to every
# slice's workers (--node picks slices), lines prefixed [sN/wM], the
# summary names each node.  A refusal (TensorFlow on a runtime without
# it) reads the queued resource and its nodes only: no ssh-keys patch,
# no guest attributes.  A live libtpu lock holder planted on slice 1
# only is found there only, reset-workers frees it, doctor is clean.
# Real pip against the offline index of tests/frameworks/build_index.sh.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start --set tpu.qr_provision_ms=300

PY=/usr/bin/python3 # Debian's pip, as in t332
expect_rc 0 "$TPUCTL" queued-resources create t336 --node-count 2 \
    --node-prefix ms --accelerator-type v4-8
expect_rc 0 "$TPUCTL" queued-resources create one --node-id qn \
    --accelerator-type v4-8

# --- a refusal on a queued resource: only reads
before=$(emu_requests | wc -l)
expect_rc 2 "$TPUCTL" install t336 --framework tensorflow
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "not one line: $(cat "$T/err")"
assert_grep "has no TensorFlow support: create the node with --version tpu-vm-tf-" "$T/err"
expect_rc 4 "$TPUCTL" install nosuch --framework jax
assert_grep "node 'nosuch' not found in zone .* \(nor a queued resource of that name\)" "$T/err"
emu_requests | tail -n +$((before + 1)) >"$T/req"
jq -e -s 'all(.method == "GET" or .path == "/token") and
    all(.path | test("getGuestAttributes") | not) and
    any(.path | test("/queuedResources/t336$")) and
    any(.path | test("/nodes/ms-0$")) and any(.path | test("/nodes/ms-1$"))' \
    "$T/req" >/dev/null || fail "the refusal reached the workers' side: $(cat "$T/req")"
[ ! -e "$HOME/.ssh/google_compute_engine" ] || fail "a refusal generated an SSH key"

# --- install on every slice
IDX=$(mktemp -d /var/tmp/tpuctl-e2e-idx.XXXXXX)
trap 'rc=$?; rm -rf "$IDX"; (exit $rc); cleanup' EXIT
"$SRCDIR/tests/frameworks/build_index.sh" "$IDX" >/dev/null
I="--no-index --find-links $IDX --python $PY"
state='jax 0\.6\.1, jaxlib 0\.6\.1, libtpu 0\.0\.15'
# shellcheck disable=SC2086 # $I is words on purpose
expect_rc 0 "$TPUCTL" install t336 --framework jax $I
for s in 0 1; do
	assert_grep "^\[s$s/w0\] jax 0\.6\.1 installed \($state\)$" "$T/out"
	assert_grep "^node ms-$s \(slice $s\) worker 0: exit 0 " "$T/err"
done
assert_grep '^jax 0\.6\.1: 2 of 2 workers succeeded \(2 nodes\)$' "$T/err"
# --node picks a slice: the other is left alone
# shellcheck disable=SC2086
expect_rc 0 "$TPUCTL" install t336 --node 1 --framework jax $I
assert_grep "^\[s1/w0\] jax 0\.6\.1 already installed \($state\): nothing to do$" "$T/out"
assert_no_grep '^\[s0/' "$T/out"
# a queued resource of one node
# shellcheck disable=SC2086
expect_rc 0 "$TPUCTL" install one --framework jax $I
assert_grep "^\[s0/w0\] jax 0\.6\.1 installed \($state\)$" "$T/out"
assert_grep '^node qn \(slice 0\) worker 0: exit 0 ' "$T/err"

# --- doctor and reset-workers on every slice
expect_rc 0 "$TPUCTL" doctor t336
assert_grep '^\[s0/w0\] doctor: clean$' "$T/out"
assert_grep '^\[s1/w0\] doctor: clean$' "$T/out"
assert_grep '^doctor: 2 of 2 workers succeeded \(2 nodes\)$' "$T/err"

# a live lock holder on slice 1 only (detached: it outlives the session)
expect_rc 0 "$TPUCTL" ssh t336 --node 1 -- sh -c '
cd / && nohup python3 -c "
import fcntl, os, time
fd = os.open(os.path.expanduser(\"~/.libtpu_lockfile\"), os.O_RDWR | os.O_CREAT, 0o644)
fcntl.lockf(fd, fcntl.LOCK_EX)
open(os.path.expanduser(\"~/holder.pid\"), \"w\").write(str(os.getpid()))
time.sleep(120)
" >/dev/null 2>&1 </dev/null &
i=0; while [ ! -s ~/holder.pid ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
cat ~/holder.pid'
pid=$(sed 's/^\[s1\/w0\] //' "$T/out")
if [ -z "$pid" ] || ! kill -0 "$pid"; then
	fail "no lock holder: $(cat "$T/out" "$T/err")"
fi
trap 'rc=$?; kill "$pid" 2>/dev/null || true; rm -rf "$IDX"; (exit $rc); cleanup' EXIT

expect_rc 8 "$TPUCTL" doctor t336
assert_grep "^\[s1/w0\] finding: libtpu lock .*/\.libtpu_lockfile is held by pid $pid \(.*python3.*\): the TPU is in use; fix: stop it, or tpuctl reset-workers t336$" "$T/out"
assert_grep '^\[s0/w0\] doctor: clean$' "$T/out"
[ "$(grep -c 'finding:' "$T/out")" -eq 1 ] || fail "findings elsewhere: $(cat "$T/out")"
assert_grep '^tpuctl: doctor: 1 of 2 workers have findings$' "$T/err"

expect_rc 0 "$TPUCTL" reset-workers t336 --grace 2
assert_grep "^\[s1/w0\] stopping pid $pid " "$T/out"
assert_grep '^\[s1/w0\] removed .*/\.libtpu_lockfile$' "$T/out"
assert_grep '^\[s0/w0\] reset: nothing to do$' "$T/out"
assert_grep '^reset-workers: 2 of 2 workers succeeded \(2 nodes\)$' "$T/err"
i=0
while kill -0 "$pid" 2>/dev/null && [ $i -lt 30 ]; do
	sleep 0.1
	i=$((i + 1))
done
! kill -0 "$pid" 2>/dev/null || fail "the lock holder survived reset-workers"

expect_rc 0 "$TPUCTL" doctor t336
[ "$(grep -c 'doctor: clean$' "$T/out")" -eq 2 ] || fail "not clean: $(cat "$T/out")"
