#!/bin/sh
# Two commands at once and the warm pool (issue 18, W6): started
# together with no holder running, both succeed and leave one holder
# (the loser of the lock exits); a command started while another one
# runs through the holder is served at the same time (it opens its own
# sessions to the workers the first one holds) and ends first; the
# holder then keeps one session per worker.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

# shellcheck source=tests/e2e/lib_warm.sh
. "$(dirname "$0")/lib_warm.sh"

emu_start
fleet_api_setup
fleet_create_node t092 v4-32 90
# the key propagated first: its progress line is no part of a command's
expect_rc 0 "$TPUCTL" ssh t092 --persist no --worker=all -- true

# started at once, no holder yet
"$TPUCTL" ssh t092 --persist 60s --worker=all -- echo one \
    >"$T/o1" 2>"$T/e1" &
b1=$!
"$TPUCTL" ssh t092 --persist 60s --worker=all -- echo two \
    >"$T/o2" 2>"$T/e2" &
b2=$!
rc1=0
wait "$b1" || rc1=$?
rc2=0
wait "$b2" || rc2=$?
[ $rc1 -eq 0 ] || fail "first of two: exit $rc1: $(cat "$T/e1")"
[ $rc2 -eq 0 ] || fail "second of two: exit $rc2: $(cat "$T/e2")"
[ "$(grep -c '^\[w[0-3]\] one$' "$T/o1")" -eq 4 ] ||
    fail "first of two: $(cat "$T/o1")"
[ "$(grep -c '^\[w[0-3]\] two$' "$T/o2")" -eq 4 ] ||
    fail "second of two: $(cat "$T/o2")"
expect_rc 0 "$TPUCTL" ssh-pool list
[ "$(grep -c '/t092 ' "$T/out")" -eq 1 ] ||
    fail "not one holder: $(cat "$T/out")"
pid=$(awk '$1 ~ /\/t092$/ { print $3 }' "$T/out")
[ "$(find "$XDG_RUNTIME_DIR/tpuctl" -name "*.sock" | wc -l)" -eq 1 ] ||
    fail "sockets: $(ls "$XDG_RUNTIME_DIR"/tpuctl)"

# one long command through the holder, another started meanwhile
"$TPUCTL" ssh t092 --persist 60s --worker=all -- 'sleep 5; echo slow' \
    >"$T/o1" 2>"$T/e1" &
b1=$!
sleep 1
expect_rc 0 "$TPUCTL" --verbosity debug ssh t092 --persist 60s \
    --worker=all -- echo fast
kill -0 "$b1" 2>/dev/null ||
    fail "the second command ended after the first: served one at a time"
[ "$(grep -c '^\[w[0-3]\] fast$' "$T/out")" -eq 4 ] ||
    fail "second command: $(cat "$T/out")"
assert_grep "through connection holder $pid\$" "$T/err"
rc1=0
wait "$b1" || rc1=$?
[ $rc1 -eq 0 ] || fail "long command: exit $rc1: $(cat "$T/e1")"
[ "$(grep -c '^\[w[0-3]\] slow$' "$T/o1")" -eq 4 ] ||
    fail "long command: $(cat "$T/o1")"
# one session per worker kept, the same holder
expect_rc 0 "$TPUCTL" ssh-pool list
assert_grep "/t092 +[^ ]+ +$pid +4 " "$T/out"
expect_rc 0 "$TPUCTL" --verbosity debug ssh t092 --persist 60s \
    --worker=all -- true
assert_grep "through connection holder $pid\$" "$T/err"
