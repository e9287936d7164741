#!/bin/sh
# tpuctl notebook: Jupyter (Debian's python3-notebook) started on worker
# 1 of a v4-32, its port forwarded here; the printed URL's token opens
# /api/status through the forward (and a wrong token does not); Ctrl-C
# ends tpuctl with exit 0 and stops the server on the worker, and so
# does SIGTERM.  The
# emulated workers share this host's loopback, so worker and local
# ports differ.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
/usr/bin/python3 -c 'import notebook' 2>/dev/null ||
    fail "python3-notebook is not installed (scripts/install-deps.sh)"
emu_start

expect_rc 0 "$TPUCTL" create pod --accelerator-type v4-32
RPORT=$(free_port)
LPORT=$(free_port)

"$TPUCTL" notebook pod --worker 1 --port "$RPORT" --local-port "$LPORT" \
    --python /usr/bin/python3 >"$T/nb.out" 2>"$T/nb.err" &
NB=$!
wait_for_grep "$T/nb.out" '^http://' $NB
url=$(grep '^http://' "$T/nb.out")
case $url in
"http://127.0.0.1:$LPORT/?token="????????????????????????????????????????????????) ;;
*) fail "URL: $url" ;;
esac
token=${url#*token=}
assert_grep '^\[w1\] notebook: Jupyter \(pid [0-9]+\) listens on 127\.0\.0\.1:'"$RPORT"'$' "$T/nb.out"
assert_grep 'Jupyter on worker 1' "$T/nb.err"
code=$(curl -sS --noproxy '*' -o "$T/status" -w '%{http_code}' \
    "http://127.0.0.1:$LPORT/api/status?token=$token")
[ "$code" = 200 ] || fail "/api/status: HTTP $code: $(cat "$T/status")"
jq -e '.started' "$T/status" >/dev/null || fail "status: $(cat "$T/status")"
code=$(curl -sS --noproxy '*' -o /dev/null -w '%{http_code}' \
    "http://127.0.0.1:$LPORT/api/status?token=wrong")
[ "$code" = 403 ] || [ "$code" = 401 ] || fail "a wrong token got HTTP $code"

kill -INT $NB
rc=0
wait $NB || rc=$?
[ $rc -eq 0 ] || fail "Ctrl-C should end notebook with 0, got $rc: $(cat "$T/nb.err")"
assert_grep '^\[w1\] notebook: Jupyter \(pid [0-9]+\) stopped$' "$T/nb.out"
if python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$RPORT" 2>/dev/null; then
	fail "Jupyter still listens on the worker after Ctrl-C"
fi

# SIGTERM is the same normal end (the stop still runs after it); the file
# is emptied first, or the wait below could see the first run's URL before
# the background shell truncates it, and signal tpuctl before its handlers
: >"$T/nb.out"
"$TPUCTL" notebook pod --worker 1 --port "$RPORT" --local-port "$LPORT" \
    --python /usr/bin/python3 >"$T/nb.out" 2>"$T/nb.err" &
NB=$!
wait_for_grep "$T/nb.out" '^http://' $NB
kill -TERM $NB
rc=0
wait $NB || rc=$?
[ $rc -eq 0 ] || fail "SIGTERM should end notebook with 0, got $rc: $(cat "$T/nb.err")"
assert_grep '^\[w1\] notebook: Jupyter \(pid [0-9]+\) stopped$' "$T/nb.out"
if python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$RPORT" 2>/dev/null; then
	fail "Jupyter still listens on the worker after SIGTERM"
fi

expect_rc 2 "$TPUCTL" notebook pod --worker all
expect_rc 2 "$TPUCTL" notebook pod --port 0
