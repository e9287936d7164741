#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# Issue 20: --output-dir files hold each worker's raw lines (no "[wN] "
# prefix), in the default prefix mode as with --output raw; --output
# jsonl ends with one exit record per worker, in worker order (to stdout,
# or into each worker's --output-dir file): status, exit status, and the
# signal of a killed command.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"
emu_start
fleet_api_setup
fleet_create_node t440 v4-32 90

# prefix mode: the terminal gets prefixes, the files do not
expect_rc 0 "$TPUCTL" ssh t440 --worker=all --output-dir "$T/logs" \
    --command 'echo out; echo err >&2'
for w in 0 1 2 3; do
	[ -f "$T/logs/w$w.log" ] || fail "no w$w.log"
	assert_no_grep '^\[w' "$T/logs/w$w.log"
	assert_grep '^err$' "$T/logs/w$w.log"
	assert_grep '^out$' "$T/logs/w$w.log"
done
# --output raw writes the same files
expect_rc 0 "$TPUCTL" ssh t440 --worker=all --output-dir "$T/raw" \
    --output raw --command 'echo err >&2'
cmp -s "$T/raw/w2.log" - <<EOF2 || fail "raw w2.log: $(cat "$T/raw/w2.log")"
err
EOF2

# jsonl: output lines, then one exit record per worker at the end
expect_rc 8 "$TPUCTL" ssh t440 --worker=all --output jsonl \
    --command 'echo hi; exit 3'
n=$(wc -l <"$T/out")
tail -n 4 "$T/out" >"$T/exits"
jq -e -s 'map(.worker) == [0, 1, 2, 3] and all(.node == "t440" and .exit == 3 and
    .status == "remote nonzero" and (has("line") | not))' "$T/exits" >/dev/null ||
    fail "exit records: $(cat "$T/out")"
[ "$n" -eq 8 ] || fail "want 4 lines and 4 exit records: $(cat "$T/out")"
head -n 4 "$T/out" | jq -e -s 'all(.line == "hi")' >/dev/null ||
    fail "lines before the records: $(cat "$T/out")"

# a killed command: exit null, its signal named
set +e
"$TPUCTL" ssh t440 --worker=1 --output jsonl --command 'kill -KILL $$' >"$T/out" 2>"$T/err"
set -e
jq -e 'select(has("exit")) | .worker == 1 and .exit == null and .signal == "KILL"' "$T/out" >/dev/null ||
    fail "killed: $(cat "$T/out")"

# jsonl with --output-dir: each file ends with its worker's record
expect_rc 0 "$TPUCTL" ssh t440 --worker=0,3 --output jsonl --output-dir "$T/jl" -- echo j
tail -n 1 "$T/jl/w3.log" | jq -e '.worker == 3 and .exit == 0 and .status == "ok"' >/dev/null ||
    fail "w3.log: $(cat "$T/jl/w3.log")"
[ ! -s "$T/out" ] || fail "stdout with --output-dir: $(cat "$T/out")"
