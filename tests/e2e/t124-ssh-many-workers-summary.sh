#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# tpuctl ssh on a 32-worker node (v4-256): past 16 workers the summary
# groups identical outcomes on one line (exits, signals, unreachable
# workers as ranges with the first one's message), then the count; up to
# 16 it keeps a line per worker.  --output-dir opens one file per worker
# at once: a soft RLIMIT_NOFILE too low for that is raised to the hard
# limit, and a hard limit too low is one clear error (exit 1) before any
# worker is contacted.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200
fleet_api_setup
fleet_create_node t124 v4-256 180
n=$(jq '.networkEndpoints | length' "$T/node.json")
[ "$n" -eq 32 ] || fail "want 32 workers, got $n"
full=$(jq -r .name "$T/node.json")
W='h=${HOME%/home}; w=${h##*/w}'

expect_rc 0 "$TPUCTL" ssh t124 --worker=all -- true
# (The first run propagates the key and says so first.)
[ "$(grep -v 'adding the SSH key' "$T/err")" = "$(printf '32 workers: exit 0\n32 of 32 workers succeeded')" ] ||
    fail "summary of 32 successes: $(cat "$T/err")"

expect_rc 8 "$TPUCTL" ssh t124 --worker=all \
    --command "$W"'; case $w in 17|20) exit 1;; 25) kill -KILL $$;; 3) exit 7;; esac'
[ "$(cat "$T/err")" = "$(printf '28 workers: exit 0; w17, w20: exit 1; w3: exit 7; w25: signal KILL\n28 of 32 workers succeeded\ntpuctl: 4 of 32 workers failed')" ] ||
    fail "grouped summary: $(cat "$T/err")"

# Three workers down: one range, with the first one's message.
for w in 9 10 11; do
	fleet_api POST /_emulator/events \
	    "{\"event\":\"worker-down\",\"node\":\"$full\",\"worker\":$w}" >/dev/null ||
	    fail "worker-down event failed"
done
expect_rc 8 "$TPUCTL" ssh t124 --worker=all -- true
assert_grep '^29 workers: exit 0; w9-w11: connection refused \(w9: .+\)$' "$T/err"
[ "$(wc -l <"$T/err")" -eq 3 ] || fail "want the summary, the count, the error: $(cat "$T/err")"
assert_grep '^29 of 32 workers succeeded$' "$T/err"
# 16 workers: a line each, as before.
expect_rc 0 "$TPUCTL" ssh t124 --worker=12-27 -- true
[ "$(grep -c '^worker [0-9]*: exit 0 (' "$T/err")" -eq 16 ] ||
    fail "16 workers: not one line each: $(cat "$T/err")"
for w in 9 10 11; do
	fleet_api POST /_emulator/events \
	    "{\"event\":\"worker-up\",\"node\":\"$full\",\"worker\":$w}" >/dev/null ||
	    fail "worker-up event failed"
done

# --output-dir under a soft limit of 50: 32 files + 32 sockets need more.
expect_rc 0 sh -c 'ulimit -Sn 50 && exec "$@"' sh "$TPUCTL" ssh t124 \
    --worker=all --output-dir "$T/logs" --command "$W"'; echo "out $w"'
[ "$(find "$T/logs" -name 'w*.log' | wc -l)" -eq 32 ] || fail "want 32 log files: $(ls "$T/logs")"
for w in 0 13 31; do
	[ "$(cat "$T/logs/w$w.log")" = "out $w" ] || fail "w$w.log: $(cat "$T/logs/w$w.log")"
done
# A hard limit of 100: 32 + 32 + the slack do not fit; nothing is run.
rm -rf "$T/logs"
expect_rc 1 sh -c 'ulimit -n 100 && exec "$@"' sh "$TPUCTL" ssh t124 \
    --worker=all --output-dir "$T/logs" -- touch /tmp/t124-ran
[ "$(cat "$T/err")" = "tpuctl: --output-dir for 32 workers needs 128 open files, but the limit is 100 (hard limit, ulimit -Hn): raise it or use fewer workers" ] ||
    fail "too-low limit: $(cat "$T/err")"
[ ! -e "$T/logs" ] || fail "log dir made although the limit was too low"
expect_rc 0 "$TPUCTL" ssh t124 --worker=0 -- 'test ! -e /tmp/t124-ran && echo clean'
echo ok
