#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# tpuctl ssh when the remote command misbehaves (RELIABILITY.md D7, D8,
# D9, D11, D12, D13): a command killed by a signal on one of several
# workers, the sshd session process killed mid-command, --timeout on a
# command that never ends, 200 MB of binary output without a trailing
# newline (bounded memory, last partial line flushed with its prefix),
# --fanout 2 with a failure in the first batch, and Ctrl-C during a
# fan-out.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start
fleet_api_setup
fleet_create_node t078 v4-32 90
expect_rc 0 "$TPUCTL" ssh t078 --worker=all -- true

# A worker's number comes from its HOME (.../wI/home): like a TPU VM's,
# the login has no TPU_WORKER_ID.
# D7: worker 2 kills its own shell with SIGKILL; the others finish.
expect_rc 8 "$TPUCTL" ssh t078 --worker=all \
    --command 'h=${HOME%/home}; w=${h##*/w}; if [ "$w" = 2 ]; then kill -KILL $$; fi; echo ok'
assert_grep '^worker 2: .*(signal|killed by) (SIG)?KILL' "$T/err"
assert_no_grep '^worker 2: exit 0' "$T/err"
[ "$(grep -c '^\[w[013]\] ok$' "$T/out")" -eq 3 ] ||
    fail "D7: the other workers did not finish: $(cat "$T/out")"

# D8: the sshd process serving worker 1's session dies mid-command: that
# worker fails without a hang, tpuctl is not killed by SIGPIPE.
start=$(date +%s)
expect_rc 8 "$TPUCTL" ssh t078 --worker=0,1 \
    --command 'h=${HOME%/home}; w=${h##*/w}; if [ "$w" = 1 ]; then kill -KILL $PPID; sleep 5; fi; echo done'
[ $(($(date +%s) - start)) -lt 30 ] || fail "D8: took too long"
assert_grep '^\[w0\] done$' "$T/out"
assert_no_grep '^\[w1\] done$' "$T/out"
assert_grep '^worker 1: ' "$T/err"
assert_no_grep '^worker 1: exit 0' "$T/err"
expect_rc 0 "$TPUCTL" ssh t078 --worker=1 -- true

# D9: --timeout closes a command that runs too long; the worker is marked
# timed out, the others are not waited for beyond the limit.
start=$(date +%s)
expect_rc 8 "$TPUCTL" ssh t078 --worker=all --timeout 2s \
    --command 'h=${HOME%/home}; w=${h##*/w}; if [ "$w" = 3 ]; then sleep 60; fi; echo quick'
[ $(($(date +%s) - start)) -lt 20 ] || fail "D9: --timeout not applied"
assert_grep '^worker 3: .*tim' "$T/err"
[ "$(grep -c '^\[w[012]\] quick$' "$T/out")" -eq 3 ] ||
    fail "D9: the quick workers: $(cat "$T/out")"
set +e
"$TPUCTL" ssh t078 --worker=3 --timeout 1s -- sleep 60 >"$T/out" 2>"$T/err"
rc=$?
set -e
# one worker, and it timed out: the command's status is the timeout's
[ "$rc" -eq 124 ] || fail "D9: a single timed-out worker exited $rc, want 124"

# D11: 200 MB of binary output with no trailing newline on two workers:
# every byte arrives (raw), memory stays bounded, and in prefix mode the
# last partial line is flushed with its prefix.
if have_tool /usr/bin/time time "D11 (peak RSS)"; then
	/usr/bin/time -f '%M' -o "$T/rss" "$TPUCTL" ssh t078 --worker=0,1 \
	    --output raw --command 'head -c 100000000 /dev/zero | tr "\0" x' \
	    >"$T/big" 2>"$T/err" || fail "D11: $(cat "$T/err")"
	[ "$(wc -c <"$T/big")" -eq 200000000 ] ||
	    fail "D11: got $(wc -c <"$T/big") bytes, want 200000000"
	rss=$(tail -1 "$T/rss")
	# AddressSanitizer's quarantine keeps freed memory: the bound holds
	# for the plain build only.
	if ! ldd "$TPUCTL" 2>/dev/null | grep -q libasan; then
		[ "$rss" -lt 65536 ] ||
		    fail "D11: peak RSS ${rss} KiB for 200 MB of output"
	fi
	rm -f "$T/big"
fi
expect_rc 0 "$TPUCTL" ssh t078 --worker=2 --output raw \
    --command 'printf "a\nlast-no-newline"'
[ "$(od -An -c "$T/out" | tr -d ' \n')" = 'a\nlast-no-newline' ] ||
    fail "D11: raw output changed: $(od -c "$T/out" | head)"
expect_rc 0 "$TPUCTL" ssh t078 --worker=2,3 --command 'printf "a\nlast-no-newline"'
[ "$(grep -c '^\[w[23]\] last-no-newline$' "$T/out")" -eq 2 ] ||
    fail "D11: partial last line: $(od -c "$T/out" | head)"
expect_rc 0 "$TPUCTL" ssh t078 --worker=2,3 \
    --command 'head -c 300000 /dev/urandom'
[ "$(grep -c '^\[w[23]\]' "$T/out")" -ge 2 ] || fail "D11: binary output lost"

# D12: --fanout 2, worker 0 fails in the first batch: tpuctl goes on with
# the second batch and reports every worker.
expect_rc 8 "$TPUCTL" ssh t078 --worker=all --fanout 2 \
    --command 'h=${HOME%/home}; w=${h##*/w}; if [ "$w" = 0 ]; then exit 7; fi; echo ran'
assert_grep '^worker 0: exit 7' "$T/err"
for w in 1 2 3; do
	assert_grep "^worker $w: exit 0" "$T/err"
	assert_grep "^\[w$w\] ran$" "$T/out"
done
assert_grep '^3 of 4 workers succeeded' "$T/err"

# D13: Ctrl-C during a fan-out: workers 0 and 1 have finished, 2 and 3
# are still running; 130, and the summary says which is which.
"$TPUCTL" ssh t078 --worker=all \
    --command 'h=${HOME%/home}; w=${h##*/w}; case $w in [01]) echo fast ;; *) sleep 60 ;; esac' \
    >"$T/out" 2>"$T/err" &
pid=$!
wait_for_grep -c 2 "$T/out" '^\[w[01]\] fast$' "" 30
sleep 0.5
kill -INT "$pid"
start=$(date +%s)
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 130 ] || fail "D13: SIGINT gave $rc: $(cat "$T/err")"
[ $(($(date +%s) - start)) -lt 10 ] || fail "D13: SIGINT took too long"
assert_grep '^worker 0: exit 0' "$T/err"
assert_grep '^worker 1: exit 0' "$T/err"
assert_grep '^worker 2: .*(interrupt|cancel|not finished|stopped)' "$T/err"
assert_grep '^worker 3: .*(interrupt|cancel|not finished|stopped)' "$T/err"
assert_no_grep '^worker [23]: .*worker' "$T/err"
