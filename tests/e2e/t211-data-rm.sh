#!/bin/sh
# t211: "tpuctl data rm": one object, special names, a missing object
# (exit 4, one line), -r over a prefix with many objects (parallel
# deletes pinned to the listed generation), "dir" never removing "dirx",
# --dry-run deleting nothing, -a deleting every version by generation
# (with -r under a prefix, without it one object), and -r of a bare
# bucket (gs://b, gs://b/) deleting the objects, every version, and then
# the bucket, only when every object
# deletion succeeded (partial: exit 8, bucket kept), gs://b/** keeping
# the bucket, and "rm gs://b" without -r refused.

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

# -a: every version, each by its generation; without -r the one object
# (not "dirx2", which only starts with its name)
put dirv/a 1
put dirv/b 2
put dirx2 3
put dirx3 4
before=$(emu_requests | wc -l)
expect_rc 0 "$TPUCTL" data rm -r -a gs://e2e-rm/dirv
emu_requests | tail -n +$((before + 1)) | grep '"GET".*versions=true' >/dev/null ||
    fail "rm -ra listed no versions"
[ "$(emu_requests | tail -n +$((before + 1)) | grep '"DELETE"' | grep -c 'generation=[1-9]')" = 2 ] ||
    fail "rm -ra: DELETEs not by generation"
assert_grep '^Removing gs://e2e-rm/dirv/a#[0-9]+$' "$T/err"
expect_rc 0 "$TPUCTL" data rm -a gs://e2e-rm/dirx2
exists dirx2 && fail "rm -a left dirx2"
exists dirx3 || fail "rm -a gs://e2e-rm/dirx2 deleted dirx3"
assert_grep '^Removing gs://e2e-rm/dirx2#[0-9]+$' "$T/err"
expect_rc 4 "$TPUCTL" data rm -a gs://e2e-rm/dirx2
assert_grep 'gs://e2e-rm/dirx2: not found' "$T/err"
expect_rc 2 "$TPUCTL" data rm -a gs://e2e-rm
expect_rc 0 "$TPUCTL" data rm gs://e2e-rm/dirx3

# -r of a prefix matching nothing: exit 4
expect_rc 4 "$TPUCTL" data rm -r gs://e2e-rm/dir/
assert_grep 'matched no objects' "$T/err"

# a bare bucket without -r: refused in one line, nothing sent
for u in gs://e2e-rm gs://e2e-rm/; do
	before=$(emu_requests | wc -l)
	expect_rc 2 "$TPUCTL" data rm "$u"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "rm $u: $(cat "$T/err")"
	assert_grep "invalid URL '$u': expected gs://bucket/object; 'data rm -r gs://e2e-rm' deletes the bucket" "$T/err"
	[ "$(emu_requests | wc -l)" -eq "$before" ] || fail "rm $u sent requests"
done
exists keep || fail "rm gs://e2e-rm deleted"

# -r gs://b/**: every object, the bucket kept
put 'a/b' 1
put 'c' 2
expect_rc 0 "$TPUCTL" data rm -r 'gs://e2e-rm/**'
req GET "$GCS/storage/v1/b/e2e-rm/o"
[ "$(jf '.items | length')" = 0 ] || fail "bucket not empty: $(cat "$T/body")"
req GET "$GCS/storage/v1/b/e2e-rm"
want 200 "** kept the bucket"

# -r gs://b: the objects, then the bucket, only after every object
put 'x/1' 1
put 'x/2' 2
put 'y' 3
before=$(emu_requests | wc -l)
expect_rc 0 "$TPUCTL" --dry-run data rm -r gs://e2e-rm
exists y || fail "--dry-run rm -r deleted"
req GET "$GCS/storage/v1/b/e2e-rm"
want 200 "--dry-run kept the bucket"
[ "$(emu_requests | tail -n +$((before + 1)) | grep -c '"DELETE"' || true)" = 0 ] ||
    fail "--dry-run sent a DELETE"
before=$(emu_requests | wc -l)
expect_rc 0 "$TPUCTL" data rm -r gs://e2e-rm
req GET "$GCS/storage/v1/b/e2e-rm"
want 404 "rm -r gs://e2e-rm kept the bucket"
# every version goes (versions=true, DELETE ?generation=N), or Cloud
# Storage would keep a bucket holding noncurrent ones
assert_grep '^Removing gs://e2e-rm/y#[0-9]+$' "$T/err"
[ "$(tail -1 "$T/err")" = 'Removing gs://e2e-rm/' ] || fail "no bucket line last: $(cat "$T/err")"
emu_requests | tail -n +$((before + 1)) | grep -q '"GET".*versions=true' ||
    fail "rm -r gs://e2e-rm listed no versions"
emu_requests | tail -n +$((before + 1)) | grep '"DELETE"' >"$T/dels"
[ "$(wc -l <"$T/dels")" = 4 ] || fail "want 3 object DELETEs and 1 bucket DELETE: $(cat "$T/dels")"
[ "$(grep -c 'generation=[1-9]' "$T/dels")" = 3 ] ||
    fail "object DELETEs not by generation: $(cat "$T/dels")"
tail -1 "$T/dels" | grep -q '"path":"/storage/v1/b/e2e-rm"' ||
    fail "the bucket DELETE is not the last one: $(cat "$T/dels")"

# an empty bucket, with a trailing slash
mkbucket e2e-rm2
expect_rc 0 "$TPUCTL" data rm -r gs://e2e-rm2/
req GET "$GCS/storage/v1/b/e2e-rm2"
want 404 "rm -r gs://e2e-rm2/ kept the empty bucket"

# partial: one object cannot be deleted (403): exit 8, the others are
# gone, that object and the bucket are kept
mkbucket e2e-rm3
for o in p1 p2 p3; do
	req POST "$GCS/upload/storage/v1/b/e2e-rm3/o?uploadType=media&name=$o" --data-binary "$o"
	want 200 "upload $o"
done
emu_inject --method DELETE --path /storage/v1/b/e2e-rm3/o/p2 --count 1 return-403
before=$(emu_requests | wc -l)
expect_rc 8 "$TPUCTL" data rm -r gs://e2e-rm3
assert_grep '1 of 3 objects under gs://e2e-rm3/ not removed, bucket kept' "$T/err"
req GET "$GCS/storage/v1/b/e2e-rm3/o"
[ "$(jf '[.items[]?.name] | join(",")')" = p2 ] || fail "partial left: $(cat "$T/body")"
req GET "$GCS/storage/v1/b/e2e-rm3"
want 200 "partial: bucket kept"
emu_requests | tail -n +$((before + 1)) | grep -q '"DELETE","path":"/storage/v1/b/e2e-rm3"' &&
    fail "partial: the bucket DELETE was sent"
# every object failing keeps the error's own status (403: exit 3)
emu_inject --method DELETE --path /storage/v1/b/e2e-rm3/o/p2 --count 1 return-403
expect_rc 3 "$TPUCTL" data rm -r gs://e2e-rm3
req GET "$GCS/storage/v1/b/e2e-rm3"
want 200 "403: bucket kept"
# the bucket DELETE failing (409, as when a writer added an object):
# exit 4, named
expect_rc 0 "$TPUCTL" data rm gs://e2e-rm3/p2
emu_inject --method DELETE --path /storage/v1/b/e2e-rm3 --count 1 return-409
expect_rc 4 "$TPUCTL" data rm -r gs://e2e-rm3
assert_grep '^tpuctl: gs://e2e-rm3: bucket not removed' "$T/err"
req GET "$GCS/storage/v1/b/e2e-rm3"
want 200 "409: bucket kept"
"$EMULATOR" faults --state-dir "$EMU_DIR" --clear >/dev/null
exit 0
