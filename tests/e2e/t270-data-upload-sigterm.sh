#!/bin/sh
# RELIABILITY.md G4: SIGTERM (and SIGINT) during a resumable upload of
# "tpuctl data cp": exits 143 (130) within seconds, no object appears
# (nothing half written under the name), the tracker is saved (one file,
# 0600) and no temp file is left in HOME (no tracker .tmp-XXXX, no
# other); a rerun resumes the session and the object is byte-exact.
# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-g4
mkfile "$T/f" 30000000
TR="$HOME/.cache/tpuctl/uploads"

# sigrun SIGNAL WANT: a crawling upload (every chunk cut after 1 MiB by
# a 503) is signalled once its tracker exists and some bytes are in.
sigrun() {
	emu_inject --method PUT --path /upload/storage/v1/b/e2e-g4 --count 1000 \
	    return-503-after-1024K
	"$TPUCTL" data cp "$T/f" gs://e2e-g4/obj >"$T/sout" 2>&1 &
	pid=$!
	i=0
	while [ -z "$(ls -A "$TR" 2>/dev/null)" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	sleep 1.5
	start=$(date +%s)
	kill "-$1" $pid 2>/dev/null ||
	    fail "$1: the upload ended before the signal: $(cat "$T/sout")"
	set +e
	wait $pid
	rc=$?
	set -e
	"$EMULATOR" faults --state-dir "$EMU_DIR" --clear >/dev/null
	[ $rc -eq "$2" ] || fail "$1: exit $rc, want $2: $(cat "$T/sout")"
	[ $(($(date +%s) - start)) -lt 10 ] || fail "$1: slow to stop"
	req GET "$GCS/storage/v1/b/e2e-g4/o/obj"
	[ "$ST" = 404 ] ||
	    fail "$1: an object appeared after the signal: $(cat "$T/body")"
	[ "$(find "$TR" -type f | wc -l)" -eq 1 ] ||
	    fail "$1: trackers: $(find "$TR" -type f)"
	[ "$(stat -c %a "$TR"/*)" = 600 ] || fail "$1: tracker mode"
	if find "$HOME" "$T" -name '*tmp*' ! -path "$T/emu/*" | grep .; then
		fail "$1: temp files left"
	fi
}

sigrun TERM 143
sigrun INT 130
expect_rc 0 "$TPUCTL" -v data cp "$T/f" gs://e2e-g4/obj
assert_grep 'resuming the upload recorded in .* at byte [1-9]' "$T/err"
[ -z "$(ls -A "$TR")" ] || fail "tracker left after success"
req GET "$GCS/download/storage/v1/b/e2e-g4/o/obj?alt=media"
cmp -s "$T/body" "$T/f" || fail "resumed object differs"
echo "ok: $TEST_NAME"
