#!/bin/sh
# t222: "tpuctl data sync" both ways: the first run copies everything, a
# second run sends nothing (size + crc32c match), a changed file of the
# same size is sent again, --delete mirrors (objects and local files), and
# the global --dry-run prints the plan without changing anything.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-sy
mkdir -p "$T/l/sub/deeper"
i=0
while [ $i -lt 20 ]; do
	printf 'file %s\n' $i >"$T/l/f$i"
	i=$((i + 1))
done
printf 'x\n' >"$T/l/sub/deeper/x"
mkfile "$T/l/sub/big" 9000000

uploads() {
	emu_requests | grep -c '/upload/storage/v1/b/e2e-sy' || true
}
expect_rc 0 "$TPUCTL" data sync "$T/l" gs://e2e-sy/m
[ "$(uploads)" -ge 22 ] || fail "first sync: $(uploads) uploads"
req GET "$GCS/storage/v1/b/e2e-sy/o?prefix=m/"
[ "$(jf '.items | length')" = 22 ] || fail "objects after the first sync"
u0=$(uploads)
expect_rc 0 "$TPUCTL" data sync "$T/l" gs://e2e-sy/m
[ "$(uploads)" = "$u0" ] || fail "an unchanged tree was sent again"
# same size, other content: sent again
printf 'file X\n' >"$T/l/f3"
expect_rc 0 "$TPUCTL" data sync "$T/l" gs://e2e-sy/m/
[ "$(uploads)" = $((u0 + 1)) ] || fail "changed file: $(($(uploads) - u0)) uploads"

# --delete: an extra object goes, by exact generation
req POST "$GCS/upload/storage/v1/b/e2e-sy/o?uploadType=media&name=m/extra" \
    --data-binary x
want 200 "extra object"
expect_rc 0 "$TPUCTL" --dry-run data sync --delete "$T/l" gs://e2e-sy/m
assert_grep '^delete gs://e2e-sy/m/extra$' "$T/out"
req GET "$GCS/storage/v1/b/e2e-sy/o/$(uri m/extra)"
want 200 "--dry-run deleted the object"
expect_rc 0 "$TPUCTL" data sync "$T/l" gs://e2e-sy/m
req GET "$GCS/storage/v1/b/e2e-sy/o/$(uri m/extra)"
want 200 "sync without --delete deleted"
expect_rc 0 "$TPUCTL" data sync --delete "$T/l" gs://e2e-sy/m
req GET "$GCS/storage/v1/b/e2e-sy/o/$(uri m/extra)"
want 404 "--delete kept the extra object"

# the reverse: into an empty directory, then nothing, then --delete
expect_rc 0 "$TPUCTL" data sync gs://e2e-sy/m "$T/r"
diff -r "$T/l" "$T/r" >&2 || fail "download sync differs"
g0=$(emu_requests | grep -c 'alt=media' || true)
expect_rc 0 "$TPUCTL" data sync gs://e2e-sy/m "$T/r"
[ "$(emu_requests | grep -c 'alt=media' || true)" = "$g0" ] ||
    fail "unchanged files were downloaded again"
printf 'local only\n' >"$T/r/sub/only"
expect_rc 0 "$TPUCTL" data sync gs://e2e-sy/m "$T/r"
[ -e "$T/r/sub/only" ] || fail "removed without --delete"
expect_rc 0 "$TPUCTL" --dry-run data sync --delete gs://e2e-sy/m "$T/r"
assert_grep "^delete $T/r/sub/only\$" "$T/out"
[ -e "$T/r/sub/only" ] || fail "--dry-run removed a file"
expect_rc 0 "$TPUCTL" data sync --delete gs://e2e-sy/m "$T/r"
[ ! -e "$T/r/sub/only" ] || fail "--delete kept a local file"
diff -r "$T/l" "$T/r" >&2 || fail "mirror differs"

# bad operands
expect_rc 2 "$TPUCTL" data sync "$T/l" "$T/r"
assert_grep 'one local directory and one gs:// URL' "$T/err"
expect_rc 2 "$TPUCTL" data sync "$T/l/f1" gs://e2e-sy/m
expect_rc 2 "$TPUCTL" data sync --no-clobber "$T/l" gs://e2e-sy/m
exit 0
