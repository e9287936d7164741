#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# tpuctl ssh on a multislice queued resource (2 slices of v4-32, 4
# workers each): --node all|N|NODE_ID picks slices, --worker applies in
# each, output is prefixed [sN/wM] (jsonl carries node and slice,
# --output-dir has one file per node and worker, the summary names node
# and worker); the key is propagated and host keys pinned per node; a
# warm second run makes no API request; one failing worker on one slice
# gives 8; bad --node values are usage errors before any request; a
# plain node refuses --node; a slice recreated behind tpuctl's back is
# refreshed on the first failure; scp uploads to every slice.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=300 --set tpu.qr_provision_ms=300
fleet_api_setup
api_calls() { emu_requests | grep -c '"/v2/' || true; }

# Pure syntax errors: exit 2 before any request.
before=$(api_calls)
for bad in '' 'all,0' '2-1' '0,' 'ms_1' '-1' 'Ms-1' '1, 2' 4096; do
	expect_rc 2 "$TPUCTL" ssh t076 --node "$bad" -- true
	assert_grep "^tpuctl: --node '$bad': expected 'all'" "$T/err"
done
[ "$(api_calls)" -eq "$before" ] || fail "a bad --node made API requests"

expect_rc 0 "$TPUCTL" queued-resources create t076 --node-count 2 \
    --node-prefix ms --accelerator-type v4-32

# A worker knows itself by its address (the login has no TPU_NAME or
# TPU_WORKER_ID, as on a TPU VM): $T/ids.sed maps "addr" to "ms-S W".
for s in 0 1; do
	fleet_api GET "$NODES/ms-$s" | jq -r --arg s "$s" '.networkEndpoints |
	    to_entries[] | "s/" + (.value.ipAddress | gsub("[.]"; "\\.")) +
	    "$/ms-" + $s + " \(.key)/"' >>"$T/ids.sed"
done
[ "$(wc -l <"$T/ids.sed")" -eq 8 ] || fail "want 8 endpoints: $(cat "$T/ids.sed")"
# shellcheck disable=SC2016 # expanded by the remote shell
ME='set -- $SSH_CONNECTION; echo'
# The address of slice S worker W.
addr_of() {
	fleet_api GET "$NODES/ms-$1" | jq -r ".networkEndpoints[$2].ipAddress"
}
ids() { sed -f "$T/ids.sed" "$1" >"$1.ids" && mv "$1.ids" "$1"; }

# Cold: both slices, every worker; keys propagated into both nodes.
expect_rc 0 "$TPUCTL" ssh t076 --node all --worker all -- sh -c "$ME \$3"
ids "$T/out"
for s in 0 1; do
	for w in 0 1 2 3; do
		assert_grep "^\[s$s/w$w\] ms-$s $w\$" "$T/out"
		assert_grep "^node ms-$s \\(slice $s\\) worker $w: exit 0" "$T/err"
	done
	fleet_api GET "$NODES/ms-$s" | jq -r '.metadata["ssh-keys"]' >"$T/keys"
	assert_grep "^$SSH_USER:ssh-ed25519 " "$T/keys"
	id=$(fleet_api GET "$NODES/ms-$s" | jq -r .id)
	assert_grep "^tpu\\.$id-3 ssh-ed25519 " "$XDG_CONFIG_HOME/tpuctl/known_hosts"
done
[ "$(wc -l <"$T/out")" -eq 8 ] || fail "want 8 lines: $(cat "$T/out")"
assert_grep '^8 of 8 workers succeeded \(2 nodes\)$' "$T/err"

# Warm: the queued resource's membership, both nodes and their host keys
# come from the caches: no API request at all.
before=$(api_calls)
expect_rc 0 "$TPUCTL" ssh t076 --node all --worker all -- echo warm
[ "$(grep -c '^\[s[01]/w[0-3]\] warm$' "$T/out")" -eq 8 ] ||
	fail "warm run: $(cat "$T/out")"
[ "$(api_calls)" -eq "$before" ] || {
	emu_requests | tail -5 >&2
	fail "warm ssh made $(($(api_calls) - before)) API requests"
}

# One slice by index or by node id; without --node, a command runs on
# every slice.
expect_rc 0 "$TPUCTL" ssh t076 --node 1 --worker all -- echo one
[ "$(grep -c '^\[s1/w[0-3]\] one$' "$T/out")" -eq 4 ] ||
	fail "--node 1: $(cat "$T/out")"
[ "$(wc -l <"$T/out")" -eq 4 ] || fail "--node 1: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" ssh t076 --node ms-1 --worker 2,3 -- sh -c "$ME \$3"
ids "$T/out"
[ "$(sort "$T/out")" = "$(printf '[s1/w2] ms-1 2\n[s1/w3] ms-1 3')" ] ||
	fail "--node ms-1: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" ssh t076 -- sh -c "$ME \$3"
ids "$T/out"
[ "$(sort "$T/out")" = "$(printf '[s0/w0] ms-0 0\n[s1/w0] ms-1 0')" ] ||
	fail "default slices: $(cat "$T/out")"

# One target: its own status.  Several: 8 when one worker of one slice
# fails, named in the summary.
expect_rc 3 "$TPUCTL" ssh t076 --node 1 --worker 2 --command 'exit 3'
expect_rc 8 "$TPUCTL" ssh t076 --node all --worker all --command \
    "set -- \$SSH_CONNECTION; [ \$3 != $(addr_of 1 2) ] || exit 5"
assert_grep '^node ms-1 \(slice 1\) worker 2: exit 5' "$T/err"
assert_grep '^node ms-0 \(slice 0\) worker 2: exit 0' "$T/err"
assert_grep '^7 of 8 workers succeeded' "$T/err"

# jsonl and --output-dir name node and slice.
expect_rc 0 "$TPUCTL" ssh t076 --node all --output jsonl -- echo j
jq -e -s 'map(select(has("exit"))) | length == 2' "$T/out" >/dev/null ||
    fail "want two exit records: $(cat "$T/out")"
jq -e -s 'map(select(has("line"))) | length == 2 and (map(.node) | sort) == ["ms-0", "ms-1"] and
    all(.slice == (.node | ltrimstr("ms-") | tonumber) and .worker == 0 and
    .line == "j")' "$T/out" >/dev/null || fail "bad jsonl: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" ssh t076 --node all --worker 1,3 --output-dir "$T/logs" --output raw \
    -- sh -c "$ME \$3"
for f in ms-0-w1 ms-0-w3 ms-1-w1 ms-1-w3; do
	ids "$T/logs/$f.log"
	[ "$(cat "$T/logs/$f.log")" = "${f%-w*} ${f##*-w}" ] ||
	    fail "$f.log: $(cat "$T/logs/$f.log" 2>&1)"
done

# Values that name no slice: usage errors.
expect_rc 2 "$TPUCTL" ssh t076 --node 2 -- true
assert_grep "slice 2 does not exist \(the queued resource has 2 slices: 0-1\)" "$T/err"
expect_rc 2 "$TPUCTL" ssh t076 --node ms-7 -- true
assert_grep "'ms-7' is not a node of the queued resource \(its nodes: ms-0, ms-1\)" "$T/err"
expect_rc 2 "$TPUCTL" ssh t076 --node all --worker 4 -- true
# A plain node: [wN] prefixes, and --node is refused.
expect_rc 0 "$TPUCTL" ssh ms-1 --worker 1 -- echo plain
[ "$(cat "$T/out")" = "[w1] plain" ] || fail "plain node: $(cat "$T/out")"
expect_rc 2 "$TPUCTL" ssh ms-1 --node 0 -- true
assert_grep "'ms-1' is a TPU node, not a queued resource" "$T/err"
expect_rc 4 "$TPUCTL" ssh nosuch -- true
assert_grep "node 'nosuch' not found .*nor a queued resource" "$T/err"

# scp: an upload reaches every slice; a download takes one slice.
printf 'payload\n' >"$T/up.txt"
expect_rc 0 "$TPUCTL" scp --node all --worker all "$T/up.txt" t076:
expect_rc 0 "$TPUCTL" ssh t076 --node all --worker all -- cat up.txt
[ "$(grep -c '^\[s[01]/w[0-3]\] payload$' "$T/out")" -eq 8 ] ||
	fail "scp upload: $(cat "$T/out")"
expect_rc 2 "$TPUCTL" scp --node all t076:up.txt "$T/down"
assert_grep "selects 2 slices" "$T/err"
expect_rc 0 "$TPUCTL" scp --node ms-1 t076:up.txt "$T/down.txt"
[ "$(cat "$T/down.txt")" = payload ] || fail "scp download"
# Without --node: an upload covers every slice, a download reads slice 0.
printf 'two\n' >"$T/up2.txt"
expect_rc 0 "$TPUCTL" scp --worker 3 "$T/up2.txt" t076:
expect_rc 0 "$TPUCTL" ssh t076 --worker 3 -- cat up2.txt
[ "$(grep -c '^\[s[01]/w3\] two$' "$T/out")" -eq 2 ] ||
	fail "scp default upload: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" ssh t076 --node 0 -- sh -c 'echo s0 >slice.txt'
expect_rc 0 "$TPUCTL" ssh t076 --node 1 -- sh -c 'echo s1 >slice.txt'
expect_rc 0 "$TPUCTL" scp t076:slice.txt "$T/slice.txt"
[ "$(cat "$T/slice.txt")" = s0 ] || fail "scp default download: not slice 0"
# An interactive shell on a queued resource opens on slice 0.
if have_tool script bsdutils "the interactive shell on a queued resource"; then
	printf 'set -- $SSH_CONNECTION; echo "in-$3"; exit 0\n' |
	    script -qec "$TPUCTL ssh t076" /dev/null >"$T/out" 2>&1 ||
	    fail "interactive shell: $(cat "$T/out")"
	assert_grep "in-$(addr_of 0 0)([^0-9]|\$)" "$T/out"
fi
expect_rc 2 "$TPUCTL" forward t076 --node all $((20000 + $$ % 20000))
assert_grep "forward goes through one worker" "$T/err"

# Slice 1 recreated behind tpuctl's back (new id, new host keys, no key
# in its metadata): the first failure refreshes the queued resource and
# its nodes, the workers that never ran are retried, exit 0.
old=$(fleet_api GET "$NODES/ms-1" | jq -r .id)
KH="$XDG_CONFIG_HOME/tpuctl/known_hosts"
grep "^tpu\\.$old-" "$KH" >"$T/kh.old" || true
[ "$(wc -l <"$T/kh.old")" -eq 4 ] || fail "want 4 pinned keys of $old: $(cat "$KH")"
fleet_delete_node ms-1
fleet_create_node ms-1 v4-32 90
new=$(jq -r .id "$T/node.json")
[ "$old" != "$new" ] || fail "the recreated node kept id $old"
expect_rc 0 "$TPUCTL" ssh t076 --node all --worker all -- echo again
[ "$(grep -c '^\[s[01]/w[0-3]\] again$' "$T/out")" -eq 8 ] ||
	fail "after recreate: $(cat "$T/out") $(cat "$T/err")"
assert_grep '^8 of 8 workers succeeded' "$T/err"
# RELIABILITY.md D4: the recreated node's keys are pinned under its new
# id (its aliases), the old node's entries are left as they were.
grep "^tpu\\.$old-" "$KH" >"$T/kh.after" || true
cmp -s "$T/kh.old" "$T/kh.after" || {
	diff "$T/kh.old" "$T/kh.after" >&2 || true
	fail "D4: the old node's known_hosts entries changed"
}
for w in 0 1 2 3; do
	assert_grep "^tpu\\.$new-$w ssh-ed25519 " "$KH"
done

# Deleting the queued resource forgets its membership and its nodes'
# descriptions: the next ssh asks the API and says it is gone.
cache=${TPUCTL_CACHE_DIR:-$XDG_CACHE_HOME/tpuctl}
[ "$(find "$cache" -name 't076.json' -o -name 'ms-[01].json' | wc -l)" -eq 3 ] ||
	fail "want the membership and 2 nodes cached: $(find "$cache" -type f)"
expect_rc 0 "$TPUCTL" --quiet queued-resources delete t076 --force
[ "$(find "$cache" -name 't076.json' -o -name 'ms-[01].json' | wc -l)" -eq 0 ] ||
	fail "cache entries left after the delete: $(find "$cache" -type f)"
expect_rc 4 "$TPUCTL" ssh t076 --connect-timeout 2 -- true
assert_grep "not found" "$T/err"
exit 0
