#!/bin/sh
# Every recorded real Google exchange of the shared API samples
# (TPU v2 node CRUD, GCS bucket CRUD, the gcsfs cassettes) replayed
# against the emulator by tests/interop/replay.js: the same status class
# and every recorded response field with the same JSON type. A tampered
# recording (an extra field, a changed type, another status class) must
# be reported, so the comparison itself is checked too.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

S=${TPUCTL_API_SAMPLES:-$SRCDIR/tests/interop/samples}
[ -f "$S/tpu_v2_node_crud.kcc_http.log" ] ||
    fail "no recorded samples in $S (set TPUCTL_API_SAMPLES)"

emu_start --set tpu.create_ms=200 --set tpu.delete_ms=200 --set tpu.update_ms=100
tok=$(cat "$EMU_DIR/access-token")
# The gcsfs recordings use an existing bucket "gcsfs-testing".
code=$(curl -s -o "$T/b.json" -w '%{http_code}' -X POST \
    -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' \
    -d '{"name":"gcsfs-testing"}' \
    "$TPUCTL_EMULATOR_URL/storage/v1/b?project=$CLOUDSDK_CORE_PROJECT")
[ "$code" = 200 ] || fail "bucket gcsfs-testing: $code $(cat "$T/b.json")"

replay() {
	EMU_URL=$TPUCTL_EMULATOR_URL EMU_TOKEN=$tok \
	    EMU_PROJECT=$CLOUDSDK_CORE_PROJECT \
	    node "$SRCDIR/tests/interop/replay.js" "$@"
}

replay "$S"/*.kcc_http.log "$S"/gcs_*.gcsfs.json >"$T/out" 2>"$T/err" || {
	cat "$T/out" "$T/err" >&2
	fail "the emulator differs from the recorded exchanges"
}
assert_no_grep '^FAIL' "$T/out"
n=$(grep -c '^ok ' "$T/out")
[ "$n" -ge 80 ] || fail "only $n exchanges replayed: $(cat "$T/out")"
assert_grep '^ok   tpu_v2_node_crud.kcc_http.log#7 GET .*/operations/' "$T/out"
assert_grep '^ok   gcs_resumable_chunked_upload.gcsfs.json#4 POST .* \(308\)' "$T/out"
assert_grep '^ok   gcs_bucket_crud.kcc_http.log#3 DELETE ' "$T/out"

# The comparison catches differences: a recorded field the emulator does
# not serve, a different JSON type, a different status class.
jq '.[3].response.body = "{\"kind\":\"storage#object\",\"bogusField\":1}"' \
    "$S/gcs_rewrite_copy.gcsfs.json" >"$T/extra.gcsfs.json"
jq '.[0].response.body = "{\"kind\":\"storage#objects\",\"items\":{}}"' \
    "$S/gcs_rewrite_copy.gcsfs.json" >"$T/type.gcsfs.json"
sed '0,/^200 OK/s//404 Not Found/' "$S/tpu_v2_node_crud.kcc_http.log" \
    >"$T/status.kcc_http.log"
expect_rc 1 replay "$T/extra.gcsfs.json"
assert_grep '^FAIL extra.gcsfs.json#3 .*\.bogusField: missing' "$T/out"
expect_rc 1 replay "$T/type.gcsfs.json"
assert_grep '^FAIL type.gcsfs.json#0 .*\.items: object recorded, array served' "$T/out"
expect_rc 1 replay "$T/status.kcc_http.log"
assert_grep '^FAIL status.kcc_http.log#0 POST .*status 200, recorded 404' "$T/out"
