#!/bin/sh
# Restarting on the same state dir keeps issued tokens, the credential
# secrets and pending faults; SIGTERM stops the server cleanly (exit 0,
# env and pid files removed).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
M="http://$GCE_METADATA_HOST/computeMetadata/v1"
tok=$(curl -s -H 'Metadata-Flavor: Google' "$M/instance/service-accounts/default/token" |
    jq -r .access_token)
rt=$(jq -r .refresh_token "$EMU_DIR/authorized-user.json")
key=$(jq -r .private_key_id "$EMU_DIR/service-account.json")
atok=$(cat "$EMU_DIR/access-token")
emu_inject return-418 --path /computeMetadata/v1/project/numeric --count 2

kill -TERM "$EMU_PID"
set +e
wait "$EMU_PID"
rc=$?
set -e
[ "$rc" = 0 ] || fail "SIGTERM: exit status $rc, want 0"
EMU_PID=
[ ! -e "$EMU_DIR/env" ] || fail "env left behind after a clean stop"
[ ! -e "$EMU_DIR/emulator.pid" ] || fail "pid file left behind"
assert_grep "stopping" "$EMU_DIR/emulator.log"

# Same state dir, same port (dir/listen, t114).
"$EMULATOR" serve --state-dir "$EMU_DIR" >>"$EMU_DIR/emulator.log" 2>&1 &
EMU_PID=$!
i=0
while [ ! -s "$EMU_DIR/env" ]; do
	i=$((i + 1))
	[ $i -lt 300 ] || fail "restart did not come up"
	sleep 0.1
done
# shellcheck disable=SC1091
. "$EMU_DIR/env"
api="$TPUCTL_EMULATOR_URL/v2/projects/tpuctl-emu/locations/us-central2-b/nodes"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $tok" "$api")
[ "$code" != 401 ] || fail "token issued before the restart was forgotten"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $atok" "$api")
[ "$code" != 401 ] || fail "access-token file token was forgotten"
[ "$(cat "$EMU_DIR/access-token")" = "$atok" ] || fail "access-token changed"
[ "$(jq -r .refresh_token "$EMU_DIR/authorized-user.json")" = "$rt" ] ||
    fail "refresh token changed"
[ "$(jq -r .private_key_id "$EMU_DIR/service-account.json")" = "$key" ] ||
    fail "service account key changed"
jq -e --arg u "$TPUCTL_EMULATOR_URL/token" '.token_uri == $u' \
    "$EMU_DIR/service-account.json" >/dev/null || fail "token_uri not updated"
M="http://$GCE_METADATA_HOST/computeMetadata/v1"
for want in 418 418 200; do
	code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Metadata-Flavor: Google' \
	    "$M/project/numeric-project-id")
	[ "$code" = "$want" ] || fail "persisted fault: got $code, want $want"
done

# SIGINT stops it too.
kill -INT "$EMU_PID"
set +e
wait "$EMU_PID"
rc=$?
set -e
EMU_PID=
[ "$rc" = 0 ] || fail "SIGINT: exit status $rc"
