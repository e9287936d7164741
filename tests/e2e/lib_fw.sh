#!/bin/sh
# Helpers of the framework-command tests on queued resources (t338,
# t511).  Sourced after lib.sh.

# fw_refused QR MESSAGE PATH: install, doctor and reset-workers of QR
# each exit 4 with one line on stderr matching the ERE MESSAGE, show
# nothing of a worker, and reach nothing on the workers' side: the
# emulator's log since has only reads (no ssh-keys patch, no guest
# attributes), one of them of a path matching the ERE PATH, and no SSH
# key was made.
fw_refused() {
	_before=$(emu_requests | wc -l)
	for _cmd in "install $1 --framework jax" "doctor $1" "reset-workers $1"; do
		# shellcheck disable=SC2086 # $_cmd is words on purpose
		expect_rc 4 "$TPUCTL" $_cmd
		[ "$(wc -l <"$T/err")" -eq 1 ] || fail "$_cmd: not one line: $(cat "$T/err")"
		assert_grep "$2" "$T/err"
		# (doctor's local checks come first; nothing of a worker)
		assert_no_grep '^\[s[0-9]' "$T/out"
	done
	emu_requests | tail -n +$((_before + 1)) >"$T/req"
	jq -e -s --arg p "$3" 'all(.method == "GET" or .path == "/token") and
	    all(.path | test("getGuestAttributes") | not) and
	    any(.path | test($p))' "$T/req" >/dev/null ||
		fail "a refusal reached the workers' side: $(cat "$T/req")"
	[ ! -e "$HOME/.ssh/google_compute_engine" ] || fail "a refusal generated an SSH key"
}
