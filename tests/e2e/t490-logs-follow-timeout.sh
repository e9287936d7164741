#!/bin/sh
# logs --follow --timeout DURATION: the following stops after DURATION
# with exit 124 and one line saying the job goes on (it is not
# cancelled: it still runs, and a later follow shows its end); the value
# is parsed as run --timeout parses it (a bad one: exit 2 naming it);
# --timeout without --follow is refused.  (t491: a submitted job that
# never starts.)
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200 --set tpu.qr_provision_ms=300
fleet_api_setup
fleet_create_node t490 v4-16 90

expect_rc 0 "$TPUCTL" run --detach --name j490 t490 \
    --command 'echo begin; sleep 6; echo end'
for bad in 0 8d 3x; do
	expect_rc 2 "$TPUCTL" logs --follow --timeout "$bad" j490
	assert_grep "^tpuctl: .*'$bad'.*--timeout|--timeout '$bad'" "$T/err"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "$bad: $(cat "$T/err")"
done
expect_rc 2 "$TPUCTL" logs --timeout 2s j490
assert_grep 'tpuctl: --timeout: only with --follow' "$T/err"

t0=$(date +%s)
expect_rc 124 "$TPUCTL" logs --follow --timeout 2s j490
t1=$(date +%s)
[ $((t1 - t0)) -lt 6 ] || fail "--timeout 2s took $((t1 - t0)) s"
assert_grep '^\[w0\] begin$' "$T/out"
assert_no_grep 'end$' "$T/out"
[ "$(grep -c 'job j490: --timeout reached; stopped following (it goes on running)' "$T/err")" -eq 1 ] ||
	fail "timeout line: $(cat "$T/err")"
# not cancelled: the job ends by itself, every line once
expect_rc 0 "$TPUCTL" logs --follow j490
for w in 0 1; do
	[ "$(grep -c "^\[w$w\] begin\$" "$T/out")" -eq 1 ] || fail "w$w begin: $(cat "$T/out")"
	[ "$(grep -c "^\[w$w\] end\$" "$T/out")" -eq 1 ] || fail "w$w end: $(cat "$T/out")"
done
