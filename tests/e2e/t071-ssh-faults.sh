#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# tpuctl ssh against faulty workers (RELIABILITY.md D rows, command
# level): a worker whose sshd presents a key other than the published one
# is refused before authentication (exit 8, both fingerprints named), a
# refused worker leaves the others to finish (8), no reachable worker is
# 9, --fail-fast stops the others, and an interactive shell runs through
# a pseudo-terminal.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=300
fleet_api_setup
fleet_create_node t071 v4-32 90
full=$(jq -r .name "$T/node.json")

expect_rc 0 "$TPUCTL" ssh t071 --worker=all -- true

# Worker 1 serves a key nobody published: refused, the others run.
fleet_api POST /_emulator/events \
    "{\"event\":\"rekey\",\"node\":\"$full\",\"worker\":1}" >/dev/null ||
    fail "rekey event failed"
n=0
rc=0
# until the rekey is effective the old key is still served (exit 0);
# after, a single worker refused for its host key is exit 9 naming the
# new key's fingerprint; any other status fails at once
until [ $rc -eq 9 ] && grep -q 'SHA256:' "$T/err"; do
	rc=0
	"$TPUCTL" ssh t071 --worker=1 -- true >"$T/out" 2>"$T/err" || rc=$?
	# (9 without a fingerprint: its sshd restarting with the new key)
	[ $rc -eq 0 ] || [ $rc -eq 9 ] ||
	    fail "worker 1 after rekey: exit $rc, want 9: $(cat "$T/err")"
	n=$((n + 1))
	if [ $n -ge 100 ] && [ $rc -eq 0 ]; then
		fail "worker 1 still accepted after rekey"
	fi
	[ $n -lt 100 ] ||
	    fail "worker 1 after rekey: no host key refusal: $(cat "$T/err")"
	sleep 0.2
done
# RELIABILITY.md D2/S2: the key is checked before userauth: worker 1's
# sshd (LogLevel VERBOSE) logs the connection and no authentication
# attempt of it (the pattern does match the earlier, accepted logins).
log1=$(echo "$EMU_DIR"/fleet/n*/w1/sshd.log)
[ -f "$log1" ] || fail "no sshd log of worker 1: $log1"
authpat='Accepted|Failed|Postponed|userauth|Invalid user|Authentication refused'
grep -Eq "$authpat" "$log1" || fail "worker 1's sshd logged no login at all"
mark=$(wc -l <"$log1")
expect_rc 8 "$TPUCTL" ssh t071 --worker=all -- echo hi
assert_grep '^worker 1: host key' "$T/err"
tail -n +$((mark + 1)) "$log1" >"$T/w1log"
assert_grep 'Connection from' "$T/w1log"
assert_no_grep "$authpat" "$T/w1log"
assert_no_grep '^\[w1\]' "$T/out"
[ "$(grep -c '^\[w[023]\] hi$' "$T/out")" -eq 3 ] ||
    fail "the other workers did not run: $(cat "$T/out")"

# Worker 0 down as well: workers 2 and 3 still finish.
fleet_api POST /_emulator/events \
    "{\"event\":\"worker-down\",\"node\":\"$full\",\"worker\":0}" >/dev/null ||
    fail "worker-down event failed"
expect_rc 8 "$TPUCTL" ssh t071 --worker=all -- echo hi
assert_grep '^worker 0: ' "$T/err"
assert_grep '^worker 2: exit 0' "$T/err"
# None of the selected workers reachable: 9.
expect_rc 9 "$TPUCTL" ssh t071 --worker=0,1 -- true

# A worker's number comes from its HOME (.../wI/home): like a TPU VM's,
# the login has no TPU_WORKER_ID.
# --fail-fast: worker 2 fails at once, worker 3 is stopped long before
# its sleep ends.
start=$(date +%s)
expect_rc 8 "$TPUCTL" ssh t071 --worker=2,3 --fail-fast \
    --command 'h=${HOME%/home}; w=${h##*/w}; if [ "$w" = 2 ]; then exit 4; fi; sleep 30'
[ $(($(date +%s) - start)) -lt 20 ] || fail "--fail-fast did not stop worker 3"
assert_grep '^worker 2: exit 4' "$T/err"
assert_no_grep '^worker 3: exit 0' "$T/err"

# An interactive shell through a pty.
if have_tool script bsdutils "the interactive shell through a pty"; then
	printf 'echo pty-$((6*7)); tty; exit 5\n' |
	    script -qec "$TPUCTL ssh t071 --worker=3" /dev/null >"$T/out" 2>&1 &&
	    rc=0 || rc=$?
	[ "$rc" -eq 5 ] || fail "shell exit $rc: $(cat "$T/out")"
	assert_grep 'pty-42' "$T/out"
	assert_grep '/dev/pts/' "$T/out"
fi

# SIGINT while commands run: 130, the remote sleeps are not waited for.
"$TPUCTL" ssh t071 --worker=2,3 -- sleep 30 >"$T/out" 2>"$T/err" &
pid=$!
sleep 2
kill -INT "$pid"
start=$(date +%s)
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 130 ] || fail "SIGINT gave $rc: $(cat "$T/err")"
[ $(($(date +%s) - start)) -lt 10 ] || fail "SIGINT took too long"
