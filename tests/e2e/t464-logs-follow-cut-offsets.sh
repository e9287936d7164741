#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# A follow resumed after the SSH connections were cut, with stdout far
# ahead of stderr (one start offset for both logs: what was had again
# is dropped): the local logs are byte for byte the workers' files
# (bytes of every value, lines without an end), nothing twice, and the
# follow ends with the job's exit contract.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200
fleet_api_setup
fleet_create_node t464 v4-16 90
export XDG_STATE_HOME="$T/state"
m=$$
job='i=0; while [ $i -lt 300 ]; do printf "%s line %05d \\001\\377=>\\n" "$TPUCTL_WORKER" $i; i=$((i + 1)); done
printf "e-part" >&2
sleep 4640.'"$m"'
printf "==> x <==\\n\\nmore" ; printf "\\n-e-end" >&2
sleep 4641.'"$m"'
printf "last"'

cut() {
	for w in 0 1; do
		"$EMULATOR" event --state-dir "$EMU_DIR" ssh-cut --node t464 \
		    --worker "$w" >/dev/null || fail "ssh-cut of worker $w refused"
	done
}

wait_sleep() {
	k=0
	until [ "$(pgrep -fc "^sleep $1.$m\$")" -ge 2 ]; do
		k=$((k + 1))
		[ $k -lt 400 ] || fail "the job did not reach sleep $1: $(cat "$T/f.err")"
		sleep 0.05
	done
}

expect_rc 0 "$TPUCTL" run --format 'value(name)' --detach --name c1 t464 \
    --command "$job"
"$TPUCTL" logs --follow c1 >"$T/f.out" 2>"$T/f.err" &
fpid=$!
wait_sleep 4640
sleep 0.7 # what was written reaches the follower
cut
sleep 0.5
pkill -PIPE -f "^sleep 4640.$m\$" || true
wait_sleep 4641
sleep 0.7
cut
sleep 0.5
pkill -PIPE -f "^sleep 4641.$m\$" || true
set +e
wait "$fpid"
rc=$?
set -e
[ "$rc" -eq 0 ] || fail "logs --follow: exit $rc: $(cat "$T/f.err")"
for w in 0 1; do
	for s in out err; do
		f=stdout
		[ $s = out ] || f=stderr
		cmp "$T/state/tpuctl/jobs/c1/s0-w$w.$s" \
		    "$EMU_DIR/fleet/n0/w$w/home/.tpuctl/jobs/c1/$f" >&2 ||
			fail "worker $w: local $s log is not the worker's"
	done
	[ "$(grep -c "^\[w$w\] $w line " "$T/f.out")" -eq 300 ] ||
		fail "worker $w: lines not once: $(grep -c "^\[w$w\] " "$T/f.out")"
	assert_grep "^\[w$w\] ==> x <==\$" "$T/f.out"
	assert_grep "^\[w$w\] morelast\$" "$T/f.out"
	assert_grep "^\[w$w\] e-part\$" "$T/f.err"
	assert_grep "^\[w$w\] -e-end\$" "$T/f.err"
done
assert_grep '^job c1: 2 of 2 workers succeeded$' "$T/f.err"
