#!/bin/sh
# RELIABILITY.md D3: getGuestAttributes answers 404 or 403: ssh fails
# closed (no command runs, nothing pinned in known_hosts, the error names
# the node and the HTTP status class), also with
# --strict-host-key-checking=no (an error of the API is not a worker
# that published no key), and no worker is connected to (RELIABILITY.md
# S2: the sshd logs show no connection); once the call works again, ssh
# works.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=100 --set tpu.create_ms=300
fleet_api_setup
fleet_create_node d3 v4-8 60
GA="$NODES/d3:getGuestAttributes"
KH="$XDG_CONFIG_HOME/tpuctl/known_hosts"

# connections the node's workers' sshd logged (LogLevel VERBOSE)
conns() {
	cat "$EMU_DIR"/fleet/n*/w*/sshd.log 2>/dev/null |
	    grep -c 'Connection from' || true
}

pinned() {
	[ -f "$KH" ] && grep -q 'tpu\.' "$KH"
}

c0=$(conns)
for code in 404 403; do
	emu_inject --method POST --path "$GA" --count -1 "return-$code"
	for strict in yes no; do
		set +e
		"$TPUCTL" ssh d3 --strict-host-key-checking=$strict -- echo RAN \
		    >"$T/out" 2>"$T/err"
		rc=$?
		set -e
		[ $rc -ne 0 ] || fail "D3 $code strict=$strict: exit 0"
		[ $rc -ne 1 ] || fail "D3 $code strict=$strict: exit 1 (internal?)"
		assert_no_grep RAN "$T/out"
		assert_grep 'd3|getGuestAttributes' "$T/err"
		pinned && fail "D3 $code strict=$strict: a host key was pinned: $(cat "$KH")"
		# S2: failing closed means no connection to a worker at all
		[ "$(conns)" -eq "$c0" ] ||
		    fail "D3 $code strict=$strict: a worker was connected to"
		echo "D3 $code strict=$strict: exit $rc: $(head -1 "$T/err")"
	done
	"$EMULATOR" faults --state-dir "$EMU_DIR" --clear >/dev/null ||
	    fail "clearing faults"
done
# 404 is "not found" (4), 403 a permission error (3).
emu_inject --method POST --path "$GA" --count -1 return-404
expect_rc 4 "$TPUCTL" ssh d3 -- echo RAN
"$EMULATOR" faults --state-dir "$EMU_DIR" --clear >/dev/null ||
    fail "clearing faults"
emu_inject --method POST --path "$GA" --count -1 return-403
expect_rc 3 "$TPUCTL" ssh d3 -- echo RAN
assert_grep "node 'd3': reading its host keys \\(getGuestAttributes\\)" "$T/err"
"$EMULATOR" faults --state-dir "$EMU_DIR" --clear >/dev/null ||
    fail "clearing faults"

expect_rc 0 "$TPUCTL" ssh d3 -- echo RAN
assert_grep '^(\[w0\] )?RAN$' "$T/out"
pinned || fail "no host key pinned after a working call"
[ "$(conns)" -gt "$c0" ] || fail "the working ssh logged no connection (sshd.log?)"
echo "ok: $TEST_NAME"
