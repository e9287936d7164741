#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# Workers that know who they are, as on TPU VMs: from every worker of a
# v4-32 (4 workers) and of a 2-slice multislice queued resource (2 x
# v4-16), over SSH, curl to $GCE_METADATA_IP answers that worker's
# agent-worker-number, the node's worker-network-endpoints, its
# network-interfaces/0/ip and name, and its tpu-env; a python3 script of
# ours (standard library only) that follows JAX's GCE TPU cluster
# detection and PyTorch/XLA's tpu-env logic computes process ids, the
# process count and one coordinator that every worker agrees on, for one
# slice and for the multislice (MEGASCALE_*).  As root the same answers
# come on port 80 of the worker address.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=300 --set tpu.qr_provision_ms=300
fleet_api_setup

cat >"$T/detect.py" <<'PY'
# Our own re-statement of how JAX (jax/_src/clusters/cloud_tpu_cluster.py,
# GceTpuCluster) and PyTorch/XLA (torch_xla/_internal/tpu.py) learn a TPU
# worker's place from the metadata server; standard library only.  Prints
# one JSON object.
import json
import os
import urllib.request


def attribute(key):
    host = os.environ.get("GCE_METADATA_IP") or "metadata.google.internal"
    url = "http://%s/computeMetadata/v1/instance/attributes/%s" % (host, key)
    req = urllib.request.Request(url, headers={"Metadata-Flavor": "Google"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.read().decode()


def parse_tpu_env(text):
    # One "KEY: 'value'" line per variable (YAML single-quoted scalars).
    table = {}
    for line in text.splitlines():
        key, colon, value = line.partition(":")
        if not colon:
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == "'" and value[-1] == "'":
            value = value[1:-1].replace("''", "'")
        table[key.strip()] = value
    return table


def product(bounds):
    n = 1
    for part in bounds.split(","):
        n *= int(part)
    return n


in_slice = int(attribute("agent-worker-number"))
entries = attribute("worker-network-endpoints").split(",")
ips = [entry.split(":")[2] for entry in entries]
env = parse_tpu_env(attribute("tpu-env"))

# JAX: within-slice id and worker list; slices from MEGASCALE_* when a
# megascale coordinator is named, else one slice led by the first worker.
if env.get("MEGASCALE_COORDINATOR_ADDRESS") is not None:
    slices = int(env["MEGASCALE_NUM_SLICES"])
    slice_id = int(env["MEGASCALE_SLICE_ID"])
    leader = env["MEGASCALE_COORDINATOR_ADDRESS"]
else:
    slices, slice_id, leader = 1, 0, ips[0]
jax = {
    "process_id": in_slice + slice_id * len(ips),
    "process_count": len(ips) * slices,
    "coordinator": leader.split(":")[0] + ":8476",
}

# PyTorch/XLA: the host's worker id and the process bounds from tpu-env,
# the worker IPs from the endpoints; one process per chip of the host.
worker = int(env["WORKER_ID"])
hosts = product(env["TPU_PROCESS_BOUNDS"])
chips = product(env["TPU_CHIPS_PER_PROCESS_BOUNDS"])
xla = {
    "worker_id": worker,
    "hosts": hosts,
    "workers": len(ips),
    "task_ids": [worker * chips + rank for rank in range(chips)],
    "master": ips[0] if len(ips) > 1 else "localhost",
    "my_ip": ips[worker],
}
print(json.dumps({"jax": jax, "xla": xla, "slice": slice_id,
                  "worker": in_slice, "accelerator": env["ACCELERATOR_TYPE"]}))
PY
# The remote side: the curl answers, then the script's JSON, one tagged
# line each.
{
	cat <<'SH'
H='Metadata-Flavor: Google'
M="http://$GCE_METADATA_IP/computeMetadata/v1/instance"
echo "num $(curl -s -H "$H" "$M/attributes/agent-worker-number")"
echo "eps $(curl -s -H "$H" "$M/attributes/worker-network-endpoints")"
echo "ip $(curl -s -H "$H" "$M/network-interfaces/0/ip")"
echo "name $(curl -s -H "$H" "$M/name")"
curl -s -H "$H" "$M/attributes/tpu-env" | sed 's/^/env /'
/usr/bin/python3 - <<'END' | sed 's/^/py /'
SH
	cat "$T/detect.py"
	echo END
} >"$T/remote.sh"
remote=$(base64 -w0 "$T/remote.sh")

# field PREFIX KEY: the value after "KEY " on the lines of PREFIX.
field() {
	grep -F "$1 $2 " "$T/out" | sed "s/^[^ ]* $2 //"
}

# check_worker PREFIX W ADDR EPS: the curl answers of one worker.
check_worker() {
	[ "$(field "$1" num)" = "$2" ] || fail "$1: agent-worker-number $(field "$1" num)"
	[ "$(field "$1" eps)" = "$4" ] || fail "$1: endpoints $(field "$1" eps), want $4"
	[ "$(field "$1" ip)" = "$3" ] || fail "$1: ip $(field "$1" ip)"
	want=$(printf '%s' "$4" | cut -d, -f$(($2 + 1)) | cut -d: -f1)
	[ "$(field "$1" name)" = "$want" ] || fail "$1: name $(field "$1" name), want $want"
	field "$1" env >"$T/env"
	assert_grep "^WORKER_ID: '$2'\$" "$T/env"
	assert_grep "^ZONE: 'us-central2-b'\$" "$T/env"
	assert_grep "^CHIPS_PER_HOST_BOUNDS: '2,2,1'\$" "$T/env"
	assert_grep "^TPU_CHIPS_PER_PROCESS_BOUNDS: '2,2,1'\$" "$T/env"
}

# addrs NODE: the node's worker addresses (networkEndpoints), one a line.
addrs() {
	fleet_api GET "$NODES/$1" | jq -r '.networkEndpoints[].ipAddress'
}

# ---- one slice: v4-32, 4 workers ----
fleet_create_node t110 v4-32 90
expect_rc 0 "$TPUCTL" ssh t110 --worker all -- sh -c "echo $remote | base64 -d | sh"
# shellcheck disable=SC2046 # one word per address
set -- $(addrs t110)
[ $# = 4 ] || fail "v4-32 has $# workers"
eps=$(field '[w0]' eps)
printf '%s\n' "$eps" | grep -Eq "^t1v-n-[0-9a-f]{8}-w-0:[0-9]+:$1,t1v-n-[0-9a-f]{8}-w-1:[0-9]+:$2,t1v-n-[0-9a-f]{8}-w-2:[0-9]+:$3,t1v-n-[0-9a-f]{8}-w-3:[0-9]+:$4\$" ||
    fail "worker-network-endpoints: $eps"
w=0
for a in "$@"; do
	check_worker "[w$w]" $w "$a" "$eps"
	assert_grep "^ACCELERATOR_TYPE: 'v4-32'\$" "$T/env"
	assert_grep "^HOST_BOUNDS: '1,1,4'\$" "$T/env"
	assert_grep "^TPU_PROCESS_BOUNDS: '1,1,4'\$" "$T/env"
	assert_grep "^TOPOLOGY: '2x2x4'\$" "$T/env"
	assert_no_grep '^MEGASCALE' "$T/env"
	w=$((w + 1))
done
grep '^\[w[0-3]\] py ' "$T/out" | sed 's/^\[w\([0-3]\)\] py /\1 /' |
    while read -r wk js; do
	    printf '%s\n' "$js" | jq -c --argjson w "$wk" '. + {ssh_worker: $w}'
    done >"$T/py.jsonl"
jq -e -s --arg c "$1:8476" --arg m "$1" '
    length == 4 and
    ([.[].jax.process_id] | sort) == [0, 1, 2, 3] and
    all(.jax.process_id == .ssh_worker) and
    all(.jax.process_count == 4) and
    all(.jax.coordinator == $c) and
    all(.xla.worker_id == .ssh_worker and .xla.hosts == 4 and
        .xla.workers == 4 and .xla.master == $m) and
    ([.[].xla.task_ids[]] | sort) == [range(0; 16)]' "$T/py.jsonl" >/dev/null ||
    fail "frameworks disagree (one slice): $(cat "$T/py.jsonl")"

# As root, port 80 of a worker address is its metadata server too.
if [ "$(id -u)" = 0 ] && grep -q "cannot listen on $3:80" "$EMU_DIR/emulator.log"; then
	# Another emulator running at once holds that address's port 80.
	echo "t110: $3:80 is taken by another process: not checked" >&2
elif [ "$(id -u)" = 0 ]; then
	[ "$(curl -s -H 'Metadata-Flavor: Google' \
	    "http://$3:80/computeMetadata/v1/instance/attributes/agent-worker-number")" = 2 ] ||
	    fail "port 80 of worker 2"
else
	echo "t110: not root: no port-80 listeners to check" >&2
fi

# ---- a multislice: 2 x v4-16 ----
expect_rc 0 "$TPUCTL" queued-resources create t110q --node-count 2 \
    --node-prefix ms --accelerator-type v4-16
expect_rc 0 "$TPUCTL" ssh t110q --node all --worker all -- sh -c "echo $remote | base64 -d | sh"
# shellcheck disable=SC2046 # one word per address
set -- $(addrs ms-0)
s0w0=$1
for s in 0 1; do
	# shellcheck disable=SC2046 # one word per address
	set -- $(addrs ms-$s)
	[ $# = 2 ] || fail "ms-$s has $# workers"
	eps=$(field "[s$s/w0]" eps)
	printf '%s\n' "$eps" | grep -Eq "^t1v-n-[0-9a-f]{8}-w-0:[0-9]+:$1,t1v-n-[0-9a-f]{8}-w-1:[0-9]+:$2\$" ||
	    fail "ms-$s worker-network-endpoints: $eps"
	w=0
	for a in "$@"; do
		check_worker "[s$s/w$w]" $w "$a" "$eps"
		assert_grep "^ACCELERATOR_TYPE: 'v4-16'\$" "$T/env"
		assert_grep "^HOST_BOUNDS: '1,1,2'\$" "$T/env"
		assert_grep "^TOPOLOGY: '2x2x2'\$" "$T/env"
		assert_grep "^MEGASCALE_NUM_SLICES: '2'\$" "$T/env"
		assert_grep "^MEGASCALE_SLICE_ID: '$s'\$" "$T/env"
		assert_grep "^MEGASCALE_COORDINATOR_ADDRESS: '$s0w0:8080'\$" "$T/env"
		assert_grep "^MEGASCALE_PORT: '8080'\$" "$T/env"
		w=$((w + 1))
	done
done
grep '^\[s[01]/w[01]\] py ' "$T/out" |
    sed 's/^\[s\([01]\)\/w\([01]\)\] py /\1 \2 /' |
    while read -r sl wk js; do
	    printf '%s\n' "$js" |
		jq -c --argjson s "$sl" --argjson w "$wk" '. + {ssh_slice: $s, ssh_worker: $w}'
    done >"$T/py.jsonl"
jq -e -s --arg c "$s0w0:8476" '
    length == 4 and
    ([.[].jax.process_id] | sort) == [0, 1, 2, 3] and
    all(.jax.process_id == .ssh_slice * 2 + .ssh_worker) and
    all(.jax.process_count == 4) and
    all(.jax.coordinator == $c) and
    all(.slice == .ssh_slice and .xla.worker_id == .ssh_worker and
        .xla.hosts == 2 and .xla.workers == 2)' "$T/py.jsonl" >/dev/null ||
    fail "frameworks disagree (multislice): $(cat "$T/py.jsonl")"
