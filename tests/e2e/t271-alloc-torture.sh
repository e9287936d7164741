#!/bin/sh
# RELIABILITY.md G1, allocation torture: tests/reliability/failmalloc.c
# (LD_PRELOAD) fails the n-th malloc/calloc/realloc of a tpuctl run, for
# n = 1..15 and 25 more spread over all the allocations the command makes,
# over ten commands (local ones, API reads, create, upload, download, ssh
# fan-out).  Every run ends cleanly: exit 0 with exactly the output of a
# normal run (read-only commands), a documented exit status (1-9) with a
# "tpuctl:" message, or xmalloc's "out of memory" abort (134); never a
# crash (SIGSEGV, SIGBUS, a glibc heap abort), never a hang.  Plain build
# only (an interposed malloc cannot wrap ASan's).  Allocations made by
# libcrypto are spared: OpenSSL 3.0 itself crashes on them (see
# failmalloc.c); libcurl's, libssh2's, cJSON's and libc's are not.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

if ldd "$TPUCTL" 2>/dev/null | grep -q libasan; then
	skip "G1: an LD_PRELOAD malloc failer cannot wrap a sanitizer build"
fi
have_tool cc gcc "G1 (builds the failer)" || exit 77
FM="$T/failmalloc.so"
export FAILMALLOC_SPARE=libcrypto
cc -O1 -shared -fPIC -o "$FM" "$SRCDIR/tests/reliability/failmalloc.c" ||
    fail "cannot build failmalloc.so"

emu_start --set fleet.key_delay_ms=100 --set tpu.create_ms=200
fleet_api_setup
fleet_create_node g1 v4-16 60
expect_rc 0 "$TPUCTL" ssh g1 --worker=all -- true
expect_rc 0 "$TPUCTL" data mb gs://g1-bkt
head -c 300000 /dev/urandom >"$T/f"
expect_rc 0 "$TPUCTL" data cp "$T/f" gs://g1-bkt/f
runs=0

# torture RO NAME CMD...: RO=1 when a run that exits 0 must print exactly
# what a normal run prints.
torture() {
	ro=$1
	name=$2
	shift 2
	rm -f "$T/count"
	FAILMALLOC_COUNT="$T/count" LD_PRELOAD="$FM" "$@" >"$T/ref" 2>"$T/referr" ||
	    fail "$name: the normal run failed: $(cat "$T/referr")"
	total=$(cat "$T/count")
	ns=$(awk -v t="$total" 'BEGIN {
	    for (i = 1; i <= 15 && i <= t; i++) print i
	    for (k = 1; k <= 25; k++) { n = int(15 + k * (t - 15) / 25); if (n > 15) print n } }' |
	    sort -un)
	for n in $ns; do
		set +e
		FAILMALLOC_AT=$n LD_PRELOAD="$FM" timeout 60 "$@" >"$T/o" 2>"$T/e"
		rc=$?
		set -e
		runs=$((runs + 1))
		what="$name, allocation $n of $total: exit $rc"
		case $rc in
		0)
			if [ "$ro" = 1 ] && ! cmp -s "$T/o" "$T/ref"; then
				fail "$what with different output: $(diff "$T/ref" "$T/o" | head -5)"
			fi
			;;
		[1-9])
			grep -q '^tpuctl: ' "$T/e" ||
			    fail "$what without a message: $(head -3 "$T/e")"
			;;
		134)
			grep -q 'out of memory' "$T/e" ||
			    fail "$what (abort, not xmalloc's): $(head -5 "$T/e")"
			;;
		*) fail "$what (crash or hang): $(head -5 "$T/e")" ;;
		esac
	done
}

torture 1 version "$TPUCTL" --version
torture 1 "config list" "$TPUCTL" config list
torture 1 "config get" "$TPUCTL" config get core/project
torture 1 describe "$TPUCTL" describe g1 --format json
torture 1 list "$TPUCTL" list --format 'table(name,state)'
torture 1 "operations list" "$TPUCTL" operations list --format 'value(name)'
torture 0 "create --async" "$TPUCTL" create g1b --accelerator-type v4-8 --async
torture 0 "data cp up" "$TPUCTL" data cp "$T/f" gs://g1-bkt/up
torture 0 "data cp down" "$TPUCTL" data cp gs://g1-bkt/f "$T/down"
torture 1 "data cat" "$TPUCTL" data cat gs://g1-bkt/f
torture 0 "ssh fan-out" "$TPUCTL" ssh g1 --worker=all -- echo hi
echo "ok: $TEST_NAME ($runs runs)"
