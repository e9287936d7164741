#!/bin/sh
# Helpers of the Cloud TPU API tests (t130-t159): curl calls with the
# emulator's token, operation polling.
# Sourced after lib.sh by the tests that use it.
PROJECT=
ZONE=us-central2-b
P=
BASE=
CODE=

# tpu_setup: the emulator's base URL and project, from its env file.
tpu_setup() {
	PROJECT=${CLOUDSDK_CORE_PROJECT:-}
	[ -n "$PROJECT" ] || fail "the emulator env has no CLOUDSDK_CORE_PROJECT"
	P="projects/$PROJECT/locations/$ZONE"
	BASE=${CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU:-}
	[ -n "$BASE" ] || fail "the emulator env has no CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU"
	BASE=${BASE%/}
	[ -s "$EMU_DIR/access-token" ] || fail "no $EMU_DIR/access-token"
}

# api METHOD PATH [BODY]: the reply body in $T/resp, the status in $CODE.
api() {
	m=$1
	u=$2
	shift 2
	if [ $# -gt 0 ]; then
		CODE=$(curl -sS --noproxy '*' -o "$T/resp" -w '%{http_code}' \
		    -X "$m" -H "Authorization: Bearer $(cat "$EMU_DIR/access-token")" \
		    -H 'Content-Type: application/json' --data-binary "$1" \
		    "$BASE$u") || fail "curl $m $u failed"
	else
		CODE=$(curl -sS --noproxy '*' -o "$T/resp" -w '%{http_code}' \
		    -X "$m" -H "Authorization: Bearer $(cat "$EMU_DIR/access-token")" \
		    "$BASE$u") || fail "curl $m $u failed"
	fi
}

# expect_api CODE METHOD PATH [BODY]
expect_api() {
	want=$1
	shift
	api "$@"
	if [ "$CODE" != "$want" ]; then
		cat "$T/resp" >&2
		fail "$1 $2 -> HTTP $CODE, want $want"
	fi
}

# jr FILTER: jq -r over the last reply.
jr() {
	jq -cr "$1" "$T/resp"
}

# expect_jq FILTER VALUE: the last reply's FILTER is VALUE.
expect_jq() {
	got=$(jr "$1")
	[ "$got" = "$2" ] || {
		cat "$T/resp" >&2
		fail "$1 is '$got', want '$2'"
	}
}

# wait_op NAME: poll the operation until done (30 s); it stays in $T/resp.
wait_op() {
	wait_state "/v2/$1" true '.done // false'
}

# wait_state PATH STATE [FILTER]: poll a resource until FILTER is STATE.
wait_state() {
	i=0
	while :; do
		expect_api 200 GET "$1"
		[ "$(jr "${3:-.state}")" = "$2" ] && return 0
		i=$((i + 1))
		[ $i -lt 300 ] || fail "$1: ${3:-.state} is $(jr "${3:-.state}") after 30 s, want $2"
		sleep 0.1
	done
}

# create_node ID BODY: create and wait until the operation is done.
create_node() {
	expect_api 200 POST "/v2/$P/nodes?nodeId=$1" "$2"
	wait_op "$(jr .name)"
}

# emu_event JSON: POST a node event to the emulator's control endpoint.
emu_event() {
	CODE=$(curl -sS --noproxy '*' -o "$T/resp" -w '%{http_code}' \
	    -X POST -H 'Content-Type: application/json' --data-binary "$1" \
	    "$BASE/_emulator/events") || fail "curl events failed"
}
