#!/bin/sh
# shellcheck disable=SC2016,SC1003 # remote shells expand these
# tpuctl ssh argv quoting on the real sshd: random byte strings (no NUL)
# round-trip through the remote `printf %s` unchanged, and injection
# strings never execute.  Then a 64-worker node (v4-512) runs
# `true` on every worker.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200
fleet_api_setup
fleet_create_node t072 v4-8 90

# Injection strings: each must come back as itself, and no marker file.
for s in '$(touch pwned1)' '`touch pwned2`' "'; touch pwned3; '" \
    '"; touch pwned4; "' '\'"'"'; touch pwned5 #' '-n' '' ' lead' \
    'a
b' '$HOME' '*'; do
	expect_rc 0 "$TPUCTL" ssh t072 --output raw -- printf %s "$s"
	printf %s "$s" >"$T/want"
	cmp -s "$T/out" "$T/want" ||
	    fail "'$s' came back as '$(cat "$T/out")'"
done
expect_rc 0 "$TPUCTL" ssh t072 --output raw -- sh -c 'ls pwned* 2>/dev/null; true'
[ ! -s "$T/out" ] || fail "an injection ran: $(cat "$T/out")"

# Random byte strings (1..200 bytes, no NUL).
i=0
while [ $i -lt 20 ]; do
	len=$(($(od -An -N1 -tu1 /dev/urandom) % 200 + 1))
	head -c 4096 /dev/urandom | tr -d '\000' | head -c "$len" >"$T/want"
	arg=$(cat "$T/want"; echo x)
	arg=${arg%x}
	expect_rc 0 "$TPUCTL" ssh t072 --output raw -- printf %s "$arg"
	cmp -s "$T/out" "$T/want" || {
		od -c "$T/want" | head -5 >&2
		od -c "$T/out" | head -5 >&2
		fail "random string $i did not round-trip"
	}
	i=$((i + 1))
done

# 64 workers.
fleet_create_node t072big v4-512 120
n=$(jq '.networkEndpoints | length' "$T/node.json")
[ "$n" -eq 64 ] || fail "want 64 workers, got $n"
expect_rc 0 "$TPUCTL" ssh t072big --worker=all -- true
# More than 16 workers: identical outcomes grouped on one line.
grep -qx "64 workers: exit 0" "$T/err" ||
    fail "not 64 successes: $(tail -5 "$T/err")"
assert_no_grep '^worker [0-9]+:' "$T/err"
assert_grep '^64 of 64 workers succeeded' "$T/err"
