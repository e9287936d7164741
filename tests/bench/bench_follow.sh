#!/bin/sh
# Benchmark of following a job (`tpuctl logs JOB --follow`, the code
# run's follow shares) on an emulator node of 64 workers (real sshd
# workers on loopback): the processes the follow keeps running on the
# workers (everything under the workers' sshd sessions; the fan-out's
# watcher, reparented, is not counted), and the wall time of a follow
# of a running job (2 s left) to its end, and of one that has ended
# (the logs fetched, 1000 lines a worker).
#   FOLLOW_BENCH_WORKERS=64
#   RUN_BENCH_BEFORE=DIR   also the tpuctl in DIR (an older build), in
#                          the same run, rows labelled "before"
# Nothing leaves loopback.  Numbers only: fails only when it cannot run.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${TPUCTL_BIN_DIR:-$top/bin}
BEFORE=${RUN_BENCH_BEFORE:-}
hosts=${FOLLOW_BENCH_WORKERS:-64}
T=$(mktemp -d /tmp/bench_follow.XXXXXX)
emu_pid=
cleanup() {
	[ -z "$emu_pid" ] || kill "$emu_pid" 2>/dev/null || true
	[ -z "$emu_pid" ] || wait "$emu_pid" 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

export HOME="$T/home" XDG_CONFIG_HOME="$T/home/.config" \
    XDG_CACHE_HOME="$T/home/.cache" XDG_STATE_HOME="$T/home/.local/state"
mkdir -p "$HOME/.ssh"
chmod 700 "$HOME" "$HOME/.ssh"
# shellcheck source=tests/bench/lib_emu.sh
. "$top/tests/bench/lib_emu.sh"
# shellcheck source=tests/bench/lib_time.sh
. "$top/tests/bench/lib_time.sh"
bench_emu_start

# remote_procs: processes under the workers' sshd sessions now
remote_procs() {
	ps -eo pid=,ppid=,args= | awk '
	    { pp[$1] = $2; a = $0; sub(/^ *[0-9]+ +[0-9]+ +/, "", a); args[$1] = a }
	    END { for (p in pp) if (args[p] ~ /^sshd: .*@notty/) s[p] = 1
	        n = 0
	        for (p in pp) { q = pp[p]; d = 0
	            while (q in pp && q > 1) { if (q in s) { d = 1; break }; q = pp[q] }
	            n += d }
	        print n }'
}

node=f$hosts
"$BIN/tpuctl" create "$node" --accelerator-type "v4-$((hosts * 8))" \
    --version tpu-ubuntu2204-base --quiet >"$T/create.out" 2>&1 || {
	echo "create failed: $(tail -2 "$T/create.out")" >&2
	exit 1
}
"$BIN/tpuctl" ssh "$node" --worker=all -- true >/dev/null 2>"$T/err" || {
	echo "warm-up failed: $(tail -2 "$T/err")" >&2
	exit 1
}
echo "-- $hosts workers"
k=0
for lb in "" ${BEFORE:+"before: "}; do
	tb=$BIN
	[ -z "$lb" ] || tb=$BEFORE
	k=$((k + 1))
	j=fb$k
	"$tb/tpuctl" run --detach --name "$j" "$node" --command \
	    'seq 1 1000; sleep 4; echo end; echo e >&2' >/dev/null 2>&1
	base=$(remote_procs)
	t0=$(bench_now)
	"$tb/tpuctl" logs --follow "$j" >/dev/null 2>&1 &
	fp=$!
	sleep 1.5
	n=$(($(remote_procs) - base))
	wait "$fp" || true
	echo "${lb}remote processes while following: $n ($(awk -v n="$n" -v h="$hosts" 'BEGIN { printf "%.1f", n / h }') per worker)"
	echo "${lb}logs --follow of a running job to its end: $(bench_since "$t0") s"
	t0=$(bench_now)
	rm -rf "$XDG_STATE_HOME/tpuctl/jobs/$j"/s*-w*
	"$tb/tpuctl" logs --follow "$j" >/dev/null 2>&1 || true
	echo "${lb}logs --follow of an ended job (1000 lines a worker): $(bench_since "$t0") s"
done
