#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# The job summary past 16 workers (issue 13): run, cancel and
# logs --follow of a job on 32 workers (v4-256) print one grouped line
# (src/outgroup.h) instead of a line per worker: identical states share
# an entry, the largest group by its count, the rest by wN names with
# ranges; states mixed: exited 0/1/2, killed by TERM, lost.  Up to 16
# workers the summary keeps its line per worker (t303).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=0
fleet_api_setup
fleet_create_node t313 v4-256 180

# 16 workers: a line each, as on small slices
expect_rc 8 "$TPUCTL" run --name mix0 --worker=0-15 t313 -- sh -c \
    'case $TPUCTL_WORKER in 3) exit 1;; esac'
assert_grep '^worker 3: exited 1$' "$T/err"
[ "$(grep -c '^worker [0-9]*: exited 0$' "$T/err")" -eq 15 ] ||
	fail "16 workers: $(cat "$T/err")"
assert_grep '^job mix0: 15 of 16 workers succeeded$' "$T/err"

# attached: 27 exit 0, w3 w17 w18 w19 exit 1, w5 exits 2
expect_rc 8 "$TPUCTL" run --name mix1 t313 -- sh -c \
    'case $TPUCTL_WORKER in 3|17|18|19) exit 1;; 5) exit 2;; esac'
assert_grep '^27 workers: exited 0; w3, w17-w19: exited 1; w5: exited 2$' "$T/err"
assert_no_grep '^worker [0-9]+: ' "$T/err"
assert_grep '^job mix1: 27 of 32 workers succeeded$' "$T/err"
assert_grep '^tpuctl: job mix1: 5 of 32 workers failed$' "$T/err"

# logs --follow of the ended job: the grouped summary again
expect_rc 8 "$TPUCTL" logs --follow mix1
assert_grep '^27 workers: exited 0; w3, w17-w19: exited 1; w5: exited 2$' "$T/err"
assert_no_grep '^worker [0-9]+: ' "$T/err"
[ "$(grep -c '' "$T/out")" -eq 0 ] || fail "mix1 had no output: $(cat "$T/out")"

# detached: w1 exits 1, w2 exits 0, the rest sleep; w9 taken down, then
# cancel: killed by TERM, lost
m=431.$$
expect_rc 0 "$TPUCTL" run --detach --name mix2 t313 -- sh -c \
    "echo up; case \$TPUCTL_WORKER in 1) exit 1;; 2) exit 0;; esac; sleep $m"
i=0
while :; do
	"$TPUCTL" logs mix2 >"$T/l.out" 2>"$T/l.err" || true
	[ "$(grep -c '^\[w[0-9]*\] up$' "$T/l.out")" -lt 32 ] || break
	i=$((i + 1))
	[ $i -lt 100 ] || fail "mix2 did not start: $(cat "$T/l.out" "$T/l.err")"
	sleep 0.1
done
full="projects/$CLOUDSDK_CORE_PROJECT/locations/$CLOUDSDK_COMPUTE_ZONE/nodes/t313"
code=$(curl -sS --noproxy '*' -o "$T/resp" -w '%{http_code}' -X POST \
    -H 'Content-Type: application/json' \
    --data-binary "{\"event\":\"worker-down\",\"node\":\"$full\",\"worker\":9}" \
    "$API/_emulator/events")
[ "$code" = 200 ] || fail "worker-down: $code $(cat "$T/resp")"
expect_rc 8 "$TPUCTL" cancel --grace 2s mix2
assert_grep '^29 workers: killed by TERM; w1: exited 1; w2: exited 0; w9: lost$' "$T/err"
assert_no_grep '^worker [0-9]+: ' "$T/err"
assert_grep '^job mix2: ended on 31 of 32 workers$' "$T/err"
if pgrep -f "^sleep $m\$" >/dev/null; then
	fail "left after cancel: $(pgrep -af "sleep $m")"
fi

# jobs: the counts
expect_rc 0 "$TPUCTL" jobs t313 --format json
[ "$(jq -r '.[] | select(.name == "mix2") | .state' "$T/out")" = \
    "29 killed by TERM, 1 exited 1, 1 exited 0, 1 lost" ] ||
	fail "jobs state: $(cat "$T/out")"
