#!/bin/sh
# The e2e runner side by side (run.sh with E2E_JOBS, serial.txt, lib.sh's
# left_behind), on a suite of fake tests: as root with unshare the tests
# overlap, each in a network namespace of its own; serial.txt's test runs
# alone; a failed test's output is printed in one piece; every test gets
# its results line with what it left, and a process it left running is
# counted and killed.  Not root: the tests run one at a time.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

S="$T/suite"
mkdir -p "$S" "$T/logs"
cp "$E2E_DIR/run.sh" "$E2E_DIR/lib.sh" "$S/"
: >"$S/skip-allow.txt"
# shellcheck disable=SC2016 # expanded by the fake tests
hdr='. "$(dirname "$0")/lib.sh"'
# t001-t003 note when they run; t002 fails with three lines of output
for i in 1 2 3; do
	# shellcheck disable=SC2016 # expanded by the fake tests
	printf '%s\n' "$hdr" \
	    "echo \"start \$(date +%s%N)\" >>\"$T/t00$i.times\"" \
	    "readlink /proc/\$\$/ns/net >\"$T/t00$i.ns\"" \
	    'sleep 1' \
	    "echo \"end \$(date +%s%N)\" >>\"$T/t00$i.times\"" \
	    >"$S/t00$i-side.sh"
done
printf '%s\n' 'echo "line one of t002"' 'echo "line two of t002"' \
    'fail "t002 broken"' >>"$S/t002-side.sh"
# t004 leaves a process behind (found by the namespace or as a child)
# shellcheck disable=SC2016 # expanded by the fake test
printf '%s\n' "$hdr" 'sleep 420.$$ &' "echo \$! >\"$T/t004.pid\"" 'exit 0' \
    >"$S/t004-leaves.sh"
# t005 is serial: nothing else runs while it does
printf '%s\n' "$hdr" "echo \"start \$(date +%s%N)\" >>\"$T/t005.times\"" \
    'sleep 1' "echo \"end \$(date +%s%N)\" >>\"$T/t005.times\"" \
    >"$S/t005-alone.sh"
printf '%s\n' '# comment' 't005 # alone' >"$S/serial.txt"

set +e
env TESTS= E2E_SAN_ONLY=0 E2E_NO_SKIP=0 E2E_LOG_DIR="$T/logs" E2E_RESULTS="$T/results" \
    E2E_JOBS=3 TPUCTL_BIN_DIR="$BIN_DIR" sh "$S/run.sh" >"$T/out" 2>&1
rc=$?
set -e
[ $rc = 1 ] || fail "the run exited $rc: $(cat "$T/out")"
assert_grep '^e2e: 4 passed, 1 failed, 0 skipped$' "$T/out"
# the failed test's lines, together, right after its FAIL line
sed -n '/^FAIL t002-side/,/log kept/p' "$T/out" >"$T/block"
assert_grep '^    line one of t002$' "$T/block"
assert_grep '^    line two of t002$' "$T/block"
assert_grep 'FAIL: t002-side: t002 broken' "$T/block"
if tail -n +2 "$T/block" | grep -Eq '^(ok|FAIL|SKIP) '; then
	fail "another test's line inside t002's block: $(cat "$T/block")"
fi
[ "$(wc -l <"$T/results")" = 5 ] || fail "results: $(cat "$T/results")"
for t in t001-side t003-side t004-leaves t005-alone; do
	grep -Eq "^$t ok [0-9]+ 0 nodes=0,qrs=0,ops=0,buckets=0,objects=0,uploads=0,parts=0,tmpfiles=0,procs=[01]$" \
	    "$T/results" || fail "no results line for $t: $(cat "$T/results")"
done
assert_grep '^t004-leaves ok .*,procs=1$' "$T/results"
pid=$(cat "$T/t004.pid")
if kill -0 "$pid" 2>/dev/null; then
	kill "$pid"
	fail "t004's sleep still runs"
fi

# ns TIMES: first start and last end, in ns
first() { sed -n 's/^start //p' "$1" | head -1; }
last() { sed -n 's/^end //p' "$1" | tail -1; }
# t005 alone: the others started after it ended
for i in 1 2 3; do
	[ "$(first "$T/t00$i.times")" -gt "$(last "$T/t005.times")" ] ||
	    fail "t00$i started while serial t005 ran"
done
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null &&
    unshare -n true 2>/dev/null; then
	# side by side: t001 and t003 overlap, in namespaces of their own
	[ "$(first "$T/t003.times")" -lt "$(last "$T/t001.times")" ] ||
	    fail "t001 and t003 did not overlap with E2E_JOBS=3"
	me=$(readlink /proc/$$/ns/net)
	for i in 1 2 3; do
		[ "$(cat "$T/t00$i.ns")" != "$me" ] ||
		    fail "t00$i ran in the runner's network namespace"
	done
	[ "$(cat "$T/t001.ns")" != "$(cat "$T/t003.ns")" ] ||
	    fail "t001 and t003 shared a network namespace"
else
	assert_grep '^e2e: one test at a time' "$T/out"
	[ "$(first "$T/t003.times")" -gt "$(last "$T/t001.times")" ] ||
	    fail "t001 and t003 overlapped without network namespaces"
fi
exit 0
