#!/bin/sh
# tpuctl doctor and reset-workers on a v4-32: local checks pass against
# the emulator; a live libtpu lock holder planted on worker 1 only (a
# process holding fcntl.lockf on the worker's ~/.libtpu_lockfile; each
# emulated worker has its own HOME) is found on worker 1 only (exit 8);
# reset-workers --dry-run lists it and leaves it, reset-workers stops it
# and removes the lockfile; doctor is clean again (exit 0).  A stale
# lockfile and framework packages that match no matrix entry are
# findings too.  As root (each emulated worker then has its own /tmp and
# /dev/accel0..3 in its own mount namespace, but every worker sees every
# worker's processes in /proc): a holder planted on worker 1 that holds
# fcntl.lockf on /tmp/libtpu_lockfile and keeps /dev/accel0 open is found
# on worker 1 only (holders are matched by device and inode, not by path
# name), reset-workers frees it, doctor is clean again.  Not root: that
# part is SKIP.
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
# (outside /tmp: as root each worker has its own /tmp, not the test's)
IDX=$(mktemp -d /var/tmp/tpuctl-e2e-idx.XXXXXX)
trap 'rc=$?; rm -rf "$IDX"; (exit $rc); cleanup' EXIT
"$SRCDIR/tests/frameworks/build_index.sh" "$IDX" >/dev/null
expect_rc 0 "$TPUCTL" install pod --worker 3 --framework jax --no-index \
    --find-links "$IDX" --python /usr/bin/python3
expect_rc 0 "$TPUCTL" doctor pod --worker 3
assert_grep '^\[w3\] ok: jax: jax 0\.6\.1, jaxlib 0\.6\.1, libtpu 0\.0\.15$' "$T/out"
expect_rc 0 "$TPUCTL" ssh pod --worker 3 -- /usr/bin/python3 -m pip install \
    -q --user --break-system-packages --no-deps --no-index \
    --find-links "$IDX" jaxlib==0.4.34
expect_rc 8 "$TPUCTL" doctor pod --worker 3
assert_grep '^\[w3\] finding: jax packages .*jaxlib 0\.4\.34.* match no version of the compatibility matrix for this node; fix: tpuctl install pod --framework jax$' "$T/out"

expect_rc 2 "$TPUCTL" reset-workers pod --grace 601
expect_rc 2 "$TPUCTL" doctor pod extra

# The issue's acceptance: the per-worker /tmp and /dev/accel* need root.
if [ "$(id -u)" -ne 0 ]; then
	skip "the /tmp/libtpu_lockfile and /dev/accel0 holder needs the emulator's per-worker /tmp and /dev/accel* (root)"
fi
expect_rc 0 "$TPUCTL" ssh pod --worker 3 -- /usr/bin/python3 -m pip uninstall \
    -q -y --break-system-packages jax jaxlib libtpu
expect_rc 0 "$TPUCTL" doctor pod
[ "$(grep -c 'doctor: clean$' "$T/out")" -eq 4 ] || fail "not clean: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" ssh pod --worker 1 -- sh -c '
cd / && rm -f /tmp/holder.pid && nohup python3 -c "
import fcntl, os, time
fd = os.open(\"/tmp/libtpu_lockfile\", os.O_RDWR | os.O_CREAT, 0o644)
fcntl.lockf(fd, fcntl.LOCK_EX)
dev = os.open(\"/dev/accel0\", os.O_RDWR)
open(\"/tmp/holder.pid\", \"w\").write(str(os.getpid()))
time.sleep(120)
" >/dev/null 2>&1 </dev/null &
i=0; while [ ! -s /tmp/holder.pid ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
cat /tmp/holder.pid'
pid=$(sed 's/^\[w1\] //' "$T/out")
if [ -z "$pid" ] || ! kill -0 "$pid"; then
	fail "no /tmp lock and /dev/accel0 holder: $(cat "$T/out" "$T/err")"
fi
# worker 1's /tmp and /dev/accel0 are its own: not the host's
[ ! -e /tmp/libtpu_lockfile ] || fail "worker 1's /tmp/libtpu_lockfile is on the host"
[ ! -e /dev/accel0 ] || fail "the host has /dev/accel0"

expect_rc 8 "$TPUCTL" doctor pod
assert_grep "^\[w1\] finding: libtpu lock /tmp/libtpu_lockfile is held by pid $pid \(.*python3.*\): the TPU is in use; fix: stop it, or tpuctl reset-workers pod$" "$T/out"
assert_grep "^\[w1\] finding: pid $pid \(.*python3.*\) holds /dev/accel0; fix: stop it, or tpuctl reset-workers pod$" "$T/out"
assert_grep '^\[w1\] doctor: 2 findings$' "$T/out"
for w in 0 2 3; do
	assert_grep "^\[w$w\] doctor: clean$" "$T/out"
done
[ "$(grep -c 'finding:' "$T/out")" -eq 2 ] || fail "findings elsewhere: $(cat "$T/out")"
assert_grep '^tpuctl: doctor: 1 of 4 workers have findings$' "$T/err"

expect_rc 0 "$TPUCTL" --dry-run reset-workers pod
assert_grep "^\[w1\] would stop pid $pid \(.*\): holds /tmp/libtpu_lockfile, /dev/accel0$" "$T/out"
[ "$(grep -c 'would stop' "$T/out")" -eq 1 ] || fail "would stop it elsewhere: $(cat "$T/out")"
for w in 0 2 3; do
	assert_grep "^\[w$w\] reset: nothing to do$" "$T/out"
done
kill -0 "$pid" || fail "--dry-run stopped the holder"

expect_rc 0 "$TPUCTL" reset-workers pod --grace 2
assert_grep "^\[w1\] stopping pid $pid \(.*\): holds /tmp/libtpu_lockfile, /dev/accel0$" "$T/out"
assert_grep '^\[w1\] removed /tmp/libtpu_lockfile$' "$T/out"
[ "$(grep -c 'stopping pid' "$T/out")" -eq 1 ] || fail "stopped processes elsewhere: $(cat "$T/out")"
for w in 0 2 3; do
	assert_grep "^\[w$w\] reset: nothing to do$" "$T/out"
done
i=0
while kill -0 "$pid" 2>/dev/null && [ $i -lt 30 ]; do
	sleep 0.1
	i=$((i + 1))
done
! kill -0 "$pid" 2>/dev/null || fail "the /tmp lock holder survived reset-workers"

expect_rc 0 "$TPUCTL" doctor pod
[ "$(grep -c 'doctor: clean$' "$T/out")" -eq 4 ] || fail "not clean: $(cat "$T/out")"
