#!/bin/sh
# Shared setup of the warm-pool tests (issue 18): a private runtime
# directory for the connection holders, a cleanup that stops them before
# lib.sh's cleanup (a holder SIGSTOPped by the test, in $pool_stopped, is
# continued first), the holder's pid from ssh-pool list, and the
# cold-vs-warm comparison of a command.  Source after lib.sh and
# lib_fleet.sh.

XDG_RUNTIME_DIR=$T/run
export XDG_RUNTIME_DIR
mkdir -m 700 "$XDG_RUNTIME_DIR"
pool_stopped=
# the holders go with the test (they would exit after --persist anyway)
pool_cleanup() {
	st=$?
	[ -z "$pool_stopped" ] || kill -CONT "$pool_stopped" 2>/dev/null || true
	"$TPUCTL" ssh-pool stop >/dev/null 2>&1 || true
	(exit "$st")
	cleanup
}
trap pool_cleanup EXIT

# holder_pid NODE: the pid of NODE's holder (ssh-pool list in $T/list)
holder_pid() {
	"$TPUCTL" ssh-pool list >"$T/list" 2>&1 || fail "ssh-pool list failed"
	awk -v n="/$1" 'substr($1, length($1) - length(n) + 1) == n { print $3 }' \
	    "$T/list"
}

# gone PID: no such process, or a zombie not yet reaped by init
gone() {
	s=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || s=
	[ -z "$s" ] || [ "$s" = Z ]
}

# wait_gone PID WHAT: PID exits within 5 s, else fail naming WHAT
wait_gone() {
	n=0
	until gone "$1"; do
		n=$((n + 1))
		[ $n -lt 50 ] || fail "$2 $1 was not ended"
		sleep 0.1
	done
}

# The summary's durations differ from run to run, and so does the
# interleaving of lines of different workers (between two cold runs
# too): compare each file's lines sorted, the durations taken out.
warm_norm() {
	sed 's/ ([0-9.]* s)$//' "$1" | LC_ALL=C sort
}

# warm_snap NAME: the last command's $T/out and $T/err, normalized, as
# $T/NAME.out and $T/NAME.err
warm_snap() {
	warm_norm "$T/out" >"$T/$1.out"
	warm_norm "$T/err" >"$T/$1.err"
}

# warm_cmp A B: snapshots A and B hold the same stdout and stderr
warm_cmp() {
	cmp "$T/$2.out" "$T/$1.out" ||
	    fail "$2 stdout differs from $1: $(diff "$T/$1.out" "$T/$2.out")"
	cmp "$T/$2.err" "$T/$1.err" ||
	    fail "$2 stderr differs from $1: $(diff "$T/$1.err" "$T/$2.err")"
}

# warm_same RC NODE ARGS...: ssh NODE ARGS cold, then warm (--persist
# 30s): both exit RC with the same stdout and stderr
warm_same() {
	want=$1
	node=$2
	shift 2
	expect_rc "$want" "$TPUCTL" ssh "$node" --persist no "$@"
	warm_snap cold
	expect_rc "$want" "$TPUCTL" ssh "$node" --persist 30s "$@"
	warm_snap warm
	warm_cmp cold warm
}
