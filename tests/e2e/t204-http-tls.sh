#!/bin/sh
# TLS (E1, E2, E3, E8): the emulator over https is trusted only with its CA
# from TPUCTL_CA_BUNDLE or --ca-file; CURL_CA_BUNDLE is ignored (libcurl
# does not read it) with a warning; an unknown CA fails with "certificate
# verify failed" and is not retried; a certificate for another host name
# fails; a clock ten years back names the system clock.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# faketime preloads a library: let an ASan build accept that
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

emu_start --tls
P=$CLOUDSDK_CORE_PROJECT
export GCE_METADATA_HOST=127.0.0.1:9
CA=$TPUCTL_CA_BUNDLE
unset TPUCTL_CA_BUNDLE
TOK="$EMU_DIR/access-token"
case $CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU in
https://*) ;;
*) fail "not https: $CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU" ;;
esac
LOC="v2/projects/$P/locations"

# E3: the CA from TPUCTL_CA_BUNDLE, or --ca-file; the service account's
# token exchange goes over https too.
expect_rc 0 env TPUCTL_CA_BUNDLE="$CA" "$TPUCTL" api "$LOC"
expect_rc 0 "$TPUCTL" --ca-file "$CA" api "$LOC"
expect_rc 0 "$TPUCTL" --ca-file "$CA" auth print-access-token
# --ca-file beats TPUCTL_CA_BUNDLE (a flag is the highest layer).
expect_rc 0 env TPUCTL_CA_BUNDLE="$T/nope.pem" "$TPUCTL" --ca-file "$CA" api "$LOC"

# E1: without it, a clear failure, no retry, nothing reaches the server.
n=$(emu_requests | wc -l)
expect_rc 1 "$TPUCTL" -v --access-token-file "$TOK" api "$LOC"
assert_grep 'certificate verify failed' "$T/err"
assert_grep 'curl 60' "$T/err"
assert_no_grep 'retrying' "$T/err"
[ "$(emu_requests | wc -l)" -eq "$n" ] || fail "E1: a request got through"
# CURL_CA_BUNDLE is not honoured, and tpuctl says so
expect_rc 1 env CURL_CA_BUNDLE="$CA" "$TPUCTL" --access-token-file "$TOK" api "$LOC"
assert_grep 'CURL_CA_BUNDLE is ignored' "$T/err"
# a missing CA file is a usage error, before any request
expect_rc 2 "$TPUCTL" --ca-file "$T/nope.pem" --access-token-file "$TOK" api "$LOC"
assert_grep "nope.pem" "$T/err"

# E8: a clock ten years back makes the certificate "not yet valid".
expect_rc 1 env FAKETIME_DONT_FAKE_MONOTONIC=1 faketime -f '-3650d' \
    "$TPUCTL" --ca-file "$CA" --access-token-file "$TOK" api "$LOC"
assert_grep 'system clock' "$T/err"

# E2: a certificate from a trusted CA, but for another host name.
cd "$T"
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca2.key -out ca2.pem \
    -days 2 -subj /CN=test-ca2 >/dev/null 2>&1
openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr \
    -subj /CN=other.example >/dev/null 2>&1
printf 'subjectAltName=DNS:other.example\n' >ext.cnf
openssl x509 -req -in srv.csr -CA ca2.pem -CAkey ca2.key -CAcreateserial \
    -out srv.pem -days 2 -extfile ext.cnf >/dev/null 2>&1
cd - >/dev/null
port=$((20000 + $$ % 20000))
timeout 60 openssl s_server -accept "127.0.0.1:$port" -cert "$T/srv.pem" \
    -key "$T/srv.key" -www -quiet >"$T/s_server.log" 2>&1 &
spid=$!
i=0
until curl -s -o /dev/null --cacert "$T/ca2.pem" --resolve "other.example:$port:127.0.0.1" \
    "https://other.example:$port/"; do
	i=$((i + 1))
	[ $i -lt 50 ] || fail "openssl s_server did not start"
	sleep 0.1
done
expect_rc 1 env CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU="https://127.0.0.1:$port/" \
    "$TPUCTL" --ca-file "$T/ca2.pem" --access-token-file "$TOK" api "$LOC"
assert_grep 'curl 60' "$T/err"
assert_grep '127.0.0.1|subject name|host name' "$T/err"
kill "$spid" 2>/dev/null || true
