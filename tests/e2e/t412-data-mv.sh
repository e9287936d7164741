#!/bin/sh
# Issue 20: "tpuctl data mv" as gsutil mv: a copy with cp's rules, then
# the sources removed once every copy succeeded (objects pinned to the
# generation copied, local files unlinked); a failed copy removes
# nothing; wildcards as for cp (with -r a matched directory moves whole);
# one closing "Moved" line, none with -q.
# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-412

# local -> gs: the local file goes
printf 'one\n' >"$T/a"
expect_rc 0 "$TPUCTL" data mv "$T/a" gs://e2e-412/a
assert_grep '^Moved 1 file \(4 B\) in ' "$T/err"
[ ! -e "$T/a" ] || fail "the local source is still there"
expect_rc 0 "$TPUCTL" data cat gs://e2e-412/a
[ "$(cat "$T/out")" = one ] || fail "content: $(cat "$T/out")"

# gs -> gs with a wildcard: sources deleted
printf 'x1\n' >"$T/x1"
printf 'x2\n' >"$T/x2"
expect_rc 0 "$TPUCTL" -q data cp "$T/x1" "$T/x2" gs://e2e-412/in/
expect_rc 0 "$TPUCTL" data mv 'gs://e2e-412/in/x*' gs://e2e-412/out/
assert_grep '^Moved 2 files ' "$T/err"
expect_rc 0 "$TPUCTL" data ls gs://e2e-412/out/
[ "$(wc -l <"$T/out")" -eq 2 ] || fail "out: $(cat "$T/out")"
expect_rc 4 "$TPUCTL" data ls gs://e2e-412/in/
assert_grep 'matched no objects' "$T/err"

# gs -> local, -q: nothing said
expect_rc 0 "$TPUCTL" -q data mv gs://e2e-412/out/x1 "$T/back"
[ ! -s "$T/err" ] || fail "-q: $(cat "$T/err")"
[ "$(cat "$T/back")" = x1 ] || fail "download"
expect_rc 4 "$TPUCTL" data stat gs://e2e-412/out/x1

# -r with a wildcard matching directories: each moved whole by its last
# component; what the pattern does not cover stays
mkdir -p "$T/runs/r1/sub" "$T/runs/r2"
for f in r1/a r1/sub/b r2/c r10.txt; do
	printf '%s\n' "$f" >"$T/runs/$f"
done
expect_rc 0 "$TPUCTL" -q data cp -r "$T/runs" gs://e2e-412/
expect_rc 0 "$TPUCTL" data mv -r 'gs://e2e-412/runs/r?' gs://e2e-412/arch/
assert_grep '^Moved 3 files ' "$T/err"
req GET "$GCS/storage/v1/b/e2e-412/o?prefix=arch/"
[ "$(jf '[.items[].name] | sort | join(" ")')" = "arch/r1/a arch/r1/sub/b arch/r2/c" ] ||
	fail "mv -r r?: $(cat "$T/body")"
req GET "$GCS/storage/v1/b/e2e-412/o?prefix=runs/"
[ "$(jf '[.items[].name] | join(" ")')" = "runs/r10.txt" ] ||
	fail "mv -r r? left: $(cat "$T/body")"

# a failed copy (--no-clobber onto an existing object) removes nothing
printf 'two\n' >"$T/b"
expect_rc 4 "$TPUCTL" data mv --no-clobber "$T/b" gs://e2e-412/a
assert_grep 'exists: not overwritten \(--no-clobber\)$' "$T/err"
[ -e "$T/b" ] || fail "the source went after a failed copy"
expect_rc 0 "$TPUCTL" data cat gs://e2e-412/a
[ "$(cat "$T/out")" = one ] || fail "the object was replaced"

# the source changed after the copy (its delete gets 412): kept, named
emu_inject --method DELETE --path /storage/v1/b/e2e-412/o/ --count 1 return-412
expect_rc 4 "$TPUCTL" data mv gs://e2e-412/out/x2 gs://e2e-412/moved
assert_grep '^tpuctl: gs://e2e-412/out/x2 changed after it was copied: kept$' "$T/err"
assert_no_grep '^Moved' "$T/err"
expect_rc 0 "$TPUCTL" data stat gs://e2e-412/out/x2
