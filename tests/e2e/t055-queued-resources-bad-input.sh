#!/bin/sh
# queued-resources bad input: every bad value (ids, counts, prefixes,
# tiers, reservations, durations, RFC 3339 times, conflicting flags, node
# flags) exits 2 with a one-line message and sends nothing; then a valid
# queueing policy goes through as given, and list --format json is the
# API's JSON.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_tpu.sh
. "$(dirname "$0")/lib_tpu.sh"
emu_start
tpu_setup

before=$(emu_requests | wc -l)
bad() {
	expect_rc 2 "$TPUCTL" queued-resources "$@"
	[ "$(wc -l <"$T/err")" -eq 1 ] ||
	    fail "'$*' printed more than one line: $(cat "$T/err")"
}
# bad_msg PATTERN ARGS...: also check what the message says.
bad_msg() {
	pat=$1
	shift
	bad "$@"
	assert_grep "$pat" "$T/err"
}
A="--accelerator-type v4-8"
# shellcheck disable=SC2086 # $A is two words on purpose
{
	for id in Bad 1q q- q_1 '' "$(printf 'q%.0s' $(seq 64))"; do
		bad create $A --node-id n1 -- "$id"
	done
	bad_msg 'pass --node-id ID' create q $A
	bad_msg 'names a single node' create q $A --node-id n --node-count 2
	for c in 0 1 257 x 2x -3; do
		bad_msg "invalid --node-count '$c'" create q $A --node-count "$c"
	done
	bad_msg 'goes with --node-count' create q $A --node-prefix p
	bad create q $A --node-count 2 --node-prefix Bad
	bad_msg 'longer than 63' create q $A --node-count 10 \
	    --node-prefix "$(printf 'p%.0s' $(seq 62))"
	bad create q $A --node-id Node1
	bad_msg 'exclude each other' create q $A --node-id n --spot --guaranteed
	bad create q $A --node-id n --spot --reserved
	bad create q $A --node-id n --guaranteed --reserved
	for t in --spot --guaranteed --best-effort '--provisioning-model spot' \
	    '--provisioning-model flex-start'; do
		# shellcheck disable=SC2086
		bad_msg 'is reserved capacity: it excludes' create q $A \
		    --node-id n --reservation r $t
	done
	for r in 'bad name' R1 projects/x/locations/us-central2-b/reservations/r \
	    projects/tpuctl-emu/locations/zz/reservations/r \
	    projects/tpuctl-emu/locations/us-central2-b/reservations/r/x; do
		bad_msg 'invalid --reservation' create q $A --node-id n \
		    --reserved --reservation "$r"
	done
	bad_msg 'goes with --guaranteed' create q $A --node-id n --min-duration 1h
	bad create q $A --node-id n --guaranteed --min-duration 0
	for d in 5x 0 -1s ''; do
		bad create q $A --node-id n --valid-until-duration "$d"
		bad create q $A --node-id n --valid-after-duration "$d"
	done
	for t in yesterday 2026-13-01T00:00:00Z 2027-02-30T00:00:00Z \
	    '2027-12-01 10:00:00Z' 2027-12-01T10:00:00 2027-12-01T25:00:00Z \
	    2027-12-01T10:00:00+5:00 2027-12-01T10:00:00.Z; do
		bad_msg 'RFC 3339' create q $A --node-id n --valid-until-time "$t"
		bad_msg 'RFC 3339' create q $A --node-id n --valid-after-time "$t"
	done
	bad_msg 'in the past' create q $A --node-id n \
	    --valid-until-time 2020-01-01T00:00:00Z
	bad_msg 'exclude each other' create q $A --node-id n \
	    --valid-until-duration 1h --valid-until-time 2099-01-01T00:00:00Z
	bad_msg 'exclude each other' create q $A --node-id n \
	    --valid-after-duration 1h --valid-after-time 2099-01-01T00:00:00Z
	bad_msg 'would expire' create q $A --node-id n \
	    --valid-after-duration 2h --valid-until-duration 1h
	bad create q --accelerator-type v4-7 --node-id n
	bad create q --type v5p --topology 2x2 --node-id n
	bad_msg 'missing slice shape' create q --node-id n
	bad_msg 'does not offer v4' create q $A --node-id n --zone us-west4-a
	bad create q $A --node-id n --zones us-central2-b,bad
	bad create q $A --node-id n --zone -
	bad create q $A --node-id n --timeout 0
	bad_msg 'reserved for tpuctl' create q $A --node-id n \
	    --labels tpuctl-run-id=x
	bad create q $A --node-id n --metadata no-such-key=1
	bad create q $A --node-id n --data-disk mode=read-only
	bad describe Bad
	bad delete ok Bad
	bad reset -- -x
	bad list --filter state=
	bad delete q --timeout 5x
}
# Command-line mistakes print the usage too.
expect_rc 2 "$TPUCTL" queued-resources describe q --force
assert_grep 'usage: tpuctl queued-resources describe' "$T/err"
expect_rc 2 "$TPUCTL" queued-resources create q1 q2 --node-id n --accelerator-type v4-8
expect_rc 2 "$TPUCTL" queued-resources frobnicate
after=$(emu_requests | wc -l)
[ "$before" -eq "$after" ] ||
    fail "bad input reached the emulator: $(emu_requests | tail -n $((after - before)))"

# A valid policy is sent as given: times as RFC 3339, durations in seconds.
until=$(date -u -d '+3 hours' +%Y-%m-%dT%H:%M:%SZ)
# shellcheck disable=SC2086
expect_rc 0 "$TPUCTL" queued-resources create qv $A --node-id v1 \
    --valid-after-duration 1h30m --valid-until-time "$until" \
    --spot --async
expect_rc 0 "$TPUCTL" queued-resources describe qv --format json
python3 - "$T/out" "$until" <<'PY' || fail "the queueing policy"
import json, sys
q = json.load(open(sys.argv[1]))
assert q["queueingPolicy"] == {"validUntilTime": sys.argv[2],
    "validAfterDuration": "5400s"}, q["queueingPolicy"]
assert q["spot"] == {}, q
PY
# list --format json is the API's list.
expect_rc 0 "$TPUCTL" queued-resources list --format json
expect_api 200 GET "/v2/$P/queuedResources"
python3 - "$T/out" "$T/resp" <<'PY' || fail "list --format json is not the API's JSON"
import json, sys
mine = json.load(open(sys.argv[1]))
api = json.load(open(sys.argv[2]))["queuedResources"]
for q in mine + api:
    q["state"].pop("state", None)
    for k in list(q["state"]):
        q["state"].pop(k)
assert mine == api, (mine, api)
PY
expect_rc 0 "$TPUCTL" queued-resources delete qv --force
