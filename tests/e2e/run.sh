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
#   E2E_JOBS=N         tests run N at a time (default: the number of
#                      processors plus one, at most 4), each in a network
#                      namespace of its own (unshare -n, loopback up), so
#                      that their emulators, ports and worker addresses
#                      never meet.  That needs root and unshare: without
#                      them the tests run one at a time whatever N is.
#                      The tests of serial.txt (timing-sensitive or
#                      machine-wide) run alone, before the others, in
#                      the caller's network namespace.  A
#                      test's lines are printed when it ends, in one
#                      piece.
#   E2E_RESULTS=FILE   appends one line "NAME ok|FAIL|SKIP SECONDS LEAKS
#                      LEFT" per test to FILE (read by make report;
#                      LEAKS: the LeakSanitizer reports in its log; LEFT:
#                      what lib.sh found left at the test's end, see
#                      tests/reliability/README.md).
#   E2E_NO_SKIP=1      a skipped test fails, unless its reason matches a
#                      line of skip-allow.txt (what CI's machine cannot do).
#   E2E_TIMEOUT        seconds per test (300; 1200 with E2E_WRAP=valgrind).
#   E2E_WRAP=valgrind|fiu  every tpuctl invocation of every test runs
#                      through tests/reliability/wrap.c (lib.sh points
#                      $TPUCTL at it; the emulator and other clients are
#                      not wrapped): under valgrind's memcheck (G5, S12)
#                      or under fiu-run's random POSIX I/O failures at 1%
#                      (G2), a seed per invocation from E2E_WRAP_SEED (the
#                      run's, printed; default from the clock).  What is
#                      judged is each invocation, not the tests' own
#                      results (I/O failures fail commands; valgrind is
#                      slow): see wrap.c; with fiu also a test that left
#                      a composite upload's part object (left_behind).
#                      The run prints each bad invocation and closes with
#                      "G5: N invocations, M bad" (valgrind) or "G2: ..."
#                      (fiu), and fails when M > 0 or N = 0; failed tests
#                      are listed apart.  E2E_WRAP_BOUND: seconds after
#                      which an invocation counts as hung and is killed
#                      (fiu 240, valgrind 0: none).  Plain build only; no
#                      results file is written.
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

# The wrapper modes (E2E_WRAP): the wrapper, built here, and its log dir.
wrap=${E2E_WRAP:-}
unset E2E_WRAP E2E_WRAP_BIN E2E_WRAP_MODE E2E_WRAP_DIR
case $wrap in
'') ;;
valgrind | fiu)
	tool=valgrind row=G5
	[ "$wrap" = valgrind ] || tool=fiu-run row=G2
	command -v "$tool" >/dev/null ||
	    { echo "run.sh: E2E_WRAP=$wrap needs $tool" >&2; exit 2; }
	real="${TPUCTL_BIN_DIR:-$dir/../../bin}/tpuctl"
	if ldd "$real" 2>/dev/null | grep -q libasan; then
		echo "run.sh: E2E_WRAP=$wrap needs the plain build, not $real" >&2
		exit 2
	fi
	E2E_WRAP_DIR="$logdir/wrap"
	mkdir -p "$E2E_WRAP_DIR/bin"
	E2E_WRAP_BIN="$E2E_WRAP_DIR/bin/tpuctl"
	${CC:-cc} -O2 -o "$E2E_WRAP_BIN" "$dir/../reliability/wrap.c" || exit 2
	E2E_WRAP_MODE=$wrap E2E_WRAP_SEED=${E2E_WRAP_SEED:-$(date +%s)}
	E2E_WRAP_SUPP="$dir/../reliability/valgrind.supp"
	if [ "$wrap" = valgrind ]; then
		E2E_WRAP_BOUND=${E2E_WRAP_BOUND:-0}
		limit=${E2E_TIMEOUT:-1200}
	else
		E2E_WRAP_BOUND=${E2E_WRAP_BOUND:-240}
	fi
	export E2E_WRAP_BIN E2E_WRAP_MODE E2E_WRAP_DIR E2E_WRAP_SEED \
	    E2E_WRAP_SUPP E2E_WRAP_BOUND
	: >"$E2E_WRAP_DIR/invocations"
	: >"$E2E_WRAP_DIR/bad"
	unset E2E_RESULTS # make report reads the plain runs' results only
	echo "$row: every tpuctl invocation under $wrap, seed $E2E_WRAP_SEED"
	;;
*) echo "run.sh: E2E_WRAP='$wrap' is not valgrind or fiu" >&2; exit 2 ;;
esac

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
	_left=$(cat "$logdir/e2e-$1.left" 2>/dev/null) || _left=-
	rm -f "$logdir/e2e-$1.left"
	if [ "$wrap" = fiu ]; then
		case ,$_left, in
		*,parts=[1-9]*)
			echo "$1 - seed=- left at its end: $_left" \
			    >>"$E2E_WRAP_DIR/bad" ;;
		esac
	fi
	[ -n "${E2E_RESULTS:-}" ] || return 0
	echo "$1 $2 $3 $(grep -c 'ERROR: LeakSanitizer' "$log" 2>/dev/null)" \
	    "${_left:--}" >>"$E2E_RESULTS"
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

# listed FILE NAME: NAME (tNNN or its full name) is a line of FILE, whose
# text after a # is a comment.
listed() {
	sed 's/[[:space:]]*#.*//' "$1" | grep -qx -e "${2%%-*}" -e "$2"
}

# The tests to run, serial.txt's first.
: >"$logdir/e2e-serial.$$"
: >"$logdir/e2e-parallel.$$"
for t in "$dir"/t*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	if [ -n "${TESTS:-}" ]; then
		case " $TESTS " in
		*" ${name%%-*} "* | *" $name "*) ;;
		*) continue ;;
		esac
	fi
	if [ "${E2E_SAN_ONLY:-0}" = 1 ] && ! listed "$dir/san.txt" "$name"; then
		continue
	fi
	if [ -f "$dir/serial.txt" ] && listed "$dir/serial.txt" "$name"; then
		echo "$name" >>"$logdir/e2e-serial.$$"
	else
		echo "$name" >>"$logdir/e2e-parallel.$$"
	fi
done

jobs=${E2E_JOBS:-}
if [ -z "$jobs" ]; then
	jobs=$(($(nproc 2>/dev/null || echo 1) + 1))
	[ "$jobs" -le 4 ] || jobs=4
fi
case $jobs in
'' | *[!0-9]*) echo "run.sh: E2E_JOBS='$jobs' is not a number" >&2; exit 2 ;;
esac
[ "$jobs" -ge 1 ] || jobs=1
# Side by side only when each test gets a network namespace of its own.
netns=0
if [ "$jobs" -gt 1 ] && [ -s "$logdir/e2e-parallel.$$" ]; then
	if [ "$(id -u)" = 0 ] && command -v ip >/dev/null &&
	    unshare -n -- sh -c 'ip link set lo up' 2>/dev/null; then
		netns=1
	else
		[ "$(wc -l <"$logdir/e2e-parallel.$$")" -lt 2 ] ||
		    echo "e2e: one test at a time (side by side, E2E_JOBS=$jobs, needs root, unshare -n and ip)"
		jobs=1
	fi
fi

# launch NAME NETNS: start test NAME in the background, in a network
# namespace of its own when NETNS is 1; its exit status and seconds go to
# $logdir/e2e-NAME.rc when it ends.  timeout(1) gives the test the default
# SIGINT and SIGQUIT that a background job of sh lost.
launch() {
	(
		log="$logdir/e2e-$1.log"
		st=$(date +%s)
		E2E_LEFT="$logdir/e2e-$1.left" E2E_NETNS=$2
		export E2E_LEFT E2E_NETNS
		# (a test of this runner, t232, t420, runs it on fake tests)
		unset E2E_RESULTS
		if [ "$2" = 1 ]; then
			# shellcheck disable=SC2016 # $0 is the inner shell's
			timeout -k 10 "$limit" unshare -n -- \
			    sh -c 'ip link set lo up && exec sh "$0"' \
			    "$dir/$1.sh" >"$log" 2>&1 &
		else
			timeout -k 10 "$limit" sh "$dir/$1.sh" >"$log" 2>&1 &
		fi
		echo $! >"$logdir/e2e-$1.pid"
		wait $!
		rc=$?
		echo "$rc $(($(date +%s) - st))" >"$logdir/e2e-$1.rc.tmp"
		mv "$logdir/e2e-$1.rc.tmp" "$logdir/e2e-$1.rc"
	) &
	running="$running $1"
}

# A stopped run stops its tests (timeout(1) put each in a process group
# of its own, out of reach of the terminal's ^C).
stop_all() {
	for r in $running; do
		[ -f "$logdir/e2e-$r.pid" ] &&
		    kill -TERM "$(cat "$logdir/e2e-$r.pid")" 2>/dev/null
	done
	wait
	exit "$1"
}
trap 'stop_all 130' INT
trap 'stop_all 143' TERM

# report NAME: print and count the result of test NAME, which has ended.
report() {
	name=$1
	log="$logdir/e2e-$name.log"
	read -r rc secs <"$logdir/e2e-$name.rc"
	rm -f "$logdir/e2e-$name.rc" "$logdir/e2e-$name.pid"
	echo "$secs $name" >>"$times"
	reasons=$(sed -n 's/^SKIP: [^:]*: //p' "$log")
	if [ "$rc" -eq 0 ] && [ -z "$reasons" ]; then
		pass=$((pass + 1))
		echo "ok   $name ($secs s)"
		result "$name" ok "$secs"
		rm -f "$log"
		return 0
	fi
	if [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ]; then
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
			return 0
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
	if [ -n "$wrap" ]; then
		echo "     log kept: $log"
		return 0
	fi
	# the whole log but for the head of a very long one
	lines=$(wc -l <"$log")
	[ "$lines" -le 300 ] ||
	    echo "    ($((lines - 300)) lines cut: see the log)"
	sed 's/^/    /' "$log" | tail -300
	echo "     log kept: $log"
}

# reap: report the tests that have ended; none: wait a little.
reap() {
	still=""
	done_one=0
	for r in $running; do
		if [ -f "$logdir/e2e-$r.rc" ]; then
			report "$r"
			done_one=1
		else
			still="$still $r"
		fi
	done
	running=$still
	[ $done_one = 1 ] || sleep 0.2
}

# run_list FILE N NETNS: the tests of FILE, N at a time (launch NETNS).
run_list() {
	jobs_now=$2 ns_now=$3
	while read -r next; do
		# shellcheck disable=SC2086 # one word per running test
		while set -- $running && [ $# -ge "$jobs_now" ]; do
			reap
		done
		launch "$next" "$ns_now"
	done <"$1"
	while [ -n "$running" ]; do
		reap
	done
}

# serial.txt's tests alone, as they ran before side by side existed (in
# the caller's network namespace: the interop tests' npm install reaches
# the registry), then the others.
running=""
run_list "$logdir/e2e-serial.$$" 1 0
run_list "$logdir/e2e-parallel.$$" "$jobs" $netns
wait
rm -f "$logdir/e2e-serial.$$" "$logdir/e2e-parallel.$$"

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
if [ -z "$wrap" ]; then
	[ "$failed" -eq 0 ]
	exit
fi

# A wrapper mode judges the invocations, not the tests.
n=$(wc -l <"$E2E_WRAP_DIR/invocations")
m=$(wc -l <"$E2E_WRAP_DIR/bad")
if [ "$m" -gt 0 ]; then
	echo "bad invocations (test, number, seed, what: arguments):"
	head -100 "$E2E_WRAP_DIR/bad" | sed 's/^/    /'
	echo "     kept in $E2E_WRAP_DIR"
fi
[ "$failed" -eq 0 ] ||
    echo "(under $wrap, failed tests are not counted for $row:$failures)"
echo "$row: $n invocations, $m bad"
if [ "$n" -eq 0 ]; then
	echo "$row: no tpuctl invocation went through the wrapper" >&2
	exit 1
fi
[ "$m" -eq 0 ] || exit 1
rm -rf "$E2E_WRAP_DIR"
[ -n "${E2E_LOG_DIR:-}" ] || rmdir "$logdir" 2>/dev/null || true
