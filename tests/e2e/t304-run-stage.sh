#!/bin/sh
# tpuctl run --stage: the workdir archive is uploaded once to
# gs://BUCKET/PREFIX/SHA256.tar and every worker pulls it with curl and
# its own metadata-server token, checks its sha256 and runs the job in
# it; an unchanged workdir is not uploaded again; the run/staging_bucket
# setting does the same; a corrupted staged archive is refused by the
# workers (the job does not start there: 8); bad --stage values are
# usage errors.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200
fleet_api_setup
fleet_create_node t304 v4-32 90

expect_rc 2 "$TPUCTL" run t304 --stage 'http://x' --workdir . -- true
assert_grep '^tpuctl: --stage' "$T/err"
expect_rc 2 "$TPUCTL" run t304 --stage gs://bkt/p -- true
assert_grep 'needs --workdir' "$T/err"

expect_rc 0 "$TPUCTL" data mb gs://stg
mkdir -p "$T/wd/d"
head -c 300000 /dev/urandom >"$T/wd/d/blob"
printf 'staged ok\n' >"$T/wd/msg.txt"
sum=$(sha256sum <"$T/wd/d/blob" | cut -c1-64)
expect_rc 0 "$TPUCTL" -v run --name s1 --stage gs://stg/jobs/ --workdir "$T/wd" \
    t304 -- sh -c 'cat msg.txt; sha256sum <d/blob | cut -c1-64'
for w in 0 1 2 3; do
	assert_grep "^\[w$w\] staged ok\$" "$T/out"
	assert_grep "^\[w$w\] $sum\$" "$T/out"
done
assert_grep 'workdir staged as gs://stg/jobs/[0-9a-f]{64}\.tar' "$T/err"
assert_no_grep 'workdir sent' "$T/err"
expect_rc 0 "$TPUCTL" data ls gs://stg/jobs/
[ "$(grep -c '\.tar$' "$T/out")" -eq 1 ] || fail "staged objects: $(cat "$T/out")"
obj=$(grep '\.tar$' "$T/out")

# unchanged: not uploaded again; through the setting
expect_rc 0 "$TPUCTL" config set run/staging_bucket gs://stg/jobs
expect_rc 0 "$TPUCTL" -v run --name s2 --workdir "$T/wd" t304 -- cat msg.txt
assert_grep 'workdir already staged as gs://stg/jobs/' "$T/err"
[ "$(grep -c '^\[w[0-3]\] staged ok$' "$T/out")" -eq 4 ] || fail "s2: $(cat "$T/out")"

# a corrupted staged archive (same size) is refused by every worker
expect_rc 0 "$TPUCTL" ssh t304 --worker=all -- sh -c 'rm -f .tpuctl/wd/*.tar'
size=$(stat -c %s "$XDG_CACHE_HOME/tpuctl/workdirs/$(basename "$obj")")
head -c "$size" /dev/zero >"$T/junk"
expect_rc 0 "$TPUCTL" data cp "$T/junk" "$obj"
expect_rc 8 "$TPUCTL" run --name s3 --workdir "$T/wd" t304 -- cat msg.txt
assert_grep 'checksum mismatch' "$T/err"
assert_grep '^worker 2: no such job$' "$T/err"
assert_no_grep 'staged ok' "$T/out"
