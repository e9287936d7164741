#!/bin/sh
# tpuctl run --stage with a workdir of 9 MiB (over the 8 MiB from which
# the workers check the archive's sha256 with python3's hashlib): every
# worker pulls it and runs the job in it byte for byte; an unchanged
# workdir is neither uploaded nor pulled again (the worker's archive is
# the same file); a corrupted staged archive of that size is refused by
# the checksum on every worker (8, nothing runs, no partial archive
# left).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

have_tool python3 || skip "no python3"
emu_start --set fleet.key_delay_ms=0
fleet_api_setup
fleet_create_node t425 v4-16 90

expect_rc 0 "$TPUCTL" data mb gs://stg
mkdir -p "$T/wd"
head -c 9437184 /dev/urandom >"$T/wd/big.bin"
sum=$(sha256sum <"$T/wd/big.bin" | cut -c1-64)
# the job prints the file's sum and its worker's archive (inode, mtime,
# size) and what else is kept there (its digest file only)
# shellcheck disable=SC2016 # the worker's shell expands these
job='sha256sum <big.bin | cut -c1-64; stat -c "%i %Y %s" ~/.tpuctl/wd/*.tar; cd ~/.tpuctl/wd && echo *'
expect_rc 0 "$TPUCTL" -v run --name a --stage gs://stg/w --workdir "$T/wd" \
    t425 -- sh -c "$job"
for w in 0 1; do
	assert_grep "^\[w$w\] $sum\$" "$T/out"
	assert_grep "^\[w$w\] [0-9a-f]{64}\.tar [0-9a-f]{64}\.tar\.sha256\$" "$T/out"
done
assert_grep 'workdir staged as gs://stg/w/[0-9a-f]{64}\.tar' "$T/err"
grep -v "$sum\$" "$T/out" | sort >"$T/have1"
[ "$(grep -c ' 94[0-9]*$' "$T/have1")" -eq 2 ] || fail "archives: $(cat "$T/have1")"

# unchanged: not uploaded, not pulled again
expect_rc 0 "$TPUCTL" -v run --name b --stage gs://stg/w --workdir "$T/wd" \
    t425 -- sh -c "$job"
assert_grep 'workdir already staged as gs://stg/w/' "$T/err"
[ "$(grep -c "^\[w[01]\] $sum\$" "$T/out")" -eq 2 ] || fail "b: $(cat "$T/out")"
grep -v "$sum\$" "$T/out" | sort >"$T/have2"
cmp -s "$T/have1" "$T/have2" || fail "pulled again: $(cat "$T/have1") / $(cat "$T/have2")"

# a corrupted staged archive (same size) is refused on every worker
expect_rc 0 "$TPUCTL" ssh t425 --worker=all -- sh -c 'rm -f .tpuctl/wd/*.tar'
expect_rc 0 "$TPUCTL" data ls gs://stg/w/
obj=$(grep '\.tar$' "$T/out")
size=$(stat -c %s "$XDG_CACHE_HOME/tpuctl/workdirs/$(basename "$obj")")
head -c "$size" /dev/zero >"$T/junk"
expect_rc 0 "$TPUCTL" data cp "$T/junk" "$obj"
expect_rc 8 "$TPUCTL" run --name c --workdir "$T/wd" --stage gs://stg/w \
    t425 -- echo ran
[ "$(grep -c 'checksum mismatch' "$T/err")" -eq 2 ] || fail "c: $(cat "$T/err")"
assert_no_grep 'ran' "$T/out"
expect_rc 0 "$TPUCTL" ssh t425 --worker=all -- 'ls -A .tpuctl/wd; echo end'
assert_no_grep 'tar' "$T/out"
