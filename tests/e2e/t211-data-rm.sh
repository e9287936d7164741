#!/bin/sh
# t211: "tpuctl data rm": one object, special names, a missing object
# (exit 4, one line), -r over a prefix with many objects (parallel
# deletes pinned to the listed generation), "dir" never removing "dirx",
# and --dry-run deleting nothing.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"

put() {
	req POST "$GCS/upload/storage/v1/b/e2e-rm/o?uploadType=media&name=$(uri "$1")" \
	    -H 'Content-Type: application/octet-stream' --data-binary "$2"
	want 200 "upload $1"
}
exists() {
	req GET "$GCS/storage/v1/b/e2e-rm/o/$(uri "$1")"
	[ "$ST" = 200 ]
}
mkbucket e2e-rm
put 'q/a?b#c%2F' x
put 'ünï/çødé' y
put keep z

expect_rc 0 "$TPUCTL" data rm 'gs://e2e-rm/q/a?b#c%2F' 'gs://e2e-rm/ünï/çødé'
! exists 'q/a?b#c%2F' || fail "a?b#c%2F not deleted"
! exists 'ünï/çødé' || fail "unicode object not deleted"
exists keep || fail "keep was deleted"
assert_grep '^Removing gs://e2e-rm/q/a\?b#c%2F$' "$T/err"

# missing: exit 4 with one line naming it
expect_rc 4 "$TPUCTL" data rm gs://e2e-rm/nope
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "rm missing: $(cat "$T/err")"
assert_grep '^tpuctl: .*gs://e2e-rm/nope: not found' "$T/err"

# --dry-run sends no DELETE
expect_rc 0 "$TPUCTL" --dry-run data rm gs://e2e-rm/keep
exists keep || fail "--dry-run deleted"

# -r: 40 objects in nested prefixes, in parallel, dirx kept
i=0
while [ $i -lt 40 ]; do
	put "dir/s$((i % 3))/o$i" "$i"
	i=$((i + 1))
done
put dirx 1
put dir 2
before=$(emu_requests | wc -l)
expect_rc 0 "$TPUCTL" --quiet data rm -r gs://e2e-rm/dir
[ ! -s "$T/err" ] || fail "--quiet rm -r printed: $(cat "$T/err")"
n=$(emu_requests | tail -n +$((before + 1)) | grep '"DELETE"' |
    grep -c 'ifGenerationMatch=' || true)
[ "$n" -eq 41 ] || fail "rm -r: $n deletes with ifGenerationMatch, want 41"
req GET "$GCS/storage/v1/b/e2e-rm/o?prefix=dir"
[ "$(jf '[.items[]?.name] | join(",")')" = dirx ] || fail "left: $(cat "$T/body")"

# -r of a prefix matching nothing: exit 4
expect_rc 4 "$TPUCTL" data rm -r gs://e2e-rm/dir/
assert_grep 'matched no objects' "$T/err"

# -r of a whole bucket empties it but keeps the bucket
expect_rc 0 "$TPUCTL" data rm -r gs://e2e-rm
req GET "$GCS/storage/v1/b/e2e-rm/o"
[ "$(jf '.items | length')" = 0 ] || fail "bucket not empty: $(cat "$T/body")"
req GET "$GCS/storage/v1/b/e2e-rm"
want 200 "bucket kept"
exit 0
