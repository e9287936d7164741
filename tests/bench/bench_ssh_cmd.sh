#!/bin/sh
# Benchmark of the command: `tpuctl ssh NODE --worker=all -- true` on
# emulator nodes of 16, 64 and 256 workers (v4-128, v4-512, v4-2048; real
# sshd workers on loopback; past 512 workers v5p in us-east5-a, whose
# sizes are 8 TensorCores per host too: 2240 is v5p-17920, the largest;
# 2048 hosts is no v5p size), against pdsh -R ssh and parallel-ssh, each
# twice: with OpenSSH's default key exchange (sntrup761x25519 on 9.x)
# and with -o KexAlgorithms=curve25519-sha256 (the one libssh2, hence
# tpuctl, uses), and xargs -P N ssh (curve25519); same key, same
# concurrency.  Every row is the median (by wall time) of 3 runs and
# prints wall time, client CPU per host and peak RSS (/usr/bin/time).
# The floor row is what the CPU allows, from the same tpuctl runs: the
# sshd side's CPU time (the workers' listener sshds, which reap every
# per-connection sshd and its session, read from /proc before and after)
# plus tpuctl's own client CPU, divided by the cores (nproc).
# tpuctl's time includes reading the node (cache) and the guest
# attributes, as a user sees it; the key is propagated before timing.
#   SSH_CMD_BENCH_SIZES="16 64 256"   worker counts
#   SSH_CMD_BENCH_RUNS=3              runs per row (the median is shown)
# At 64 workers and more each target is printed with PASS or MISS:
# tpuctl at least 3x faster than pdsh and than parallel-ssh with their
# default key exchange (issue 6), faster than them with curve25519 and
# than the xargs row, within 1.15x of the floor (issue 18), client CPU
# under 2 ms per host, and (at 256) peak memory under 64 MiB.
# The warm pool (issue 18): tpuctl-warm is the same command through the
# node's connection holder (--persist 10m, the holder started and its
# sessions open before timing), against the tpuctl row (cold: ssh/persist
# no); target warm <= 0.1x cold.  jobs-warm: `tpuctl jobs NODE` on a
# running detached job (its state asked from every worker) through the
# holder; target under 100 ms at 256 workers and more.  With
# SSH_CMD_BENCH_BEFORE=DIR (the bin/ of another build, e.g. main in a
# scratch clone), jobs-warm-before is the same row in the same run
# through that build's own holder (before the held shells of
# SSHPOOL_F_SHELL: one exec channel per worker and command).  Its OpenSSH
# peer: xargs-ssh-cm, xargs -P N ssh through one ControlMaster per
# worker (ControlPersist, curve25519; the masters opened untimed).
# Nothing leaves loopback.  Numbers only: fails only when it cannot run
# (a MISS is reported, not an error: machines differ).
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${TPUCTL_BIN_DIR:-$top/bin}
sizes=${SSH_CMD_BENCH_SIZES:-16 64 256}
before_bin=${SSH_CMD_BENCH_BEFORE:-}
runs=${SSH_CMD_BENCH_RUNS:-3}
cores=$(nproc)
tck=$(getconf CLK_TCK)
T=$(mktemp -d /tmp/bench_ssh_cmd.XXXXXX)
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
    XDG_CACHE_HOME="$T/home/.cache" XDG_STATE_HOME="$T/home/.local/state" \
    XDG_RUNTIME_DIR="$T/run"
mkdir -p "$HOME/.ssh"
mkdir -m 700 "$XDG_RUNTIME_DIR"
chmod 700 "$HOME" "$HOME/.ssh"
bench_emu_start
zone0=${CLOUDSDK_COMPUTE_ZONE:-}
KEY=$HOME/.ssh/google_compute_engine
have() { command -v "$1" >/dev/null 2>&1; }

# sshd_ticks: CPU clock ticks of the workers' listener sshds and of all
# they reaped (utime + stime + cutime + cstime).
sshd_ticks() {
	# shellcheck disable=SC2046 # one pid a word
	bench_ticks $(cat "$T"/emu/fleet/n*/w*/sshd.pid 2>/dev/null)
}

# measure1 NAME CMD...: one run; "wall cpu/host KiB sshd-s" appended to
# $T/runs.NAME (sshd-s: the sshd side's CPU seconds during the run).
measure1() {
	name=$1
	shift
	before=$(sshd_ticks)
	if ! bench_time "$T/time" "$@" >"$T/out" 2>"$T/err"; then
		echo "failed: $(tail -1 "$T/err")" >"$T/fail.$name"
		return 0
	fi
	# The per-connection sshds are reaped just after the client ends.
	sleep 1
	after=$(sshd_ticks)
	read -r wall usr sys rss <"$T/time"
	awk -v w="$wall" -v u="$usr" -v s="$sys" -v r="$rss" -v h="$hosts" \
	    -v d="$((after - before))" -v k="$tck" \
	    'BEGIN { printf "%s %.3f %d %.3f %.3f\n", w, (u + s) * 1000 / h, r, d / k, u + s }' \
	    >>"$T/runs.$name"
}

# measure NAME CMD...: $runs runs; the median (by wall) kept in
# $T/res.NAME ("wall cpu/host KiB sshd-s client-s") and printed.
measure() {
	name=$1
	shift
	rm -f "$T/res.$name" "$T/runs.$name" "$T/fail.$name"
	r=0
	while [ $r -lt "$runs" ]; do
		measure1 "$name" "$@"
		r=$((r + 1))
	done
	if [ -s "$T/fail.$name" ] || [ ! -s "$T/runs.$name" ]; then
		printf '%-22s %s\n' "$name" "$(cat "$T/fail.$name" 2>/dev/null)"
		return 0
	fi
	bench_median "$runs" <"$T/runs.$name" >"$T/res.$name"
	read -r wall cpu rss _ _ <"$T/res.$name"
	awk -v n="$name" -v w="$wall" -v c="$cpu" -v r="$rss" \
	    -v all="$(cut -d' ' -f1 "$T/runs.$name" | tr '\n' ' ')" \
	    'BEGIN { printf "%-22s wall %6.2f s  cpu/host %6.2f ms  peak %7d KiB  (runs: %s)\n", n, w, c, r, all }'
}

# floor: the CPU-bound floor of the tpuctl runs: per run (sshd CPU +
# client CPU) / cores; the median kept in $T/res.floor and printed with
# the sshd CPU per connection.
floor() {
	[ -s "$T/runs.tpuctl" ] || return 0
	awk -v c="$cores" -v h="$hosts" \
	    '{ printf "%.3f %.3f\n", ($4 + $5) / c, $4 * 1000 / h }' \
	    "$T/runs.tpuctl" | bench_median "$runs" >"$T/res.floor"
	read -r f per <"$T/res.floor"
	printf '%-22s wall %6.2f s  (sshd %.2f ms/connection + tpuctl client CPU, / %d cores)\n' \
	    floor "$f" "$per" "$cores"
}

# field NAME N: field N of NAME's result ("" when it did not run).
field() {
	[ -s "$T/res.$1" ] || return 0
	cut -d' ' -f"$2" "$T/res.$1"
}

# verdict TEXT OK: one target line.
verdict() {
	if [ "$2" = 1 ]; then
		printf '  target: %s: PASS\n' "$1"
	else
		printf '  target: %s: MISS\n' "$1"
		misses=$((misses + 1))
	fi
}

# faster OTHER FACTOR: tpuctl's wall at least FACTOR times below OTHER's.
faster() {
	t=$(field tpuctl 1)
	o=$(field "$1" 1)
	if [ -z "$t" ] || [ -z "$o" ]; then
		printf '  target: tpuctl %sx faster than %s: not measured\n' \
		    "$2" "$1"
		return 0
	fi
	ok=$(awk -v t="$t" -v o="$o" -v f="$2" \
	    'BEGIN { print (t * f < o) ? 1 : 0 }')
	x=$(awk -v t="$t" -v o="$o" 'BEGIN { printf "%.1f", (t > 0) ? o / t : 0 }')
	verdict "tpuctl >= ${2}x faster than $1 ($t s vs $o s: ${x}x)" "$ok"
}

# ratio A B: B's wall / A's wall ("" when one did not run).
ratio() {
	a=$(field "$1" 1)
	b=$(field "$2" 1)
	[ -n "$a" ] && [ -n "$b" ] || return 0
	awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", (a > 0) ? b / a : 0 }'
}

# targets: the goals of issues 6 and 18 for the size just measured.
targets() {
	[ "$hosts" -ge 64 ] || return 0
	faster pdsh 3
	faster parallel-ssh 3
	faster pdsh-c25519 1
	faster parallel-ssh-c25519 1
	faster xargs-ssh-c25519 1
	printf '  same-kex ratio: pdsh-c25519 / tpuctl %sx, parallel-ssh-c25519 / tpuctl %sx\n' \
	    "$(ratio tpuctl pdsh-c25519)" "$(ratio tpuctl parallel-ssh-c25519)"
	t=$(field tpuctl 1)
	f=$(field floor 1)
	if [ -n "$t" ] && [ -n "$f" ]; then
		x=$(awk -v t="$t" -v f="$f" 'BEGIN { printf "%.2f", (f > 0) ? t / f : 0 }')
		verdict "tpuctl within 1.15x of the floor ($t s vs $f s: ${x}x)" \
		    "$(awk -v x="$x" 'BEGIN { print (x <= 1.15) ? 1 : 0 }')"
	fi
	w=$(field tpuctl-warm 1)
	if [ -n "$t" ] && [ -n "$w" ]; then
		x=$(awk -v t="$t" -v w="$w" 'BEGIN { printf "%.2f", (t > 0) ? w / t : 0 }')
		verdict "tpuctl warm <= 0.1x cold ($w s vs $t s: ${x}x)" \
		    "$(awk -v x="$x" 'BEGIN { print (x <= 0.1) ? 1 : 0 }')"
	fi
	[ -z "$(field xargs-ssh-cm 1)" ] ||
	    printf '  warm peer ratio: xargs-ssh-cm / tpuctl-warm %sx\n' \
	    "$(ratio tpuctl-warm xargs-ssh-cm)"
	j=$(field jobs-warm 1)
	[ -z "$(field jobs-warm-before 1)" ] ||
	    printf '  jobs warm, before / after: %sx\n' \
	    "$(ratio jobs-warm jobs-warm-before)"
	if [ -n "$j" ] && [ "$hosts" -ge 256 ]; then
		verdict "tpuctl jobs warm < 100 ms at $hosts workers ($j s)" \
		    "$(awk -v j="$j" 'BEGIN { print (j < 0.1) ? 1 : 0 }')"
	fi
	c=$(field tpuctl 2)
	r=$(field tpuctl 3)
	[ -n "$c" ] || return 0
	verdict "tpuctl client CPU < 2 ms/host ($c ms)" \
	    "$(awk -v c="$c" 'BEGIN { print (c < 2) ? 1 : 0 }')"
	[ "$hosts" -ge 256 ] || return 0
	verdict "tpuctl peak memory < 64 MiB at $hosts workers ($r KiB)" \
	    "$([ "$r" -lt 65536 ] && echo 1 || echo 0)"
}
misses=0

for hosts in $sizes; do
	# 8 TensorCores per host; v4 ends at v4-4096 (512 hosts), v5p (a zone
	# that offers it) at v5p-17920 (2,240 hosts).
	acc=v4-$((hosts * 8))
	export CLOUDSDK_COMPUTE_ZONE="$zone0"
	if [ "$hosts" -gt 512 ]; then
		acc=v5p-$((hosts * 8))
		export CLOUDSDK_COMPUTE_ZONE=us-east5-a
	fi
	node=b$hosts
	ver=tpu-ubuntu2204-base
	[ "${acc#v5p}" = "$acc" ] || ver=v2-alpha-tpuv5
	"$BIN/tpuctl" create "$node" --accelerator-type "$acc" \
	    --version "$ver" --quiet >"$T/create.out" 2>&1 || {
		echo "create $acc failed: $(tail -2 "$T/create.out")" >&2
		exit 1
	}
	# Propagate the key and pin the host keys (untimed).
	"$BIN/tpuctl" ssh "$node" --worker=all -- true >/dev/null 2>"$T/err" || {
		echo "warm-up failed: $(tail -2 "$T/err")" >&2
		exit 1
	}
	"$BIN/tpuctl" describe "$node" --format json >"$T/node.json"
	jq -r '.networkEndpoints[].ipAddress' "$T/node.json" >"$T/hosts"
	fan=$hosts
	[ "$fan" -le 64 ] || fan=64
	opts="-F /dev/null -i $KEY -o BatchMode=yes -o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -p $TPUCTL_SSH_PORT -l $TPUCTL_SSH_USER"
	kex="-o KexAlgorithms=curve25519-sha256"
	echo "-- $hosts workers, $fan in flight, $runs runs per row (median), $cores cores"
	rm -f "$T"/res.* "$T"/runs.*
	measure tpuctl "$BIN/tpuctl" ssh "$node" --worker=all --fanout "$fan" \
	    -- true
	floor
	# warm: the holder started and its sessions opened (untimed)
	"$BIN/tpuctl" ssh "$node" --worker=all --fanout "$fan" --persist 10m \
	    -- true >/dev/null 2>&1 || true
	measure tpuctl-warm "$BIN/tpuctl" ssh "$node" --worker=all \
	    --fanout "$fan" --persist 10m -- true
	# jobs: a detached job running on every worker, its state asked
	"$BIN/tpuctl" run --detach --name "bj$hosts" "$node" --fanout "$fan" \
	    -- sleep 3600 >/dev/null 2>&1 || true
	"$BIN/tpuctl" jobs "$node" >/dev/null 2>&1 || true
	measure jobs-warm "$BIN/tpuctl" jobs "$node"
	if [ -n "$before_bin" ]; then
		# the other build's holder, its sessions open (untimed)
		"$BIN/tpuctl" ssh-pool stop >/dev/null 2>&1 || true
		"$before_bin/tpuctl" ssh "$node" --worker=all --fanout "$fan" \
		    --persist 10m -- true >/dev/null 2>&1 || true
		"$before_bin/tpuctl" jobs "$node" >/dev/null 2>&1 || true
		measure jobs-warm-before "$before_bin/tpuctl" jobs "$node"
		"$before_bin/tpuctl" ssh-pool stop >/dev/null 2>&1 || true
	fi
	"$BIN/tpuctl" cancel --grace 1 "bj$hosts" >/dev/null 2>&1 || true
	"$BIN/tpuctl" ssh-pool stop >/dev/null 2>&1 || true
	mkdir -p "$T/cm"
	cm="-o ControlPath=$T/cm/%h -o ControlPersist=600"
	# shellcheck disable=SC2086 # opts is a list of words
	xargs -P "$fan" -I{} ssh $opts $kex $cm -o ControlMaster=yes -f -N {} \
	    <"$T/hosts" >/dev/null 2>&1 || true
	# a worker without a master connects anew: say how many came up
	printf '%-22s %d of %d ControlMasters up\n' "" \
	    "$(find "$T/cm" -type s | wc -l)" "$hosts"
	# shellcheck disable=SC2086
	measure xargs-ssh-cm sh -c "xargs -P $fan -I{} ssh $opts $kex $cm {} true <'$T/hosts'"
	# shellcheck disable=SC2086
	xargs -P "$fan" -I{} ssh $opts $cm -O exit {} <"$T/hosts" \
	    >/dev/null 2>&1 || true
	# shellcheck disable=SC2086 # opts is a list of words
	measure xargs-ssh-c25519 sh -c "xargs -P $fan -I{} ssh $opts $kex {} true <'$T/hosts'"
	if have pdsh; then
		measure pdsh env PDSH_SSH_ARGS="$opts" pdsh -R ssh -f "$fan" \
		    -w "^$T/hosts" true
		measure pdsh-c25519 env PDSH_SSH_ARGS="$opts $kex" pdsh -R ssh \
		    -f "$fan" -w "^$T/hosts" true
	fi
	if have parallel-ssh; then
		# shellcheck disable=SC2086
		measure parallel-ssh parallel-ssh -p "$fan" -h "$T/hosts" \
		    -x "$opts" true
		# shellcheck disable=SC2086
		measure parallel-ssh-c25519 parallel-ssh -p "$fan" -h "$T/hosts" \
		    -x "$opts $kex" true
	fi
	targets
	"$BIN/tpuctl" delete "$node" --quiet >/dev/null 2>&1 || true
done
echo "targets missed: $misses"
