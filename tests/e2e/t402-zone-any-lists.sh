#!/bin/sh
# Issue 20: "accelerator-types list --zone -" and "versions list --zone -"
# are list commands like "list --zone -": every zone of the project's
# locations, one list call per zone, and a ZONE column.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

expect_rc 0 "$TPUCTL" locations list --format 'value(locationId)'
nzones=$(wc -l <"$T/out")
[ "$nzones" -gt 1 ] || fail "emulator has $nzones zones"

before=$(emu_requests | wc -l)
expect_rc 0 "$TPUCTL" accelerator-types list --zone -
assert_grep '^ACCELERATOR_TYPE +ZONE$' "$T/out"
assert_grep '^v4-32 +us-central2-b$' "$T/out"
assert_grep '^v5litepod-16 +us-west4-a$' "$T/out"
assert_no_grep '^v5litepod-16 +us-central2-b$' "$T/out"
calls=$(emu_requests | tail -n +$((before + 1)) |
    grep -c '"path": *"/v2/projects/tpuctl-emu/locations/[^/"]*/acceleratorTypes')
[ "$calls" -eq "$nzones" ] || fail "$calls acceleratorTypes calls for $nzones zones"

# One zone: as before, no ZONE column.
expect_rc 0 "$TPUCTL" accelerator-types list --zone us-central2-b
assert_grep '^ACCELERATOR_TYPE$' "$T/out"
assert_grep '^v4-32$' "$T/out"

# --filter and JSON over every zone: the name carries the zone.
expect_rc 0 "$TPUCTL" accelerator-types list --zone - --filter type=v5litepod-16 \
    --format 'value(name)'
assert_grep '^projects/tpuctl-emu/locations/us-west4-a/acceleratorTypes/v5litepod-16$' "$T/out"
assert_no_grep 'us-central2-b' "$T/out"

expect_rc 0 "$TPUCTL" versions list --zone -
assert_grep '^VERSION +ZONE$' "$T/out"
assert_grep '^tpu-ubuntu2204-base +us-central2-b$' "$T/out"
assert_grep '^tpu-ubuntu2204-base +us-west4-a$' "$T/out"
expect_rc 0 "$TPUCTL" versions list --zone - --format json
python3 - "$T/out" <<'PY' || fail "versions list --zone - json"
import json, sys
items = json.load(open(sys.argv[1]))
zones = {i["name"].split("/")[3] for i in items}
assert {"us-central2-b", "us-west4-a"} <= zones, zones
PY
# --framework (local) is unchanged.
expect_rc 0 "$TPUCTL" versions list --framework jax
assert_grep '^FRAMEWORK' "$T/out"

# A zone that is not one is still refused before any request.
expect_rc 2 "$TPUCTL" versions list --zone nowhere-1
