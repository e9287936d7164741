#!/bin/sh
# Reliability row F9: tpuctl doctor and tpuctl reset-workers interrupted
# mid-run on a v4-32's four workers: SIGINT exits 130 ("interrupted"),
# SIGTERM 143 ("terminated"), each once the worker probe runs on every
# worker; nothing of the probe is left running on any worker (no process
# carries TPUCTL_NODE=pod, which only the probe's environment has); then
# doctor and reset-workers complete.  The probe is held mid-run by a .pth
# file in each worker's user site-packages that, while a flag file
# exists, marks its start and sleeps when the probe's interpreter starts.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

expect_rc 0 "$TPUCTL" create pod --accelerator-type v4-32

# (outside /tmp: as root each worker has its own /tmp, not the test's)
D=$(mktemp -d /var/tmp/tpuctl-e2e-f9.XXXXXX)
chmod 755 "$D"
trap 'rc=$?; rm -rf "$D"; (exit $rc); cleanup' EXIT
cat >"$D/hold.py" <<EOF
import os, time
if os.environ.get("TPUCTL_NODE") == "pod" and os.path.exists("$D/slow"):
    open("$D/at.%d" % os.getpid(), "w").close()
    time.sleep(120)
EOF
# a .pth line starting with "import" runs at every interpreter start
expect_rc 0 "$TPUCTL" ssh pod --worker all -- sh -c \
    "d=\$(python3 -m site --user-site) && mkdir -p \"\$d\" &&
    echo 'import runpy; runpy.run_path(\"$D/hold.py\")' >\"\$d/zz-t340.pth\""

left() {
	grep -l -F -x -z "TPUCTL_NODE=pod" /proc/[0-9]*/environ 2>/dev/null |
	    sed 's|^/proc/||; s|/environ$||' | while read -r p; do
		[ "$p" = "$$" ] || ps -o pid=,args= -p "$p" 2>/dev/null || true
	done
}

interrupt() { # SIGNAL EXIT-STATUS WORD WHAT COMMAND...
	sig=$1 st=$2 word=$3 what=$4
	shift 4
	: >"$D/slow"
	rm -f "$D"/at.*
	"$TPUCTL" "$@" >"$T/out" 2>"$T/err" &
	pid=$!
	n=0
	while [ "$(find "$D" -name 'at.*' | wc -l)" -lt 4 ]; do
		n=$((n + 1))
		[ $n -lt 300 ] || fail "$what $sig: the probe not reached on 4 workers in 60 s: $(cat "$T/out" "$T/err")"
		kill -0 $pid 2>/dev/null || fail "$what $sig: ended early: $(cat "$T/out" "$T/err")"
		sleep 0.2
	done
	[ -n "$(left)" ] || fail "$what $sig: no process of the probe seen"
	kill -s "$sig" $pid
	rc=0
	wait $pid || rc=$?
	[ $rc -eq "$st" ] || fail "$what $sig: exit $rc, want $st: $(cat "$T/err")"
	assert_grep "^tpuctl: $word: 0 of 4 workers finished$" "$T/err"
	assert_grep "^worker 2: aborted: " "$T/err"
	# the workers' watchers: SIGTERM to the group, SIGKILL 5 s later
	n=0
	while [ -n "$(left)" ]; do
		n=$((n + 1))
		[ $n -lt 100 ] || fail "$what $sig: left running on the workers: $(left)"
		sleep 0.2
	done
}

interrupt INT 130 interrupted doctor doctor pod
interrupt TERM 143 terminated doctor doctor pod
interrupt INT 130 interrupted reset-workers reset-workers pod
interrupt TERM 143 terminated reset-workers reset-workers pod

# without the flag both complete
rm -f "$D/slow"
expect_rc 0 "$TPUCTL" doctor pod
assert_grep '^doctor: 4 of 4 workers succeeded$' "$T/err"
expect_rc 0 "$TPUCTL" reset-workers pod
assert_grep '^\[w3\] reset: nothing to do$' "$T/out"
[ -z "$(left)" ] || fail "left running at the end: $(left)"
