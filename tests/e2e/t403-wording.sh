#!/bin/sh
# Issue 20, wording: counts agree with their nouns in prompts and
# summaries ("Delete this resource holding quota?", "1 chip"); a dry run
# says what would be deleted and that nothing was; declining a prompt
# exits 1 (not 130, which means SIGINT) and says nothing was done;
# "--profile ci config set" defines the profile without warning that it
# is not defined.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

# on_tty ANSWER CMD...: run CMD on a terminal (script(1)), typing ANSWER;
# the transcript in $T/tty, the exit status in $rc.
on_tty() {
	answer=$1
	shift
	cmd=
	for a in "$@"; do
		cmd="$cmd '$a'"
	done
	set +e
	printf '%s\n' "$answer" |
	    script -qec "$cmd; echo \"rc=\$?\"" /dev/null >"$T/tty" 2>&1
	set -e
	rc=$(sed -n 's/^rc=\([0-9]*\).*/\1/p' "$T/tty" | tail -1)
}

# gc of one preempted node: singular prompt, dry-run wording.
expect_rc 0 "$TPUCTL" create p1 --accelerator-type v5litepod-1 \
    --zone us-west4-a --spot
"$EMULATOR" event --state-dir "$EMU_DIR" preempt --node p1 \
    --zone us-west4-a >/dev/null || fail "preempt p1"
expect_rc 0 "$TPUCTL" --dry-run gc --zone us-west4-a
assert_grep "^tpuctl: dry run: would delete 1 resource; nothing was deleted$" "$T/err"

on_tty n "$TPUCTL" gc --zone us-west4-a
assert_grep "Delete this resource holding quota\? \[y/N\]" "$T/tty"
assert_no_grep "these 1" "$T/tty"
assert_grep "tpuctl: declined: nothing was done" "$T/tty"
[ "$rc" = 1 ] || fail "declined gc exited '$rc', want 1: $(cat "$T/tty")"
expect_rc 0 "$TPUCTL" describe p1 --zone us-west4-a

# delete: the prompt says "1 chip"; declining keeps the node, exit 1.
expect_rc 0 "$TPUCTL" create one --accelerator-type v5litepod-1 \
    --zone us-west4-a --spot
on_tty n "$TPUCTL" delete one --zone us-west4-a
assert_grep "Delete 1 TPU node in us-west4-a\?" "$T/tty"
assert_grep "^  one \(v5litepod-1, 1 chip, READY\)" "$T/tty"
assert_grep "tpuctl: declined: nothing was done" "$T/tty"
[ "$rc" = 1 ] || fail "declined delete exited '$rc', want 1"
expect_rc 0 "$TPUCTL" describe one --zone us-west4-a
# An empty answer (Enter) is no as well.
on_tty '' "$TPUCTL" delete one --zone us-west4-a
[ "$rc" = 1 ] || fail "Enter at the prompt exited '$rc', want 1"
expect_rc 0 "$TPUCTL" describe one --zone us-west4-a

# Two preempted resources: plural.
"$EMULATOR" event --state-dir "$EMU_DIR" preempt --node one \
    --zone us-west4-a >/dev/null || fail "preempt one"
on_tty y "$TPUCTL" gc --zone us-west4-a
assert_grep "Delete these 2 resources holding quota\? \[y/N\]" "$T/tty"
[ "$rc" = 0 ] || fail "gc exited '$rc': $(cat "$T/tty")"

# --profile ci config set defines ci: no "not defined" warning; other
# commands still warn about an undefined profile.
expect_rc 0 "$TPUCTL" --profile ci config set compute/zone us-west4-a
assert_no_grep "is not defined" "$T/err"
assert_grep "set compute/zone in .* \[profile ci\]" "$T/err"
expect_rc 0 env -u CLOUDSDK_COMPUTE_ZONE -u TPUCTL_ZONE \
    "$TPUCTL" --profile ci config get compute/zone
assert_no_grep "is not defined" "$T/err"
[ "$(cat "$T/out")" = us-west4-a ] || fail "profile ci: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" --profile other config set compute/zone us-west4-b
assert_no_grep "is not defined" "$T/err"
expect_rc 0 "$TPUCTL" --profile nosuch version
assert_grep "profile 'nosuch' is not defined" "$T/err"
