#!/bin/sh
# t228: --progress=jsonl (progress events, then one "done" with the byte
# and file counts), a tree of 300 small files moved by 4 workers, and
# RELIABILITY.md C15: a failing fsync or rename (libfiu's fiu-run) is
# reported (exit 1, the errno's text), no success line is printed and no
# file, temporary or final, appears at the destination.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-pg
mkdir -p "$T/many"
i=0
while [ $i -lt 300 ]; do
	printf '%04d\n' $i >"$T/many/f$i"
	i=$((i + 1))
done
expect_rc 0 "$TPUCTL" data cp -r --parallel 4 --progress=jsonl "$T/many" gs://e2e-pg/
assert_grep '^\{"event":"done","bytes":1500,"total_bytes":1500,"files":300,"total_files":300,"failed":0,' "$T/err"
jq -e . "$T/err" >/dev/null || fail "--progress=jsonl lines are not JSON"
expect_rc 0 "$TPUCTL" data cp -r --progress none gs://e2e-pg/many "$T/back"
[ ! -s "$T/err" ] || fail "--progress none printed: $(cat "$T/err")"
diff -r "$T/many" "$T/back/many" >&2 || fail "small files differ"
mkfile "$T/big" 20000000
expect_rc 0 "$TPUCTL" data cp --progress=jsonl "$T/big" gs://e2e-pg/big
assert_grep '"event":"done","bytes":20000000,' "$T/err"

# on a terminal (script(1) gives one): a bar with throughput and ETA
if have_tool script bsdutils "the progress bar on a terminal"; then
	# shellcheck disable=SC2016 # expanded by the shell script(1) runs
	SCRIPT_CMD="$TPUCTL data cp gs://e2e-pg/big $T/tty.out" \
	    script -qec 'eval "$SCRIPT_CMD"' /dev/null >"$T/tty" 2>&1 ||
	    fail "cp on a terminal: $(cat "$T/tty")"
	grep -q 'ETA' "$T/tty" || fail "no progress bar on a terminal: $(cat "$T/tty")"
	grep -q '100%' "$T/tty" || fail "the bar did not reach 100%"
	cmp -s "$T/big" "$T/tty.out" || fail "download on a terminal"
fi

# C15
have_tool fiu-run fiu-utils C15 || exit 77
if ldd "$TPUCTL" 2>/dev/null | grep -q libasan; then
	skip "C15: fiu-run's preload cannot wrap a sanitizer build"
fi
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
# the success line a working run ends with (not printed under C15)
expect_rc 0 "$TPUCTL" data cp gs://e2e-pg/big "$T/c15"
assert_grep '^Copied 1 file ' "$T/err"
for point in posix/io/sync/fsync posix/io/dir/rename; do
	rm -f "$T/c15"
	expect_rc 1 fiu-run -x -c "enable name=$point,failinfo=5" \
	    "$TPUCTL" data cp gs://e2e-pg/big "$T/c15"
	assert_grep 'Input/output error' "$T/err"
	assert_no_grep '^(Copied|Moved) ' "$T/err"
	[ ! -s "$T/out" ] || fail "C15 $point: stdout: $(cat "$T/out")"
	[ ! -e "$T/c15" ] || fail "C15 $point: the destination exists"
	[ ! -e "$T/c15.tpuctl-tmp" ] || fail "C15 $point: temp left"
done
exit 0
