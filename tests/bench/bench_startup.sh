#!/bin/sh
# Start-up cost: median wall times (hyperfine, warm cache, no shell) of
# "tpuctl --version" and of the other commands that need no network
# (help, config list, completion bash), next to peers measured in the
# same run: /bin/true (the floor: fork and exec), "curl --version" and
# "ssh -V" (C tools on the same libraries), and, with fewer runs as they
# are slow, "node -e 0", the official Node.js client's start
# (require('@google-cloud/tpu') from tests/interop) and "gcloud
# --version", when installed.  Prints the table and whether tpuctl
# --version's median is under the 5 ms target (never fails on it: machines
# differ).  It runs with an empty HOME so no user config is read.
set -eu

BIN_DIR=${TPUCTL_BIN_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/bin}
TPUCTL="$BIN_DIR/tpuctl"
RUNS=${BENCH_RUNS:-300}
SLOW_RUNS=${BENCH_SLOW_RUNS:-10}
TARGET_MS=5
interop=$(cd "$(dirname "$0")/../interop" && pwd)/node_modules

for c in hyperfine jq; do
	command -v "$c" >/dev/null 2>&1 || {
		echo "bench_startup: $c is not installed" >&2
		exit 1
	}
done
[ -x "$TPUCTL" ] || {
	echo "bench_startup: no $TPUCTL (run make first)" >&2
	exit 1
}

T=$(mktemp -d "${TMPDIR:-/tmp}/tpuctl-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/home"
export HOME="$T/home" XDG_CONFIG_HOME="$T/home/.config"
export CLOUDSDK_CONFIG="$T/home/.config/gcloud"
export GCE_METADATA_HOST=127.0.0.1:9

# The fast group: tpuctl first (its --version median is the target).
set -- -n "tpuctl --version" "$TPUCTL --version" \
    -n "tpuctl help" "$TPUCTL help" \
    -n "tpuctl config list" "$TPUCTL config list" \
    -n "tpuctl completion" "$TPUCTL completion bash" \
    -n "/bin/true" "/bin/true"
command -v curl >/dev/null 2>&1 && set -- "$@" -n "curl --version" \
    "curl --version"
command -v ssh >/dev/null 2>&1 && set -- "$@" -n "ssh -V" "ssh -V"
hyperfine --shell=none --warmup 20 --runs "$RUNS" --style none \
    --export-json "$T/fast.json" "$@" >/dev/null 2>"$T/fast.err" || {
	cat "$T/fast.err" >&2
	exit 1
}

# The slow peers.
set --
if command -v node >/dev/null 2>&1; then
	set -- "$@" -n "node -e 0" "node -e 0"
	if [ -d "$interop/@google-cloud/tpu" ]; then
		printf "require(require.resolve('@google-cloud/tpu', %s));\n" \
		    "{paths: ['$interop']}" >"$T/require_tpu.js"
		set -- "$@" -n "node @google-cloud/tpu" "node $T/require_tpu.js"
	fi
fi
command -v gcloud >/dev/null 2>&1 && set -- "$@" \
    -n "gcloud --version" "gcloud --version"
if [ $# -gt 0 ]; then
	hyperfine --shell=none --warmup 2 --runs "$SLOW_RUNS" --style none \
	    --export-json "$T/slow.json" "$@" >/dev/null 2>"$T/slow.err" || {
		cat "$T/slow.err" >&2
		exit 1
	}
else
	echo '{"results": []}' >"$T/slow.json"
fi

printf '%-24s %10s %10s %10s %6s\n' command "median ms" "mean ms" \
    "stddev ms" runs
jq -r '.results[] | [.command, (.median * 1000), (.mean * 1000),
    (.stddev * 1000), (.times | length)] | @tsv' "$T/fast.json" \
    "$T/slow.json" |
    while IFS="$(printf '\t')" read -r name median mean sd n; do
	printf '%-24s %10.3f %10.3f %10.3f %6d\n' "$name" "$median" "$mean" \
	    "$sd" "$n"
    done
median=$(jq -r '.results[0].median * 1000' "$T/fast.json")
floor=$(jq -r '.results[] | select(.command == "/bin/true") |
    .median * 1000' "$T/fast.json")
printf 'tpuctl --version: %.3f ms above /bin/true\n' \
    "$(awk -v m="$median" -v f="$floor" 'BEGIN { print m - f }')"
if awk -v m="$median" -v t="$TARGET_MS" 'BEGIN { exit !(m < t) }'; then
	printf 'tpuctl --version median %.3f ms: PASS (under the %d ms target)\n' \
	    "$median" "$TARGET_MS"
else
	printf 'tpuctl --version median %.3f ms: FAIL (over the %d ms target)\n' \
	    "$median" "$TARGET_MS"
fi
