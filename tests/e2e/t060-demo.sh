#!/bin/sh
# README's first command, scripts/demo.sh, runs the main job end to end on
# the emulator: every worker must have read the staged data intact.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

TPUCTL_BIN_DIR=$BIN_DIR expect_rc 0 sh "$SRCDIR/scripts/demo.sh"
assert_grep '^demo: done$' "$T/out"
want=$(sed -n 's/^expected data sha256: //p' "$T/out")
[ -n "$want" ] || fail "no expected checksum in the demo output"
for w in 0 1 2 3; do
	assert_grep "^\[w$w\] worker $w of .*: $want\$" "$T/out"
done
