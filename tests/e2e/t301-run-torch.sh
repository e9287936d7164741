#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# tpuctl run of a real PyTorch program (Debian's python3-torch, CPU, gloo,
# init_process_group(init_method="env://")) on a v4-32 node (4 workers)
# and on a 2-slice multislice queued resource (2 x v4-16): every rank
# all-reduces its rank and checks the sum, so RANK, WORLD_SIZE,
# MASTER_ADDR and MASTER_PORT must be right on every worker of every
# slice; the multislice also checks the MEGASCALE_* variables.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

/usr/bin/python3 -c 'import torch.distributed' 2>/dev/null ||
	fail "python3-torch is not installed (scripts/install-deps.sh)"

emu_start --set fleet.key_delay_ms=200 --set tpu.qr_provision_ms=300
fleet_api_setup
fleet_create_node t301 v4-32 90

mkdir "$T/wd"
cat >"$T/wd/allreduce.py" <<'PY'
import os
import torch
import torch.distributed as dist

dist.init_process_group("gloo", init_method="env://")
r, n = dist.get_rank(), dist.get_world_size()
assert r == int(os.environ["RANK"]) and n == int(os.environ["WORLD_SIZE"])
slices = int(os.environ["TPUCTL_SLICES"])
if slices > 1:
    assert os.environ["MEGASCALE_NUM_SLICES"] == str(slices)
    assert os.environ["MEGASCALE_SLICE_ID"] == os.environ["TPUCTL_SLICE"]
    assert os.environ["MEGASCALE_COORDINATOR_ADDRESS"] == os.environ["MASTER_ADDR"]
t = torch.tensor([float(r)])
dist.all_reduce(t)
want = n * (n - 1) // 2
assert int(t.item()) == want, (t.item(), want)
print(f"rank {r}/{n} sum {int(t.item())} ok")
dist.destroy_process_group()
PY

port=$((20000 + $$ % 20000))
expect_rc 0 "$TPUCTL" run t301 --workdir "$T/wd" --env "MASTER_PORT=$port" \
    -- /usr/bin/python3 allreduce.py
for w in 0 1 2 3; do
	assert_grep "^\[w$w\] rank $w/4 sum 6 ok\$" "$T/out"
done
assert_grep '^job python3-[0-9]{8}-[0-9]{6}-[0-9a-f]{4}: 4 of 4 workers succeeded$' "$T/err"

expect_rc 0 "$TPUCTL" queued-resources create t301q --node-count 2 \
    --node-prefix ms --accelerator-type v4-16
expect_rc 0 "$TPUCTL" run t301q --workdir "$T/wd" \
    --env "MASTER_PORT=$((port + 1))" -- /usr/bin/python3 allreduce.py
for s in 0 1; do
	for w in 0 1; do
		assert_grep "^\[s$s/w$w\] rank $((s * 2 + w))/4 sum 6 ok\$" "$T/out"
		assert_grep "^node ms-$s \\(slice $s\\) worker $w: exited 0\$" "$T/err"
	done
done
assert_grep ': 4 of 4 workers succeeded \(2 nodes\)$' "$T/err"

# One slice of the two: its global ranks and the job's shape are kept.
expect_rc 0 "$TPUCTL" run t301q --node 1 --name one-slice -- \
    sh -c 'echo "$RANK/$WORLD_SIZE s$TPUCTL_SLICE/$TPUCTL_SLICES"'
assert_grep '^\[s1/w0\] 2/4 s1/2$' "$T/out"
assert_grep '^\[s1/w1\] 3/4 s1/2$' "$T/out"
[ "$(wc -l <"$T/out")" -eq 2 ] || fail "--node 1: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" logs one-slice --output raw
[ "$(sort "$T/out")" = "2/4 s1/2
3/4 s1/2" ] || fail "logs one-slice: $(cat "$T/out")"
