#!/bin/sh
# RELIABILITY.md table 4F for tpuctl update: every bad value exits 2 with
# one line naming it, and no request reaches the emulator (not even the
# read of the node).  Merged labels over the limit are refused after the
# read, before any PATCH.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

bad() {
	expect_rc 2 "$TPUCTL" update "$@"
	[ "$(wc -l <"$T/err")" -eq 1 ] ||
	    fail "'update $*' printed more than one line: $(cat "$T/err")"
}
bad --description x -- 1tpu
bad ok
bad ok --zone US-CENTRAL2-B --description x
for l in Env=x 1k=x 'k=Has Space' a=1,a=2 '' =x tpuctl-run-id=x; do
	bad ok --update-labels "$l"
done
assert_grep 'reserved' "$T/err"
bad ok --update-labels a=1 --update-labels b=2
for k in Env 'a,,b' '' 'a,'; do
	bad ok --remove-labels "$k"
done
bad ok --clear-labels --remove-labels env
bad ok --update-labels env=x --remove-labels env
assert_grep "label 'env' is both updated and removed" "$T/err"
bad ok --metadata no-such-key=1
assert_grep 'metadata-raw' "$T/err"
bad ok --metadata startup-script
bad ok --metadata 'startup-script=1,,shutdown-script=2'
bad ok --metadata startup-script=1 --metadata startup-script=2
assert_grep 'given twice' "$T/err"
bad ok --metadata 'ssh-keys=us
er:ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKc er'
bad ok --metadata-from-file startup-script="$T/missing"
assert_grep 'metadata-from-file' "$T/err"
bad ok --remove-metadata 'a b'
bad ok --metadata startup-script=1 --remove-metadata startup-script
bad ok --description "$(printf 'bell\007')"
bad ok --description "$(head -c 2049 /dev/zero | tr '\0' a)"
bad ok --description x --timeout 5x
# Command-line errors print the usage after the message.
expect_rc 2 "$TPUCTL" update ok --description x --bogus
assert_grep '^usage: tpuctl update' "$T/err"
expect_rc 2 "$TPUCTL" update ok --description x extra
assert_grep "unexpected operand 'extra'" "$T/err"
[ ! -s "$EMU_DIR/requests.jsonl" ] ||
    fail "a bad update reached the emulator: $(head -3 "$EMU_DIR/requests.jsonl")"

# --metadata-raw lets an unknown key through.
expect_rc 0 "$TPUCTL" create ok --accelerator-type v4-8
expect_rc 0 "$TPUCTL" update ok --metadata-raw --metadata my-key=1
expect_rc 0 "$TPUCTL" describe ok --format 'value(metadata.my-key)'
assert_grep '^1$' "$T/out"

# 64 labels at most (63 + the run-id label of create), counted on the
# merged node: no PATCH sent.
many=$(seq 1 63 | sed 's/^/k/; s/$/=v/' | paste -sd, -)
expect_rc 0 "$TPUCTL" update ok --update-labels "$many"
patches=$(emu_requests | grep -c '"method": *"PATCH"')
expect_rc 2 "$TPUCTL" update ok --update-labels one=more
assert_grep 'too many labels' "$T/err"
[ "$(emu_requests | grep -c '"method": *"PATCH"')" -eq "$patches" ] ||
    fail "a PATCH was sent with 65 labels"
