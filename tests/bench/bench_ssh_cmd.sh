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
# Nothing leaves loopback.  Numbers only: fails only when it cannot run.
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

# measure NAME CMD...: one line of numbers.
measure() {
	name=$1
	shift
	if ! /usr/bin/time -f '%e %U %S %M' -o "$T/time" "$@" \
	    >"$T/out" 2>"$T/err"; then
		printf '%-14s failed: %s\n' "$name" "$(tail -1 "$T/err")"
		return 0
	fi
	read -r wall usr sys rss <"$T/time"
	awk -v n="$name" -v w="$wall" -v u="$usr" -v s="$sys" -v r="$rss" \
	    -v h="$hosts" 'BEGIN { printf "%-14s wall %6.2f s  cpu/host %6.2f ms  peak %7d KiB\n", n, w, (u + s) * 1000 / h, r }'
}

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
	"$BIN/tpuctl" delete "$node" --quiet >/dev/null 2>&1 || true
done
