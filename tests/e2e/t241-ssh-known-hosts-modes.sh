#!/bin/sh
# t241: known_hosts is trusted only when nobody else can write it
# (issue 19 defect 11, the knownhosts.c part): with a 0666 known_hosts, or
# its directory 0777, "tpuctl ssh" refuses before connecting, naming the
# path and the fix, and runs nothing; once fixed it runs.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start
fleet_api_setup
expect_rc 0 "$TPUCTL" create t241 --accelerator-type v4-8
expect_rc 0 "$TPUCTL" ssh t241 -- echo pinned
KH="$XDG_CONFIG_HOME/tpuctl/known_hosts"
[ -s "$KH" ] || fail "no known_hosts after the first ssh"

chmod 0666 "$KH"
set +e
"$TPUCTL" ssh t241 -- echo ran >"$T/out" 2>"$T/err"
rc=$?
set -e
[ $rc -ne 0 ] || fail "a world-writable known_hosts was used"
assert_grep "refusing known_hosts: file '$KH' is writable by group or others \(mode 0666\)" "$T/err"
assert_grep "chmod go-w" "$T/err"
assert_no_grep 'ran' "$T/out"
chmod 0600 "$KH"

chmod 0777 "$(dirname "$KH")"
set +e
"$TPUCTL" ssh t241 -- echo ran >"$T/out" 2>"$T/err"
rc=$?
set -e
[ $rc -ne 0 ] || fail "a known_hosts in a world-writable directory was used"
assert_grep "refusing known_hosts: directory '$(dirname "$KH")' is writable" "$T/err"
assert_no_grep 'ran' "$T/out"
chmod 0700 "$(dirname "$KH")"

expect_rc 0 "$TPUCTL" ssh t241 -- echo again
assert_grep 'again' "$T/out"
exit 0
