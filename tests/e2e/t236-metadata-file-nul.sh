#!/bin/sh
# t236: --metadata-from-file goes through one parser for create,
# queued-resources create and update (issue 19 defect 5): a file holding
# a NUL byte is refused everywhere with the same one-line message and exit
# 2, nothing is sent (create used to store the bytes before the NUL); an
# empty item is refused by all three alike.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

printf 'a\000b\n' >"$T/nul.sh"
printf '#!/bin/sh\necho ok\n' >"$T/ok.sh"
MSG="--metadata-from-file: file '$T/nul.sh' holds a NUL byte: metadata values are text"
before=$(emu_requests | wc -l)
bad() {
	expect_rc 2 "$TPUCTL" "$@"
	[ "$(wc -l <"$T/err")" -eq 1 ] ||
	    fail "'$*' printed more than one line: $(cat "$T/err")"
}
bad create n1 --accelerator-type v4-8 --async \
    --metadata-from-file startup-script="$T/nul.sh"
[ "$(cat "$T/err")" = "tpuctl: $MSG" ] || fail "create: $(cat "$T/err")"
bad create n1 --accelerator-type v4-8 --async \
    --metadata-from-file "shutdown-script=$T/ok.sh,startup-script=$T/nul.sh"
[ "$(cat "$T/err")" = "tpuctl: $MSG" ] || fail "create, second item: $(cat "$T/err")"
bad queued-resources create q1 --node-id n --accelerator-type v4-8 \
    --metadata-from-file startup-script="$T/nul.sh"
[ "$(cat "$T/err")" = "tpuctl: $MSG" ] || fail "qr create: $(cat "$T/err")"
bad update n1 --metadata-from-file startup-script="$T/nul.sh"
[ "$(cat "$T/err")" = "tpuctl: $MSG" ] || fail "update: $(cat "$T/err")"
for cmd in "create n1 --accelerator-type v4-8 --async" "update n1"; do
	# shellcheck disable=SC2086 # split the command on purpose
	bad $cmd --metadata-from-file "startup-script=$T/ok.sh,"
	assert_grep "invalid --metadata-from-file item ''" "$T/err"
done
after=$(emu_requests | wc -l)
[ "$before" -eq "$after" ] ||
    fail "bad input reached the emulator: $(emu_requests | tail -n $((after - before)))"

# the good file goes through whole
expect_rc 0 "$TPUCTL" create n1 --accelerator-type v4-8 --async \
    --metadata-from-file startup-script="$T/ok.sh"
emu_requests | grep '"POST"' | grep -q '/nodes' ||
    fail "no create sent: $(emu_requests)"
exit 0
