#!/bin/sh
# The emulator start the fleet benchmarks share (sourced; not a
# benchmark itself: run.sh runs bench_*.sh only).

# bench_emu_start: tpuctl-emulator serve (no key delay) on $T/emu, its
# log $T/emu.log, its pid $emu_pid (the caller's cleanup stops it); its
# env sourced once written (at most 30 s, else exit 1); a fresh
# ~/.ssh/google_compute_engine key.
bench_emu_start() {
	"$BIN/tpuctl-emulator" serve --state-dir "$T/emu" \
	    --set fleet.key_delay_ms=0 >"$T/emu.log" 2>&1 &
	# shellcheck disable=SC2034 # the caller's cleanup reads it
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
}
