#!/bin/sh
# Run every benchmark (tests/bench/bench_*.sh) against the binaries in
# TPUCTL_BIN_DIR (default ../../bin), and close with how many failed to
# run.  Benchmarks print their numbers; they never fail on a time target
# (machines differ), only when they cannot run.  "make bench" calls this.
set -u

dir=$(cd "$(dirname "$0")" && pwd)
TPUCTL_BIN_DIR=${TPUCTL_BIN_DIR:-$(cd "$dir/../.." && pwd)/bin}
export TPUCTL_BIN_DIR
failed=0
n=0
for b in "$dir"/bench_*.sh; do
	[ -e "$b" ] || continue
	n=$((n + 1))
	echo "== $(basename "$b" .sh)"
	if ! sh "$b"; then
		failed=$((failed + 1))
		echo "FAIL $(basename "$b" .sh)"
	fi
done
echo "bench: $n run, $failed failed"
[ "$failed" -eq 0 ]
