#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# tpuctl run when the cached node description is stale (the node was
# deleted and recreated behind tpuctl's back: new id, new host keys, no
# ssh-keys in its metadata): the first failure reads the node again, the
# job is launched on every worker of the new node and followed, each
# line shown once; exit 0.  Also with a workdir: the markers of the old
# node do not hold for the new one, which is sent the archive (also
# when the first question about the archive goes to the old node).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start
fleet_api_setup
expect_rc 0 "$TPUCTL" create t305 --accelerator-type v4-32
mkdir "$T/wd"
echo payload >"$T/wd/f.txt"
expect_rc 0 "$TPUCTL" run --workdir "$T/wd" t305 -- cat f.txt
[ "$(grep -c '^\[w[0-3]\] payload$' "$T/out")" -eq 4 ] || fail "first: $(cat "$T/out")"

fleet_api DELETE "$NODES/t305" >/dev/null || fail "delete"
n=0
while fleet_api GET "$NODES/t305" >/dev/null 2>&1; do
	n=$((n + 1))
	[ $n -lt 150 ] || fail "node not deleted"
	sleep 0.2
done
fleet_create_node t305 v4-32 90

expect_rc 0 "$TPUCTL" run --name again --workdir "$T/wd" t305 -- \
    sh -c 'cat f.txt; echo "rank $RANK"'
for w in 0 1 2 3; do
	[ "$(grep -c "^\[w$w\] payload\$" "$T/out")" -eq 1 ] ||
		fail "worker $w payload not once: $(cat "$T/out") $(cat "$T/err")"
	[ "$(grep -c "^\[w$w\] rank $w\$" "$T/out")" -eq 1 ] ||
		fail "worker $w rank not once: $(cat "$T/out")"
	assert_grep "^worker $w: exited 0\$" "$T/err"
done
assert_grep '^job again: 4 of 4 workers succeeded$' "$T/err"

# Recreated again, and a workdir no worker has: the workers are asked
# (the first answers are from the old node), the node read again, the
# new workers asked and sent the archive.
fleet_api DELETE "$NODES/t305" >/dev/null || fail "delete"
n=0
while fleet_api GET "$NODES/t305" >/dev/null 2>&1; do
	n=$((n + 1))
	[ $n -lt 150 ] || fail "node not deleted"
	sleep 0.2
done
fleet_create_node t305 v4-32 90
echo changed >"$T/wd/f.txt"
expect_rc 0 "$TPUCTL" -v run --name third --workdir "$T/wd" t305 -- cat f.txt
[ "$(grep -c '^\[w[0-3]\] changed$' "$T/out")" -eq 4 ] ||
	fail "third: $(cat "$T/out") $(cat "$T/err")"
assert_grep 'workdir sent to 4 of 4 workers' "$T/err"
