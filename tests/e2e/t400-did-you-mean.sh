#!/bin/sh
# Issue 20: mistyped commands, sub-commands and long options name the
# nearest known one (Damerau-Levenshtein, src/suggest.c); exit 2, one
# message line first, nothing on stdout, nothing sent.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

first_line() {
	line=$(head -1 "$T/err")
	[ "$line" = "$1" ] || fail "first stderr line '$line', want '$1'"
	[ ! -s "$T/out" ] || fail "stdout not empty on a usage error"
}

expect_rc 2 "$TPUCTL" lsit
first_line "tpuctl: unknown command 'lsit'; did you mean 'list'?"

expect_rc 2 "$TPUCTL" delte n1
first_line "tpuctl: unknown command 'delte'; did you mean 'delete'?"

expect_rc 2 "$TPUCTL" queued-resources lsit
first_line "tpuctl: unknown command 'queued-resources lsit'; did you mean 'queued-resources list'?"

expect_rc 2 "$TPUCTL" data sycn a gs://b
first_line "tpuctl: unknown command 'data sycn'; did you mean 'data sync'?"

expect_rc 2 "$TPUCTL" help lsit
first_line "tpuctl: unknown command 'lsit'; did you mean 'list'?"
expect_rc 2 "$TPUCTL" help data lss
first_line "tpuctl: unknown command 'data lss'; did you mean 'data ls'?"

# Nothing close: no guess.
expect_rc 2 "$TPUCTL" frobnicate
first_line "tpuctl: unknown command 'frobnicate' (see 'tpuctl help')"

# The command's own options, with or without "=value".
expect_rc 2 "$TPUCTL" ssh --workers all n1
first_line "tpuctl: unknown option '--workers'; did you mean '--worker'?"
expect_rc 2 "$TPUCTL" ssh --workers=all n1
first_line "tpuctl: unknown option '--workers'; did you mean '--worker'?"
expect_rc 2 "$TPUCTL" create --acclerator-type v4-8 n1
first_line "tpuctl: unknown option '--acclerator-type'; did you mean '--accelerator-type'?"
expect_rc 2 "$TPUCTL" list --filtre state=READY
first_line "tpuctl: unknown option '--filtre'; did you mean '--filter'?"
# A global flag misspelled after the command.
expect_rc 2 "$TPUCTL" list --projcet p1
first_line "tpuctl: unknown option '--projcet'; did you mean '--project'?"
# Another command's option is not suggested: --worker is ssh's, not list's.
expect_rc 2 "$TPUCTL" list --workers 3
first_line "tpuctl: unknown option '--workers'"
# The usage still follows.
assert_grep '^usage: tpuctl list' "$T/err"
