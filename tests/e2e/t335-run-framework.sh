#!/bin/sh
# tpuctl run --framework F [--framework-version V]: the framework is
# installed on every worker exactly as "tpuctl install" does (same
# recipe, same per-worker lines and total), then the job runs and sees
# it; a second run finds it in place; a failed installation starts no
# job (exit 8, no job record).  Refusals (MXNet, an unknown version, a
# Python too old, --framework-version alone) exit 2 before anything runs
# on any worker: the emulator's log has no ssh-keys patch and no guest
# attributes request, no key is made, no job is recorded.
# Real pip (Debian's python3-pip) against the offline wheel index of
# tests/frameworks/build_index.sh: the matrix's find-links point there
# and each worker's pip.conf says --no-index (no traffic off loopback).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

expect_rc 0 "$TPUCTL" create pod --accelerator-type v4-32
expect_rc 0 "$TPUCTL" create old --accelerator-type v4-8 --version tpu-vm-base
jobs_dir="$HOME/.local/state/tpuctl/jobs"

# --- refusals: one line, exit 2, nothing on any worker, no job
before=$(emu_requests | wc -l)
refuse() {
	pat=$1
	shift
	expect_rc 2 "$TPUCTL" run "$@" -- sh -c 'echo JOB-RAN'
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "$*: not one line: $(cat "$T/err")"
	assert_grep "$pat" "$T/err"
	assert_no_grep 'JOB-RAN' "$T/out"
}
refuse "framework 'mxnet' cannot run on a TPU.*use jax, pytorch or tensorflow" \
    pod --framework mxnet
refuse "framework 'MXNet' cannot run on a TPU" \
    pod --framework MXNet --framework-version 1.9.1
refuse "jax 9.9 is not in tpuctl's compatibility matrix: use --framework-version 0.6.1" \
    pod --framework jax --framework-version 9.9
refuse "jax 0.6.1 needs Python >= 3.10, and runtime tpu-vm-base has Python 3.8" \
    old --framework jax
refuse "^tpuctl: --framework-version '0.6.1': needs --framework$" \
    pod --framework-version 0.6.1
emu_requests | tail -n +$((before + 1)) >"$T/req"
# (only the Python refusal needs the node: one nodes.get of 'old')
jq -e -s 'map(select(.path != "/token")) |
    length == 1 and .[0].method == "GET" and (.[0].path | test("/nodes/old$"))' \
    "$T/req" >/dev/null || fail "refusals reached the workers' side: $(cat "$T/req")"
[ ! -e "$HOME/.ssh/google_compute_engine" ] || fail "a refusal generated an SSH key"
[ -z "$(ls -A "$jobs_dir" 2>/dev/null)" ] || fail "a refusal recorded a job: $(ls "$jobs_dir")"

# --- the offline index, where the matrix and pip look
offline_wheel_index
expect_rc 0 "$TPUCTL" ssh pod --worker all -- \
    "mkdir -p ~/.config/pip && printf '[global]\nno-index = true\n' >~/.config/pip/pip.conf"

ver='from importlib import metadata; print("job sees", metadata.version("jax"), metadata.version("libtpu"))'
expect_rc 0 "$TPUCTL" run pod --framework jax --name fw1 -- python3 -c "$ver"
w=0
while [ $w -lt 4 ]; do
	assert_grep "^\[w$w\] jax 0\.6\.1 installed \(jax 0\.6\.1, jaxlib 0\.6\.1, libtpu 0\.0\.15\)$" "$T/out"
	assert_grep "^\[w$w\] job sees 0\.6\.1 0\.0\.15$" "$T/out"
	w=$((w + 1))
done
assert_grep '^jax 0\.6\.1: 4 of 4 workers succeeded$' "$T/err"
assert_grep '^job fw1: 4 of 4 workers succeeded$' "$T/err"
# the installation comes first, the job after it
[ "$(grep -n 'installed (' "$T/out" | tail -1 | cut -d: -f1)" -lt \
    "$(grep -n 'job sees' "$T/out" | head -1 | cut -d: -f1)" ] ||
    fail "the job ran before the installation ended: $(cat "$T/out")"

# a second run: nothing to do, the job runs; an explicit version
expect_rc 0 "$TPUCTL" run pod --framework jax --framework-version 0.6.1 \
    --name fw2 -- python3 -c "$ver"
assert_grep '^\[w3\] jax 0\.6\.1 already installed \(.*\): nothing to do$' "$T/out"
assert_no_grep 'Successfully installed' "$T/out"
assert_grep '^\[w2\] job sees 0\.6\.1 0\.0\.15$' "$T/out"

# another version of the matrix, on two workers only (--worker applies)
ver2='from importlib import metadata; print("job sees", metadata.version("jax"), metadata.version("libtpu-nightly"))'
expect_rc 0 "$TPUCTL" run pod --worker 0,2 --framework jax \
    --framework-version 0.4.34 --name fw3 -- python3 -c "$ver2"
assert_grep '^\[w0\] jax 0\.4\.34 installed \(jax 0\.4\.34, jaxlib 0\.4\.34, libtpu-nightly 0\.1\.dev20241002\)$' "$T/out"
assert_grep '^\[w2\] job sees 0\.4\.34 0\.1\.dev20241002$' "$T/out"
assert_no_grep '^\[w[13]\]' "$T/out"
assert_grep '^jax 0\.4\.34: 2 of 2 workers succeeded$' "$T/err"

# --- a failed installation starts no job: a wrong pin (jaxlib 0.6.2)
jq --arg idx "$IDX" '.frameworks[][].find_links = [$idx] |
    .frameworks.jax[0].requirements[1] = "jaxlib==0.6.2" |
    .frameworks.jax[0].packages.jaxlib = "0.6.2"' \
    "$SRCDIR/config/compat.json" >"$T/cfg/compat.json"
expect_rc 8 "$TPUCTL" run pod --framework jax --name fw4 -- sh -c 'echo JOB-RAN'
assert_grep '^\[w1\] jax 0\.6\.1: pip install failed$' "$T/out"
assert_grep '^tpuctl: jax 0\.6\.1: 4 of 4 workers failed$' "$T/err"
assert_no_grep 'JOB-RAN' "$T/out"
[ ! -e "$jobs_dir/fw4" ] || fail "a job was recorded after a failed installation"
