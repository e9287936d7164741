#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# tpuctl run on a v4-32 node (4 workers): every worker gets the job's
# environment (TPUCTL_*, RANK, WORLD_SIZE, MASTER_ADDR = worker 0's
# internal address, --env, --env-file), output is prefixed per worker
# and kept locally, the summary names each worker's state, the exit
# contract holds (0, 8 when some fail); a plain python3 job uses the
# TPUCTL_* variables to meet over TCP; bad input is exit 2 before any
# request.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200
fleet_api_setup
fleet_create_node t300 v4-32 90
ip0=$(jq -r '.networkEndpoints[0].ipAddress' "$T/node.json")

# Bad input: exit 2, nothing sent.
before=$(emu_requests | wc -l)
expect_rc 2 "$TPUCTL" run t300 --env 'BAD-NAME=1' -- true
assert_grep "^tpuctl: --env 'BAD-NAME=1': the name must be" "$T/err"
expect_rc 2 "$TPUCTL" run t300 --env 'TPUCTL_JOB=x' -- true
expect_rc 2 "$TPUCTL" run t300 --name 'a b' -- true
assert_grep "^tpuctl: job name 'a b'" "$T/err"
expect_rc 2 "$TPUCTL" run t300
assert_grep '^tpuctl: no command' "$T/err"
expect_rc 2 "$TPUCTL" run t300 --timeout 0 -- true
printf 'A=1\nnot an assignment\n' >"$T/bad.env"
expect_rc 2 "$TPUCTL" run t300 --env-file "$T/bad.env" -- true
assert_grep "bad.env:2:" "$T/err"
[ "$(emu_requests | wc -l)" -eq "$before" ] || fail "bad input made requests"

printf '# comment\nFROM_FILE=f v\n' >"$T/good.env"
expect_rc 0 "$TPUCTL" run t300 --name envjob --env 'X=it'\''s $y' \
    --env-file "$T/good.env" -- \
    sh -c 'echo "$TPUCTL_JOB $TPUCTL_WORKER/$TPUCTL_WORKERS s$TPUCTL_SLICE/$TPUCTL_SLICES r$TPUCTL_RESTART_COUNT rank=$RANK ws=$WORLD_SIZE lr=$LOCAL_RANK lws=$LOCAL_WORLD_SIZE $MASTER_ADDR:$MASTER_PORT jax=$JAX_COORDINATOR_ADDRESS ms=${MEGASCALE_NUM_SLICES-unset} [$X] [$FROM_FILE]"; echo err$RANK >&2'
for w in 0 1 2 3; do
	assert_grep "^\[w$w\] envjob $w/4 s0/1 r0 rank=$w ws=4 lr=0 lws=1 $ip0:29500 jax=$ip0:8476 ms=unset \[it's \\\$y\] \[f v\]\$" "$T/out"
	assert_grep "^\[w$w\] err$w\$" "$T/err"
	assert_grep "^worker $w: exited 0\$" "$T/err"
done
assert_grep '^job envjob: 4 of 4 workers succeeded$' "$T/err"
# Kept locally, byte for byte.
st="$HOME/.local/state/tpuctl/jobs/envjob"
[ -f "$st/job.json" ] || fail "no local record"
assert_grep "^envjob 2/4 " "$st/s0-w2.out"
[ "$(cat "$st/s0-w3.err")" = err3 ] || fail "local stderr: $(cat "$st/s0-w3.err")"
[ "$(jq -r '.states[1].state' "$st/job.json")" = "exited 0" ] ||
	fail "record: $(cat "$st/job.json")"

# The same name again: refused before anything runs.
expect_rc 4 "$TPUCTL" run t300 --name envjob -- true
assert_grep "job 'envjob' exists already" "$T/err"

# Some workers fail: 8, each state named; a default name is generated.
expect_rc 8 "$TPUCTL" run t300 -- sh -c 'exit $((RANK % 2 * 3))'
assert_grep '^worker 1: exited 3$' "$T/err"
assert_grep '^worker 2: exited 0$' "$T/err"
assert_grep '^tpuctl: job sh-[0-9]{8}-[0-9]{6}-[0-9a-f]{4}: 2 of 4 workers failed$' "$T/err"

# --worker: a subset keeps its global ranks and the full world size.
expect_rc 0 "$TPUCTL" run t300 --worker 1,3 -- sh -c 'echo "$RANK/$WORLD_SIZE"'
[ "$(sort "$T/out")" = "[w1] 1/4
[w3] 3/4" ] || fail "--worker 1,3: $(cat "$T/out")"
assert_grep ': 2 of 2 workers succeeded$' "$T/err"

# A plain python3 job meeting over TCP with the TPUCTL_* variables:
# worker 0 listens on MASTER_ADDR:MASTER_PORT, the others send their
# rank; worker 0 checks it got every rank once.
port=$((20000 + $$ % 20000))
cat >"$T/tcp.py" <<'PY'
import os, socket, sys, time
rank = int(os.environ["RANK"]); n = int(os.environ["WORLD_SIZE"])
addr = (os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]))
assert os.environ["TPUCTL_WORKER"] == str(rank)
if rank == 0:
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(addr); s.listen(n)
    got = set()
    s.settimeout(30)
    while len(got) < n - 1:
        c, _ = s.accept(); got.add(int(c.recv(16))); c.close()
    assert got == set(range(1, n)), got
    print("master got", sorted(got))
else:
    for _ in range(300):
        try:
            c = socket.create_connection(addr, timeout=5); break
        except OSError:
            time.sleep(0.1)
    c.sendall(str(rank).encode()); c.close()
    print("sent", rank)
PY
mkdir "$T/wd"
cp "$T/tcp.py" "$T/wd/tcp.py"
expect_rc 0 "$TPUCTL" run t300 --workdir "$T/wd" --env "MASTER_PORT=$port" \
    -- /usr/bin/python3 tcp.py
assert_grep '^\[w0\] master got \[1, 2, 3\]$' "$T/out"
assert_grep '^\[w3\] sent 3$' "$T/out"
