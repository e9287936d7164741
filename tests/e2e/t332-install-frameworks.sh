#!/bin/sh
# tpuctl install: each framework of the matrix installed for real with
# pip (Debian's python3-pip) on a v4-32's four workers, from an offline
# index of hand-made wheels with the real names, versions and TPU pins
# (tests/frameworks/build_index.sh): every pinned command line of the
# matrix resolves, a second run reports nothing to do, a wrong pin fails
# (exit 8).  Refusals (MXNet, an unknown version, TensorFlow on a base
# runtime, Python too old) exit 2 before any SSH: the emulator's log has
# no ssh-keys patch and no guest-attribute request, and no key is made.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

PY=/usr/bin/python3 # Debian's pip (DESIGN: python3 of the TPU VM image)
expect_rc 0 "$TPUCTL" create pod --accelerator-type v4-32
expect_rc 0 "$TPUCTL" create old --accelerator-type v4-8 --version tpu-vm-base
expect_rc 0 "$TPUCTL" create tf --accelerator-type v4-8 \
    --version tpu-vm-tf-2.16.1-pjrt

# --- refusals: one line, exit 2, nothing on any worker
before=$(emu_requests | wc -l)
refuse() {
	pat=$1
	shift
	expect_rc 2 "$TPUCTL" install "$@"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "$*: not one line: $(cat "$T/err")"
	assert_grep "$pat" "$T/err"
}
refuse "framework 'mxnet' cannot run on a TPU.*use jax, pytorch or tensorflow" \
    pod --framework mxnet
refuse "framework 'chainer' cannot run on a TPU" pod --framework chainer
refuse "jax 9.9 is not in tpuctl's compatibility matrix: use --version 0.6.1" \
    pod --framework jax --version 9.9
refuse "unknown framework 'keras'" pod --framework keras
refuse "runtime tpu-ubuntu2204-base has no TensorFlow support: create the node with --version tpu-vm-tf-2.16.1-pjrt" \
    pod --framework tensorflow
refuse "tensorflow 2.15.0 is not known to work on v4 with runtime tpu-vm-tf-2.16.1-pjrt: use --version 2.16.1" \
    tf --framework tensorflow --version 2.15.0
refuse "jax 0.6.1 needs Python >= 3.10, and runtime tpu-vm-base has Python 3.8: use a node with runtime tpu-ubuntu2204-base" \
    old --framework jax
refuse "--no-index needs --find-links" pod --framework jax --no-index
emu_requests | tail -n +$((before + 1)) >"$T/req"
jq -e -s 'length >= 3 and all(.method == "GET" or .path == "/token") and
    all(.path | test("getGuestAttributes") | not) and
    any(.path | test("/nodes/pod$"))' "$T/req" >/dev/null ||
    fail "refusals reached the workers' side: $(cat "$T/req")"
[ ! -e "$HOME/.ssh/google_compute_engine" ] || fail "a refusal generated an SSH key"

# --- the offline index
# (outside /tmp: as root each worker has its own /tmp, not the test's)
IDX=$(mktemp -d /var/tmp/tpuctl-e2e-idx.XXXXXX)
trap 'rc=$?; rm -rf "$IDX"; (exit $rc); cleanup' EXIT
"$SRCDIR/tests/frameworks/build_index.sh" "$IDX" >/dev/null
I="--no-index --find-links $IDX --python $PY"

# shellcheck disable=SC2086 # $I is words on purpose
installed() { # FRAMEWORK VERSION STATE-REGEX ARGS...
	fw=$1 ver=$2 state=$3
	shift 3
	expect_rc 0 "$TPUCTL" install "$@"
	w=0
	while [ $w -lt 4 ]; do
		assert_grep "^\[w$w\] $fw $ver installed \($state\)$" "$T/out"
		w=$((w + 1))
	done
	assert_grep "^$fw $ver: 4 of 4 workers succeeded$" "$T/err"
}

# jax, newest (0.6.1): jax[tpu]==0.6.1 jaxlib==0.6.1 libtpu==0.0.15.*
# shellcheck disable=SC2086
installed jax 0.6.1 'jax 0.6.1, jaxlib 0.6.1, libtpu 0.0.15' \
    pod --framework jax $I
assert_grep '^\[w2\] Successfully installed jax-0\.6\.1 jaxlib-0\.6\.1 libtpu-0\.0\.15$' "$T/out"
# (the log check above can fail: an install does patch and read them)
emu_requests | tail -n +$((before + 1)) >"$T/req"
jq -e -s 'any(.method == "PATCH") and any(.path | test("getGuestAttributes"))' \
    "$T/req" >/dev/null || fail "no ssh-keys patch or guest attributes seen"
# a second run changes nothing, quickly
start=$(date +%s)
# shellcheck disable=SC2086
expect_rc 0 "$TPUCTL" install pod --framework jax $I
[ $(($(date +%s) - start)) -lt 20 ] || fail "a run with nothing to do is slow"
w=0
while [ $w -lt 4 ]; do
	assert_grep "^\[w$w\] jax 0\.6\.1 already installed \(jax 0\.6\.1, jaxlib 0\.6\.1, libtpu 0\.0\.15\): nothing to do$" "$T/out"
	w=$((w + 1))
done
assert_no_grep 'Successfully installed' "$T/out"
# the older pinned line (libtpu-nightly from the find-links page)
# shellcheck disable=SC2086
installed jax 0.4.34 'jax 0.4.34, jaxlib 0.4.34, libtpu-nightly 0.1.dev20241002' \
    pod --framework jax --version 0.4.34 $I

# pytorch: torch==2.6.0 torch_xla[tpu]==2.6.0 libtpu-nightly==0.1.dev20241020
# shellcheck disable=SC2086
installed pytorch 2.6.0 'torch 2.6.0, torch_xla 2.6.0, libtpu-nightly 0.1.dev20241020' \
    pod --framework pytorch $I
assert_grep '^\[w0\] Successfully installed .*tpu-info-0\.2\.0' "$T/out"
# shellcheck disable=SC2086
expect_rc 0 "$TPUCTL" install pod --framework pytorch $I
assert_grep '^\[w3\] pytorch 2\.6\.0 already installed .*nothing to do$' "$T/out"

# tensorflow on its runtime (one worker)
# shellcheck disable=SC2086
expect_rc 0 "$TPUCTL" install tf --framework tensorflow $I
assert_grep '^\[w0\] tensorflow 2\.16\.1 installed \(tensorflow-tpu 2\.16\.1\)$' "$T/out"

# each worker has its own installation (its own HOME)
# shellcheck disable=SC2086
expect_rc 0 "$TPUCTL" ssh pod --worker 1 -- $PY -c \
    'from importlib import metadata; print(metadata.version("torch_xla"))'
[ "$(cat "$T/out")" = "[w1] 2.6.0" ] || fail "torch_xla on worker 1: $(cat "$T/out")"

# --- a wrong pin fails: jax 0.6.1 declares jaxlib<=0.6.1
mkdir "$T/cfg"
cp -r "$SRCDIR/config/recipes" "$T/cfg/"
jq '.frameworks.jax[0].requirements[1] = "jaxlib==0.6.2" |
    .frameworks.jax[0].packages.jaxlib = "0.6.2"' \
    "$SRCDIR/config/compat.json" >"$T/cfg/compat.json"
# shellcheck disable=SC2086
TPUCTL_CONFIG_DIR="$T/cfg" expect_rc 8 "$TPUCTL" install pod --framework jax $I
assert_grep '^\[w0\] .*(ResolutionImpossible|conflicting dependencies)' "$T/out"
assert_grep '^\[w1\] jax 0\.6\.1: pip install failed$' "$T/out"
assert_grep '^worker 3: exit 4 ' "$T/err"
assert_grep '^tpuctl: jax 0\.6\.1: 4 of 4 workers failed$' "$T/err"

# --- the recipe checks the worker's own Python too (the matrix only
# knows the runtime's): a runtime said to have 3.12 with a 3.11 worker
jq '.runtimes["tpu-ubuntu2204-base"].python = "3.12" |
    .frameworks.jax[0].python_min = "3.12"' \
    "$SRCDIR/config/compat.json" >"$T/cfg/compat.json"
# shellcheck disable=SC2086
TPUCTL_CONFIG_DIR="$T/cfg" expect_rc 8 "$TPUCTL" install pod --framework jax $I
assert_grep "^\[w2\] jax 0\.6\.1 needs Python >= 3\.12; $PY is 3\.[0-9]+\.[0-9]+$" "$T/out"
assert_grep '^worker 2: exit 3 ' "$T/err"
