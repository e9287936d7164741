#!/bin/sh
# The main job, end to end, on the local emulator: create a v4-32 pod,
# reach all 4 workers over SSH (key propagated through node metadata,
# host keys pinned from guest attributes), stage data in a Cloud Storage
# bucket, run a job on every worker that fetches the data with the
# worker's own credentials (the metadata server) and checks it, delete.
# Every step is a tpuctl command.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
bin=${TPUCTL_BIN_DIR:-$top/bin}
tpuctl="$bin/tpuctl"
work=$(mktemp -d "${TMPDIR:-/tmp}/tpuctl-demo.XXXXXX")
emu_pid=

# shellcheck disable=SC2317 # called by the trap
cleanup() {
	rc=$?
	[ -z "$emu_pid" ] || kill -TERM "$emu_pid" 2>/dev/null || true
	[ -z "$emu_pid" ] || wait "$emu_pid" 2>/dev/null || true
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT INT TERM

[ -x "$tpuctl" ] || { echo "demo: build first (make)" >&2; exit 1; }
export HOME="$work/home"
mkdir -p "$HOME/.ssh"
chmod 700 "$HOME" "$HOME/.ssh"

step() { printf '\n== %s\n' "$*"; }

step "start tpuctl-emulator"
"$bin/tpuctl-emulator" serve --state-dir "$work/emu" >"$work/emu.log" 2>&1 &
emu_pid=$!
i=0
until [ -s "$work/emu/env" ]; do
	i=$((i + 1))
	[ $i -lt 300 ] || { cat "$work/emu.log" >&2; exit 1; }
	sleep 0.1
done
# shellcheck disable=SC1091
. "$work/emu/env"
"$tpuctl" auth list

step "create a v4-32 pod (4 workers) and wait until it is ready"
"$tpuctl" create demo-pod --accelerator-type v4-32 --labels job=demo
"$tpuctl" list

step "stage the training data in gs://demo-data"
head -c 1048576 /dev/urandom >"$work/train.bin"
"$tpuctl" data mb gs://demo-data
"$tpuctl" data cp "$work/train.bin" gs://demo-data/train.bin
"$tpuctl" data ls -l gs://demo-data
want=$(sha256sum <"$work/train.bin" | cut -c1-64)

step "ssh to all 4 workers (propagates a key, pins host keys)"
"$tpuctl" ssh demo-pod --worker=all -- uname -n

step "run the job on all 4 workers: fetch the data, check it, report"
# On a TPU VM the job reads the bucket with the VM's service account,
# from the metadata server; here the emulator's workers have one too.
rc=0
# shellcheck disable=SC2016 # expanded on the worker
"$tpuctl" ssh demo-pod --worker=all -- env \
    "STORAGE_EMULATOR_HOST=$STORAGE_EMULATOR_HOST" \
    "CLOUDSDK_CORE_PROJECT=$CLOUDSDK_CORE_PROJECT" \
    sh -c 'unset GOOGLE_APPLICATION_CREDENTIALS
	"$0" data cat gs://demo-data/train.bin | sha256sum | cut -c1-64 >data.sha &&
	set -- $SSH_CONNECTION
	echo "worker $(hostname) at $3: $(cat data.sha)"' \
    "$tpuctl" | tee "$work/job.out" || rc=1
[ "$(grep -c "$want" "$work/job.out")" -eq 4 ] || rc=1
echo "expected data sha256: $want"

step "delete the pod"
"$tpuctl" delete --quiet demo-pod
"$tpuctl" list
[ $rc -eq 0 ] && echo "demo: done" || echo "demo: some workers failed" >&2
exit $rc
