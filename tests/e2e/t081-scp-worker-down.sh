#!/bin/sh
# tpuctl scp with a worker down (connections refused): the upload and the
# download finish on the other workers, the failure is one "[w1] error"
# line, exit 8; with only the down worker selected, exit 9.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_tpu.sh
. "$(dirname "$0")/lib_tpu.sh"
emu_start
tpu_setup

expect_rc 0 "$TPUCTL" create pod --accelerator-type v4-32
KEY="$T/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$KEY" >/dev/null
echo "payload $$" >"$T/f"
# keys and host keys in place while every worker is up
expect_rc 0 "$TPUCTL" scp --worker all --ssh-key-file "$KEY" "$T/f" pod:f

emu_event "{\"event\":\"worker-down\",\"node\":\"$P/nodes/pod\",\"worker\":1}"
[ "$CODE" = 200 ] || fail "worker-down: $CODE $(cat "$T/resp")"

echo "second $$" >"$T/f"
expect_rc 8 "$TPUCTL" scp --worker all --ssh-key-file "$KEY" "$T/f" pod:f2
assert_grep '^\[w1\] error: ' "$T/err"
assert_no_grep '^\[w[023]\]' "$T/err"

expect_rc 8 "$TPUCTL" scp --worker all --ssh-key-file "$KEY" pod:f2 "$T/dl"
for w in 0 2 3; do
	cmp "$T/f" "$T/dl/w$w/f2" || fail "w$w: f2 differs"
done
[ ! -e "$T/dl/w1/f2" ] || fail "w1 is down but has a file"

expect_rc 9 "$TPUCTL" scp --worker 1 --ssh-key-file "$KEY" "$T/f" pod:f3
