#!/bin/sh
# t214: bad operands of "tpuctl data ls|rm|mb|stat|cat": exit 2 with one
# line naming the value, and no request reaches the emulator.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start

long=$(head -c 1025 /dev/zero | tr '\0' a)
nl='a
b'
# bad RC PATTERN ARGS...: exit RC, stderr matches PATTERN, nothing sent
bad() {
	rc=$1
	pat=$2
	shift 2
	before=$(emu_requests | wc -l)
	expect_rc "$rc" "$TPUCTL" data "$@"
	assert_grep "$pat" "$T/err"
	[ "$(emu_requests | wc -l)" -eq "$before" ] ||
	    fail "'data $*' sent a request"
}
bad 2 "invalid URL 'http://b/o'" ls http://b/o
bad 2 "invalid URL '/tmp/x'" cat /tmp/x
bad 2 'bucket' ls gs://UPPER-case
bad 2 'bucket' ls gs://ab
bad 2 'bucket' stat gs://googbucket/o
bad 2 'bucket' rm 'gs://a b/o'
bad 2 'expected gs://bucket/object' rm gs://e2e-bucket
bad 2 'expected gs://bucket/object' rm gs://e2e-bucket/dir/
bad 2 'expected gs://bucket/object' stat gs://e2e-bucket/
bad 2 'expected gs://bucket/object' cat gs://e2e-bucket
bad 2 'object' stat "gs://e2e-bucket/$long"
bad 2 'object' cat "gs://e2e-bucket/$nl"
bad 2 'object' rm 'gs://e2e-bucket/..'
bad 2 'no object name' mb gs://e2e-bucket/obj
bad 2 "invalid location 'us central'" mb --location 'us central' gs://e2e-bucket
bad 2 'bucket' mb gs://-bad-
# one bad operand among good ones: nothing is sent for any
bad 2 "invalid URL 'x'" rm gs://e2e-bucket/o1 x
bad 2 'missing operand' ls
bad 2 'missing operand' cat
bad 2 'unexpected operand' mb gs://e2e-a gs://e2e-b
bad 2 'unrecognized option|unknown option|invalid option' ls --bogus gs://e2e-bucket
bad 2 'unrecognized option|unknown option|invalid option' cat -l gs://e2e-bucket/o
# value errors are one line
expect_rc 2 "$TPUCTL" data stat gs://e2e-bucket/
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "value error not one line: $(cat "$T/err")"
exit 0
