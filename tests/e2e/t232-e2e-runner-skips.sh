#!/bin/sh
# The e2e runner itself (run.sh, with lib.sh's skip and have_tool), on a
# suite of fake tests: a skip is counted and reported with its reason (not
# as a pass), its log is kept, a name in TESTS that matches no test fails,
# and E2E_NO_SKIP=1 turns a skip into a failure unless skip-allow.txt
# allows its reason.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

S="$T/suite"
mkdir -p "$S" "$T/logs"
cp "$E2E_DIR/run.sh" "$E2E_DIR/lib.sh" "$S/"
printf '%s\n' '# comment' 'sanitizer build' >"$S/skip-allow.txt"
# shellcheck disable=SC2016 # expanded by the fake tests
hdr='. "$(dirname "$0")/lib.sh"'
printf '%s\n' "$hdr" 'exit 0' >"$S/t001-pass.sh"
printf '%s\n' "$hdr" 'skip "needs a unicorn"' >"$S/t002-skip.sh"
printf '%s\n' "$hdr" \
    'if have_tool no-such-tool-t232 nopkg "the part"; then fail ran; fi' \
    'exit 0' >"$S/t003-partial.sh"
printf '%s\n' "$hdr" 'fail "broken"' >"$S/t004-fail.sh"
printf '%s\n' "$hdr" 'skip "C15: cannot wrap a sanitizer build"' \
    >"$S/t005-allowed.sh"
# an old-style skip: a SKIP line and exit 0
# shellcheck disable=SC2016 # expanded by the fake test
printf '%s\n' "$hdr" 'echo "SKIP: $TEST_NAME: old style"' 'exit 0' \
    >"$S/t006-oldskip.sh"

# runs NAME [ENV=V...]: run the fake suite, output in $T/NAME.out
runs() {
	_n=$1
	shift
	set +e
	env E2E_NO_SKIP=0 E2E_LOG_DIR="$T/logs" TPUCTL_BIN_DIR="$BIN_DIR" "$@" \
	    sh "$S/run.sh" >"$T/$_n.out" 2>&1
	echo $? >"$T/$_n.rc"
	set -e
}

runs all TESTS="t001 t002 t003 t005 t006"
[ "$(cat "$T/all.rc")" = 0 ] || fail "skips made the run fail: $(cat "$T/all.out")"
assert_grep '^e2e: 1 passed, 0 failed, 4 skipped$' "$T/all.out"
assert_grep '^ok   t001-pass ' "$T/all.out"
assert_grep '^SKIP t002-skip \([0-9]+ s\): needs a unicorn$' "$T/all.out"
assert_grep '^SKIP t003-partial .*: the part needs no-such-tool-t232 \(Debian package nopkg\)$' "$T/all.out"
assert_grep '^SKIP t006-oldskip .*: old style$' "$T/all.out"
assert_grep 'needs a unicorn' "$T/logs/e2e-t002-skip.log"
[ ! -e "$T/logs/e2e-t001-pass.log" ] || fail "a passed test's log was kept"
# CI reads "N passed, N failed"
grep -Eq '[0-9]+ passed, [0-9]+ failed' "$T/all.out" || fail "unparseable"

runs fail TESTS="t001 t004"
[ "$(cat "$T/fail.rc")" = 1 ] || fail "a failed test exited $(cat "$T/fail.rc")"
assert_grep '^e2e: 1 passed, 1 failed, 0 skipped$' "$T/fail.out"
assert_grep 'FAIL: t004-fail: broken' "$T/logs/e2e-t004-fail.log"

runs typo TESTS="t001 t999"
[ "$(cat "$T/typo.rc")" = 1 ] || fail "TESTS=t999 exited $(cat "$T/typo.rc")"
assert_grep '^FAIL t999 \(no such test' "$T/typo.out"
assert_grep '^e2e: 1 passed, 1 failed, 0 skipped$' "$T/typo.out"

runs strict TESTS="t001 t002 t003 t005" E2E_NO_SKIP=1
[ "$(cat "$T/strict.rc")" = 1 ] || fail "E2E_NO_SKIP=1 exited $(cat "$T/strict.rc")"
assert_grep '^FAIL t002-skip .*E2E_NO_SKIP=1.*needs a unicorn$' "$T/strict.out"
assert_grep '^FAIL t003-partial ' "$T/strict.out"
assert_grep '^SKIP t005-allowed .*sanitizer build$' "$T/strict.out"
assert_grep '^e2e: 1 passed, 2 failed, 1 skipped$' "$T/strict.out"

# The real suite's skips are all in the fake suite's shape: every skip in
# tests/e2e goes through skip or have_tool (no "exit 0" after a SKIP line,
# no tool test that drops checks silently).
if grep -n 'echo "SKIP' "$E2E_DIR"/t[0-9]*.sh | grep -v "^$E2E_DIR/$TEST_NAME.sh:"; then
	fail "a test prints SKIP by hand: use skip or have_tool"
fi
if grep -nE 'if (! )?command -v|if \[ -x /' "$E2E_DIR"/t[0-9]*.sh; then
	fail "a test drops checks silently when a tool is missing: use have_tool"
fi
exit 0
