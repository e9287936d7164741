#!/bin/sh
# shellcheck disable=SC2016,SC2086 # remote shells expand these; $S is two words
# Issue 20 "Standard input" with issue 19's cleanup: while stdin is being
# forwarded (its EOF not sent yet, so the watcher cannot use the
# channel's stdin), SIGINT of tpuctl exits 130 and a client killed with
# -9 drops its connections: in both cases the remote command's process
# group is stopped and nothing of it keeps running; with --stdin on
# several workers too.  A normal end after EOF leaves the background
# alone.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

expect_rc 0 "$TPUCTL" create pod --accelerator-type v4-32
KEY="$T/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$KEY" >/dev/null
S="--ssh-key-file $KEY"
expect_rc 0 "$TPUCTL" ssh pod --worker all $S -- true

MARK="t414-$$"
# pids of the remote "sleep" processes started with MARK in their env
left() {
	for p in $(pgrep -x sleep); do
		if { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null |
		    grep -qx "T414_MARK=$MARK"; then
			echo "$p"
		fi
	done
}
now_ms() {
	echo $(($(date +%s%N) / 1000000))
}
none_left() {
	end=$(($(now_ms) + $2 * 1000))
	while [ -n "$(left)" ]; do
		[ "$(now_ms)" -lt $end ] ||
		    fail "$1: still running on the workers: $(left | tr '\n' ' ')"
		sleep 0.1
	done
}
wait_running() {
	end=$(($(now_ms) + 15000))
	until [ "$(left | wc -l)" -ge "$2" ]; do
		[ "$(now_ms)" -lt $end ] ||
		    fail "$1: the remote commands never started: $(cat "$T/err")"
		sleep 0.1
	done
}
# the remote command reads a line of stdin, then sleeps; stdin stays
# open (a FIFO held by this shell) so that EOF is never sent
JOB="export T414_MARK=$MARK; read -r x; sleep 7.77"
mkfifo "$T/fifo"
exec 7<>"$T/fifo"

# SIGINT: 130, nothing left (one worker: stdin forwarded by default)
"$TPUCTL" ssh pod $S --worker 1 --command "$JOB" <"$T/fifo" >"$T/out" 2>"$T/err" &
pid=$!
echo line >&7
wait_running "SIGINT" 1
kill -INT $pid
rc=0
wait $pid || rc=$?
[ $rc -eq 130 ] || fail "SIGINT: exit $rc: $(cat "$T/err")"
none_left "SIGINT" 4

# --stdin on four workers, then the client killed with -9
"$TPUCTL" ssh pod $S --worker all --stdin --command "$JOB" <"$T/fifo" >"$T/out" 2>"$T/err" &
pid=$!
printf 'line\nline\nline\nline\n' >&7
wait_running "kill -9" 4
kill -9 $pid
wait $pid 2>/dev/null || true
none_left "kill -9" 4
exec 7>&-

# a normal end with stdin forwarded: the background process stays
printf 'go\n' >"$T/go"
expect_rc 0 "$TPUCTL" ssh pod $S --worker 2 \
    --command "read -r x; export T414_MARK=$MARK; sleep 7.77 >/dev/null 2>&1 & echo \$x" <"$T/go"
assert_grep '^\[w2\] go$' "$T/out"
sleep 2
[ "$(left | wc -l)" -eq 1 ] || fail "a normal end killed its background process"
kill "$(left)"
none_left "cleanup" 3
