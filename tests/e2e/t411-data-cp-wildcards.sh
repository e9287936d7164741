#!/bin/sh
# Issue 20: gs:// wildcards in data cp sources, data ls and data du (with
# -s), as gsutil and gcloud storage read them: '*' within one part of the name, '**' across '/',
# '?' one character.  Several matches go into a directory (or prefix) by
# their last component; one match is copied like a single source; no
# match is exit 4; two matches that would land on one name are refused
# before anything is copied.
# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-411
mkdir -p "$T/src/d/e"
for f in big1.tar big22.tar big.txt small.tar d/big3.tar d/e/deep.json d/x.json; do
	printf '%s\n' "$f" >"$T/src/$f"
done
expect_rc 0 "$TPUCTL" -q data cp -r "$T/src" gs://e2e-411/

# '*': one part only (not d/big3.tar)
expect_rc 0 "$TPUCTL" data cp 'gs://e2e-411/src/big*.tar' "$T/o1/"
(cd "$T/o1" && find . -type f | sort) >"$T/l1"
printf './big1.tar\n./big22.tar\n' | cmp -s - "$T/l1" || fail "big*.tar: $(cat "$T/l1")"
cmp -s "$T/src/big22.tar" "$T/o1/big22.tar" || fail "big22.tar content"
assert_grep '^Copied 2 files ' "$T/err"

# '?': one character
expect_rc 0 "$TPUCTL" data cp 'gs://e2e-411/src/big?.tar' "$T/o2/"
(cd "$T/o2" && find . -type f | sort) >"$T/l2"
printf './big1.tar\n' | cmp -s - "$T/l2" || fail "big?.tar: $(cat "$T/l2")"

# '**': across '/', to a gs:// prefix
expect_rc 0 "$TPUCTL" data cp 'gs://e2e-411/src/d/**.json' gs://e2e-411/js/
expect_rc 0 "$TPUCTL" data ls gs://e2e-411/js/
sort "$T/out" >"$T/l3"
printf 'gs://e2e-411/js/deep.json\ngs://e2e-411/js/x.json\n' | cmp -s - "$T/l3" ||
    fail "**.json: $(cat "$T/l3")"

# one match: copied as a single source, to the file named
expect_rc 0 "$TPUCTL" data cp 'gs://e2e-411/src/sm*' "$T/one"
cmp -s "$T/src/small.tar" "$T/one" || fail "one match"

# several matches onto a file: refused, nothing copied
expect_rc 2 "$TPUCTL" data cp 'gs://e2e-411/src/big*.tar' "$T/file"
assert_grep "^tpuctl: gs://e2e-411/src/big\*\.tar matches 2 objects: the destination $T/file must be a directory or prefix \(end it with '/'\)$" "$T/err"
[ ! -e "$T/file" ] || fail "something was written"

# no match
expect_rc 4 "$TPUCTL" data cp 'gs://e2e-411/src/nope*' "$T/o4/"
assert_grep '^tpuctl: no objects match gs://e2e-411/src/nope\*$' "$T/err"

# two matches with one last component: refused before any copy
expect_rc 0 "$TPUCTL" -q data cp "$T/src/big1.tar" gs://e2e-411/src/d/big1.tar
expect_rc 2 "$TPUCTL" data cp 'gs://e2e-411/src/**big1.tar' "$T/o5/"
assert_grep 'would both be copied to big1.tar: use -r on their prefix$' "$T/err"
[ ! -e "$T/o5/big1.tar" ] || fail "a file was copied"

# data ls with wildcards: the objects matched, one listing
expect_rc 0 "$TPUCTL" data ls 'gs://e2e-411/src/big*.tar'
sort "$T/out" >"$T/l6"
printf 'gs://e2e-411/src/big1.tar\ngs://e2e-411/src/big22.tar\n' | cmp -s - "$T/l6" ||
    fail "ls big*.tar: $(cat "$T/l6")"
expect_rc 0 "$TPUCTL" data ls -l 'gs://e2e-411/src/**.json'
assert_grep 'gs://e2e-411/src/d/e/deep\.json$' "$T/out"
assert_grep 'gs://e2e-411/src/d/x\.json$' "$T/out"
assert_grep '^TOTAL: 2 objects, ' "$T/out"
expect_rc 4 "$TPUCTL" data ls 'gs://e2e-411/src/nope*'
assert_grep 'gs://e2e-411/src/nope\*: matched no objects$' "$T/err"

# data du: per object, -s per URL, wildcards, json, no match
expect_rc 0 "$TPUCTL" data du gs://e2e-411/src/d
tr -s " " <"$T/out" | sort -k2 >"$T/du"
printf '9 gs://e2e-411/src/d/big1.tar\n11 gs://e2e-411/src/d/big3.tar\n14 gs://e2e-411/src/d/e/deep.json\n9 gs://e2e-411/src/d/x.json\n' |
    cmp -s - "$T/du" || fail "du: $(cat "$T/du")"
expect_rc 0 "$TPUCTL" data du -s gs://e2e-411/src/d 'gs://e2e-411/src/big*.tar'
tr -s ' ' <"$T/out" >"$T/dus"
printf '43 gs://e2e-411/src/d\n19 gs://e2e-411/src/big*.tar\n' | cmp -s - "$T/dus" ||
    fail "du -s: $(cat "$T/dus")"
expect_rc 0 "$TPUCTL" data du -s --format json gs://e2e-411/src/d
[ "$(jq -c '.[0] | [.bytes, .objects]' "$T/out")" = "[43,4]" ] ||
    fail "du -s json: $(cat "$T/out")"
expect_rc 4 "$TPUCTL" data du gs://e2e-411/nothing-here
assert_grep '^tpuctl: gs://e2e-411/nothing-here: matched no objects$' "$T/err"
