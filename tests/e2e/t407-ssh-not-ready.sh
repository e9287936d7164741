#!/bin/sh
# Issue 20: "tpuctl ssh" of a node that is not READY says so in one line,
# with what to do (start it, wait, or delete it), and exits 4 before any
# key goes into the node's metadata or any worker is tried.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start
Z=us-central2-b
NODES=/v2/projects/tpuctl-emu/locations/$Z/nodes
KEY="$T/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$KEY" >/dev/null

# no_patch NAME: no nodes.patch of NAME since the mark, no ssh-keys line.
no_patch() {
	emu_requests | tail -n +$((mark + 1)) >"$T/reqs"
	if grep -E '"method": *"PATCH"' "$T/reqs" | grep -q "$NODES/$1\""; then
		fail "$1: the metadata was patched: $(cat "$T/reqs")"
	fi
	expect_rc 0 "$TPUCTL" describe "$1" --format json
	[ "$(jq -r '.metadata["ssh-keys"] // ""' "$T/out")" = "" ] ||
	    fail "$1: a key went in: $(cat "$T/out")"
}

expect_rc 0 "$TPUCTL" create st --accelerator-type v4-8
expect_rc 0 "$TPUCTL" stop st
mark=$(emu_requests | wc -l)
expect_rc 4 "$TPUCTL" ssh st --ssh-key-file "$KEY" -- true
assert_grep "^tpuctl: node 'st' is STOPPED: start it with 'tpuctl start st'$" "$T/err"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "not one line: $(cat "$T/err")"
no_patch st
# scp and an interactive shell stop the same way
expect_rc 4 "$TPUCTL" scp --ssh-key-file "$KEY" "$KEY.pub" st:k
assert_grep "is STOPPED: start it with 'tpuctl start st'$" "$T/err"
expect_rc 4 "$TPUCTL" ssh st --ssh-key-file "$KEY" </dev/null
assert_grep "is STOPPED: start it" "$T/err"
no_patch st

# Preempted: it cannot be started; delete and recreate.  (The node cache
# still holds it READY from the create, a hint only: the key goes in, the
# workers refuse, the node is read again and its state named.)
expect_rc 0 "$TPUCTL" create pre --accelerator-type v4-8 --spot
"$EMULATOR" event --state-dir "$EMU_DIR" preempt --node pre --zone $Z \
    >/dev/null || fail "preempt pre"
mark=$(emu_requests | wc -l)
expect_rc 4 "$TPUCTL" ssh pre --ssh-key-file "$KEY" -- true
assert_grep "^tpuctl: node 'pre' is PREEMPTED: it cannot be started again; delete it \('tpuctl delete pre'\) and create it anew$" "$T/err"

# On its way up: wait, and describe shows the state.
expect_rc 0 "$TPUCTL" start st --async
mark=$(emu_requests | wc -l)
expect_rc 4 "$TPUCTL" ssh st --ssh-key-file "$KEY" -- true
assert_grep "^tpuctl: node 'st' is STARTING, not READY: wait until it is READY \('tpuctl describe st' shows its state\)$" "$T/err"
no_patch st
