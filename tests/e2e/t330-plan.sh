#!/bin/sh
# tpuctl plan: figures computed by hand (1e9 bf16 inference fits one v5e
# chip; 70e9 mixed-precision Adam training is 16 B per parameter = 1.12e12
# B, +10% = 1.232e12 B, 36 chips of 32 GiB -> v4-128), every figure in
# bytes in JSON, the table in GiB, and bad values exit 2 with one line.
# Local only: no emulator, no credentials.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

expect_rc 0 "$TPUCTL" plan --params 1e9 --inference --format json
J="$T/out"
[ "$(jq -r '.bytes.weights' "$J")" = 2000000000 ] || fail "weights: $(cat "$J")"
[ "$(jq -r '.bytes.required' "$J")" = 2200000000 ] || fail "required"
[ "$(jq -r '.generations[] | select(.generation=="v5e") | .acceleratorType' "$J")" = v5litepod-1 ] ||
    fail "1e9 bf16 inference should fit v5litepod-1"
[ "$(jq -r '.generations[] | select(.generation=="v5e") | .hbmPerChip' "$J")" = 17179869184 ] ||
    fail "v5e HBM per chip"

expect_rc 0 "$TPUCTL" plan --params 70B --format json
for f in 'weights 140000000000' 'gradients 140000000000' \
    'masterWeights 280000000000' 'optimizerState 560000000000' \
    'total 1120000000000' 'required 1232000000000'; do
	k=${f% *}
	v=${f#* }
	[ "$(jq -r ".bytes.$k" "$J")" = "$v" ] || fail "$k: want $v: $(jq .bytes "$J")"
done
[ "$(jq -r '.generations[] | select(.generation=="v4") | "\(.acceleratorType) \(.chips) \(.hosts)"' "$J")" = "v4-128 64 16" ] ||
    fail "70e9 Adam on v4: $(jq -c '.generations' "$J")"
[ "$(jq -r '.generations[] | select(.generation=="v5p") | .acceleratorType' "$J")" = v5p-32 ] ||
    fail "70e9 Adam on v5p"
jq -e '.generations | length == 6 and all(.hbmSource | test("^https://"))' "$J" >/dev/null ||
    fail "every generation has its HBM source"

# the table, in GiB
expect_rc 0 "$TPUCTL" plan --params 70e9
assert_grep '^v4 +v4-128 +64 +16 +32.0 GiB +2048.0 GiB$' "$T/out"
assert_grep '1043.1 GiB +1147.4 GiB$' "$T/out"

# activations with a given shape; too large for every v2 slice -> none
expect_rc 0 "$TPUCTL" plan --params 7e9 --seq-len 2048 --batch 8 \
    --layers 32 --hidden 4096 --format 'value(bytes.activations)'
[ "$(cat "$T/out")" = 73014444032 ] || fail "activations: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" plan --params 1e15 --format json
[ "$(jq -r '.generations[0] | "\(.fits) \(.largest)"' "$J")" = "false v2-512" ] ||
    fail "1e15 should not fit v2: $(jq -c '.generations[0]' "$J")"

# bad values: exit 2, one line naming the value
for args in "--params abc" "--params 0" "--params -5" "--params 1e16" \
    "--params 1e9 --dtype bf8" "--params 1e9 --optimizer lamb" \
    "--params 1e9 --dtype int8" "--params 1e9 --inference --optimizer sgd" \
    "--params 1e9 --seq-len 10" "--params 1e9 --headroom 1001" \
    "--params 1e9 --headroom -1" "--params 1e9 --batch 0 --seq-len 1 --layers 1 --hidden 1" \
    "--dtype bf16"; do
	# shellcheck disable=SC2086 # words on purpose
	expect_rc 2 "$TPUCTL" plan $args
	head -1 "$T/err" | grep -q '^tpuctl: ' || fail "$args: $(cat "$T/err")"
done
expect_rc 2 "$TPUCTL" plan --params abc
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "not one line: $(cat "$T/err")"
assert_grep "'abc'" "$T/err"
expect_rc 2 "$TPUCTL" plan --params 1e9 extra
