#!/bin/sh
# Start-up cost: the median wall time of "tpuctl --version" over many runs
# (hyperfine, warm cache), next to /bin/true (the floor: fork and exec)
# and "curl --version" (a C tool on the same libraries), measured in the
# same run.  Prints the numbers and whether tpuctl's median is under the
# 5 ms target.  It runs with an empty HOME so no user config is read.
set -eu

BIN_DIR=${TPUCTL_BIN_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/bin}
TPUCTL="$BIN_DIR/tpuctl"
RUNS=${BENCH_RUNS:-300}
TARGET_MS=5

command -v hyperfine >/dev/null 2>&1 || {
	echo "bench_startup: hyperfine is not installed" >&2
	exit 1
}
[ -x "$TPUCTL" ] || {
	echo "bench_startup: no $TPUCTL (run make first)" >&2
	exit 1
}

T=$(mktemp -d "${TMPDIR:-/tmp}/tpuctl-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/home"
export HOME="$T/home" XDG_CONFIG_HOME="$T/home/.config"
export GCE_METADATA_HOST=127.0.0.1:9

hyperfine --shell=none --warmup 20 --runs "$RUNS" --style none \
    --export-json "$T/result.json" \
    -n "tpuctl --version" "$TPUCTL --version" \
    -n "/bin/true" "/bin/true" \
    -n "curl --version" "curl --version" >/dev/null

printf '%-18s %10s %10s %10s\n' command "median ms" "mean ms" "stddev ms"
jq -r '.results[] | [.command, (.median * 1000), (.mean * 1000),
    (.stddev * 1000)] | @tsv' "$T/result.json" |
    while IFS="$(printf '\t')" read -r name median mean sd; do
	printf '%-18s %10.3f %10.3f %10.3f\n' "$name" "$median" "$mean" "$sd"
    done
median=$(jq -r '.results[0].median * 1000' "$T/result.json")
if awk -v m="$median" -v t="$TARGET_MS" 'BEGIN { exit !(m < t) }'; then
	printf 'tpuctl --version median %.3f ms: under the %d ms target\n' \
	    "$median" "$TARGET_MS"
else
	printf 'tpuctl --version median %.3f ms: OVER the %d ms target\n' \
	    "$median" "$TARGET_MS"
fi
