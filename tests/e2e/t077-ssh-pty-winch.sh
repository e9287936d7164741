#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# The interactive shell (tpuctl ssh NODE, one worker, no command) runs in
# a tmux pane: the remote pty starts with the pane's size, and every
# resize of the tmux window (SIGWINCH) reaches the remote pty, as
# `stty size` on the worker shows; the shell's exit status is tpuctl's.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null 2>&1 || fail "tmux is not installed"
emu_start

expect_rc 0 "$TPUCTL" create win --accelerator-type v4-8
KEY="$T/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$KEY" >/dev/null
# key propagated and host key pinned before the shell starts
expect_rc 0 "$TPUCTL" ssh win --ssh-key-file "$KEY" -- true

# The shell, with this test's environment, in a private tmux server.
{
	export -p
	printf 'rc=0\n"$1" ssh win --ssh-key-file "$2" || rc=$?\n'
	printf 'echo "exit $rc" >"$3"\nsleep 30\n'
} >"$T/shell.sh"
SOCK="$T/tmux.sock"
tm() {
	tmux -S "$SOCK" -f /dev/null "$@"
}
# lib.sh's cleanup reads the exit status from $?: keep it for it.
trap 'rc=$?; set +e; tm kill-server 2>/dev/null; (exit $rc); cleanup' EXIT
tm new-session -d -s t077 -x 100 -y 30 \
    "sh '$T/shell.sh' '$TPUCTL' '$KEY' '$T/done'"
tm set-option -g status off

# ask N: type a command printing the remote pty size tagged N and wait
# for its output (10 s at most); the size ("rows cols") is in $size.
ask() {
	tm send-keys -t t077 "echo \"S$1=\$(stty size)=E\"" Enter
	i=0
	while :; do
		tm capture-pane -p -t t077 -S -200 >"$T/pane" 2>/dev/null || true
		size=$(sed -n "s/^S$1=\([0-9]* [0-9]*\)=E\$/\1/p" "$T/pane" |
		    tail -1)
		[ -z "$size" ] || return 0
		[ ! -e "$T/done" ] || fail "the shell ended: $(cat "$T/pane")"
		i=$((i + 1))
		[ $i -lt 100 ] || fail "no answer to $1: $(cat "$T/pane")"
		sleep 0.1
	done
}
# pane: the pane's size as "rows cols".
pane() {
	tm display-message -p -t t077 '#{pane_height} #{pane_width}'
}
# expect_size TAG: the remote pty has the pane's size (a resize may
# take a moment to travel: asked again, 5 times at most).
expect_size() {
	want=$(pane)
	n=0
	while :; do
		n=$((n + 1))
		ask "$1$n"
		[ "$size" != "$want" ] || return 0
		[ $n -lt 5 ] ||
		    fail "$1: remote pty is '$size', the pane is '$want'"
		sleep 0.3
	done
}

expect_size start
[ "$(pane)" = "30 100" ] || fail "unexpected pane size $(pane)"
tm resize-window -t t077 -x 132 -y 43
[ "$(pane)" = "43 132" ] || fail "tmux did not resize: $(pane)"
expect_size bigger
tm resize-window -t t077 -x 61 -y 17
expect_size smaller
# two quick resizes: the last one wins
tm resize-window -t t077 -x 90 -y 25
tm resize-window -t t077 -x 91 -y 26
expect_size last
[ "$size" = "26 91" ] || fail "last size: $size"

tm send-keys -t t077 'exit 7' Enter
i=0
while [ ! -s "$T/done" ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "the shell did not exit: $(tm capture-pane -p -t t077)"
	sleep 0.1
done
[ "$(cat "$T/done")" = "exit 7" ] || fail "tpuctl ssh: $(cat "$T/done")"
