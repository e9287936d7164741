#!/bin/sh
# RELIABILITY.md G3: "tpuctl ... | head -1" is quiet.  The contract
# (tpuctl(1), main.c): a command whose output still fits in the pipe when
# head exits ends 0; one that writes to the closed pipe dies by SIGPIPE
# (141) like any filter; either way nothing on stderr (no "Broken pipe",
# no "write error"), head gets the first line, and nothing is left half
# done (an upload through a closed pipe is still whole).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

# piped WANT CMD...: run CMD | head -1; WANT is "0|141" or "141"; head
# must get a line ($lines of them, 1 unless set).
piped() {
	want=$1
	shift
	rm -f "$T/rc"
	{
		set +e
		"$@" 2>"$T/err"
		echo $? >"$T/rc"
	} | head -1 >"$T/out"
	rc=$(cat "$T/rc")
	case "|$want|" in
	*"|$rc|"*) ;;
	*) fail "'$* | head -1' exited $rc, want $want: $(cat "$T/err")" ;;
	esac
	# a command's own one-line summary on success (data cp's "Copied
	# ...", "Listed 0 items.") is not noise; anything else is
	if grep -Ev '^(Copied|Moved) [0-9]+ |^Listed 0 items\.$' "$T/err" >/dev/null; then
		fail "'$* | head -1' wrote to stderr: $(cat "$T/err")"
	fi
	[ "$(wc -l <"$T/out")" -eq "${lines:-1}" ] ||
	    fail "'$* | head -1' gave $(wc -l <"$T/out") lines, want ${lines:-1}"
}

for n in 1 2 3; do
	expect_rc 0 "$TPUCTL" create "g3-$n" --accelerator-type v4-8 --async
done
expect_rc 0 "$TPUCTL" data mb gs://g3-bkt
head -c 3000000 /dev/urandom | od -An -tx1 >"$T/text"
expect_rc 0 "$TPUCTL" data cp "$T/text" gs://g3-bkt/text
for i in 1 2 3; do
	printf 'x' >"$T/o$i"
done
expect_rc 0 "$TPUCTL" data cp "$T"/o1 "$T"/o2 "$T"/o3 gs://g3-bkt/dir/

# Small outputs: whichever of 0 and 141 the timing gives.
piped "0|141" "$TPUCTL" help
piped "0|141" "$TPUCTL" list
piped "0|141" "$TPUCTL" list --format json
piped "0|141" "$TPUCTL" accelerator-types list
piped "0|141" "$TPUCTL" versions list
piped "0|141" "$TPUCTL" operations list
piped "0|141" "$TPUCTL" completion bash
piped "0|141" "$TPUCTL" data ls -r gs://g3-bkt
piped "0|141" "$TPUCTL" config list
# More than a pipe holds: head is gone before the end, SIGPIPE.
piped 141 "$TPUCTL" data cat gs://g3-bkt/text
# An upload reporting through the closed pipe still uploads all of it.
head -c 5000000 /dev/urandom >"$T/big"
lines=0 piped "0|141" "$TPUCTL" data cp "$T/big" gs://g3-bkt/big
expect_rc 0 "$TPUCTL" data cat gs://g3-bkt/big
cmp -s "$T/out" "$T/big" || fail "the upload through a closed pipe is not whole"
echo "ok: $TEST_NAME"
