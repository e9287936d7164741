#!/bin/sh
# RELIABILITY.md S6, no metadata or label injection: a user name holding
# a newline (one ssh-keys line would become two keys, e.g. for root) is
# refused, so are a CR in ssh-keys, a newline in a metadata key and
# labels outside the rule (4F), all with exit 2 and no request to the
# API; and metadata values made to break hand-built JSON (quotes,
# backslashes, "\u0022", braces, unicode, a 64 KiB value) round-trip
# byte for byte through create and describe (bodies are built by cJSON).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

nl=$(printf 'a\nroot')
expect_rc 2 "$TPUCTL" ssh "$nl@s6" -- true
assert_grep 'user' "$T/err"
expect_rc 2 "$TPUCTL" create s6 --accelerator-type v4-8 \
    --metadata "ssh-keys=u:ssh-ed25519 AAAA u$(printf '\r')root:ssh-ed25519 BBBB r"
assert_grep 'carriage return' "$T/err"
expect_rc 2 "$TPUCTL" create s6 --accelerator-type v4-8 --metadata "$nl=1"
expect_rc 2 "$TPUCTL" create s6 --accelerator-type v4-8 \
    --labels "$(printf 'k=a\nb')"
expect_rc 2 "$TPUCTL" create s6 --accelerator-type v4-8 --labels 'k=a",x:"y'
[ "$(emu_tpu_mutations)" = "[]" ] ||
    fail "a refused value reached the API: $(emu_tpu_mutations)"
if emu_requests | grep -q '"path": *"/v2/'; then
	fail "a refused value caused a TPU API request"
fi

# Values that a sprintf'd body would break: they come back unchanged.
# shellcheck disable=SC2016 # $(id) is text of the script
printf '#!/bin/sh\necho "q\\"uote" \\\\ \\u0022 }{ ] ünï \t$(id)\n' \
    >"$T/script"
head -c 49152 /dev/urandom | od -An -tx1 | tr -d '\n' >>"$T/script"
expect_rc 0 "$TPUCTL" create s6 --accelerator-type v4-8 \
    --metadata-from-file "startup-script=$T/script" \
    --metadata-raw --metadata 'team=a"b\c}{'
expect_rc 0 "$TPUCTL" describe s6 --format json
jq -j '.metadata["startup-script"]' "$T/out" >"$T/back"
cmp -s "$T/script" "$T/back" || fail "startup-script changed on the way"
[ "$(jq -r .metadata.team "$T/out")" = 'a"b\c}{' ] ||
    fail "metadata team: $(jq -c .metadata.team "$T/out")"
[ "$(jq '.metadata | length' "$T/out")" -eq 2 ] ||
    fail "metadata keys: $(jq -c '.metadata | keys' "$T/out")"
echo "ok: $TEST_NAME"
