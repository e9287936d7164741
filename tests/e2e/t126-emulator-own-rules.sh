#!/bin/sh
# t126: the emulator judges raw requests by Google's documented rules
# (emulator/validate.c), not by tpuctl's: it stores any string under
# metadata ssh-keys (Node.metadata is a map of strings, tpu.v2.json)
# that tpuctl's own line format refuses, takes international label
# characters and queued resource ids of tpu.v2.json's pattern, and
# refuses what Google refuses although tpuctl lets it through (a
# 513-character description, 512 KB of metadata, a g00gle bucket, an
# object under .well-known/acme-challenge/), with Google's error shapes.
# The rules and their sources: tests/unit/check_emu_validate.c.

# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_tpu.sh
. "$(dirname "$0")/lib_tpu.sh"

# shellcheck disable=SC2119
emu_start
tpu_setup
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"

V4='"acceleratorType":"v4-8","runtimeVersion":"tpu-vm-v4-base"'

# refused CODE-PATH BODY WORD: 400 INVALID_ARGUMENT in Google's shape,
# the message naming WORD.
refused() {
	expect_api 400 POST "/v2/$P/$1" "$2"
	expect_jq .error.code 400
	expect_jq .error.status INVALID_ARGUMENT
	expect_jq ".error.message | contains(\"$3\")" true
}

# --- metadata: a map of strings ---------------------------------------
# Any text under ssh-keys is stored as sent; tpuctl refuses the same.
odd='not an ssh key line: just text, with spaces'
expect_rc 2 "$TPUCTL" create tp --accelerator-type v4-8 --metadata "ssh-keys=$odd"
expect_api 200 POST "/v2/$P/nodes?nodeId=odd" \
    "{$V4,\"metadata\":{\"ssh-keys\":\"$odd\",\"user_Key-1\":\"x\"}}"
wait_op "$(jr .name)"
expect_api 200 GET "/v2/$P/nodes/odd"
expect_jq '.metadata["ssh-keys"]' "$odd"
expect_jq .state READY
# CR LF inside ssh-keys (tpuctl: no CR) is a string like any.
expect_api 200 POST "/v2/$P/nodes?nodeId=crlf" \
    "{$V4,\"metadata\":{\"ssh-keys\":\"a:ssh-ed25519 AAAA\\r\\nb:ssh-ed25519 BBBB\"}}"
wait_op "$(jr .name)"
expect_api 200 GET "/v2/$P/nodes/crlf"
expect_jq '.metadata["ssh-keys"] | test("AAAA\r\nb:")' true
# nodes.patch takes the same.
expect_api 200 PATCH "/v2/$P/nodes/odd?updateMask=metadata" \
    '{"metadata":{"ssh-keys":"anything at all"}}'
wait_op "$(jr .name)"
expect_api 200 GET "/v2/$P/nodes/odd"
expect_jq '.metadata["ssh-keys"]' "anything at all"

# Sizes: a value of 256 KiB is taken, one byte more is not; keys and
# values together stay under 512 KB.
mdbody() { # mdbody FILE KEY=BYTES...
	f=$1
	shift
	python3 - "$@" >"$f" <<'PY'
import json, sys
md = {}
for a in sys.argv[1:]:
    k, n = a.split("=")
    md[k] = "x" * int(n)
print(json.dumps({"acceleratorType": "v4-8",
                  "runtimeVersion": "tpu-vm-v4-base", "metadata": md}))
PY
}
mdbody "$T/md1" k=262144
expect_api 200 POST "/v2/$P/nodes?nodeId=md1" "@$T/md1"
wait_op "$(jr .name)"
mdbody "$T/md2" k=262145
refused "nodes?nodeId=md2" "@$T/md2" "262144"
mdbody "$T/md3" a=262144 b=262144
refused "nodes?nodeId=md3" "@$T/md3" "less than 524288"
refused "nodes?nodeId=md4" "{$V4,\"metadata\":{\"bad key\":\"x\"}}" "metadata key 'bad key'"
refused "nodes?nodeId=md5" "{$V4,\"metadata\":{\"k\":1}}" "must be a string"

# --- labels -------------------------------------------------------------
expect_api 200 POST "/v2/$P/nodes?nodeId=intl" \
    "{$V4,\"labels\":{\"ключ\":\"значение\",\"日本\":\"東京\"}}"
wait_op "$(jr .name)"
expect_api 200 GET "/v2/$P/nodes/intl"
expect_jq '.labels["ключ"]' значение
many=$(python3 -c 'import json; print(json.dumps({"k%d" % i: "v" for i in range(65)}))')
refused "nodes?nodeId=l65" "{$V4,\"labels\":$many}" "at most 64"
refused "nodes?nodeId=lcap" "{$V4,\"labels\":{\"Кл\":\"x\"}}" "label key"

# --- names, tags, description ------------------------------------------
long=$(printf 'a%.0s' $(seq 64))
refused "nodes?nodeId=$long" "{$V4}" "RFC 1035"
refused "nodes?nodeId=tg" "{$V4,\"tags\":[\"Bad Tag\"]}" "node.tags"
d512=$(printf 'd%.0s' $(seq 512))
expect_api 200 PATCH "/v2/$P/nodes/intl?updateMask=description" "{\"description\":\"$d512\"}"
wait_op "$(jr .name)"
expect_api 400 PATCH "/v2/$P/nodes/intl?updateMask=description" "{\"description\":\"${d512}d\"}"
expect_jq '.error.message | contains("at most 512")' true

# Queued resource ids follow ^[A-Za-z0-9_.~+%-]+$ (tpu.v2.json); tpuctl
# asks for an RFC 1035 name.
expect_api 200 POST "/v2/$P/queuedResources?queuedResourceId=Qr.1~a" \
    "{\"tpu\":{\"nodeSpec\":[{\"parent\":\"$P\",\"nodeId\":\"qn\",\"node\":{$V4}}]}}"
expect_api 200 GET "/v2/$P/queuedResources/Qr.1~a"
refused "queuedResources?queuedResourceId=bad!id" \
    "{\"tpu\":{\"nodeSpec\":[{\"parent\":\"$P\",\"nodeId\":\"qn2\",\"node\":{$V4}}]}}" \
    "queued_resource_id"
# A multislice's node names prefix-N are node ids: 61 + "-10" is 64.
p61=$(printf 'p%.0s' $(seq 61))
refused "queuedResources?queuedResourceId=ms" \
    "{\"tpu\":{\"nodeSpec\":[{\"parent\":\"$P\",\"multisliceParams\":{\"nodeCount\":11,\"nodeIdPrefix\":\"$p61\"},\"node\":{$V4}}]}}" \
    "node_id_prefix"
# Without nodeIdPrefix the queued resource id is the prefix (tpu.v2.json);
# nodeCount "needs to be > 1".
expect_api 200 POST "/v2/$P/queuedResources?queuedResourceId=dflt" \
    "{\"tpu\":{\"nodeSpec\":[{\"parent\":\"$P\",\"multisliceParams\":{\"nodeCount\":2},\"node\":{$V4}}]}}"
wait_state "/v2/$P/queuedResources/dflt" ACTIVE .state.state
expect_jq '.tpu.nodeSpec[0].multisliceParams | has("nodeIdPrefix")' false
expect_api 200 GET "/v2/$P/nodes/dflt-1"
refused "queuedResources?queuedResourceId=one" \
    "{\"tpu\":{\"nodeSpec\":[{\"parent\":\"$P\",\"multisliceParams\":{\"nodeCount\":1,\"nodeIdPrefix\":\"o\"},\"node\":{$V4}}]}}" \
    "node_count"

# --- Cloud Storage --------------------------------------------------------
# gcserr WHAT: a 400 in GCS's shape with reason "invalid".
gcserr() {
	want 400 "$1"
	[ "$(jf .error.code)" = 400 ] || fail "$1: error.code $(jf .error.code)"
	[ "$(jf '.error.errors[0].reason')" = invalid ] ||
	    fail "$1: reason $(jf '.error.errors[0].reason')"
}
for b in my-g00gle-data goog-data 192.168.5.4 ab My-Bucket -bucket; do
	req POST "$GCS/storage/v1/b?project=$PROJECT" \
	    -H 'Content-Type: application/json' --data-binary "{\"name\":\"$b\"}"
	gcserr "bucket '$b'"
done
mkbucket a_b-c.d
req GET "$GCS/storage/v1/b/a_b-c.d"
want 200 "get a_b-c.d"

e=$(uri .well-known/acme-challenge/token)
req POST "$GCS/upload/storage/v1/b/a_b-c.d/o?uploadType=media&name=$e" --data-binary x
gcserr "an object under .well-known/acme-challenge/"
jf .error.message | grep -q acme-challenge || fail "message: $(jf .error.message)"
e=$(uri .well-known/acme-challenge)
req POST "$GCS/upload/storage/v1/b/a_b-c.d/o?uploadType=media&name=$e" --data-binary x
want 200 "the prefix without its '/'"
req POST "$GCS/upload/storage/v1/b/a_b-c.d/o?uploadType=resumable&name=x%0Ay" \
    -H 'Content-Type: application/json' --data-binary '{}'
gcserr "a resumable upload of a name with LF"
# selfLink and the resumable Location use the emulator's own encoding.
e=$(uri 'a b/c+d')
req POST "$GCS/upload/storage/v1/b/a_b-c.d/o?uploadType=media&name=$e" --data-binary x
want 200 "upload 'a b/c+d'"
jf .selfLink | grep -qF "/o/a%20b%2Fc%2Bd" || fail "selfLink $(jf .selfLink)"
req POST "$GCS/upload/storage/v1/b/a_b-c.d/o?uploadType=resumable&name=$e" \
    -H 'Content-Type: application/json' --data-binary '{}'
want 200 "start a resumable upload"
hdr Location | grep -qF "name=a%20b%2Fc%2Bd&" || fail "Location $(hdr Location)"

echo "ok: $TEST_NAME"
