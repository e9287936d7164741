#!/bin/sh
# Usage errors: one "tpuctl: ..." line plus usage on stderr, exit 2,
# nothing on stdout; help and version work without any configuration.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

expect_rc 2 "$TPUCTL"
assert_grep '^usage: tpuctl' "$T/err"

expect_rc 2 "$TPUCTL" no-such-command
assert_grep "^tpuctl: unknown command 'no-such-command'" "$T/err"
[ ! -s "$T/out" ] || fail "stdout not empty on a usage error"

expect_rc 2 "$TPUCTL" version --no-such-flag
assert_grep "^tpuctl: unknown option '--no-such-flag'" "$T/err"
assert_grep '^usage: tpuctl version' "$T/err"

expect_rc 2 "$TPUCTL" version extra
assert_grep "^tpuctl: unexpected operand 'extra'" "$T/err"

expect_rc 2 "$TPUCTL" --zone
assert_grep "needs a value" "$T/err"

expect_rc 0 "$TPUCTL" help
assert_grep '^  version ' "$T/out"

expect_rc 0 "$TPUCTL" --version
assert_grep 'tpuctl' "$T/out"
assert_grep 'libssh2' "$T/out"

expect_rc 0 "$TPUCTL" version --format json
assert_grep '"libcurl"' "$T/out"

# A write error on stdout is an error, not a silent success.
if [ -w /dev/full ]; then

	set +e
	"$TPUCTL" version >/dev/full 2>"$T/err"
	rc=$?
	set -e
	[ $rc -eq 1 ] || fail "version >/dev/full exited $rc, want 1"
	assert_grep 'write error' "$T/err"
fi
