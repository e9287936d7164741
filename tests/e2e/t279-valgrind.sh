#!/bin/sh
# RELIABILITY.md G5: tpuctl under valgrind (memcheck): no invalid read or
# write, no use of uninitialised memory, no definite or indirect leak
# (--error-exitcode=99), for a few representative commands; with
# E2E_DEEP=1 (make check-deep) for many more, the ssh fan-out, scp and
# run included.  Plain build only (valgrind cannot run an ASan binary).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

if ldd "$TPUCTL" 2>/dev/null | grep -q libasan; then
	skip "G5: valgrind cannot wrap a sanitizer build"
fi
have_tool valgrind valgrind G5 || exit 77

emu_start --set fleet.key_delay_ms=100 --set tpu.create_ms=200
fleet_api_setup
fleet_create_node g5 v4-16 60
expect_rc 0 "$TPUCTL" data mb gs://g5-bkt
head -c 3000000 /dev/urandom >"$T/f"
runs=0

# vg CMD...: CMD under memcheck exits $want (0 unless set).
vg() {
	w=${want:-0}
	want=0
	set +e
	valgrind -q --error-exitcode=99 --leak-check=full \
	    --suppressions="$SRCDIR/tests/reliability/valgrind.supp" \
	    --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
	    --log-file="$T/vg.log" "$@" >/dev/null 2>"$T/vgerr"
	rc=$?
	set -e
	runs=$((runs + 1))
	if [ $rc -ne "$w" ]; then
		cat "$T/vg.log" >&2
		fail "valgrind '$*': exit $rc, want $w: $(head -5 "$T/vgerr")"
	fi
}

vg "$TPUCTL" --version
vg "$TPUCTL" config list
vg "$TPUCTL" list --format json
vg "$TPUCTL" describe g5 --format 'value(name,state)'
vg "$TPUCTL" create g5b --accelerator-type v4-8 --async
vg "$TPUCTL" data cp "$T/f" gs://g5-bkt/f
vg "$TPUCTL" data cp gs://g5-bkt/f "$T/down"
cmp -s "$T/f" "$T/down" || fail "the download differs"
want=4
vg "$TPUCTL" describe no-such-node
if [ "${E2E_DEEP:-0}" = 1 ]; then
	vg "$TPUCTL" ssh g5 --worker=all -- echo hi
	vg "$TPUCTL" scp --worker all "$T/f" g5:f
	vg "$TPUCTL" scp --worker 1 g5:f "$T/back"
	vg "$TPUCTL" data ls -r gs://g5-bkt
	vg "$TPUCTL" data cat gs://g5-bkt/f
	vg "$TPUCTL" data cp --parallel 4 "$T/f" gs://g5-bkt/p
	vg "$TPUCTL" operations list
	vg "$TPUCTL" accelerator-types list
	vg "$TPUCTL" run g5 -- echo hi
	vg "$TPUCTL" delete g5b --quiet
fi
echo "ok: $TEST_NAME ($runs commands)"
