#!/bin/sh
# Google's endpoints resolve on a worker (as root): code that calls
# https://storage.googleapis.com/, https://oauth2.googleapis.com/ and
# https://tpu.googleapis.com/ unchanged (curl, Python's urllib) reaches the
# emulator through the worker's /etc/hosts (an address of the emulator's
# own, port 443) and its default CA bundle, which trusts the emulator's
# CA.  Not root: SKIP (the names are not the emulator's there).
# shellcheck disable=SC2016 # the commands are expanded on the worker
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

if [ "$(id -u)" -ne 0 ]; then
	skip "Google's API hosts on port 443 and the workers' /etc/hosts need root"
fi
emu_start --set fleet.key_delay_ms=200
fleet_api_setup
GCS=${STORAGE_EMULATOR_HOST%/}
curl -sSf -X POST -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: application/json' --data-binary '{"name":"e2e-t122"}' \
    "$GCS/storage/v1/b?project=$CLOUDSDK_CORE_PROJECT" >/dev/null ||
    fail "cannot create the bucket"
printf 'hello from gcs\n' >"$T/obj"
curl -sSf -X POST -H "Authorization: Bearer $TOKEN" --data-binary @"$T/obj" \
    "$GCS/upload/storage/v1/b/e2e-t122/o?uploadType=media&name=hello.txt" \
    >/dev/null || fail "cannot upload"

fleet_create_node t122 v4-16 90
fleet_known_hosts t122 2
fleet_patch_key t122
a=$(jq -r '.networkEndpoints[1].ipAddress' "$T/node.json")
fleet_wait_key "$a"

tok='tok=$(curl -sf -H "Metadata-Flavor: Google" "http://$GCE_METADATA_HOST/computeMetadata/v1/instance/service-accounts/default/token" | python3 -c "import json,sys; print(json.load(sys.stdin)[\"access_token\"])")'
# curl with its default CA bundle: Cloud Storage, the JSON API and a media
# download.
expect_rc 0 fleet_ssh "$a" "$tok"'; curl -sSf -H "Authorization: Bearer $tok" "https://storage.googleapis.com/storage/v1/b/e2e-t122/o/hello.txt?alt=media"'
[ "$(cat "$T/out")" = "hello from gcs" ] || fail "curl to storage.googleapis.com: $(cat "$T/out" "$T/err")"
# Python's urllib (its default SSL context): the Cloud TPU API lists the node.
expect_rc 0 fleet_ssh "$a" "$tok"'; python3 -c "
import json, sys, urllib.request
r = urllib.request.Request(\"https://tpu.googleapis.com/v2/projects/'"$CLOUDSDK_CORE_PROJECT/locations/$CLOUDSDK_COMPUTE_ZONE"'/nodes\",
    headers={\"Authorization\": \"Bearer \" + sys.argv[1]})
print(\" \".join(n[\"name\"].split(\"/\")[-1] for n in json.load(urllib.request.urlopen(r))[\"nodes\"]))
" "$tok"'
[ "$(cat "$T/out")" = t122 ] || fail "urllib to tpu.googleapis.com: $(cat "$T/out" "$T/err")"
# The OAuth2 token endpoint answers over verified TLS (a bad grant: 400).
expect_rc 0 fleet_ssh "$a" 'curl -sS -o /dev/null -w "%{http_code}" -d grant_type=nothing https://oauth2.googleapis.com/token'
[ "$(cat "$T/out")" = 400 ] || fail "oauth2.googleapis.com: $(cat "$T/out" "$T/err")"
# The certificate is the emulator's: another name fails verification.
emu443=$(fleet_ssh "$a" 'getent hosts storage.googleapis.com' | awk '{print $1}')
expect_rc 60 fleet_ssh "$a" "curl -sS --resolve www.example.com:443:$emu443 https://www.example.com/"
fleet_api DELETE "$NODES/t122" >/dev/null
