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
# shellcheck source=tests/e2e/lib_sig.sh
. "$(dirname "$0")/lib_sig.sh"
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

SIG_ENV="TPUCTL_NODE=pod"
SIG_DIR=$D

sig_interrupt INT 130 interrupted doctor "$TPUCTL" doctor pod
sig_interrupt TERM 143 terminated doctor "$TPUCTL" doctor pod
sig_interrupt INT 130 interrupted reset-workers "$TPUCTL" reset-workers pod
sig_interrupt TERM 143 terminated reset-workers "$TPUCTL" reset-workers pod

# without the flag both complete
rm -f "$D/slow"
expect_rc 0 "$TPUCTL" doctor pod
assert_grep '^doctor: 4 of 4 workers succeeded$' "$T/err"
expect_rc 0 "$TPUCTL" reset-workers pod
assert_grep '^\[w3\] reset: nothing to do$' "$T/out"
[ -z "$(sig_procs)" ] || fail "left running at the end: $(sig_procs)"
