#!/bin/sh
# t210: "tpuctl data ls" against the emulator: directories as prefixes,
# -l with sizes and a TOTAL line, -r, unicode and 'a?b#c%2F' names, 0 B
# and 1 B objects, paging (more objects than one page), --format json,
# -a (URL#GENERATION, with -l and --format json), and a URL matching
# nothing (exit 4).

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"

# put NAME SIZE: upload SIZE pseudo-random bytes as NAME (curl, not tpuctl)
put() {
	head -c "$2" /dev/urandom >"$T/obj"
	req POST "$GCS/upload/storage/v1/b/e2e-ls/o?uploadType=media&name=$(uri "$1")" \
	    -H 'Content-Type: application/octet-stream' --data-binary @"$T/obj"
	want 200 "upload $1"
}
mkbucket e2e-ls
put top0 0
put top1 1
put 'dir/a' 10
put 'dir/sub/b' 20
put 'dir/sub/deeper/c' 30
put 'ünï/çødé' 5
put 'q/a?b#c%2F' 7

expect_rc 0 "$TPUCTL" data ls gs://e2e-ls
cat >"$T/want" <<'X'
gs://e2e-ls/dir/
gs://e2e-ls/q/
gs://e2e-ls/ünï/
gs://e2e-ls/top0
gs://e2e-ls/top1
X
sort "$T/out" >"$T/got"
sort "$T/want" >"$T/want.s"
cmp -s "$T/got" "$T/want.s" || fail "ls bucket: $(cat "$T/out")"

# "dir" (no slash) lists the prefix dir/
expect_rc 0 "$TPUCTL" data ls gs://e2e-ls/dir
assert_grep '^gs://e2e-ls/dir/a$' "$T/out"
assert_grep '^gs://e2e-ls/dir/sub/$' "$T/out"
assert_no_grep 'deeper' "$T/out"

# an exact object name lists that object
expect_rc 0 "$TPUCTL" data ls gs://e2e-ls/top1
[ "$(cat "$T/out")" = "gs://e2e-ls/top1" ] || fail "ls object: $(cat "$T/out")"

# special and unicode names come back exactly
expect_rc 0 "$TPUCTL" data ls gs://e2e-ls/q/
[ "$(cat "$T/out")" = 'gs://e2e-ls/q/a?b#c%2F' ] || fail "ls q/: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" data ls 'gs://e2e-ls/ünï/'
[ "$(cat "$T/out")" = 'gs://e2e-ls/ünï/çødé' ] || fail "ls unicode: $(cat "$T/out")"

# -r: every object under dir, no prefixes
expect_rc 0 "$TPUCTL" data ls -r gs://e2e-ls/dir
[ "$(wc -l <"$T/out")" -eq 3 ] || fail "ls -r dir: $(cat "$T/out")"
assert_grep '^gs://e2e-ls/dir/sub/deeper/c$' "$T/out"
assert_no_grep '/$' "$T/out"
# "dir" never matches "dirx"
put dirx 1
expect_rc 0 "$TPUCTL" data ls -r gs://e2e-ls/dir
assert_no_grep dirx "$T/out"

# -l: size, time, URL and the TOTAL line
expect_rc 0 "$TPUCTL" data ls -l -r gs://e2e-ls/dir
assert_grep '^ +20  20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z  gs://e2e-ls/dir/sub/b$' "$T/out"
assert_grep '^TOTAL: 3 objects, 60 bytes \(60 B\)$' "$T/out"
expect_rc 0 "$TPUCTL" data ls -l gs://e2e-ls
assert_grep '^ *0  .* gs://e2e-ls/top0$' "$T/out"
assert_grep '^ *1  .* gs://e2e-ls/top1$' "$T/out"
assert_grep '^ *gs://e2e-ls/dir/$' "$T/out"
assert_grep '^TOTAL: 3 objects, 2 bytes \(2 B\)$' "$T/out"

# --format json: the API's object resources plus prefix records
expect_rc 0 "$TPUCTL" --format json data ls gs://e2e-ls/dir/
[ "$(jq -r '.[] | select(.kind == "storage#object") | .name' "$T/out")" = dir/a ] ||
    fail "json objects: $(cat "$T/out")"
[ "$(jq -r '.[] | select(.kind == "storage#object") | .size' "$T/out")" = 10 ] ||
    fail "json size"
[ "$(jq -r '.[] | select(.kind == "storage#prefix") | .prefix' "$T/out")" = dir/sub/ ] ||
    fail "json prefix: $(cat "$T/out")"

# paging: 25 objects with 10 per page = 3 list requests, all listed
i=0
while [ $i -lt 25 ]; do
	put "page/o$i" 1
	i=$((i + 1))
done
before=$(emu_requests | wc -l)
expect_rc 0 env TPUCTL_GCS_PAGE_SIZE=10 "$TPUCTL" data ls gs://e2e-ls/page/
[ "$(wc -l <"$T/out")" -eq 25 ] || fail "paged ls: $(wc -l <"$T/out") lines"
[ "$(sort -u "$T/out" | wc -l)" -eq 25 ] || fail "paged ls: duplicates"
n=$(emu_requests | tail -n +$((before + 1)) | grep -c 'pageToken=' || true)
[ "$n" -eq 2 ] || fail "paged ls: $n requests with a pageToken, want 2"

# -a: versions=true is sent, every object as gsutil's URL#GENERATION
# (the API's generation), -l adds metageneration=M, prefixes have no
# generation.  The emulator keeps no noncurrent generations (CAVEATS in
# tpuctl-emulator(1)): an overwritten object is listed once, with its new
# generation.
req GET "$GCS/storage/v1/b/e2e-ls/o/top1"
g0=$(jf .generation)
put top1 1
req GET "$GCS/storage/v1/b/e2e-ls/o/top1"
g1=$(jf .generation)
[ "$g1" != "$g0" ] || fail "overwrite kept generation $g0"
before=$(emu_requests | wc -l)
expect_rc 0 "$TPUCTL" data ls -a gs://e2e-ls/top1
[ "$(cat "$T/out")" = "gs://e2e-ls/top1#$g1" ] || fail "ls -a: $(cat "$T/out"), want #$g1"
emu_requests | tail -n +$((before + 1)) | grep -q 'versions=true' ||
    fail "ls -a sent no versions=true"
expect_rc 0 "$TPUCTL" data ls -a gs://e2e-ls
assert_grep '^gs://e2e-ls/dir/$' "$T/out"
assert_grep "^gs://e2e-ls/top0#[0-9]+\$" "$T/out"
assert_grep "^gs://e2e-ls/top1#$g1\$" "$T/out"
expect_rc 0 "$TPUCTL" data ls gs://e2e-ls/top1
assert_no_grep '#' "$T/out"
expect_rc 0 "$TPUCTL" data ls -la gs://e2e-ls/top1
assert_grep "^ +1  20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z  gs://e2e-ls/top1#$g1  metageneration=1\$" "$T/out"
assert_grep '^TOTAL: 1 object, 1 bytes \(1 B\)$' "$T/out"
expect_rc 0 "$TPUCTL" --format json data ls -a -r gs://e2e-ls/top1
[ "$(jq -r 'length' "$T/out")" = 1 ] || fail "json -a: $(cat "$T/out")"
[ "$(jq -r '.[0].generation' "$T/out")" = "$g1" ] || fail "json -a generation: $(cat "$T/out")"

# nothing matches: exit 4, one line
expect_rc 4 "$TPUCTL" data ls gs://e2e-ls/nothing-here
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "not-found: $(cat "$T/err")"
assert_grep 'gs://e2e-ls/nothing-here: matched no objects' "$T/err"
expect_rc 4 "$TPUCTL" data ls gs://no-such-bucket-e2e
exit 0
