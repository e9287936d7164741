#!/bin/sh
# t234: SIGINT or SIGTERM during "tpuctl data cp" downloads (issue 19
# defect 8): the command stops with 130 or 143 and removes its
# DEST.tpuctl-tmp on the way out (a rerun starts over; nothing is left
# behind), for a single-stream and a sliced (--parallel) download; an
# existing destination is untouched.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-sig
mkfile "$T/f" 3000000
expect_rc 0 "$TPUCTL" data cp "$T/f" gs://e2e-sig/f
mkfile "$T/big" 70000000
expect_rc 0 "$TPUCTL" data cp "$T/big" gs://e2e-sig/big

# interrupt SIGNAL WANT OBJECT DEST [cp flags...]: a download stalled by
# the emulator is signalled once its temp file has bytes; it exits WANT
# and leaves no temp file.
interrupt() {
	sig=$1
	want_rc=$2
	obj=$3
	dest=$4
	shift 4
	emu_inject --method GET --path "/storage/v1/b/e2e-sig/o/$obj?alt=media" \
	    --count 8 stall-30s-after-1024K
	"$TPUCTL" data cp "$@" "gs://e2e-sig/$obj" "$dest" >"$T/sigout" 2>&1 &
	pid=$!
	i=0
	while [ "$(stat -c %s "$dest.tpuctl-tmp" 2>/dev/null || echo 0)" -eq 0 ] ||
	    [ "$(stat -c %b "$dest.tpuctl-tmp" 2>/dev/null || echo 0)" -eq 0 ]; do
		i=$((i + 1))
		[ $i -lt 200 ] || fail "$sig: no temp file with bytes in 20 s"
		sleep 0.1
	done
	start=$(date +%s)
	kill "-$sig" $pid
	set +e
	wait $pid
	rc=$?
	set -e
	"$EMULATOR" faults --state-dir "$EMU_DIR" --clear >/dev/null
	[ $rc -eq "$want_rc" ] || {
		cat "$T/sigout" >&2
		fail "$sig: exit $rc, want $want_rc"
	}
	[ $(($(date +%s) - start)) -lt 10 ] || fail "$sig: slow to stop"
	[ ! -e "$dest.tpuctl-tmp" ] || fail "$sig: $dest.tpuctl-tmp left behind"
}

interrupt INT 130 f "$T/d1"
[ ! -e "$T/d1" ] || fail "INT: a destination appeared"
printf 'precious\n' >"$T/d2"
interrupt TERM 143 f "$T/d2"
[ "$(cat "$T/d2")" = precious ] || fail "TERM: the destination changed"
interrupt TERM 143 big "$T/d3" --parallel 4
interrupt INT 130 big "$T/d4" --parallel 4
# the reruns start over and finish
expect_rc 0 "$TPUCTL" data cp gs://e2e-sig/f "$T/d2"
cmp -s "$T/f" "$T/d2" || fail "rerun: contents"
expect_rc 0 "$TPUCTL" data cp --parallel 4 gs://e2e-sig/big "$T/d3"
cmp -s "$T/big" "$T/d3" || fail "sliced rerun: contents"
for f in "$T"/*.tpuctl-tmp; do
	[ ! -e "$f" ] || fail "temp file left: $f"
done
exit 0
