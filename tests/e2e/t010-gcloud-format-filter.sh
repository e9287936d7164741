#!/bin/sh
# gcloud's --format, --filter, --sort-by, --limit, --page-size and --uri on
# list and describe against the emulator, each output checked exactly;
# bad expressions refused (exit 2, one line) before any request.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start --set tpu.create_ms=50

P=projects/tpuctl-emu/locations/us-central2-b
expect_rc 0 "$TPUCTL" create b2 --accelerator-type v4-8 --labels env=dev
expect_rc 0 "$TPUCTL" create a1 --accelerator-type v4-8 --labels env=prod
expect_rc 0 "$TPUCTL" create c3 --accelerator-type v4-8 --labels env=prod,team=ml
expect_rc 0 "$TPUCTL" stop c3 --format='table(name.basename(),state)'
printf 'NAME  STATE\nc3    STOPPED\n' | cmp -s - "$T/out" ||
    fail "stop --format=table(...): $(cat "$T/out")"

# describe: a key with [N], get(), a transform.
expect_rc 0 "$TPUCTL" describe a1 --format json
ip=$(jq -r '.networkEndpoints[0].ipAddress' "$T/out")
expect_rc 0 "$TPUCTL" describe a1 \
    --format='value(networkEndpoints[0].ipAddress)'
[ "$(cat "$T/out")" = "$ip" ] || fail "value(networkEndpoints[0].ipAddress): $(cat "$T/out")"
expect_rc 0 "$TPUCTL" describe a1 --format='get(state)'
[ "$(cat "$T/out")" = READY ] || fail "get(state): $(cat "$T/out")"
expect_rc 0 "$TPUCTL" describe a1 \
    --format='value(name.basename(),name.segment(3),labels.env.upper(),labels.len())'
[ "$(cat "$T/out")" = "$(printf 'a1\tus-central2-b\tPROD\t2')" ] ||
    fail "value(transforms): $(cat "$T/out")"
# flattened: one key: value per line, values in one column, keys sorted.
expect_rc 0 "$TPUCTL" describe c3 --format=flattened
assert_grep '^labels\.team: +ml$' "$T/out"
sed -E 's/^([^ ]*: +).*/\1/' "$T/out" | awk '{ print length($0) }' |
    sort -u | wc -l | grep -qx 1 ||
    fail "flattened values not aligned: $(cat "$T/out")"
cut -d: -f1 "$T/out" | LC_ALL=C sort -c || fail "flattened keys not sorted"

# list: csv, value, --sort-by (several keys, ~), --limit, --filter.
expect_rc 0 "$TPUCTL" list --format='csv[no-heading](name.basename(),labels.env)' \
    --sort-by=name
printf 'a1,prod\nb2,dev\nc3,prod\n' | cmp -s - "$T/out" ||
    fail "csv[no-heading]: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" list --format='csv(name.basename(),labels.env)' \
    --sort-by=~labels.env,name
printf 'name,env\na1,prod\nc3,prod\nb2,dev\n' | cmp -s - "$T/out" ||
    fail "csv, --sort-by=~labels.env,name: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" list --format='value(name.basename())' --sort-by=~name
printf 'c3\nb2\na1\n' | cmp -s - "$T/out" || fail "--sort-by=~name: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" list --format='value(name.basename())' --sort-by=name \
    --limit=2
printf 'a1\nb2\n' | cmp -s - "$T/out" || fail "--limit=2: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" list --filter='labels.env=prod AND state=READY' \
    --format='value(name.basename())'
[ "$(cat "$T/out")" = a1 ] || fail "--filter AND: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" list --filter='(state:stop* OR labels.env=dev) -labels.team:*' \
    --format='value(name.basename())'
[ "$(cat "$T/out")" = b2 ] || fail "--filter OR, -key:*: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" list --filter='name~/[ab][0-9]$ labels.env:(prod dev)' \
    --sort-by=name --format='value(name.basename())'
printf 'a1\nb2\n' | cmp -s - "$T/out" || fail "--filter ~ and list: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" list --zone - --filter='labels.env=PROD' --sort-by=name \
    --format='value(name)'
printf '%s\n' "$P/nodes/a1" "$P/nodes/c3" | cmp -s - "$T/out" ||
    fail "--zone - --filter (= is case-insensitive): $(cat "$T/out")"

# table: the default columns, with attributes; a projection of its own.
expect_rc 0 "$TPUCTL" list --sort-by=name
head -1 "$T/out" | grep -Eq '^NAME +ZONE +ACCELERATOR_TYPE +STATE +HEALTH +RUNTIME_VERSION$' ||
    fail "default table heading: $(head -1 "$T/out")"
expect_rc 0 "$TPUCTL" list --format='table[no-heading](name.basename(),state)' \
    --sort-by=name
printf 'a1  READY\nb2  READY\nc3  STOPPED\n' | cmp -s - "$T/out" ||
    fail "table[no-heading]: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" list \
    --format='table[box,title=Nodes](name.basename():label=NODE,labels.env:sort=1)'
# (what gcloud prints for the same nodes and format)
cat >"$T/want" <<'TBL'
┌─────────────┐
│    Nodes    │
├──────┬──────┤
│ NODE │ ENV  │
├──────┼──────┤
│ b2   │ dev  │
│ a1   │ prod │
│ c3   │ prod │
└──────┴──────┘
TBL
cmp -s "$T/want" "$T/out" || fail "table[box,title]: $(cat "$T/out")"

# --uri: the resources' URIs; --page-size: pageSize on every page.
expect_rc 0 "$TPUCTL" list --uri --sort-by=name --format json
printf 'https://tpu.googleapis.com/v2/%s\n' "$P/nodes/a1" "$P/nodes/b2" \
    "$P/nodes/c3" | cmp -s - "$T/out" || fail "--uri: $(cat "$T/out")"
before=$(emu_requests | wc -l)
expect_rc 0 "$TPUCTL" list --page-size=1 --format='value(name.basename())' \
    --sort-by=name
printf 'a1\nb2\nc3\n' | cmp -s - "$T/out" || fail "--page-size=1: $(cat "$T/out")"
emu_requests | tail -n +$((before + 1)) |
    jq -r 'select(.path | endswith("/nodes")) | .query' >"$T/q"
[ "$(grep -c '^pageSize=1' "$T/q")" -eq 3 ] || fail "pageSize not on 3 pages: $(cat "$T/q")"

# The other list commands take the same flags.
expect_rc 0 "$TPUCTL" accelerator-types list --filter='type~"^v4-(8|16)$"' \
    --sort-by=~type --format='value(type)'
printf 'v4-8\nv4-16\n' | cmp -s - "$T/out" || fail "accelerator-types list: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" versions list --limit=1 --filter='version:base' \
    --format='value(version)'
[ "$(wc -l <"$T/out")" -eq 1 ] || fail "versions list --limit=1: $(cat "$T/out")"
assert_grep base "$T/out"
expect_rc 0 "$TPUCTL" locations list --filter='locationId=us-central2-b' \
    --format='value(locationId)'
[ "$(cat "$T/out")" = us-central2-b ] || fail "locations list: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" operations list --filter='metadata.verb=stop' \
    --format='value(metadata.target.basename())' --limit 5
[ "$(cat "$T/out")" = c3 ] || fail "operations list: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" queued-resources list --filter='state.state=ACTIVE' \
    --sort-by=name --page-size=10 --format='value(name)'
[ ! -s "$T/out" ] || fail "queued-resources list: $(cat "$T/out")"

# Refused at the point of entry: exit 2, one line naming the part and
# the rule, no request sent.
before=$(emu_requests | wc -l)
big=$(awk 'BEGIN { s = "a"; for (i = 0; i < 3000; i++) s = s ".a"; print s }')
for f in 'value(a..b)' "value($big)" 'value(name.nosuch())' 'table[box' \
    'value(a:bogus)' 'csv'; do
	expect_rc 2 "$TPUCTL" list --format "$f"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "--format '$f': $(cat "$T/err")"
	assert_grep "invalid format '" "$T/err"
	[ ! -s "$T/out" ] || fail "stdout for --format '$f'"
done
expect_rc 2 "$TPUCTL" list --format "value($big)"
assert_grep 'a key has at most 64 parts' "$T/err"
expect_rc 2 "$TPUCTL" describe a1 --format 'value(a..b)'
assert_grep 'non-empty key name expected \[value\(a\. \*HERE\* \.b\)\]' "$T/err"
for f in 'state=(READY' 'a=1 AND b=2 OR c=3' 'state=' 'name~[' 'a!=(x y)'; do
	expect_rc 2 "$TPUCTL" list --filter "$f"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "--filter '$f': $(cat "$T/err")"
	assert_grep "invalid filter '" "$T/err"
done
expect_rc 2 "$TPUCTL" list --sort-by 'name,'
assert_grep "invalid sort-by 'name,': non-empty key name expected" "$T/err"
expect_rc 2 "$TPUCTL" list --limit 0
assert_grep "invalid --limit '0'" "$T/err"
expect_rc 2 "$TPUCTL" list --page-size x
assert_grep "invalid --page-size 'x'" "$T/err"
[ "$(emu_requests | wc -l)" -eq "$before" ] || fail "a refused expression sent requests"

# --flatten: one record per worker endpoint, before the filter.
expect_rc 0 "$TPUCTL" create d4 --accelerator-type v4-16 --labels env=test
expect_rc 0 "$TPUCTL" describe d4 --format json
jq -r '.networkEndpoints[] | "d4\t\(.ipAddress)"' "$T/out" >"$T/want"
[ "$(wc -l <"$T/want")" -eq 2 ] || fail "v4-16 without 2 endpoints"
expect_rc 0 "$TPUCTL" list --flatten=networkEndpoints --filter='labels.env=test' \
    --format='value(name.basename(),networkEndpoints.ipAddress)'
cmp -s "$T/want" "$T/out" || fail "--flatten: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" list --flatten=networkEndpoints \
    --filter="networkEndpoints.ipAddress=$(cut -f2 "$T/want" | tail -1)" \
    --format='value(name.basename())'
[ "$(cat "$T/out")" = d4 ] || fail "--flatten then --filter: $(cat "$T/out")"
expect_rc 2 "$TPUCTL" list --flatten='networkEndpoints[0]'
assert_grep "invalid flatten 'networkEndpoints\[0\]': a flatten key is names only" "$T/err"

# tpuctl's old FIELD=VALUE,... filter is gone: a warning says so.
expect_rc 0 "$TPUCTL" list --filter 'state=READY,labels.env=prod' \
    --format='value(name)'
[ ! -s "$T/out" ] || fail "old filter syntax still matched: $(cat "$T/out")"
assert_grep "the FIELD=VALUE,... form is gone" "$T/err"
