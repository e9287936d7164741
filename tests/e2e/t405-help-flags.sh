#!/bin/sh
# Issue 20: "tpuctl COMMAND --help" lists the flags one line each, with
# the first sentence of each from the command's man page; "tpuctl help
# COMMAND" shows the man page through man(1), from the source tree and
# after "make install" (no MANPATH), and falls back to the --help text
# without man.  -h still prints the usage first (t003).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

expect_rc 0 "$TPUCTL" ssh --help
[ ! -s "$T/err" ] || fail "--help wrote to stderr"
assert_grep '^usage: tpuctl ssh ' "$T/out"
assert_grep '^Flags:$' "$T/out"
# Every flag the usage names, on one line each.
for f in --zone --node --worker --internal-ip --fanout --timeout --output \
    --output-dir --fail-fast --command --ssh-key-file \
    --strict-host-key-checking --connect-timeout; do
	n=$(grep -c -- "^  ${f}[ ,]" "$T/out" || true)
	[ "$n" -eq 1 ] || fail "ssh --help: $n lines for $f"
done
assert_grep '^  --worker spec +Workers to use: a number \(default 0\)' "$T/out"
assert_grep '^  --timeout duration +Close a worker.s command after this long \("90s", "5m"\)\.$' "$T/out"
# A global flag: from tpuctl(1).
assert_grep '^  --zone zone +The zone of the TPU nodes' "$T/out"
assert_grep '^See tpuctl-ssh\(1\)\.$' "$T/out"

# A sub-command with its own page, and a short flag.
expect_rc 0 "$TPUCTL" data cp -h
assert_grep '^usage: tpuctl data cp ' "$T/out"
assert_grep '^  -r, --recursive +Copy directories' "$T/out"
assert_grep '^  --no-clobber +Never replace' "$T/out"
assert_grep '^See tpuctl-data-cp\(1\)\.$' "$T/out"
# An item naming several flags is printed once.
expect_rc 0 "$TPUCTL" create --help
[ "$(grep -c -- '--spot, --preemptible, --reserved' "$T/out")" -eq 1 ] ||
    fail "create --help repeats a shared item"
assert_grep '^  --accelerator-type type +The slice, e\.g\. v4-32' "$T/out"

# On a terminal, one line each even when the sentence is long.
script -qec "stty cols 80; '$TPUCTL' ssh --help" /dev/null >"$T/tty"
awk 'length($0) > 81 && !/^usage:/ { print; bad = 1 } END { exit bad }' \
    "$T/tty" || fail "lines wider than the terminal"
assert_grep '^  --output mode .*\.\.\.' "$T/tty"

# tpuctl help COMMAND: the man page (man(1) formats it).
command -v man >/dev/null || fail "man is not installed"
expect_rc 0 "$TPUCTL" help ssh
assert_grep '^TPUCTL-SSH\(1\)' "$T/out"
assert_grep 'SYNOPSIS' "$T/out"
expect_rc 0 "$TPUCTL" help data cp
assert_grep '^TPUCTL-DATA-CP\(1\)' "$T/out"
expect_rc 0 "$TPUCTL" help queued-resources create
assert_grep '^TPUCTL-QUEUED-RESOURCE' "$T/out"
# Without man on PATH: the --help text.
expect_rc 0 env PATH=/nonexistent "$TPUCTL" help ssh
assert_grep '^usage: tpuctl ssh ' "$T/out"
assert_grep '^  --worker spec ' "$T/out"
expect_rc 2 "$TPUCTL" help lsit
assert_grep "unknown command 'lsit'" "$T/err"

# After make install PREFIX=...: the installed page, no MANPATH.
PREFIX="$T/inst"
(cd "$SRCDIR" && make -s install PREFIX="$PREFIX" BIN="$BIN_DIR" \
    TPUCTL="$TPUCTL" EMULATOR="$EMULATOR") >"$T/install.log" 2>&1 ||
    fail "make install: $(tail -5 "$T/install.log")"
[ -f "$PREFIX/share/man/man1/tpuctl-ssh.1" ] || fail "page not installed"
expect_rc 0 env -u MANPATH "$PREFIX/bin/tpuctl" help ssh
assert_grep '^TPUCTL-SSH\(1\)' "$T/out"
expect_rc 0 "$PREFIX/bin/tpuctl" ssh --help
assert_grep '^  --worker spec +Workers to use' "$T/out"
