#!/bin/sh
# RELIABILITY.md G2: libfiu's fiu-run fails POSIX I/O calls at random
# (enable_random name=posix/io/*, probability 1%) under data cp (upload
# and download), data cat and config list, 20 runs each: never a crash
# (a signal other than SIGPIPE), a run that fails says so on stderr and
# exits 1-9, and no corrupted destination: after a download that exits 0
# the file is byte-exact, after one that fails the destination is absent
# and no DEST.tpuctl-tmp is left (unless the failure hit that temp's own
# unlink: then the next run replaces it and leaves none); after an
# upload that exits 0 the object is byte-exact.  Plain build only (fiu-run is an LD_PRELOAD).
# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
have_tool fiu-run fiu-utils G2 || exit 77
if ldd "$TPUCTL" 2>/dev/null | grep -q libasan; then
	skip "G2: fiu-run's preload cannot wrap a sanitizer build"
fi

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-g2
mkfile "$T/f" 2000000
expect_rc 0 "$TPUCTL" data cp "$T/f" gs://e2e-g2/f
FIU='enable_random name=posix/io/*,probability=0.01'
fails=0

# fiu RUN: WHAT CMD...: run CMD under random I/O failures; $rc is set.
fiu() {
	what=$1
	shift
	set +e
	timeout 120 fiu-run -x -c "$FIU" "$@" >"$T/o" 2>"$T/e"
	rc=$?
	set -e
	case $rc in
	0) ;;
	[1-9])
		fails=$((fails + 1))
		[ -s "$T/e" ] || fail "$what: exit $rc and nothing on stderr"
		;;
	*) fail "$what: exit $rc (a crash, a hang or an abort): $(head -5 "$T/e")" ;;
	esac
}

i=0
while [ $i -lt 20 ]; do
	i=$((i + 1))
	rm -f "$T/d"
	fiu "download $i" "$TPUCTL" data cp gs://e2e-g2/f "$T/d"
	if [ $rc -eq 0 ]; then
		cmp -s "$T/d" "$T/f" || fail "download $i: exit 0, corrupt file"
	else
		[ ! -e "$T/d" ] || fail "download $i: exit $rc, a destination left"
	fi
	if [ -e "$T/d.tpuctl-tmp" ]; then
		# left only when the failure hit the unlink of the temp itself
		# (posix/io/dir/unlink is one of the failpoints): never under
		# the destination's name, and the next run replaces it
		[ $rc -ne 0 ] || fail "download $i: exit 0 and a temp file left"
		expect_rc 0 "$TPUCTL" data cp gs://e2e-g2/f "$T/d"
		cmp -s "$T/d" "$T/f" || fail "download $i: the rerun's file differs"
		[ ! -e "$T/d.tpuctl-tmp" ] || fail "download $i: temp file left"
	fi
	fiu "upload $i" "$TPUCTL" data cp "$T/f" "gs://e2e-g2/u$i"
	if [ $rc -eq 0 ]; then
		req GET "$GCS/download/storage/v1/b/e2e-g2/o/u$i?alt=media"
		cmp -s "$T/body" "$T/f" || fail "upload $i: exit 0, object differs"
	fi
	fiu "cat $i" "$TPUCTL" data cat gs://e2e-g2/f
	if [ $rc -eq 0 ]; then
		cmp -s "$T/o" "$T/f" || fail "cat $i: exit 0, output differs"
	fi
	fiu "config list $i" "$TPUCTL" config list
done
echo "ok: $TEST_NAME (80 runs, $fails failed cleanly)"
