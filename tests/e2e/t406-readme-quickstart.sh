#!/bin/sh
# Issue 20: README.md's quickstart, extracted between its markers, runs as
# written in a fresh HOME (sh -e: every line must succeed), so the README
# cannot drift from what tpuctl does; the emulator it starts is stopped by
# its last line.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

sed -n '/^<!-- quickstart:begin -->$/,/^<!-- quickstart:end -->$/p' \
    "$SRCDIR/README.md" | sed '1,2d;$d' | sed '$d' >"$T/quickstart.sh"
[ "$(wc -l <"$T/quickstart.sh")" -ge 8 ] ||
    fail "no quickstart between the markers: $(cat "$T/quickstart.sh")"
grep -q '^tpuctl-emulator serve' "$T/quickstart.sh" || fail "no emulator start"
grep -q '^kill ' "$T/quickstart.sh" || fail "no emulator stop"

# A fresh HOME (lib.sh made one); the shell starts at the top of the tree
# with nothing of tpuctl on PATH.
EMU_DIR="$HOME/tpuctl-emu"
set +e
(cd "$SRCDIR" && env -u TPUCTL_BIN_DIR PATH=/usr/bin:/bin \
    sh -e "$T/quickstart.sh") >"$T/out" 2>"$T/err"
rc=$?
set -e
pid=$(cat "$EMU_DIR/emulator.pid" 2>/dev/null || true)
i=0
while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do
	sleep 0.1 # SIGTERM: the emulator stops its workers first
	i=$((i + 1))
done
if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
	EMU_PID=$pid # lib.sh's cleanup stops it
	[ $rc -ne 0 ] || fail "the quickstart left the emulator running"
fi
if [ $rc -ne 0 ]; then
	echo "--- stdout" >&2
	cat "$T/out" >&2
	echo "--- stderr" >&2
	cat "$T/err" >&2
	tail -20 "$HOME/tpuctl-emu.log" >&2 2>/dev/null || true
	fail "the README quickstart failed (exit $rc)"
fi
# What the user sees.
assert_grep '^my-tpu +us-central2-b +v4-8 +READY' "$T/out"
assert_grep '^hello$' "$T/out"
assert_grep "created node 'my-tpu'" "$T/err"
assert_grep "deleted node 'my-tpu'" "$T/err"
[ ! -e "$SRCDIR/hello.txt" ] || fail "the quickstart wrote into the tree"
