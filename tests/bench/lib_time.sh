#!/bin/sh
# The timing pieces the benchmarks share (sourced; not a benchmark
# itself: run.sh runs bench_*.sh only).

# bench_now: the wall clock, seconds with nanoseconds
bench_now() {
	date +%s.%N
}

# bench_since T0 [T1]: seconds from T0 to T1 (default: now), 2 decimals
bench_since() {
	awk -v a="$1" -v b="${2:-$(bench_now)}" 'BEGIN { printf "%.2f", b - a }'
}

# bench_time FILE CMD...: run CMD under /usr/bin/time, "wall user sys
# peak-KiB" in FILE; CMD's exit status
bench_time() {
	f=$1
	shift
	/usr/bin/time -f '%e %U %S %M' -o "$f" "$@"
}

# bench_median N: the median line of N numeric lines on stdin (sorted by
# their first field)
bench_median() {
	sort -n | sed -n "$((($1 + 1) / 2))p"
}

# bench_ticks PID...: CPU clock ticks of the processes (utime, stime and
# those of the children they reaped)
bench_ticks() {
	for p in "$@"; do
		# fields after "(comm)": state is $1, utime $12 ... cstime $15
		sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null || true
	done | awk '{ t += $12 + $13 + $14 + $15 } END { print t + 0 }'
}

# bench_reaped PID: CPU clock ticks of the children PID reaped (cutime,
# cstime): for the emulator, a subreaper, the processes orphaned by the
# workers' sessions (the watcher each remote command starts, double
# forked)
bench_reaped() {
	sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null |
	    awk '{ t += $14 + $15 } END { print t + 0 }'
}
