#!/bin/sh
# tpuctl run --workdir without a bucket: the SFTP upload of the archive
# goes over the session the workdir check opened to each worker, which
# the launch then uses too: one SSH connection per worker for the whole
# run (the workers' sshd logs count them), the job's output right; a
# changed workdir on the next run: one more connection per worker.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200
fleet_api_setup
fleet_create_node t481 v4-32 90

# every worker's sshd saw N connections
conns_each() {
	k=0
	for log in "$EMU_DIR"/fleet/n*/w*/sshd.log; do
		c=$(grep -c 'Connection from' "$log" || true)
		[ "$c" -eq "$1" ] || fail "$log: $c connections, not $1"
		k=$((k + 1))
	done
	[ "$k" -eq 4 ] || fail "$k sshd logs, not 4"
}

# the key propagation waits on the workers with connections of its own
# (ssh): counted from a first command on
expect_rc 0 "$TPUCTL" ssh t481 --worker=all -- true
for log in "$EMU_DIR"/fleet/n*/w*/sshd.log; do : >"$log"; done

mkdir -p "$T/wd"
printf 'one\n' >"$T/wd/msg"
expect_rc 0 "$TPUCTL" -vv run --name a1 --workdir "$T/wd" t481 -- cat msg
for w in 0 1 2 3; do
	assert_grep "^\[w$w\] one\$" "$T/out"
done
assert_grep 'workdir sent to 4 of 4 workers' "$T/err"
[ "$(grep -c 'transfer on its open session' "$T/err")" -eq 4 ] ||
    fail "transfers on open sessions: $(cat "$T/err")"
conns_each 1

printf 'two\n' >"$T/wd/msg"
expect_rc 0 "$TPUCTL" run --name a2 --workdir "$T/wd" t481 -- cat msg
for w in 0 1 2 3; do
	assert_grep "^\[w$w\] two\$" "$T/out"
done
conns_each 2
