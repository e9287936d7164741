#!/bin/sh
# tpuctl doctor and reset-workers on a v4-32: local checks pass against
# the emulator; a live libtpu lock holder planted on worker 1 only (a
# process holding fcntl.lockf on the worker's ~/.libtpu_lockfile; each
# emulated worker has its own HOME) is found on worker 1 only (exit 8);
# reset-workers --dry-run lists it and leaves it, reset-workers stops it
# and removes the lockfile; doctor is clean again (exit 0).  A stale
# lockfile and framework packages that match no matrix entry are
# findings too.
# shellcheck disable=SC2016 # remote shells expand these
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

expect_rc 0 "$TPUCTL" create pod --accelerator-type v4-32
expect_rc 0 "$TPUCTL" doctor
assert_grep '^local: ok: Cloud TPU API: 1 node in ' "$T/out"
assert_grep '^local: ok: credentials' "$T/out"
assert_no_grep 'finding' "$T/out"

expect_rc 0 "$TPUCTL" doctor pod
w=0
while [ $w -lt 4 ]; do
	assert_grep "^\[w$w\] doctor: clean$" "$T/out"
	w=$((w + 1))
done
assert_grep '^doctor: 4 of 4 workers succeeded$' "$T/err"

# plant a lock holder on worker 1: detached, it outlives the session
expect_rc 0 "$TPUCTL" ssh pod --worker 1 -- sh -c '
cd / && nohup python3 -c "
import fcntl, os, time
fd = os.open(os.path.expanduser(\"~/.libtpu_lockfile\"), os.O_RDWR | os.O_CREAT, 0o644)
fcntl.lockf(fd, fcntl.LOCK_EX)
open(os.path.expanduser(\"~/holder.pid\"), \"w\").write(str(os.getpid()))
time.sleep(120)
" >/dev/null 2>&1 </dev/null &
i=0; while [ ! -s ~/holder.pid ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
cat ~/holder.pid'
pid=$(sed 's/^\[w1\] //' "$T/out")
if [ -z "$pid" ] || ! kill -0 "$pid"; then
	fail "no lock holder: $(cat "$T/out" "$T/err")"
fi
# and a stale lockfile on worker 2
expect_rc 0 "$TPUCTL" ssh pod --worker 2 -- touch .libtpu_lockfile

expect_rc 8 "$TPUCTL" doctor pod
assert_grep "^\[w1\] finding: libtpu lock .*/\.libtpu_lockfile is held by pid $pid \(.*python3.*\): the TPU is in use; fix: stop it, or tpuctl reset-workers pod$" "$T/out"
assert_grep '^\[w2\] finding: stale libtpu lockfile .*/\.libtpu_lockfile \(no process holds it\); fix: ' "$T/out"
assert_grep '^\[w0\] doctor: clean$' "$T/out"
assert_grep '^\[w3\] doctor: clean$' "$T/out"
assert_grep '^\[w1\] doctor: 1 finding$' "$T/out"
[ "$(grep -c 'finding:' "$T/out")" -eq 2 ] || fail "findings elsewhere: $(cat "$T/out")"
assert_grep '^tpuctl: doctor: 2 of 4 workers have findings$' "$T/err"

expect_rc 0 "$TPUCTL" --dry-run reset-workers pod
assert_grep "^\[w1\] would stop pid $pid \(.*\): holds .*/\.libtpu_lockfile$" "$T/out"
assert_grep '^\[w2\] would remove .*/\.libtpu_lockfile$' "$T/out"
kill -0 "$pid" || fail "--dry-run stopped the holder"

expect_rc 0 "$TPUCTL" reset-workers pod --grace 2
assert_grep "^\[w1\] stopping pid $pid " "$T/out"
assert_grep '^\[w1\] removed .*/\.libtpu_lockfile$' "$T/out"
assert_grep '^\[w2\] removed .*/\.libtpu_lockfile$' "$T/out"
assert_grep '^\[w0\] reset: nothing to do$' "$T/out"
i=0
while kill -0 "$pid" 2>/dev/null && [ $i -lt 30 ]; do
	sleep 0.1
	i=$((i + 1))
done
! kill -0 "$pid" 2>/dev/null || fail "the lock holder survived reset-workers"

expect_rc 0 "$TPUCTL" doctor pod
[ "$(grep -c 'doctor: clean$' "$T/out")" -eq 4 ] || fail "not clean: $(cat "$T/out")"

# framework packages against the matrix: jax 0.6.1 with jaxlib 0.4.34
"$SRCDIR/tests/frameworks/build_index.sh" "$T/idx" >/dev/null
expect_rc 0 "$TPUCTL" install pod --worker 3 --framework jax --no-index \
    --find-links "$T/idx" --python /usr/bin/python3
expect_rc 0 "$TPUCTL" doctor pod --worker 3
assert_grep '^\[w3\] ok: jax: jax 0\.6\.1, jaxlib 0\.6\.1, libtpu 0\.0\.15$' "$T/out"
expect_rc 0 "$TPUCTL" ssh pod --worker 3 -- /usr/bin/python3 -m pip install \
    -q --user --break-system-packages --no-deps --no-index \
    --find-links "$T/idx" jaxlib==0.4.34
expect_rc 8 "$TPUCTL" doctor pod --worker 3
assert_grep '^\[w3\] finding: jax packages .*jaxlib 0\.4\.34.* match no version of the compatibility matrix for this node; fix: tpuctl install pod --framework jax$' "$T/out"

expect_rc 2 "$TPUCTL" reset-workers pod --grace 601
expect_rc 2 "$TPUCTL" doctor pod extra
