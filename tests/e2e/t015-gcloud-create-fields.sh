#!/bin/sh
# Issue 17: gcloud's create and queued-resources create flags that map
# onto tpu.v2/v2alpha1 fields: --range (cidrBlock), --queue-count
# (networkConfig.queueCount), --shielded-secure-boot
# (shieldedInstanceConfig.enableSecureBoot), --autocheckpoint-enabled
# (autocheckpointEnabled) and --boot-disk (bootDiskConfig), both v2alpha1
# only so the request goes to /v2alpha1/, --provisioning-model
# (standard | spot | reservation-bound -> schedulingConfig, or the queued
# resource's spot tier), --best-effort (QueuedResource.bestEffort,
# v2alpha1), --network-config (one networkConfig).  Each: the request
# body tpuctl sends (--dry-run prints it), the emulator's request log
# (the API version in the path) and the stored resource (describe); bad
# values are one line naming the value, exit 2, nothing sent; the
# emulator refuses a bad cidrBlock/bootDiskConfig sent raw.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_tpu.sh
. "$(dirname "$0")/lib_tpu.sh"
# shellcheck disable=SC2119
emu_start
tpu_setup
KMS=projects/kp/locations/us/keyRings/r1/cryptoKeys/k1

# body ARGS...: the JSON body "create" would POST (--dry-run).
body() {
	"$TPUCTL" --dry-run create d1 --accelerator-type v4-8 "$@" >"$T/dry" 2>"$T/err" ||
	    fail "dry-run create $*: $(cat "$T/err")"
	jq -c .body "$T/dry"
}
# has JQ-EXPR ARGS...: the dry-run body of create ARGS satisfies JQ-EXPR.
has() {
	_e=$1
	shift
	body "$@" >"$T/b"
	jq -e "$_e" "$T/b" >/dev/null || fail "create $*: body $(cat "$T/b") fails $_e"
}
# url ARGS...: the URL of the dry-run request.
url() {
	body "$@" >/dev/null
	jq -r .url "$T/dry"
}

has '.cidrBlock == "10.0.0.8/29"' --range 10.0.0.8/29
has '.networkConfig.queueCount == 4 and .networkConfig.enableExternalIps == true' --queue-count 4
has '.networkConfig == {"network":"n1","subnetwork":"s1","enableExternalIps":false,"queueCount":2}' \
    --network n1 --subnetwork s1 --internal-ips --queue-count 2
has '.shieldedInstanceConfig == {"enableSecureBoot":true}' --shielded-secure-boot
has '.autocheckpointEnabled == true' --autocheckpoint-enabled
has ".bootDiskConfig == {\"enableConfidentialCompute\":true,\"customerEncryptionKey\":{\"kmsKeyName\":\"$KMS\"}}" \
    --boot-disk "confidential-compute=True,kms-key=$KMS"
has ".bootDiskConfig == {\"customerEncryptionKey\":{\"kmsKeyName\":\"$KMS\"}}" --boot-disk "kms-key=$KMS"
has '.schedulingConfig == {"spot":true}' --provisioning-model=spot
has '.schedulingConfig == {"reserved":true}' --provisioning-model RESERVATION_BOUND
has 'has("schedulingConfig") | not' --provisioning-model Standard
has '.networkConfig == {"network":"n2","enableExternalIps":false}' --network-config network=n2
has '.networkConfig == {"network":"n2","subnetwork":"s2","enableExternalIps":true}' \
    --network-config network=n2,subnetwork=s2,external-ips=true
# v2alpha1 only for the fields only v2alpha1 has
case $(url --range 10.0.0.8/29 --shielded-secure-boot) in
*/v2/projects/*) ;;
*) fail "v2 fields went to $(url --range 10.0.0.8/29)" ;;
esac
for f in --autocheckpoint-enabled "--boot-disk=kms-key=$KMS"; do
	case $(url "$f") in
	*/v2alpha1/projects/*) ;;
	*) fail "$f not sent to v2alpha1: $(url "$f")" ;;
	esac
done

# bad values: one line naming the value and the rule, exit 2, nothing sent
before=$(emu_requests | wc -l)
bad() {
	_w=$1
	shift
	expect_rc 2 "$TPUCTL" "$@"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "$*: not one line: $(cat "$T/err")"
	grep -qF -- "$_w" "$T/err" || fail "$*: '$_w' not in: $(cat "$T/err")"
}
C="create b1 --accelerator-type v4-8"
Q="queued-resources create bq --accelerator-type v4-8 --node-id bn"
# shellcheck disable=SC2086 # $C and $Q are words
{
bad "invalid --range '10.0.0.1/29': the address of a /29 block ends in a multiple of 8 (e.g. 10.0.0.0/29)" $C --range 10.0.0.1/29
bad "invalid --range '10.0.0.0/24': expected a /29 CIDR block" $C --range 10.0.0.0/24
bad "invalid --range '300.0.0.0/29'" $C --range 300.0.0.0/29
bad "invalid --queue-count '0': a number of queues from 1 to 32" $C --queue-count 0
bad "invalid --queue-count 'x'" $C --queue-count x
bad "confidential-compute=true needs kms-key=KEY" $C --boot-disk confidential-compute=true
bad "invalid --boot-disk key 'size': the keys are confidential-compute and kms-key" $C --boot-disk size=10
bad "invalid --boot-disk confidential-compute 'maybe': expected true or false" $C --boot-disk confidential-compute=maybe
bad "invalid --boot-disk kms-key 'k1': expected a Cloud KMS key" $C --boot-disk kms-key=k1
bad "invalid --provisioning-model 'cheap': one of standard, spot, reservation-bound" $C --provisioning-model cheap
bad "flex-start is not supported" $C --provisioning-model flex-start
bad "--provisioning-model excludes --spot" $C --provisioning-model spot --spot
bad "--network-config 'external-ips=true' needs network=NETWORK or subnetwork=SUBNETWORK" $C --network-config external-ips=true
bad "invalid --network-config key 'mtu'" $C --network-config network=n,mtu=1
bad "--network-config excludes --network" $C --network-config network=n --network m
bad "--network-config given 2 times" $C --network-config network=n --network-config network=m
bad "--spot, --guaranteed, --reserved and --best-effort exclude each other" $Q --best-effort --spot
bad "--provisioning-model excludes --spot, --guaranteed, --reserved and --best-effort" $Q --best-effort --provisioning-model spot
bad "invalid --provisioning-model 'x'" $Q --provisioning-model x
}
[ "$(emu_requests | wc -l)" = "$before" ] || fail "a refused create sent requests"

# a real create: the v2alpha1 path in the request log, the fields stored
expect_rc 0 "$TPUCTL" create n1 --accelerator-type v4-8 --range 10.0.0.16/29 \
    --queue-count 4 --shielded-secure-boot --autocheckpoint-enabled \
    --boot-disk "confidential-compute=true,kms-key=$KMS" \
    --provisioning-model reservation-bound
emu_requests | jq -e -s "[.[] | select(.method == \"POST\" and
    .path == \"/v2alpha1/$P/nodes\" and .query == \"nodeId=n1\")] | length == 1" >/dev/null ||
    fail "no POST of n1 to v2alpha1: $(emu_tpu_mutations)"
expect_rc 0 "$TPUCTL" describe n1 --format json
# (XXX the emulator's node_build, emulator/tpu.c, does not keep
# networkConfig.queueCount: only the request body above checks it)
jq -e ".cidrBlock == \"10.0.0.16/29\" and
    .shieldedInstanceConfig.enableSecureBoot == true and
    .autocheckpointEnabled == true and
    .bootDiskConfig.enableConfidentialCompute == true and
    .bootDiskConfig.customerEncryptionKey.kmsKeyName == \"$KMS\" and
    .schedulingConfig.reserved == true" "$T/out" >/dev/null ||
    fail "n1 not stored with its fields: $(cat "$T/out")"

# queued resources: --best-effort (v2alpha1), --provisioning-model spot
# (the spot tier), --network-config
expect_rc 0 "$TPUCTL" queued-resources create q1 --accelerator-type v4-8 \
    --node-id qn1 --best-effort --network-config network=net1
emu_requests | jq -e -s "[.[] | select(.method == \"POST\" and
    .path == \"/v2alpha1/$P/queuedResources\")] | length == 1" >/dev/null ||
    fail "no POST of q1 to v2alpha1: $(emu_tpu_mutations)"
expect_rc 0 "$TPUCTL" queued-resources describe q1 --format json
jq -e 'has("bestEffort") and (has("spot") | not)' "$T/out" >/dev/null ||
    fail "q1 not best effort: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" describe qn1 --format json
jq -e '(.networkConfig.network | endswith("/networks/net1")) and
    (.networkConfig.enableExternalIps // false) == false' "$T/out" >/dev/null ||
    fail "qn1's network: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" queued-resources create q2 --accelerator-type v4-8 \
    --node-id qn2 --provisioning-model SPOT --range 10.0.0.24/29
expect_rc 0 "$TPUCTL" queued-resources describe q2 --format json
jq -e 'has("spot")' "$T/out" >/dev/null || fail "q2 not spot: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" describe qn2 --format 'value(cidrBlock)'
[ "$(cat "$T/out")" = 10.0.0.24/29 ] || fail "qn2 cidrBlock: $(cat "$T/out")"

# the emulator's own rules for the same fields, sent raw
V4='"acceleratorType":"v4-8","runtimeVersion":"tpu-vm-v4-base"'
raw_refused() {
	expect_api 400 POST "/$1/$P/nodes?nodeId=raw" "{$V4,$2}"
	expect_jq ".error.message | contains(\"$3\")" true
}
raw_refused v2 '"cidrBlock":"10.0.0.3/29"' "node.cidr_block"
raw_refused v2 '"cidrBlock":"10.0.0.0/30"' "a /29 block such as"
raw_refused v2 '"networkConfig":{"queueCount":0}' "node.network_config.queue_count"
raw_refused v2 '"shieldedInstanceConfig":{"enableSecureBoot":"yes"}' "must be a boolean"
raw_refused v2alpha1 '"autocheckpointEnabled":1' "node.autocheckpoint_enabled"
raw_refused v2alpha1 '"bootDiskConfig":{"enableConfidentialCompute":true}' "needs customer_encryption_key.kms_key_name"
raw_refused v2alpha1 '"bootDiskConfig":{"customerEncryptionKey":{"kmsKeyName":"k"}}' "not a Cloud KMS key name"
expect_api 200 POST "/v2alpha1/$P/nodes?nodeId=raw" \
    "{$V4,\"bootDiskConfig\":{\"customerEncryptionKey\":{\"kmsKeyName\":\"$KMS/cryptoKeyVersions/1\"}}}"
