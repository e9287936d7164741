#!/bin/sh
# t230: RELIABILITY.md 4C row C5: the object is overwritten between the
# first read and the resume (gcs-new-generation: the media GET first
# replaces the object with a new generation of the same size, every byte
# inverted).  A single-stream download broken at 1 MiB, an overwrite
# before the very first media GET, and the sliced parallel path (>= 64
# MiB): the result is the complete old or the complete new content, or
# exit 4 with the destination unchanged (absent, or byte-identical when
# it existed) and no temp file; never a mix of two generations.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-gen

# invert SRC DST: every byte of SRC inverted (what gcs-new-generation
# stores)
invert() {
	python3 -c 'import sys; t = bytes(255 - i for i in range(256)); sys.stdout.buffer.write(open(sys.argv[1], "rb").read().translate(t))' "$1" >"$2"
}
gen() {
	req GET "$GCS/storage/v1/b/e2e-gen/o/$1"
	want 200 "stat $1"
	jf .generation
}
# c5 NAME OLD NEW DEST ORIG: after a download of NAME to DEST under the
# fault (exit status in $rc): DEST is OLD or NEW whole, or the download
# failed with exit 4 and DEST is ORIG (or absent when ORIG is "").  The
# object must now be NEW (the fault happened).
c5() {
	if [ "$rc" = 0 ]; then
		cmp -s "$4" "$2" || cmp -s "$4" "$3" ||
		    fail "$1: the download stitched two generations"
	else
		[ "$rc" = 4 ] || { cat "$T/err" >&2; fail "$1: exit $rc, want 0 or 4"; }
		[ "$(wc -l <"$T/err")" -eq 1 ] || fail "$1: not one line: $(cat "$T/err")"
		assert_grep "gs://e2e-gen/$1: generation [0-9]+ is gone" "$T/err"
		if [ -n "$5" ]; then
			cmp -s "$4" "$5" || fail "$1: the existing destination changed"
		else
			[ ! -e "$4" ] || fail "$1: a partial destination was left"
		fi
	fi
	[ ! -e "$4.tpuctl-tmp" ] || fail "$1: temp file left"
	req GET "$GCS/download/storage/v1/b/e2e-gen/o/$1?alt=media"
	want 200 "read $1 back"
	cmp -s "$T/body" "$3" || fail "$1: the fault did not overwrite the object"
}
# dl NAME DEST: download under the faults already armed; $rc
dl() {
	set +e
	"$TPUCTL" -v data cp "gs://e2e-gen/$1" "$2" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	echo "$1: exit $rc: $(tail -1 "$T/err")"
	grep -v '^tpuctl: .*resuming at byte' "$T/err" >"$T/err1" || true
	mv "$T/err1" "$T/err"
}

# single stream, broken at 1 MiB, the resume meets a new generation
mkfile "$T/f" 3000000
invert "$T/f" "$T/f.new"
expect_rc 0 "$TPUCTL" data cp "$T/f" gs://e2e-gen/f
g0=$(gen f)
printf 'precious\n' >"$T/dest"
cp "$T/dest" "$T/dest.orig"
emu_inject --method GET --path '/storage/v1/b/e2e-gen/o/f?alt=media' --count 1 broken-stream-after-1024K
emu_inject --method GET --path '/storage/v1/b/e2e-gen/o/f?alt=media' --count 1 gcs-new-generation
dl f "$T/dest"
c5 f "$T/f" "$T/f.new" "$T/dest" "$T/dest.orig"
[ "$(gen f)" != "$g0" ] || fail "f: no new generation"
n=$(emu_requests | grep '"GET"' | grep -c '/o/f","query":"alt=media' || true)
[ "$n" -ge 2 ] || fail "f: $n media GETs, want the broken one and a resume"

# the overwrite lands before the first media GET (after the stat)
expect_rc 0 "$TPUCTL" data cp "$T/f" gs://e2e-gen/g
invert "$T/f" "$T/g.new"
emu_inject --method GET --path '/storage/v1/b/e2e-gen/o/g?alt=media' --count 1 gcs-new-generation
dl g "$T/g"
c5 g "$T/f" "$T/g.new" "$T/g" ""

# sliced parallel download (>= 64 MiB): one slice broken, the next GET
# meets a new generation
mkfile "$T/big" $((64 * 1048576 + 12345))
invert "$T/big" "$T/big.new"
expect_rc 0 "$TPUCTL" data cp "$T/big" gs://e2e-gen/big
cp "$T/dest.orig" "$T/bdest"
before=$(emu_requests | wc -l)
emu_inject --method GET --path '/storage/v1/b/e2e-gen/o/big?alt=media' --count 1 broken-stream-after-1024K
emu_inject --method GET --path '/storage/v1/b/e2e-gen/o/big?alt=media' --count 1 gcs-new-generation
dl big "$T/bdest"
c5 big "$T/big" "$T/big.new" "$T/bdest" "$T/dest.orig"
n=$(emu_requests | tail -n +$((before + 1)) | grep '"GET"' |
    grep '/o/big"' | grep -ci '"range":"bytes=' || true)
[ "$n" -ge 2 ] || fail "big: $n ranged GETs, want a sliced download"

# without the fault the sliced download of the new generation is whole
expect_rc 0 "$TPUCTL" data cp gs://e2e-gen/big "$T/bdest"
cmp -s "$T/bdest" "$T/big.new" || fail "big: the clean download differs"
rm -f "$T/big" "$T/big.new" "$T/bdest"
exit 0
