#!/bin/sh
# Proxies (E4, S13): with HTTPS_PROXY=http://u:CANARYPW@127.0.0.1:PORT
# (tinyproxy with basic auth) every https request goes through a CONNECT
# tunnel seen in tinyproxy's log; NO_PROXY bypasses it; a wrong password
# is a clear 407 error (EC 3), not retried; the proxy password never
# appears in any output, even with --log-http -vv.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

emu_start --tls
P=$CLOUDSDK_CORE_PROJECT
export GCE_METADATA_HOST=127.0.0.1:9
LOC="v2/projects/$P/locations"
port=${TPUCTL_EMULATOR_URL##*:}
unset NO_PROXY no_proxy http_proxy HTTP_PROXY https_proxy ALL_PROXY all_proxy

pport=$((30000 + $$ % 20000))
cat >"$T/tinyproxy.conf" <<CONF
Port $pport
Listen 127.0.0.1
Timeout 60
LogFile "$T/tinyproxy.log"
LogLevel Connect
MaxClients 20
Allow 127.0.0.1
BasicAuth u CANARYPW
CONF
timeout 120 tinyproxy -d -c "$T/tinyproxy.conf" >"$T/tinyproxy.out" 2>&1 &
tpid=$!
i=0
until [ -s "$T/tinyproxy.log" ] && grep -q 'listening\|Listening\|Starting' "$T/tinyproxy.log" 2>/dev/null; do
	i=$((i + 1))
	kill -0 "$tpid" 2>/dev/null || fail "tinyproxy died: $(cat "$T/tinyproxy.out")"
	[ $i -lt 50 ] || break
	sleep 0.1
done
tunnels() {
	grep -c "CONNECT 127.0.0.1:$port" "$T/tinyproxy.log" || true
}

export HTTPS_PROXY="http://u:CANARYPW@127.0.0.1:$pport"
n=$(tunnels)
expect_rc 0 "$TPUCTL" --log-http -vv api "$LOC"
cp "$T/err" "$T/err.ok"
[ "$(tunnels)" -gt "$n" ] || fail "no CONNECT through the proxy"
assert_grep '<redacted>@127.0.0.1' "$T/err.ok"

# NO_PROXY bypasses the proxy
n=$(tunnels)
expect_rc 0 env NO_PROXY=127.0.0.1 "$TPUCTL" api "$LOC"
[ "$(tunnels)" -eq "$n" ] || fail "NO_PROXY did not bypass the proxy"

# a wrong password: 407, a clear error, exit 3, no retries
n=$(grep -c '): CONNECT ' "$T/tinyproxy.log" || true)
expect_rc 3 env HTTPS_PROXY="http://u:CANARYBAD@127.0.0.1:$pport" \
    "$TPUCTL" --log-http -vv api "$LOC"
cp "$T/err" "$T/err.407"
assert_grep 'refused the credentials \(HTTP 40[17]' "$T/err.407"
assert_grep 'proxy' "$T/err.407"
assert_no_grep 'retrying' "$T/err.407"
# one CONNECT, not retried
[ "$(grep -c '): CONNECT ' "$T/tinyproxy.log" || true)" -eq $((n + 1)) ] ||
    fail "407: $(($(grep -c '): CONNECT ' "$T/tinyproxy.log" || true) - n)) CONNECTs, want 1"

for f in "$T/err.ok" "$T/err.407" "$T/out"; do
	assert_no_grep 'CANARY' "$f"
done
kill "$tpid" 2>/dev/null || true
