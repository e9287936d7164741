#!/bin/sh
# Every generic fault kind, observed with curl; matching by method and
# path prefix; counts; the control endpoint and the inject/faults CLI.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
P="$TPUCTL_EMULATOR_URL/computeMetadata/v1/project/project-id"
get() { curl -s -H 'Metadata-Flavor: Google' "$@"; }

# return-CODE with a count, path and method matching.
emu_inject return-503 --count 2 --path /computeMetadata/v1/project
emu_inject return-404 --method DELETE
for want in 503 503 200; do
	code=$(get -o "$T/body" -w '%{http_code}' "$P")
	[ "$code" = "$want" ] || fail "return-503 x2: got $code, want $want"
done
code=$(get -o /dev/null -w '%{http_code}' "$P")
[ "$code" = 200 ] || fail "GET hit the DELETE fault ($code)"
code=$(get -o "$T/body" -w '%{http_code}' -X DELETE "$P")
[ "$code" = 404 ] || fail "DELETE fault gave $code"
jq -e '.error.code == 404 and .error.status == "NOT_FOUND"' "$T/body" \
    >/dev/null || fail "fault body is not Google's error JSON"

# Forever (-1) until cleared.
emu_inject return-500 --count -1 --path /computeMetadata/v1/instance
for _ in 1 2 3; do
	code=$(get -o /dev/null -w '%{http_code}' "$TPUCTL_EMULATOR_URL/computeMetadata/v1/instance/zone")
	[ "$code" = 500 ] || fail "forever fault gave $code"
done
expect_rc 0 "$EMULATOR" faults --state-dir "$EMU_DIR"
jq -e '.faults[0].spec == "return-500" and .faults[0].count == -1' "$T/out" \
    >/dev/null || fail "faults listing: $(cat "$T/out")"
expect_rc 0 "$EMULATOR" faults --state-dir "$EMU_DIR" --clear
code=$(get -o /dev/null -w '%{http_code}' "$TPUCTL_EMULATOR_URL/computeMetadata/v1/instance/zone")
[ "$code" = 200 ] || fail "cleared fault still fires ($code)"

# retry-after: seconds, HTTP-date, garbage.
emu_inject retry-after-7
code=$(get -D "$T/hdr" -o /dev/null -w '%{http_code}' "$P")
[ "$code" = 429 ] || fail "retry-after-7 gave $code"
assert_grep '^Retry-After: 7' "$T/hdr"
emu_inject retry-after-date-5
get -D "$T/hdr" -o /dev/null "$P"
assert_grep '^Retry-After: [A-Z][a-z][a-z], [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9:]{8} GMT' "$T/hdr"
emu_inject retry-after-garbage
get -D "$T/hdr" -o /dev/null "$P"
assert_grep '^Retry-After: soon' "$T/hdr"

# reset-connection: curl 56; the next request is fine.
emu_inject reset-connection
set +e
get -o /dev/null "$P"
rc=$?
set -e
[ "$rc" = 56 ] || fail "reset-connection: curl exit $rc, want 56"
[ "$(get "$P")" = tpuctl-emu ] || fail "request after the reset"

# broken-stream-after-0K: curl 18 (body shorter than Content-Length).
emu_inject broken-stream-after-0K
set +e
get -o /dev/null "$P"
rc=$?
set -e
[ "$rc" = 18 ] || fail "broken-stream: curl exit $rc, want 18"

# broken-stream-after-1K on a larger reply: exactly 1 KiB arrives.
big="$TPUCTL_EMULATOR_URL/no-such-path-$(printf '%01200d' 0)"
emu_inject broken-stream-after-1K --path /no-such-path
set +e
curl -s -o "$T/part" "$big"
rc=$?
set -e
[ "$rc" = 18 ] || fail "broken-stream-after-1K: curl exit $rc"
[ "$(wc -c <"$T/part")" -eq 1024 ] || fail "got $(wc -c <"$T/part") bytes, want 1024"

# stall-Ss-after-NK: curl --max-time gives 28.
emu_inject stall-10s-after-0K
set +e
get --max-time 1 -o /dev/null "$P"
rc=$?
set -e
[ "$rc" = 28 ] || fail "stall: curl exit $rc, want 28"

# corrupt-byte-OFF: one byte flipped at OFF.
emu_inject corrupt-byte-0
body=$(get "$P")
[ "$body" != tpuctl-emu ] || fail "corrupt-byte-0 left the body intact"
[ "$(printf %s "$body" | cut -c2-)" = puctl-emu ] || fail "corrupted more than one byte: $body"

# return-CODE-after-NK: the handler runs, the reply is replaced.
emu_inject return-502-after-0K --path /computeMetadata
code=$(get -o /dev/null -w '%{http_code}' "$P")
[ "$code" = 502 ] || fail "return-502-after-0K gave $code"

# Module faults are accepted and logged without generic effect.
emu_inject lro-pending-3 --path /no-such-module-path
code=$(curl -s -o /dev/null -w '%{http_code}' "$TPUCTL_EMULATOR_URL/no-such-module-path")
[ "$code" = 404 ] || fail "module fault changed the reply ($code)"

# Bad specs are refused locally and by the server.
expect_rc 2 "$EMULATOR" inject --state-dir "$EMU_DIR" return-99
assert_grep "invalid fault spec 'return-99'" "$T/err"
expect_rc 2 "$EMULATOR" inject --state-dir "$EMU_DIR" 'stall-5s'
expect_rc 2 "$EMULATOR" inject --state-dir "$EMU_DIR" return-503 --count 0
code=$(curl -s -o "$T/body" -w '%{http_code}' -d '{"spec":"Return 503"}' \
    "$TPUCTL_EMULATOR_URL/_emulator/faults")
[ "$code" = 400 ] || fail "server accepted a bad spec ($code)"
code=$(curl -s -o "$T/body" -w '%{http_code}' -d '{"spec":"return-503","count":"x"}' \
    "$TPUCTL_EMULATOR_URL/_emulator/faults")
[ "$code" = 400 ] || fail "server accepted a bad count ($code)"
code=$(curl -s -o "$T/body" -w '%{http_code}' -d 'not json' \
    "$TPUCTL_EMULATOR_URL/_emulator/faults")
[ "$code" = 400 ] || fail "server accepted bad JSON ($code)"
assert_grep "Invalid JSON payload received" "$T/body"

# The request log names the fault that fired.
emu_requests | jq -e -s 'map(select(.fault == "reset-connection")) | length == 1' \
    >/dev/null || fail "reset-connection not in the request log"
emu_requests | jq -e -s 'map(select(.fault == "return-503" and .status == 503)) | length == 2' \
    >/dev/null || fail "return-503 not logged twice"
