#!/bin/sh
# tpuctl scp on a v4-32 (4 workers): a 0-byte file, a 5 MiB file (mode
# 0751) and a --recurse tree up to every worker in parallel, then back
# from every worker into per-worker folders (content and modes compared),
# a download from one worker, a missing remote file (one line, exit 4, no
# partial file) and bad operands (exit 2, nothing sent).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

expect_rc 0 "$TPUCTL" create pod --accelerator-type v4-32
KEY="$T/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$KEY" >/dev/null

mkdir -p "$T/src/tree/sub"
: >"$T/src/empty"
head -c 5242880 /dev/urandom >"$T/src/big"
chmod 751 "$T/src/big"
echo hi >"$T/src/tree/sub/f"
chmod 600 "$T/src/tree/sub/f"
chmod 750 "$T/src/tree/sub"
ln -s /etc "$T/src/tree/link"

expect_rc 0 "$TPUCTL" scp --worker all --ssh-key-file "$KEY" \
    "$T/src/empty" "$T/src/big" pod:
expect_rc 0 "$TPUCTL" scp --worker all --recurse --ssh-key-file "$KEY" \
    "$T/src/tree" pod:
assert_grep '\[w3\] 1 symbolic links or special files skipped' "$T/err"

expect_rc 0 "$TPUCTL" scp --worker all --recurse --ssh-key-file "$KEY" \
    pod:big pod:empty pod:tree "$T/dl"
for w in 0 1 2 3; do
	cmp "$T/src/big" "$T/dl/w$w/big" || fail "w$w: big differs"
	[ -f "$T/dl/w$w/empty" ] || fail "w$w: no empty file"
	[ ! -s "$T/dl/w$w/empty" ] || fail "w$w: empty file not empty"
	[ "$(stat -c %a "$T/dl/w$w/big")" = 751 ] || fail "w$w: mode of big"
	[ "$(stat -c %a "$T/dl/w$w/tree/sub")" = 750 ] ||
	    fail "w$w: mode of tree/sub"
	[ "$(stat -c %a "$T/dl/w$w/tree/sub/f")" = 600 ] ||
	    fail "w$w: mode of tree/sub/f"
	[ "$(cat "$T/dl/w$w/tree/sub/f")" = hi ] || fail "w$w: tree/sub/f"
	[ ! -e "$T/dl/w$w/tree/link" ] || fail "w$w: a link was copied"
done

expect_rc 0 "$TPUCTL" scp --worker 2 --ssh-key-file "$KEY" pod:big "$T/one"
cmp "$T/src/big" "$T/one" || fail "single download differs"

expect_rc 4 "$TPUCTL" scp --ssh-key-file "$KEY" pod:missing "$T/miss"
assert_grep "missing.*no such file" "$T/err"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "not one line: $(cat "$T/err")"
[ ! -e "$T/miss" ] || fail "a partial file was left"
[ ! -e "$T/miss.tpuctl-tmp" ] || fail "a temp file was left"

expect_rc 2 "$TPUCTL" scp --ssh-key-file "$KEY" pod:tree "$T/x"
assert_grep 'is a directory on the worker: use --recurse' "$T/err"
expect_rc 2 "$TPUCTL" scp "$T/src/big" "$T/y"
assert_grep 'exactly one side' "$T/err"
expect_rc 2 "$TPUCTL" scp pod:a other:b
assert_grep 'exactly one side' "$T/err"
expect_rc 2 "$TPUCTL" scp "$T/src/tree" pod:
assert_grep 'is a directory: use --recurse' "$T/err"
expect_rc 2 "$TPUCTL" scp Pod:a "$T/z"
assert_grep "not a node name" "$T/err"
expect_rc 2 "$TPUCTL" scp --worker x "$T/src/big" pod:
