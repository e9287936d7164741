#!/bin/sh
# shellcheck disable=SC2016,SC2086 # remote shells expand these; $S is two words
# Issue 20 "Standard input": `tpuctl ssh NODE -- cmd` forwards stdin to
# one worker and sends its EOF, as ssh(1) does (binary-safe, 50 MiB with
# flow control); with several workers stdin is not read unless --stdin,
# which sends the same bytes to each; a command that does not read stdin
# neither hangs nor makes tpuctl read forever (/dev/zero); without
# forwarding the remote stdin is at EOF at once; exit statuses pass.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

expect_rc 0 "$TPUCTL" create pod --accelerator-type v4-32
KEY="$T/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$KEY" >/dev/null
S="--ssh-key-file $KEY"
expect_rc 0 "$TPUCTL" ssh pod --worker all $S -- true

# echo hi | tpuctl ssh pod -- cat
printf 'hi\n' >"$T/hi"
expect_rc 0 "$TPUCTL" ssh pod $S --output raw -- cat <"$T/hi"
[ "$(cat "$T/out")" = hi ] || fail "echo hi | ssh -- cat: '$(cat "$T/out")'"

# 50 MiB of random bytes there and back through `cat`, byte for byte
head -c 52428800 /dev/urandom >"$T/big"
sum=$(sha256sum <"$T/big" | cut -d' ' -f1)
expect_rc 0 "$TPUCTL" ssh pod $S --output raw -- cat <"$T/big"
cmp -s "$T/big" "$T/out" || fail "the round trip through cat changed the bytes ($(wc -c <"$T/out") bytes back)"
# cat > file on the worker, then its sha256 there
expect_rc 0 "$TPUCTL" ssh pod $S --worker 2 -- 'cat > /tmp/t413.$PPID && sha256sum < /tmp/t413.$PPID; rm -f /tmp/t413.$PPID' <"$T/big"
assert_grep "^\[w2\] $sum " "$T/out"

# bash -s < job.sh; `read x` with stdin at EOF; an exit status passes
printf 'echo "from job: $1"\nexit 3\n' >"$T/job.sh"
expect_rc 3 "$TPUCTL" ssh pod $S -- sh -s arg1 <"$T/job.sh"
assert_grep '^\[w0\] from job: arg1$' "$T/out"
expect_rc 1 "$TPUCTL" ssh pod $S --command 'read x' </dev/null

# several workers: stdin is not read without --stdin, the remote stdin
# is at EOF at once
printf 'not for them\n' >"$T/in"
expect_rc 0 "$TPUCTL" ssh pod --worker all $S -- 'wc -c' <"$T/in"
[ "$(grep -c '^\[w[0-3]\] 0$' "$T/out")" -eq 4 ] || fail "without --stdin: $(cat "$T/out")"
# --stdin: the same bytes to every worker
head -c 3000000 /dev/urandom >"$T/four"
sum=$(sha256sum <"$T/four" | cut -d' ' -f1)
expect_rc 0 "$TPUCTL" ssh pod --worker all --stdin $S -- sha256sum <"$T/four"
[ "$(grep -c "^\[w[0-3]\] $sum " "$T/out")" -eq 4 ] || fail "--stdin: $(cat "$T/out")"
assert_grep '^4 of 4 workers succeeded' "$T/err"
# --fanout lower than the workers: --stdin still reaches every worker
expect_rc 0 "$TPUCTL" ssh pod --worker all --stdin --fanout 1 $S -- 'wc -c' <"$T/four"
[ "$(grep -c '^\[w[0-3]\] 3000000$' "$T/out")" -eq 4 ] || fail "--stdin --fanout 1: $(cat "$T/out")"

# a command that does not read stdin: no hang, and /dev/zero is not
# read forever
start=$(date +%s)
expect_rc 0 "$TPUCTL" ssh pod $S -- true </dev/zero
expect_rc 8 "$TPUCTL" ssh pod --worker all --stdin $S -- 'exit 5' </dev/zero
[ $(($(date +%s) - start)) -lt 20 ] || fail "/dev/zero: took $(($(date +%s) - start)) s"
assert_grep '^worker 3: exit 5' "$T/err"
expect_rc 0 "$TPUCTL" ssh pod $S -- 'head -c 100000 >/dev/null; echo read' </dev/zero
assert_grep '^\[w0\] read$' "$T/out"

# --stdin is for a command
expect_rc 2 "$TPUCTL" ssh pod --stdin $S
assert_grep 'stdin' "$T/err"
