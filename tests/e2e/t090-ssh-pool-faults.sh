#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# The warm pool's faults (issue 18): the holder killed with -9 in the
# middle of a command fails that command (8, "connection holder lost",
# not run again) and the next one works, through a new holder; a worker
# rekeyed while the holder keeps its session is refused on the next
# command (9, the new fingerprint); the node deleted and created again
# (a new node id) ends the holder of the old one; a client of another
# uid is refused by the holder (SO_PEERCRED) even when the socket's
# permissions would let it in.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

# shellcheck source=tests/e2e/lib_warm.sh
. "$(dirname "$0")/lib_warm.sh"

emu_start --set fleet.key_delay_ms=300
fleet_api_setup
fleet_create_node t090 v4-32 90
full=$(jq -r .name "$T/node.json")
id1=$(jq -r .id "$T/node.json")


expect_rc 0 "$TPUCTL" ssh t090 --persist 30s --worker=all -- true
pid=$(holder_pid t090)
[ -n "$pid" ] || fail "no holder after a --persist command: $(cat "$T/list")"
assert_grep "/t090 *$id1 " "$T/list"

# killed -9 in the middle of a command
"$TPUCTL" ssh t090 --persist 30s --worker=all -- 'sleep 3; echo late' \
    >"$T/kout" 2>"$T/kerr" &
bg=$!
sleep 1
kill -KILL "$pid"
rc=0
wait "$bg" || rc=$?
[ "$rc" -eq 8 ] || fail "holder killed mid-command: exit $rc: $(cat "$T/kerr")"
assert_grep 'connection holder lost' "$T/kerr"
assert_no_grep 'late' "$T/kout"
# the next command works: a new holder replaces the stale socket
expect_rc 0 "$TPUCTL" ssh t090 --persist 30s --worker=all -- echo again
[ "$(grep -c '^\[w[0-3]\] again$' "$T/out")" -eq 4 ] ||
    fail "after the kill: $(cat "$T/out")"
pid2=$(holder_pid t090)
if [ -z "$pid2" ] || [ "$pid2" = "$pid" ]; then
	fail "no new holder: $(cat "$T/list")"
fi

# another uid: refused by the holder itself
# (the system's python3: a user's one may live under root's home)
if [ "$(id -u)" = 0 ] && have_tool setpriv util-linux "running as nobody" &&
    [ -x /usr/bin/python3 ]; then
	sock=$(ls "$XDG_RUNTIME_DIR"/tpuctl/*.sock)
	chmod 711 "$T" "$XDG_RUNTIME_DIR" "$XDG_RUNTIME_DIR/tpuctl"
	chmod 666 "$sock"
	setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 -c '
import socket, struct, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
def f(b): return struct.pack(">I", len(b)) + b
def st(x): return struct.pack(">I", len(x)) + x
# the holder may close before the HELLO is written (EPIPE) or after
try:
    s.sendall(f(b"\x01" + struct.pack(">I", 1) + st(b"") + st(b"")))
    s.settimeout(10)
    d = s.recv(100)
except (BrokenPipeError, ConnectionResetError):
    d = b""
print("answer" if d else "refused")
' "$sock" >"$T/nobody" 2>&1 || true
	chmod 700 "$T" "$XDG_RUNTIME_DIR" "$XDG_RUNTIME_DIR/tpuctl"
	chmod 600 "$sock"
	assert_grep '^refused$' "$T/nobody"
	# the holder goes on serving its own user
	expect_rc 0 "$TPUCTL" ssh t090 --persist 30s --worker=0 -- true
	[ "$(holder_pid t090)" = "$pid2" ] || fail "holder gone after the refusal"
fi

# a worker rekeyed while its session is held: refused on the next command
fleet_api POST /_emulator/events \
    "{\"event\":\"rekey\",\"node\":\"$full\",\"worker\":1}" >/dev/null ||
    fail "rekey event failed"
n=0
rc=0
until [ $rc -eq 9 ] && grep -q 'SHA256:' "$T/err"; do
	rc=0
	"$TPUCTL" ssh t090 --persist 30s --worker=1 -- true \
	    >"$T/out" 2>"$T/err" || rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 9 ] ||
	    fail "worker 1 after rekey: exit $rc, want 9: $(cat "$T/err")"
	n=$((n + 1))
	[ $n -lt 100 ] ||
	    fail "worker 1 after rekey: no host key refusal: $(cat "$T/err")"
	sleep 0.2
done
expect_rc 8 "$TPUCTL" ssh t090 --persist 30s --worker=all -- echo hi
assert_grep '^worker 1: host key' "$T/err"

# deleted and created again: a new node id ends the old holder
pid3=$(holder_pid t090)
fleet_api DELETE "$NODES/t090" >/dev/null || fail "nodes.delete failed"
n=0
while fleet_api GET "$NODES/t090" >/dev/null 2>&1; do
	n=$((n + 1))
	[ $n -lt 300 ] || fail "node not deleted"
	sleep 0.2
done
fleet_create_node t090 v4-32 90
id2=$(jq -r .id "$T/node.json")
[ "$id2" != "$id1" ] || fail "the new node has the old id $id1"
n=0
until "$TPUCTL" ssh t090 --persist 30s --worker=all -- echo new \
    >"$T/out" 2>"$T/err"; do
	n=$((n + 1))
	[ $n -lt 50 ] || fail "recreated node: $(cat "$T/err")"
	sleep 0.5
done
expect_rc 0 "$TPUCTL" ssh t090 --persist 30s --worker=all -- echo new
[ "$(grep -c '^\[w[0-3]\] new$' "$T/out")" -eq 4 ] ||
    fail "recreated node: $(cat "$T/out")"
n=0
while kill -0 "$pid3" 2>/dev/null; do
	n=$((n + 1))
	[ $n -lt 50 ] || fail "the old node's holder $pid3 still runs"
	sleep 0.1
done
expect_rc 0 "$TPUCTL" ssh t090 --persist 30s --worker=all -- true
holder_pid t090 >/dev/null
assert_grep "/t090 *$id2 " "$T/list"
