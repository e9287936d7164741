#!/bin/sh
# The node cache (src/nodecache.c) as the commands keep it: describe of a
# READY node writes the entry (0600 in 0700 directories, under
# TPUCTL_CACHE_DIR or XDG_CACHE_HOME), describe of a node in another state
# drops it, update and delete drop it.  Then RELIABILITY.md B7: the wall
# clock jumps a day forward (libfaketime, monotonic clock untouched) while
# create waits with --timeout: the deadline runs on CLOCK_MONOTONIC, so it
# does not fire early, and a real timeout still fires on time.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start
C="$XDG_CACHE_HOME/tpuctl/nodes/tpuctl-emu/us-central2-b"

mode() {
	stat -c %a "$1"
}

expect_rc 0 "$TPUCTL" create c1 --accelerator-type v4-8
rm -f "$C/c1.json"
expect_rc 0 "$TPUCTL" describe c1
[ -f "$C/c1.json" ] || fail "describe of a READY node wrote no cache entry"
[ "$(mode "$C/c1.json")" = 600 ] || fail "entry mode $(mode "$C/c1.json")"
for d in "$C" "${C%/*}" "${C%/*/*}"; do
	[ "$(mode "$d")" = 700 ] || fail "$d mode $(mode "$d")"
done
jq -e '.node.name | endswith("/nodes/c1")' "$C/c1.json" >/dev/null ||
    fail "entry: $(cat "$C/c1.json")"
jq -e '.node.state == "READY" and (.storedAt | type) == "number"' \
    "$C/c1.json" >/dev/null || fail "entry: $(cat "$C/c1.json")"

# update drops it; describe writes it again.
expect_rc 0 "$TPUCTL" update c1 --update-labels v=2
[ ! -e "$C/c1.json" ] || fail "update left the cache entry"
expect_rc 0 "$TPUCTL" describe c1
jq -e '.node.labels.v == "2"' "$C/c1.json" >/dev/null ||
    fail "entry not refreshed: $(cat "$C/c1.json")"

# A stopped node is never cached: describe drops the entry.
expect_rc 0 "$TPUCTL" stop c1
expect_rc 0 "$TPUCTL" describe c1
[ ! -e "$C/c1.json" ] || fail "a STOPPED node is cached"
expect_rc 0 "$TPUCTL" start c1
expect_rc 0 "$TPUCTL" describe c1
[ -f "$C/c1.json" ] || fail "no entry after start + describe"

# --dry-run delete keeps it, delete drops it.
expect_rc 0 "$TPUCTL" --dry-run delete c1 --quiet
[ -f "$C/c1.json" ] || fail "--dry-run delete dropped the entry"
expect_rc 0 "$TPUCTL" delete c1 --quiet
[ ! -e "$C/c1.json" ] || fail "delete left the cache entry"

# TPUCTL_CACHE_DIR replaces the tpuctl directory.
expect_rc 0 "$TPUCTL" create c2 --accelerator-type v4-8
TPUCTL_CACHE_DIR="$T/cache" expect_rc 0 "$TPUCTL" describe c2
[ -f "$T/cache/nodes/tpuctl-emu/us-central2-b/c2.json" ] ||
    fail "TPUCTL_CACHE_DIR not used"

# B7: the wall clock jumps +1 day in the middle of an operation wait.
lib=
for f in /usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1 \
    /usr/local/lib/faketime/libfaketime.so.1; do
	[ -f "$f" ] && lib=$f && break
done
[ -n "$lib" ] || fail "libfaketime not found: install the faketime package"
# ft CMD...: run CMD with the wall clock read from $T/faketime (re-read
# on every call); the monotonic clock stays real.  ASan (sanitizer build)
# must not insist on being first in the library list.
ft() {
	LD_PRELOAD=$lib FAKETIME_TIMESTAMP_FILE="$T/faketime" FAKETIME_NO_CACHE=1 \
	    FAKETIME_DONT_FAKE_MONOTONIC=1 \
	    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
	    "$@"
}
echo "+0" >"$T/faketime"
# A fixed access token: a service-account JWT signed a day ahead would be
# refused by the token endpoint (that is E7, not B7).
TOK=$TPUCTL_EMULATOR_ACCESS_TOKEN_FILE
NODES=/v2/projects/tpuctl-emu/locations/us-central2-b
emu_inject --method GET --path "$NODES/operations/" --count 1 lro-pending-3
start=$(date +%s)
ft "$TPUCTL" --access-token-file "$TOK" create b7 --accelerator-type v4-8 --timeout 60s \
    >"$T/out" 2>"$T/err" &
pid=$!
sleep 1
echo "+1d" >"$T/faketime"
set +e
wait $pid
rc=$?
set -e
[ $rc -eq 0 ] || fail "B7: exit $rc after the clock jump: $(cat "$T/err")"
assert_grep "created node 'b7'" "$T/err"
# A real --timeout still fires on time, not a day early or late.
echo "+0" >"$T/faketime"
emu_inject --method GET --path "$NODES/operations/" --count -1 lro-pending-1000
start=$(date +%s)
ft "$TPUCTL" --access-token-file "$TOK" create b7t --accelerator-type v4-8 --timeout 3s \
    >"$T/out" 2>"$T/err" &
pid=$!
sleep 1
echo "+1d" >"$T/faketime"
set +e
wait $pid
rc=$?
set -e
took=$(($(date +%s) - start))
[ $rc -eq 124 ] || fail "B7: exit $rc, want 124: $(cat "$T/err")"
[ $took -ge 3 ] || fail "B7: the 3 s timeout fired after $took s"
[ $took -lt 30 ] || fail "B7: the 3 s timeout took $took s"
# The fake clock does reach tpuctl: a day ahead, the cached token is
# stale and the JWT it signs is refused for its times.
echo "+1d" >"$T/faketime"
set +e
ft "$TPUCTL" list >"$T/out" 2>"$T/err"
rc=$?
set -e
[ $rc -eq 3 ] || fail "a day ahead: exit $rc, want 3: $(cat "$T/err")"
assert_grep 'check the system clock' "$T/err"
