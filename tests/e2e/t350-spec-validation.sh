#!/bin/sh
# Spec files (tpuctl-submit(5)) are checked completely before anything is
# sent: for every field a bad value makes "tpuctl apply" and "tpuctl diff"
# exit 2 with a message naming the field's path and the rule, and the
# emulator's request log stays empty (no token, no GET, no POST).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

mkdir -p "$T/wd"
: >"$T/wd.file"
# case FIELD-IN-MESSAGE SLICE-LINES TOP-LINES [NAME]
n=0
case_() {
	msg=$1 slice=$2 top=$3 name=${4:-v1}
	n=$((n + 1))
	{
		printf 'name: %s\nslice:\n' "$name"
		case "$slice" in
		*accelerator-type:* | *type:*) ;;
		*) printf '  accelerator-type: v4-8\n' ;;
		esac
		[ -z "$slice" ] || printf '%s\n' "$slice"
		[ -z "$top" ] || printf '%s\n' "$top"
	} >"$T/s$n.yaml"
	for verb in apply diff; do
		expect_rc 2 "$TPUCTL" "$verb" "$T/s$n.yaml"
		assert_grep "^tpuctl: $T/s$n.yaml: $msg" "$T/err"
		[ "$(wc -l <"$T/err")" -eq 1 ] || fail "case $n: more than one line"
		[ ! -s "$T/out" ] || fail "case $n: $verb printed on stdout"
	done
}

case_ 'name: ' '' '' Bad_Name
case_ 'slice.accelerator-type: ' '  accelerator-type: v4-7' ''
case_ 'slice.type: goes with slice.topology' '  type: v4' ''
case_ 'slice.topology: ' '  topology: 2x2x4' ''
case_ 'slice.version: must not be empty' "  version: ''" ''
case_ "slice.spot: must be true or false, not a string 'yes'" '  spot: yes' ''
case_ 'slice.preemptible: ' '  preemptible: 1' ''
case_ 'slice.reserved: ' '  reserved: on' ''
case_ 'slice.guaranteed: ' '  guaranteed: x' ''
case_ 'slice.spot: spot, preemptible, reserved and guaranteed exclude' \
    '  spot: true
  guaranteed: true' ''
case_ 'slice.zones\[0\]: ' '  zones: [us-central2]' ''
case_ 'slice.zones\[0\]: zone europe-west4-a does not offer v4' \
    '  zones: [europe-west4-a]' ''
case_ 'slice.node-count: 1 is out of range: 2 to 256' '  node-count: 1' ''
case_ 'slice.node-prefix: goes with slice.node-count' '  node-prefix: p' ''
case_ 'slice.labels.Env: ' '  labels: {Env: dev}' ''
case_ 'slice.labels.tpuctl-run-id: the label is reserved' \
    '  labels: {tpuctl-run-id: x}' ''
case_ 'slice.metadata.no-such-key: ' '  metadata: {no-such-key: x}' ''
case_ 'slice.metadata-raw: ' '  metadata-raw: maybe' ''
case_ 'slice.description: must be a string' '  description: [x]' ''
case_ 'slice.network: must not be empty' "  network: ''" ''
case_ 'slice.subnetwork: must be a string' '  subnetwork: {}' ''
case_ 'slice.internal-ips: ' '  internal-ips: 3' ''
case_ "slice.tags: item 0 'a,b' has a comma" "  tags: ['a,b']" ''
case_ 'slice.scopes: must not be an empty list' '  scopes: []' ''
case_ "slice.service-account: 'nobody' is not an email" \
    '  service-account: nobody' ''
case_ 'slice.valid-until-duration: ' '  valid-until-duration: 5x' ''
case_ "unknown key 'slice.zoens'; did you mean 'slice.zones'\?" \
    '  zoens: [us-central2-b]' ''
case_ "unknown key 'slcie'; did you mean 'slice'\?" '' 'slcie: {}'
case_ "framework: 'JAX' is not a framework name" '' 'framework: JAX
command: x'
case_ "workdir: '$T/wd.file' is not a directory" '' "workdir: $T/wd.file
command: x"
case_ "stage: 's3://b/p' is not a gs://" '' 'stage: s3://b/p
command: x'
case_ "env.1X: '1X' is not a variable name" '' 'env: {1X: a}
command: x'
case_ 'command: must not be an empty list' '' 'command: []'
case_ 'max-restarts: -1 is out of range' '' 'max-restarts: -1
command: x'
case_ 'timeout: ' '' 'timeout: forever
command: x'
case_ 'delete-after: must be true or false' '' 'delete-after: sure
command: x'
case_ 'env: describes a job: give its command too' '' 'env: {A: b}'

# Not YAML, and JSON with a mistyped value.
printf 'name: v1\nslice: {accelerator-type: v4-8\n' >"$T/broken.yaml"
expect_rc 2 "$TPUCTL" apply "$T/broken.yaml"
assert_grep "^tpuctl: $T/broken.yaml:[0-9]+:[0-9]+: invalid YAML" "$T/err"
printf '{"name": "v1", "slice": {"accelerator-type": "v4-8", "spot": "yes"}}' \
    >"$T/s.json"
expect_rc 2 "$TPUCTL" diff "$T/s.json"
assert_grep "s.json: slice.spot: must be true or false" "$T/err"
expect_rc 2 "$TPUCTL" apply "$T/missing.yaml"
assert_grep 'missing.yaml' "$T/err"

# "-" reads the spec from a pipe.
# shellcheck disable=SC2016 # expanded by the inner sh
expect_rc 2 sh -c 'cat "$1" | "$2" apply -' sh "$T/s1.yaml" "$TPUCTL"
assert_grep "^tpuctl: -: name: name 'Bad_Name' is not valid" "$T/err"

# Nothing at all was sent for any of them.
[ "$(emu_requests | wc -l)" -eq 0 ] ||
    fail "requests were sent: $(emu_requests | jq -c '[.method, .path]')"

# A good spec with a job part passes (apply then talks to the API).
printf 'name: v1\nslice: {accelerator-type: v4-8}\nworkdir: wd\ncommand: [python3, -c, "print(1)"]\nenv: {STEPS: 10}\nmax-restarts: 2\ntimeout: 1h\n' \
    >"$T/good.yaml"
# shellcheck disable=SC2016 # expanded by the inner sh
(cd "$T" && expect_rc 1 sh -c 'cat good.yaml | "$1" diff -' sh "$TPUCTL")
assert_grep '^\+ node: v1 \(v4-8 in us-central2-b\)$' "$T/out"
# ... and the log does record what is sent (so the empty log above means
# something): one GET of the node, nothing else of the TPU API.
emu_requests | jq -e -s '[.[] | select(.path | startswith("/v2/"))] |
    length == 1 and .[0].method == "GET" and
    (.[0].path | endswith("/nodes/v1"))' >/dev/null ||
    fail "log after diff: $(emu_requests | jq -c '[.method, .path]')"
echo "ok: $n spec validation cases"
