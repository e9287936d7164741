#!/bin/sh
# t221: names and trees: unicode and "a?b#c%2F" object names, nested
# prefixes, -r uploads and downloads of a tree, several sources into a
# prefix, gs:// to gs:// copies (rewrite), and the destination rules
# (trailing '/', existing directory).  Bad operands exit 2 before any
# request is sent.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-nm
mkbucket e2e-nm2
mkdir -p "$T/tree/a/b/c" "$T/tree/é" "$T/o"
printf 'top\n' >"$T/tree/top.txt"
printf 'deep\n' >"$T/tree/a/b/c/deep.bin"
printf 'mid\n' >"$T/tree/a/mid"
printf 'unicode\n' >"$T/tree/é/日本語.txt"
printf 'odd\n' >"$T/tree/a?b#c%2F"
: >"$T/tree/a/empty"

# odd single names
expect_rc 0 "$TPUCTL" data cp "$T/tree/a?b#c%2F" 'gs://e2e-nm/x/a?b#c%2F'
req GET "$GCS/storage/v1/b/e2e-nm/o/$(uri 'x/a?b#c%2F')"
want 200 "the odd name exists as written"
expect_rc 0 "$TPUCTL" data cp "$T/tree/é/日本語.txt" "gs://e2e-nm/ü/日本語.txt"
req GET "$GCS/storage/v1/b/e2e-nm/o/$(uri 'ü/日本語.txt')"
want 200 "the unicode name exists"
expect_rc 0 "$TPUCTL" data cp 'gs://e2e-nm/x/a?b#c%2F' "$T/o/odd"
cmp -s "$T/tree/a?b#c%2F" "$T/o/odd" || fail "odd name download"

# -r upload: the tree keeps its last component under the prefix
expect_rc 0 "$TPUCTL" data cp -r "$T/tree" gs://e2e-nm/up/
req GET "$GCS/storage/v1/b/e2e-nm/o?prefix=up/"
want 200 "list"
jf '.items[].name' | sort >"$T/names"
cat >"$T/want" <<'W'
up/tree/a/b/c/deep.bin
up/tree/a/empty
up/tree/a/mid
up/tree/a?b#c%2F
up/tree/top.txt
up/tree/é/日本語.txt
W
sort "$T/want" >"$T/want.s"
cmp -s "$T/names" "$T/want.s" || {
	diff "$T/want.s" "$T/names" >&2 || true
	fail "uploaded names"
}
# -r download of a nested prefix
expect_rc 0 "$TPUCTL" data cp -r gs://e2e-nm/up/tree/a "$T/o"
cmp -s "$T/tree/a/b/c/deep.bin" "$T/o/a/b/c/deep.bin" || fail "deep file"
cmp -s "$T/tree/a/empty" "$T/o/a/empty" || fail "empty file"
[ ! -e "$T/o/top.txt" ] || fail "a file outside the prefix came down"
# the whole tree back, compared with diff -r
expect_rc 0 "$TPUCTL" data cp -r gs://e2e-nm/up/tree "$T/back"
diff -r "$T/tree" "$T/back/tree" >&2 || fail "tree round trip differs"

# several sources into a prefix; gs -> gs
expect_rc 0 "$TPUCTL" data cp "$T/tree/top.txt" "$T/tree/a/mid" gs://e2e-nm/many
req GET "$GCS/storage/v1/b/e2e-nm/o/$(uri many/mid)"
want 200 "several sources go under the prefix"
expect_rc 0 "$TPUCTL" data cp gs://e2e-nm/many/mid gs://e2e-nm2/copied
req GET "$GCS/storage/v1/b/e2e-nm2/o/copied"
want 200 "gs to gs copy"
sums "$T/tree/a/mid"
[ "$(jf .crc32c)" = "$CRC" ] || fail "copy crc32c"
expect_rc 4 "$TPUCTL" data cp --no-clobber 'gs://e2e-nm/x/a?b#c%2F' gs://e2e-nm2/copied
req GET "$GCS/storage/v1/b/e2e-nm2/o/copied"
[ "$(jf .crc32c)" = "$CRC" ] || fail "--no-clobber copy replaced the object"
expect_rc 0 "$TPUCTL" data cp -r gs://e2e-nm/up/tree/a gs://e2e-nm2/tree2/
req GET "$GCS/storage/v1/b/e2e-nm2/o/$(uri tree2/a/b/c/deep.bin)"
want 200 "gs to gs -r copy"

# a name that would escape the destination is refused, nothing written
req POST "$GCS/upload/storage/v1/b/e2e-nm/o?uploadType=media&name=$(uri 'esc/../../evil')" \
    --data-binary x
want 200 "plant an escaping name"
expect_rc 2 "$TPUCTL" data cp -r gs://e2e-nm/esc "$T/safe"
if [ -e "$T/evil" ] || [ -e "$T/safe/evil" ]; then fail "escaped"; fi

# bad input: exit 2, no request
n0=$(emu_requests | wc -l)
expect_rc 2 "$TPUCTL" data cp "$T/tree" gs://e2e-nm/x
assert_grep 'is a directory: use -r' "$T/err"
expect_rc 2 "$TPUCTL" data cp "$T/tree/top.txt" gs://BAD_bucket/x
expect_rc 2 "$TPUCTL" data cp "$T/tree/top.txt" "$T/other"
assert_grep 'both local' "$T/err"
expect_rc 2 "$TPUCTL" data cp --parallel 0 "$T/tree/top.txt" gs://e2e-nm/x
assert_grep "invalid --parallel '0'" "$T/err"
expect_rc 2 "$TPUCTL" data cp --progress=bar "$T/tree/top.txt" gs://e2e-nm/x
assert_grep "invalid --progress 'bar'" "$T/err"
expect_rc 2 "$TPUCTL" data cp "$T/tree/top.txt"
expect_rc 2 "$TPUCTL" data cp --bogus a gs://e2e-nm/x
expect_rc 2 "$TPUCTL" data cp "$T/tree/top.txt" "gs://e2e-nm/$(printf 'a\nb')"
n1=$(emu_requests | wc -l)
[ "$n0" = "$n1" ] || fail "bad input sent $((n1 - n0)) requests"
# a missing object: 4
expect_rc 4 "$TPUCTL" data cp gs://e2e-nm/nope "$T/nope"
if [ -e "$T/nope" ] || [ -e "$T/nope.tpuctl-tmp" ]; then fail "nope left"; fi
exit 0
