#!/bin/sh
# The warm pool and the client's identity (issue 18): a command with
# another key file, with the same key file holding another key, or with
# another connect timeout does not run on the sessions the holder
# authenticated with the old ones: the holder says so and exits, the
# command runs cold (same output), and the next command of the new
# identity starts a holder of its own.  The same identity keeps the
# same holder.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

# shellcheck source=tests/e2e/lib_warm.sh
. "$(dirname "$0")/lib_warm.sh"

emu_start
fleet_api_setup
fleet_create_node t094 v4-16 90

# warm ARGS...: a --persist command through a holder: prints its pid
warm() {
	expect_rc 0 "$TPUCTL" -vv ssh t094 --persist 30s --worker=all "$@" \
	    -- echo hi
	[ "$(grep -c '^\[w[01]\] hi$' "$T/out")" -eq 2 ] ||
	    fail "not every worker ran: $(cat "$T/out")"
}

ssh-keygen -q -t ed25519 -N '' -C t094b -f "$T/key_b"
# the keys propagated (untimed); the first holder (default key)
expect_rc 0 "$TPUCTL" ssh t094 --persist no --worker=all -- true
expect_rc 0 "$TPUCTL" ssh t094 --persist no --worker=all \
    --ssh-key-file "$T/key_b" -- true
warm
pid1=$(holder_pid t094)
[ -n "$pid1" ] || fail "no holder: $(cat "$T/list")"
warm
assert_grep "through connection holder $pid1\$" "$T/err"

# another key file: not through the holder of the default key, which
# exits; the next command of key_b gets a holder of its own
warm --ssh-key-file "$T/key_b"
assert_no_grep 'through connection holder' "$T/err"
wait_gone "$pid1" "the holder of the old identity"
warm --ssh-key-file "$T/key_b"
pid2=$(holder_pid t094)
if [ -z "$pid2" ] || [ "$pid2" = "$pid1" ]; then
	fail "no new holder for key_b: $(cat "$T/list")"
fi
warm --ssh-key-file "$T/key_b"
assert_grep "through connection holder $pid2\$" "$T/err"

# another connect timeout: the same
warm --ssh-key-file "$T/key_b" --connect-timeout 7
assert_no_grep 'through connection holder' "$T/err"
wait_gone "$pid2" "the holder of the old identity"

# the same path, another key in it: the same
warm --ssh-key-file "$T/key_b"
pid3=$(holder_pid t094)
[ -n "$pid3" ] || fail "no holder: $(cat "$T/list")"
rm -f "$T/key_b" "$T/key_b.pub"
ssh-keygen -q -t ed25519 -N '' -C t094c -f "$T/key_b"
expect_rc 0 "$TPUCTL" ssh t094 --persist no --worker=all \
    --ssh-key-file "$T/key_b" -- true
warm --ssh-key-file "$T/key_b"
assert_no_grep 'through connection holder' "$T/err"
wait_gone "$pid3" "the holder of the old identity"
