#!/bin/sh
# The retry policy against injected faults (RELIABILITY.md 4A): A1 503
# twice then 200 with one invocation id; A2 Retry-After seconds, date and
# garbage; A3 408/500/502/504 retried; A4 400/403/404/412 sent once with
# the server's message and the contract's exit status; A5 401 refresh and
# replay, twice gives EC 3; A6 503 forever stops at --timeout with EC 5;
# A7 refused, reset, unresolvable; A8 truncated body; A9 stall; A11 a
# non-JSON error body; A13 token endpoint 500 retried, invalid_grant not.
# (A10, nodes.create after a reset, belongs to the provisioning tests.)
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
P=$CLOUDSDK_CORE_PROJECT
export GCE_METADATA_HOST=127.0.0.1:9
LOC="/v2/projects/$P/locations"

hits() {
	emu_requests | jq -r --arg p "$1" 'select(.path == $p) | .method' |
	    grep -c . || true
}

# warm the token cache so the counts below are API requests only
expect_rc 0 "$TPUCTL" auth print-access-token

# A1
n=$(hits "$LOC")
emu_inject return-503 --method GET --path "$LOC" --count 2
expect_rc 0 "$TPUCTL" -v api "v2/projects/$P/locations"
[ "$(hits "$LOC")" -eq $((n + 3)) ] || fail "A1: $(($(hits "$LOC") - n)) requests, want 3"
ids=$(emu_requests | jq -r --arg p "$LOC" 'select(.path == $p) | .headers["x-goog-api-client"]' |
    tail -3 | sed 's/.*gccl-invocation-id\/\([^ ]*\).*/\1/' | sort -u | wc -l)
[ "$ids" -eq 1 ] || fail "A1: $ids invocation ids across the attempts"
[ "$(grep -c 'retrying in' "$T/err")" -eq 2 ] || fail "A1: want 2 retry notices"
assert_grep 'HTTP 503' "$T/err"

# A2: Retry-After in seconds and as a date are waited for; garbage is not
# fatal (backoff instead).
emu_inject retry-after-2 --method GET --path "$LOC" --count 1
start=$(date +%s%N)
expect_rc 0 "$TPUCTL" api "v2/projects/$P/locations"
el=$((($(date +%s%N) - start) / 1000000))
[ "$el" -ge 1900 ] || fail "A2: Retry-After 2 waited only $el ms"
emu_inject retry-after-date-3 --method GET --path "$LOC" --count 1
start=$(date +%s%N)
expect_rc 0 "$TPUCTL" api "v2/projects/$P/locations"
el=$((($(date +%s%N) - start) / 1000000))
[ "$el" -ge 1000 ] || fail "A2: Retry-After date waited only $el ms"
emu_inject retry-after-garbage --method GET --path "$LOC" --count 1
expect_rc 0 "$TPUCTL" api "v2/projects/$P/locations"
# a Retry-After beyond the deadline ends the call at once
emu_inject retry-after-120 --method GET --path "$LOC" --count 1
start=$(date +%s)
expect_rc 5 "$TPUCTL" api --timeout 10 "v2/projects/$P/locations"
[ $(($(date +%s) - start)) -lt 5 ] || fail "A2: waited past the deadline"

# A3
for c in 408 500 502 504; do
	n=$(hits "$LOC")
	emu_inject "return-$c" --method GET --path "$LOC" --count 1
	expect_rc 0 "$TPUCTL" api "v2/projects/$P/locations"
	[ "$(hits "$LOC")" -eq $((n + 2)) ] || fail "A3: $c not retried once"
done

# A4
for pair in 400:2 403:3 404:4 412:4; do
	c=${pair%:*}
	want=${pair#*:}
	n=$(hits "$LOC")
	emu_inject "return-$c" --method GET --path "$LOC" --count 1
	expect_rc "$want" "$TPUCTL" api "v2/projects/$P/locations"
	[ "$(hits "$LOC")" -eq $((n + 1)) ] || fail "A4: $c sent more than once"
	assert_grep "HTTP $c" "$T/err"
	assert_grep 'Injected fault' "$T/err"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "A4: more than one error line"
done
# a POST is never retried on 503
emu_inject return-503 --method POST --path "$LOC/x" --count 1
expect_rc 5 "$TPUCTL" api --data '{}' "v2/projects/$P/locations/x"
[ "$(hits "$LOC/x")" -eq 1 ] || fail "POST retried"

# A5: one refresh and one replay; two 401s give EC 3 with a hint.
t0=$(emu_requests | grep -c '"path":"/token"' || true)
n=$(hits "$LOC")
emu_inject return-401 --method GET --path "$LOC" --count 1
expect_rc 0 "$TPUCTL" api "v2/projects/$P/locations"
[ "$(hits "$LOC")" -eq $((n + 2)) ] || fail "A5: want a single replay"
[ "$(emu_requests | grep -c '"path":"/token"')" -eq $((t0 + 1)) ] ||
    fail "A5: want exactly one token refresh"
emu_inject return-401 --method GET --path "$LOC" --count 2
expect_rc 3 "$TPUCTL" api "v2/projects/$P/locations"
assert_grep 'after a refresh' "$T/err"

# A6: 503 forever, --timeout 5: EC 5 within the deadline plus one backoff.
emu_inject return-503 --method GET --path "$LOC" --count 1000
start=$(date +%s)
expect_rc 5 "$TPUCTL" api --timeout 5 "v2/projects/$P/locations"
el=$(($(date +%s) - start))
[ "$el" -le 7 ] || fail "A6: took $el s with --timeout 5"
assert_grep 'giving up after [0-9]+ attempts in [0-9.]+ s: last error: .*HTTP 503' "$T/err"
"$EMULATOR" faults --state-dir "$EMU_DIR" --clear >/dev/null

# A7: refused, reset, unresolvable.
expect_rc 5 env CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU=http://127.0.0.1:9/ \
    "$TPUCTL" -v api --timeout 4 "v2/projects/$P/locations"
assert_grep 'cannot connect' "$T/err"
assert_grep 'retrying in' "$T/err"
n=$(hits "$LOC")
emu_inject reset-connection --method GET --path "$LOC" --count 1
expect_rc 0 "$TPUCTL" api "v2/projects/$P/locations"
# the reset GET and its one retry
[ "$(hits "$LOC")" -eq $((n + 2)) ] ||
    fail "A7: $(($(hits "$LOC") - n)) GETs for a reset, want 2"
expect_rc 5 env CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU=https://x.invalid/ \
    "$TPUCTL" api --timeout 3 "v2/projects/$P/locations"
assert_grep 'cannot resolve' "$T/err"

# A8: a truncated body is retried, never parsed as success.
emu_inject broken-stream-after-0K --method GET --path "$LOC" --count 1
expect_rc 0 "$TPUCTL" -v api "v2/projects/$P/locations" --format json
jq -e '.locations' "$T/out" >/dev/null || fail "A8: bad body"
assert_grep 'cut short' "$T/err"

# A9: a stall trips the low-speed limit and is retried.
emu_inject stall-30s-after-0K --method GET --path "$LOC" --count 1
start=$(date +%s)
expect_rc 0 env TPUCTL_HTTP_STALL_TIMEOUT=2 "$TPUCTL" -v api "v2/projects/$P/locations"
[ $(($(date +%s) - start)) -lt 15 ] || fail "A9: stall not detected"
assert_grep 'stalled' "$T/err"

# A13: the token endpoint's 500 is retried; invalid_grant is not.
"$TPUCTL" auth revoke >/dev/null
t0=$(emu_requests | grep -c '"path":"/token"' || true)
emu_inject return-500 --method POST --path /token --count 1
expect_rc 0 "$TPUCTL" auth print-access-token
[ "$(emu_requests | grep -c '"path":"/token"')" -eq $((t0 + 2)) ] ||
    fail "A13: 500 from /token not retried once"
jq '.refresh_token = "revoked-token"' "$EMU_DIR/authorized-user.json" >"$T/au.json"
t0=$(emu_requests | grep -c '"path":"/token"')
expect_rc 3 env GOOGLE_APPLICATION_CREDENTIALS="$T/au.json" "$TPUCTL" auth print-access-token
[ "$(emu_requests | grep -c '"path":"/token"')" -eq $((t0 + 1)) ] ||
    fail "A13: invalid_grant retried"
assert_grep 'invalid_grant' "$T/err"
assert_grep 're-create' "$T/err"

# A11: a non-JSON error body gives a clear message with the status.
expect_rc 3 "$TPUCTL" api "$TPUCTL_EMULATOR_URL/"
assert_grep 'HTTP 403 Forbidden with a (non-JSON|HTML) body' "$T/err"
# a full URL off the configured endpoint is refused before sending
expect_rc 2 "$TPUCTL" api "http://127.0.0.2:1/v2/x"
assert_grep 'not on the configured tpu endpoint' "$T/err"
