#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# tpuctl ssh on a v4-32 node (4 workers) from nothing: the key is
# generated and propagated through the node metadata, host keys are
# pinned into tpuctl's known_hosts (0600, alias tpu.<id>-<worker>),
# output is prefixed per worker, the exit contract holds (0, one
# worker's own status, 8 partial), a signal-killed command is reported,
# --output jsonl and --output-dir work.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=500
fleet_api_setup
fleet_create_node t070 v4-32 90
id=$(jq -r .id "$T/node.json")

# No key yet: generated as ~/.ssh/google_compute_engine, then propagated.
expect_rc 0 "$TPUCTL" ssh t070 --worker=all -- echo 'hello $x'
[ -f "$HOME/.ssh/google_compute_engine" ] || fail "no key generated"
i=0
while [ $i -lt 4 ]; do
	assert_grep "^\[w$i\] hello \\\$x$" "$T/out"
	i=$((i + 1))
done
[ "$(wc -l <"$T/out")" -eq 4 ] || fail "want 4 lines: $(cat "$T/out")"
assert_grep '^worker 3: exit 0' "$T/err"
fleet_api GET "$NODES/t070" >"$T/node2.json"
jq -r '.metadata["ssh-keys"]' "$T/node2.json" >"$T/keys"
assert_grep "^$SSH_USER:ssh-ed25519 " "$T/keys"

# Host keys pinned, file 0600, one alias per worker.
kh="$XDG_CONFIG_HOME/tpuctl/known_hosts"
[ "$(stat -c %a "$kh")" = 600 ] || fail "known_hosts mode $(stat -c %a "$kh")"
i=0
while [ $i -lt 4 ]; do
	assert_grep "^tpu\\.$id-$i ssh-ed25519 " "$kh"
	i=$((i + 1))
done

# One worker: its own exit status; a second run reuses everything.
expect_rc 3 "$TPUCTL" ssh t070 --worker=1 --command 'exit 3'
# A worker's number from its HOME (.../wI/home): like a TPU VM's, the
# login has no TPU_WORKER_ID.
expect_rc 0 "$TPUCTL" ssh t070 --worker 2 -- sh -c 'h=${HOME%/home}; echo ${h##*/w}'
[ "$(cat "$T/out")" = "[w2] 2" ] || fail "worker 2 output: $(cat "$T/out")"
[ "$(grep -c . "$kh")" -eq 4 ] || fail "known_hosts grew: $(cat "$kh")"

# Some workers fail: 8, with each status in the summary.
expect_rc 8 "$TPUCTL" ssh t070 --worker=0-3 \
    --command 'h=${HOME%/home}; w=${h##*/w}; test $w -lt 2 || exit 5'
assert_grep '^worker 2: exit 5' "$T/err"
assert_grep '^worker 0: exit 0' "$T/err"

# Signal-killed command on one worker: 128 + 9.
expect_rc 137 "$TPUCTL" ssh t070 --worker=0 --command 'kill -KILL $$'
assert_grep 'signal KILL' "$T/err"

# jsonl and --output-dir.
expect_rc 0 "$TPUCTL" ssh t070 --worker=1,3 --output jsonl -- echo 'a"b'
jq -e -s 'length == 4 and (map(select(has("line"))) | length == 2 and all(.line == "a\"b")) and
    map(select(has("exit")) | [.worker, .exit, .status]) == [[1, 0, "ok"], [3, 0, "ok"]]' "$T/out" >/dev/null ||
    fail "bad jsonl: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" ssh t070 --worker=all --output-dir "$T/logs" \
    --output raw -- echo out
[ "$(cat "$T/logs/w3.log")" = out ] || fail "w3.log: $(cat "$T/logs/w3.log")"

# Bad values: usage errors, nothing sent.
expect_rc 2 "$TPUCTL" ssh t070 --worker=1-x -- true
assert_grep "worker '1-x'" "$T/err"
expect_rc 2 "$TPUCTL" ssh t070 --worker=7 -- true
expect_rc 2 "$TPUCTL" ssh t070 --worker=all
