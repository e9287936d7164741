#!/bin/sh
# ssh, scp and forward show the shared SSH options as one fragment in one
# order (cmd/sshcmd.h SSHCMD_USAGE); forward, which goes through one
# worker, refuses --fanout (exit 2, one line, and its usage) instead of
# accepting it silently.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

tail='[--ssh-key-file file] [--strict-host-key-checking yes|no] [--connect-timeout seconds]'
many="[--internal-ip] [--zone zone] [--node all|0|0,2|0-3|node-id] [--worker 0|all|1,3|0-7] [--fanout n] $tail"
gcloud='[--dry-run] [--ssh-key-expire-after duration] [--ssh-key-expiration time]'
one="[--internal-ip] [--zone zone] [--node n|node-id] [--worker n] $tail"
expect_rc 0 "$TPUCTL" ssh -h
assert_grep "^usage: tpuctl ssh \[--fail-fast\] $(printf '%s' "$many $gcloud" | sed 's/[][|.]/\\&/g') \[--timeout" "$T/out"
expect_rc 0 "$TPUCTL" scp -h
assert_grep "^usage: tpuctl scp \[--recurse\] $(printf '%s' "$many $gcloud" | sed 's/[][|.]/\\&/g') source \.\.\. destination\$" "$T/out"
expect_rc 0 "$TPUCTL" forward -h
assert_grep "^usage: tpuctl forward $(printf '%s' "$one" | sed 's/[][|.]/\\&/g') name " "$T/out"

expect_rc 0 "$TPUCTL" create pod --accelerator-type v4-32
expect_rc 2 "$TPUCTL" forward --fanout 4 pod 8080
assert_grep "^tpuctl: --fanout 4: forward goes through one worker\$" "$T/err"
assert_grep "^usage: tpuctl forward " "$T/err"
# an option after the operands too
expect_rc 2 "$TPUCTL" forward pod 8080 --fanout=2
assert_grep "forward goes through one worker" "$T/err"
