#!/bin/sh
# tpuctl run: a workdir archive cached on a worker is checked before a
# new job uses it.  Corrupted on one worker (same size), the next run
# sends it again to that worker only (SFTP; attached and --detach) or
# has it pulled again (--stage), with a -v line, and the job sees the
# workdir byte for byte everywhere.
# shellcheck disable=SC2016 # remote shells expand these
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200
fleet_api_setup
fleet_create_node t480 v4-32 90

mkdir -p "$T/wd"
head -c 300000 /dev/urandom >"$T/wd/blob"
sum=$(sha256sum <"$T/wd/blob" | cut -c1-64)
job='sha256sum <blob | cut -c1-64'

# corrupt WORKER: one bit flipped in the middle of the cached archive
# (in the blob's data: tar would unpack it without a word); its sha256
# no longer its name
corrupt() {
	expect_rc 0 "$TPUCTL" ssh t480 --worker="$1" -- sh -c \
	    'f=$(ls .tpuctl/wd/*.tar) && python3 -c "import sys;f=open(sys.argv[1],\"r+b\");f.seek(150000);b=f.read(1);f.seek(150000);f.write(bytes([b[0]^1]))" "$f" && h=$(sha256sum <"$f" | cut -c1-64) && [ "$f" != ".tpuctl/wd/$h.tar" ]'
}

# every worker 0 to 3 printed the blob's sum
all_right() {
	for w in 0 1 2 3; do
		assert_grep "^\[w$w\] $sum\$" "$T/out"
	done
}

expect_rc 0 "$TPUCTL" -v run --name a1 --workdir "$T/wd" t480 -- sh -c "$job"
all_right
assert_grep 'workdir sent to 4 of 4 workers' "$T/err"

# unchanged: known to be on every worker, not asked, not sent
expect_rc 0 "$TPUCTL" -v run --name a2 --workdir "$T/wd" t480 -- sh -c "$job"
all_right
assert_grep 'workdir known to be on every worker' "$T/err"
assert_no_grep 'cached workdir archive' "$T/err"

# corrupted on worker 2: sent again there only, the job right
corrupt 2
expect_rc 0 "$TPUCTL" -v run --name a3 --workdir "$T/wd" t480 -- sh -c "$job"
all_right
assert_grep 'worker 2: the cached workdir archive failed its checksum; fetching it again' "$T/err"
[ "$(grep -c 'failed its checksum' "$T/err")" -eq 1 ] || fail "refetched: $(cat "$T/err")"
assert_grep 'workdir sent to 1 of 4 workers' "$T/err"
[ "$(grep -c 'workdir sent to' "$T/err")" -eq 1 ] || fail "sends: $(cat "$T/err")"
# without -v: no word of it, exit 0
corrupt 2
expect_rc 0 "$TPUCTL" run --name a4 --workdir "$T/wd" t480 -- sh -c "$job"
all_right
assert_no_grep 'checksum' "$T/err"

# --detach: the same, then the logs are right
corrupt 1
expect_rc 0 "$TPUCTL" -v run --detach --name a5 --workdir "$T/wd" t480 -- sh -c "$job"
assert_grep 'worker 1: the cached workdir archive failed its checksum; fetching it again' "$T/err"
assert_grep 'workdir sent to 1 of 4 workers' "$T/err"
assert_grep 'started on 4 of 4 workers' "$T/err"
expect_rc 0 "$TPUCTL" logs --follow a5
all_right

# the archive on worker 1 is whole again
expect_rc 0 "$TPUCTL" ssh t480 --worker=1 -- sh -c \
    'for f in .tpuctl/wd/*.tar; do h=$(sha256sum <"$f" | cut -c1-64); [ "$f" = ".tpuctl/wd/$h.tar" ] || exit 1; done'

# --stage: the worker pulls it again, nothing is uploaded again
expect_rc 0 "$TPUCTL" data mb gs://stg
expect_rc 0 "$TPUCTL" -v run --name s1 --stage gs://stg/j --workdir "$T/wd" t480 -- sh -c "$job"
all_right
corrupt 3
expect_rc 0 "$TPUCTL" -v run --name s2 --stage gs://stg/j --workdir "$T/wd" t480 -- sh -c "$job"
all_right
assert_grep 'workdir already staged as gs://stg/j/' "$T/err"
assert_grep 'worker 3: the cached workdir archive failed its checksum; fetching it again' "$T/err"
[ "$(grep -c 'failed its checksum' "$T/err")" -eq 1 ] || fail "refetched: $(cat "$T/err")"
