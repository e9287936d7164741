#!/bin/sh
# tpuctl run: a workdir archive cached on a worker is vouched for by its
# digest file (HASH.tar.sha256: the hash, newer than the archive), so a
# new job uses it without hashing it again.  The digest file is written
# when the archive arrives; one missing or naming another hash: the
# archive is hashed again (right: used, the digest file rewritten; no
# refetch).  The documented limit: bytes changed under an archive whose
# mtime stays older than its digest file are trusted; once the archive
# is the newer, it is hashed, refused and sent again to that worker only.
# shellcheck disable=SC2016 # remote shells expand these
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

have_tool python3 || skip "no python3"
emu_start --set fleet.key_delay_ms=0
fleet_api_setup
fleet_create_node t467 v4-16 90

mkdir -p "$T/wd"
head -c 300000 /dev/urandom >"$T/wd/blob"
sum=$(sha256sum <"$T/wd/blob" | cut -c1-64)
job='sha256sum <blob | cut -c1-64'

# digests_right: on every worker, each archive's digest file names its
# hash (the archive's own sha256) and is newer than it
digests_right() {
	expect_rc 0 "$TPUCTL" ssh t467 --worker=all -- sh -c \
	    'cd .tpuctl/wd && for f in *.tar; do h=${f%.tar}; [ "$(sha256sum <"$f" | cut -c1-64)" = "$h" ] && [ "$f.sha256" -nt "$f" ] && read -r v <"$f.sha256" && [ "$v" = "$h" ] || exit 1; done; echo right'
	[ "$(grep -c 'right$' "$T/out")" -eq 2 ] || fail "digest files: $(cat "$T/out" "$T/err")"
}

expect_rc 0 "$TPUCTL" -v run --name a1 --workdir "$T/wd" t467 -- sh -c "$job"
[ "$(grep -c " $sum\$" "$T/out")" -eq 2 ] || fail "a1: $(cat "$T/out")"
assert_grep 'workdir sent to 2 of 2 workers' "$T/err"
digests_right

# worker 0 without its digest file, worker 1's naming another hash:
# hashed again there, found right, used; nothing sent
expect_rc 0 "$TPUCTL" ssh t467 --worker=0 -- sh -c 'rm .tpuctl/wd/*.tar.sha256'
expect_rc 0 "$TPUCTL" ssh t467 --worker=1 -- sh -c \
    'for f in .tpuctl/wd/*.tar.sha256; do printf "%064d\n" 0 >"$f"; done'
expect_rc 0 "$TPUCTL" -v run --name a2 --workdir "$T/wd" t467 -- sh -c "$job"
[ "$(grep -c " $sum\$" "$T/out")" -eq 2 ] || fail "a2: $(cat "$T/out")"
assert_grep 'workdir known to be on every worker' "$T/err"
assert_no_grep 'cached workdir archive' "$T/err"
assert_no_grep 'workdir sent' "$T/err"
digests_right

# one bit flipped in worker 1's archive, its mtime then set back before
# its digest file's: trusted as vouched for (not hashed: the job reads
# the changed blob there)
expect_rc 0 "$TPUCTL" ssh t467 --worker=1 -- sh -c \
    'f=$(ls .tpuctl/wd/*.tar) && python3 -c "import os,sys;p=sys.argv[1];s=os.stat(p);f=open(p,\"r+b\");f.seek(150000);b=f.read(1);f.seek(150000);f.write(bytes([b[0]^1]));f.close();os.utime(p,ns=(s.st_atime_ns,s.st_mtime_ns))" "$f" && [ "$f.sha256" -nt "$f" ]'
expect_rc 0 "$TPUCTL" -v run --name a3 --workdir "$T/wd" t467 -- sh -c "$job"
assert_grep "^\[w0\] $sum\$" "$T/out"
assert_no_grep "^\[w1\] $sum\$" "$T/out"
assert_no_grep 'cached workdir archive' "$T/err"

# the archive now the newer (touched): hashed, refused, sent again to
# worker 1 only; the job right everywhere, the digest files right
expect_rc 0 "$TPUCTL" ssh t467 --worker=1 -- sh -c 'touch .tpuctl/wd/*.tar'
expect_rc 0 "$TPUCTL" -v run --name a4 --workdir "$T/wd" t467 -- sh -c "$job"
[ "$(grep -c " $sum\$" "$T/out")" -eq 2 ] || fail "a4: $(cat "$T/out")"
assert_grep 'worker 1: the cached workdir archive failed its checksum; fetching it again' "$T/err"
[ "$(grep -c 'failed its checksum' "$T/err")" -eq 1 ] || fail "refetched: $(cat "$T/err")"
assert_grep 'workdir sent to 1 of 2 workers' "$T/err"
digests_right
