#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# A worker that goes silent while its output streams (its sshd frozen
# with SIGSTOP: no FIN, no RST, the kernel still acks) is found by the
# keepalive (ssh/server_alive_interval 2 s, ssh/server_alive_count_max
# 1: silent for 4 s) instead of being waited on forever:
# - only the connection's sshd processes frozen, during `logs --follow`:
#   the stream is reconnected and every line shows exactly once, exit 0;
# - the whole worker's sshd frozen (listener too), during an attached
#   `run`: that worker is reported lost within the bound (4 s, plus the
#   10 s connect timeout of the status check), exit 8, the other
#   workers' output complete.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

FROZEN=
# thaw: SIGCONT what was frozen (the emulator's SIGTERM must reach it)
thaw() {
	for p in $FROZEN; do
		kill -CONT "$p" 2>/dev/null || true
	done
	FROZEN=
}
trap 'rc=$?; thaw; (exit $rc); cleanup' EXIT

emu_start --set fleet.key_delay_ms=200
fleet_api_setup
fleet_create_node t310 v4-16 90
export TPUCTL_SSH_SERVER_ALIVE_INTERVAL=2 TPUCTL_SSH_SERVER_ALIVE_COUNT_MAX=1

# freeze W [all]: SIGSTOP the sshd processes of worker W's connections
# (those under its listener whose name starts with sshd, not the shells
# and jobs they started); with "all" the listener too.
freeze() {
	set -- "$1" "${2:-}" "$(cat "$EMU_DIR"/fleet/n*/w"$1"/sshd.pid)"
	[ -n "$3" ] || fail "no sshd.pid of worker $1"
	pids=$(ps -e -o pid=,ppid=,comm= | awk -v root="$3" '
	    { pid[NR] = $1; ppid[NR] = $2; comm[NR] = $3 }
	    END {
		q[1] = root; n = 1
		for (h = 1; h <= n; h++)
			for (i = 1; i <= NR; i++)
				if (ppid[i] == q[h] && comm[i] ~ /^sshd/)
					q[++n] = pid[i]
		for (h = 2; h <= n; h++) print q[h]
	    }')
	[ -n "$pids" ] || fail "worker $1 has no connection to freeze"
	[ "$2" = all ] && pids="$3 $pids"
	for p in $pids; do
		kill -STOP "$p"
		FROZEN="$FROZEN $p"
	done
}

n=40
count='i=0; while [ $i -lt '$n' ]; do echo "line $i"; i=$((i + 1)); sleep 0.2; done'

# 1. the connection frozen during logs --follow: reconnected, every line once
expect_rc 0 "$TPUCTL" run --format 'value(name)' --detach --name fz1 t310 \
    --command "$count"
"$TPUCTL" logs --follow fz1 >"$T/f.out" 2>"$T/f.err" &
fpid=$!
wait_for_grep -c 5 "$T/f.out" '^\[w1\] line ' "" 20
freeze 1
set +e
wait "$fpid"
rc=$?
set -e
thaw
[ "$rc" -eq 0 ] || fail "logs --follow through a frozen connection: exit $rc: $(cat "$T/f.err")"
for w in 0 1; do
	grep "^\[w$w\] line " "$T/f.out" | sed 's/^\[w.\] line //' >"$T/got"
	seq 0 $((n - 1)) >"$T/want"
	cmp -s "$T/got" "$T/want" ||
		fail "worker $w: lines not exactly once in order: $(cat "$T/f.out" "$T/f.err")"
done
assert_grep '^job fz1: 2 of 2 workers succeeded$' "$T/f.err"

# 2. the whole worker frozen during an attached run: lost in the bound
"$TPUCTL" run --name fz2 t310 -- sh -c 'echo up; sleep 8; echo finished' \
    >"$T/r.out" 2>"$T/r.err" &
pid=$!
wait_for_grep -c 2 "$T/r.out" '^\[w[01]\] up$' "" 20
freeze 1 all
frozen_at=$(date +%s)
set +e
wait "$pid"
rc=$?
set -e
took=$(($(date +%s) - frozen_at))
thaw
[ "$rc" -eq 8 ] || fail "frozen worker: exit $rc: $(cat "$T/r.err")"
# 4 s of silence, the 10 s connect timeout of the status check, slack
[ "$took" -le 25 ] || fail "frozen worker: run took $took s"
assert_grep '^worker 1: lost$' "$T/r.err"
assert_grep '^worker 0: exited 0$' "$T/r.err"
assert_grep '^\[w0\] finished$' "$T/r.out"
assert_grep '^tpuctl: job fz2: 1 of 2 workers failed$' "$T/r.err"
