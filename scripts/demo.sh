#!/bin/sh
# The main job, end to end, on the local emulator: create a v4-32 pod,
# reach all 4 workers over SSH with pinned host keys, stage data in a
# Cloud Storage bucket, run a job on every worker that reads it, delete.
#
# Provisioning, auth and the raw API calls go through tpuctl.  The
# dedicated SSH and data commands (tpuctl ssh, tpuctl data) are not built
# yet: until they are, this script uses OpenSSH and curl for those steps,
# with the host keys tpuctl reads from the node's guest attributes.
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

node="projects/$CLOUDSDK_CORE_PROJECT/locations/$CLOUDSDK_COMPUTE_ZONE/nodes/demo-pod"
step "propagate an SSH key through node metadata (ssh-keys)"
ssh-keygen -q -t ed25519 -N "" -C "$TPUCTL_SSH_USER" -f "$HOME/.ssh/demo"
entry="$TPUCTL_SSH_USER:$(cat "$HOME/.ssh/demo.pub")"
"$tpuctl" api --method PATCH --data "{\"metadata\":{\"ssh-keys\":\"$entry\"}}" \
    "v2/$node?updateMask=metadata" --format 'value(name)'
sleep 3

step "pin every worker's host key from the guest attributes"
"$tpuctl" api --method POST --data '{"queryPath":"hostkeys/"}' \
    "v2/$node:getGuestAttributes" --format json >"$work/ga.json"
"$tpuctl" describe demo-pod --format json >"$work/node.json"
python3 - "$work/ga.json" "$work/node.json" "$TPUCTL_SSH_PORT" \
    "$work/addrs" >"$HOME/.ssh/known_hosts" <<'PY'
import json, sys
ga = json.load(open(sys.argv[1]))["guestAttributes"]
eps = json.load(open(sys.argv[2]))["networkEndpoints"]
assert len(ga) == len(eps), (len(ga), len(eps))
with open(sys.argv[4], "w") as f:
    for ep, g in zip(eps, ga):
        f.write(ep["ipAddress"] + "\n")
        for it in g["queryValue"]["items"]:
            if it["namespace"] == "hostkeys":
                print("[%s]:%s %s %s" % (ep["ipAddress"], sys.argv[3],
                    it["key"], it["value"]))
PY

step "stage the training data in gs://demo-data"
token=$("$tpuctl" auth print-access-token)
head -c 1048576 /dev/urandom >"$work/train.bin"
"$tpuctl" api --service storage --method POST --data '{"name":"demo-data"}' \
    "storage/v1/b?project=$CLOUDSDK_CORE_PROJECT" --format 'value(name)'
curl -sSf -H "Authorization: Bearer $token" \
    -H 'Content-Type: application/octet-stream' --data-binary "@$work/train.bin" \
    "$STORAGE_EMULATOR_HOST/upload/storage/v1/b/demo-data/o?uploadType=media&name=train.bin" \
    >/dev/null
want=$(sha256sum <"$work/train.bin" | cut -c1-64)

step "run the job on all 4 workers: fetch the data, check it, report"
rc=0
w=0
while read -r addr; do
	ssh -n -i "$HOME/.ssh/demo" -p "$TPUCTL_SSH_PORT" \
	    -o StrictHostKeyChecking=yes -o BatchMode=yes \
	    -o UserKnownHostsFile="$HOME/.ssh/known_hosts" \
	    "$TPUCTL_SSH_USER@$addr" >"$work/w$w.out" \
	    "curl -sSf -H 'Authorization: Bearer $token' \
	        '$STORAGE_EMULATOR_HOST/storage/v1/b/demo-data/o/train.bin?alt=media' |
	     sha256sum | cut -c1-64 > data.sha &&
	     echo \"worker \$TPU_WORKER_ID of \$TPU_WORKER_HOSTNAMES: \$(cat data.sha)\"" ||
	    rc=1
	sed "s/^/[w$w] /" "$work/w$w.out"
	grep -q "$want" "$work/w$w.out" || rc=1
	w=$((w + 1))
done <"$work/addrs"
echo "expected data sha256: $want"

step "delete the pod"
"$tpuctl" delete --quiet demo-pod
"$tpuctl" list
[ $rc -eq 0 ] && echo "demo: done" || echo "demo: some workers failed" >&2
exit $rc
