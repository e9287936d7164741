#!/bin/sh
# Benchmark of the command: `tpuctl ssh NODE --worker=all -- true` on
# emulator nodes of 16, 64 and 256 workers (v4-128, v4-512, v4-2048; real
# sshd workers on loopback), against pdsh -R ssh, parallel-ssh and
# xargs -P N ssh -o KexAlgorithms=curve25519-sha256 on the same workers,
# with the same key and concurrency.  Prints wall time, client CPU per
# host and peak RSS (/usr/bin/time).  tpuctl's time includes reading the
# node (cache) and the guest attributes, as a user sees it; the key is
# propagated before timing.
#   SSH_CMD_BENCH_SIZES="16 64 256"   worker counts
# At 64 workers and more each target of issue 6 is printed with PASS or
# MISS: tpuctl at least 3x faster than pdsh and than parallel-ssh, faster
# than the xargs (curve25519) OpenSSH row, client CPU under 2 ms per
# host, and (at 256) peak memory under 64 MiB.
# Nothing leaves loopback.  Numbers only: fails only when it cannot run
# (a MISS is reported, not an error: machines differ).
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${TPUCTL_BIN_DIR:-$top/bin}
sizes=${SSH_CMD_BENCH_SIZES:-16 64 256}
T=$(mktemp -d /tmp/bench_ssh_cmd.XXXXXX)
emu_pid=
cleanup() {
	[ -z "$emu_pid" ] || kill "$emu_pid" 2>/dev/null || true
	[ -z "$emu_pid" ] || wait "$emu_pid" 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

export HOME="$T/home" XDG_CONFIG_HOME="$T/home/.config" \
    XDG_CACHE_HOME="$T/home/.cache"
mkdir -p "$HOME/.ssh"
chmod 700 "$HOME" "$HOME/.ssh"
"$BIN/tpuctl-emulator" serve --state-dir "$T/emu" --set fleet.key_delay_ms=0 \
    >"$T/emu.log" 2>&1 &
emu_pid=$!
i=0
while [ ! -s "$T/emu/env" ]; do
	i=$((i + 1))
	[ $i -lt 300 ] || { echo "emulator did not start" >&2; exit 1; }
	sleep 0.1
done
# shellcheck disable=SC1091
. "$T/emu/env"
ssh-keygen -q -t ed25519 -N '' -C bench -f "$HOME/.ssh/google_compute_engine"
KEY=$HOME/.ssh/google_compute_engine
have() { command -v "$1" >/dev/null 2>&1; }

# measure NAME CMD...: one line of numbers; "wall cpu/host KiB" kept in
# $T/res.NAME for the targets.
measure() {
	name=$1
	shift
	rm -f "$T/res.$name"
	if ! /usr/bin/time -f '%e %U %S %M' -o "$T/time" "$@" \
	    >"$T/out" 2>"$T/err"; then
		printf '%-14s failed: %s\n' "$name" "$(tail -1 "$T/err")"
		return 0
	fi
	read -r wall usr sys rss <"$T/time"
	awk -v w="$wall" -v u="$usr" -v s="$sys" -v r="$rss" -v h="$hosts" \
	    'BEGIN { printf "%s %.3f %d\n", w, (u + s) * 1000 / h, r }' \
	    >"$T/res.$name"
	awk -v n="$name" -v w="$wall" -v u="$usr" -v s="$sys" -v r="$rss" \
	    -v h="$hosts" 'BEGIN { printf "%-14s wall %6.2f s  cpu/host %6.2f ms  peak %7d KiB\n", n, w, (u + s) * 1000 / h, r }'
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

# targets: issue 6's goals for the size just measured (64 and more).
targets() {
	[ "$hosts" -ge 64 ] || return 0
	faster pdsh 3
	faster parallel-ssh 3
	faster xargs-ssh 1
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
	chips=$((hosts * 8))
	node=b$hosts
	"$BIN/tpuctl" create "$node" --accelerator-type "v4-$chips" \
	    --version tpu-ubuntu2204-base --quiet >"$T/create.out" 2>&1 || {
		echo "create v4-$chips failed: $(tail -2 "$T/create.out")" >&2
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
	echo "-- $hosts workers, $fan in flight"
	rm -f "$T"/res.*
	measure tpuctl "$BIN/tpuctl" ssh "$node" --worker=all --fanout "$fan" \
	    -- true
	# shellcheck disable=SC2086 # opts is a list of words
	measure xargs-ssh sh -c "xargs -P $fan -I{} ssh $opts -o KexAlgorithms=curve25519-sha256 {} true <'$T/hosts'"
	if have pdsh; then
		measure pdsh env PDSH_SSH_ARGS="$opts" pdsh -R ssh -f "$fan" \
		    -w "^$T/hosts" true
	fi
	if have parallel-ssh; then
		# shellcheck disable=SC2086
		measure parallel-ssh parallel-ssh -p "$fan" -h "$T/hosts" \
		    -x "$opts" true
	fi
	targets
	"$BIN/tpuctl" delete "$node" --quiet >/dev/null 2>&1 || true
done
echo "targets missed: $misses"
