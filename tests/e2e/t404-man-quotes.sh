#!/bin/sh
# Issue 20: man pages render their quotes in pairs.  Nested .Dq (".Pq Dq
# a , Dq b") rendered (“a, “b””); scripts/check-man-render.sh (part of
# make lint) catches it, and every page passes it.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
command -v mandoc >/dev/null || fail "mandoc is not installed"
CHECK="$SRCDIR/scripts/check-man-render.sh"

# What the user read: tpuctl-run(1) on worker states, tpuctl-ssh(1) --timeout.
mandoc -Tutf8 "$SRCDIR/man/tpuctl-run.1" | sed 's/.\x08//g' |
    tr '\n' ' ' | tr -s ' ' >"$T/run.txt"
assert_grep '\(“worker 3: exited 0”, “killed by TERM”, “lost”\)' "$T/run.txt"
mandoc -Tutf8 "$SRCDIR/man/tpuctl-ssh.1" | sed 's/.\x08//g' >"$T/ssh.txt"
assert_grep 'after this long \(“90s”, “5m”\)' "$T/ssh.txt"
mandoc -Tutf8 "$SRCDIR/man/tpuctl-plan.1" | sed 's/.\x08//g' |
    tr '\n' ' ' | tr -s ' ' >"$T/plan.txt"
assert_grep '\(“none” when even the largest slice is too small\)' "$T/plan.txt"

expect_rc 0 "$CHECK" "$SRCDIR"/man/*.1 "$SRCDIR"/man/*.5

# The check fails on the nested forms and names page and line.
cat >"$T/bad.1" <<'MAN'
.Dd December 1, 2026
.Dt BAD 1
.Os
.Sh NAME
.Nm bad
.Nd a page with nested quotes
.Sh DESCRIPTION
Strings such as
.Pq Dq yes , Dq 0123 , Dq null
are quoted.
MAN
expect_rc 1 "$CHECK" "$T/bad.1"
assert_grep "bad.1:[0-9]+: doubled quote" "$T/out"
cat >"$T/open.1" <<'MAN'
.Dd December 1, 2026
.Dt OPEN 1
.Os
.Sh NAME
.Nm open
.Nd a quote never closed
.Sh DESCRIPTION
A \(lqquote that stays open.
.Sh SEE ALSO
Nothing.
MAN
expect_rc 1 "$CHECK" "$T/open.1"
assert_grep "open.1:[0-9]+: quote left open" "$T/out"
