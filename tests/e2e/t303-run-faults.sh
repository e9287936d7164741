#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# tpuctl run when things go wrong: --timeout 3s exits 124 after
# cancelling, nothing left running; SIGINT of an attached run cancels
# the job on every worker and says so (130); --fail-fast cancels the
# rest on the first failure (8); a worker taken down mid-job (emulator
# worker-down) ends run with 8 and names it lost, the other workers
# finishing their work.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200
fleet_api_setup
fleet_create_node t303 v4-32 90

left() { pgrep -f "^sleep $1\$" >/dev/null; }

# --timeout: 124, cancelled everywhere
m=418.$$
start=$(date +%s)
expect_rc 124 "$TPUCTL" run --timeout 3s --name to1 t303 -- \
    sh -c "echo go; sleep $m"
[ $(($(date +%s) - start)) -lt 20 ] || fail "--timeout 3s took too long"
assert_grep 'tpuctl: --timeout reached: cancelling job to1 on every worker' "$T/err"
assert_grep '^worker 3: killed by TERM$' "$T/err"
assert_grep '^tpuctl: job to1: --timeout of 3 s reached; cancelled$' "$T/err"
[ "$(grep -c '^\[w[0-3]\] go$' "$T/out")" -eq 4 ] || fail "to1 output: $(cat "$T/out")"
if left "$m"; then fail "left after --timeout: $(pgrep -af "sleep $m")"; fi

# SIGINT of an attached run
m=419.$$
"$TPUCTL" run --name int1 t303 -- sh -c "echo go; sleep $m" \
    >"$T/i.out" 2>"$T/i.err" &
pid=$!
wait_for_grep -c 4 "$T/i.out" '^\[w[0-3]\] go$' "" 10
kill -INT "$pid"
set +e
wait "$pid"
rc=$?
set -e
[ "$rc" -eq 130 ] || fail "SIGINT: exit $rc: $(cat "$T/i.err")"
assert_grep 'tpuctl: interrupted: cancelling job int1 on every worker' "$T/i.err"
assert_grep '^worker 0: killed by TERM$' "$T/i.err"
assert_grep '^tpuctl: job int1 cancelled \(SIGINT\)$' "$T/i.err"
if left "$m"; then fail "left after SIGINT: $(pgrep -af "sleep $m")"; fi

# --fail-fast
m=420.$$
expect_rc 8 "$TPUCTL" run --fail-fast --name ff1 t303 -- \
    sh -c "if [ \$RANK = 2 ]; then sleep 0.5; exit 3; fi; sleep $m"
assert_grep '^worker 2: exited 3$' "$T/err"
assert_grep '^worker 0: killed by TERM$' "$T/err"
assert_grep 'fail-fast' "$T/err"
if left "$m"; then fail "left after --fail-fast: $(pgrep -af "sleep $m")"; fi

# A worker taken down mid-job: lost, 8; the others finish.
"$TPUCTL" run --name down1 t303 -- sh -c 'echo up; sleep 5; echo finished' \
    >"$T/d.out" 2>"$T/d.err" &
pid=$!
wait_for_grep -c 4 "$T/d.out" '^\[w[0-3]\] up$' "" 10
full="projects/$CLOUDSDK_CORE_PROJECT/locations/$CLOUDSDK_COMPUTE_ZONE/nodes/t303"
code=$(curl -sS --noproxy '*' -o "$T/resp" -w '%{http_code}' -X POST \
    -H 'Content-Type: application/json' \
    --data-binary "{\"event\":\"worker-down\",\"node\":\"$full\",\"worker\":1}" \
    "$API/_emulator/events")
[ "$code" = 200 ] || fail "worker-down: $code $(cat "$T/resp")"
down_at=$(date +%s)
set +e
wait "$pid"
rc=$?
set -e
[ "$rc" -eq 8 ] || fail "worker down: exit $rc: $(cat "$T/d.err")"
# the others end at ~5 s; the lost worker is not waited on beyond that
[ $(($(date +%s) - down_at)) -le 15 ] || fail "worker down: run took too long"
assert_grep '^worker 1: lost$' "$T/d.err"
for w in 0 2 3; do
	assert_grep "^worker $w: exited 0\$" "$T/d.err"
	assert_grep "^\[w$w\] finished\$" "$T/d.out"
done
assert_grep '^tpuctl: job down1: 1 of 4 workers failed$' "$T/d.err"
