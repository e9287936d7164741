#!/bin/sh
# tpuctl forward: an HTTP server on the worker's side (the emulator's
# sshd workers share this host's loopback) fetched with curl through the
# forward; Ctrl-C ends it with exit 0; a port in use is one line, exit 1;
# bad ports and a multi-worker selection are exit 2.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

expect_rc 0 "$TPUCTL" create pod --accelerator-type v4-32
KEY="$T/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$KEY" >/dev/null

RPORT=$(free_port)
LPORT=$(free_port)
mkdir "$T/www"
echo "hello from the worker $$" >"$T/www/index.txt"
(cd "$T/www" && exec python3 -u -m http.server --bind 127.0.0.1 "$RPORT") \
    >"$T/http.log" 2>&1 &
HTTP_PID=$!
# listening before anything is forwarded to it
wait_for_grep "$T/http.log" '^Serving HTTP on ' $HTTP_PID 30

"$TPUCTL" forward --worker 2 --ssh-key-file "$KEY" pod \
    "$LPORT:localhost:$RPORT" >"$T/fwd.out" 2>"$T/fwd.err" &
FWD_PID=$!
forward_wait $FWD_PID "$T/fwd.err"
assert_grep 'on worker 2' "$T/fwd.err"
body=$(curl -sS --noproxy '*' "http://127.0.0.1:$LPORT/index.txt") ||
    fail "curl through the forward failed"
[ "$body" = "hello from the worker $$" ] || fail "wrong body: $body"
# two connections at once
curl -sS --noproxy '*' "http://127.0.0.1:$LPORT/index.txt" >"$T/c1" &
curl -sS --noproxy '*' "http://127.0.0.1:$LPORT/index.txt" >"$T/c2"
wait $!
cmp "$T/c1" "$T/www/index.txt" || fail "first parallel fetch"
cmp "$T/c2" "$T/www/index.txt" || fail "second parallel fetch"

# the port is in use now
expect_rc 1 "$TPUCTL" forward --ssh-key-file "$KEY" pod "$LPORT"
assert_grep "cannot listen on 127.0.0.1:$LPORT" "$T/err"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "not one line: $(cat "$T/err")"

kill -INT $FWD_PID
rc=0
wait $FWD_PID || rc=$?
[ $rc -eq 0 ] || fail "Ctrl-C should end forward with 0, got $rc: $(cat "$T/fwd.err")"
kill $HTTP_PID
wait $HTTP_PID 2>/dev/null || true

expect_rc 2 "$TPUCTL" forward pod 0
assert_grep "bad port '0'" "$T/err"
expect_rc 2 "$TPUCTL" forward pod 65536
expect_rc 2 "$TPUCTL" forward pod 80:host
expect_rc 2 "$TPUCTL" forward pod 80:host:x
expect_rc 2 "$TPUCTL" forward --worker all pod 8080
assert_grep 'one worker' "$T/err"
expect_rc 2 "$TPUCTL" forward pod
