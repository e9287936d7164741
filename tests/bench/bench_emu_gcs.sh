#!/bin/sh
# Throughput of tpuctl-emulator's Cloud Storage API itself, measured with
# curl on loopback: a media upload (streamed to disk, then hashed for
# crc32c and md5) and a download of the same object, by default 1 GiB.
# This is the floor tpuctl's own transfers are measured against.
#   BENCH_GCS_MB=1024   object size in MiB
#   BENCH_GCS_RUNS=3    runs of each direction (the best is reported)
set -eu

# shellcheck source-path=SCRIPTDIR/../e2e
. "$(dirname "$0")/../e2e/lib.sh"

mb=${BENCH_GCS_MB:-1024}
runs=${BENCH_GCS_RUNS:-3}
case $mb$runs in *[!0-9]*) fail "BENCH_GCS_MB and BENCH_GCS_RUNS must be numbers" ;; esac
if [ "$mb" -eq 0 ] || [ "$runs" -eq 0 ]; then
	fail "BENCH_GCS_MB and BENCH_GCS_RUNS must be > 0"
fi

# shellcheck disable=SC2119
emu_start
token=$(cat "$EMU_DIR/access-token")
gcs=${STORAGE_EMULATOR_HOST%/}
project=${CLOUDSDK_CORE_PROJECT:?}

head -c $((mb * 1048576)) /dev/urandom >"$T/src"
st=$(curl -sS -o /dev/null -w '%{http_code}' -X POST \
    -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    --data-binary '{"name":"bench-gcs"}' "$gcs/storage/v1/b?project=$project")
[ "$st" = 200 ] || fail "create bucket: HTTP $st"

# shellcheck source=tests/bench/lib_time.sh
. "$(dirname "$0")/lib_time.sh"
rate() {
	awk -v mb="$mb" -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", mb / (b - a) }'
}
best_up=0
best_down=0
i=0
while [ $i -lt "$runs" ]; do
	t0=$(bench_now)
	st=$(curl -sS -o "$T/resp" -w '%{http_code}' -X POST -T "$T/src" \
	    -H "Authorization: Bearer $token" \
	    -H 'Content-Type: application/octet-stream' \
	    "$gcs/upload/storage/v1/b/bench-gcs/o?uploadType=media&name=big")
	t1=$(bench_now)
	[ "$st" = 200 ] || fail "upload: HTTP $st: $(cat "$T/resp")"
	up=$(rate "$t0" "$t1")
	t0=$(bench_now)
	st=$(curl -sS -o /dev/null -w '%{http_code}' \
	    -H "Authorization: Bearer $token" \
	    "$gcs/download/storage/v1/b/bench-gcs/o/big?alt=media")
	t1=$(bench_now)
	[ "$st" = 200 ] || fail "download: HTTP $st"
	down=$(rate "$t0" "$t1")
	echo "run $((i + 1)): upload $up MiB/s, download $down MiB/s"
	best_up=$(awk -v a="$best_up" -v b="$up" 'BEGIN { print (b > a) ? b : a }')
	best_down=$(awk -v a="$best_down" -v b="$down" 'BEGIN { print (b > a) ? b : a }')
	i=$((i + 1))
done
size=$(jq -r .size "$T/resp")
[ "$size" = $((mb * 1048576)) ] || fail "stored size $size"
echo "emulator GCS, $mb MiB object, best of $runs on $(nproc) cores:"
echo "  media upload   $best_up MiB/s"
echo "  download       $best_down MiB/s"
