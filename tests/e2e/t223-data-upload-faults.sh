#!/bin/sh
# t223: upload faults of RELIABILITY.md 4C: C1 (the server stores another
# crc32c: exit 6 and the object is deleted by generation), C6 (reset in
# the middle of a resumable chunk: query "bytes */N", resume from the
# Range), C7/C8 (the server kept fewer bytes: rewind), a 503 on a chunk,
# C11 (--no-clobber: ifGenerationMatch=0, 412 -> exit 4, object
# untouched), and a permanent 400 that is not retried.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-uf
mkfile "$T/small" 100000
mkfile "$T/big" 20000000
sums "$T/big"
BIGCRC=$CRC

# C1 multipart and resumable
emu_inject --path /upload/storage/v1/b/e2e-uf --count 1 gcs-rewrite-crc
expect_rc 6 "$TPUCTL" data cp "$T/small" gs://e2e-uf/c1
assert_grep 'crc32c mismatch' "$T/err"
req GET "$GCS/storage/v1/b/e2e-uf/o/c1"
want 404 "C1: the bad object was kept"
emu_inject --method PUT --path /upload/storage/v1/b/e2e-uf --count 3 gcs-rewrite-crc
expect_rc 6 "$TPUCTL" data cp "$T/big" gs://e2e-uf/c1big
req GET "$GCS/storage/v1/b/e2e-uf/o/c1big"
want 404 "C1: the bad resumable object was kept"
"$EMULATOR" faults --state-dir "$EMU_DIR" --clear >/dev/null

# C6: the connection is reset during a chunk
emu_inject --method PUT --path /upload/storage/v1/b/e2e-uf --count 1 reset-connection
expect_rc 0 "$TPUCTL" -v data cp "$T/big" gs://e2e-uf/c6
req GET "$GCS/storage/v1/b/e2e-uf/o/c6"
want 200 "C6 object"
[ "$(jf .crc32c)" = "$BIGCRC" ] || fail "C6 crc32c"
assert_grep 'querying the session' "$T/err"

# C6 again, the chunk cut after 3 MiB by a 503: whole 256 KiB units kept
emu_inject --method PUT --path /upload/storage/v1/b/e2e-uf --count 1 return-503-after-3072K
expect_rc 0 "$TPUCTL" data cp "$T/big" gs://e2e-uf/c6b
req GET "$GCS/download/storage/v1/b/e2e-uf/o/c6b?alt=media"
cmp -s "$T/body" "$T/big" || fail "C6b data"

# C8: the server keeps only 100 KiB of a chunk and says so: rewind
emu_inject --method PUT --path /upload/storage/v1/b/e2e-uf --count 1 gcs-drop-after-100K
expect_rc 0 "$TPUCTL" data cp "$T/big" gs://e2e-uf/c8
req GET "$GCS/download/storage/v1/b/e2e-uf/o/c8?alt=media"
cmp -s "$T/body" "$T/big" || fail "C8 data"

# C9: the session is gone (410) in the middle: a new session under
# --no-clobber (a generation precondition), else an error
emu_inject --method PUT --path /upload/storage/v1/b/e2e-uf --count 1 return-410
expect_rc 0 "$TPUCTL" -v data cp --no-clobber "$T/big" gs://e2e-uf/c9
assert_grep 'session is gone' "$T/err"
req GET "$GCS/download/storage/v1/b/e2e-uf/o/c9?alt=media"
cmp -s "$T/body" "$T/big" || fail "C9 data"
emu_inject --method PUT --path /upload/storage/v1/b/e2e-uf --count 1 return-410
set +e
"$TPUCTL" data cp "$T/big" gs://e2e-uf/c9b 2>"$T/err"
rc=$?
set -e
[ $rc != 0 ] || fail "C9 without a precondition succeeded"
req GET "$GCS/storage/v1/b/e2e-uf/o/c9b"
want 404 "C9: an object without a precondition"

# a 503 on the multipart request without a precondition is not retried
# (R1: not idempotent); with --no-clobber it is
emu_inject --method POST --path /upload/storage/v1/b/e2e-uf --count 1 return-503
expect_rc 5 "$TPUCTL" data cp "$T/small" gs://e2e-uf/r1
emu_inject --method POST --path /upload/storage/v1/b/e2e-uf --count 1 return-503
expect_rc 0 "$TPUCTL" data cp --no-clobber "$T/small" gs://e2e-uf/r2

# C11: --no-clobber over an existing object, multipart and resumable
expect_rc 4 "$TPUCTL" data cp --no-clobber "$T/big" gs://e2e-uf/r2
emu_requests | grep 'e2e-uf' | grep -q 'ifGenerationMatch=0' ||
    fail "no ifGenerationMatch=0 sent"
req GET "$GCS/download/storage/v1/b/e2e-uf/o/r2?alt=media"
cmp -s "$T/body" "$T/small" || fail "C11: the object changed"
expect_rc 4 "$TPUCTL" data cp --no-clobber "$T/small" gs://e2e-uf/c6
req GET "$GCS/storage/v1/b/e2e-uf/o/c6"
[ "$(jf .crc32c)" = "$BIGCRC" ] || fail "C11: the object changed"
# and on download: an existing file is not replaced
printf 'keep\n' >"$T/keep"
expect_rc 4 "$TPUCTL" data cp --no-clobber gs://e2e-uf/r2 "$T/keep"
[ "$(cat "$T/keep")" = keep ] || fail "C11: local file replaced"

# a permanent 400 is reported once, not retried
emu_inject --method POST --path /upload/storage/v1/b/e2e-uf --count 5 return-400
n0=$(emu_requests | grep -c 'uploadType=multipart' || true)
expect_rc 2 "$TPUCTL" data cp --no-clobber "$T/small" gs://e2e-uf/p400
n1=$(emu_requests | grep -c 'uploadType=multipart' || true)
[ $((n1 - n0)) = 1 ] || fail "400 was retried ($((n1 - n0)) requests)"
"$EMULATOR" faults --state-dir "$EMU_DIR" --clear >/dev/null
exit 0
