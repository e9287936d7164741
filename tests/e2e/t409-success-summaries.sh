#!/bin/sh
# Issue 20: silent successes say what was done in one line on stderr,
# quiet under -q: data cp -r and data sync (files, bytes, deleted, up to
# date), scp (files, bytes, workers), operations wait (the operation and
# the resource it left), and an empty list says "Listed 0 items." as
# gcloud does (stdout stays empty).
# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"

# one_line FILE REGEX: FILE is exactly one line, matching.
one_line() {
	[ "$(wc -l <"$1")" -eq 1 ] || fail "not one line: $(cat "$1")"
	assert_grep "$2" "$1"
}

# Empty lists.
expect_rc 0 "$TPUCTL" list
[ ! -s "$T/out" ] || fail "stdout of an empty list: $(cat "$T/out")"
one_line "$T/err" '^Listed 0 items\.$'
expect_rc 0 "$TPUCTL" queued-resources list
one_line "$T/err" '^Listed 0 items\.$'
expect_rc 0 "$TPUCTL" list --zone - --format json
one_line "$T/err" '^Listed 0 items\.$'
expect_rc 0 "$TPUCTL" -q list
[ ! -s "$T/err" ] || fail "-q list: $(cat "$T/err")"

# operations wait
expect_rc 0 "$TPUCTL" create w1 --accelerator-type v4-8 --async \
    --format 'value(name)'
op=$(cat "$T/out")
[ -n "$op" ] || fail "no operation name"
expect_rc 0 "$TPUCTL" operations wait "$op"
# (without a terminal the wait's state lines come first)
tail -n 1 "$T/err" >"$T/last"
one_line "$T/last" "^tpuctl: operation ${op##*/} done: node 'w1' is READY$"
[ "$(grep -c ' done' "$T/err")" -eq 1 ] || fail "summary twice: $(cat "$T/err")"
# a non-empty list says nothing more
expect_rc 0 "$TPUCTL" list --format 'value(name)'
[ ! -s "$T/err" ] || fail "list: $(cat "$T/err")"
expect_rc 0 "$TPUCTL" delete w1 --async --format 'value(name)'
op=$(cat "$T/out")
expect_rc 0 "$TPUCTL" -q operations wait "$op"
[ ! -s "$T/err" ] || fail "-q operations wait: $(cat "$T/err")"

# data cp -r and data sync
mkbucket e2e-409
mkdir -p "$T/d/sub"
printf 'aaaa\n' >"$T/d/a"
printf 'bbbbbbbb\n' >"$T/d/b"
mkfile "$T/d/sub/big" 2048
expect_rc 0 "$TPUCTL" data cp -r "$T/d" gs://e2e-409/cp
one_line "$T/err" '^Copied 3 files \(2\.0 KiB\) in [0-9]+\.[0-9] s \([0-9.]+ [KMG]?i?B/s\)$'
expect_rc 0 "$TPUCTL" data cp "$T/d/a" gs://e2e-409/one
one_line "$T/err" '^Copied 1 file \(5 B\) in '
expect_rc 0 "$TPUCTL" -q data cp -r "$T/d" gs://e2e-409/cp2
[ ! -s "$T/err" ] || fail "-q data cp: $(cat "$T/err")"

expect_rc 0 "$TPUCTL" data sync "$T/d" gs://e2e-409/sy
one_line "$T/err" '^Copied 3 files \(2\.0 KiB\) in '
expect_rc 0 "$TPUCTL" data sync "$T/d" gs://e2e-409/sy
one_line "$T/err" '^Nothing to copy: 3 files up to date$'
printf 'AAAA\n' >"$T/d/a"
rm "$T/d/b"
expect_rc 0 "$TPUCTL" data sync --delete "$T/d" gs://e2e-409/sy
one_line "$T/err" '^Copied 1 file \(5 B\) in [0-9.]+ s \([^)]*\); deleted 1; 1 up to date$'
rm "$T/d/a"
expect_rc 0 "$TPUCTL" data sync --delete "$T/d" gs://e2e-409/sy
one_line "$T/err" '^Deleted 1 file; 1 up to date$'
expect_rc 0 "$TPUCTL" -q data sync "$T/d" gs://e2e-409/sy
[ ! -s "$T/err" ] || fail "-q data sync: $(cat "$T/err")"

# scp: one worker, then every worker of a v4-16 (2 workers)
KEY="$T/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$KEY" >/dev/null
expect_rc 0 "$TPUCTL" create s2 --accelerator-type v4-16
printf 'payload\n' >"$T/p"
expect_rc 0 "$TPUCTL" scp --ssh-key-file "$KEY" "$T/p" s2:p409
tail -n 1 "$T/err" >"$T/last" # after the key propagation's state line
one_line "$T/last" '^Copied 1 file \(8 B\) to worker 0 in [0-9]+\.[0-9] s$'
expect_rc 0 "$TPUCTL" scp --ssh-key-file "$KEY" --worker all "$T/p" s2:p409
one_line "$T/err" '^Copied 2 files \(16 B\) to 2 workers in '
expect_rc 0 "$TPUCTL" scp --ssh-key-file "$KEY" --worker all s2:p409 "$T/back"
one_line "$T/err" '^Copied 2 files \(16 B\) from 2 workers in '
expect_rc 0 "$TPUCTL" -q scp --ssh-key-file "$KEY" "$T/p" s2:p409
[ ! -s "$T/err" ] || fail "-q scp: $(cat "$T/err")"
