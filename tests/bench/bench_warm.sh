#!/bin/sh
# Benchmark of the warm pool (issue 18): `tpuctl ssh NODE --worker=all
# -- true` cold (--persist no) against warm (--persist 10m, the holder
# already keeping the sessions) on an emulator node of 64 workers
# (v4-512; real sshd workers on loopback).  Each row is the median wall
# time of 5 runs; the first warm run (which starts the holder) is not
# timed.  Target of issue 18: warm <= 0.1x cold (PASS or MISS printed).
# A floor row for the warm runs, from the same runs: the CPU time of the
# emulator's sshd processes (each warm command is still one exec, a fork
# and a shell, per worker), of the orphans the emulator reaped (the
# watcher every remote command starts, forked twice so that it is no
# child of the shell), of the holder and of the client, divided by the
# cores: what no client-side change can go under.
#   WARM_BENCH_CHIPS=512   v4 chips of the node (4 a worker: 64 workers;
#                          2048: 256 workers)
# Nothing leaves loopback.  Fails only when it cannot run.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${TPUCTL_BIN_DIR:-$top/bin}
chips=${WARM_BENCH_CHIPS:-512}
T=$(mktemp -d /tmp/bench_warm.XXXXXX)
# shellcheck source=tests/bench/lib_time.sh
. "$top/tests/bench/lib_time.sh"
# shellcheck source=tests/bench/lib_emu.sh
. "$top/tests/bench/lib_emu.sh"
emu_pid=
cleanup() {
	"$BIN/tpuctl" ssh-pool stop >/dev/null 2>&1 || true
	[ -z "$emu_pid" ] || kill "$emu_pid" 2>/dev/null || true
	[ -z "$emu_pid" ] || wait "$emu_pid" 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

export HOME="$T/home" XDG_CONFIG_HOME="$T/home/.config" \
    XDG_CACHE_HOME="$T/home/.cache" XDG_RUNTIME_DIR="$T/run"
mkdir -p "$HOME/.ssh"
mkdir -m 700 "$XDG_RUNTIME_DIR"
chmod 700 "$HOME" "$HOME/.ssh"
bench_emu_start

node=bench-warm
"$BIN/tpuctl" create "$node" --accelerator-type "v4-$chips" \
    --version tpu-ubuntu2204-base --quiet >"$T/create.out" 2>&1 || {
	echo "create v4-$chips failed: $(tail -2 "$T/create.out")" >&2
	exit 1
}
# the key propagated, the node cached: both rows pay only the command
"$BIN/tpuctl" ssh "$node" --worker=all --persist no -- true \
    >/dev/null 2>"$T/err" || {
	echo "first run failed: $(tail -2 "$T/err")" >&2
	exit 1
}
# the closing summary: 'N of N workers succeeded'
hosts=$(sed -n 's/^\([0-9]*\) of [0-9]* workers succeeded$/\1/p' "$T/err")

# median5 PERSIST: the median wall time (s) of 5 runs; each run's
# client CPU (s) appended to $T/cpu
median5() {
	for _ in 1 2 3 4 5; do
		bench_time "$T/time" "$BIN/tpuctl" ssh \
		    "$node" --worker=all --persist "$1" -- true >/dev/null \
		    2>"$T/err" || {
			echo "run (--persist $1) failed: $(tail -2 "$T/err")" >&2
			exit 1
		}
		awk '{ print $2 + $3 }' "$T/time" >>"$T/cpu"
		cut -d' ' -f1 "$T/time"
	done | bench_median 5
}

# the emulator's descendants (its sshd workers and their sessions)
desc() {
	for c in $(pgrep -P "$1"); do
		echo "$c"
		desc "$c"
	done
}

cold=$(median5 no)
"$BIN/tpuctl" ssh "$node" --worker=all --persist 10m -- true >/dev/null 2>&1
holder=$("$BIN/tpuctl" ssh-pool list | awk 'NR > 1 { print $3 }')
# shellcheck disable=SC2046 # one pid a word
s0=$(bench_ticks $(desc "$emu_pid"))
o0=$(bench_reaped "$emu_pid")
h0=$(bench_ticks "$holder")
: >"$T/cpu"
warm=$(median5 10m)
# shellcheck disable=SC2046
s1=$(bench_ticks $(desc "$emu_pid"))
o1=$(bench_reaped "$emu_pid")
h1=$(bench_ticks "$holder")
printf 'workers %d, load %s\n' "$hosts" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s wall %6.3f s (median of 5)\n' cold "$cold" warm "$warm"
awk -v c="$cold" -v w="$warm" 'BEGIN {
	r = c > 0 ? w / c : 0
	printf "  target: warm <= 0.1x cold (%.3fx): %s\n", r,
	    r <= 0.1 ? "PASS" : "MISS" }'
awk -v s=$((s1 - s0)) -v o=$((o1 - o0)) -v h=$((h1 - h0)) \
    -v hz="$(getconf CLK_TCK)" -v cores="$(nproc)" -v n="$hosts" -v w="$warm" '
	{ c += $1 }
	END {
		s = s / hz / 5; o = o / hz / 5; h = h / hz / 5; c = c / 5
		f = (s + o + h + c) / cores
		printf "warm floor %6.3f s: sshd %.1f ms CPU/worker, watchers " \
		    "%.1f ms/worker, holder %.1f ms, client %.1f ms, %d cores " \
		    "(warm %.2fx floor)\n", f, s * 1000 / n, o * 1000 / n,
		    h * 1000, c * 1000, cores, (f > 0 ? w / f : 0) }' "$T/cpu"
