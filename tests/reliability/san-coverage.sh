#!/bin/sh
# Check that the sanitizer pass of .ci/run still reaches every command:
# each command of cmd/commands.def is run ("$TPUCTL" [options] COMMAND)
# by at least one end-to-end test listed in tests/e2e/san.txt, and every
# listed test exists.  Prints one line per command with the tests, then
# the tests that CI runs under the sanitizers no more (only make
# check-deep does); exit 1 when a command is reached by none or a listed
# test is missing.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
list="$top/tests/e2e/san.txt"
bad=0
files=""
nums=$(sed -e 's/[[:space:]]*#.*//' -e '/^$/d' "$list")
for n in $nums; do
	set -- "$top"/tests/e2e/"$n"-*.sh
	if [ ! -f "$1" ]; then
		echo "san-coverage: $n is listed in san.txt but no test has that number" >&2
		bad=1
		continue
	fi
	files="$files $1"
done
for c in $(sed -n 's/^CMD(\(.*\))$/\1/p' "$top/cmd/commands.def" | tr _ -); do
	# shellcheck disable=SC2086 # $files is a list of paths without spaces
	hits=$(grep -lE "\\\$TPUCTL\"? +(-[^ ]+ +)*$c( |\$|\")" $files |
	    sed 's|.*/\(t[0-9]*\)-.*|\1|' | tr '\n' ' ')
	if [ -z "$hits" ]; then
		echo "san-coverage: no test of san.txt runs 'tpuctl $c'" >&2
		bad=1
	fi
	printf '%-18s %s\n' "$c" "${hits:--}"
done
moved=""
# shellcheck disable=SC2086 # the numbers, one blank between
listed=" $(printf '%s ' $nums)"
for t in "$top"/tests/e2e/t[0-9]*.sh; do
	n=$(basename "$t" .sh)
	n=${n%%-*}
	case "$listed" in
	*" $n "*) ;;
	*) moved="$moved $n" ;;
	esac
done
echo "only in make check-deep under the sanitizers:$moved"
exit $bad
