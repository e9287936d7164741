#!/bin/sh
# Table-driven check of every command in "tpuctl help --all": "-h" exits 0
# and prints "usage: tpuctl <path> ...", man/tpuctl-<command>.1 exists and
# passes mandoc's lint, its SYNOPSIS contains that usage exactly, and
# tpuctl(1) lists the command.  A new command without its man page, or a
# usage string that drifts from the SYNOPSIS, fails here.  Subcommands
# with a page of their own (tpuctl-data-cp.1) are held to the same rules.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

MAN="$SRCDIR/man"

# The rendered SYNOPSIS of a page, on one line, whitespace squeezed.
BS=$(printf '\b')
synopsis() {
	mandoc -Tascii "$1" | sed "s/.$BS//g" |
	    sed -n '/^SYNOPSIS/,/^[A-Z]/p' | sed '1d;$d' |
	    tr -s ' \t\n' '   ' | sed 's/^ //; s/ $//'
}

expect_rc 0 "$TPUCTL" help --all
cp "$T/out" "$T/paths"
[ -s "$T/paths" ] || fail "help --all printed nothing"
n=0
while IFS= read -r path; do
	n=$((n + 1))
	first=${path%% *}
	# shellcheck disable=SC2086 # path is words on purpose
	expect_rc 0 "$TPUCTL" $path -h
	usage=$(sed -n 's/^usage: tpuctl //p' "$T/out" | head -1)
	[ -n "$usage" ] || fail "'tpuctl $path -h' printed no usage line"
	case "$usage " in
	"$path "*) ;;
	*) fail "'tpuctl $path -h' shows the usage of another command: $usage" ;;
	esac
	[ ! -s "$T/err" ] || fail "'tpuctl $path -h' wrote to stderr"

	page="$MAN/tpuctl-$first.1"
	[ -f "$page" ] || fail "command '$path' has no man page ($page)"
	mandoc -Tlint -Wwarning "$page" >"$T/lint" 2>&1 ||
	    fail "mandoc lint: $(cat "$T/lint")"
	syn=$(synopsis "$page")
	case "$syn" in
	*"tpuctl $usage"*) ;;
	*) fail "SYNOPSIS of $page does not contain 'tpuctl $usage' (it has: $syn)" ;;
	esac
	grep -q "^\.It Cm $first\$" "$MAN/tpuctl.1" ||
	    fail "tpuctl.1 does not list the command '$first'"
	# A subcommand with a page of its own (tpuctl-data-cp.1): the same
	# rules, and the command's page points to it.
	sub="$MAN/tpuctl-$(echo "$path" | tr ' ' '-').1"
	if [ "$path" != "$first" ] && [ -f "$sub" ]; then
		mandoc -Tlint -Wwarning "$sub" >"$T/lint" 2>&1 ||
		    fail "mandoc lint: $(cat "$T/lint")"
		case "$(synopsis "$sub")" in
		*"tpuctl $usage"*) ;;
		*) fail "SYNOPSIS of $sub does not contain 'tpuctl $usage'" ;;
		esac
		grep -q "^\.Xr $(basename "$sub" .1) 1" "$page" ||
		    fail "$page does not refer to $(basename "$sub")"
	fi
done <"$T/paths"
# Commands with a source file of their own have a page of their own.
for sub in data-cp data-sync; do
	[ -f "$MAN/tpuctl-$sub.1" ] || fail "no man page tpuctl-$sub.1"
done
[ "$n" -ge 4 ] || fail "only $n commands in help --all"

# The check itself must catch drift: a page whose SYNOPSIS lacks a flag.
sed 's/^\.Op Fl -all$//' "$MAN/tpuctl-help.1" >"$T/drift.1"
usage=$("$TPUCTL" help -h | sed -n 's/^usage: tpuctl //p')
case "$(synopsis "$T/drift.1")" in
*"tpuctl $usage"*) fail "a drifted SYNOPSIS was not detected" ;;
esac
