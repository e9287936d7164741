#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# SSH connections cut during a detached job (emulator event ssh-cut):
# the job finishes; a `logs --follow` running through the cuts
# reconnects by itself, resumes from its offsets and shows every line
# exactly once, in order per worker, ending with the job's exit 0; the
# job's final state is recorded as exited 0 on every worker.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200
fleet_api_setup
fleet_create_node t308 v4-16 90

n=60
count='i=0; while [ $i -lt '$n' ]; do echo "line $i"; i=$((i + 1)); sleep 0.1; done; echo done >&2'

# every worker has lines 0..n-1 exactly once, in order, and "done" once
check_once() {
	for w in 0 1; do
		grep "^\[w$w\] line " "$1" | sed 's/^\[w.\] line //' >"$T/got"
		seq 0 $((n - 1)) >"$T/want"
		cmp -s "$T/got" "$T/want" || {
			cat "$1" "$2" >&2
			fail "worker $w: lines not exactly once in order ($1)"
		}
		[ "$(grep -c "^\[w$w\] done\$" "$2")" -eq 1 ] ||
			fail "worker $w: 'done' not once in $2: $(cat "$2")"
	done
}

# cut W: every SSH connection to worker W drops
cut() {
	"$EMULATOR" event --state-dir "$EMU_DIR" ssh-cut --node t308 >/dev/null \
	    --worker "$1" || fail "ssh-cut of worker $1 refused"
}

# last LINE: wait until the follower printed "line LINE" of both workers
seen() {
	i=0
	until grep -q "^\[w0\] line $1\$" "$T/f.out" &&
	    grep -q "^\[w1\] line $1\$" "$T/f.out"; do
		kill -0 "$fpid" 2>/dev/null ||
		    fail "the follower ended before line $1: $(cat "$T/f.err")"
		i=$((i + 1))
		[ $i -lt 300 ] || fail "line $1 never followed: $(cat "$T/f.out" "$T/f.err")"
		sleep 0.05
	done
}

expect_rc 0 "$TPUCTL" run --format 'value(name)' --detach --name cut1 t308 \
    --command "$count"
"$TPUCTL" logs --follow cut1 >"$T/f.out" 2>"$T/f.err" &
fpid=$!
# both workers mid-stream, then the other worker alone
seen 10
cut 0
cut 1
seen 30
cut 1
set +e
wait "$fpid"
rc=$?
set -e
[ "$rc" -eq 0 ] || fail "logs --follow through ssh-cut: exit $rc: $(cat "$T/f.err")"
check_once "$T/f.out" "$T/f.err"
assert_grep '^worker 0: exited 0$' "$T/f.err"
assert_grep '^worker 1: exited 0$' "$T/f.err"
assert_grep '^job cut1: 2 of 2 workers succeeded$' "$T/f.err"

# the job's end is recorded: exited 0 everywhere
expect_rc 0 "$TPUCTL" jobs --format json
[ "$(jq -r '.[] | select(.name == "cut1") | .state' "$T/out")" = "2 exited 0" ] ||
	fail "jobs cut1: $(cat "$T/out")"
# and the whole log, once more, is still every line exactly once
expect_rc 0 "$TPUCTL" logs cut1
check_once "$T/out" "$T/err"
