#!/bin/sh
# t220: "tpuctl data cp" round trips of objects of 0 B, 1 B, 256 KiB - 1,
# 256 KiB, 256 KiB + 1 (multipart), 8 MiB + 1 and 100 MiB (resumable,
# 64 MiB a request): the stored crc32c and md5 equal independently computed
# ones, downloads are byte-identical, and no temp file or tracker is left.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-cp
mkdir -p "$T/src" "$T/dst"
for n in 0 1 262143 262144 262145 8388609; do
	mkfile "$T/src/f$n" $n
	expect_rc 0 "$TPUCTL" data cp "$T/src/f$n" "gs://e2e-cp/sizes/f$n"
	sums "$T/src/f$n"
	req GET "$GCS/storage/v1/b/e2e-cp/o/$(uri "sizes/f$n")"
	want 200 "stat f$n"
	[ "$(jf .size)" = "$n" ] || fail "f$n: size $(jf .size)"
	[ "$(jf .crc32c)" = "$CRC" ] || fail "f$n: crc32c $(jf .crc32c), want $CRC"
	[ "$(jf .md5Hash)" = "$MD5" ] || fail "f$n: md5 $(jf .md5Hash), want $MD5"
	expect_rc 0 "$TPUCTL" data cp "gs://e2e-cp/sizes/f$n" "$T/dst/f$n"
	cmp -s "$T/src/f$n" "$T/dst/f$n" || fail "f$n: download differs"
	[ ! -e "$T/dst/f$n.tpuctl-tmp" ] || fail "f$n: temp file left"
done
# the small ones went as one multipart request, the big one resumable
emu_requests | grep -c 'uploadType=multipart' >"$T/n"
[ "$(cat "$T/n")" -ge 5 ] || fail "multipart uploads: $(cat "$T/n")"
emu_requests | grep -q 'uploadType=resumable' || fail "no resumable session"

# 100 MiB: 2 requests (64 MiB + 36 MiB), then a single-stream download
dd if=/dev/urandom of="$T/src/big" bs=1048576 count=100 2>/dev/null
start=$(date +%s)
puts() {
	emu_requests | jq -r 'select(.method == "PUT" and
	    (.path | startswith("/upload/storage/v1/b/e2e-cp/o"))) | .path' |
	    grep -c . || true
}
p0=$(puts)
expect_rc 0 "$TPUCTL" data cp "$T/src/big" gs://e2e-cp/big
[ "$(puts)" -eq $((p0 + 2)) ] ||
    fail "100 MiB went in $(($(puts) - p0)) PUTs, want 2 (64 MiB + 36 MiB)"
expect_rc 0 "$TPUCTL" data cp --parallel 1 gs://e2e-cp/big "$T/dst/big"
cmp -s "$T/src/big" "$T/dst/big" || fail "100 MiB download differs"
# and sliced (64 MiB and more, --parallel 4)
expect_rc 0 "$TPUCTL" data cp --parallel 4 gs://e2e-cp/big "$T/dst/big4"
cmp -s "$T/src/big" "$T/dst/big4" || fail "100 MiB sliced download differs"
echo "100 MiB up + 2 downloads: $(($(date +%s) - start)) s"
for f in "$T"/dst/*.tpuctl-tmp; do
	[ ! -e "$f" ] || fail "temp file left: $f"
done
[ -z "$(ls -A "$HOME/.cache/tpuctl/uploads" 2>/dev/null)" ] ||
    fail "tracker left after success"
# the download got the usual permissions, not 0600
[ "$(stat -c %a "$T/dst/big")" = "$(printf '%o' $((0666 & ~$(umask))))" ] ||
    fail "mode $(stat -c %a "$T/dst/big")"
# a single object onto a directory keeps its base name
mkdir -p "$T/d2"
expect_rc 0 "$TPUCTL" data cp gs://e2e-cp/sizes/f1 "$T/d2"
cmp -s "$T/src/f1" "$T/d2/f1" || fail "copy into a directory"
exit 0
