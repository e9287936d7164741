#!/bin/sh
# RELIABILITY.md S11: secrets never reach the argv, the environment or
# the open files of a child.  tpuctl's children are ssh-keygen (first use
# of ssh) and man (help): wrappers first on PATH record what they got;
# neither the access token nor the private key is in their argv or
# environment, and they inherit no socket and no file of HOME (token
# cache, keys).  While "tpuctl ssh -- sleep" runs, the
# /proc cmdline and environ of tpuctl and all its descendants hold
# neither secret either.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=100 --set tpu.create_ms=300
fleet_api_setup
fleet_create_node s11 v4-8 60
expect_rc 0 "$TPUCTL" auth print-access-token
tok=$(cat "$T/out")
[ ${#tok} -ge 16 ] || fail "no token: $tok"

mkdir "$T/wrap" "$T/seen"
for tool in ssh-keygen man; do
	real=$(command -v "$tool") || fail "no $tool"
	cat >"$T/wrap/$tool" <<EOW
#!/bin/sh
n=\$\$
printf '%s\n' "\$@" >"$T/seen/$tool.argv.\$n"
env >"$T/seen/$tool.env.\$n"
ls -l /proc/\$\$/fd >"$T/seen/$tool.fd.\$n" 2>&1
exec "$real" "\$@"
EOW
	chmod +x "$T/wrap/$tool"
done
expect_rc 0 env PATH="$T/wrap:$PATH" "$TPUCTL" ssh s11 -- true
set -- "$T"/seen/ssh-keygen.argv.*
[ -f "$1" ] || fail "ssh-keygen was not run"
key=$(sed -n 2p "$HOME/.ssh/google_compute_engine")
[ -n "$key" ] || fail "no private key"
env PATH="$T/wrap:$PATH" MANPAGER=cat PAGER=cat "$TPUCTL" help create \
    >/dev/null 2>&1 || true

for f in "$T"/seen/*; do
	if grep -qF -e "$tok" -e "$key" "$f"; then
		fail "a secret in $(basename "$f"): $(cat "$f")"
	fi
done
for f in "$T"/seen/*.fd.*; do
	# what tpuctl holds: sockets (API, SSH), files of HOME (token
	# cache, keys, known_hosts) and the emulator's (the shell's own
	# saved descriptors and make's jobserver pipe are not tpuctl's)
	if grep -E -e ' -> socket:' -e " -> $HOME/" -e " -> $T/emu" "$f"; then
		fail "$(basename "$f"): inherited descriptors: $(cat "$f")"
	fi
done

# /proc of tpuctl and its descendants while a command runs.
"$TPUCTL" ssh s11 -- sleep 3 >"$T/out" 2>"$T/err" &
pid=$!
sleep 1.5
pids=$pid
kids=$pid
while [ -n "$kids" ]; do
	next=""
	for k in $kids; do
		next="$next $(cat /proc/"$k"/task/*/children 2>/dev/null)"
	done
	# shellcheck disable=SC2086,SC2116 # squeeze the blanks
	kids=$(echo $next)
	pids="$pids $kids"
done
for p in $pids; do
	for f in cmdline environ; do
		tr '\0' '\n' <"/proc/$p/$f" >"$T/proc.$p.$f" 2>/dev/null || true
		if grep -qF -e "$tok" -e "$key" "$T/proc.$p.$f"; then
			fail "a secret in /proc/$p/$f: $(cat "$T/proc.$p.$f")"
		fi
	done
done
wait $pid || fail "ssh -- sleep 3 failed: $(cat "$T/err")"
echo "ok: $TEST_NAME ($(echo "$pids" | wc -w) processes)"
