#!/bin/sh
# t238: the upload session id is a bearer credential for its upload
# (issue 19 defect 6): a resumable "tpuctl data cp" with --log-http -vv
# and a 503 retry on a chunk shows X-GUploader-UploadID and upload_id as
# <redacted>, and the real id (from the emulator's session files) is
# nowhere in the trace.  (A server message quoting the id, "The upload
# session ID is busy", is covered by check_http upload_session_id_redacted.)

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-uid
mkfile "$T/f" 9000000
emu_inject --method PUT --path /upload/storage/v1/b/e2e-uid/o --count 1 return-503
expect_rc 0 env TPUCTL_GCS_CHUNK_SIZE=4194304 \
    "$TPUCTL" --log-http -vv data cp "$T/f" gs://e2e-uid/f
assert_grep '^< X-GUploader-UploadID: <redacted>' "$T/err"
assert_grep 'upload_id=<redacted>' "$T/err"
assert_grep '^< HTTP/1.1 503' "$T/err"
# the ids the emulator gave (its request log redacts them too): its
# session files, STATE/gcs/uploads/ID.json
ids=$(for f in "$EMU_DIR"/gcs/uploads/*.json; do
	[ -e "$f" ] && basename "$f" .json
done)
[ -n "$ids" ] || fail "no upload session in the emulator's state"
for id in $ids; do
	[ ${#id} -ge 8 ] || fail "short upload id '$id'"
	if grep -qF -- "$id" "$T/err"; then
		grep -nF -- "$id" "$T/err" >&2
		fail "the upload session id is in the trace"
	fi
done
exit 0
