#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# Issue 17: as ssh(1) does, exactly one operand after -- is a command
# line for the remote shell (`-- 'cd /tmp && pwd'` runs on every worker);
# two or more operands are each quoted and arrive byte for byte; an
# empty lone operand is refused (exit 2, nothing sent).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

expect_rc 0 "$TPUCTL" create pod --accelerator-type v4-32
KEY="$T/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$KEY" >/dev/null

expect_rc 0 "$TPUCTL" ssh pod --worker=all --ssh-key-file "$KEY" -- \
    'cd /tmp && pwd'
for w in 0 1 2 3; do
	assert_grep "^\[w$w\] /tmp\$" "$T/out"
done
[ "$(wc -l <"$T/out")" -eq 4 ] || fail "not 4 lines: $(cat "$T/out")"

# the remote shell expands a lone operand: variables, pipes, exit status
expect_rc 0 "$TPUCTL" ssh pod --worker=2 --ssh-key-file "$KEY" -- \
    'w=$(curl -s -H "Metadata-Flavor: Google" "http://$GCE_METADATA_HOST/computeMetadata/v1/instance/attributes/agent-worker-number"); echo "w=$w" | tr w W'
[ "$(cat "$T/out")" = "[w2] W=2" ] || fail "lone operand: $(cat "$T/out")"
expect_rc 3 "$TPUCTL" ssh pod --worker=1 --ssh-key-file "$KEY" -- 'exit 3'
# the same without --
expect_rc 0 "$TPUCTL" ssh pod --worker=0 --ssh-key-file "$KEY" 'cd / && pwd'
[ "$(cat "$T/out")" = "[w0] /" ] || fail "without --: $(cat "$T/out")"

# two or more: each quoted, nothing expanded remotely
expect_rc 0 "$TPUCTL" ssh pod --worker=0 --output raw --ssh-key-file "$KEY" \
    -- printf '%s|' 'cd /tmp && pwd' '$HOME' 'a b' '; touch pwned'
[ "$(cat "$T/out")" = 'cd /tmp && pwd|$HOME|a b|; touch pwned|' ] ||
    fail "quoted operands: $(cat "$T/out")"
expect_rc 127 "$TPUCTL" ssh pod --worker=0 --ssh-key-file "$KEY" -- \
    'cd /tmp && pwd' x
expect_rc 0 "$TPUCTL" ssh pod --worker=0 --output raw --ssh-key-file "$KEY" \
    --command 'ls pwned 2>/dev/null; true'
[ ! -s "$T/out" ] || fail "a quoted operand ran: $(cat "$T/out")"

expect_rc 2 "$TPUCTL" ssh pod --worker=0 --ssh-key-file "$KEY" -- ''
assert_grep '^tpuctl: empty remote command after --$' "$T/err"
