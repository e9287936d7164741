#!/bin/sh
# t227: interop with Google's @google-cloud/storage client: objects that
# tpuctl uploads (multipart, resumable, parallel composite) are read back
# by the Node client with crc32c/md5 validation, and objects the Node
# client uploads (simple and resumable) are downloaded and verified by
# tpuctl (tests/interop/data.js).

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
sh "$SRCDIR/tests/interop/install.sh" || fail "npm install of the interop clients failed"
mkbucket e2e-io
mkdir -p "$T/a/sub" "$T/n/deep"
mkfile "$T/a/empty" 0
mkfile "$T/a/one" 1
mkfile "$T/a/sub/q" 262145
mkfile "$T/a/sub/res" 9000000
printf 'name\n' >"$T/a/sub/日本 a?b#c"
mkfile "$T/n/s" 5000
mkfile "$T/n/deep/r" 3000000

js() {
	EMU_ENV="$EMU_DIR/env" EMU_TOKEN_FILE="$EMU_DIR/access-token" \
	    GCS_TEST_PROJECT="$PROJECT" \
	    node "$SRCDIR/tests/interop/data.js" "$@" >"$T/jsout" 2>&1 || {
		cat "$T/jsout" >&2
		fail "data.js $* failed"
	}
}
expect_rc 0 "$TPUCTL" data cp -r "$T/a" gs://e2e-io/tp/
js check e2e-io tp/a/ "$T/a"
assert_grep '^ok check tp/a/sub/res 9000000' "$T/jsout"
js put e2e-io node/ "$T/n"
expect_rc 0 "$TPUCTL" data cp -r gs://e2e-io/node "$T/back"
diff -r "$T/n" "$T/back/node" >&2 || fail "Node uploads differ after tpuctl"
expect_rc 0 "$TPUCTL" data sync gs://e2e-io/node "$T/back/node"
exit 0
