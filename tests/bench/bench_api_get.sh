#!/bin/sh
# A warm authenticated GET of one node: "tpuctl describe N" and
# "tpuctl api GET .../nodes/N" (token from the cache, the full HTTP stack)
# against a bare curl of the same URL with the same token (the floor) and
# the official @google-cloud/tpu Node.js client (REST, cold process, as a
# script would run it), medians over many runs with hyperfine against
# tpuctl-emulator, and the ratios.  It first checks that a warm describe
# makes exactly one HTTP request (the emulator's request log).  The token reaches curl through
# a 0600 header file (-H @file), never through argv.
set -eu

BIN_DIR=${TPUCTL_BIN_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/bin}
TPUCTL="$BIN_DIR/tpuctl"
EMULATOR="$BIN_DIR/tpuctl-emulator"
RUNS=${BENCH_RUNS:-200}

for c in hyperfine jq curl; do
	command -v "$c" >/dev/null 2>&1 || {
		echo "bench_api_get: $c is not installed" >&2
		exit 1
	}
done
if [ ! -x "$TPUCTL" ] || [ ! -x "$EMULATOR" ]; then
	echo "bench_api_get: build tpuctl and tpuctl-emulator first" >&2
	exit 1
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/tpuctl-bench.XXXXXX")
EMU_PID=
cleanup() {
	[ -z "$EMU_PID" ] || kill "$EMU_PID" 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$T/home" "$T/emu"
export HOME="$T/home" XDG_CONFIG_HOME="$T/home/.config" \
    XDG_CACHE_HOME="$T/home/.cache"
"$EMULATOR" serve --state-dir "$T/emu" >"$T/emu.log" 2>&1 &
EMU_PID=$!
i=0
until [ -s "$T/emu/env" ]; do
	i=$((i + 1))
	[ $i -lt 300 ] || {
		echo "bench_api_get: the emulator did not start" >&2
		exit 1
	}
	sleep 0.1
done
# shellcheck disable=SC1091
. "$T/emu/env"
export GCE_METADATA_HOST=127.0.0.1:9
P=$CLOUDSDK_CORE_PROJECT
Z=$CLOUDSDK_COMPUTE_ZONE
NODES="v2/projects/$P/locations/$Z/nodes"

# One node to read (falls back to the locations list if creation fails).
path="$NODES/bench"
if ! "$TPUCTL" api --data '{"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"}' \
    "$NODES?nodeId=bench" >/dev/null 2>&1; then
	path="v2/projects/$P/locations"
fi
i=0
until "$TPUCTL" api "$path" >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 100 ] || {
		echo "bench_api_get: GET $path keeps failing" >&2
		exit 1
	}
	sleep 0.2
done
url="${CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU}$path"
umask 077
{
	printf 'Authorization: Bearer '
	"$TPUCTL" auth print-access-token
} >"$T/hdr"

"$TPUCTL" auth print-access-token >"$T/token"

# A warm describe is exactly one request.
if [ "$path" = "$NODES/bench" ]; then
	"$TPUCTL" describe bench >/dev/null
	n0=$(wc -l <"$T/emu/requests.jsonl")
	"$TPUCTL" describe bench >/dev/null
	n1=$(wc -l <"$T/emu/requests.jsonl")
	echo "warm tpuctl describe: $((n1 - n0)) HTTP request(s) (target: 1)"
	describe="$TPUCTL describe --format json bench"
else
	describe="$TPUCTL api --format json $path"
fi
port=${TPUCTL_EMULATOR_URL##*:}
nodecmd=
if command -v node >/dev/null 2>&1 &&
    sh "$(dirname "$0")/../interop/install.sh" >/dev/null 2>&1; then
	nodecmd="node $(cd "$(dirname "$0")" && pwd)/tpu_get_node.js $port projects/$P/locations/$Z/nodes/bench $T/token"
	$nodecmd || nodecmd=
fi

hyperfine --shell=none --warmup 10 --runs "$RUNS" --style none \
    --export-json "$T/result.json" \
    -n "tpuctl describe" "$describe" \
    -n "curl GET" "curl -sf -H @$T/hdr -o /dev/null $url" \
    -n "tpuctl api GET" "$TPUCTL api --format json $path" >/dev/null
if [ -n "$nodecmd" ]; then
	hyperfine --shell=none --warmup 2 --runs "${BENCH_NODE_RUNS:-10}" \
	    --style none --export-json "$T/node.json" \
	    -n "@google-cloud/tpu" "$nodecmd" >/dev/null
	jq -s '.[0].results += .[1].results | .[0]' "$T/result.json" \
	    "$T/node.json" >"$T/all.json"
	mv "$T/all.json" "$T/result.json"
fi

printf 'GET %s\n' "$path"
printf '%-20s %10s %10s %10s\n' command "median ms" "mean ms" "stddev ms"
jq -r '.results[] | [.command, (.median * 1000), (.mean * 1000),
    (.stddev * 1000)] | @tsv' "$T/result.json" |
    while IFS="$(printf '\t')" read -r name median mean sd; do
	printf '%-20s %10.3f %10.3f %10.3f\n' "$name" "$median" "$mean" "$sd"
    done
jq -r '"tpuctl describe / curl median: \(.results[0].median / .results[1].median * 100 | round / 100) (target: at most 2)"' \
    "$T/result.json"
jq -r 'if (.results | length) > 3 then "@google-cloud/tpu / tpuctl describe median: \(.results[3].median / .results[0].median * 10 | round / 10) (target: at least 20)" else "@google-cloud/tpu: not measured (node or npm packages missing)" end' \
    "$T/result.json"
