#!/bin/sh
# t161: Media uploads of 0 B, 1 B, 256 KiB - 1, 256 KiB, 256 KiB + 1 and 3 MiB:
# size, crc32c and md5 of the resource match an independent computation,
# downloads through /download and ?alt=media are byte-identical and carry
# the headers the official clients validate; X-Goog-Hash is checked.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-media
for size in 0 1 262143 262144 262145 3145735; do
	f="$T/f$size"
	mkfile "$f" "$size"
	sums "$f"
	crc=$CRC
	md5=$MD5
	req POST "$GCS/upload/storage/v1/b/e2e-media/o?uploadType=media&name=obj-$size" \
	    -H 'Content-Type: application/x-test' --data-binary "@$f"
	want 200 "upload $size"
	[ "$(jf .kind)" = storage#object ] || fail "kind $(jf .kind)"
	[ "$(jf .size)" = "$size" ] || fail "size $(jf .size), want $size"
	[ "$(jf .crc32c)" = "$crc" ] || fail "$size: crc32c $(jf .crc32c), want $crc"
	[ "$(jf .md5Hash)" = "$md5" ] || fail "$size: md5 $(jf .md5Hash), want $md5"
	[ "$(jf .contentType)" = application/x-test ] || fail "contentType"
	[ "$(jf .metageneration)" = 1 ] || fail "metageneration"
	[ "$(jf .bucket)" = e2e-media ] || fail "bucket"
	[ "$(jf .name)" = "obj-$size" ] || fail "name"
	[ "$(jf .storageClass)" = STANDARD ] || fail "storageClass"
	[ "$(jf '.size|type')" = string ] || fail "size is not a string"
	gen=$(jf .generation)
	echo "$gen" | grep -Eq '^[0-9]{16}$' || fail "generation $gen"
	[ "$(jf .id)" = "e2e-media/obj-$size/$gen" ] || fail "id $(jf .id)"
	jf .mediaLink | grep -q "/download/storage/v1/b/e2e-media/o/obj-$size?generation=$gen&alt=media" ||
	    fail "mediaLink $(jf .mediaLink)"
	jf .etag | grep -Eq '^C[A-Za-z0-9+/]+=*$' || fail "etag $(jf .etag)"
	for u in "$GCS/download/storage/v1/b/e2e-media/o/obj-$size?alt=media" \
	    "$GCS/storage/v1/b/e2e-media/o/obj-$size?alt=media" \
	    "$GCS/b/e2e-media/o/obj-$size?alt=media"; do
		req GET "$u"
		want 200 "download $u"
		cmp -s "$T/body" "$f" || fail "download $size differs"
		[ "$(hdr x-goog-hash)" = "crc32c=$crc,md5=$md5" ] ||
		    fail "x-goog-hash '$(hdr x-goog-hash)'"
		[ "$(hdr x-goog-generation)" = "$gen" ] || fail "x-goog-generation"
		[ "$(hdr x-goog-metageneration)" = 1 ] || fail "x-goog-metageneration"
		[ "$(hdr x-goog-stored-content-length)" = "$size" ] ||
		    fail "x-goog-stored-content-length"
		[ "$(hdr x-goog-stored-content-encoding)" = identity ] ||
		    fail "x-goog-stored-content-encoding"
		hdr content-type | grep -q application/x-test || fail "content-type"
	done
	req GET "$GCS/storage/v1/b/e2e-media/o/obj-$size"
	want 200 "metadata $size"
	[ "$(jf .crc32c)" = "$crc" ] || fail "metadata crc32c"
done

# X-Goog-Hash on the upload is verified; nothing is stored on mismatch.
sums "$T/f262145"
req POST "$GCS/upload/storage/v1/b/e2e-media/o?uploadType=media&name=bad" \
    -H 'x-goog-hash: crc32c=AAAAAA==' --data-binary "@$T/f262145"
want 400 "upload with a wrong crc32c"
[ "$(jf .error.message)" = "Provided CRC32C \"AAAAAA==\" doesn't match calculated CRC32C \"$CRC\"." ] ||
    fail "message: $(jf .error.message)"
req GET "$GCS/storage/v1/b/e2e-media/o/bad"
want 404 "object after a crc mismatch"
req POST "$GCS/upload/storage/v1/b/e2e-media/o?uploadType=media&name=good" \
    -H "x-goog-hash: crc32c=$CRC,md5=$MD5" --data-binary "@$T/f262145"
want 200 "upload with the right x-goog-hash"

req POST "$GCS/upload/storage/v1/b/e2e-media/o?uploadType=media" --data-binary x
want 400 "upload without a name"
req POST "$GCS/upload/storage/v1/b/no-such-bkt/o?uploadType=media&name=x" \
    --data-binary x
want 404 "upload into a missing bucket"
req POST "$GCS/upload/storage/v1/b/e2e-media/o?uploadType=bogus&name=x" \
    --data-binary x
want 400 "bad uploadType"
jf .error.message | grep -q bogus || fail "400 does not name bogus"
req GET "$GCS/storage/v1/b/e2e-media/o/missing?alt=media"
want 404 "download a missing object"
[ "$(jf .error.message)" = "No such object: e2e-media/missing" ] ||
    fail "404 message $(jf .error.message)"
