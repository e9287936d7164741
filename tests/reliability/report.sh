#!/bin/sh
# Print the reliability matrix of tests/reliability/README.md: one line
# per row id of RELIABILITY.md with its status and the tests that cover
# it, then the counts per status.  Exit 1 when the table is missing or
# a line of it is malformed or names a test that does not exist.
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
awk -F'|' '
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
	printf "%-22s %-12s %s\n", row, st, tests == "" ? "-" : tests
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
	exit bad
}' "$readme" || exit 1
exit $missing
