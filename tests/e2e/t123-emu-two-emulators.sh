#!/bin/sh
# Two emulators at once in one network namespace (two users, or a test
# beside another): worker subnets are leased machine-wide, so each node
# gets its own addresses and both work (pinned host keys, the right
# metadata server).  An emulator restarted while the other holds its
# persisted subnet moves the node: new addresses, same host keys, and
# it works again.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

B_PID=
B_DIR="$T/emu-b"
# On exit B goes too, then lib.sh's cleanup (with the exit status kept).
cleanup_b() {
	brc=$?
	if [ -n "$B_PID" ]; then
		kill -TERM "$B_PID" 2>/dev/null || true
		wait "$B_PID" 2>/dev/null || true
	fi
	(exit $brc)
	cleanup
}
trap cleanup_b EXIT

# start_b: emulator B on its own state dir, as emu_start does for A.
start_b() {
	mkdir -p "$B_DIR"
	"$EMULATOR" serve --state-dir "$B_DIR" --set fleet.key_delay_ms=200 \
	    >"$B_DIR/emulator.log" 2>&1 &
	B_PID=$!
	i=0
	while [ ! -s "$B_DIR/env" ]; do
		kill -0 "$B_PID" 2>/dev/null ||
		    fail "emulator B exited early: $(tail -5 "$B_DIR/emulator.log")"
		i=$((i + 1))
		[ $i -lt 300 ] || fail "emulator B did not start in 30 s"
		sleep 0.1
	done
}
stop() { # stop PID
	kill -TERM "$1"
	wait "$1" || fail "emulator exit status $?"
}
# use DIR: talk to the emulator of state dir DIR.
use() {
	# shellcheck disable=SC1091
	. "$1/env"
	fleet_api_setup
}
# works NAME TAG: the node's worker 0 has the pinned key, accepts ours
# and its metadata server (on its own address) names it; its address
# goes to $T/addr.TAG, its host key line to $T/key.TAG.
works() {
	fleet_api GET "$NODES/$1" >"$T/node.json"
	a=$(jq -r '.networkEndpoints[0].ipAddress' "$T/node.json")
	fleet_known_hosts "$1" 1
	fleet_patch_key "$1"
	fleet_wait_key "$a"
	expect_rc 0 fleet_ssh "$a" hostname
	h=$(cat "$T/out")
	name=$(curl -s -f --max-time 5 -H 'Metadata-Flavor: Google' \
	    "http://$a:${GCE_METADATA_HOST##*:}/computeMetadata/v1/instance/name") ||
	    fail "$1: no metadata server on $a"
	if [ "$(id -u)" -eq 0 ]; then
		[ "$name" = "$h" ] || fail "$1: hostname $h, metadata of $a names $name"
	fi
	echo "$name" | grep -Eq -- '-w-0$' || fail "$1: metadata name $name"
	echo "$a" >"$T/addr.$2"
	cut -d' ' -f2- "$T/known_hosts" >"$T/key.$2"
}

emu_start --set fleet.key_delay_ms=200
A_DIR=$EMU_DIR
start_b

use "$A_DIR"
fleet_create_node na v4-8 60
use "$B_DIR"
fleet_create_node nb v4-8 60
use "$A_DIR"
works na a
use "$B_DIR"
works nb b
[ "$(cat "$T/addr.a")" != "$(cat "$T/addr.b")" ] ||
    fail "both emulators gave out $(cat "$T/addr.a")"
# A is still right after B came up on the other subnet.
use "$A_DIR"
works na a2
[ "$(cat "$T/addr.a2")" = "$(cat "$T/addr.a")" ] || fail "A's node moved while running"

# A stops; B takes A's subnet for a new node; A restarts and moves.
stop "$EMU_PID"
EMU_PID=
use "$B_DIR"
fleet_create_node nb2 v4-8 60
works nb2 b2
[ "$(cat "$T/addr.b2")" = "$(cat "$T/addr.a")" ] ||
    fail "B did not reuse A's released subnet: $(cat "$T/addr.b2")"
emu_start --set fleet.key_delay_ms=200
assert_grep "node '.*/nodes/na': subnet [0-9]+ is held by another emulator; moved to subnet" \
    "$EMU_DIR/emulator.log"
use "$A_DIR"
works na a3
[ "$(cat "$T/addr.a3")" != "$(cat "$T/addr.a")" ] || fail "A's node did not move"
[ "$(cat "$T/addr.a3")" != "$(cat "$T/addr.b")" ] || fail "A's node moved onto B's"
cmp -s "$T/key.a" "$T/key.a3" || fail "the moved node has new host keys"
# B's nodes are untouched.
use "$B_DIR"
works nb2 b3
cmp -s "$T/key.b2" "$T/key.b3" || fail "B's node lost its host key"
echo ok
