#!/bin/sh
# The main job, end to end, on the local emulator: create a v4-32 pod,
# reach all 4 workers over SSH (key propagated through node metadata,
# host keys pinned from guest attributes), stage data in a Cloud Storage
# bucket, run a distributed job on every worker with `tpuctl run` that
# fetches the data with the worker's own credentials (the metadata
# server), checks it and agrees on it over TCP, delete.
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

step "run the job on all 4 workers: fetch the data, check it, agree"
# The job is plain python3 (what a TPU VM image has; no tpuctl on the
# workers).  Each worker reads the bucket with its own service account,
# from its metadata server, hashes the data, and rank 0 gathers every
# rank's hash over TCP (MASTER_ADDR, MASTER_PORT from tpuctl run).
mkdir "$work/job"
cat >"$work/job/check.py" <<'PY'
import hashlib, json, os, socket, time, urllib.request

md = os.environ.get("GCE_METADATA_HOST", "metadata.google.internal")
req = urllib.request.Request(
    "http://%s/computeMetadata/v1/instance/service-accounts/default/token" % md,
    headers={"Metadata-Flavor": "Google"})
token = json.load(urllib.request.urlopen(req))["access_token"]
base = os.environ.get("STORAGE_EMULATOR_HOST", "https://storage.googleapis.com")
req = urllib.request.Request(
    base.rstrip("/") + "/storage/v1/b/demo-data/o/train.bin?alt=media",
    headers={"Authorization": "Bearer " + token})
digest = hashlib.sha256(urllib.request.urlopen(req).read()).hexdigest()
rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
print("worker %s of %s: %s" % (os.environ["TPUCTL_WORKER"],
                               os.environ["TPUCTL_WORKERS"], digest), flush=True)
addr = (os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]))
if rank == 0:
    srv = socket.create_server(addr, reuse_port=False)
    srv.settimeout(60)
    got = {0: digest}
    while len(got) < size:
        conn, _ = srv.accept()
        r, d = conn.recv(128).decode().split()
        got[int(r)] = d
        conn.close()
    assert len(set(got.values())) == 1, got
    print("all %d workers read the same data" % size)
else:
    for _ in range(600):
        try:
            conn = socket.create_connection(addr, timeout=5)
            break
        except OSError:
            time.sleep(0.1)
    conn.sendall(("%d %s" % (rank, digest)).encode())
    conn.close()
PY
rc=0
# As root the emulator's workers resolve storage.googleapis.com to it and
# trust its CA, as a TPU VM reaches Google; without root (no namespaces)
# they are pointed at it with STORAGE_EMULATOR_HOST, which Google's own
# client libraries honour too.
storage_env=
[ "$(id -u)" -eq 0 ] || storage_env="STORAGE_EMULATOR_HOST=$STORAGE_EMULATOR_HOST"
"$tpuctl" run demo-pod --name demo-check --workdir "$work/job" \
    ${storage_env:+--env "$storage_env"} \
    --env "MASTER_PORT=$((20000 + $$ % 20000))" \
    -- python3 check.py | tee "$work/job.out" || rc=1
[ "$(grep -c "$want" "$work/job.out")" -eq 4 ] || rc=1
grep -q '^\[w0\] all 4 workers read the same data$' "$work/job.out" || rc=1
echo "expected data sha256: $want"
"$tpuctl" jobs demo-pod

step "delete the pod"
"$tpuctl" delete --quiet demo-pod
"$tpuctl" list
[ $rc -eq 0 ] && echo "demo: done" || echo "demo: some workers failed" >&2
exit $rc
