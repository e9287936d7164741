#!/bin/sh
# The node's startup-script and startup-script-url metadata run on every
# worker at boot and again after a stop and start, as the guest agent's
# google_metadata_script_runner does: startup-script, then the script
# fetched from the emulated Cloud Storage (gs://BUCKET/OBJECT), their
# output and exit status in the agent's log form in the worker's own log
# file, "$HOME/../startup-script.log" (STATE/fleet/nS/wI/ on the host).
# As root they run inside the worker's namespaces (its hostname, its /tmp,
# which a boot starts empty), as the agent's service does: root, no
# HOME, in /; the login account's home is in the worker's /etc/passwd.
# shellcheck disable=SC2016 # the scripts are expanded on the workers
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200
fleet_api_setup
GCS=${STORAGE_EMULATOR_HOST%/}

# The startup-script-url object, in a bucket of the emulator's.
curl -sSf -X POST -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: application/json' \
    --data-binary '{"name":"e2e-t121-boot"}' \
    "$GCS/storage/v1/b?project=$CLOUDSDK_CORE_PROJECT" >/dev/null ||
    fail "cannot create the bucket"
printf '#!/bin/sh\necho "from-gcs on $(hostname)"\nexit 4\n' >"$T/boot.sh"
curl -sSf -X POST -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: text/x-sh' --data-binary @"$T/boot.sh" \
    "$GCS/upload/storage/v1/b/e2e-t121-boot/o?uploadType=media&name=scripts%2Fboot%20one.sh" \
    >/dev/null || fail "cannot upload the script"

# The key goes in with the scripts: a patch of metadata replaces it all.
script='#!/bin/bash
echo "hello from $(hostname)"
echo to stderr >&2
test -e /tmp/mark && echo "/tmp survived a boot"
echo "as $(id -un) home=${HOME-unset} in $(pwd)"
echo boot >>~/boots'
fields=$(jq -cn --arg s "$script" --arg k "$SSH_USER:$(cat "$KEY.pub")" \
    '{metadata: {"startup-script": $s, "ssh-keys": $k,
	"startup-script-url": "gs://e2e-t121-boot/scripts/boot one.sh"}}')
fleet_create_node t121 v4-16 90 "$fields"
fleet_known_hosts t121 2

# wait_boots ADDR N: until the worker's log has N finished boots.
wait_boots() {
	n=0
	while :; do
		fleet_ssh "$1" 'cat "$HOME/../startup-script.log"' >"$T/log" 2>"$T/err" || true
		[ "$(grep -c 'google_metadata_script_runner\[[0-9]*\]: Finished running startup scripts\.$' "$T/log")" -ge "$2" ] && break
		n=$((n + 1))
		[ $n -lt 100 ] || fail "$1: not $2 boots in 20 s: $(cat "$T/log" "$T/err")"
		sleep 0.2
	done
}

# check_boot I ADDR N: worker I's log after its Nth boot.
check_boot() {
	wait_boots "$2" "$3"
	for l in 'Starting startup scripts' 'Found startup-script in metadata\.' \
	    'startup-script: to stderr' 'startup-script exit status 0' \
	    'Found startup-script-url in metadata\.' \
	    'startup-script-url exit status 4'; do
		[ "$(grep -c "google_metadata_script_runner\[[0-9]*\]: $l" "$T/log")" -eq "$3" ] ||
		    fail "worker $1: want $3 '$l' lines: $(cat "$T/log")"
	done
	assert_no_grep 'survived' "$T/log"
	expect_rc 0 fleet_ssh "$2" 'cat boots'
	[ "$(wc -l <"$T/out")" -eq "$3" ] || fail "worker $1: $(cat "$T/out") boots"
	if [ "$(id -u)" -eq 0 ]; then
		h=$(fleet_ssh "$2" hostname)
		[ "$(grep -c "^.* $h google_metadata_script_runner\[[0-9]*\]: startup-script: hello from $h\$" "$T/log")" -eq "$3" ] ||
		    fail "worker $1: the script did not run as $h: $(cat "$T/log")"
		# the guest agent's service: root, no HOME, in /
		[ "$(grep -c "startup-script: as root home=unset in /\$" "$T/log")" -eq "$3" ] ||
		    fail "worker $1: not as a TPU VM runs it: $(cat "$T/log")"
		[ "$(grep -c "startup-script-url: from-gcs on $h\$" "$T/log")" -eq "$3" ] ||
		    fail "worker $1: no startup-script-url output: $(cat "$T/log")"
	else
		[ "$(grep -c 'startup-script-url: from-gcs on ' "$T/log")" -eq "$3" ] ||
		    fail "worker $1: no startup-script-url output: $(cat "$T/log")"
	fi
}

for i in 0 1; do
	a=$(jq -r ".networkEndpoints[$i].ipAddress" "$T/node.json")
	fleet_wait_key "$a"
	check_boot $i "$a" 1
	fleet_ssh "$a" 'touch /tmp/mark' || fail "worker $i: cannot touch /tmp/mark"
done

# A stop and start is a boot: the scripts run again (as root, in a fresh
# /tmp: the mark is gone).  Google stops single-host slices only (a pod
# is refused, t116), so this part runs on a v4-8 with the same metadata.
fleet_api DELETE "$NODES/t121" >/dev/null
fleet_create_node t121s v4-8 90 "$fields"
fleet_known_hosts t121s 1
a=$(jq -r ".networkEndpoints[0].ipAddress" "$T/node.json")
fleet_wait_key "$a"
check_boot 0 "$a" 1
fleet_ssh "$a" 'touch /tmp/mark' || fail "t121s: cannot touch /tmp/mark"
fleet_api POST "$NODES/t121s:stop" '{}' >/dev/null || fail "nodes.stop failed"
n=0
until [ "$(fleet_api GET "$NODES/t121s" | jq -r .state)" = STOPPED ]; do
	n=$((n + 1))
	[ $n -lt 300 ] || fail "t121s never STOPPED"
	sleep 0.2
done
fleet_api POST "$NODES/t121s:start" '{}' >/dev/null || fail "nodes.start failed"
n=0
until [ "$(fleet_api GET "$NODES/t121s" | jq -r .state)" = READY ]; do
	n=$((n + 1))
	[ $n -lt 300 ] || fail "t121s never READY again"
	sleep 0.2
done
fleet_wait_key "$a"
if [ "$(id -u)" -eq 0 ]; then
	check_boot 0 "$a" 2
else
	# Without namespaces /tmp is the host's: the mark stays.
	wait_boots "$a" 2
fi
fleet_api DELETE "$NODES/t121s" >/dev/null
