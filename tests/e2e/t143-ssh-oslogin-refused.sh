#!/bin/sh
# Issue 17: a node whose metadata has enable-oslogin=TRUE (any case) takes
# SSH keys only from the OS Login API, which tpuctl does not speak: every
# SSH command (ssh, also --dry-run, scp, forward, run, install, a queued
# resource's node) refuses it in one line saying what to do instead,
# exit 4, before any metadata patch or worker contact; enable-oslogin=FALSE
# is not refused.
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
before=$(emu_requests | jq -s '[.[] | select(.method != "GET")] | length')

# refused NODE VALUE ARGS...: exit 4, the one line naming node and value
refused() {
	_n=$1 _v=$2
	shift 2
	expect_rc 4 "$TPUCTL" "$@"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "'$*': not one line: $(cat "$T/err")"
	assert_grep "^tpuctl: node '$_n' has enable-oslogin=$_v: its workers take SSH keys only from the OS Login API, which tpuctl does not speak \(it adds keys to ssh-keys metadata\); remove the entry \('tpuctl update $_n --remove-metadata enable-oslogin'\) if your organisation allows it, or use 'gcloud compute tpus tpu-vm ssh $_n'\$" "$T/err"
}
refused o1 TRUE ssh o1 --ssh-key-file "$KEY" -- true
refused o1 TRUE --dry-run ssh o1 --ssh-key-file "$KEY" -- true
refused o2 true ssh o2 --worker=all --ssh-key-file "$KEY" -- true
refused o1 TRUE scp --ssh-key-file "$KEY" "$T/f" o1:/tmp/f
refused o1 TRUE forward o1 --ssh-key-file "$KEY" 18888:localhost:8888
refused o1 TRUE run o1 --ssh-key-file "$KEY" -- true
refused o1 TRUE install o1 --ssh-key-file "$KEY" --framework jax
refused qn1 True ssh q1 --ssh-key-file "$KEY" -- true
after=$(emu_requests | jq -s '[.[] | select(.method != "GET")] | length')
[ "$after" = "$before" ] || fail "a refused command sent $((after - before)) writes"
expect_rc 0 "$TPUCTL" describe o1 --format json
jq -e '.metadata["ssh-keys"] == null' "$T/out" >/dev/null ||
    fail "ssh-keys written to o1: $(jq -c .metadata "$T/out")"

# FALSE is not OS Login: --dry-run goes on and prints the plan
expect_rc 0 "$TPUCTL" update o2 --metadata enable-oslogin=FALSE
expect_rc 0 "$TPUCTL" --dry-run ssh o2 --ssh-key-file "$KEY" -- true
assert_no_grep "enable-oslogin" "$T/err"
