#!/bin/sh
# t231: RELIABILITY.md C10 for parallel composite uploads, on a 256 MiB
# sparse file sent by "tpuctl data cp --parallel 2" as 4 parts of 64 MiB.
# 1. Killed (SIGKILL) once three parts are uploaded while the fourth
#    part's reply is stalled (stall-60s-after-0K): the 0600 tracker holds
#    the plan, three generations and the fourth part's session.  The rerun
#    checks the three parts on the server (GET pinned by generation) and
#    sends no byte again: the fourth session reports the part complete.
#    Composed, crc32c as the emulator computes it for the same bytes, no
#    parts and no tracker left.
# 2. Killed while every part crawls (return-503-after-1024K): the rerun
#    resumes each part's session where the server stands, no new session,
#    fewer bytes than the file.
# 3. Killed as in 1, then the source changes: the rerun starts over and
#    deletes the parts of the interrupted run.
# 4. Killed like 1, rerun with --parallel 1: the single-stream upload
#    deletes the interrupted run's parts.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-cr
TR="$HOME/.cache/tpuctl/uploads"
MiB=1048576

# 256 MiB, sparse, with data in every part so their crc32c differ
truncate -s 256M "$T/src"
for at in 0 70 140 250; do
	head -c $MiB /dev/urandom | dd of="$T/src" bs=$MiB seek=$at conv=notrunc 2>/dev/null
done

parts_left() {
	req GET "$GCS/storage/v1/b/e2e-cr/o"
	jf '.items // [] | .[].name' | grep -c 'tpuctl-part' || true
}
tracker() {
	find "$TR" -type f -name '*.json' 2>/dev/null | head -1
}
# killrun SPEC CONDITION COUNT [FAULTED]: start the upload with SPEC
# injected on COUNT part PUTs, kill it once the jq CONDITION holds for
# the tracker and the emulator has answered FAULTED requests with SPEC
# (so that much was persisted, however slow the machine)
killrun() {
	emu_inject --method PUT \
	    --path "/upload/storage/v1/b/e2e-cr/o?uploadType=resumable&name=big.tpuctl-part-" \
	    --count "$3" "$1"
	"$TPUCTL" data cp --parallel 2 "$T/src" gs://e2e-cr/big >"$T/kout" 2>&1 &
	pid=$!
	i=0
	while :; do
		tf=$(tracker)
		if [ -n "$tf" ] && [ "$(jq "$2" "$tf" 2>/dev/null)" = true ] &&
		    [ "$(emu_requests | grep -c "\"fault\":\"$1\"" || true)" -ge "${4:-0}" ]; then
			break
		fi
		kill -0 $pid 2>/dev/null || fail "the upload ended before the kill: $(cat "$T/kout")"
		i=$((i + 1))
		[ $i -lt 600 ] || fail "no tracker with $2 in 60 s"
		sleep 0.1
	done
	kill -9 $pid
	wait $pid 2>/dev/null || true
	"$EMULATOR" faults --state-dir "$EMU_DIR" --clear >/dev/null
}
three_done='[.parts[] | select(.generation)] | length == 3'
# rerun_log: the requests since line $n0 of the log, faulted ones left out
rerun_log() {
	emu_requests | tail -n +$((n0 + 1)) | jq -c 'select(.fault == null)' >"$T/rerun"
}
put_bytes() {
	jq -s '[.[] | select(.method == "PUT") | .request_bytes] | add // 0' "$T/rerun"
}
new_sessions() {
	jq -r 'select(.method == "POST" and (.query // "" | contains("uploadType=resumable"))) | .path' "$T/rerun" | wc -l
}

# 1.
killrun stall-60s-after-0K "$three_done" 1
tf=$(tracker)
[ "$(find "$TR" -type f | wc -l)" = 1 ] || fail "trackers after the kill: $(ls "$TR")"
[ "$(stat -c %a "$tf")" = 600 ] || fail "tracker mode $(stat -c %a "$tf")"
[ "$(jq '.version' "$tf")" = 2 ] || fail "tracker version: $(cat "$tf")"
[ "$(jq '.parts | length' "$tf")" = 4 ] || fail "tracker parts: $(cat "$tf")"
[ "$(jq '[.parts[] | select(.session)] | length' "$tf")" = 1 ] ||
    fail "the stalled part has no session in the tracker: $(cat "$tf")"
id=$(jq -r .id "$tf")

# the rerun: nothing sent twice
n0=$(emu_requests | wc -l)
expect_rc 0 "$TPUCTL" -v data cp --parallel 2 "$T/src" gs://e2e-cr/big
assert_grep 'resuming the upload recorded in .*: 3 of 4 parts already uploaded' "$T/err"
rerun_log
# the three parts were checked by generation, not sent again
[ "$(jq -r 'select(.method == "GET" and (.path | contains("tpuctl-part-'"$id"'")) and (.query // "" | contains("generation="))) | .path' "$T/rerun" | sort -u | wc -l)" = 3 ] ||
    fail "the uploaded parts were not checked by generation: $(cat "$T/rerun")"
[ "$(new_sessions)" = 0 ] || fail "a new upload session was started"
[ "$(put_bytes)" = 0 ] || fail "the rerun sent $(put_bytes) bytes again"
# the object: composed of 4 parts, crc32c as the emulator computes it for
# the same bytes sent by curl, no parts, no tracker
req GET "$GCS/storage/v1/b/e2e-cr/o/big"
want 200 "composite object"
[ "$(jf .size)" = $((256 * MiB)) ] || fail "size $(jf .size)"
[ "$(jf .componentCount)" = 4 ] || fail "componentCount $(jf .componentCount)"
crc=$(jf .crc32c)
req POST "$GCS/upload/storage/v1/b/e2e-cr/o?uploadType=media&name=ref" \
    -H 'Content-Type: application/octet-stream' --data-binary "@$T/src"
want 200 "reference upload"
[ "$crc" = "$(jf .crc32c)" ] || fail "composite crc32c $crc, want $(jf .crc32c)"
[ "$(parts_left)" = 0 ] || fail "parts left after the resumed upload"
[ -z "$(ls -A "$TR")" ] || fail "tracker left after success"

echo "t231: phase 2" >&2
# 2.
killrun return-503-after-1024K '[.parts[] | select(.session)] | length == 2' 1000 2
sleep 1
n0=$(emu_requests | wc -l)
expect_rc 0 "$TPUCTL" -v data cp --parallel 2 "$T/src" gs://e2e-cr/big
assert_grep 'resuming the upload recorded in .*: 0 of 4 parts already uploaded' "$T/err"
assert_grep 'part [0-3]: resuming its session at byte [1-9]' "$T/err"
rerun_log
[ "$(new_sessions)" = 2 ] || fail "$(new_sessions) new sessions, want 2 (the parts never started)"
[ "$(put_bytes)" -lt $((256 * MiB)) ] || fail "the rerun sent $(put_bytes) bytes, all of it"
req GET "$GCS/storage/v1/b/e2e-cr/o/big"
[ "$(jf .crc32c)" = "$crc" ] || fail "crc32c after the partial resume $(jf .crc32c)"
[ "$(parts_left)" = 0 ] || fail "parts left after the partial resume"

echo "t231: phase 3" >&2
# 3.
killrun stall-60s-after-0K "$three_done" 1
[ "$(parts_left)" -ge 3 ] || fail "parts on the server after the third kill"
touch -d '2001-01-01' "$T/src"
expect_rc 0 "$TPUCTL" -v data cp --parallel 2 "$T/src" gs://e2e-cr/big
assert_grep 'source changed since the interrupted upload; starting over' "$T/err"
assert_no_grep 'parts already uploaded' "$T/err"
[ "$(parts_left)" = 0 ] || fail "parts of the interrupted run left"
[ -z "$(ls -A "$TR")" ] || fail "tracker left after the fresh upload"

echo "t231: phase 4" >&2
# 4. Interrupted in parallel, rerun on one stream (--parallel 1): the
# single-stream upload replaces the composite's tracker and deletes its
# parts instead of leaving them in the bucket.
killrun stall-60s-after-0K "$three_done" 1
[ "$(parts_left)" -ge 3 ] || fail "parts on the server after the fourth kill"
expect_rc 0 "$TPUCTL" -v data cp --parallel 1 "$T/src" gs://e2e-cr/big
assert_grep 'interrupted parallel upload is replaced by a single-stream one' "$T/err"
[ "$(parts_left)" = 0 ] || fail "parts of the parallel run left after --parallel 1"
[ -z "$(ls -A "$TR")" ] || fail "tracker left after the single-stream upload"
req GET "$GCS/storage/v1/b/e2e-cr/o/big"
[ "$(jf .crc32c)" = "$crc" ] || fail "crc32c after the single-stream upload $(jf .crc32c)"
exit 0
