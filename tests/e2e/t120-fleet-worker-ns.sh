#!/bin/sh
# A worker looks like a TPU VM to the code running on it.  Everywhere: no
# TPU_* variable in its login environment (its identity comes from the
# metadata server) and python3 is the system's /usr/bin/python3.  As root,
# each worker is in its own UTS and mount namespace: hostname
# t1v-n-<8 hex>-w-<N> (the hex the node's, distinct per node), its own
# /tmp, TPU chip stand-ins /dev/accel0..K-1 with K from the accelerator
# type (v4-32: 4 per host, v5litepod-8: 8 on its one host), and an
# /etc/hosts naming metadata.google.internal as the worker's own address
# and Google's API hosts as the emulator's (its port-443 address, 127.0.x.y;
# t122 calls them).  Not root: the rest is SKIP.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200
fleet_api_setup

fleet_create_node t120 v4-32 90
cp "$T/node.json" "$T/v4.json"
fleet_known_hosts t120 4
fleet_patch_key t120
addr() { jq -r ".networkEndpoints[$2].ipAddress" "$1"; }
fleet_wait_key "$(addr "$T/v4.json" 0)"

i=0
while [ $i -lt 4 ]; do
	# shellcheck disable=SC2016 # expanded by the remote shell
	expect_rc 0 fleet_ssh "$(addr "$T/v4.json" $i)" \
	    'env | grep -c "^TPU_"; command -v python3; python3 -c "import sys; print(sys.executable)"'
	[ "$(cat "$T/out")" = "$(printf '0\n/usr/bin/python3\n/usr/bin/python3')" ] ||
	    fail "worker $i: TPU_* variables or another python3: $(cat "$T/out")"
	i=$((i + 1))
done

if [ "$(id -u)" -ne 0 ]; then
	fleet_api DELETE "$NODES/t120" >/dev/null
	skip "hostnames, /tmp, /dev/accel* and /etc/hosts need root (without it workers share the host's)"
fi

i=0
while [ $i -lt 4 ]; do
	a=$(addr "$T/v4.json" $i)
	expect_rc 0 fleet_ssh "$a" 'hostname; cat /etc/hostname; ls /dev/accel*; : >/dev/accel3 && cat /dev/accel0 && test ! -e /dev/accel4 && echo ok'
	h=$(sed -n 1p "$T/out")
	echo "$h" | grep -Eq "^t1v-n-[0-9a-f]{8}-w-$i\$" ||
	    fail "worker $i: hostname '$h' is not t1v-n-<8 hex>-w-$i"
	[ "$(sed -n 2p "$T/out")" = "$h" ] || fail "worker $i: /etc/hostname: $(cat "$T/out")"
	# The same name as the worker's metadata server gives (instance/name).
	mdname=$(curl -s -f --max-time 5 -H 'Metadata-Flavor: Google' \
	    "http://$a:${GCE_METADATA_HOST##*:}/computeMetadata/v1/instance/name") ||
	    fail "worker $i: no instance/name"
	[ "$mdname" = "$h" ] || fail "worker $i: hostname $h, metadata name $mdname"
	[ "$(sed -n '3,$p' "$T/out")" = "$(printf '/dev/accel%s\n' 0 1 2 3 && echo ok)" ] ||
	    fail "worker $i: want /dev/accel0..3: $(cat "$T/out")"
	echo "${h%-w-*}" >>"$T/hex"
	# The worker's names: metadata on its own address, Google's API on
	# the emulator's.
	for n in metadata.google.internal metadata storage.googleapis.com \
	    oauth2.googleapis.com tpu.googleapis.com "$h"; do
		expect_rc 0 fleet_ssh "$a" "getent hosts $n"
		got=$(awk '{print $1}' "$T/out")
		case $n in
		*.googleapis.com)
			case $got in
			127.0.*) echo "$got" >>"$T/google" ;;
			*) fail "worker $i: $n is '$got', not the emulator's" ;;
			esac
			;;
		*) [ "$got" = "$a" ] || fail "worker $i: $n is '$got', want $a" ;;
		esac
	done
	i=$((i + 1))
done
[ "$(sort -u "$T/hex" | wc -l)" -eq 1 ] || fail "one node, several hex ids: $(cat "$T/hex")"
[ "$(sort -u "$T/google" | wc -l)" -eq 1 ] || fail "Google's hosts differ: $(cat "$T/google")"
[ "$(hostname)" != "$h" ] || fail "the host's hostname changed"

# /tmp is each worker's own (the libtpu lockfile is per VM).
w0=$(addr "$T/v4.json" 0)
w1=$(addr "$T/v4.json" 1)
expect_rc 0 fleet_ssh "$w0" 'echo w0 >/tmp/libtpu_lockfile && cat /tmp/libtpu_lockfile'
[ "$(cat "$T/out")" = w0 ] || fail "worker 0 cannot use its /tmp: $(cat "$T/out")"
expect_rc 1 fleet_ssh "$w1" 'test -e /tmp/libtpu_lockfile'
[ ! -e /tmp/libtpu_lockfile ] || fail "worker 0's /tmp file is on the host"
[ ! -e /dev/accel0 ] || fail "the host got /dev/accel0"

# A v5litepod-8 is one host with all 8 chips; another node, another hex
# (in us-central1-a: the default zone offers no v5e).
NODES="/v2/projects/$CLOUDSDK_CORE_PROJECT/locations/us-central1-a/nodes"
fleet_create_node t120e v5litepod-8 90
jq -e '.networkEndpoints | length == 1' "$T/node.json" >/dev/null ||
    fail "a v5litepod-8 is one host: $(cat "$T/node.json")"
fleet_known_hosts t120e 1
fleet_patch_key t120e
e0=$(addr "$T/node.json" 0)
fleet_wait_key "$e0"
expect_rc 0 fleet_ssh "$e0" 'hostname; ls /dev/accel*'
[ "$(sed -n '2,$p' "$T/out")" = "$(printf '/dev/accel%s\n' 0 1 2 3 4 5 6 7)" ] ||
    fail "v5litepod-8: want /dev/accel0..7: $(cat "$T/out")"
h8=$(sed -n 1p "$T/out")
echo "$h8" | grep -Eq '^t1v-n-[0-9a-f]{8}-w-0$' || fail "v5litepod-8 hostname '$h8'"
[ "${h8%-w-*}" != "$(sort -u "$T/hex")" ] || fail "two nodes share the hex id ${h8%-w-*}"
fleet_api DELETE "$NODES/t120e" >/dev/null
