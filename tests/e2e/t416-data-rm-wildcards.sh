#!/bin/sh
# Issue 20: "data rm" with gs:// wildcards, as gsutil: '*' and '?' within
# one part of the name, '**' across '/'.  Without -r a pattern matches
# objects only; with -r also "directories" (prefixes), deleting what is
# under them.  A pattern matching nothing is "no URLs matched" (exit 4),
# refused before anything is deleted; every delete is pinned to the
# listed generation (with -a, every version by its generation).
# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-416
put() {
	req POST "$GCS/upload/storage/v1/b/e2e-416/o?uploadType=media&name=$(uri "$1")" \
	    -H 'Content-Type: application/octet-stream' --data-binary x
	want 200 "upload $1"
}
names() {
	req GET "$GCS/storage/v1/b/e2e-416/o"
	jf '[.items[]?.name] | sort | join(" ")'
}
for o in run1/a run1/b/c run2/x run10 keep/run1 r.json s.json t.txt; do
	put "$o"
done

# '*' without -r: the objects of one part, each Removing line
before=$(emu_requests | wc -l)
expect_rc 0 "$TPUCTL" data rm 'gs://e2e-416/*.json'
assert_grep '^Removing gs://e2e-416/r\.json$' "$T/err"
assert_grep '^Removing gs://e2e-416/s\.json$' "$T/err"
n=$(emu_requests | tail -n +$((before + 1)) | grep '"DELETE"' |
    grep -c 'ifGenerationMatch=' || true)
[ "$n" -eq 2 ] || fail "*.json: $n deletes pinned to a generation, want 2"
[ "$(names)" = "keep/run1 run1/a run1/b/c run10 run2/x t.txt" ] ||
    fail "after *.json: $(names)"

# no match (run? names prefixes only, without -r): refused, and the
# literal URL beside it is not deleted either
before=$(emu_requests | wc -l)
expect_rc 4 "$TPUCTL" data rm gs://e2e-416/t.txt 'gs://e2e-416/run?' 'gs://e2e-416/no*'
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "no match: $(cat "$T/err")"
assert_grep '^tpuctl: no URLs matched: gs://e2e-416/run\?, gs://e2e-416/no\*$' "$T/err"
[ "$(emu_requests | tail -n +$((before + 1)) | grep -c '"DELETE"')" -eq 0 ] ||
    fail "no match deleted something"

# -r: run1 and run2 with everything under them; run10 (two characters)
# and keep/run1 (another part) stay
expect_rc 0 "$TPUCTL" -q data rm -r 'gs://e2e-416/run?'
[ ! -s "$T/err" ] || fail "-q rm -r printed: $(cat "$T/err")"
[ "$(names)" = "keep/run1 run10 t.txt" ] || fail "after -r run?: $(names)"

# -a with a pattern: every version listed, each deleted by generation
put v1.bin
put v2.bin
before=$(emu_requests | wc -l)
expect_rc 0 "$TPUCTL" data rm -a 'gs://e2e-416/v?.bin'
emu_requests | tail -n +$((before + 1)) | grep '"GET".*versions=true' >/dev/null ||
    fail "rm -a with a pattern listed no versions"
[ "$(emu_requests | tail -n +$((before + 1)) | grep '"DELETE"' | grep -c 'generation=[1-9]')" = 2 ] ||
    fail "rm -a with a pattern: DELETEs not by generation"
assert_grep '^Removing gs://e2e-416/v1\.bin#[0-9]+$' "$T/err"
[ "$(names)" = "keep/run1 run10 t.txt" ] || fail "after -a v?.bin: $(names)"

# '**' across '/', without -r: every object; then an empty match
expect_rc 0 "$TPUCTL" -q data rm 'gs://e2e-416/**'
[ "$(names)" = "" ] || fail "after **: $(names)"
expect_rc 4 "$TPUCTL" data rm -r 'gs://e2e-416/**'
assert_grep '^tpuctl: no URLs matched: gs://e2e-416/\*\*$' "$T/err"
req GET "$GCS/storage/v1/b/e2e-416"
want 200 "rm -r ** kept the bucket"
