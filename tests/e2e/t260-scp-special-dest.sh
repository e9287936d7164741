#!/bin/sh
# t260: "tpuctl scp --worker 0 n:path DEST" to a DEST that exists and is
# not a regular file is written in place, as cp(1) and data cp (t233) do,
# never renamed over (issue 19 defect 1, scp half): a pipe behind a
# /proc/self/fd/1 link (what /dev/stdout is) gets the bytes in order, a
# FIFO stays a FIFO, a full character device is exit 1 with the write
# error and stays a device; a regular file is still
# replaced through DEST.tpuctl-tmp (a new inode); nothing is left beside
# any of them.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "mknod of a character device needs root"

emu_start
expect_rc 0 "$TPUCTL" create pod --accelerator-type v4-8
KEY="$T/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$KEY" >/dev/null
head -c 3000000 /dev/urandom >"$T/big"
expect_rc 0 "$TPUCTL" scp --worker 0 --ssh-key-file "$KEY" "$T/big" pod:
mkdir -p "$T/d"

# no_tmp PATH: nothing was created next to PATH
no_tmp() {
	[ ! -e "$1.tpuctl-tmp" ] || fail "$1.tpuctl-tmp was created"
}

# /dev/stdout's shape (a link to /proc/self/fd/1) under $T, never the
# real one (a regression would replace the machine's /dev/stdout), on a
# pipe and on a full device; the link stays a link
ln -s /proc/self/fd/1 "$T/d/stdout"
set +e
"$TPUCTL" scp --worker 0 --ssh-key-file "$KEY" pod:big "$T/d/stdout" \
    2>"$T/err" | cat >"$T/piped2"
set -e
cmp -s "$T/big" "$T/piped2" || fail "the pipe got other bytes: $(cat "$T/err")"
[ -L "$T/d/stdout" ] || fail "the stdout link was replaced"
no_tmp "$T/d/stdout"
set +e
"$TPUCTL" scp --worker 0 --ssh-key-file "$KEY" pod:big "$T/d/stdout" \
    >/dev/full 2>"$T/err"
rc=$?
set -e
[ $rc -eq 1 ] || fail "scp to a stdout on /dev/full exited $rc, want 1: $(cat "$T/err")"
assert_grep 'No space left on device' "$T/err"
[ -L "$T/d/stdout" ] || fail "the stdout link was replaced"
no_tmp "$T/d/stdout"

# a full device: the write error, exit 1, still a character device
mknod "$T/d/fulldev" c 1 7
expect_rc 1 "$TPUCTL" scp --worker 0 --ssh-key-file "$KEY" pod:big \
    "$T/d/fulldev"
assert_grep 'No space left on device' "$T/err"
[ -c "$T/d/fulldev" ] || fail "fulldev is no longer a character device"
no_tmp "$T/d/fulldev"

# a FIFO with a reader: every byte, in order; still a FIFO
mkfifo "$T/d/fifo"
cat "$T/d/fifo" >"$T/fromfifo" &
reader=$!
expect_rc 0 "$TPUCTL" scp --worker 0 --ssh-key-file "$KEY" pod:big \
    "$T/d/fifo"
wait $reader
cmp -s "$T/big" "$T/fromfifo" || fail "the FIFO got other bytes"
[ -p "$T/d/fifo" ] || fail "the FIFO was replaced"
no_tmp "$T/d/fifo"

# a regular file is still replaced atomically (a new inode)
printf 'x\n' >"$T/d/plain"
before=$(stat -c %i "$T/d/plain")
expect_rc 0 "$TPUCTL" scp --worker 0 --ssh-key-file "$KEY" pod:big \
    "$T/d/plain"
[ "$(stat -c %i "$T/d/plain")" != "$before" ] || fail "plain file written in place"
cmp -s "$T/big" "$T/d/plain" || fail "plain file contents"
no_tmp "$T/d/plain"
exit 0
