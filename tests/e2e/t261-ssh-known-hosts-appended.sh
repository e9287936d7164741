#!/bin/sh
# t261: guest attributes win for the workers tpuctl pins itself (issue 19
# defect 11): worker 1 is rekeyed (an impostor serving a key nobody
# published) and its key is appended to tpuctl's known_hosts, as someone
# else's tool would, while tpuctl had pinned worker 0 only; "tpuctl ssh
# --worker 1" must not trust that line over the guest attributes (the
# cached description would otherwise skip them): host key refused, exit
# 9, nothing run; the appended line is dropped when worker 1 is pinned.
# A line naming several hosts ("evil,tpu.<id>-1 ...") is never trusted
# either.
# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=300
fleet_api_setup
fleet_create_node t261 v4-16 90
full=$(jq -r .name "$T/node.json")
id=$(jq -r .id "$T/node.json")
addr1=$(jq -r '.networkEndpoints[1].ipAddress' "$T/node.json")
kh="$XDG_CONFIG_HOME/tpuctl/known_hosts"

# worker 0 only: worker 1 is not pinned yet, the description is cached
expect_rc 0 "$TPUCTL" ssh t261 --worker 0 -- true
assert_grep "^tpu\\.$id-0 ssh-ed25519 " "$kh"
assert_no_grep "^tpu\\.$id-1 " "$kh"

fleet_known_hosts t261 2
published=$(sed -n 2p "$T/known_hosts" | cut -d' ' -f3)
fleet_api POST /_emulator/events \
    "{\"event\":\"rekey\",\"node\":\"$full\",\"worker\":1}" >/dev/null ||
    fail "rekey event failed"
# wait until worker 1 serves its new key
n=0
while :; do
	ssh-keyscan -T 2 -t ed25519 -p "$SSH_PORT" "$addr1" 2>/dev/null |
	    awk '{print $2, $3}' >"$T/scan"
	new=$(cut -d' ' -f2 "$T/scan")
	[ -n "$new" ] && [ "$new" != "$published" ] && break
	n=$((n + 1))
	[ $n -lt 100 ] || fail "worker 1 never served a new key"
	sleep 0.2
done

# someone else appends the impostor's key for worker 1's alias
printf 'tpu.%s-1 %s\n' "$id" "$(cat "$T/scan")" >>"$kh"
expect_rc 9 "$TPUCTL" ssh t261 --worker 1 -- echo ran
assert_no_grep 'ran' "$T/out"
assert_grep 'host key mismatch' "$T/err"
! grep -qF "tpu.$id-1 ssh-ed25519 $new" "$kh" ||
    fail "the appended key of worker 1 was pinned: $(cat "$kh")"
# (fixed strings: a base64 key may hold '+', an ERE operator)
grep -qF "tpu.$id-1 ssh-ed25519 $published " "$kh" ||
    fail "worker 1's published key is not pinned: $(cat "$kh")"

# a line naming several hosts, worker 1 pinned now: still refused
printf 'evil,tpu.%s-1 %s\n' "$id" "$(cat "$T/scan")" >>"$kh"
expect_rc 9 "$TPUCTL" ssh t261 --worker 1 -- echo ran
assert_no_grep 'ran' "$T/out"
assert_grep 'host key mismatch' "$T/err"
# worker 0 still runs
expect_rc 0 "$TPUCTL" ssh t261 --worker 0 -- echo ok
assert_grep '^\[w0\] ok$' "$T/out"
exit 0
