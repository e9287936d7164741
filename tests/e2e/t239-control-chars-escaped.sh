#!/bin/sh
# t239: no raw control character of untrusted text reaches the terminal
# (issue 19 defect 12): error messages quoting an operand or an option
# value (operations describe, config get, --content-type), and the text
# output of data ls (-l), data stat and data rm for object names holding
# ESC, BEL or TAB, show them as \xNN, \t; --format json still
# carries the names byte for byte.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"

ESC=$(printf '\033')
BEL=$(printf '\007')
CR=$(printf '\r')
TAB=$(printf '\t')
# raw FILE: FILE holds ESC, BEL or CR (LF is each line's end)
raw() {
	grep -q "[$ESC$BEL$CR$TAB]" "$1"
}
# one_line FILE: exactly one line
one_line() {
	[ "$(wc -l <"$1")" -eq 1 ] || fail "not one line: $(cat -v "$1")"
}

expect_rc 2 "$TPUCTL" operations describe "op${ESC}]0;pwn${BEL}"
raw "$T/err" && fail "operations describe: raw control characters"
assert_grep "'op\\\\x1b\]0;pwn\\\\x07'" "$T/err"
one_line "$T/err"

expect_rc 2 "$TPUCTL" config get "core/${ESC}[31m"
raw "$T/err" && fail "config get: raw control characters"
assert_grep "'core/\\\\x1b\[31m'" "$T/err"
one_line "$T/err"

mkbucket e2e-cc
printf x >"$T/x"
expect_rc 2 "$TPUCTL" data cp --content-type "a${CR}
X: 1" "$T/x" gs://e2e-cc/x
raw "$T/err" && fail "--content-type: raw control characters"
assert_grep "'a\\\\r\\\\nX: 1'" "$T/err"
one_line "$T/err"

# an object name with ESC, BEL and TAB (GCS refuses CR and LF in names),
# put by another client
name="evil${ESC}[2J${BEL}x${TAB}y"
req POST "$GCS/upload/storage/v1/b/e2e-cc/o?uploadType=media&name=$(uri "$name")" \
    -H 'Content-Type: application/octet-stream' --data-binary @"$T/x"
want 200 "upload of the odd name"
want_shown='gs://e2e-cc/evil\\x1b\[2J\\x07x\\ty'

expect_rc 0 "$TPUCTL" data ls gs://e2e-cc
raw "$T/out" && fail "data ls: raw control characters"
assert_grep "^$want_shown\$" "$T/out"
one_line "$T/out"
expect_rc 0 "$TPUCTL" data ls -l gs://e2e-cc
raw "$T/out" && fail "data ls -l: raw control characters"
assert_grep "$want_shown\$" "$T/out"

# json is data: the name as it is
expect_rc 0 "$TPUCTL" --format json data ls gs://e2e-cc
[ "$(jq -r '.[0].name' "$T/out")" = "$name" ] ||
    fail "json name changed: $(cat "$T/out")"

expect_rc 0 "$TPUCTL" data stat "gs://e2e-cc/$name"
raw "$T/out" && fail "data stat: raw control characters"
assert_grep "^$want_shown:\$" "$T/out"

expect_rc 0 "$TPUCTL" data rm "gs://e2e-cc/$name"
raw "$T/err" && fail "data rm: raw control characters"
assert_grep "^Removing $want_shown\$" "$T/err"
exit 0
