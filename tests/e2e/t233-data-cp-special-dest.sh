#!/bin/sh
# t233: "tpuctl data cp" to a destination that exists and is not a regular
# file is written in place, as cp(1) does, never renamed over (issue 19
# defect 1): a character device stays one (a full one is exit 1 with the
# write error), a FIFO and a pipe behind a /proc/self/fd/1 link (what
# /dev/stdout is) get the bytes in order, a symbolic link to a file is
# written through; no .tpuctl-tmp is created next to any of them.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "mknod of a character device needs root"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-sd
mkdir -p "$T/d"
printf 'hello\n' >"$T/small"
head -c 3000000 /dev/urandom >"$T/big"
expect_rc 0 "$TPUCTL" data cp "$T/small" gs://e2e-sd/a/b.txt
expect_rc 0 "$TPUCTL" data cp "$T/big" gs://e2e-sd/big

# no_tmp PATH: nothing was created next to PATH
no_tmp() {
	[ ! -e "$1.tpuctl-tmp" ] || fail "$1.tpuctl-tmp was created"
}

# a full device: the write error, exit 1, still a character device
mknod "$T/d/fulldev" c 1 7
expect_rc 1 "$TPUCTL" data cp gs://e2e-sd/a/b.txt "$T/d/fulldev"
assert_grep 'No space left on device' "$T/err"
[ -c "$T/d/fulldev" ] || fail "fulldev is no longer a character device"
no_tmp "$T/d/fulldev"
expect_rc 1 "$TPUCTL" data cp --parallel 1 gs://e2e-sd/big "$T/d/fulldev"
[ -c "$T/d/fulldev" ] || fail "fulldev replaced by the big download"

# a null device: exit 0, still a character device
mknod "$T/d/nulldev" c 1 3
expect_rc 0 "$TPUCTL" data cp gs://e2e-sd/big "$T/d/nulldev"
[ -c "$T/d/nulldev" ] || fail "nulldev is no longer a character device"
no_tmp "$T/d/nulldev"

# a FIFO with a reader: every byte, in order; still a FIFO
mkfifo "$T/d/fifo"
cat "$T/d/fifo" >"$T/fromfifo" &
reader=$!
expect_rc 0 "$TPUCTL" data cp gs://e2e-sd/big "$T/d/fifo"
wait $reader
cmp -s "$T/big" "$T/fromfifo" || fail "the FIFO got other bytes"
[ -p "$T/d/fifo" ] || fail "the FIFO was replaced"
no_tmp "$T/d/fifo"

# /dev/stdout's shape (a link to /proc/self/fd/1), on a pipe and on a
# full device; the link stays a link
ln -s /proc/self/fd/1 "$T/d/stdout"
set +e
"$TPUCTL" data cp gs://e2e-sd/big "$T/d/stdout" 2>"$T/err" | cat >"$T/piped"
set -e
cmp -s "$T/big" "$T/piped" || fail "the pipe got other bytes: $(cat "$T/err")"
[ -L "$T/d/stdout" ] || fail "the stdout link was replaced"
no_tmp "$T/d/stdout"
set +e
"$TPUCTL" data cp gs://e2e-sd/a/b.txt "$T/d/stdout" >/dev/full 2>"$T/err"
rc=$?
set -e
[ $rc -eq 1 ] || fail "cp to a stdout on /dev/full exited $rc, want 1"
assert_grep 'No space left on device' "$T/err"
[ -L "$T/d/stdout" ] || fail "the stdout link was replaced"

# a link to a regular file is written through, and stays a link
printf 'old contents, longer than the new\n' >"$T/target"
ln -s "$T/target" "$T/d/link"
expect_rc 0 "$TPUCTL" data cp gs://e2e-sd/a/b.txt "$T/d/link"
[ -L "$T/d/link" ] || fail "the link was replaced by a file"
cmp -s "$T/small" "$T/target" || fail "the link's target: $(cat "$T/target")"
no_tmp "$T/d/link"

# a regular file is still replaced atomically (a new inode)
printf 'x\n' >"$T/d/plain"
before=$(stat -c %i "$T/d/plain")
expect_rc 0 "$TPUCTL" data cp gs://e2e-sd/a/b.txt "$T/d/plain"
[ "$(stat -c %i "$T/d/plain")" != "$before" ] || fail "plain file written in place"
cmp -s "$T/small" "$T/d/plain" || fail "plain file contents"
exit 0
