#!/bin/sh
# Issue 17: a node whose metadata has enable-oslogin=TRUE (any case) takes
# SSH keys only from the OS Login API: the SSH commands (ssh, also
# --dry-run, scp, run, forward, a queued resource's node) are no longer
# refused: they import the key there (t144 checks the user) and never
# patch the node's metadata; enable-oslogin=FALSE still goes through
# ssh-keys.  (install takes the same path, sshcmd_prepare; not run here:
# it needs a package index.)
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start --set tpu.create_ms=50 --set tpu.qr_accept_ms=20 \
    --set tpu.qr_provision_ms=50 --set tpu.update_ms=0 \
    --set fleet.key_delay_ms=200

KEY="$T/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$KEY" || fail "ssh-keygen failed"
expect_rc 0 "$TPUCTL" create o1 --accelerator-type v4-8 \
    --metadata enable-oslogin=TRUE
expect_rc 0 "$TPUCTL" create o2 --accelerator-type v4-8 --async \
    --metadata enable-oslogin=true
expect_rc 0 "$TPUCTL" queued-resources create q1 --accelerator-type v4-8 \
    --node-id qn1 --metadata enable-oslogin=True
i=0
until "$TPUCTL" describe qn1 >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "qn1 not created"
	sleep 0.1
done
printf 'x\n' >"$T/f"
i=0
until "$TPUCTL" describe o2 --format 'value(state)' 2>/dev/null | grep -q READY; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "o2 not READY"
	sleep 0.1
done
before=$(emu_requests | jq -s '[.[] | select(.method == "PATCH")] | length')

expect_rc 0 "$TPUCTL" ssh o1 --ssh-key-file "$KEY" -- true
expect_rc 0 "$TPUCTL" --dry-run ssh o1 --ssh-key-file "$KEY" -- true
assert_grep "^would import $KEY.pub into the OS Login profile of .* \(node 'o1' has enable-oslogin=TRUE\)" "$T/out"
expect_rc 0 "$TPUCTL" ssh o2 --worker=all --ssh-key-file "$KEY" -- true
expect_rc 0 "$TPUCTL" scp --ssh-key-file "$KEY" "$T/f" o1:/tmp/f
expect_rc 0 "$TPUCTL" run o1 --ssh-key-file "$KEY" -- true
expect_rc 0 "$TPUCTL" ssh q1 --ssh-key-file "$KEY" -- true
# forward to an OS Login node: the tunnel carries a request through
RPORT=$(free_port)
LPORT=$(free_port)
mkdir "$T/www" && echo "oslogin forward $$" >"$T/www/index.txt"
(cd "$T/www" && exec python3 -m http.server --bind 127.0.0.1 "$RPORT") \
    >"$T/http.log" 2>&1 &
HTTP_PID=$!
"$TPUCTL" forward --ssh-key-file "$KEY" o1 "$LPORT:localhost:$RPORT" \
    >"$T/fwd.out" 2>"$T/fwd.err" &
FWD_PID=$!
forward_wait $FWD_PID "$T/fwd.err"
n=0
until body=$(curl -sS --noproxy '*' "http://127.0.0.1:$LPORT/index.txt" 2>/dev/null); do
	n=$((n + 1))
	[ $n -lt 50 ] || fail "curl through the forward failed: $(cat "$T/fwd.err")"
	sleep 0.2
done
[ "$body" = "oslogin forward $$" ] || fail "forward carried '$body'"
kill -INT $FWD_PID
wait $FWD_PID || true
kill $HTTP_PID
wait $HTTP_PID 2>/dev/null || true
after=$(emu_requests | jq -s '[.[] | select(.method == "PATCH")] | length')
[ "$after" = "$before" ] || fail "OS Login nodes got $((after - before)) PATCHes"
expect_rc 0 "$TPUCTL" describe o1 --format json
jq -e '.metadata["ssh-keys"] == null' "$T/out" >/dev/null ||
    fail "ssh-keys written to o1: $(jq -c .metadata "$T/out")"

# FALSE is not OS Login: --dry-run goes on and prints the plan
expect_rc 0 "$TPUCTL" update o2 --metadata enable-oslogin=FALSE
expect_rc 0 "$TPUCTL" --dry-run ssh o2 --ssh-key-file "$KEY" -- true
assert_no_grep "enable-oslogin" "$T/err"
