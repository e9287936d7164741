#!/bin/sh
# Issue 17: update's gcloud flags on nodes.patch's updateMask fields:
# --add-tags/--remove-tags/--clear-tags (tags), --clear-metadata
# (metadata), --internal-ips (network_config.enable_external_ips): the
# PATCH names only what changes, the node is stored so, a no-op sends
# nothing; bad values and conflicts are one line, exit 2, no request.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start --set tpu.create_ms=50 --set tpu.update_ms=0

P=$CLOUDSDK_CORE_PROJECT
Z=$CLOUDSDK_COMPUTE_ZONE
NODE="/v2/projects/$P/locations/$Z/nodes/n"
expect_rc 0 "$TPUCTL" create n --accelerator-type v4-8 --tags web,db --network default \
    --metadata startup-script=true,enable-oslogin=FALSE

# patch ARGS...: the PATCH --dry-run prints for "update n ARGS", as one
# "query body" line (the emulator's request log has no bodies); then the
# update is made for real and the log's last PATCH must carry that query.
patch() {
	expect_rc 0 "$TPUCTL" --dry-run update n "$@"
	jq -r 'select(.method == "PATCH") |
	    "\(.url | split("?")[1]) \(.body | tojson)"' "$T/out" >"$T/dry"
	expect_rc 0 "$TPUCTL" update n "$@"
	_q=$(emu_requests | jq -r --arg p "$NODE" \
	    'select(.method == "PATCH" and .path == $p) | .query' | tail -1)
	[ "$_q" = "$(cut -d' ' -f1 "$T/dry")" ] ||
	    fail "'$*': sent $_q, --dry-run said $(cat "$T/dry")"
	cat "$T/dry"
}
npatches() {
	emu_requests | jq -r --arg p "$NODE" \
	    'select(.method == "PATCH" and .path == $p) | .query' | wc -l
}

[ "$(patch --add-tags ssh,web --remove-tags db)" = 'updateMask=tags {"tags":["web","ssh"]}' ] ||
    fail "add/remove tags PATCH: $(cat "$T/dry")"
assert_grep "updated node 'n' \(tags\)" "$T/err"
expect_rc 0 "$TPUCTL" describe n --format 'value(tags.join(","))'
[ "$(cat "$T/out")" = "web,ssh" ] || fail "tags stored: $(cat "$T/out")"

# already so: nothing sent
n0=$(npatches)
expect_rc 0 "$TPUCTL" update n --add-tags web
assert_grep "already is as asked" "$T/err"
[ "$(npatches)" = "$n0" ] || fail "a no-op sent a PATCH"

# --clear-tags then --add-tags; then --clear-tags alone empties them
[ "$(patch --clear-tags --add-tags api)" = 'updateMask=tags {"tags":["api"]}' ] ||
    fail "clear+add PATCH: $(cat "$T/dry")"
[ "$(patch --clear-tags)" = 'updateMask=tags {}' ] ||
    fail "clear PATCH: $(cat "$T/dry")"
expect_rc 0 "$TPUCTL" describe n --format json
jq -e '.tags == null' "$T/out" >/dev/null || fail "tags left: $(jq -c .tags "$T/out")"

# --clear-metadata (with --update-metadata: cleared first)
[ "$(patch --clear-metadata --update-metadata shutdown-script=true)" = 'updateMask=metadata {"metadata":{"shutdown-script":"true"}}' ] ||
    fail "clear-metadata PATCH: $(cat "$T/dry")"
expect_rc 0 "$TPUCTL" describe n --format json
jq -e '.metadata == {"shutdown-script": "true"}' "$T/out" >/dev/null ||
    fail "metadata stored: $(jq -c .metadata "$T/out")"

# --internal-ips: external IPs (on: create sent networkConfig) turned off, once
expect_rc 0 "$TPUCTL" describe n --format 'value(networkConfig.enableExternalIps)'
[ "$(cat "$T/out")" = "True" ] || fail "external IPs at create: $(cat "$T/out")"
[ "$(patch --internal-ips)" = 'updateMask=network_config.enable_external_ips {"networkConfig":{"enableExternalIps":false}}' ] ||
    fail "internal-ips PATCH: $(cat "$T/dry")"
expect_rc 0 "$TPUCTL" describe n --format json
jq -e '.networkConfig.enableExternalIps != true' "$T/out" >/dev/null ||
    fail "external IPs still on: $(jq -c .networkConfig "$T/out")"
n0=$(npatches)
expect_rc 0 "$TPUCTL" update n --internal-ips
assert_grep "already is as asked" "$T/err"
[ "$(npatches)" = "$n0" ] || fail "a second --internal-ips sent a PATCH"

# refusals: one line, exit 2, nothing sent
before=$(emu_requests | wc -l)
bad() { # PATTERN ARGS...
	_p=$1
	shift
	expect_rc 2 "$TPUCTL" update n "$@"
	assert_grep "^tpuctl: $_p" "$T/err"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "'$*': not one line: $(cat "$T/err")"
}
bad "--add-tags: invalid tag 'Bad_Tag': a tag is 1-63 lowercase" --add-tags ok,Bad_Tag
bad "--remove-tags 'a,,b': empty tag" --remove-tags a,,b
bad "--add-tags '': empty tag" --add-tags ''
bad "--clear-tags and --remove-tags exclude each other" --clear-tags --remove-tags a
bad "--clear-metadata and --remove-metadata exclude each other" \
    --clear-metadata --remove-metadata startup-script
bad "tag 'a' is both added and removed" --add-tags a --remove-tags b,a
bad "--attach-disk: not supported: nodes.patch in the tpu.v2/v2alpha1 revision tpuctl speaks \(20240208\)" \
    --attach-disk=x
[ "$(emu_requests | wc -l)" = "$before" ] || fail "a refused update sent requests"
