#!/bin/sh
# Run every end-to-end test (tests/e2e/t*.sh), each with a time limit, and
# close with the slowest ten and the line "e2e: N passed, N failed,
# N skipped".
#   TESTS="t001 t010"  selects tests by number or full name; a name that
#                      matches no test is a failure (a typo runs nothing).
#   E2E_SAN_ONLY=1     runs only the tests listed in san.txt (the
#                      sanitizer pass of .ci/run; tests/reliability/
#                      san-coverage.sh checks that they reach every
#                      command); with TESTS, both must select a test.
#   E2E_RESULTS=FILE   appends one line "NAME ok|FAIL|SKIP SECONDS LEAKS"
#                      per test to FILE (read by make report; LEAKS: the
#                      LeakSanitizer reports in its log).
#   E2E_NO_SKIP=1      a skipped test fails, unless its reason matches a
#                      line of skip-allow.txt (what CI's machine cannot do).
#   E2E_TIMEOUT        seconds per test (300).
#   E2E_LOG_DIR        where a failed or skipped test's log is kept, as
#                      e2e-NAME.log (default: a new $TMPDIR/e2e-logs.XXXXXX,
#                      removed at the end when it holds nothing).
# A test skips by exiting 77 after printing "SKIP: name: reason" (lib.sh's
# skip), or skips a part of itself by printing such a line and going on
# (lib.sh's have_tool): either way it is counted as skipped, not passed.
set -u

dir=$(cd "$(dirname "$0")" && pwd)
limit=${E2E_TIMEOUT:-300}
# a directory of this run's own: runs side by side never share a log
logdir=${E2E_LOG_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/e2e-logs.XXXXXX")}
allow="$dir/skip-allow.txt"
pass=0
failed=0
skipped=0
failures=""
skips=""
times="$logdir/e2e-times.$$"
: >"$times"

# allowed REASON: the reason matches an ERE line of skip-allow.txt (its
# lines starting with # and blank lines are comments).
allowed() {
	[ -f "$allow" ] || return 1
	grep -v -e '^#' -e '^[[:space:]]*$' "$allow" >"$logdir/e2e-allow.$$" ||
	    true
	if [ -s "$logdir/e2e-allow.$$" ] &&
	    printf '%s\n' "$1" | grep -Eqf "$logdir/e2e-allow.$$"; then
		rm -f "$logdir/e2e-allow.$$"
		return 0
	fi
	rm -f "$logdir/e2e-allow.$$"
	return 1
}

# result NAME STATUS SECONDS: one line of $E2E_RESULTS (uses $log).
result() {
	[ -n "${E2E_RESULTS:-}" ] || return 0
	echo "$1 $2 $3 $(grep -c 'ERROR: LeakSanitizer' "$log" 2>/dev/null)" \
	    >>"$E2E_RESULTS"
}

# Every name in TESTS must select a test.
if [ -n "${TESTS:-}" ]; then
	for want in $TESTS; do
		found=0
		for t in "$dir"/t*.sh; do
			name=$(basename "$t" .sh)
			if [ "$want" = "${name%%-*}" ] || [ "$want" = "$name" ]; then
				found=1
				break
			fi
		done
		if [ $found -eq 0 ]; then
			failed=$((failed + 1))
			failures="$failures $want"
			echo "FAIL $want (no such test in $dir)"
		fi
	done
fi

for t in "$dir"/t*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	if [ -n "${TESTS:-}" ]; then
		case " $TESTS " in
		*" ${name%%-*} "* | *" $name "*) ;;
		*) continue ;;
		esac
	fi
	if [ "${E2E_SAN_ONLY:-0}" = 1 ] &&
	    ! sed 's/[[:space:]]*#.*//' "$dir/san.txt" |
	    grep -qx -e "${name%%-*}" -e "$name"; then
		continue
	fi
	log="$logdir/e2e-$name.log"
	start=$(date +%s)
	timeout -k 10 "$limit" sh "$t" >"$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	echo "$secs $name" >>"$times"
	reasons=$(sed -n 's/^SKIP: [^:]*: //p' "$log")
	if [ $rc -eq 0 ] && [ -z "$reasons" ]; then
		pass=$((pass + 1))
		echo "ok   $name ($secs s)"
		result "$name" ok "$secs"
		rm -f "$log"
		continue
	fi
	if [ $rc -eq 0 ] || [ $rc -eq 77 ]; then
		[ -n "$reasons" ] || reasons="(the test gave no reason)"
		bad=""
		if [ "${E2E_NO_SKIP:-0}" = 1 ]; then
			bad=$(printf '%s\n' "$reasons" | while IFS= read -r r; do
				allowed "$r" || printf '%s\n' "$r"
			done)
		fi
		if [ -z "$bad" ]; then
			skipped=$((skipped + 1))
			skips="$skips $name"
			printf '%s\n' "$reasons" | while IFS= read -r r; do
				echo "SKIP $name ($secs s): $r"
			done
			echo "     log kept: $log"
			result "$name" SKIP "$secs"
			continue
		fi
		printf '%s\n' "$bad" | while IFS= read -r r; do
			echo "FAIL $name ($secs s): skipped with E2E_NO_SKIP=1," \
			    "reason not in $allow: $r"
		done
	else
		echo "FAIL $name ($secs s)"
	fi
	failed=$((failed + 1))
	failures="$failures $name"
	result "$name" FAIL "$secs"
	sed 's/^/    /' "$log" | tail -40
	echo "     log kept: $log"
done

if [ -s "$times" ]; then
	echo "slowest 10 (s):"
	sort -rn "$times" | head -10 | sed 's/^/    /'
	echo "total: $(awk '{ s += $1 } END { print s }' "$times") s"
fi
rm -f "$times"
[ -n "${E2E_LOG_DIR:-}" ] || rmdir "$logdir" 2>/dev/null || true
[ -z "$skips" ] || echo "skipped:$skips"
[ -z "$failures" ] || echo "failed:$failures"
echo "e2e: $pass passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
