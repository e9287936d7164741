#!/bin/sh
# A restart on the same state dir serves on the same port (STATE/listen),
# so an env file loaded before the restart stays right; when that port
# is taken, serve says so and exits 1; --listen picks another port; under
# --tls the metadata port is kept too.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
url1=$TPUCTL_EMULATOR_URL
md1=$GCE_METADATA_HOST
[ "$(cat "$EMU_DIR/listen")" = "api ${url1#http://}" ] ||
    fail "listen file: $(cat "$EMU_DIR/listen")"

stop_emu() {
	kill -TERM "$EMU_PID"
	wait "$EMU_PID" || fail "emulator exit status $?"
	EMU_PID=
}
stop_emu
[ -e "$EMU_DIR/listen" ] || fail "listen file removed on a clean stop"

# shellcheck disable=SC2119
emu_start
[ "$TPUCTL_EMULATOR_URL" = "$url1" ] || fail "port changed: $url1 -> $TPUCTL_EMULATOR_URL"
[ "$GCE_METADATA_HOST" = "$md1" ] || fail "metadata host changed"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Metadata-Flavor: Google' \
    "http://$md1/computeMetadata/v1/project/project-id")
[ "$code" = 200 ] || fail "the old address answers $code"
stop_emu

# The port is busy: a clear error, exit 1, no env file.
port=${url1##*:}
python3 -c '
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(1)
open(sys.argv[2], "w").close()
time.sleep(60)
' "$port" "$T/held" &
holder=$!
i=0
while [ ! -e "$T/held" ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "could not hold port $port"
	sleep 0.1
done
set +e
"$EMULATOR" serve --state-dir "$EMU_DIR" >"$T/busy.out" 2>"$T/busy.err"
rc=$?
set -e
[ "$rc" = 1 ] || fail "busy port: exit $rc, want 1"
assert_grep "previous run on state dir" "$T/busy.err"
assert_grep "127.0.0.1:$port" "$T/busy.err"
assert_grep "--listen 127\.0\.0\.1:0" "$T/busy.err"
[ ! -e "$EMU_DIR/env" ] || fail "env written although serve failed"
[ "$(wc -l <"$T/busy.err")" = 1 ] || fail "more than one line: $(cat "$T/busy.err")"

# --listen 127.0.0.1:0 takes a new port and remembers it.
emu_start --listen 127.0.0.1:0
[ "$TPUCTL_EMULATOR_URL" != "$url1" ] || fail "--listen :0 kept the busy port"
[ "$(cat "$EMU_DIR/listen")" = "api ${TPUCTL_EMULATOR_URL#http://}" ] ||
    fail "listen file not updated"
kill "$holder"
wait "$holder" 2>/dev/null || true
url2=$TPUCTL_EMULATOR_URL
stop_emu

# --tls: the API port stays, the plain-HTTP metadata port is recorded
# and kept too.
emu_start --tls
[ "$TPUCTL_EMULATOR_URL" = "https://${url2#http://}" ] || fail "--tls moved the API port"
md2=$GCE_METADATA_HOST
[ "$(sed -n 2p "$EMU_DIR/listen")" = "metadata $md2" ] || fail "listen: $(cat "$EMU_DIR/listen")"
stop_emu
emu_start --tls
[ "$GCE_METADATA_HOST" = "$md2" ] || fail "metadata port moved: $md2 -> $GCE_METADATA_HOST"
[ "$TPUCTL_EMULATOR_URL" = "https://${url2#http://}" ] || fail "API port moved under --tls"
echo ok
