#!/bin/sh
# Issue 20: a wildcard that matches "directories" (prefixes), as gcloud
# storage cp -r reads it: with -r each matched directory is copied
# recursively by its last component (without -r only objects match);
# data sync from a wildcard source syncs what it matches, under the
# pattern's literal parent, and --delete removes only local files the
# pattern covers; a wildcard destination of sync is refused.
# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-417
mkdir -p "$T/src/runs/r1/sub" "$T/src/runs/r2" "$T/src/runs/r10" "$T/src/other"
for f in runs/r1/a runs/r1/sub/b runs/r2/c runs/r10/d runs/r3.txt other/x; do
	printf '%s\n' "$f" >"$T/src/$f"
done
expect_rc 0 "$TPUCTL" -q data cp -r "$T/src/runs" "$T/src/other" gs://e2e-417/
files() {
	(cd "$1" && find . -type f | sort | tr '\n' ' ')
}

# without -r only objects match: r? names prefixes only
expect_rc 4 "$TPUCTL" data cp 'gs://e2e-417/runs/r?' "$T/o0/"
assert_grep '^tpuctl: no objects match gs://e2e-417/runs/r\?$' "$T/err"

# -r: the matched directories, recursively, by their last component
expect_rc 0 "$TPUCTL" data cp -r 'gs://e2e-417/runs/r?' "$T/o1"
[ "$(files "$T/o1")" = "./r1/a ./r1/sub/b ./r2/c " ] || fail "cp -r r?: $(files "$T/o1")"
cmp -s "$T/src/runs/r1/sub/b" "$T/o1/r1/sub/b" || fail "r1/sub/b content"
assert_grep '^Copied 3 files ' "$T/err"

# -r with '*': directories and an object beside them
expect_rc 0 "$TPUCTL" -q data cp -r 'gs://e2e-417/runs/r*' "$T/o2"
[ "$(files "$T/o2")" = "./r1/a ./r1/sub/b ./r10/d ./r2/c ./r3.txt " ] ||
    fail "cp -r r*: $(files "$T/o2")"

# -r to a gs:// prefix
expect_rc 0 "$TPUCTL" -q data cp -r 'gs://e2e-417/runs/r?' gs://e2e-417/copy/
req GET "$GCS/storage/v1/b/e2e-417/o?prefix=copy/"
[ "$(jf '[.items[].name] | sort | join(" ")')" = "copy/r1/a copy/r1/sub/b copy/r2/c" ] ||
    fail "cp -r to gs://: $(cat "$T/body")"

# sync from a wildcard: names under runs/, what r? matches
expect_rc 0 "$TPUCTL" data sync 'gs://e2e-417/runs/r?' "$T/s"
[ "$(files "$T/s")" = "./r1/a ./r1/sub/b ./r2/c " ] || fail "sync r?: $(files "$T/s")"
assert_grep '^Copied 3 files ' "$T/err"
# --delete: r1/extra is covered by r?, keep.txt and r10/y are not
echo extra >"$T/s/r1/extra"
echo keep >"$T/s/keep.txt"
mkdir "$T/s/r10" && echo y >"$T/s/r10/y"
expect_rc 0 "$TPUCTL" -q data sync --delete 'gs://e2e-417/runs/r?' "$T/s"
[ "$(files "$T/s")" = "./keep.txt ./r1/a ./r1/sub/b ./r10/y ./r2/c " ] ||
    fail "sync --delete r?: $(files "$T/s")"

# a wildcard destination of sync: refused
expect_rc 2 "$TPUCTL" data sync "$T/src/runs" 'gs://e2e-417/runs/r*'
assert_grep '^tpuctl: gs://e2e-417/runs/r\*: wildcards are not allowed in a sync destination$' "$T/err"
