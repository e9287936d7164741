#!/bin/sh
# Helpers of the interrupt tests (t088, t414: remote sleeps; t337, t340:
# a command held on four workers, then signalled; t086 uses sig_pod_key,
# t363 and t475 sig_stop): the processes of a run are found by a line
# VAR=VALUE, $SIG_ENV, in their environment (every worker runs on this
# host).  Sourced after lib.sh.

# sig_pod_key: the emulator, a v4-32 node "pod" and $KEY, a fresh client
# key that every worker of it has taken (one ssh with it).
sig_pod_key() {
	emu_start
	expect_rc 0 "$TPUCTL" create pod --accelerator-type v4-32
	KEY="$T/id_ed25519"
	ssh-keygen -q -t ed25519 -N '' -f "$KEY" >/dev/null
	expect_rc 0 "$TPUCTL" ssh pod --worker all --ssh-key-file "$KEY" -- true
}

sig_now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# sig_sleeps: pids of the "sleep" processes with $SIG_ENV in their
# environment.
sig_sleeps() {
	for p in $(pgrep -x sleep); do
		if { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null |
		    grep -qxF "$SIG_ENV"; then
			echo "$p"
		fi
	done
}

# sig_none_left WHAT SECONDS: until no sig_sleeps (at most SECONDS).
sig_none_left() {
	end=$(($(sig_now_ms) + $2 * 1000))
	while [ -n "$(sig_sleeps)" ]; do
		[ "$(sig_now_ms)" -lt $end ] ||
		    fail "$1: still running on the workers: $(sig_sleeps | tr '\n' ' ')"
		sleep 0.1
	done
}

# sig_wait_running WHAT N: until N sig_sleeps run (at most 15 s).
sig_wait_running() {
	end=$(($(sig_now_ms) + 15000))
	until [ "$(sig_sleeps | wc -l)" -ge "$2" ]; do
		[ "$(sig_now_ms)" -lt $end ] ||
		    fail "$1: the remote commands never started: $(cat "$T/err")"
		sleep 0.1
	done
}

# sig_procs: "pid args" of every process but this shell with $SIG_ENV
# in its environment.
sig_procs() {
	grep -l -F -x -z "$SIG_ENV" /proc/[0-9]*/environ 2>/dev/null |
	    sed 's|^/proc/||; s|/environ$||' | while read -r p; do
		[ "$p" = "$$" ] || ps -o pid=,args= -p "$p" 2>/dev/null || true
	done
}

# sig_interrupt SIGNAL STATUS WORD WHAT COMMAND...: with the flag file
# $SIG_DIR/slow, run COMMAND (stdout $T/out, stderr $T/err) until each
# of the 4 workers held it and left a file $SIG_DIR/at.*, then send it
# SIGNAL: it exits STATUS with "tpuctl: WORD: 0 of 4 workers finished"
# and worker 2 aborted, and no sig_procs is left (the workers' watchers:
# SIGTERM to the group, SIGKILL 5 s later).  WHAT names it in failures.
sig_interrupt() {
	sig=$1 st=$2 word=$3 what=$4
	shift 4
	: >"$SIG_DIR/slow"
	rm -f "$SIG_DIR"/at.*
	"$@" >"$T/out" 2>"$T/err" &
	pid=$!
	n=0
	while [ "$(find "$SIG_DIR" -name 'at.*' | wc -l)" -lt 4 ]; do
		n=$((n + 1))
		[ $n -lt 300 ] || fail "$what $sig: not reached on 4 workers in 60 s: $(cat "$T/out" "$T/err")"
		kill -0 $pid 2>/dev/null || fail "$what $sig: ended early: $(cat "$T/out" "$T/err")"
		sleep 0.2
	done
	[ -n "$(sig_procs)" ] || fail "$what $sig: no process of the run seen"
	kill -s "$sig" $pid
	rc=0
	wait $pid || rc=$?
	[ $rc -eq "$st" ] || fail "$what $sig: exit $rc, want $st: $(cat "$T/err")"
	assert_grep "^tpuctl: $word: 0 of 4 workers finished$" "$T/err"
	assert_grep "^worker 2: aborted: " "$T/err"
	n=0
	while [ -n "$(sig_procs)" ]; do
		n=$((n + 1))
		[ $n -lt 100 ] || fail "$what $sig: left running on the workers: $(sig_procs)"
		sleep 0.2
	done
}

# sig_stop SIG PID ERRFILE: send SIG (INT or TERM) to the background
# PID and reap it: it must exit 130 for INT, 143 for TERM.
sig_stop() {
	kill -s "$1" "$2"
	_rc=0
	wait "$2" || _rc=$?
	_want=130
	[ "$1" = INT ] || _want=143
	[ $_rc -eq $_want ] || fail "SIG$1: exit $_rc, want $_want: $(cat "$3")"
}
