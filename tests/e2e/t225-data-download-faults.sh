#!/bin/sh
# t225: download faults of RELIABILITY.md 4C: C3 (a corrupt byte: exit 6,
# temp removed, an existing destination byte-identical), C4 (a broken
# stream at 1 MiB: resumed with Range on the same generation), C5 (the
# object is replaced between the stat and the read: never stitched), C14
# (SIGKILL during a download: only DEST.tpuctl-tmp, the destination
# untouched), and C13 (disk full on a 1 MiB tmpfs: not retried, temp
# removed, "No space left").

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-df
mkfile "$T/f" 3000000
expect_rc 0 "$TPUCTL" data cp "$T/f" gs://e2e-df/f
printf 'precious\n' >"$T/dest"
cp "$T/dest" "$T/dest.orig"

# C3
emu_inject --method GET --path '/storage/v1/b/e2e-df/o/f?alt=media' --count 1 corrupt-byte-100
expect_rc 6 "$TPUCTL" data cp gs://e2e-df/f "$T/dest"
assert_grep 'crc32c mismatch' "$T/err"
cmp -s "$T/dest" "$T/dest.orig" || fail "C3: the destination changed"
[ ! -e "$T/dest.tpuctl-tmp" ] || fail "C3: temp file left"

# C4
emu_inject --method GET --path '/storage/v1/b/e2e-df/o/f?alt=media' --count 1 broken-stream-after-1024K
expect_rc 0 "$TPUCTL" -v data cp gs://e2e-df/f "$T/dest"
cmp -s "$T/dest" "$T/f" || fail "C4: data"
assert_grep 'resuming at byte' "$T/err"
# the re-read starts at the byte the stream broke at, on the same
# generation (both, in one request)
emu_requests | jq -s -e '[.[] | select(.method == "GET" and
    .path == "/storage/v1/b/e2e-df/o/f" and
    ((.query // "") | test("alt=media")) and
    ((.query // "") | test("generation=[0-9]+")) and
    (((.headers.Range // .headers.range) // "") |
        startswith("bytes=1048576-")))] | length == 1' >/dev/null ||
    fail "C4: no ranged re-read from byte 1048576 of the same generation"

# C5: a new generation appears while the first read is broken
mkfile "$T/f2" 3000000
emu_inject --method GET --path '/storage/v1/b/e2e-df/o/f?alt=media' --count 1 stall-3s-after-1024K
"$TPUCTL" data cp gs://e2e-df/f "$T/c5" >"$T/c5out" 2>&1 &
pid=$!
sleep 1
req POST "$GCS/upload/storage/v1/b/e2e-df/o?uploadType=media&name=f" --data-binary "@$T/f2"
want 200 "overwrite during the read"
set +e
wait $pid
rc=$?
set -e
if [ $rc = 0 ]; then
	cmp -s "$T/c5" "$T/f" || cmp -s "$T/c5" "$T/f2" || fail "C5: stitched generations"
else
	[ $rc = 4 ] || { cat "$T/c5out" >&2; fail "C5: exit $rc"; }
	[ ! -e "$T/c5" ] || fail "C5: partial file"
fi

# C14: kill -9 in the middle of a download
emu_inject --method GET --path '/storage/v1/b/e2e-df/o/f?alt=media' --count 1 stall-30s-after-1024K
"$TPUCTL" data cp gs://e2e-df/f "$T/dest" >/dev/null 2>&1 &
pid=$!
i=0
while [ ! -s "$T/dest.tpuctl-tmp" ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
kill -9 $pid
wait $pid 2>/dev/null || true
"$EMULATOR" faults --state-dir "$EMU_DIR" --clear >/dev/null
[ -e "$T/dest.tpuctl-tmp" ] || fail "C14: no temp file during the download"
cmp -s "$T/dest" "$T/f" || fail "C14: the destination was touched"
# a rerun replaces the stale temp file
expect_rc 0 "$TPUCTL" data cp gs://e2e-df/f "$T/dest2"
expect_rc 0 "$TPUCTL" data cp gs://e2e-df/f "$T/dest"
[ ! -e "$T/dest.tpuctl-tmp" ] || fail "C14: stale temp left after a rerun"

# C13: ENOSPC on a 1 MiB tmpfs, in a private mount namespace
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
	skip "C13 needs root for unshare -m (not root, or no unshare)"
fi
mkdir -p "$T/small"
cat >"$T/c13.sh" <<S
set -u
mount -t tmpfs -o size=1m tmpfs "$T/small" || exit 99
"$TPUCTL" -v data cp gs://e2e-df/f "$T/small/out" >"$T/c13out" 2>&1
echo \$? >"$T/c13rc"
ls -A "$T/small" >"$T/c13ls"
S
unshare -m sh "$T/c13.sh" || true
[ -f "$T/c13rc" ] || {
	skip "C13: tmpfs mount not permitted here"
}
[ "$(cat "$T/c13rc")" = 1 ] || { cat "$T/c13out" >&2; fail "C13: exit $(cat "$T/c13rc")"; }
assert_grep 'No space left' "$T/c13out"
assert_no_grep 'retrying|resuming' "$T/c13out"
[ ! -s "$T/c13ls" ] || fail "C13: left $(cat "$T/c13ls")"
exit 0
