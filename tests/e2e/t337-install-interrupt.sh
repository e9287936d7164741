#!/bin/sh
# tpuctl install interrupted mid-run, on a v4-32's four workers: SIGINT
# exits 130 ("interrupted"), SIGTERM 143 ("terminated"), each after the
# recipe reached pip on every worker; nothing of the installation is left
# running on any worker (no process carries the run's interpreter in its
# environment: the recipe's sh, the interpreter, its children); a second
# install then completes.  The interpreter given with --python is a
# wrapper that waits in "pip install" while a flag file exists.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

expect_rc 0 "$TPUCTL" create pod --accelerator-type v4-32

# (outside /tmp: as root each worker has its own /tmp, not the test's)
IDX=$(mktemp -d /var/tmp/tpuctl-e2e-idx.XXXXXX)
trap 'rc=$?; rm -rf "$IDX"; (exit $rc); cleanup' EXIT
"$SRCDIR/tests/frameworks/build_index.sh" "$IDX" >/dev/null
PY="$IDX/slowpy"
cat >"$PY" <<EOF
#!/bin/sh
if [ -e "$IDX/slow" ] && [ "\$1 \$2 \$3" = "-m pip install" ]; then
	: >"$IDX/at.\$\$"
	sleep 120
fi
exec /usr/bin/python3 "\$@"
EOF
chmod 755 "$PY"

# the processes of the run: TPUCTL_PYTHON=$PY is in their environment
left() {
	grep -l -F -x -z "TPUCTL_PYTHON=$PY" /proc/[0-9]*/environ 2>/dev/null |
	    sed 's|^/proc/||; s|/environ$||' | while read -r p; do
		[ "$p" = "$$" ] || ps -o pid=,args= -p "$p" 2>/dev/null || true
	done
}

interrupt() { # SIGNAL EXIT-STATUS WORD
	: >"$IDX/slow"
	rm -f "$IDX"/at.*
	"$TPUCTL" install pod --framework jax --no-index --find-links "$IDX" \
	    --python "$PY" >"$T/out" 2>"$T/err" &
	pid=$!
	n=0
	while [ "$(find "$IDX" -name 'at.*' | wc -l)" -lt 4 ]; do
		n=$((n + 1))
		[ $n -lt 300 ] || fail "$1: pip not reached on 4 workers in 60 s: $(cat "$T/out" "$T/err")"
		kill -0 $pid 2>/dev/null || fail "$1: install ended early: $(cat "$T/out" "$T/err")"
		sleep 0.2
	done
	[ -n "$(left)" ] || fail "$1: the probe sees no process of the run"
	kill -s "$1" $pid
	rc=0
	wait $pid || rc=$?
	[ $rc -eq "$2" ] || fail "$1: exit $rc, want $2: $(cat "$T/err")"
	assert_grep "^tpuctl: $3: 0 of 4 workers finished$" "$T/err"
	assert_grep "^worker 2: aborted: " "$T/err"
	# the workers' watchers: SIGTERM to the group, SIGKILL 5 s later
	n=0
	while [ -n "$(left)" ]; do
		n=$((n + 1))
		[ $n -lt 100 ] || fail "$1: left running on the workers: $(left)"
		sleep 0.2
	done
}

interrupt INT 130 interrupted
interrupt TERM 143 terminated

# a second install completes
rm -f "$IDX/slow"
expect_rc 0 "$TPUCTL" install pod --framework jax --no-index \
    --find-links "$IDX" --python "$PY"
w=0
while [ $w -lt 4 ]; do
	assert_grep "^\[w$w\] jax 0\.6\.1 installed \(jax 0\.6\.1, jaxlib 0\.6\.1, libtpu 0\.0\.15\)$" "$T/out"
	w=$((w + 1))
done
assert_grep '^jax 0\.6\.1: 4 of 4 workers succeeded$' "$T/err"
[ -z "$(left)" ] || fail "left running after the install: $(left)"
