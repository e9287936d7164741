#!/bin/sh
# The token cache (E5, E6, E7): one token exchange serves several
# commands; files are 0600 in a 0700 dir under umask 000; a 0644 cache file
# is fixed with a warning; a symlink at the path is never followed; an
# expired token (faketime +2h) is refreshed; "auth revoke" empties the
# cache; a JWT signed with a skewed clock fails with EC 3 naming the clock;
# a key file readable by others gets a warning.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# faketime preloads a library: let an ASan build accept that
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

# shellcheck disable=SC2119
emu_start
P=$CLOUDSDK_CORE_PROJECT
export GCE_METADATA_HOST=127.0.0.1:9
C="$XDG_CACHE_HOME/tpuctl/tokens"

tokens() {
	emu_requests | jq -r 'select(.path == "/token" and .method == "POST") | .status' |
	    grep -c . || true
}

umask 000
n0=$(tokens)
expect_rc 0 "$TPUCTL" api "v2/projects/$P/locations"
expect_rc 0 "$TPUCTL" api "v2/projects/$P/locations"
expect_rc 0 "$TPUCTL" auth print-access-token
[ "$(tokens)" -eq $((n0 + 1)) ] || fail "$(($(tokens) - n0)) token exchanges, want 1"
[ "$(stat -c %a "$C")" = 700 ] || fail "cache dir mode $(stat -c %a "$C")"
f=$(ls "$C"/*.json)
[ "$(echo "$f" | wc -l)" -eq 1 ] || fail "cache files: $f"
[ "$(stat -c %a "$f")" = 600 ] || fail "cache file mode $(stat -c %a "$f")"
umask 077

# A loose file is fixed, with a warning, and still used.
chmod 644 "$f"
expect_rc 0 "$TPUCTL" auth print-access-token
assert_grep 'readable by group or others; fixed to 0600' "$T/err"
[ "$(stat -c %a "$f")" = 600 ] || fail "0644 cache file not fixed"
[ "$(tokens)" -eq $((n0 + 1)) ] || fail "fixed cache file not used"

# A symlink at the path is neither read nor written through.
cp "$f" "$T/elsewhere"
rm "$f"
ln -s "$T/target" "$f"
expect_rc 0 "$TPUCTL" auth print-access-token
assert_grep 'symbolic link' "$T/err"
[ ! -e "$T/target" ] || fail "wrote through the symlink"
[ -L "$f" ] || fail "symlink replaced"
[ "$(tokens)" -eq $((n0 + 2)) ] || fail "symlinked cache was used"
rm "$f"

# Expired: two hours later the cached token is refreshed first (E6).  An
# authorized_user refresh does not depend on the clock, a JWT would.
SA=$GOOGLE_APPLICATION_CREDENTIALS
export GOOGLE_APPLICATION_CREDENTIALS="$EMU_DIR/authorized-user.json"
expect_rc 0 "$TPUCTL" auth print-access-token
n1=$(tokens)
expect_rc 0 faketime -f '+2h' "$TPUCTL" auth print-access-token
[ "$(tokens)" -eq $((n1 + 1)) ] || fail "expired token not refreshed"
# ... while one hour 50 minutes later (10 min left) it is still used.
expect_rc 0 faketime -f '+50m' "$TPUCTL" auth print-access-token
[ "$(tokens)" -eq $((n1 + 1)) ] || fail "valid token refreshed"

# revoke empties the cache; the next call exchanges again.
expect_rc 0 "$TPUCTL" auth revoke --format json
jq -e '.removed >= 1' "$T/out" >/dev/null || fail "revoke: $(cat "$T/out")"
[ -z "$(ls "$C")" ] || fail "cache not empty after revoke"
expect_rc 0 "$TPUCTL" auth print-access-token
[ "$(tokens)" -eq $((n1 + 2)) ] || fail "no exchange after revoke"

export GOOGLE_APPLICATION_CREDENTIALS="$SA"
n1=$(tokens)
expect_rc 0 "$TPUCTL" auth print-access-token
[ "$(tokens)" -eq $((n1 + 1)) ] || fail "no exchange for the service account"

# A JWT signed two hours in the past is rejected: EC 3 naming the clock (E7).
"$TPUCTL" auth revoke >/dev/null
expect_rc 3 faketime -f '-2h' "$TPUCTL" auth print-access-token
assert_grep 'clock' "$T/err"
assert_grep 'invalid_grant|iat|JWT' "$T/err"

# A private key readable by others: a warning naming the file.
cp "$GOOGLE_APPLICATION_CREDENTIALS" "$T/sa.json"
chmod 644 "$T/sa.json"
expect_rc 0 env GOOGLE_APPLICATION_CREDENTIALS="$T/sa.json" "$TPUCTL" auth list
assert_grep "sa.json' holds a private key and is readable by group or others" "$T/err"
