#!/bin/sh
# t224: RELIABILITY.md C10: "tpuctl data cp" killed with SIGKILL in the
# middle of a resumable upload leaves a 0600 tracker; a rerun with the
# source unchanged resumes the same session (no new session, the bytes
# already persisted are not sent again: the rerun's PUTs carry exactly the
# rest) and removes the tracker; a rerun after the source changed starts
# over; a tracker whose session points elsewhere is never contacted.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-rk
mkfile "$T/f" 30000000
TR="$HOME/.cache/tpuctl/uploads"

sessions() {
	emu_requests | grep 'uploadType=resumable' | grep -c '"POST"' || true
}
# killrun: start an upload whose chunks are cut after 1 MiB (503) again and
# again, so it crawls; kill -9 it once it has persisted something
killrun() {
	emu_inject --method PUT --path /upload/storage/v1/b/e2e-rk --count 1000 \
	    return-503-after-1024K
	"$TPUCTL" data cp "$T/f" gs://e2e-rk/obj >"$T/kout" 2>&1 &
	pid=$!
	i=0
	while [ -z "$(ls -A "$TR" 2>/dev/null)" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	sleep 2
	kill -9 $pid 2>/dev/null || fail "the upload ended before the kill: $(cat "$T/kout")"
	wait $pid 2>/dev/null || true
	"$EMULATOR" faults --state-dir "$EMU_DIR" --clear >/dev/null
}

killrun
n=$(find "$TR" -type f | wc -l)
[ "$n" = 1 ] || fail "trackers after the kill: $n"
tf="$TR/$(ls "$TR")"
[ "$(stat -c %a "$tf")" = 600 ] || fail "tracker mode $(stat -c %a "$tf")"
[ "$(stat -c %a "$TR")" = 700 ] || fail "tracker dir mode"
grep -q '"session":"http://127' "$tf" || fail "tracker content: $(cat "$tf")"
s0=$(sessions)
l0=$(emu_requests | wc -l)
expect_rc 0 "$TPUCTL" -v data cp "$T/f" gs://e2e-rk/obj
assert_grep 'resuming the upload recorded in .* at byte [1-9]' "$T/err"
[ "$(sessions)" = "$s0" ] || fail "a new session was started"
# the bytes the server had are not sent again: the rerun's PUTs carry
# exactly the rest
at=$(sed -n 's/.*resuming the upload recorded in .* at byte \([0-9]*\).*/\1/p' "$T/err" | head -1)
sent=$(emu_requests | tail -n +$((l0 + 1)) |
    jq -s '[.[] | select(.method == "PUT") | .request_bytes] | add // 0')
[ "$sent" -eq $((30000000 - at)) ] ||
    fail "the rerun sent $sent bytes, want $((30000000 - at)) (resumed at $at)"
[ -z "$(ls -A "$TR")" ] || fail "tracker left after success"
req GET "$GCS/download/storage/v1/b/e2e-rk/o/obj?alt=media"
cmp -s "$T/body" "$T/f" || fail "resumed object differs"

# the source changes (same size, new mtime): start over
killrun
[ "$(find "$TR" -type f | wc -l)" = 1 ] || fail "no tracker after the second kill"
printf 'Z' | dd of="$T/f" bs=1 seek=100 conv=notrunc 2>/dev/null
s0=$(sessions)
expect_rc 0 "$TPUCTL" -v data cp "$T/f" gs://e2e-rk/obj
assert_grep 'changed since the interrupted upload' "$T/err"
[ "$(sessions)" = $((s0 + 1)) ] || fail "no new session for a changed file"
req GET "$GCS/download/storage/v1/b/e2e-rk/o/obj?alt=media"
cmp -s "$T/body" "$T/f" || fail "object after the change differs"
[ -z "$(ls -A "$TR")" ] || fail "tracker left"

# a tracker pointing elsewhere (a loopback listener of ours, so a request
# would reach it) is ignored: nothing is sent there, not the token, and
# the upload starts a new session
killrun
tf="$TR/$(ls "$TR")"
: >"$T/evil.log"
timeout 120 python3 -c '
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
print(s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept()
    c.settimeout(2)
    try:
        d = c.recv(65536)
    except OSError:
        d = b""
    with open(sys.argv[1], "ab") as f:
        f.write(d or b"(connected)")
    c.close()
' "$T/evil.log" >"$T/evil.port" &
epid=$!
wait_for_grep "$T/evil.port" . $epid 10
eport=$(cat "$T/evil.port")
sed "s|\"session\":\"http://127[^\"]*\"|\"session\":\"http://127.0.0.1:$eport/upload/storage/v1/b/e2e-rk/o?uploadType=resumable\&upload_id=x\"|" \
    "$tf" >"$T/t" && cat "$T/t" >"$tf"
grep -q "127.0.0.1:$eport" "$tf" || fail "the tracker was not redirected"
s0=$(sessions)
expect_rc 0 "$TPUCTL" data cp "$T/f" gs://e2e-rk/obj
kill $epid 2>/dev/null || true
[ ! -s "$T/evil.log" ] || fail "tpuctl sent to the tracker's foreign session: $(cat "$T/evil.log")"
[ "$(sessions)" = $((s0 + 1)) ] || fail "no new session instead of the foreign one"
req GET "$GCS/download/storage/v1/b/e2e-rk/o/obj?alt=media"
cmp -s "$T/body" "$T/f" || fail "object after the foreign tracker differs"
exit 0
