#!/bin/sh
# RELIABILITY.md D5: one of 8 workers black-holed (tpuctl-emulator event
# blackhole), in both modes: "drop" (SYNs unanswered: connect() hangs) and
# "silent" (TCP accepted, no SSH banner ever).  tpuctl ssh --worker=all
# finishes on the 7 others and reports worker 3 as a connect/handshake
# timeout (exit 8), --worker 3 alone is exit 9, scp to all workers leaves
# the file on the 7 others (exit 8), forward to worker 3 fails with one
# line (exit 9); all within bounds set by the connect timeout.  While the
# hole is open the node's health is TIMEOUT; worker-up / --clear bring
# the worker's sshd back.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_tpu.sh
. "$(dirname "$0")/lib_tpu.sh"

emu_start --set fleet.key_delay_ms=300
tpu_setup
PORT=${TPUCTL_SSH_PORT:?the emulator env has no TPUCTL_SSH_PORT}
N=2 # --connect-timeout, seconds

expect_rc 0 "$TPUCTL" create bh --accelerator-type v4-64
expect_api 200 GET "/v2/$P/nodes/bh"
[ "$(jr '.networkEndpoints | length')" -eq 8 ] ||
    fail "v4-64 should have 8 workers: $(cat "$T/resp")"
W3=$(jr '.networkEndpoints[3].ipAddress')
# Keys propagated and host keys pinned while every worker answers.
expect_rc 0 "$TPUCTL" ssh bh --worker=all -- true
echo "payload $$" >"$T/f"
LPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

# probe ADDR PORT: what a plain TCP client sees in 2 s: hang (no
# connection), silent (connected, not a byte), banner (SSH-...),
# refused or closed.
probe() {
	python3 - "$1" "$2" <<'EOF'
import socket, sys
s = socket.socket()
s.settimeout(2)
try:
    s.connect((sys.argv[1], int(sys.argv[2])))
except socket.timeout:
    print("hang")
    sys.exit(0)
except OSError:
    print("refused")
    sys.exit(0)
try:
    b = s.recv(4)
    print("banner" if b.startswith(b"SSH-") else "closed")
except socket.timeout:
    print("silent")
EOF
}

# health_is VALUE TIMEOUT_S: the node's health becomes VALUE.
health_is() {
	n=0
	while :; do
		api GET "/v2/$P/nodes/bh"
		[ "$(jr .health)" = "$1" ] && break
		n=$((n + 1))
		[ $n -lt $(($2 * 5)) ] || fail "health not $1 in $2 s: $(cat "$T/resp")"
		sleep 0.2
	done
}

# run_bg NAME CMD...: CMD in the background; its stdout, stderr, exit
# status and wall seconds in $T/NAME.out, .err, .rc, .secs.
PIDS=
run_bg() {
	name=$1
	shift
	(
		s=$(date +%s)
		rc=0
		"$@" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
		echo $rc >"$T/$name.rc"
		echo $(($(date +%s) - s)) >"$T/$name.secs"
	) &
	PIDS="$PIDS $!"
}

wait_bg() {
	for p in $PIDS; do
		wait "$p"
	done
	PIDS=
}

# check_bg NAME RC MIN_S MAX_S: exit status RC after MIN_S to MAX_S
# seconds (MIN_S: the connect timeout was waited for, not skipped).
check_bg() {
	rc=$(cat "$T/$1.rc")
	secs=$(cat "$T/$1.secs")
	if [ "$rc" -ne "$2" ] || [ "$secs" -lt "$3" ] || [ "$secs" -gt "$4" ]; then
		echo "--- $1 stdout" >&2
		cat "$T/$1.out" >&2
		echo "--- $1 stderr" >&2
		cat "$T/$1.err" >&2
		fail "$1 ($mode): exit $rc after $secs s, want $2 in $3-$4 s"
	fi
}

for mode in drop silent; do
	"$EMULATOR" event --state-dir "$EMU_DIR" blackhole --node bh \
	    --worker 3 --mode "$mode" >/dev/null ||
	    fail "blackhole --mode $mode rejected"
	got=$(probe "$W3" "$PORT")
	want=hang
	[ "$mode" = silent ] && want=silent
	[ "$got" = "$want" ] || fail "$mode: a TCP client sees '$got', want '$want'"
	health_is TIMEOUT 10

	# All four at once: the wall time is the slowest one's.  A hang is
	# cut at 120 s (exit 124), far above every bound below.
	run_bg all timeout 120 "$TPUCTL" ssh bh --worker=all \
	    --connect-timeout "$N" -- echo hi
	run_bg one timeout 120 "$TPUCTL" ssh bh --worker 3 \
	    --connect-timeout "$N" -- echo hi
	run_bg scp timeout 120 "$TPUCTL" scp --worker all \
	    --connect-timeout "$N" "$T/f" "bh:f.$mode"
	run_bg fwd timeout 120 "$TPUCTL" forward --worker 3 \
	    --connect-timeout "$N" bh "$LPORT"
	wait_bg

	# ssh --worker=all: the 7 others print and finish, worker 3 times out.
	check_bg all 8 $((N - 1)) $((4 * N + 20))
	[ "$(grep -c '^\[w[0-24-7]\] hi$' "$T/all.out")" -eq 7 ] ||
	    fail "$mode: the 7 other workers did not all print: $(cat "$T/all.out")"
	assert_no_grep '^\[w3\]' "$T/all.out"
	assert_grep '^worker 3: connect timeout' "$T/all.err"
	if [ "$mode" = drop ]; then
		assert_grep '^worker 3: .*connect timeout after' "$T/all.err"
	else
		assert_grep '^worker 3: .*handshake' "$T/all.err"
	fi
	[ "$(grep -c '^worker [0-24-7]: exit 0 ' "$T/all.err")" -eq 7 ] ||
	    fail "$mode: want 7 'exit 0' summary lines: $(cat "$T/all.err")"
	assert_grep '7 of 8 workers succeeded' "$T/all.err"

	# The black-holed worker alone: none reachable.
	check_bg one 9 $((N - 1)) $((4 * N + 20))
	assert_grep 'worker 3.*(connect timeout|handshake)' "$T/one.err"
	assert_no_grep 'hi' "$T/one.out"

	# scp: the others get the file.
	check_bg scp 8 $((N - 1)) $((4 * N + 20))
	assert_grep '^\[w3\] error: .*(connect timeout|handshake)' "$T/scp.err"
	assert_no_grep '^\[w[0-24-7]\]' "$T/scp.err"
	expect_rc 0 "$TPUCTL" ssh bh --worker=0,1,2,4,5,6,7 -- cat "f.$mode"
	[ "$(grep -c "^\[w[0-24-7]\] payload $$\$" "$T/out")" -eq 7 ] ||
	    fail "$mode: scp did not reach the 7 others: $(cat "$T/out")"

	# forward: one clear line, exit 9, never a listening forward.
	check_bg fwd 9 $((N - 1)) $((4 * N + 20))
	assert_grep 'worker 3.*(connect timeout|handshake)' "$T/fwd.err"
	[ "$(wc -l <"$T/fwd.err")" -eq 1 ] ||
	    fail "$mode: forward should print one line: $(cat "$T/fwd.err")"
	assert_no_grep 'forwarding' "$T/fwd.err"

	# Undo: worker-up after drop, blackhole --clear after silent.
	if [ "$mode" = drop ]; then
		"$EMULATOR" event --state-dir "$EMU_DIR" worker-up --node bh \
		    --worker 3 >/dev/null || fail "worker-up rejected"
	else
		"$EMULATOR" event --state-dir "$EMU_DIR" blackhole --clear \
		    --node bh --worker 3 >/dev/null || fail "blackhole --clear rejected"
	fi
	health_is HEALTHY 30
	[ "$(probe "$W3" "$PORT")" = banner ] || fail "$mode: worker 3's sshd is not back"
	expect_rc 0 "$TPUCTL" ssh bh --worker 3 \
	    --command "test ! -e f.$mode && echo back"
	assert_grep '^(\[w3\] )?back$' "$T/out"
done

expect_rc 0 "$TPUCTL" ssh bh --worker=all -- true
