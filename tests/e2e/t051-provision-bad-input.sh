#!/bin/sh
# RELIABILITY.md table 4F for provisioning: every bad value exits 2 with a
# one-line message, and no request reaches the emulator.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

before=$(emu_requests | wc -l)
bad() {
	expect_rc 2 "$TPUCTL" "$@"
	[ "$(wc -l <"$T/err")" -eq 1 ] ||
	    fail "'$*' printed more than one line: $(cat "$T/err")"
}
for name in 1tpu Tpu tpu- -x tpu_1 'tpu/..' '' "$(printf 'a%.0s' $(seq 64))"; do
	bad create --accelerator-type v4-8 -- "$name"
done
bad describe -- 'a
b'
for z in us-central2 US-CENTRAL2-B ../x 'us-central2-b?x=1'; do
	bad create ok --accelerator-type v4-8 --zone "$z"
done
for t in v4 v4-0 v4-7 v5p-8x 'V4-8 ' v9-8 v4--8; do
	bad create ok --accelerator-type "$t"
done
bad create ok --type v5p --topology 2x2
bad create ok --type v4 --topology 0x2x2
bad create ok --type v4 --topology 2x2x2x2
bad create ok --type v4 --topology '2*2*1'
bad create ok --accelerator-type v5p-8 --topology 4x4x4
for l in Env=x 1k=x 'k=Has Space' "$(printf 'k%.0s' $(seq 64))=v" a=1,a=2; do
	bad create ok --accelerator-type v4-8 --labels "$l"
done
bad create ok --accelerator-type v4-8 --metadata 'ssh-keys=us
er:ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKc er'
bad create ok --accelerator-type v4-8 --metadata no-such-key=1
bad create ok --accelerator-type v4-8 --spot --reserved
bad create ok --accelerator-type v4-8 --timeout 5x
bad create ok --accelerator-type v4-8 --data-disk mode=read-only
bad create ok --accelerator-type v4-8 --metadata-from-file startup-script="$T/missing"
bad list --filter state=
bad create ok --accelerator-type v4-8 --zone -
bad operations wait 'bad id!'
after=$(emu_requests | wc -l)
[ "$before" -eq "$after" ] ||
    fail "bad input reached the emulator: $(emu_requests | tail -n $((after - before)))"

# A valid request with a startup script from a file does go through.
printf '#!/bin/sh\necho hi\n' >"$T/setup.sh"
expect_rc 0 "$TPUCTL" create ok --accelerator-type v4-8 --async \
    --metadata-from-file startup-script="$T/setup.sh" --format json
assert_grep '"name": *"projects/tpuctl-emu/locations/us-central2-b/operations/' "$T/out"
