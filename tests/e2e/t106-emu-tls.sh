#!/bin/sh
# serve --tls: HTTPS with a generated CA (SAN 127.0.0.1 and localhost),
# curl trusts it with --cacert and refuses it without; the CA and the
# private keys persist (0600) across restarts.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

emu_start --tls
case $TPUCTL_EMULATOR_URL in
https://127.0.0.1:*) ;;
*) fail "TPUCTL_EMULATOR_URL=$TPUCTL_EMULATOR_URL" ;;
esac
[ "$TPUCTL_CA_BUNDLE" = "$(cd "$EMU_DIR" && pwd -P)/ca.pem" ] ||
    fail "TPUCTL_CA_BUNDLE=${TPUCTL_CA_BUNDLE:-unset}"
[ "$(stat -c %a "$EMU_DIR/server-key.pem")" = 600 ] || fail "server key mode"
[ "$(stat -c %a "$EMU_DIR/ca-key.pem")" = 600 ] || fail "CA key mode"
port=${TPUCTL_EMULATOR_URL##*:}

out=$(curl -s --cacert "$TPUCTL_CA_BUNDLE" -H 'Metadata-Flavor: Google' "$TPUCTL_EMULATOR_URL/")
[ "$out" = ok ] || fail "https with the CA: '$out'"
out=$(curl -s --cacert "$TPUCTL_CA_BUNDLE" -H 'Metadata-Flavor: Google' "https://localhost:$port/")
[ "$out" = ok ] || fail "https://localhost with the CA: '$out'"
set +e
curl -s -o /dev/null "$TPUCTL_EMULATOR_URL/"
rc=$?
set -e
[ "$rc" = 60 ] || fail "without the CA: curl exit $rc, want 60"
set +e
curl -s -o /dev/null "http://127.0.0.1:$port/"
rc=$?
set -e
[ "$rc" != 0 ] || fail "plain http worked against --tls"
openssl x509 -in "$EMU_DIR/server.pem" -noout -text >"$T/cert"
assert_grep 'IP Address:127.0.0.1' "$T/cert"
assert_grep 'DNS:localhost' "$T/cert"
openssl verify -CAfile "$TPUCTL_CA_BUNDLE" "$EMU_DIR/server.pem" >/dev/null ||
    fail "server.pem does not chain to ca.pem"

# The metadata server stays plain HTTP (clients never speak TLS to it),
# on its own port.
[ "$GCE_METADATA_HOST" != "127.0.0.1:$port" ] || fail "metadata on the TLS port"
out=$(curl -s -H 'Metadata-Flavor: Google' "http://$GCE_METADATA_HOST/computeMetadata/v1/project/project-id")
[ "$out" = tpuctl-emu ] || fail "plain-HTTP metadata with --tls: '$out'"

# inject works over https (the CLI reads TPUCTL_CA_BUNDLE from DIR/env).
emu_inject return-503
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$TPUCTL_CA_BUNDLE" \
    -H 'Metadata-Flavor: Google' "$TPUCTL_EMULATOR_URL/")
[ "$code" = 503 ] || fail "fault over https gave $code"

sum=$(cksum <"$EMU_DIR/ca.pem")
kill -TERM "$EMU_PID"
wait "$EMU_PID" || fail "stop failed"
EMU_PID=
emu_start --tls
[ "$(cksum <"$EMU_DIR/ca.pem")" = "$sum" ] || fail "CA regenerated on restart"
out=$(curl -s --cacert "$TPUCTL_CA_BUNDLE" -H 'Metadata-Flavor: Google' "$TPUCTL_EMULATOR_URL/")
[ "$out" = ok ] || fail "https after restart: '$out'"
