#!/bin/sh
# t213: "tpuctl data cat": byte-exact output for 0 B, 1 B, special names
# and 2 MiB; several operands concatenated; RELIABILITY.md 4C rows for
# streamed reads: a corrupt byte (C3) is exit 6 with a message, a broken
# stream (C4) resumes with Range on the same generation, a 503 is
# retried; a closed output pipe ends quietly; a missing object is exit 4.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"

put() {
	req POST "$GCS/upload/storage/v1/b/e2e-cat/o?uploadType=media&name=$(uri "$1")" \
	    -H 'Content-Type: application/octet-stream' --data-binary @"$2"
	want 200 "upload $1"
}
mkbucket e2e-cat
: >"$T/zero"
printf 'Z' >"$T/one"
head -c 2097152 /dev/urandom >"$T/big"
put zero "$T/zero"
put 'a?b#c%2F' "$T/one"
put 'ünï/big' "$T/big"

expect_rc 0 "$TPUCTL" data cat gs://e2e-cat/zero
[ ! -s "$T/out" ] || fail "0 B cat printed bytes"
expect_rc 0 "$TPUCTL" data cat 'gs://e2e-cat/a?b#c%2F'
[ "$(cat "$T/out")" = Z ] || fail "1 B cat: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" data cat 'gs://e2e-cat/ünï/big'
cmp -s "$T/out" "$T/big" || fail "2 MiB cat differs"
expect_rc 0 "$TPUCTL" data cat 'gs://e2e-cat/a?b#c%2F' 'gs://e2e-cat/a?b#c%2F'
[ "$(cat "$T/out")" = ZZ ] || fail "two operands: $(cat "$T/out")"
# the media request is pinned to the generation read first
emu_requests | grep 'alt=media' | grep -q 'generation=[1-9]' ||
    fail "media GET without generation"

MEDIA="/storage/v1/b/e2e-cat/o/$(uri 'ünï/big')?alt=media"
# C3: a corrupt byte is detected at the end: exit 6
emu_inject --method GET --path "$MEDIA" --count 1 corrupt-byte-100
expect_rc 6 "$TPUCTL" data cat 'gs://e2e-cat/ünï/big'
assert_grep 'crc32c mismatch' "$T/err"

# C4: a broken stream resumes with Range from where it stopped
emu_inject --method GET --path "$MEDIA" --count 1 broken-stream-after-1024K
expect_rc 0 "$TPUCTL" data cat 'gs://e2e-cat/ünï/big'
cmp -s "$T/out" "$T/big" || fail "resumed cat differs"
[ "$(emu_requests | grep -c '"Range": *"bytes=[1-9]' || true)" -ge 1 ] ||
    emu_requests | grep -qi 'range.*bytes=[1-9]' ||
    fail "no Range request after the broken stream"

# a 503 on the media GET is retried
emu_inject --method GET --path "$MEDIA" --count 2 return-503
expect_rc 0 "$TPUCTL" data cat 'gs://e2e-cat/ünï/big'
cmp -s "$T/out" "$T/big" || fail "cat after 503 differs"

# a closed pipe: quiet, like any filter (no error message)
set +e
"$TPUCTL" data cat 'gs://e2e-cat/ünï/big' 2>"$T/perr" | head -c 10 >/dev/null
set -e
[ ! -s "$T/perr" ] || fail "closed pipe printed: $(cat "$T/perr")"

expect_rc 4 "$TPUCTL" data cat gs://e2e-cat/missing
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "cat missing: $(cat "$T/err")"
assert_grep 'gs://e2e-cat/missing: not found' "$T/err"
exit 0
