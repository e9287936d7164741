#!/bin/sh
# SIGINT during a retry wait stops it at once: tpuctl dies by SIGINT (the
# shell sees 130) instead of sleeping out its backoff or deadline.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
P=$CLOUDSDK_CORE_PROJECT
export GCE_METADATA_HOST=127.0.0.1:9
LOC="/v2/projects/$P/locations"
expect_rc 0 "$TPUCTL" auth print-access-token

emu_inject return-503 --method GET --path "$LOC" --count 1000
start=$(date +%s)
set +e
"$TPUCTL" -v api --timeout 60 "v2/projects/$P/locations" >"$T/out" 2>"$T/err" &
pid=$!
sleep 2
kill -INT "$pid"
wait "$pid"
rc=$?
set -e
el=$(($(date +%s) - start))
[ "$rc" -eq 130 ] || fail "exit status $rc after SIGINT, want 130"
[ "$el" -le 6 ] || fail "took $el s to stop after SIGINT"
assert_grep 'interrupted' "$T/err"
assert_grep 'retrying in' "$T/err"
