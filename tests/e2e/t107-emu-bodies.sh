#!/bin/sh
# Request bodies: chunked transfer encoding (no Content-Length), keep-alive
# reuse, the 64 MiB in-memory cap (413), bad JSON (400, Google's wording).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
U=$TPUCTL_EMULATOR_URL
AU="$EMU_DIR/authorized-user.json"
printf 'grant_type=refresh_token&client_id=%s&client_secret=%s&refresh_token=%s' \
    "$(jq -r .client_id "$AU")" "$(jq -r .client_secret "$AU")" \
    "$(jq -r .refresh_token "$AU")" >"$T/form"

# Chunked: curl streams a file of unknown length from stdin.
code=$(curl -s -o "$T/body" -w '%{http_code}' -H 'Transfer-Encoding: chunked' \
    -H 'Content-Type: application/x-www-form-urlencoded' \
    --data-binary @- "$U/token" <"$T/form")
[ "$code" = 200 ] || fail "chunked form gave $code: $(cat "$T/body")"
jq -e '.access_token | startswith("ya29.emu-")' "$T/body" >/dev/null ||
    fail "chunked body not understood"
jq -s -e '.[-1].request_bytes > 0' "$EMU_DIR/requests.jsonl" >/dev/null ||
    fail "chunked request size not logged"

# Keep-alive: two requests on one connection.
curl -s -o /dev/null -o /dev/null -w '%{num_connects}\n' \
    -H 'Metadata-Flavor: Google' "$U/" "$U/" >"$T/n"
[ "$(tail -1 "$T/n")" = 0 ] || fail "second request did not reuse the connection"

# Over the 64 MiB cap: 413.
head -c $((65 * 1024 * 1024)) /dev/zero >"$T/big"
code=$(curl -s -o "$T/body" -w '%{http_code}' --data-binary @"$T/big" "$U/_emulator/faults")
[ "$code" = 413 ] || fail "65 MiB body gave $code"
rm -f "$T/big"

# Bad JSON.
code=$(curl -s -o "$T/body" -w '%{http_code}' -d '{"spec": "return-503",}' \
    "$U/_emulator/faults")
[ "$code" = 400 ] || fail "bad JSON gave $code"
jq -e '.error.status == "INVALID_ARGUMENT" and
     (.error.message | startswith("Invalid JSON payload received."))' \
    "$T/body" >/dev/null || fail "bad JSON body: $(cat "$T/body")"
code=$(curl -s -o "$T/body" -w '%{http_code}' -d '[1]' "$U/_emulator/faults")
[ "$code" = 400 ] || fail "JSON array body gave $code"
code=$(curl -s -o "$T/body" -w '%{http_code}' -d '{} trailing' "$U/_emulator/faults")
[ "$code" = 400 ] || fail "trailing garbage gave $code"
