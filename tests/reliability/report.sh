#!/bin/sh
# Print the reliability matrix of tests/reliability/README.md: one line
# per row id of RELIABILITY.md with its status, the tests that cover it
# and how its end-to-end tests did in the last run (read from
# build/default/e2e-results.txt, which make e2e writes: "pass", "FAIL",
# "skip", "not run"), then the counts per status, the LeakSanitizer
# reports of the last sanitizer run (build/san/e2e-results.txt) and what
# the tests of the last run left at their ends (the results' fifth field,
# written by tests/e2e/lib.sh: README.md, "Left at the end"): the
# emulator's resources, and the leaks, listed by test.  Exit 1 when the
# table is missing, a line of it is malformed or names a test that does
# not exist, a named test failed in the last run, or a test leaked.
set -eu
top="$(dirname "$0")/../.."
readme="$top/tests/reliability/README.md"
[ -r "$readme" ] || { echo "report: cannot read $readme" >&2; exit 1; }
missing=0
for t in $(awk -F'|' '/^\| row \| status/ { on = 1; next }
    on && /^\|[^-]/ { print $4 }' "$readme" | tr ',' ' '); do
	case $t in
	t[0-9]*) set -- "$top"/tests/e2e/"$t"-*.sh ;;
	check_*) set -- "$top/tests/unit/$t.c" ;;
	*) set -- /nonexistent ;;
	esac
	if [ ! -e "$1" ]; then
		echo "report: no test '$t'" >&2
		missing=1
	fi
done
res="$top/build/default/e2e-results.txt"
san="$top/build/san/e2e-results.txt"
[ -f "$res" ] || res=/dev/null
[ -f "$san" ] || san=/dev/null
awk -F'|' -v res="$res" -v san="$san" '
BEGIN {
	# the last line per test wins (make e2e appends)
	while ((getline l < res) > 0) {
		split(l, f, " "); sub(/-.*/, "", f[1]); last[f[1]] = f[2]
		left[f[1]] = f[5]
	}
	while ((getline l < san) > 0) {
		split(l, f, " "); sub(/-.*/, "", f[1]); slast[f[1]] = f[2]
		sleak[f[1]] = f[4] + 0
	}
	for (t in sleak) leaks += sleak[t]
	for (t in slast) sanruns++
}
# runstate TESTS: how the t-tests of a row did in the last run.
function runstate(tests,    a, k, i, t, st, nrun, nt) {
	k = split(tests, a, /[ ,]+/)
	st = ""
	for (i = 1; i <= k; i++) {
		t = a[i]
		if (t !~ /^t[0-9]+$/) continue
		nt++
		if (!(t in last)) continue
		nrun++
		if (last[t] == "FAIL") st = "FAIL"
		else if (last[t] == "SKIP" && st != "FAIL") st = "skip"
	}
	if (nt == 0) return "unit"
	if (nrun == 0) return "not run"
	if (st != "") return st
	return nrun == nt ? "pass" : "part run"
}
/^\| row \| status/ { intable = 1; next }
intable && /^\|---/ { next }
intable && /^\|/ {
	row = $2; st = $3; tests = $4; note = $5
	gsub(/^ +| +$/, "", row); gsub(/^ +| +$/, "", st)
	gsub(/^ +| +$/, "", tests); gsub(/^ +| +$/, "", note)
	if (row == "" || (st != "covered" && st != "partial" &&
	    st != "not covered")) {
		printf "report: malformed row: %s\n", $0 > "/dev/stderr"
		bad = 1
		next
	}
	if (st == "not covered" && tests != "") {
		printf "report: %s is not covered but names %s\n", row, tests \
		    > "/dev/stderr"
		bad = 1
	}
	if (st != "not covered" && tests == "") {
		printf "report: %s is %s but names no test\n", row, st \
		    > "/dev/stderr"
		bad = 1
	}
	r = tests == "" ? "-" : runstate(tests)
	if (r == "FAIL") { failed = 1; nfail++ }
	if (r == "pass") npass++
	printf "%-22s %-12s %-9s %s\n", row, st, r, tests == "" ? "-" : tests
	n[st]++
	total++
	next
}
intable { intable = 0 }
END {
	if (total == 0) {
		print "report: no matrix table in README.md" > "/dev/stderr"
		exit 1
	}
	printf "\n%d rows: %d covered, %d partial, %d not covered\n", total,
	    n["covered"], n["partial"], n["not covered"]
	printf "last run (%s): %d rows passed, %d with a failed test\n", res,
	    npass, nfail
	if (sanruns > 0)
		printf "sanitizer run (%s): %d tests, %d LeakSanitizer reports\n",
		    san, sanruns, leaks
	else
		printf "sanitizer run: none recorded (make check-san)\n"
	# what the tests left: k=v,... per test (the last run of each)
	nk = split("nodes qrs ops buckets objects uploads parts tmpfiles procs",
	    kinds, " ")
	for (t in left) {
		if (left[t] == "" || left[t] == "-") continue
		nleft++
		m = split(left[t], kv, ",")
		lk = ""
		for (i = 1; i <= m; i++) {
			split(kv[i], p, "=")
			sum[p[1]] += p[2]
			if ((p[1] == "parts" || p[1] == "tmpfiles" ||
			    p[1] == "procs") && p[2] > 0) {
				leaked += p[2]
				lk = lk (lk == "" ? "" : ", ") p[2] " " p[1]
			}
		}
		if (lk != "") leaks_of[t] = lk
	}
	if (nleft == 0)
		printf "left at the end: not recorded (make e2e records it)\n"
	else {
		printf "left in the emulators at the tests\047 ends (%d tests; " \
		    "each test\047s own emulator, removed with it): %d nodes, " \
		    "%d queued resources, %d running operations, %d buckets, " \
		    "%d objects, %d upload sessions\n", nleft, sum["nodes"],
		    sum["qrs"], sum["ops"], sum["buckets"], sum["objects"],
		    sum["uploads"]
		printf "%d leaked resources", leaked
		if (leaked > 0) {
			printf " (temp part objects, temp files, processes " \
			    "that outlived their test):"
			for (t in leaks_of) printf " %s: %s;", t, leaks_of[t]
		}
		printf "\n"
	}
	exit (bad || failed || leaked > 0)
}' "$readme" || exit 1
exit $missing
